import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import { SchedulerHarness, seededRandom, type TestRequest } from './harness.ts';

const MS = 1_000_000;
const US = 1_000;

/** Actor 1 is light and steady; actor 2 has rare 200 µs requests until `calmAtNs`, then is steady. */
function scenario(calmAtNs: number, seed: number) {
  const random = seededRandom(seed);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: { tailThreshNs: 40 * US, meanThreshNs: 30 * US, enableMigration: false, settleNs: 1 * MS },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, {
    cores: 4,
    costNs: (request, nowNs) => {
      if (request.actor === 1) return 2 * US;
      if (nowNs < calmAtNs && random() < 0.05) return 200 * US;
      return 2 * US;
    },
  });
  harness.addPoisson(1, 0, 100 * MS, 400_000, random);
  harness.addPoisson(2, 0, 100 * MS, 50_000, random);
  return { scheduler, harness };
}

test('a high-dispersion actor is downgraded to DRR, and upgraded back when its tail recovers', () => {
  const { scheduler, harness } = scenario(50 * MS, 7);
  harness.run(100 * MS);
  const downgrades = harness.kinds('downgrade');
  const upgrades = harness.kinds('upgrade');
  assert.ok(downgrades.length >= 1, 'the FCFS tail exceeded Tail_thresh, so a downgrade must fire');
  assert.ok(
    downgrades.every((d) => d.kind === 'downgrade' && d.actor === 2),
    'only the high-dispersion actor may be downgraded',
  );
  assert.ok((downgrades[0] as { atNs: number }).atNs < 50 * MS, 'downgrade happens while actor 2 is erratic');
  assert.equal(upgrades.length, 1, 'exactly one upgrade once actor 2 calms down');
  assert.ok((upgrades[0] as { atNs: number }).atNs > 50 * MS, 'upgrade only after its costs became steady');
  assert.equal(scheduler.modeOf(actorId(2)), 'fcfs');
  assert.equal(scheduler.view().drr.cores, 0, 'with no DRR actor left, the DRR core returned to FCFS');
  // No flapping: while erratic, actor 2 stays in DRR (one downgrade, no upgrade before 50 ms).
  assert.equal(downgrades.length, 1);
});

test('no downgrade when every actor is steady (the tail stays under Tail_thresh)', () => {
  const { harness } = scenario(0, 7);
  harness.run(100 * MS);
  assert.equal(harness.kinds('downgrade').length, 0);
  assert.equal(harness.decisions.length, 0);
});

test('the downgraded actor is served by a DRR core, the light actor keeps a low tail', () => {
  const { harness } = scenario(100 * MS, 11);
  harness.run(100 * MS);
  const light = harness.latenciesNs.get(actorId(1)) ?? [];
  const sorted = light.toSorted((a, b) => a - b);
  const p99 = sorted[Math.floor(sorted.length * 0.99)] as number;
  // Actor 1 costs 2 µs; with actor 2's 200 µs requests out of the FCFS group its p99 stays small.
  assert.ok(p99 < 40 * US, `light actor p99 ${p99} ns should stay under Tail_thresh`);
});
