/**
 * DT under faults, bank transfers (seeds 1–60; 61–120 in dst-bank-more.test.ts): drops, duplicates, reorders, coordinator, server
 * and participant crashes; at every quiescent point the committed history is serializable, the
 * total balance is unchanged, the data is exactly what the committed history wrote, and every
 * commit a client was told about survived. Seeds 121–200 are in dst-fasst.test.ts.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDtSimulation } from '../../../src/apps/dt/dst/simulation.ts';
import { runSeeds } from './dst-helpers.ts';

test('bank transfers keep every invariant over seeds 1..60 with faults and crashes', () => {
  const totals = runSeeds(1, 60, { workload: 'bank' });
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

test('a seed is reproducible: the same seed gives the same run', () => {
  const a = runDtSimulation({ seed: 7, workload: 'bank' });
  const b = runDtSimulation({ seed: 7, workload: 'bank' });
  assert.ok(a.ok && b.ok);
  assert.deepEqual(a.stats, b.stats);
  const c = runDtSimulation({ seed: 8, workload: 'bank' });
  assert.notDeepEqual(a.stats, c.stats);
});
