/**
 * DST of RKV's consensus actor on a SimCluster, seeds 81–90 of the CI's 200 (harness.ts: drops,
 * duplicates, jitter, partitions with leader isolation; linearizability, no lost write, replicas
 * agree). A failing seed prints its reproduce command.
 */
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST: seeds 81–90 pass', (t) => {
  assertActorSeedsPass(t, 81, 10);
});
