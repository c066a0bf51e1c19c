/**
 * DST of RKV's actors with SCAN pages among the reads, seeds 1–40 (harness.ts option `scans`: about
 * two reads in five are one page of a random range with a limit of 1–3, three in ten of them with
 * a byte bound of one or two pairs, so pages end early and name their next key; a background
 * scanner pages the leader every 10 µs, so flush holds overlap; drops, duplicates, jitter,
 * partitions and crashes as in the CI seeds). Every run must pass C1 (linearizable: each page
 * equals the KV model's range at one point, the scans joining the keys they read into one part of
 * the check), C2, R1 and the memtable check (no active memtable over its limit for more than 1 ms:
 * flushes not starved); the file must have seen pages with pairs and pages cut early. With the
 * SSTable reader letting the disk's value win over the memtable's (a mutation of readerScan), 25 of
 * these 40 seeds fail linearizability; with every flush hold stopping every flush (the starvation
 * holds' freeze epochs fixed), 12 fail the memtable check. In this mode the memtable flushes at 100
 * bytes (harness.ts SCAN_MEMTABLE_LIMIT_BYTES), so pages merge the disk, a frozen memtable and the
 * active one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('actor DST with SCAN pages: seeds 1–40 pass', (t) => {
  const totals = assertActorSeedsPass(t, 1, 40, { scans: true });
  assert.ok(totals.scans >= 200, `scan pages answered: ${totals.scans}`);
  assert.ok(totals.scanPairs >= 100, `pairs in them: ${totals.scanPairs}`);
  assert.ok(totals.scansCut >= 20, `pages cut early (a next key named): ${totals.scansCut}`);
});
