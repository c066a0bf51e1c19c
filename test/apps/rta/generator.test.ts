/**
 * The seeded tweet generator (src/apps/rta/generator.ts): the same seed gives the same tuples;
 * hashtag popularity follows Zipf(s) over ranks; the ranking drifts over event time (tail hashtags
 * start trending) and stays put with drift off; arrivals are Poisson at the configured rate.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashtagName, RtaConfigError, type RtaTuple, TweetGenerator } from '../../../src/apps/rta/index.ts';

const SEED = 20261122;

function countsOf(tuples: readonly RtaTuple[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of tuples) counts.set(t.hashtag, (counts.get(t.hashtag) ?? 0) + 1);
  return counts;
}

function topKeys(tuples: readonly RtaTuple[], n: number): string[] {
  return [...countsOf(tuples)]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([key]) => key);
}

test('the same seed gives the same tuples; another seed other ones', (t) => {
  t.diagnostic(`seed ${SEED}`);
  const a = new TweetGenerator({ seed: SEED }).take(500);
  assert.deepEqual(new TweetGenerator({ seed: SEED }).take(500), a);
  const b = new TweetGenerator({ seed: SEED + 1 }).take(500);
  assert.notDeepEqual(
    b.map((x) => x.hashtag),
    a.map((x) => x.hashtag),
  );
  // Distinct indices have distinct names (what makes a hashtag a key).
  const names = new Set(Array.from({ length: 5_000 }, (_, i) => hashtagName(i)));
  assert.equal(names.size, 5_000);
});

test('with drift off, rank frequencies follow Zipf(s): p(rank k) ∝ (k + 1)^−s', (t) => {
  const hashtags = 1_000;
  for (const s of [0.99, 1.3]) {
    t.diagnostic(`seed ${SEED}, s ${s}`);
    const generator = new TweetGenerator({ seed: SEED, hashtags, zipfExponent: s, driftSwaps: 0 });
    const samples = 100_000;
    const counts = countsOf(generator.take(samples));
    const harmonic = Array.from({ length: hashtags }, (_, k) => (k + 1) ** -s).reduce((x, y) => x + y, 0);
    for (const rank of [0, 1, 4, 19]) {
      const expected = (rank + 1) ** -s / harmonic;
      const observed = (counts.get(generator.hashtagAtRank(rank)) ?? 0) / samples;
      const sd = Math.sqrt((expected * (1 - expected)) / samples);
      assert.ok(
        Math.abs(observed - expected) < 5 * sd,
        `s ${s}, rank ${rank}: observed ${observed.toFixed(4)}, expected ${expected.toFixed(4)}`,
      );
    }
    // The log-log slope over ranks 1..30 (least squares) is −s.
    const xs: number[] = [];
    const ys: number[] = [];
    for (let rank = 0; rank < 30; rank++) {
      xs.push(Math.log(rank + 1));
      ys.push(Math.log(counts.get(generator.hashtagAtRank(rank)) ?? 1));
    }
    const mx = xs.reduce((x, y) => x + y) / xs.length;
    const my = ys.reduce((x, y) => x + y) / ys.length;
    let num = 0;
    let den = 0;
    for (let i = 0; i < xs.length; i++) {
      num += (xs[i]! - mx) * (ys[i]! - my);
      den += (xs[i]! - mx) ** 2;
    }
    const slope = num / den;
    assert.ok(Math.abs(slope + s) < 0.1, `s ${s}: slope ${slope.toFixed(3)}`);
  }
});

test('popularity drifts over event time: the trending list changes; without drift it does not', (t) => {
  t.diagnostic(`seed ${SEED}`);
  const span = (tuples: RtaTuple[], fromMs: number, toMs: number) =>
    tuples.filter((x) => x.timestampMs >= fromMs && x.timestampMs < toMs);
  const drifting = new TweetGenerator({ seed: SEED, tuplesPerSecond: 1_000 });
  const atStart = [0, 1, 2].map((rank) => drifting.hashtagAtRank(rank));
  const tuples = drifting.takeUntil(60_000);
  // The first drift step is at 1 s: until then the most drawn hashtags are ranks 0 and 1.
  assert.deepEqual(topKeys(span(tuples, 0, 1_000), 2), atStart.slice(0, 2), 'first second: ranks 0, 1');
  const early = topKeys(span(tuples, 0, 5_000), 5);
  const late = topKeys(span(tuples, 55_000, 60_000), 5);
  assert.notDeepEqual(late.sort(), early.sort(), 'a minute later the top 5 is another list');
  assert.notDeepEqual(
    [0, 1, 2].map((rank) => drifting.hashtagAtRank(rank)),
    atStart,
  );

  const steady = new TweetGenerator({ seed: SEED, tuplesPerSecond: 1_000, driftSwaps: 0 });
  const still = steady.takeUntil(60_000);
  assert.deepEqual(
    topKeys(span(still, 55_000, 60_000), 3).sort(),
    topKeys(span(still, 0, 5_000), 3).sort(),
    'without drift the top 3 stay',
  );
});

test('arrivals: integer, non-decreasing event times at the configured rate; retweet share; takeUntil', () => {
  const generator = new TweetGenerator({
    seed: SEED,
    tuplesPerSecond: 2_000,
    startMs: 5_000,
    retweetShare: 0.25,
  });
  const tuples = generator.takeUntil(35_000);
  for (let i = 1; i < tuples.length; i++) {
    assert.ok(Number.isInteger(tuples[i]!.timestampMs));
    assert.ok(tuples[i]!.timestampMs >= tuples[i - 1]!.timestampMs);
  }
  assert.ok(tuples[0]!.timestampMs >= 5_000);
  // 30 s at 2000/s: 60 000 expected, Poisson sd ≈ 245.
  assert.ok(Math.abs(tuples.length - 60_000) < 1_250, `${tuples.length} tuples`);
  const retweets = tuples.filter((x) => x.text.startsWith('RT @')).length / tuples.length;
  assert.ok(Math.abs(retweets - 0.25) < 0.01, `retweet share ${retweets}`);
  assert.ok(
    tuples.every((x) => x.text.includes(x.hashtag)),
    'each text mentions its hashtag',
  );
  // takeUntil keeps the first tuple past the bound for the next call: nothing is lost or repeated.
  const next = generator.takeUntil(36_000);
  assert.ok(next.length > 0 && next[0]!.timestampMs >= 35_000);
  assert.equal(generator.generated, tuples.length + next.length + 1);
});

test('bad generator options are RtaConfigError naming the option', () => {
  for (const [options, path] of [
    [{ seed: -1 }, 'generator.seed'],
    [{ seed: 1, hashtags: 0 }, 'generator.hashtags'],
    [{ seed: 1, zipfExponent: 0 }, 'generator.zipfExponent'],
    [{ seed: 1, tuplesPerSecond: Number.NaN }, 'generator.tuplesPerSecond'],
    [{ seed: 1, retweetShare: 2 }, 'generator.retweetShare'],
  ] as const) {
    assert.throws(
      () => new TweetGenerator(options),
      (error: unknown) => error instanceof RtaConfigError && error.path === path,
    );
  }
});
