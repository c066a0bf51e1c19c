/**
 * The applications' offload experiment on DT (src/experiments/app-offload-dt.ts): coordinator
 * and participant rows from a three-node cluster, reproducibility from the seed, and the host-core
 * relations the model implies between the host-only baseline and the offloaded deployment.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AppOffloadRow, runAppOffload } from '../../src/experiments/app-offload.ts';
import { dtOffloadApp, dtValueBytes } from '../../src/experiments/app-offload-dt.ts';
import { getNicProfile, hostOf } from '../../src/hw/index.ts';
import { messagingLatencyNs } from '../../src/hw/models/messaging.ts';
import { timingFor } from '../../src/platform/sim/hardware-timing.ts';

const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 5);
const nic = getNicProfile('liquidio-cn2350');
const timing = timingFor(nic, hostOf(nic));
const SIZE = 256;

function run(seed: number, placements?: readonly ('host-only' | 'offloaded')[]) {
  return runAppOffload({
    app: dtOffloadApp({ keys: 2000 }),
    timing,
    nic: nic.name,
    packetSizes: [SIZE],
    ...(placements === undefined ? {} : { placements }),
    seed,
    durationNs: 1_500_000,
    warmupNs: 500_000,
    probeNs: 1_000_000,
  });
}

const result = run(SEED);
const row = (role: string, placement: string): AppOffloadRow => {
  const found = result.results.find((r) => r.role === role && r.placement === placement);
  assert.ok(found, `no ${role}/${placement} row`);
  return found;
};

test(`DT rows: coordinator and participant per placement (seed ${SEED})`, () => {
  assert.deepEqual(
    result.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}/${r.nodes}`),
    [
      'coordinator/256/host-only/1',
      'participant/256/host-only/2',
      'coordinator/256/offloaded/1',
      'participant/256/offloaded/2',
    ],
  );
  for (const r of result.results) {
    assert.ok(r.answered > 0 && r.throughputMops > 0, JSON.stringify(r));
    assert.ok(
      r.p99LatencyUs !== null && r.avgLatencyUs !== null && r.p99LatencyUs >= r.avgLatencyUs * 0.5,
      JSON.stringify(r),
    );
  }
  // Values grow with the packet: a read answer carrying one fills the frame.
  assert.ok(dtValueBytes(1024) > dtValueBytes(512) && dtValueBytes(512) > dtValueBytes(256));
});

test(`DT host cores: the baseline does every packet's I/O on the host; offloaded, only the logger is there (seed ${SEED})`, () => {
  const packetIoNs = messagingLatencyNs('dpdk-recv', SIZE) + messagingLatencyNs('dpdk-send', 64);
  const coordinator = row('coordinator', 'host-only');
  const participant = row('participant', 'host-only');
  assert.equal(coordinator.actorsOnHost.split(' ').sort().join(' '), 'dt-coordinator dt-logger');
  assert.equal(participant.actorsOnHost.split(' ').sort().join(' '), 'dt-participant-0 dt-participant-1');
  // Every committed transaction's commit request reached the coordinator's host core as a packet,
  // and on average one of its two reads reached each participant's.
  const txnPerSec = coordinator.throughputMops * 1e6;
  assert.ok(coordinator.hostCores >= (txnPerSec * packetIoNs) / 1e9, JSON.stringify(coordinator));
  assert.ok(participant.hostCores >= (txnPerSec * packetIoNs) / 1e9, JSON.stringify(participant));
  // Offloaded: whatever stayed on the NIC costs the host nothing; the host-pinned logger is the
  // same work in both deployments, so the coordinator's node uses fewer host cores.
  const offCoordinator = row('coordinator', 'offloaded');
  const offParticipant = row('participant', 'offloaded');
  assert.ok(offCoordinator.actorsOnHost.split(' ').includes('dt-logger'));
  if (offParticipant.actorsOnHost === '') assert.equal(offParticipant.hostCores, 0);
  if (!offCoordinator.actorsOnHost.includes('dt-coordinator')) {
    assert.ok(
      offCoordinator.hostCores < coordinator.hostCores,
      JSON.stringify([offCoordinator, coordinator]),
    );
  }
  assert.ok(offParticipant.hostCores < participant.hostCores, JSON.stringify([offParticipant, participant]));
});

test(`DT: the same seed reproduces the offloaded rows (seed ${SEED})`, () => {
  const again = run(SEED, ['offloaded']);
  // The offered load depends on both capacities, so compare what one placement decides alone:
  // its capacity (the probe) is a function of the seed only.
  assert.deepEqual(
    again.results.map((r) => r.capacityMops),
    result.results.filter((r) => r.placement === 'offloaded').map((r) => r.capacityMops),
  );
});
