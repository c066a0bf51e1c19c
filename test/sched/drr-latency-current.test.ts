/**
 * The DRR group's latency in `view()` (meanNs, tailNs) says what DRR requests wait now: like the
 * FCFS latency it forgets with time, so once the DRR group has no work it no longer shows a
 * burst's latency for ever. See docs/scheduler.md, decision 13.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import { SchedulerHarness, seededRandom, type TestRequest } from './harness.ts';

const MS = 1_000_000;
const US = 1_000;

test("the DRR group's reported latency fades once it has no work", () => {
  const random = seededRandom(7);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: { tailThreshNs: 40 * US, meanThreshNs: 30 * US, enableMigration: false, settleNs: 1 * MS },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, {
    cores: 4,
    costNs: (request) => (request.actor === 2 && random() < 0.05 ? 200 * US : 2 * US),
  });
  // Actor 2 (one 200 µs request in twenty) is downgraded during the first 20 ms, then sends nothing.
  harness.addPoisson(1, 0, 20 * MS, 400_000, random);
  harness.addPoisson(2, 0, 20 * MS, 50_000, random);
  harness.addPoisson(1, 20 * MS, 100 * MS, 20_000, random);

  harness.run(20 * MS);
  assert.equal(scheduler.modeOf(actorId(2)), 'drr');
  const busy = scheduler.view().drr;
  assert.ok(busy.meanNs > 10 * US, `while busy it reads its requests' latency: ${busy.meanNs} ns`);

  harness.run(60 * MS);
  const quiet = scheduler.view().drr;
  assert.ok(quiet.meanNs < 1 * US, `40 ms later no DRR request waits: mean ${quiet.meanNs} ns`);
  assert.ok(quiet.tailNs < busy.tailNs / 10, `and the tail fades: ${quiet.tailNs} ns (was ${busy.tailNs})`);
});
