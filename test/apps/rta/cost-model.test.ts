/**
 * RTA's cost model is honest (src/apps/rta/cost-model.ts): declared work follows what the handler
 * does — the quicksort's comparison estimate matches the comparisons the real quicksort makes,
 * the sort's work grows as m·log2 m, the filter's and the counter's linearly in tuples, keys and
 * bytes — and the counter's tick declares the entries it will really touch. The quicksort itself
 * sorts like Array.prototype.sort under the rankers' total order.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  compareRanked,
  counterWork,
  filterWork,
  quicksort,
  quicksortComparisons,
  type RankedEntry,
  rankerWork,
  rtaWorkload,
  sortInstructions,
} from '../../../src/apps/rta/index.ts';
import { Random } from '../../../src/random.ts';
import { LocalRta, liquidioTiming } from './harness.ts';

const SEED = 99;

function randomEntries(random: Random, m: number): RankedEntry[] {
  return Array.from({ length: m }, (_, i) => ({ key: `#k${i}`, count: random.int(1, 1 + m) }));
}

test('the comparison estimate 1.1·m·log2 m is within 15% of the real quicksort’s comparisons', (t) => {
  t.diagnostic(`seed ${SEED}`);
  const random = new Random(SEED);
  for (const m of [24, 64, 74, 138, 256, 1_000]) {
    let comparisons = 0;
    const trials = 20;
    for (let trial = 0; trial < trials; trial++) {
      quicksort(randomEntries(random, m), (a, b) => {
        comparisons++;
        return compareRanked(a, b);
      });
    }
    const measured = comparisons / trials;
    const estimate = quicksortComparisons(m);
    t.diagnostic(`m ${m}: ${measured.toFixed(0)} comparisons measured, ${estimate.toFixed(0)} estimated`);
    assert.ok(Math.abs(estimate / measured - 1) < 0.15, `m ${m}: ${estimate} vs ${measured}`);
  }
});

test('quicksort sorts exactly like Array.prototype.sort under the rankers’ order', () => {
  // quicksort hands ranges of up to 12 items to insertion sort: only 13 or more reach its
  // partitioning. fast-check's default size stops at 10 items, so size 'max', and a count.
  let partitioned = 0;
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.record({ key: fc.string({ maxLength: 6 }), count: fc.nat({ max: 20 }) }), {
        selector: (e) => e.key,
        maxLength: 200,
        size: 'max',
      }),
      (entries) => {
        if (entries.length >= 13) partitioned++;
        const ours = [...entries];
        quicksort(ours, compareRanked);
        assert.deepEqual(ours, [...entries].sort(compareRanked));
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
  assert.ok(partitioned >= 150, `only ${partitioned} of 300 inputs had 13 or more items`);
});

test('work grows with what the handler does: m·log2 m for a sort, linear for tuples, keys and bytes', () => {
  // Sorting: doubling m more than doubles the work.
  for (const m of [32, 128, 512]) assert.ok(sortInstructions(2 * m) > 2.1 * sortInstructions(m));
  const counts = (n: number) =>
    rankerWork({
      type: 'counts',
      counter: 0,
      seq: 0,
      windowEndMs: 1,
      entries: Array.from({ length: n }, (_, i) => ({ key: `#key${i}`, count: 1 })),
    }).instructions;
  assert.ok(counts(120) > 2 * counts(60), 'a chunk twice as big costs more than twice as much');

  // The filter: linear in tuples and in text bytes.
  const ingest = (tuples: number, textBytes: number) =>
    filterWork({
      type: 'ingest',
      tuples: Array.from({ length: tuples }, (_, i) => ({
        timestampMs: i,
        userId: 0,
        hashtag: '#abcdef',
        text: 'x'.repeat(textBytes),
      })),
    }).instructions;
  const fixed = ingest(0, 0);
  assert.equal(ingest(10, 40) - fixed, 2 * (ingest(5, 40) - fixed));
  assert.equal(ingest(4, 80) - ingest(4, 40), 4 * 40 * (12 + 1), 'regex + copy per text byte');

  // The counter: linear in keys; the tick in the entries it merges and emits.
  const keys = (n: number) =>
    counterWork({
      type: 'keys',
      source: 0,
      watermarkMs: 0,
      entries: Array.from({ length: n }, (_, i) => ({ timestampMs: i, key: '#abcdef' })),
    }).instructions;
  assert.equal(keys(20) - keys(10), keys(10) - keys(0));
  const tick = (mergeEntries: number, emitEntries: number) =>
    counterWork({ type: 'tick', mergeEntries, emitEntries }).instructions;
  assert.ok(tick(100, 0) > tick(0, 0) && tick(0, 600) > tick(0, 300) && tick(0, 300) > tick(0, 0));
});

test('on a CN2350 core: a ranker chunk outweighs a 1 KB filter request and a counter batch', (t) => {
  const timing = liquidioTiming();
  const workload = rtaWorkload({ packetBytes: 1024, seed: SEED });
  const request = workload.stream().next();
  assert.ok(request.message.type === 'ingest');
  const filterNs = timing.nicHandlerNs(filterWork(request.message));
  const keysNs = timing.nicHandlerNs(
    counterWork({
      type: 'keys',
      source: 0,
      watermarkMs: 0,
      entries: request.message.tuples.map((x) => ({ timestampMs: x.timestampMs, key: x.hashtag })),
    }),
  );
  const chunk = Array.from({ length: 64 }, (_, i) => ({ key: `#kalomi${i}`, count: i + 1 }));
  const rankerNs = timing.nicHandlerNs(
    rankerWork({ type: 'counts', counter: 0, seq: 0, windowEndMs: 1, entries: chunk }),
  );
  t.diagnostic(
    `CN2350 core: filter 1 KB request (${request.tuples} tuples) ${(filterNs / 1e3).toFixed(1)} µs, ` +
      `counter keys ${(keysNs / 1e3).toFixed(1)} µs, ranker chunk of 64 ${(rankerNs / 1e3).toFixed(1)} µs`,
  );
  assert.ok(rankerNs > keysNs);
  assert.ok(filterNs > keysNs, 'matching the text costs more than counting the keys');
});

test('a tick declares the pane entries it will merge and the totals it will emit, from the counter’s state', () => {
  const workload = rtaWorkload({
    config: {
      counters: 1,
      rankers: 1,
      window: { windowMs: 2_000, slideMs: 1_000, latenessMs: 0, tickMs: 5 },
    },
  });
  const rta = new LocalRta(workload);
  for (const send of workload.setup) rta.callNow(send.instance, send.message);
  const counter = rta.runtime.instance(rta.ref('rta-counter-0').id);
  const pendingTick = () => {
    const timers = counter.pendingTimers();
    assert.equal(timers.length, 1, 'one tick pending');
    return timers[0]!.message;
  };
  const t = (timestampMs: number, hashtag: string) => ({ timestampMs, userId: 0, hashtag, text: hashtag });
  // Pane 0: #a ×2, #b; pane 1: #a, #c, #d. The watermark (1.3 s) lets only the window ending at
  // 1 s close: its tick merges pane 0 (2 keys) into empty totals and emits those 2.
  rta.callNow('rta-filter-0', {
    type: 'ingest',
    tuples: [t(10, '#a'), t(20, '#a'), t(30, '#b'), t(1_100, '#a'), t(1_200, '#c'), t(1_300, '#d')],
  });
  assert.deepEqual(pendingTick(), { type: 'tick', mergeEntries: 2, emitEntries: 2 }, 'window 1 s');
  rta.advanceMs(5);
  assert.equal(counter.pendingTimers().length, 0, 'nothing more can close');
  // Window 2 s adds pane 1 (3 keys) to totals of 2 keys; nothing has expired yet.
  rta.callNow('rta-filter-0', { type: 'advance', watermarkMs: 2_000 });
  assert.deepEqual(pendingTick(), { type: 'tick', mergeEntries: 3, emitEntries: 5 }, 'window 2 s');
  rta.advanceMs(5);
  // Window 3 s: no pane 2; pane 0 (2 keys) expires out of totals of 4 keys (#a, #b, #c, #d).
  rta.callNow('rta-filter-0', { type: 'advance', watermarkMs: 3_000 });
  assert.deepEqual(pendingTick(), { type: 'tick', mergeEntries: 2, emitEntries: 4 }, 'window 3 s');
  rta.advanceMs(5);
  const stats = rta.callNow('rta-counter-0', { type: 'stats' }) as {
    windowsEmitted: number;
    openPanes: number;
  };
  assert.equal(stats.windowsEmitted, 3);
  assert.equal(stats.openPanes, 1, 'pane 0 freed, pane 1 still in the next window');
  const ranking = rta.callNow('rta-aggregator', { type: 'query', windowEndMs: 3_000 }) as {
    entries: { key: string; count: number }[];
  };
  assert.deepEqual(ranking.entries, [
    { key: '#a', count: 1 },
    { key: '#c', count: 1 },
    { key: '#d', count: 1 },
  ]);
});
