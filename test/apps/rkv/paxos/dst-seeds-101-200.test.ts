/**
 * Deterministic simulation of RKV's Multi-Paxos, seeds 101..200 (with
 * dst-seeds-001-100.test.ts, the CI's 200 seeds): 3 or 5 replicas and KV clients on the
 * simulated platform's EventKernel under drops, duplicates, reordering, partitions and crashes
 * (also inside a storage sync). Each seed must keep every replica invariant, converge after
 * healing, give a linearizable client history and lose no acknowledged write
 * (harness/sim-cluster.ts). A failing seed is printed with the command that replays it.
 */

import { test } from 'node:test';
import { assertSeedRangePasses } from './harness/seed-range.ts';

test('Multi-Paxos DST: seeds 101..200 keep safety, linearizability and acknowledged writes', (t) => {
  assertSeedRangePasses(t, 101, 100);
});
