/**
 * DT under faults with the DMO-backed stores the actors use (dmo-stores.ts; seeds 191–210, three
 * shards): the actors' state layer must behave exactly like the reference Maps under the same
 * drops, duplicates, reorders and crashes, with every invariant of dst-bank.test.ts checked.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './dst-helpers.ts';

test('the DMO-backed stores the actors use pass the same faults (seeds 191..210)', () => {
  const totals = runSeeds(191, 20, { workload: 'bank', stores: 'dmo', shards: 3 });
  assert.ok(totals.committed > 600);
  assert.ok(totals.coordinatorCrashes + totals.serverCrashes > 12);
});
