/**
 * DST of RKV's consensus actor with pre-vote on (consensus-setup.preVote), seeds 1–10 of the CI's
 * range with the same faults (drops, duplicates, jitter, partitions with leader isolation, node
 * crashes): pre-vote changes who stands and when, so the same checks must hold — C1
 * (linearizable), C2 (no lost write), R1 (replicas agree) — and replicas must have asked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST with pre-vote: seeds 1–10 pass', (t) => {
  const totals = assertActorSeedsPass(t, 1, 10, { preVote: true });
  assert.ok(totals.preVotes >= 10, `pre-vote rounds: ${totals.preVotes}`);
});
