/**
 * DST of RKV's consensus actor on a SimCluster, seeds 41–50 of the CI's 200 (harness.ts: drops,
 * duplicates, jitter, partitions with leader isolation; linearizability, no lost write, replicas
 * agree). A failing seed prints its reproduce command.
 */
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST: seeds 41–50 pass', (t) => {
  assertActorSeedsPass(t, 41, 10);
});
