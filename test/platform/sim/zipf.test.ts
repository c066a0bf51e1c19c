/**
 * The Zipf sampler (rejection-inversion) draws rank k + 1 with probability (k + 1)^−s / H(n, s):
 * a chi-square test over the top twenty ranks one by one and then decades of ranks out to n, for
 * n = 10^6 and 10^7 at the YCSB skew s = 0.99 and for other exponents, with H(n, s) summed
 * exactly. The top ranks are also checked one at a time against their own binomial error.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZipfSampler } from '../../../src/platform/sim/distributions.ts';
import { Random } from '../../../src/random.ts';
import { chiSquare, chiSquareCritical, TOLERANCE_SE } from './statistics.ts';

/** Bin edges (1-based ranks, inclusive upper bounds): 1..20 singly, then decades up to n. */
function binEdges(n: number): number[] {
  const edges: number[] = [];
  for (let rank = 1; rank <= Math.min(20, n); rank++) edges.push(rank);
  for (let upper = 100; upper < n; upper *= 10) if (upper > 20) edges.push(upper);
  if (edges[edges.length - 1] !== n) edges.push(n);
  return edges;
}

/** Exact bin probabilities: sums of k^−s over each bin, divided by H(n, s). */
function binProbabilities(n: number, exponent: number, edges: readonly number[]): number[] {
  const masses = new Array<number>(edges.length).fill(0);
  let bin = edges.length - 1;
  let total = 0;
  // Summing from the smallest terms up keeps the floating-point error negligible.
  for (let rank = n; rank >= 1; rank--) {
    while (bin > 0 && rank <= edges[bin - 1]!) bin--;
    const mass = rank ** -exponent;
    masses[bin]! += mass;
    total += mass;
  }
  return masses.map((mass) => mass / total);
}

function check(n: number, exponent: number, samples: number, seed: number): void {
  const sampler = new ZipfSampler(n, exponent);
  const random = new Random(seed);
  const edges = binEdges(n);
  const observed = new Array<number>(edges.length).fill(0);
  for (let index = 0; index < samples; index++) {
    const key = sampler.sample(random);
    assert.ok(Number.isInteger(key) && key >= 0 && key < n, `key ${key} outside [0, ${n})`);
    const rank = key + 1;
    let bin = rank <= 20 ? rank - 1 : edges.findIndex((edge) => rank <= edge);
    if (bin < 0) bin = edges.length - 1;
    observed[bin]!++;
  }
  const probabilities = binProbabilities(n, exponent, edges);
  const expected = probabilities.map((p) => p * samples);
  const statistic = chiSquare(observed, expected);
  const critical = chiSquareCritical(edges.length - 1);
  assert.ok(
    statistic < critical,
    `n=${n} s=${exponent}: chi-square ${statistic.toFixed(1)} ≥ ${critical.toFixed(1)}`,
  );
  for (let rank = 1; rank <= 5; rank++) {
    const p = probabilities[rank - 1]!;
    const share = observed[rank - 1]! / samples;
    const standardError = Math.sqrt((p * (1 - p)) / samples);
    assert.ok(
      Math.abs(share - p) <= TOLERANCE_SE * standardError,
      `rank ${rank}: share ${share} vs theory ${p} (±${TOLERANCE_SE}·${standardError})`,
    );
  }
}

describe('Zipf sampler', () => {
  it('matches 1/k^0.99 / H(n, 0.99) for n = 10^6', () => {
    check(1_000_000, 0.99, 1_000_000, 21);
  });

  it('matches for n = 10^7 without a table', () => {
    check(10_000_000, 0.99, 400_000, 22);
  });

  it('matches for other exponents, including s = 1 exactly and steep skews', () => {
    check(1000, 1, 300_000, 23);
    check(100_000, 0.5, 300_000, 24);
    check(50, 2.5, 300_000, 25);
  });

  it('handles n = 1 and refuses bad parameters', () => {
    const random = new Random(26);
    const single = new ZipfSampler(1, 0.99);
    for (let index = 0; index < 100; index++) assert.equal(single.sample(random), 0);
    assert.throws(() => new ZipfSampler(0, 0.99), RangeError);
    assert.throws(() => new ZipfSampler(10, 0), RangeError);
    assert.throws(() => new ZipfSampler(1.5, 1), RangeError);
  });
});
