/**
 * DST of RKV's consensus actor on a SimCluster, seeds 31–40 of the CI's 200 (harness.ts: drops,
 * duplicates, jitter, partitions with leader isolation; linearizability, no lost write, replicas
 * agree). A failing seed prints its reproduce command.
 */
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST: seeds 31–40 pass', (t) => {
  assertActorSeedsPass(t, 31, 10);
});
