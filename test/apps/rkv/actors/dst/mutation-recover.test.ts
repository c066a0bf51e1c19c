/**
 * UNSAFE_RECOVER_WITHOUT_LOG: a restarted replica ignores its durable log — it forgets its promise,
 * what it accepted and what it applied, so a write a majority accepted can lose its majority (the
 * forgetful replica and a stale one elect a leader that never saw it) and its rebuilt memtable
 * misses writes. The DST's crash nemesis must catch it with a client-side check (a non-linearizable
 * history or a lost acknowledged write) within the CI's first seeds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNSAFE_RECOVER_WITHOUT_LOG } from '../../../../../src/apps/rkv/actors/consensus-actor.ts';
import { failingSeedsAnyCheck } from './mutation-helpers.ts';

test('a replica that restarts without its durable log is caught (seeds 1–10)', (t) => {
  const failed = failingSeedsAnyCheck(UNSAFE_RECOVER_WITHOUT_LOG, 1, 10);
  t.diagnostic(`failing seeds: ${failed.map((f) => `${f.seed} (${f.check})`).join(', ')}`);
  assert.ok(
    failed.some((f) => f.check === 'linearizability' || f.check === 'lost-write'),
    'no seed caught the forgetful restart with a client-side check',
  );
});
