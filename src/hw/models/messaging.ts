/**
 * NIC messaging (Fig 6, CN2350): the latency of sending or receiving one packet with the LiquidIO's
 * hardware-assisted messaging (its packet engines), compared with DPDK and RDMA. The hardware path
 * is flat (~0.31 µs send, ~0.14 µs receive) while DPDK and RDMA grow with size; the text sums it
 * up as 4.6× faster than DPDK and 4.2× faster than RDMA, averaged over sizes.
 *
 * The curves are interpolated in log size between the measured 4 B … 1 KB and continued linearly
 * in bytes beyond (Ethernet frames up to 1500 B). The echo path of each profile
 * (profile.echoPath) takes its receive/transmit latencies from these curves: the hardware ones on
 * LiquidIO, the DPDK ones on the ARM NICs.
 */

import { MESSAGING_LATENCY_US, MESSAGING_SIZES_BYTES } from '../data/published.ts';
import type { SizeCurve } from '../schema.ts';
import { curveOf, interpolateLogSize } from './interpolate.ts';

/** A messaging mechanism and direction of Fig 6. */
export type MessagingMechanism = keyof typeof MESSAGING_LATENCY_US;

export const MESSAGING_MECHANISMS = Object.keys(MESSAGING_LATENCY_US) as MessagingMechanism[];

const CURVES: Readonly<Record<MessagingMechanism, SizeCurve>> = Object.freeze(
  Object.fromEntries(
    MESSAGING_MECHANISMS.map((mechanism) => [
      mechanism,
      curveOf(MESSAGING_SIZES_BYTES, MESSAGING_LATENCY_US[mechanism], 1000),
    ]),
  ) as Record<MessagingMechanism, SizeCurve>,
);

/** Latency of sending or receiving one packet of `packetBytes` with `mechanism`, ns. */
export function messagingLatencyNs(mechanism: MessagingMechanism, packetBytes: number): number {
  return interpolateLogSize(CURVES[mechanism], packetBytes, 'linear-in-bytes');
}
