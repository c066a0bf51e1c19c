/**
 * Deterministic simulation of RKV's Multi-Paxos, seeds 1..100 (with
 * dst-seeds-101-200.test.ts, the CI's 200 seeds): 3 or 5 replicas and KV clients on the
 * simulated platform's EventKernel under drops, duplicates, reordering, partitions and crashes
 * (also inside a storage sync). Each seed must keep every replica invariant, converge after
 * healing, give a linearizable client history and lose no acknowledged write
 * (harness/sim-cluster.ts). A failing seed is printed with the command that replays it.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertSeedRangePasses } from './harness/seed-range.ts';
import { runDst } from './harness/sim-cluster.ts';

test('Multi-Paxos DST: seeds 1..100 keep safety, linearizability and acknowledged writes', (t) => {
  assertSeedRangePasses(t, 1, 100);
});

test('a seed reproduces its run exactly (same trace, same stats), and another seed does not', () => {
  const traced = (seed: number): { lines: string[]; stats: string } => {
    const lines: string[] = [];
    const result = runDst({ seed, trace: (line) => lines.push(line) });
    return { lines, stats: JSON.stringify(result.stats) };
  };
  const first = traced(7);
  const again = traced(7);
  assert.ok(first.lines.length > 10, 'the trace records faults and leader changes');
  assert.deepEqual(again.lines, first.lines);
  assert.equal(again.stats, first.stats);
  assert.notEqual(traced(8).stats, first.stats);
});
