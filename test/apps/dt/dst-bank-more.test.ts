/**
 * DT under faults, bank transfers, seeds 61–120 (split from dst-bank.test.ts to keep each test file
 * short on a loaded 2-core machine): the same faults and the same invariants at every quiescent
 * point — serializable committed history, unchanged total balance, data equal to what the committed
 * history wrote, every acknowledged commit durable across restarts, no lock left.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './dst-helpers.ts';

test('bank transfers keep every invariant over seeds 61..120 with faults and crashes', () => {
  const totals = runSeeds(61, 60, { workload: 'bank' });
  // The faults really happened, so passing means something.
  assert.equal(totals.quiescentPoints, 60 * 3);
  assert.ok(totals.committed > 2_500, `only ${totals.committed} commits`);
  assert.ok(totals.clientAborted > 500, `only ${totals.clientAborted} aborts: too little contention`);
  assert.ok(totals.dropped > 500 && totals.duplicated > 500);
  assert.ok(totals.coordinatorCrashes > 25, `coordinator crashes ${totals.coordinatorCrashes}`);
  assert.ok(totals.serverCrashes > 25, `server crashes ${totals.serverCrashes}`);
  assert.ok(totals.participantCrashes > 25, `participant crashes ${totals.participantCrashes}`);
  assert.ok(totals.recoveredPending > 50, 'recovery redid logged commits');
  assert.ok(totals.checkpoints > 50, 'the log limit was reached and checkpointed');
});
