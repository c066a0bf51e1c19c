/**
 * The seeded generator: bit-exact against the reference C implementations of xoshiro128** and
 * SplitMix64 (outputs computed with Vigna's code), reproducible from its seed, different across
 * seeds, forks independent of each other's and the parent's consumption, and the derived draws
 * (next, nextDouble, int, chance) in range and unbiased within statistical tolerance.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { freshSeed, Random, splitMix64 } from '../../../src/random.ts';

function draws(random: Random, count: number): number[] {
  return Array.from({ length: count }, () => random.nextU32());
}

describe('Random', () => {
  it('matches the reference xoshiro128** outputs from state (1, 2, 3, 4)', () => {
    // From xoshiro128starstar.c (Blackman & Vigna), state s = {1, 2, 3, 4}.
    const expected = [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849];
    assert.deepEqual(draws(Random.fromState(1, 2, 3, 4), expected.length), expected);
  });

  it('seeds through the reference SplitMix64', () => {
    assert.deepEqual(splitMix64(0n, 3), [0xe220a8397b1dcdafn, 0x6e789e6aa1b965f4n, 0x06c45d188009454fn]);
    // Seed 42: state = two SplitMix64 outputs split into 32-bit words (reference run of the C code).
    assert.deepEqual(draws(new Random(42), 5), [1776835114, 4165204688, 17111135, 2317295270, 2792088233]);
  });

  it('reproduces a stream from its seed, and different seeds give different streams', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        (a, b) => {
          assert.deepEqual(draws(new Random(a), 16), draws(new Random(a), 16));
          if (a !== b) assert.notDeepEqual(draws(new Random(a), 4), draws(new Random(b), 4));
        },
      ),
    );
    // Adjacent seeds are unrelated (SplitMix64 expansion): first draws share no obvious structure.
    const firsts = new Set(Array.from({ length: 1000 }, (_, seed) => new Random(seed).nextU32()));
    assert.equal(firsts.size, 1000);
  });

  it('exposes its seed and refuses seeds that are not integers in [0, 2^53)', () => {
    assert.equal(new Random(7).seed, 7);
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) assert.throws(() => new Random(bad), RangeError);
    const seed = freshSeed();
    assert.ok(Number.isSafeInteger(seed) && seed >= 0);
  });

  it('forks streams that depend only on the parent seed and the label', () => {
    const parent = new Random(2019);
    const coreBefore = draws(parent.fork('nic0/core3'), 32);
    // Consume from the parent and from a sibling; the fork must not change.
    draws(parent, 1000);
    draws(parent.fork('traffic'), 1000);
    assert.deepEqual(draws(parent.fork('nic0/core3'), 32), coreBefore);
    assert.deepEqual(draws(new Random(2019).fork('nic0/core3'), 32), coreBefore);
    // Siblings, the parent and another root differ.
    assert.notDeepEqual(draws(parent.fork('nic0/core4'), 32), coreBefore);
    assert.notDeepEqual(draws(new Random(2020).fork('nic0/core3'), 32), coreBefore);
    assert.notDeepEqual(draws(new Random(2019), 32), coreBefore);
    // Labels compose into a path for printing.
    assert.equal(parent.fork('nic0').fork('core3').label, 'nic0/core3');
  });

  it('gives sibling forks uncorrelated streams', () => {
    const parent = new Random(99);
    const a = parent.fork('a');
    const b = parent.fork('b');
    const count = 200_000;
    let sumA = 0;
    let sumB = 0;
    let sumAB = 0;
    let sumAA = 0;
    let sumBB = 0;
    for (let index = 0; index < count; index++) {
      const x = a.next();
      const y = b.next();
      sumA += x;
      sumB += y;
      sumAB += x * y;
      sumAA += x * x;
      sumBB += y * y;
    }
    const covariance = sumAB / count - (sumA / count) * (sumB / count);
    const correlation =
      covariance / Math.sqrt((sumAA / count - (sumA / count) ** 2) * (sumBB / count - (sumB / count) ** 2));
    // Independent streams: the sample correlation is ~N(0, 1/n); 5 standard errors.
    assert.ok(Math.abs(correlation) < 5 / Math.sqrt(count), `correlation ${correlation}`);
  });

  it('keeps next() and nextDouble() in [0, 1) with mean 1/2', () => {
    const random = new Random(5);
    const count = 200_000;
    let sum = 0;
    let sumDouble = 0;
    for (let index = 0; index < count; index++) {
      const x = random.next();
      const y = random.nextDouble();
      assert.ok(x >= 0 && x < 1 && y >= 0 && y < 1);
      sum += x;
      sumDouble += y;
    }
    // Uniform(0,1) has sd 1/√12; 5 standard errors of the mean.
    const tolerance = 5 / Math.sqrt(12) / Math.sqrt(count);
    assert.ok(Math.abs(sum / count - 0.5) < tolerance);
    assert.ok(Math.abs(sumDouble / count - 0.5) < tolerance);
    // nextDouble has more than 32 bits: some draw is not a multiple of 2^-32.
    const fine = Array.from({ length: 100 }, () => random.nextDouble()).some((x) => (x * 2 ** 32) % 1 !== 0);
    assert.ok(fine);
  });

  it('int(lo, hi) stays in [lo, hi), hits every value, and is uniform (chi-square)', () => {
    const random = new Random(11);
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 50 }), (lo, width) => {
        for (let index = 0; index < 50; index++) {
          const value = random.int(lo, lo + width);
          assert.ok(Number.isInteger(value) && value >= lo && value < lo + width);
        }
      }),
    );
    const bins = 10;
    const count = 100_000;
    const observed = new Array<number>(bins).fill(0);
    for (let index = 0; index < count; index++) observed[random.int(0, bins)]!++;
    const expected = count / bins;
    const chiSquare = observed.reduce((sum, value) => sum + (value - expected) ** 2 / expected, 0);
    // 9 degrees of freedom: P(χ² > 33.7) ≈ 1e-4.
    assert.ok(chiSquare < 33.7, `chi-square ${chiSquare}`);
    // Wide ranges (beyond 2^32) use 53-bit draws and stay in range.
    for (let index = 0; index < 1000; index++) {
      const value = random.int(0, 2 ** 40 + 3);
      assert.ok(Number.isInteger(value) && value >= 0 && value < 2 ** 40 + 3);
    }
    assert.throws(() => random.int(5, 5), RangeError);
    assert.throws(() => random.int(0, 1.5), RangeError);
  });

  it('chance(p) comes up with frequency p', () => {
    const random = new Random(3);
    const count = 100_000;
    let hits = 0;
    for (let index = 0; index < count; index++) if (random.chance(0.3)) hits++;
    const sd = Math.sqrt((0.3 * 0.7) / count);
    assert.ok(Math.abs(hits / count - 0.3) < 5 * sd);
    assert.equal(random.chance(0), false);
    assert.equal(random.chance(1), true);
  });
});
