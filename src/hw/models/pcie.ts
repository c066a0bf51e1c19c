/**
 * PCIe between NIC and host (§2.2.4: Gen3 x8, 7.87 GB/s theoretical, 20–28 B of TLP overhead per
 * PCIe packet). A transfer of B payload bytes travels as ceil(B / MPS) transaction-layer packets,
 * each carrying the TLP overhead, so small transfers waste much of the link: a 64 B write uses
 * 64 / (64 + 24) = 73% of it, a 2 KB write 2048 / (2048 + 8·24) = 91%. This is why the paper
 * aggregates messages into large DMAs (I6), and what batching buys here.
 *
 * Scatter-gather (a header and a payload in separate buffers, one DMA) starts a new TLP at each
 * segment boundary, so each extra segment costs one more TLP overhead (an assumption: the data have
 * no scatter-gather measurement).
 */

import type { PcieSpec } from '../schema.ts';

/** Transaction-layer packets that carry `payloadBytes` in `segments` contiguous pieces. */
export function pcieTlpCount(pcie: PcieSpec, payloadBytes: number, segments = 1): number {
  const fullPackets = Math.max(1, Math.ceil(payloadBytes / pcie.maxPayloadBytes));
  return fullPackets + Math.max(0, segments - 1);
}

/** Bytes on the link for `payloadBytes` of payload, TLP overhead included. */
export function pcieWireBytes(pcie: PcieSpec, payloadBytes: number, segments = 1): number {
  return payloadBytes + pcieTlpCount(pcie, payloadBytes, segments) * pcie.tlpOverheadBytes;
}

/** Time the link is busy moving the transfer at its theoretical bandwidth, ns (GB/s = bytes/ns). */
export function pcieSerializationNs(pcie: PcieSpec, payloadBytes: number, segments = 1): number {
  return pcieWireBytes(pcie, payloadBytes, segments) / pcie.gbytesPerSec;
}

/** Fraction of the link's bytes that are payload. */
export function pcieEfficiency(pcie: PcieSpec, payloadBytes: number, segments = 1): number {
  return payloadBytes / pcieWireBytes(pcie, payloadBytes, segments);
}
