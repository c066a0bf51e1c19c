/**
 * The simulator's twin of test/platform/live/node/migration-host-sender-order.test.ts: a host
 * actor's messages reach an actor moved NIC ⇄ host in the order it sent them — those sent after
 * the move to the host must not overtake the ones the NIC buffered meanwhile, which cross the
 * channel after it (fixtures: test/platform/live/node/fixtures/order-actors.ts). The second test
 * moves it back to the NIC as soon as it lands, while its last move to the host still drains.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { pump, tally } from '../live/node/fixtures/order-actors.ts';
import { testTiming } from './test-timing.ts';

const NOTES = 20_000;

/** Flips `tally` NIC ⇄ host every `flipNs` while `pump` sends it NOTES notes; the tally's report. */
function run(flipNs: number): { report: { last: number; disorder: number; count: number }; toHost: number } {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming(),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const tallyRef = node.register(tally);
  const pumpRef = node.register(pump);
  node.clientSend(pumpRef, { type: 'start', until: NOTES }, (_id, _latency, ok) => assert.ok(ok));
  let toHost = 0;
  let done = false;
  const flip = () => {
    if (done) return;
    const side = node.domainOf(tallyRef.id);
    if (side !== 'migrating') {
      node.migrate(tallyRef.id, side === 'nic' ? 'host' : 'nic');
      if (side === 'nic') toHost++;
    }
    kernel.at(kernel.now() + flipNs, flip);
  };
  kernel.at(10_000, flip);
  let report = { last: 0, disorder: 0, count: 0 };
  const ask = () => {
    node.clientSend(tallyRef, { type: 'report' }, (_id, _latency, ok, reply) => {
      assert.ok(ok);
      report = reply as typeof report;
      if (report.count >= NOTES) done = true;
      else kernel.at(kernel.now() + 1_000_000, ask);
    });
  };
  kernel.at(1_000_000, ask);
  kernel.run({ untilNs: 10_000_000_000 });
  return { report, toHost };
}

test('a host sender’s messages reach an actor migrating NIC → host in the order it sent them', () => {
  const { report, toHost } = run(50_000);
  assert.ok(toHost >= 3, `tally moved to the host ${toHost} times while the notes flowed`);
  assert.equal(report.count, NOTES, 'every note arrived once');
  assert.equal(report.disorder, 0, `${report.disorder} notes arrived after a later one`);
  assert.equal(report.last, NOTES);
});

test('an actor moved back to the NIC while its move to the host drains neither sticks nor reorders', () => {
  // A flip every 1 µs: a move takes under one here, so the next begins while the host still holds
  // the pump's newer notes for the older ones crossing — which the NIC then buffers for that move.
  const { report, toHost } = run(1_000);
  assert.ok(toHost >= 100, `tally moved to the host ${toHost} times while the notes flowed`);
  assert.equal(report.count, NOTES, 'every note arrived once (the actor did not stay migrating)');
  assert.equal(report.disorder, 0, `${report.disorder} notes arrived after a later one`);
  assert.equal(report.last, NOTES);
});
