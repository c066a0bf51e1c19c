/**
 * FaSST's read-2-write-1 transactions (Zipf 0.99 keys) from closed-loop clients on a SimNode with
 * the DT actors: what committed is serializable, and commit latency is in the range the NIC
 * model gives (tens of µs: reads, lock, validate, a host fsync, commit).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSerializable, describeViolation } from '../../../src/apps/dt/serializability.ts';
import { deployDtOnSimNode } from '../../../src/apps/dt/sim-deployment.ts';
import { fasstWorkload } from '../../../src/apps/dt/workload.ts';
import { Random } from '../../../src/random.ts';
import { makeNode, recordCommits } from './sim-node-helpers.ts';

test('FaSST transactions on a SimNode (Zipf keys) commit serializably with latencies in the NIC range', () => {
  const seed = 7;
  const { kernel, node } = makeNode();
  const workload = fasstWorkload({
    keys: 1000,
    distribution: { kind: 'zipf', exponent: 0.99 },
    valueBytes: 16,
  });
  const { value: dt, committed } = recordCommits(() => {
    const deployment = deployDtOnSimNode(node, { shards: 4, initialData: workload.initialData() });
    deployment.runClosedLoop({ clients: 8, workload, random: new Random(seed), untilNs: 3_000_000 });
    kernel.run({ untilNs: 15_000_000 });
    return deployment;
  });
  const done = dt.results.filter((r) => r.outcome.outcome === 'committed');
  assert.ok(done.length > 100, `only ${done.length} commits`);
  const reads = new Map(dt.results.map((r) => [`${r.txn.client}:${r.txn.seq}`, r.reads]));
  const verdict = checkSerializable(
    [...committed].map(([key, record]) => ({
      id: record.id,
      reads: reads.get(key) ?? [],
      writes: record.writes.map(({ key: written, version }) => ({ key: written, version })),
    })),
    { contiguousVersions: true },
  );
  assert.ok(verdict.ok, verdict.ok ? '' : verdict.violations.map(describeViolation).join('\n'));
  const latencies = done.map((r) => r.latencyNs).sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)]!;
  console.log(`FaSST on SimNode: ${done.length} commits, p50 ${(p50 / 1000).toFixed(1)} µs`);
  // Reads, lock, validate, a host fsync and commit: tens of µs, far below a millisecond retry.
  assert.ok(p50 > 5_000 && p50 < 500_000, `p50 ${p50} ns`);
});
