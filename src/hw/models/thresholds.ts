/**
 * The hybrid scheduler's Mean_thresh and Tail_thresh (§4.2): "the mean and p99 latency of plain
 * forwarding at the MTU size at which the NIC sustains line rate".
 *
 * - A profile with a published figure (`forwardingLatency`) uses it: the CN2350's Fig 5 at 1500 B
 *   with 12 cores, 41.3 / 77.6 µs (the 6/12-core columns read as swapped, per the text; see
 *   docs/calibration.md).
 * - Any other NIC gets them derived from the CN2350's: the published latency is the unloaded echo
 *   path (echo-path.ts, ~3.1 µs) plus a testbed share that, at maximum throughput, is queueing in
 *   front of the line-rate bottleneck. We express that share as a number of frame intervals
 *   (31.4 MTU frames for the mean, 61.2 for the p99 at 1.216 µs each) and re-time it at the
 *   other NIC's frame interval at the MTU (its line rate, or its core-limited rate if it cannot
 *   reach line rate), plus that NIC's own unloaded echo path. Stingray: 5.5 + 31.4 × 0.486 ≈ 20.7
 *   µs mean, 35.2 µs p99.
 */

import { LIQUIDIO_CN2350 } from '../profiles.ts';
import type { NicProfile } from '../schema.ts';
import { echoPathLatency } from './echo-path.ts';
import { forwardingThroughput } from './forwarding.ts';

/** The two thresholds and where they come from. */
export interface Thresholds {
  readonly meanThreshNs: number;
  readonly tailThreshNs: number;
  /** The MTU-size packets they refer to. */
  readonly packetBytes: number;
  readonly provenance: 'published' | 'derived';
  readonly source: string;
}

/** Time between frames when forwarding `packetBytes` packets as fast as `cores` cores allow, ns. */
function frameIntervalNs(nic: NicProfile, packetBytes: number, cores: number): number {
  return 1e9 / forwardingThroughput(nic, { packetBytes, cores }).packetsPerSec;
}

/** The reference's testbed share in frame intervals: { mean, p99 }. */
function referenceQueuedFrames(): { readonly mean: number; readonly p99: number } {
  const reference = LIQUIDIO_CN2350.forwardingLatency!;
  const pathNs = echoPathLatency(LIQUIDIO_CN2350, reference.packetBytes).totalNs;
  const intervalNs = frameIntervalNs(LIQUIDIO_CN2350, reference.packetBytes, reference.cores);
  return { mean: (reference.meanNs - pathNs) / intervalNs, p99: (reference.p99Ns - pathNs) / intervalNs };
}

/** Mean_thresh and Tail_thresh for a NIC (see the file comment). */
export function thresholdsFor(nic: NicProfile): Thresholds {
  const published = nic.forwardingLatency;
  if (published !== null) {
    return {
      meanThreshNs: published.meanNs,
      tailThreshNs: published.p99Ns,
      packetBytes: published.packetBytes,
      provenance: 'published',
      source: published.source,
    };
  }
  const packetBytes = nic.link.mtuBytes;
  const queued = referenceQueuedFrames();
  const pathNs = echoPathLatency(nic, packetBytes).totalNs;
  const intervalNs = frameIntervalNs(nic, packetBytes, nic.cores.count);
  return {
    meanThreshNs: pathNs + queued.mean * intervalNs,
    tailThreshNs: pathNs + queued.p99 * intervalNs,
    packetBytes,
    provenance: 'derived',
    source:
      `derived: this NIC's unloaded echo path at ${packetBytes} B + the CN2350 Fig 5 testbed share ` +
      `(${queued.mean.toFixed(1)} / ${queued.p99.toFixed(1)} frame intervals) at this NIC's frame interval`,
  };
}
