import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import type { Decision } from '../../src/sched/types.ts';
import { SchedulerHarness, seededRandom, type TestRequest } from './harness.ts';

const MS = 1_000_000;
const US = 1_000;
type Scale = Extract<Decision, { kind: 'scale' }>;

test('core auto-scaling: a saturated DRR group takes spare FCFS cores, and gives them back when FCFS saturates', () => {
  const random = seededRandom(12);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: { tailThreshNs: 40 * US, meanThreshNs: 40 * US, enableMigration: false, settleNs: 2 * MS },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, {
    cores: 4,
    costNs: (r) => (r.actor === 1 ? 5 * US : random() < 0.5 ? 5 * US : 95 * US),
  });
  // Phase 1: actor 2 (50 µs mean, high dispersion) needs 1.5 cores; actor 1 needs 0.5.
  harness.addPoisson(1, 0, 60 * MS, 100_000, random);
  harness.addPoisson(2, 0, 60 * MS, 30_000, random);
  // Phase 2: actor 2 nearly idle while actor 1 needs 2.9 cores: FCFS saturates, DRR can spare.
  harness.addPoisson(1, 60 * MS, 140 * MS, 580_000, random);
  harness.addPoisson(2, 60 * MS, 140 * MS, 2_000, random);
  harness.run(60 * MS);
  const up = harness.kinds('scale') as Scale[];
  assert.equal(harness.kinds('downgrade').length, 1, 'actor 2 was downgraded, creating the first DRR core');
  assert.ok(up.length >= 1 && up.every((d) => d.from === 'fcfs' && d.to === 'drr'));
  assert.ok((up[0] as Scale).drrUtilization >= 0.95);
  const drrCores = scheduler.view().drr.cores;
  assert.ok(drrCores >= 2, `one DRR core cannot carry 1.5 cores of work (got ${drrCores})`);
  assert.ok(
    up.every((d) => !d.cores.includes(0)),
    'the management core never changes role',
  );
  assert.ok(
    scheduler.view().cores.some((c) => c.id === 0 && c.role === 'fcfs'),
    'core 0 stays FCFS',
  );
  harness.run(140 * MS);
  const down = (harness.kinds('scale') as Scale[]).slice(up.length);
  assert.ok(down.length >= 1, 'FCFS saturated while DRR idled: a DRR core must come back');
  assert.ok(down.every((d) => d.from === 'drr' && d.to === 'fcfs'));
  assert.ok((down[0] as Scale).fcfsUtilization >= 0.95);
  assert.equal(scheduler.view().drr.cores, 1, 'the last DRR core stays while a DRR actor exists');
});
