/**
 * The NIC-core forwarding model (§2.2.2; Fig 2/3: echo throughput vs cores; Fig 4: throughput vs
 * added per-packet work with all cores; the text's cores-for-line-rate and headroom).
 *
 * Why not simply add the handler's work to a per-packet forwarding cost: on the CN2350 at 256 B,
 * 10 of 12 cores reach line rate (4.53 Mpps), so a core's whole per-packet time is at most
 * 12/4.53 Mpps = 2.65 µs, and one core does forward at only ~0.38 Mpps (~2.6 µs per packet). An
 * additive model then leaves ~0 µs of headroom with all cores busy — yet Fig 4 and the text show
 * 2.5 µs. And for large added work d, Fig 4 falls as N/d (Stingray 256 B at 2 µs: 8.5 Gbps wire =
 * 3.85 Mpps = 8 cores / 2.08 µs): the work costs about d, not d + 2.6 µs.
 *
 * What fits both: a core's time per packet is
 *
 *     t(S, N, d) = max( c(S) + d ,  w(S, N) )
 *
 *   c(S) = c0 + c1·S        the core's own forwarding compute (ns; ~0.1–0.2 µs on the CN2350)
 *   w(S, N)                  the core's I/O interval: how soon the packet engines (LiquidIO) or
 *                            the poll-mode receive/transmit path (ARM NICs) can hand the core its
 *                            next packet and take back the last one. The core waits on it; added
 *                            processing overlaps with that wait, up to w − c.
 *   w(S, N) = w1(S) · (1 + π·[N = 1]) · (1 + σ·(N − 1) + κ·N·(N − 1))
 *                            w1 tabulated at the measured sizes (log-size interpolation); σ and κ
 *                            are the Universal Scalability Law's contention and coherency terms
 *                            (shared packet engines / memory), π the extra time of a lone core.
 *
 *   throughput(S, N, d) = min( line(S),  N / t(S, N, d) )     packets/s
 *   cores for line rate = min N with N / w(S, N) ≥ line(S)
 *   headroom(S, N)      = max( N / line(S), w(S, N) ) − c(S)
 *
 * With N / line(S) ≥ w, headroom = N / line − c: CN2350 256 B 12/4.53 Mpps − 0.15 µs ≈ 2.5 µs,
 * 1024 B 10.0 − 0.2 ≈ 9.8 µs; Stingray 0.71 − 0.02 ≈ 0.7 µs and 2.67 − 0.06 ≈ 2.6 µs, as published.
 * The constants are fitted (src/hw/calibrate/fit-forwarding.ts) and live in each profile.
 *
 * For the discrete-event simulator: a forwarding core starts its next packet no earlier than
 * w(S, N) after it started the previous one, and is busy c(S) + d with it. N is the number of
 * cores taking packets from the traffic manager (or, off-path, from the software queue).
 */

import type { NicProfile } from '../schema.ts';
import { interpolateLogSize } from './interpolate.ts';
import { goodputGbps, linePacketsPerSec, wireGbps } from './link.ts';

/** The parts of a NIC profile the forwarding model reads. */
export type ForwardingNic = Pick<NicProfile, 'link' | 'cores' | 'forwarding'>;

/** Relative slack when comparing a modelled rate with line rate, so float noise cannot flip a result. */
const LINE_RATE_TOLERANCE = 1e-9;

function checkCores(cores: number): void {
  // More cores than the card has is allowed (what-if experiments), though the contention terms
  // were fitted only up to the card's own count.
  if (!Number.isInteger(cores) || cores < 1) {
    throw new RangeError(`cores must be an integer ≥ 1, got ${cores}`);
  }
}

/** c(S): the core's own per-packet forwarding compute, ns. */
export function forwardingComputeNs(nic: ForwardingNic, packetBytes: number): number {
  return nic.forwarding.computeBaseNs + nic.forwarding.computePerByteNs * packetBytes;
}

/** The factor by which N concurrently forwarding cores stretch each core's I/O interval. */
export function contentionFactor(nic: ForwardingNic, cores: number): number {
  checkCores(cores);
  const { singleCoreExtra, contentionLinear, contentionQuadratic } = nic.forwarding;
  const lone = cores === 1 ? 1 + singleCoreExtra : 1;
  return lone * (1 + contentionLinear * (cores - 1) + contentionQuadratic * cores * (cores - 1));
}

/** w(S, N): the per-core I/O interval with `cores` cores forwarding, ns (default: all cores). */
export function ioIntervalNs(nic: ForwardingNic, packetBytes: number, cores = nic.cores.count): number {
  const base = interpolateLogSize(nic.forwarding.ioIntervalNs, packetBytes, 'linear-in-bytes');
  return base * contentionFactor(nic, cores);
}

/** t(S, N, d): the time a core spends per packet with `addedNs` of handler work, ns. */
export function perPacketCoreNs(
  nic: ForwardingNic,
  packetBytes: number,
  addedNs = 0,
  cores = nic.cores.count,
): number {
  return Math.max(forwardingComputeNs(nic, packetBytes) + addedNs, ioIntervalNs(nic, packetBytes, cores));
}

/** Forwarding throughput in the paper's units. */
export interface ForwardingThroughput {
  readonly packetsPerSec: number;
  /** L2 goodput (Fig 2/3). */
  readonly goodputGbps: number;
  /** Wire rate with the 20 B per-frame overhead (Fig 4). */
  readonly wireGbps: number;
  /** True when the link, not the cores, is the bottleneck. */
  readonly lineRateLimited: boolean;
}

/** What the forwarding question is about. */
export interface ForwardingQuery {
  readonly packetBytes: number;
  /** Cores forwarding; default all of the card's cores. */
  readonly cores?: number;
  /** Handler work added to every packet, ns; default 0 (plain echo). */
  readonly addedNs?: number;
}

/** Steady-state throughput of `cores` cores forwarding `packetBytes` packets (closed form). */
export function forwardingThroughput(nic: ForwardingNic, query: ForwardingQuery): ForwardingThroughput {
  const cores = query.cores ?? nic.cores.count;
  const line = linePacketsPerSec(nic.link, query.packetBytes);
  const coresPacketsPerSec =
    (cores * 1e9) / perPacketCoreNs(nic, query.packetBytes, query.addedNs ?? 0, cores);
  const lineRateLimited = coresPacketsPerSec >= line * (1 - LINE_RATE_TOLERANCE);
  const packetsPerSec = Math.min(line, coresPacketsPerSec);
  return {
    packetsPerSec,
    goodputGbps: goodputGbps(packetsPerSec, query.packetBytes),
    wireGbps: wireGbps(nic.link, packetsPerSec, query.packetBytes),
    lineRateLimited,
  };
}

/**
 * The fewest cores that forward `packetBytes` packets at line rate with `addedNs` of work each,
 * or null when even all of the card's cores cannot (64 B and 128 B on both measured NICs).
 */
export function coresForLineRate(nic: ForwardingNic, packetBytes: number, addedNs = 0): number | null {
  for (let cores = 1; cores <= nic.cores.count; cores++) {
    if (forwardingThroughput(nic, { packetBytes, cores, addedNs }).lineRateLimited) return cores;
  }
  return null;
}

/** Options of headroomNs. */
export interface HeadroomOptions {
  /** Cores sharing the work; default all of the card's cores (the paper's Fig 4 setting). */
  readonly cores?: number;
}

/**
 * The headroom, i.e. the DRR quantum: the largest per-request processing time that does not lower
 * forwarding throughput for `requestBytes` requests with all cores — max(N / line, w) − c, ns.
 * Where line rate is reachable this is the paper's "largest latency that still sustains line
 * rate"; where it is not (64/128 B), it is the processing that hides under the I/O interval.
 * Positive for every built-in profile (w > c), so it can serve as a quantum directly; 0 only for a
 * profile whose compute exceeds its whole per-packet budget.
 */
export function headroomNs(nic: ForwardingNic, requestBytes: number, options: HeadroomOptions = {}): number {
  const cores = options.cores ?? nic.cores.count;
  const lineBudgetNs = (cores * 1e9) / linePacketsPerSec(nic.link, requestBytes);
  const budgetNs = Math.max(lineBudgetNs, ioIntervalNs(nic, requestBytes, cores));
  return Math.max(0, budgetNs - forwardingComputeNs(nic, requestBytes));
}
