/**
 * SCAN across shards (scan-merge.ts): pages of every shard from one start key merged into one page.
 *
 *   property   shards holding random disjoint key sets answer pages cut at random points (every
 *              live key below their next key, at most `limit`); iterating merged pages from the
 *              start returns every key of the range exactly once, in byte order, each page within
 *              its limit — the whole scan equals the union of the shards' ranges
 *   bound      a shard whose page ended early holds the merged page below its next key: a pair of
 *              another shard above it is left for the next page
 *   empty      a shard page with no pairs but a next (its disk read ran out of budget) bounds the
 *              merge the same way; all shards empty: an empty page that still moves on
 *   stalled    scanAll throws ClusterScanStalledError on a page whose next is not past its start
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { RkvActorClient } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { ClusterScanStalledError } from '../../../../src/apps/rkv/cluster/errors.ts';
import {
  assertScanMovesOn,
  compareKeyBytes,
  mergeShardPages,
  type RkvPair,
  type RkvScanPage,
} from '../../../../src/apps/rkv/cluster/scan-merge.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const key = (text: string) => encoder.encode(text);

/** A shard's page from `start`: its keys in [start, end), cut after `take` (1 … limit) pairs, next key named. */
function shardPage(keys: readonly string[], start: string, end: string | null, take: number): RkvScanPage {
  const inRange = keys.filter((k) => k >= start && (end === null || k < end)).sort();
  const pairs: RkvPair[] = inRange.slice(0, take).map((k) => ({ key: key(k), value: key(`v${k}`) }));
  const next = inRange[take];
  return { pairs, next: next === undefined ? null : key(next) };
}

test('merged pages over random shards return the whole range once, in order', () => {
  const keyArb = fc.stringMatching(/^[a-e]{1,3}$/);
  fc.assert(
    fc.property(
      fc.uniqueArray(keyArb, { maxLength: 40 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 6 }),
      fc.option(keyArb, { nil: null }),
      fc.infiniteStream(fc.integer({ min: 1, max: 6 })),
      (all, shards, limit, end, takes) => {
        // Disjoint shards, by a hash of the key as the cluster places keys.
        const byShard = Array.from({ length: shards }, () => [] as string[]);
        for (const k of all) byShard[[...k].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) % shards]!.push(k);
        const want = all.filter((k) => end === null || k < end).sort();
        const got: string[] = [];
        let from = '';
        for (let pages = 0; pages < 500; pages++) {
          const shardPages = byShard.map((keys) =>
            shardPage(keys, from, end, Math.min(limit, takes.next().value)),
          );
          // A shard's page holds at least one pair when its range has any (so its next key is above
          // the start: the real memtable and reader move on the same way).
          const page = mergeShardPages(shardPages, limit, 1 << 20);
          assert.ok(page.pairs.length <= limit);
          for (const pair of page.pairs) got.push(decoder.decode(pair.key));
          if (page.next === null) break;
          const next = decoder.decode(page.next);
          assert.ok(next > from, 'the scan moves on');
          from = next;
        }
        assert.deepEqual(got, want);
      },
    ),
    { numRuns: 300, seed: 20261122 },
  );
});

test("a shard's early end bounds the merged page; limit and bytes cut it with the next key", () => {
  const a: RkvScanPage = { pairs: [{ key: key('a'), value: key('1') }], next: key('c') };
  const b: RkvScanPage = {
    pairs: [
      { key: key('b'), value: key('2') },
      { key: key('d'), value: key('3') },
    ],
    next: null,
  };
  const page = mergeShardPages([a, b], 10, 1 << 20);
  assert.deepEqual(
    page.pairs.map((pair) => decoder.decode(pair.key)),
    ['a', 'b'],
    'd lies above shard a’s next key: left for the next page',
  );
  assert.equal(decoder.decode(page.next as Uint8Array), 'c');
  const limited = mergeShardPages([a, b], 1, 1 << 20);
  assert.deepEqual([limited.pairs.length, decoder.decode(limited.next as Uint8Array)], [1, 'b']);
  const small = mergeShardPages([a, b], 10, 1);
  assert.deepEqual([small.pairs.length, decoder.decode(small.next as Uint8Array)], [1, 'b']);
  const done = mergeShardPages([{ pairs: [], next: null }, b], 10, 1 << 20);
  assert.deepEqual([done.pairs.length, done.next], [2, null]);
  assert.ok(compareKeyBytes(key('a'), key('ab')) < 0 && compareKeyBytes(key('b'), key('ab')) > 0);
});

test('a shard page that is empty but not done (its disk read ran out of budget) bounds the merge at its next', () => {
  // Shard a stopped among tombstones at "m" with nothing to show; shard b has keys on both sides.
  const a: RkvScanPage = { pairs: [], next: key('m') };
  const b: RkvScanPage = {
    pairs: [
      { key: key('c'), value: key('1') },
      { key: key('q'), value: key('2') },
    ],
    next: null,
  };
  const page = mergeShardPages([a, b], 10, 1 << 20);
  assert.deepEqual(
    page.pairs.map((pair) => decoder.decode(pair.key)),
    ['c'],
    'q lies above shard a’s next: shard a may still hold keys below it',
  );
  assert.equal(decoder.decode(page.next as Uint8Array), 'm');
  // Both empty with a next: the merged page is empty too, and moves on to the smaller next.
  const empty = mergeShardPages([a, { pairs: [], next: key('t') }], 10, 1 << 20);
  assert.deepEqual([empty.pairs.length, decoder.decode(empty.next as Uint8Array)], [0, 'm']);
});

test('scanAll throws ClusterScanStalledError on a page whose next does not move past its start, not loop', async () => {
  // Only scanAll's loop is under test: a client whose `scan` answers from a script.
  const pages: RkvScanPage[] = [
    { pairs: [{ key: key('a'), value: key('1') }], next: key('c') },
    { pairs: [], next: key('c') },
  ];
  let asked = 0;
  const client = Object.create(RkvActorClient.prototype) as RkvActorClient;
  Object.defineProperty(client, 'scan', {
    value: async () => pages[Math.min(asked++, pages.length - 1)],
  });
  const seen: string[] = [];
  await assert.rejects(
    async () => {
      for await (const pair of client.scanAll(key(''), undefined)) seen.push(decoder.decode(pair.key));
    },
    (error: unknown) =>
      error instanceof ClusterScanStalledError &&
      error.code === 'IPIPE_ERR_CLUSTER_SCAN_STALLED' &&
      decoder.decode(error.next) === 'c' &&
      /never end/.test(error.message),
  );
  assert.deepEqual(seen, ['a']);
  assert.equal(asked, 2, 'stopped at the page that did not move on');
  assert.throws(() => assertScanMovesOn(key('b'), { pairs: [], next: key('a') }), ClusterScanStalledError);
  assertScanMovesOn(key('b'), { pairs: [], next: key('ba') });
  assertScanMovesOn(key('b'), { pairs: [], next: null });
});
