/**
 * Ethernet links (§2.2.2, Fig 2–4): how many frames per second a link carries and how long a frame
 * takes on the wire. Every frame costs 20 bytes beyond its own length (7 B preamble, 1 B start
 * delimiter, 12 B inter-frame gap), and frames shorter than 64 bytes (FCS included) are padded to
 * 64. Line rate in packets/s is therefore linkBps / ((max(S, 64) + 20) · 8).
 *
 * Two "Gbps" appear in the paper: Fig 2/3 plot L2 goodput (packets/s × S × 8 — the 1500 B plateau
 * reads 9.87 = 1500/1520 × 10), Fig 4 plots wire (L1) rate (its plateau reads 10.2 and 25.2 for
 * both 256 B and 1024 B, which only the rate with the 20 B overhead can reach; docs/calibration.md).
 */

/** Preamble + start-of-frame delimiter + inter-frame gap, bytes. */
export const FRAME_OVERHEAD_BYTES = 20;
/** Ethernet minimum frame (FCS included), bytes. */
export const MIN_FRAME_BYTES = 64;
/** Standard Ethernet MTU frame used by the paper's largest size, bytes. */
export const MTU_FRAME_BYTES = 1500;

/** The parts of a link the functions below need (a NicProfile's `link` satisfies it). */
export interface LinkLike {
  readonly linkGbps: number;
  readonly frameOverheadBytes?: number;
  readonly minFrameBytes?: number;
}

/** Bytes a frame of `packetBytes` occupies on the wire, overhead and padding included. */
export function wireBytes(link: LinkLike, packetBytes: number): number {
  const minimum = link.minFrameBytes ?? MIN_FRAME_BYTES;
  return Math.max(packetBytes, minimum) + (link.frameOverheadBytes ?? FRAME_OVERHEAD_BYTES);
}

/** Frames per second at line rate. */
export function linePacketsPerSec(link: LinkLike, packetBytes: number): number {
  return (link.linkGbps * 1e9) / (wireBytes(link, packetBytes) * 8);
}

/** Time one frame occupies the wire (serialization), ns. */
export function serializationNs(link: LinkLike, packetBytes: number): number {
  return (wireBytes(link, packetBytes) * 8) / link.linkGbps;
}

/** L2 goodput (the unit of Fig 2/3) of a packet rate, Gbps. */
export function goodputGbps(packetsPerSec: number, packetBytes: number): number {
  return (packetsPerSec * packetBytes * 8) / 1e9;
}

/** Wire (L1) rate (the unit of Fig 4) of a packet rate, Gbps. */
export function wireGbps(link: LinkLike, packetsPerSec: number, packetBytes: number): number {
  return (packetsPerSec * wireBytes(link, packetBytes) * 8) / 1e9;
}
