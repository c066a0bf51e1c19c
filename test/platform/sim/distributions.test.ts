/**
 * The samplers draw from the distributions they name: sample means and variances within five
 * standard errors of the theory (exponential, Poisson arrivals — whose window counts must have
 * mean = variance = λT — bimodal in both forms, uniform, lognormal), shapes by chi-square over
 * equiprobable bins, and the deterministic sampler draws nothing. Fixed seeds make every run
 * identical; the tolerances are what a correct sampler passes for almost every seed.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BimodalExponentialSampler,
  BimodalPointSampler,
  createSampler,
  DeterministicSampler,
  ExponentialSampler,
  LogNormalSampler,
  PoissonArrivalSampler,
  standardExponential,
  UniformSampler,
} from '../../../src/platform/sim/distributions.ts';
import { Random } from '../../../src/random.ts';
import { chiSquare, chiSquareCritical, moments, TOLERANCE_SE } from './statistics.ts';

const COUNT = 200_000;

function assertNear(actual: number, expected: number, standardError: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= TOLERANCE_SE * standardError,
    `${what}: ${actual} is more than ${TOLERANCE_SE} standard errors (${standardError}) from ${expected}`,
  );
}

describe('exponential', () => {
  it('has mean m and variance m², and the exponential shape', () => {
    const mean = 1000;
    const sampler = new ExponentialSampler(mean);
    const random = new Random(1);
    const stats = moments(COUNT, () => sampler.sample(random));
    assertNear(stats.mean, mean, mean / Math.sqrt(COUNT), 'mean');
    // Var of the sample variance for Exp(m): (μ4 − σ⁴)/n = 8m⁴/n.
    assertNear(stats.variance, mean * mean, Math.sqrt(8 / COUNT) * mean * mean, 'variance');
    // Shape: the CDF maps samples to uniform; 20 equiprobable bins.
    const bins = 20;
    const observed = new Array<number>(bins).fill(0);
    for (let index = 0; index < COUNT; index++) {
      observed[Math.min(bins - 1, Math.floor(bins * (1 - Math.exp(-sampler.sample(random) / mean))))]!++;
    }
    const statistic = chiSquare(observed, new Array<number>(bins).fill(COUNT / bins));
    assert.ok(statistic < chiSquareCritical(bins - 1), `chi-square ${statistic}`);
    assert.throws(() => new ExponentialSampler(0), RangeError);
  });

  it('gets the ziggurat’s wedges and tail right: 200 equiprobable bins and P(X > x) far out', () => {
    const random = new Random(11);
    const count = 1_000_000;
    const bins = 200;
    const observed = new Array<number>(bins).fill(0);
    const thresholds = [3, 6, 7.697117470131487, 9, 12];
    const beyond = new Array<number>(thresholds.length).fill(0);
    for (let index = 0; index < count; index++) {
      const x = standardExponential(random);
      observed[Math.min(bins - 1, Math.floor(bins * (1 - Math.exp(-x))))]!++;
      for (let t = 0; t < thresholds.length; t++) if (x > thresholds[t]!) beyond[t]!++;
    }
    const statistic = chiSquare(observed, new Array<number>(bins).fill(count / bins));
    assert.ok(statistic < chiSquareCritical(bins - 1), `chi-square ${statistic}`);
    for (let t = 0; t < thresholds.length; t++) {
      // The tail beyond R = 7.697 comes from the separate tail path; check it on both sides.
      const p = Math.exp(-thresholds[t]!);
      assertNear(beyond[t]! / count, p, Math.sqrt((p * (1 - p)) / count), `P(X > ${thresholds[t]})`);
    }
  });

  it('draws the tail beyond the ziggurat’s last layer as R plus a fresh exponential', () => {
    const random = new Random(12);
    const tailStart = 7.697117470131487;
    const count = 4_000_000;
    let tailCount = 0;
    let excessSum = 0;
    for (let index = 0; index < count; index++) {
      const x = standardExponential(random);
      if (x > tailStart) {
        tailCount++;
        excessSum += x - tailStart;
      }
    }
    const p = Math.exp(-tailStart);
    assertNear(tailCount / count, p, Math.sqrt((p * (1 - p)) / count), 'share in the tail');
    // Memorylessness: the excess over R is Exp(1), mean 1 and sd 1.
    assertNear(excessSum / tailCount, 1, 1 / Math.sqrt(tailCount), 'mean excess in the tail');
  });
});

describe('Poisson arrivals', () => {
  it('counts per window have mean = variance = rate · window', () => {
    const ratePerSecond = 1_000_000; // mean gap 1000 ns
    const sampler = new PoissonArrivalSampler(ratePerSecond);
    assert.equal(sampler.meanGapNs, 1000);
    const random = new Random(2);
    const windowNs = 100_000;
    const windows = 4000;
    const lambda = (ratePerSecond * windowNs) / 1e9; // 100 arrivals per window
    const counts = new Array<number>(windows).fill(0);
    for (let time = sampler.sample(random); time < windows * windowNs; time += sampler.sample(random)) {
      counts[Math.floor(time / windowNs)]!++;
    }
    let index = 0;
    const stats = moments(windows, () => counts[index++]!);
    assertNear(stats.mean, lambda, Math.sqrt(lambda / windows), 'mean count');
    // Poisson: μ4 = λ(1 + 3λ), so Var(s²) ≈ (λ + 2λ²)/W.
    assertNear(stats.variance, lambda, Math.sqrt((lambda + 2 * lambda * lambda) / windows), 'count variance');
  });
});

describe('bimodal', () => {
  it('two-point: exactly a or b, a with probability pA', () => {
    const sampler = new BimodalPointSampler(1000, 10_000, 0.9);
    const random = new Random(3);
    let countA = 0;
    for (let index = 0; index < COUNT; index++) {
      const value = sampler.sample(random);
      if (value === 1000) countA++;
      else assert.equal(value, 10_000);
    }
    assertNear(countA / COUNT, 0.9, Math.sqrt((0.9 * 0.1) / COUNT), 'share of a');
    assert.ok(Math.abs(sampler.mean - 1900) < 1e-9);
  });

  it('two-exponential: the mixture mean, and the mixture tail P(X > 5000)', () => {
    const [meanA, meanB, pA] = [1000, 10_000, 0.9];
    const sampler = new BimodalExponentialSampler(meanA, meanB, pA);
    const random = new Random(4);
    const secondMoment = pA * 2 * meanA ** 2 + (1 - pA) * 2 * meanB ** 2;
    const variance = secondMoment - sampler.mean ** 2;
    let above = 0;
    const stats = moments(COUNT, () => {
      const value = sampler.sample(random);
      if (value > 5000) above++;
      return value;
    });
    assertNear(stats.mean, pA * meanA + (1 - pA) * meanB, Math.sqrt(variance / COUNT), 'mean');
    // The tail is dominated by the b mode, so it checks the mixing proportion.
    const tail = pA * Math.exp(-5000 / meanA) + (1 - pA) * Math.exp(-5000 / meanB);
    assertNear(above / COUNT, tail, Math.sqrt((tail * (1 - tail)) / COUNT), 'P(X > 5000)');
    assert.throws(() => new BimodalExponentialSampler(1, 2, 1.5), RangeError);
  });
});

describe('uniform, deterministic, lognormal', () => {
  it('uniform on [lo, hi): in range, mean and variance of the uniform', () => {
    const sampler = new UniformSampler(100, 300);
    const random = new Random(5);
    const stats = moments(COUNT, () => {
      const value = sampler.sample(random);
      assert.ok(value >= 100 && value < 300);
      return value;
    });
    const variance = 200 ** 2 / 12;
    assertNear(stats.mean, 200, Math.sqrt(variance / COUNT), 'mean');
    // Var(s²) for a uniform: (μ4 − σ⁴)/n with μ4 = w⁴/80.
    assertNear(stats.variance, variance, Math.sqrt((200 ** 4 / 80 - variance ** 2) / COUNT), 'variance');
  });

  it('deterministic: always the value, and it draws nothing', () => {
    const sampler = new DeterministicSampler(750);
    const random = new Random(6);
    const untouched = new Random(6);
    for (let index = 0; index < 10; index++) assert.equal(sampler.sample(random), 750);
    assert.equal(random.nextU32(), untouched.nextU32());
  });

  it('lognormal: mean from fromMean, median e^mu', () => {
    const sigma = 0.5;
    const sampler = LogNormalSampler.fromMean(1000, sigma);
    const random = new Random(7);
    const values = Array.from({ length: COUNT }, () => sampler.sample(random));
    let index = 0;
    const stats = moments(COUNT, () => values[index++]!);
    const variance = (Math.exp(sigma * sigma) - 1) * 1000 ** 2;
    assertNear(stats.mean, 1000, Math.sqrt(variance / COUNT), 'mean');
    const below = values.filter((value) => value < Math.exp(sampler.mu)).length;
    assertNear(below / COUNT, 0.5, Math.sqrt(0.25 / COUNT), 'share below the median');
  });
});

describe('createSampler', () => {
  it('builds each kind from its spec', () => {
    const random = new Random(8);
    assert.ok(createSampler({ kind: 'exponential', mean: 5 }) instanceof ExponentialSampler);
    assert.ok(createSampler({ kind: 'poisson-arrivals', ratePerSecond: 5 }) instanceof PoissonArrivalSampler);
    assert.equal(createSampler({ kind: 'deterministic', value: 3 }).sample(random), 3);
    assert.equal(createSampler({ kind: 'bimodal-point', a: 1, b: 1, probabilityA: 0.5 }).sample(random), 1);
    const zipf = createSampler({ kind: 'zipf', n: 10, exponent: 0.99 });
    const key = zipf.sample(random);
    assert.ok(Number.isInteger(key) && key >= 0 && key < 10);
    assert.throws(() => createSampler({ kind: 'uniform', lo: 5, hi: 1 }), RangeError);
  });
});
