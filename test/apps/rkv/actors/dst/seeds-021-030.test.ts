/**
 * DST of RKV's consensus actor on a SimCluster, seeds 21–30 of the CI's 200 (harness.ts: drops,
 * duplicates, jitter, partitions with leader isolation; linearizability, no lost write, replicas
 * agree). A failing seed prints its reproduce command.
 */
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST: seeds 21–30 pass', (t) => {
  assertActorSeedsPass(t, 21, 10);
});
