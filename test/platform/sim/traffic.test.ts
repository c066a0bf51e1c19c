import assert from 'node:assert/strict';
import { test } from 'node:test';
import { synthetic } from './synthetic-helper.ts';

test('a sole open-loop source sees the same run whether it hands arrivals over one by one or in batches', () => {
  const one = synthetic({ sendAhead: 1, seed: 5 });
  const batched = synthetic({ sendAhead: 64, seed: 5 });
  assert.ok(one.answered > 1_000);
  assert.deepEqual({ ...batched, maxOutstanding: 0 }, { ...one, maxOutstanding: 0 });
});

test('closed-loop clients keep exactly their outstanding requests in flight', () => {
  const run = synthetic({ closed: 8, seed: 3 });
  assert.ok(run.answered > 1_000);
  assert.ok(run.maxOutstanding <= 8 && run.maxOutstanding >= 1);
});
