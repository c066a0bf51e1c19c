/**
 * UNSAFE_NO_LEASE: no stickiness, and the leader serves reads without a lease, so a deposed
 * leader that has not heard of its successor keeps answering reads from its stale state. The
 * DST (whose read-only clients stay with a replica while it answers) must catch it within the
 * CI's first seeds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNSAFE_NO_LEASE } from '../../../../../src/apps/rkv/actors/consensus-actor.ts';
import { failingSeeds } from './mutation-helpers.ts';

test('reads without a lease (and no stickiness) are caught (seeds 1–10)', (t) => {
  const failed = failingSeeds(UNSAFE_NO_LEASE, 1, 10);
  t.diagnostic(`failing seeds: ${failed.join(', ')}`);
  assert.ok(failed.length >= 1, 'no seed caught the stale reads');
});
