import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_WALKTHROUGH, runSchedulerWalkthrough } from '../../src/experiments/scheduler-walkthrough.ts';

test('the walkthrough is reproducible from its seed and answers every request', () => {
  const first = runSchedulerWalkthrough(DEFAULT_WALKTHROUGH, 1234);
  const second = runSchedulerWalkthrough(DEFAULT_WALKTHROUGH, 1234);
  assert.deepEqual(first, second, 'same seed, same run');
  assert.equal(
    first.requestsAnswered + first.requestsRefused,
    first.requestsTotal,
    'every request answered or refused',
  );
  assert.equal(first.requestsRefused, 0);
  assert.ok(first.requestsTotal > 60_000);
  const other = runSchedulerWalkthrough(DEFAULT_WALKTHROUGH, 99);
  assert.notDeepEqual(other.decisions, first.decisions, 'a different seed gives a different run');
});

test('the walkthrough tells the story it claims: ranker downgraded, classifier leaves during the surge', () => {
  const result = runSchedulerWalkthrough(DEFAULT_WALKTHROUGH, 1234);
  const first = result.decisions[0];
  assert.equal(first?.kind, 'downgrade');
  assert.equal(first?.actor, 'top-ranker', 'the highest-dispersion actor is downgraded first');
  const surge = result.phases.find((p) => p.name === 'surge');
  const classifier = surge?.actors.find((a) => a.name === 'flow-classifier');
  assert.equal(classifier?.modeAtEnd, 'host', 'the surging classifier moved to the host');
  assert.ok(surge && surge.hostCoresBusy > 1, 'host cores carry the classifier during the surge');
  const toHost = result.migrations.find((m) => m.actor === 'flow-classifier' && m.to === 'host');
  assert.ok(toHost && toHost.stateBytes > 0 && toHost.phasesUs.gone > 0, 'its DMOs crossed PCIe');
  const light = surge?.actors.find((a) => a.name === 'kv-cache');
  assert.ok(
    light && light.p99Us < result.settings.tailThreshNs / 1000,
    'light actors keep their tail under Tail_thresh',
  );
  const calm = result.phases.find((p) => p.name === 'calm');
  const back = calm?.actors.find((a) => a.name === 'flow-classifier');
  assert.ok(back && back.modeAtEnd !== 'host', 'after the surge the classifier is back on the NIC');
});
