/**
 * A downgraded actor that goes quiet keeps the evidence that put it in DRR (its dispersion), so it
 * stays there; its DRR core must not. A DRR group with no work for DRR_IDLE_SETTLES settle periods
 * gives its cores back to FCFS, and gets one again as soon as one of its actors has requests
 * waiting. See docs/scheduler.md, decision 13.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import { SchedulerHarness, seededRandom, type TestRequest } from './harness.ts';

const MS = 1_000_000;
const US = 1_000;
const TAIL_THRESH_NS = 40 * US;

/** p99 of actor 1's latencies for the requests that arrived in [fromNs, toNs). */
function p99Of(harness: SchedulerHarness, actor: number, fromNs: number, toNs: number): number {
  const latencies = harness.latenciesNs.get(actorId(actor)) ?? [];
  const requests = harness.executed.filter((r) => r.actor === actor);
  const window = latencies.filter((_, i) => {
    const arrivalNs = (requests[i] as TestRequest).arrivalNs;
    return arrivalNs >= fromNs && arrivalNs < toNs;
  });
  assert.ok(window.length > 100, `enough requests of actor ${actor} in the window: ${window.length}`);
  const sorted = window.toSorted((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.99)] as number;
}

/**
 * A 4-core NIC (Tail_thresh 40 µs, 1 ms settle period, no migration) with two actors: actor 1 costs
 * 2 µs; actor 2 has a 200 µs request one time in twenty, whenever it runs.
 */
function erraticPair(seed: number): {
  random: () => number;
  scheduler: HybridScheduler<TestRequest>;
  harness: SchedulerHarness;
} {
  const random = seededRandom(seed);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: {
      tailThreshNs: TAIL_THRESH_NS,
      meanThreshNs: 30 * US,
      enableMigration: false,
      settleNs: 1 * MS,
    },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, {
    cores: 4,
    costNs: (request) => (request.actor === 2 && random() < 0.05 ? 200 * US : 2 * US),
  });
  return { random, scheduler, harness };
}

test('a quiet DRR group gives its core back to FCFS, and gets one again when its actor returns', () => {
  const { random, scheduler, harness } = erraticPair(7);
  // 0–20 ms: both busy, actor 2 is downgraded. 20–40 ms: actor 2 quiet, actor 1 light.
  // 40–60 ms: actor 1 alone needs 3.4 cores. 60–80 ms: actor 2 is back.
  harness.addPoisson(1, 0, 20 * MS, 400_000, random);
  harness.addPoisson(2, 0, 20 * MS, 50_000, random);
  harness.addPoisson(1, 20 * MS, 40 * MS, 20_000, random);
  harness.addPoisson(1, 40 * MS, 60 * MS, 1_700_000, random);
  harness.addPoisson(1, 60 * MS, 80 * MS, 400_000, random);
  harness.addPoisson(2, 60 * MS, 80 * MS, 50_000, random);

  harness.run(20 * MS);
  assert.equal(scheduler.modeOf(actorId(2)), 'drr', 'the erratic actor was downgraded');
  assert.equal(scheduler.view().drr.cores, 1);

  harness.run(40 * MS);
  assert.equal(scheduler.modeOf(actorId(2)), 'drr', 'quiet, it keeps its dispersion and stays in DRR');
  assert.equal(scheduler.view().drr.cores, 0, 'but its idle DRR core went back to FCFS');

  harness.run(60 * MS);
  // With the fourth core still idle in DRR, 3.4 cores of load on 3 FCFS cores queued without bound.
  const heavyP99 = p99Of(harness, 1, 45 * MS, 60 * MS);
  assert.ok(heavyP99 < TAIL_THRESH_NS, `3.4 cores of FCFS load served by 4 cores: p99 ${heavyP99} ns`);

  harness.run(70 * MS);
  assert.equal(scheduler.view().drr.cores, 1, 'actor 2 has requests again: a DRR core serves them');
  harness.run(85 * MS);
  const ran = harness.executed.filter((r) => r.actor === 2 && r.arrivalNs >= 60 * MS).length;
  assert.ok(ran > 800, `actor 2 ran its requests since 60 ms: ${ran}`);
  assert.equal(scheduler.heldRequests(), 0, 'and none is left waiting');
  assert.equal(scheduler.modeOf(actorId(2)), 'drr');
  const lightP99 = p99Of(harness, 1, 60 * MS, 80 * MS);
  assert.ok(lightP99 < TAIL_THRESH_NS, `actor 1 keeps its tail beside actor 2: p99 ${lightP99} ns`);
  assert.equal(harness.kinds('downgrade').length, 1, 'one downgrade, none after the burst');
  assert.equal(harness.kinds('upgrade').length, 0);
});

test('sparse DRR traffic does not flip a core between FCFS and DRR for every request', () => {
  const { random, scheduler, harness } = erraticPair(11);
  harness.addPoisson(1, 0, 20 * MS, 400_000, random);
  harness.addPoisson(2, 0, 20 * MS, 50_000, random);
  // Then actor 2 sends one request every 12 ms for ~1 s: more than the 8 ms idle window apart.
  const sparse = 80;
  for (let i = 0; i < sparse; i++) harness.addArrival(2, 30 * MS + i * 12 * MS);
  harness.addPoisson(1, 20 * MS, 1_000 * MS, 20_000, random);
  harness.run(20 * MS);
  assert.equal(scheduler.modeOf(actorId(2)), 'drr', 'the erratic actor was downgraded');
  const scalesBefore = harness.kinds('scale').length;
  harness.run(1_000 * MS);
  const ran = harness.executed.filter((r) => r.actor === 2 && r.arrivalNs >= 30 * MS).length;
  assert.equal(ran, sparse, 'every sparse request ran');
  assert.equal(scheduler.heldRequests(), 0);
  // Two scale decisions a request before (a release, then a core recreated): 160 here.
  const flips = harness.kinds('scale').length - scalesBefore;
  assert.ok(flips <= 8, `scale decisions over ${sparse} sparse requests: ${flips}`);
});
