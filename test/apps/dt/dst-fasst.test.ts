/**
 * DT under faults with FaSST's transactions (read 2 keys, write a third; seeds 121–190, uniform and
 * Zipf keys): the same invariants as dst-bank.test.ts, bank balance aside (seeds 191–210, the DMO
 * stores, are in dst-dmo.test.ts). Read-only keys go through validation here (the bank's reads
 * are all written), so a validation bug shows up as a serializability cycle.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './dst-helpers.ts';

test('FaSST read-2-write-1 transactions stay serializable over seeds 121..155 (uniform keys)', () => {
  const totals = runSeeds(121, 35, { workload: 'fasst' });
  assert.ok(totals.committed > 1_200 && totals.clientAborted > 500);
});

test('FaSST transactions stay serializable over seeds 156..190 (Zipf 0.99 keys)', () => {
  const totals = runSeeds(156, 35, { workload: 'fasst', distribution: { kind: 'zipf', exponent: 0.99 } });
  assert.ok(totals.committed > 1_200 && totals.clientAborted > 500);
});
