/**
 * Property: DRR shares a core among backlogged actors in proportion to their quanta, whatever
 * their request costs (the reason the measured cost is subtracted from the deficit).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import { seededRandom, type TestRequest } from './harness.ts';

const TOLERANCE = 0.03; // relative error of each actor's share of service time

interface ActorSpec {
  readonly sizeBytes: number; // sets the quantum through the headroom function
  readonly minCostNs: number;
  readonly maxCostNs: number;
}

const actorArb = fc.record({
  sizeBytes: fc.integer({ min: 64, max: 1500 }),
  minCostNs: fc.integer({ min: 500, max: 20_000 }),
  maxCostNs: fc.integer({ min: 20_000, max: 80_000 }),
});

function measureShares(specs: readonly ActorSpec[], seed: number): { service: number[]; quanta: number[] } {
  const random = seededRandom(seed);
  const headroomNs = (bytes: number) => bytes * 10; // 0.64–15 µs quanta
  const scheduler = new HybridScheduler<TestRequest>({ cores: 1, policy: 'drr', headroomNs });
  const backlog = 64;
  let seq = 0;
  const refill = (index: number, now: number) => {
    const spec = specs[index] as ActorSpec;
    scheduler.arrive(
      { actor: actorId(index + 1), sizeBytes: spec.sizeBytes, arrivalNs: now, seq: seq++ },
      now,
    );
  };
  specs.forEach((_, index) => {
    scheduler.addActor({ id: actorId(index + 1), placement: 'nic', exclusive: true });
    for (let i = 0; i < backlog; i++) refill(index, 0);
  });
  const service = specs.map(() => 0);
  let now = 0;
  // Long enough that the smallest share (≈1%) still spans thousands of µs of service, so DRR's
  // bounded per-round unfairness (one quantum plus one request) is well under the tolerance.
  const horizonNs = 400_000_000;
  while (now < horizonNs) {
    const work = scheduler.takeDrr(0, now);
    assert.ok(work && work.kind === 'exec', 'a backlogged DRR group always has work');
    const index = work.request.actor - 1;
    const spec = specs[index] as ActorSpec;
    const cost = spec.minCostNs + Math.floor(random() * (spec.maxCostNs - spec.minCostNs));
    now += cost;
    scheduler.complete(0, now, cost);
    service[index] = (service[index] as number) + cost;
    refill(index, now); // every actor stays backlogged throughout
  }
  for (const a of scheduler.view().actors) assert.ok(a.mailboxLength > 0, `actor ${a.id} ran dry`);
  return { service, quanta: specs.map((s) => headroomNs(s.sizeBytes)) };
}

test('DRR service shares are proportional to quanta (within 3%) for any costs', () => {
  fc.assert(
    fc.property(fc.array(actorArb, { minLength: 2, maxLength: 5 }), fc.integer(), (specs, seed) => {
      const { service, quanta } = measureShares(specs, seed);
      const totalService = service.reduce((a, b) => a + b, 0);
      const totalQuanta = quanta.reduce((a, b) => a + b, 0);
      service.forEach((s, i) => {
        const expected = (quanta[i] as number) / totalQuanta;
        const actual = s / totalService;
        assert.ok(
          Math.abs(actual - expected) / expected <= TOLERANCE,
          `actor ${i + 1}: share ${actual.toFixed(4)}, expected ${expected.toFixed(4)} (quanta ${quanta.join(',')})`,
        );
      });
    }),
    { numRuns: 40 },
  );
});

test('without cost subtraction shares would follow request counts: the property above is not vacuous', () => {
  // Two actors with equal quanta but 10× different costs get equal *time*, hence 10× different
  // request counts. A per-request scheduler (the paper's pseudo-code read literally) would give
  // them equal counts and 10:1 time.
  const { service } = measureShares(
    [
      { sizeBytes: 500, minCostNs: 2_000, maxCostNs: 2_001 },
      { sizeBytes: 500, minCostNs: 20_000, maxCostNs: 20_001 },
    ],
    1,
  );
  const ratio = (service[1] as number) / (service[0] as number);
  assert.ok(Math.abs(ratio - 1) < TOLERANCE, `time ratio ${ratio} should be ~1`);
});
