/**
 * The top-of-rack switch between clients and servers. The characterization has no switch
 * measurement, so its port-to-port latency is an assumption: 500 ns, the order of magnitude that
 * 10/25 GbE cut-through data-centre switches of the paper's time (Broadcom Trident/Tomahawk
 * class) are specified at (roughly 300–600 ns). Cut-through means the switch starts sending before
 * the whole frame has arrived, so it adds no serialization of its own: a frame crossing it costs
 * this latency plus one serialization on the egress link (models/link.ts).
 */

import { type LinkLike, serializationNs } from './link.ts';

/** A ToR switch. */
export interface SwitchSpec {
  /** First bit in to first bit out, ns. */
  readonly portToPortNs: number;
  readonly cutThrough: boolean;
}

/** The assumed ToR switch (not in the published data; docs/calibration.md, "Assumptions"). */
export const TOR_SWITCH: SwitchSpec = Object.freeze({ portToPortNs: 500, cutThrough: true });

/** Time from a frame's first bit entering the switch to its last bit leaving the egress port, ns. */
export function switchTraversalNs(
  egress: LinkLike,
  packetBytes: number,
  spec: SwitchSpec = TOR_SWITCH,
): number {
  // Store-and-forward would first receive the whole frame: one more serialization.
  const storeAndForwardNs = spec.cutThrough ? 0 : serializationNs(egress, packetBytes);
  return spec.portToPortNs + storeAndForwardNs + serializationNs(egress, packetBytes);
}
