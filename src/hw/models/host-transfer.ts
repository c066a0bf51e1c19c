/**
 * NIC↔host transfers (§2.2.4; the DMA and RDMA figures, 7–10): native DMA on the LiquidIO
 * (blocking and non-blocking read/write, latency and per-core throughput by size) and one-sided
 * RDMA on the BlueField (the Stingray uses the same RDMA host path and borrows these data; the
 * CN2360 borrows the CN2350's DMA data). The simulator times the NIC↔host channel, message
 * batches and migration's object transfer (phase 3) with these functions.
 *
 * Directions are seen from the NIC, which initiates every transfer: `read` brings host memory to the
 * NIC (the NIC polls the host's send ring), `write` puts NIC data into host memory.
 *
 * The published numbers, reproduced exactly at the measured sizes (log-size interpolation between):
 * - hostPathLatencyNs: blocking DMA latency by size; non-blocking DMA as published (one
 *   size-independent value) plus the blocking curve's growth with size beyond its smallest size
 *   (moving more bytes takes longer either way; assumption); RDMA latency by size.
 * - hostPathOpsPerSec: blocking DMA per-core Mops by size; non-blocking DMA's one published value,
 *   capped by what the PCIe link can carry at that size; RDMA min(published small-message value,
 *   blocking DMA's rate at that size) — the text: a third of DMA below 256 B, similar above 512 B.
 * Past the largest measured size (2 KB) latency grows linearly in bytes and throughput holds its
 * bytes/s.
 *
 * Timing a transfer (hostTransfer): a blocking transfer holds the issuing core for its whole latency;
 * a non-blocking one holds it 1 / (per-core ops/s) — what lets one core reach the published rate —
 * and the data arrive after the latency. Note that the published *blocking* per-core rates exceed
 * 1 / latency (3.74 Mops vs 1 / 1.71 µs at 4 B), so the benchmark must have kept several blocking
 * DMAs in flight per core; iPipe's channel uses non-blocking DMA (I6), which is the case to simulate.
 */

import type { HostPathSpec, NicProfile, SizeCurve } from '../schema.ts';
import { interpolateLogSize } from './interpolate.ts';
import { pcieSerializationNs } from './pcie.ts';

/** From the NIC's side: `read` = host memory → NIC, `write` = NIC → host memory. */
export type TransferDirection = 'read' | 'write';

/** Which kind of operation. */
export interface TransferKind {
  readonly direction: TransferDirection;
  /** Blocking (the core waits) or non-blocking; default non-blocking, as iPipe's channel uses. */
  readonly blocking?: boolean;
}

/** One transfer. */
export interface TransferRequest extends TransferKind {
  readonly bytes: number;
  /** Contiguous pieces gathered into this one transfer (scatter-gather); default 1. */
  readonly segments?: number;
}

/** What a transfer costs. */
export interface TransferTiming {
  /** Time the issuing NIC core is occupied, ns. */
  readonly coreNs: number;
  /** Time from issue until the data are at the destination, ns. */
  readonly latencyNs: number;
  readonly mechanism: HostPathSpec['kind'];
}

/** A per-core rate by size: interpolated inside the curve, constant bytes/s past its end. */
function opsPerSecAt(curve: SizeCurve, bytes: number): number {
  const lastSize = curve.sizesBytes[curve.sizesBytes.length - 1]!;
  if (bytes <= lastSize) return interpolateLogSize(curve, bytes);
  return (curve.values[curve.values.length - 1]! * lastSize) / bytes;
}

/** Published-style latency of one transfer (see the file comment), ns. */
export function hostPathLatencyNs(nic: NicProfile, kind: TransferKind, bytes: number): number {
  const path = nic.hostPath;
  if (path.kind === 'rdma') {
    return interpolateLogSize(
      kind.direction === 'read' ? path.rdma.readNs : path.rdma.writeNs,
      bytes,
      'linear-in-bytes',
    );
  }
  const curve = kind.direction === 'read' ? path.dma.blockingReadNs : path.dma.blockingWriteNs;
  const blockingNs = interpolateLogSize(curve, bytes, 'linear-in-bytes');
  if (kind.blocking === true) return blockingNs;
  const growthNs = blockingNs - curve.values[0]!;
  const baseNs = kind.direction === 'read' ? path.dma.nonblockingReadNs : path.dma.nonblockingWriteNs;
  return baseNs + Math.max(0, growthNs);
}

/** Published-style per-core throughput of back-to-back transfers of one size, operations/s. */
export function hostPathOpsPerSec(nic: NicProfile, kind: TransferKind, bytes: number): number {
  const path = nic.hostPath;
  const linkOpsPerSec = 1e9 / pcieSerializationNs(path.pcie, bytes);
  if (path.kind === 'rdma') {
    const read = kind.direction === 'read';
    const small = read ? path.rdma.smallReadOpsPerSec : path.rdma.smallWriteOpsPerSec;
    const ceiling = opsPerSecAt(
      read ? path.rdma.ceilingReadOpsPerSec : path.rdma.ceilingWriteOpsPerSec,
      bytes,
    );
    return Math.min(small, ceiling, linkOpsPerSec);
  }
  if (kind.blocking === true) {
    return opsPerSecAt(
      kind.direction === 'read' ? path.dma.blockingReadOpsPerSec : path.dma.blockingWriteOpsPerSec,
      bytes,
    );
  }
  const published =
    kind.direction === 'read' ? path.dma.nonblockingReadOpsPerSec : path.dma.nonblockingWriteOpsPerSec;
  return Math.min(published, linkOpsPerSec);
}

/** Core time and latency of one transfer (see the file comment). */
export function hostTransfer(nic: NicProfile, request: TransferRequest): TransferTiming {
  const segments = request.segments ?? 1;
  // Each extra gathered segment adds one TLP's overhead on the link (pcie.ts).
  const gatherNs =
    segments > 1
      ? pcieSerializationNs(nic.hostPath.pcie, request.bytes, segments) -
        pcieSerializationNs(nic.hostPath.pcie, request.bytes)
      : 0;
  const latencyNs = hostPathLatencyNs(nic, request, request.bytes) + gatherNs;
  const coreNs =
    request.blocking === true ? latencyNs : 1e9 / hostPathOpsPerSec(nic, request, request.bytes) + gatherNs;
  return { coreNs, latencyNs, mechanism: nic.hostPath.kind };
}

/** A batch of equal messages sent as one transfer. */
export interface BatchRequest extends TransferKind {
  readonly messageBytes: number;
  readonly messages: number;
}

/** A batch's timing, and its core time per message. */
export interface BatchTiming extends TransferTiming {
  readonly perMessageCoreNs: number;
}

/**
 * `messages` messages of `messageBytes` each (checksums included) moved by one DMA from a
 * contiguous ring region (§4.4: batched, non-blocking DMA), instead of one DMA each.
 */
export function batchedTransfer(nic: NicProfile, batch: BatchRequest): BatchTiming {
  const messages = Math.max(1, Math.floor(batch.messages));
  const timing = hostTransfer(nic, { ...batch, bytes: batch.messageBytes * messages });
  return { ...timing, perMessageCoreNs: timing.coreNs / messages };
}

/** A bulk copy (migration's phase 3) split into chunks. */
export interface BulkRequest {
  readonly direction: TransferDirection;
  readonly bytes: number;
  /** Chunk size; default 2 KB, the largest size measured. */
  readonly chunkBytes?: number;
}

/** What a bulk copy costs. */
export interface BulkTiming {
  readonly chunks: number;
  /** Core time to issue every chunk, ns. */
  readonly coreNs: number;
  /** From the first issue until the last byte lands, ns. */
  readonly elapsedNs: number;
}

/**
 * One core copying `bytes` in non-blocking chunks: it issues back to back (each chunk costs it
 * 1 / ops/s), the link carries at most its bandwidth, and the last chunk lands one latency after
 * the later of the two.
 */
export function bulkTransfer(nic: NicProfile, request: BulkRequest): BulkTiming {
  const chunkBytes = request.chunkBytes ?? 2048;
  if (request.bytes <= 0) return { chunks: 0, coreNs: 0, elapsedNs: 0 };
  const chunks = Math.ceil(request.bytes / chunkBytes);
  const lastChunkBytes = request.bytes - (chunks - 1) * chunkBytes;
  const kind: TransferKind = { direction: request.direction, blocking: false };
  const fullChunkCoreNs = 1e9 / hostPathOpsPerSec(nic, kind, chunkBytes);
  const lastChunkCoreNs = 1e9 / hostPathOpsPerSec(nic, kind, lastChunkBytes);
  const coreNs = (chunks - 1) * fullChunkCoreNs + lastChunkCoreNs;
  const linkNs =
    (chunks - 1) * pcieSerializationNs(nic.hostPath.pcie, chunkBytes) +
    pcieSerializationNs(nic.hostPath.pcie, lastChunkBytes);
  const elapsedNs = Math.max(coreNs, linkNs) + hostPathLatencyNs(nic, kind, lastChunkBytes);
  return { chunks, coreNs, elapsedNs };
}
