/**
 * Builds the simulated node's timing from the calibrated hardware models (src/hw): the one place
 * where profile data becomes step durations. Assumptions that are not in the published data are
 * marked and listed in docs/calibration.md ("Simulator assumptions").
 */

import {
  dispatcherCores,
  dispatcherPerPacketNs,
  echoPathLatency,
  forwardingComputeNs,
  handlerTimeNs,
  headroomNs,
  hostPathLatencyNs,
  hostPathOpsPerSec,
  hostTransfer,
  ioIntervalNs,
  serializationNs,
  switchTraversalNs,
  thresholdsFor,
} from '../../hw/index.ts';
import { pcieSerializationNs } from '../../hw/models/pcie.ts';
import type { HostProfile, NicProfile } from '../../hw/schema.ts';
import type { SimTiming } from './timing.ts';

export interface HardwareTimingOptions {
  /** NIC cores the runtime uses for actors (default: all but the off-path dispatcher). */
  readonly nicCores?: number;
  readonly hostCores?: number;
  /**
   * Off-path NICs: put iPipe's software dispatcher in front of the cores (default true). False
   * models raw forwarding as the paper measured it (hardware RSS straight to the cores).
   */
  readonly dispatcher?: boolean;
}

/** Assumption: pushing a request into a mailbox touches the mailbox and the actor record (2 L2 hits). */
const MAILBOX_PUSH_L2_ACCESSES = 2;
/** Assumption: a host core copies a message into the host→NIC ring at this rate (memcpy, bytes/ns). */
const HOST_RING_COPY_BYTES_PER_NS = 10;
/** Assumption: a host enqueue costs two last-level-cache accesses (ring slot + tail) besides the copy. */
const HOST_ENQUEUE_LLC_ACCESSES = 2;

interface SizeFigures {
  readonly computeNs: number;
  readonly ioIntervalNs: number;
  readonly frameNs: number;
  readonly rxPipelineNs: number;
  readonly txPipelineNs: number;
  readonly toHostSendNs: number;
  readonly toHostLatencyNs: number;
  readonly toNicLatencyNs: number;
  readonly channelSerialNs: number;
  readonly dispatcherNs: number;
}

/** Packet sizes (bytes) whose per-size figures sit in a directly indexed table: up to jumbo frames. */
const DIRECT_SIZE_LIMIT = 16_384;

/** Migration moves state in 2 KB DMA chunks (the largest size the per-core rates were measured at). */
const MIGRATION_CHUNK_BYTES = 2048;

/**
 * Phase 3 of migration: one core copies the actor's snapshot across PCIe in 2 KB chunks at the
 * per-core rate *measured* for 2 KB transfers (Fig 8: blocking DMA, 1.30 M writes/s ≈ 2.66 GB/s to
 * the host, 0.74 M reads/s ≈ 1.5 GB/s from it; RDMA NICs their Fig 10 rates), then the last chunk's
 * latency. The non-blocking rate was only published for small messages, so it is not extrapolated
 * to bulk copies.
 */
function migrationTransferNs(nic: NicProfile, bytes: number, direction: 'to-host' | 'to-nic'): number {
  if (bytes <= 0) return 0;
  const kind = {
    direction: direction === 'to-host' ? ('write' as const) : ('read' as const),
    blocking: true,
  };
  const chunks = Math.ceil(bytes / MIGRATION_CHUNK_BYTES);
  const lastChunkBytes = bytes - (chunks - 1) * MIGRATION_CHUNK_BYTES;
  const perChunkNs = 1e9 / hostPathOpsPerSec(nic, kind, MIGRATION_CHUNK_BYTES);
  return (chunks - 1) * perChunkNs + hostPathLatencyNs(nic, kind, lastChunkBytes);
}

export function timingFor(
  nic: NicProfile,
  host: HostProfile,
  options: HardwareTimingOptions = {},
): SimTiming {
  const reserved = options.dispatcher === false ? 0 : dispatcherCores(nic);
  const nicCores = options.nicCores ?? nic.cores.count - reserved;
  const hostCores = options.hostCores ?? host.cores.count;
  const thresholds = thresholdsFor(nic);
  const l2Ns = nic.memory.latencyNs.l2;
  const hostLlcNs = host.memory.latencyNs.l3 ?? host.memory.latencyNs.l2;
  // Cores forwarding contend for the packet engines (the forwarding model's contention term):
  // the cores in use, plus the dispatcher's.
  const activeCores = nicCores + reserved;
  // The models interpolate published curves; a run uses a handful of sizes, so each size's
  // figures are computed once (this sits on the simulator's per-packet path). Whole sizes below
  // DIRECT_SIZE_LIMIT are found by indexing an array: a request and its answer differ in size, so
  // a one-entry "last size" cache missed on every other call and fell through to a Map lookup.
  const bySize = new Array<SizeFigures | undefined>(DIRECT_SIZE_LIMIT).fill(undefined);
  const perSize = new Map<number, SizeFigures>();
  const figuresOf = (packetBytes: number): SizeFigures => {
    const direct = (packetBytes | 0) === packetBytes && packetBytes >= 0 && packetBytes < DIRECT_SIZE_LIMIT;
    let figures = direct ? bySize[packetBytes] : perSize.get(packetBytes);
    if (!figures) {
      const echo = echoPathLatency(nic, packetBytes);
      figures = {
        computeNs: forwardingComputeNs(nic, packetBytes),
        ioIntervalNs: ioIntervalNs(nic, packetBytes, activeCores),
        frameNs: serializationNs(nic.link, packetBytes),
        rxPipelineNs: echo.rxPipelineNs,
        txPipelineNs: echo.txPipelineNs,
        toHostSendNs: hostTransfer(nic, { direction: 'write', bytes: packetBytes }).coreNs,
        toHostLatencyNs: hostPathLatencyNs(nic, { direction: 'write', blocking: false }, packetBytes),
        toNicLatencyNs: hostPathLatencyNs(nic, { direction: 'read', blocking: false }, packetBytes),
        channelSerialNs: pcieSerializationNs(nic.hostPath.pcie, packetBytes),
        dispatcherNs: reserved === 0 ? 0 : dispatcherPerPacketNs(nic, packetBytes),
      };
      if (direct) bySize[packetBytes] = figures;
      else perSize.set(packetBytes, figures);
    }
    return figures;
  };
  return {
    label: `${nic.name} + ${host.name}`,
    nicCores,
    hostCores,
    linkGbps: nic.link.linkGbps,
    placement: nic.placement,
    // perPacketCoreNs, from cached parts: max(c(S) + d, w(S, N)).
    nicPacketNs: (packetBytes, addedNs) => {
      const f = figuresOf(packetBytes);
      return Math.max(f.computeNs + addedNs, f.ioIntervalNs);
    },
    nicHandlerNs: (work) => handlerTimeNs(nic, work),
    hostHandlerNs: (work) => handlerTimeNs(host, work),
    nicDispatchNs: MAILBOX_PUSH_L2_ACCESSES * l2Ns,
    nicToHostSendNs: (bytes) => figuresOf(bytes).toHostSendNs,
    hostSendNs: (bytes) => HOST_ENQUEUE_LLC_ACCESSES * hostLlcNs + bytes / HOST_RING_COPY_BYTES_PER_NS,
    channelNs: (bytes, direction) =>
      hostPathLatencyNs(
        nic,
        { direction: direction === 'to-host' ? 'write' : 'read', blocking: false },
        bytes,
      ),
    channelSerialNs: (bytes) => pcieSerializationNs(nic.hostPath.pcie, bytes),
    migrationTransferNs: (bytes, direction) => migrationTransferNs(nic, bytes, direction),
    dispatcherCores: reserved,
    dispatcherNs: (packetBytes) => figuresOf(packetBytes).dispatcherNs,
    frameNs: (packetBytes) => figuresOf(packetBytes).frameNs,
    rxPipelineNs: (packetBytes) => figuresOf(packetBytes).rxPipelineNs,
    txPipelineNs: (packetBytes) => figuresOf(packetBytes).txPipelineNs,
    // Client → ToR switch → NIC: the switch's port-to-port time (its egress serialisation is the
    // frame time the node adds itself).
    wireLatencyNs: Math.round(switchTraversalNs(nic.link, 64) - serializationNs(nic.link, 64)),
    headroomNs: (packetBytes) => headroomNs(nic, packetBytes, { cores: nicCores }),
    meanThreshNs: thresholds.meanThreshNs,
    tailThreshNs: thresholds.tailThreshNs,
  };
}
