/**
 * The applications' offload experiment on RTA (src/experiments/app-offload.ts): the row shape,
 * reproducibility from the seed, and the relations the model implies between the host-only
 * baseline and the offloaded deployment — computed from each run, not constants.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AppOffloadResult, runAppOffload } from '../../src/experiments/app-offload.ts';
import { rtaOffloadApp } from '../../src/experiments/app-offload-rta.ts';
import { getNicProfile, hostOf } from '../../src/hw/index.ts';
import { messagingLatencyNs } from '../../src/hw/models/messaging.ts';
import { timingFor } from '../../src/platform/sim/hardware-timing.ts';
import { frameBytes } from '../../src/platform/sim/sim-node.ts';

const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 11);
const nic = getNicProfile('liquidio-cn2350');
const timing = timingFor(nic, hostOf(nic));

function run(seed: number, packetSizes: readonly number[] = [256]): AppOffloadResult {
  return runAppOffload({
    app: rtaOffloadApp(),
    timing,
    nic: nic.name,
    packetSizes,
    seed,
    // Small runs (a few thousand requests each): enough for the relations, fast in CI.
    durationNs: 1_500_000,
    warmupNs: 500_000,
    probeNs: 1_000_000,
  });
}

// One run of two sizes serves the shape and relation tests; reruns of one size check the seed.
const SIZES = [64, 512];
const result = run(SEED, SIZES);

test(`RTA rows: one per (worker, packet size, placement) with every field (seed ${SEED})`, () => {
  assert.equal(result.schemaVersion, 1);
  assert.equal(result.seed, SEED);
  assert.equal(result.nic, 'liquidio-cn2350');
  assert.deepEqual(
    result.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}`),
    ['worker/64/host-only', 'worker/64/offloaded', 'worker/512/host-only', 'worker/512/offloaded'],
  );
  for (const row of result.results) {
    assert.ok(row.throughputMops > 0, JSON.stringify(row));
    assert.ok(
      row.avgLatencyUs !== null &&
        row.p99LatencyUs !== null &&
        row.avgLatencyUs > 0 &&
        row.p99LatencyUs >= row.avgLatencyUs * 0.5,
      JSON.stringify(row),
    );
    // Both placements are offered the same load at a size, and it is below both capacities.
    const peer = result.results.find((r) => r.packetSize === row.packetSize && r.placement !== row.placement);
    assert.equal(row.offeredMops, peer?.offeredMops);
    assert.ok(row.offeredMops <= Math.min(row.capacityMops, peer?.capacityMops ?? 0) + 1e-4);
    // No capacity exceeds what the link carries at that size.
    assert.ok(row.capacityMops * 1e6 <= (1e9 / timing.frameNs(row.packetSize)) * 1.001, JSON.stringify(row));
    // Per-core throughput is throughput over host cores, or null when no host core worked.
    if (row.hostCores > 0) {
      const expected = row.throughputMops / row.hostCores;
      assert.ok(Math.abs((row.perCoreMops ?? 0) - expected) <= 1e-3 * expected + 1e-4, JSON.stringify(row));
    } else assert.equal(row.perCoreMops, null);
  }
});

test(`RTA: the same seed reproduces every number; another seed gives other draws (seed ${SEED})`, () => {
  // Each size draws from its own fork of the seed, so one size alone reproduces its rows.
  const again = run(SEED, [512]);
  assert.deepEqual(
    again.results,
    result.results.filter((r) => r.packetSize === 512),
  );
  const other = run(SEED + 1, [512]);
  assert.notDeepEqual(
    other.results.map((r) => [r.answered, r.p99LatencyUs]),
    again.results.map((r) => [r.answered, r.p99LatencyUs]),
  );
});

test(`RTA: host cores relate as the model implies (seed ${SEED})`, () => {
  for (const size of SIZES) {
    const hostOnly = result.results.find((r) => r.packetSize === size && r.placement === 'host-only');
    const offloaded = result.results.find((r) => r.packetSize === size && r.placement === 'offloaded');
    assert.ok(hostOnly && offloaded);
    // The baseline: every actor stays on the host, which at least does each request's DPDK
    // receive and answer send (Fig 6's curves), on top of the handlers.
    assert.equal(hostOnly.migrations, 0);
    assert.deepEqual(hostOnly.actorsOnHost.split(' ').sort(), [
      'rta-aggregator',
      'rta-counter-0',
      'rta-counter-1',
      'rta-filter-0',
      'rta-ranker-0',
      'rta-ranker-1',
    ]);
    const packetIoNs =
      messagingLatencyNs('dpdk-recv', Math.max(size, frameBytes(0))) + messagingLatencyNs('dpdk-send', 64);
    assert.ok(
      hostOnly.hostCores >= (hostOnly.throughputMops * 1e6 * packetIoNs) / 1e9,
      `host-only ${hostOnly.hostCores} cores at ${hostOnly.throughputMops} Mops < packet I/O alone`,
    );
    // Offloaded, the host runs only the actors the scheduler moved there — a subset of the same
    // dataflow, without the packet I/O — so it uses fewer host cores; none at all if nothing moved.
    const moved = offloaded.actorsOnHost === '' ? [] : offloaded.actorsOnHost.split(' ');
    if (moved.length === 0) assert.equal(offloaded.hostCores, 0);
    else assert.ok(moved.length <= 6);
    assert.ok(
      offloaded.hostCores < hostOnly.hostCores,
      `offloaded ${offloaded.hostCores} ≥ host-only ${hostOnly.hostCores} host cores at ${size} B`,
    );
    assert.ok(offloaded.perCoreMops === null || offloaded.perCoreMops > (hostOnly.perCoreMops ?? 0));
  }
});
