import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ewma, WindowedEwma } from '../../src/sched/ewma.ts';
import { seededRandom } from './harness.ts';

test("EWMA mean and deviation converge to the stream's (exponential samples: σ = µ)", () => {
  const random = seededRandom(1);
  const ewma = new Ewma(1 / 256);
  let sum = 0;
  const n = 200_000;
  let tailSum = 0;
  for (let i = 0; i < n; i++) {
    ewma.add(-Math.log(1 - random()) * 32_000);
    if (i > 10_000) {
      sum += ewma.mean;
      tailSum += ewma.tail;
    }
  }
  const meanOfMeans = sum / (n - 10_001);
  const meanOfTails = tailSum / (n - 10_001);
  assert.ok(Math.abs(meanOfMeans - 32_000) / 32_000 < 0.02, `mean ${meanOfMeans}`);
  // µ + 3σ of an exponential is 4µ (the EWMA variance is slightly biased low by (1 − w)).
  assert.ok(Math.abs(meanOfTails - 128_000) / 128_000 < 0.05, `tail ${meanOfTails}`);
});

test('EWMA warm-up: early estimates are plain means, not biased to the first sample', () => {
  const ewma = new Ewma(1 / 128);
  ewma.add(5);
  for (let i = 0; i < 9; i++) ewma.add(60);
  assert.equal(ewma.mean, (5 + 9 * 60) / 10);
});

test('EWMA tracks a step change within a few 1/w samples', () => {
  const ewma = new Ewma(1 / 16);
  for (let i = 0; i < 1_000; i++) ewma.add(10);
  for (let i = 0; i < 100; i++) ewma.add(100);
  assert.ok(ewma.mean > 99, `mean ${ewma.mean}`);
  assert.throws(() => new Ewma(0), RangeError);
  assert.throws(() => new Ewma(1.5), RangeError);
});

test('windowed EWMA: a rate decays when traffic stops, empty windows count', () => {
  const rate = new WindowedEwma(0.5);
  rate.accumulate(100);
  rate.roll(1, 10); // 1000 per unit
  assert.equal(rate.value, 1000);
  rate.roll(2, 10); // one empty window closed with the accumulator, then one more empty
  assert.equal(rate.value, 250);
});

test('EWMA tailExceeds / tailBelow agree with µ+3σ compared directly (they skip the square root)', () => {
  const random = seededRandom(7);
  let checked = 0;
  for (let run = 0; run < 200; run++) {
    const ewma = new Ewma(1 / (1 + Math.floor(random() * 64)));
    const scale = 10 ** Math.floor(random() * 6);
    const samples = Math.floor(random() * 50);
    for (let i = 0; i < samples; i++) ewma.add(random() * scale);
    for (let probe = 0; probe < 50; probe++) {
      const limit = random() * 3 * scale - 0.5 * scale;
      const tail = ewma.tail;
      // Within a relative 1e-12 of a tie, rounding may decide either way; elsewhere they must agree.
      if (Math.abs(tail - limit) <= 1e-12 * Math.max(1, Math.abs(limit))) continue;
      assert.equal(ewma.tailExceeds(limit), tail > limit, `tail ${tail} vs limit ${limit}`);
      assert.equal(ewma.tailBelow(limit), tail < limit, `tail ${tail} vs limit ${limit}`);
      checked++;
    }
  }
  assert.ok(checked > 9000, `only ${checked} probes were away from a tie`);
});

test('EWMA retainedSince is the weight an earlier estimate still has, through the warm-up and after', () => {
  // Checked against the estimate itself: after a step from 0 to 1, the mean is 1 − (weight of the
  // estimate before the step), whatever mix of warm-up (1/n) and steady (w) weights the step spans.
  for (const [before, after] of [
    [3, 2],
    [3, 600],
    [100, 400],
    [300, 50],
  ] as const) {
    const ewma = new Ewma(1 / 256);
    for (let i = 0; i < before; i++) ewma.add(0);
    for (let i = 0; i < after; i++) ewma.add(1);
    assert.ok(Math.abs(1 - ewma.mean - ewma.retainedSince(before)) < 1e-12, `${before} then ${after}`);
  }
  const ewma = new Ewma(1 / 4);
  assert.equal(ewma.retainedSince(0), 1, 'no sample since: all of it is retained');
  ewma.add(5);
  assert.equal(ewma.retainedSince(0), 0, 'the first sample sets µ outright');
  assert.equal(ewma.retainedSince(1), 1);
});

test('EWMA observe moves the estimate like a sample of the given weight, without counting one', () => {
  const ewma = new Ewma(1 / 256);
  ewma.observe(100, 0.5);
  assert.equal(ewma.samples, 0, 'nothing to keep current before the first sample');
  assert.equal(ewma.mean, 0);
  ewma.add(1_000);
  ewma.observe(0, 1 / 32);
  assert.equal(ewma.samples, 1);
  assert.ok(Math.abs(ewma.mean - 1_000 * (31 / 32)) < 1e-9);
  assert.equal(ewma.stdDev, 0, 'a reading (a window summary, not one latency) adds no dispersion');
  ewma.add(3_000);
  const variance = ewma.stdDev ** 2;
  assert.ok(variance > 0);
  ewma.observe(0, 1 / 32);
  assert.ok(Math.abs(ewma.stdDev ** 2 - variance * (31 / 32)) < 1e-6, 'the variance only decays');
});

test('EWMA observe of an idle NIC does not inflate the tail (µ + 3σ)', () => {
  // A steady 100 µs latency, then idle windows reading 0: counted as samples, the readings' distance
  // from µ doubled µ + 3σ within 13 windows — a spurious downgrade at the next completion.
  const ewma = new Ewma(1 / 256);
  for (let i = 0; i < 1_000; i++) ewma.add(100);
  for (let window = 0; window < 100; window++) {
    ewma.observe(0, 1 / 32);
    assert.ok(
      ewma.mean + 3 * ewma.stdDev <= 100 + 1e-9,
      `window ${window}: tail ${ewma.mean + 3 * ewma.stdDev}`,
    );
  }
});
