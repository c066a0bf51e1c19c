/**
 * DST of RKV's consensus actor with forced laggards, seeds 11–20 (harness.ts option `laggards`:
 * maxLogEntries LAGGARD_MAX_LOG_ENTRIES, snapshot chunks of about one item, a replica crashed
 * mid-transfer in about half the runs; drops, duplicates, jitter, partitions and crashes as in the
 * CI seeds). Every run must pass C1 (linearizable), C2 (no lost write) and R1 (replicas agree);
 * the file must have seen laggards brought back by state transfers, one of them interrupted by a crash.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST with laggards: seeds 11–20 pass, with state transfers', (t) => {
  const totals = assertActorSeedsPass(t, 11, 10, { laggards: true });
  assert.ok(totals.laggards >= 1, `laggards marked: ${totals.laggards}`);
  assert.ok(totals.transfers >= 1, `snapshots installed: ${totals.transfers}`);
  assert.ok(totals.transferChunksStaged > totals.transfers, 'snapshots came in several chunks');
  assert.ok(totals.midTransferCrashes >= 1, 'a replica was crashed mid-transfer');
});
