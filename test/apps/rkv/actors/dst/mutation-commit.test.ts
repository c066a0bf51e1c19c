/**
 * UNSAFE_CHOSEN_WITHOUT_MAJORITY: the leader counts a slot chosen as soon as it proposes it, so
 * an isolated leader acknowledges writes the next leader never learns. The DST must catch it
 * (a lost write or a non-linearizable history) within the CI's first seeds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNSAFE_CHOSEN_WITHOUT_MAJORITY } from '../../../../../src/apps/rkv/actors/consensus-actor.ts';
import { failingSeeds } from './mutation-helpers.ts';

test('a leader that counts a slot chosen without a majority is caught (seeds 1–6)', (t) => {
  const failed = failingSeeds(UNSAFE_CHOSEN_WITHOUT_MAJORITY, 1, 6);
  t.diagnostic(`failing seeds: ${failed.join(', ')}`);
  assert.ok(failed.length >= 1, 'no seed caught the unsafe commit rule');
});
