/** A small hand-made SimTiming for node tests: round numbers, so expectations can be computed. */
import type { SimTiming } from '../../../src/platform/sim/timing.ts';

export function testTiming(overrides: Partial<SimTiming> = {}): SimTiming {
  return {
    label: 'test NIC',
    nicCores: 4,
    hostCores: 4,
    linkGbps: 10,
    placement: 'on-path',
    nicPacketNs: (_bytes, addedNs) => Math.max(100 + addedNs, 1_000),
    nicHandlerNs: (work) => work.fixedNs ?? work.instructions,
    hostHandlerNs: (work) => (work.fixedNs ?? work.instructions) / 4,
    nicDispatchNs: 50,
    nicToHostSendNs: () => 300,
    hostSendNs: () => 200,
    channelNs: () => 1_000,
    channelSerialNs: (bytes) => bytes / 7.2,
    migrationTransferNs: (bytes) => bytes / 2.1,
    dispatcherCores: 0,
    dispatcherNs: () => 0,
    frameNs: (bytes) => ((bytes + 20) * 8) / 10,
    rxPipelineNs: () => 0,
    txPipelineNs: () => 0,
    wireLatencyNs: 1_000,
    headroomNs: () => 2_000,
    meanThreshNs: 40_000,
    tailThreshNs: 80_000,
    ...overrides,
  };
}
