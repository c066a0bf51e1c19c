/**
 * UNSAFE_INSTALL_PARTIAL_SNAPSHOT in the DST with forced laggards (harness.ts option `laggards`): a
 * laggard installs the first chunk of a snapshot as if it were all of it, then votes and applies on
 * top of a store that misses writes. Runs of seeds 1–10 must catch it; R1 (the former laggard's
 * store differs from what the verifier read) catches it where the broken replica never leads, the
 * client-side checks where it does (state-transfer.test.ts builds that case step by step).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNSAFE_INSTALL_PARTIAL_SNAPSHOT } from '../../../../../src/apps/rkv/actors/consensus-actor.ts';
import { failingSeedsAnyCheck } from './mutation-helpers.ts';

test('a partial snapshot install is caught in the laggard DST (seeds 1–10)', (t) => {
  const failed = failingSeedsAnyCheck(UNSAFE_INSTALL_PARTIAL_SNAPSHOT, 1, 10, { laggards: true });
  t.diagnostic(`failing seeds: ${failed.map((f) => `${f.seed} (${f.check})`).join(', ')}`);
  assert.ok(failed.length >= 1, 'no seed caught the partial install');
  assert.ok(
    failed.every((f) => f.check !== 'liveness'),
    'the partial install should be caught by a state check, not a stall',
  );
});
