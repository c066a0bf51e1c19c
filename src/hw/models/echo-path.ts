/**
 * Fig 5's ingredients: the unloaded path of an echo packet through a NIC, which the discrete-event
 * simulator adds its queueing to. One way through the NIC a packet is
 *
 *   received off the wire (one serialization: the MAC stores the whole frame)
 *   → the receive pipeline hands it to a core     (LiquidIO: packet engines, Fig 6 recv;
 *                                                  ARM NICs: DPDK receive, Fig 6, borrowed)
 *   → the core computes c(S) (+ the handler's work)                        (forwarding.ts)
 *   → the transmit pipeline takes it to the MAC   (Fig 6 send)
 *   → sent onto the wire (one serialization).
 *
 * For the CN2350 at 1500 B that is 1.22 + 0.15 + 0.23 + 0.32 + 1.22 ≈ 3.1 µs, an order of magnitude
 * below Fig 5's 39–41 µs: Fig 5 measures latency *at maximum throughput*, and the rest is the
 * testbed's — client stacks, the switch, and above all queueing in front of the line-rate
 * bottleneck. That is for the simulator to produce, and thresholds.ts uses the same split to carry
 * the CN2350's published thresholds over to other NICs. The per-packet I/O interval (forwarding.ts)
 * is what makes cores the bottleneck below line rate; `echoPath.ioIntervalCv` lets a profile add
 * per-packet variability to it (0 in the built-ins: nothing in the data measures it).
 */

import type { NicProfile } from '../schema.ts';
import { forwardingComputeNs } from './forwarding.ts';
import { interpolateLogSize } from './interpolate.ts';
import { serializationNs } from './link.ts';

/** The unloaded one-way path of an echo packet through the NIC, ns. */
export interface EchoPathLatency {
  readonly rxSerializationNs: number;
  readonly rxPipelineNs: number;
  readonly computeNs: number;
  readonly txPipelineNs: number;
  readonly txSerializationNs: number;
  readonly totalNs: number;
}

/** The echo path for `packetBytes` with `addedNs` of handler work (default 0). */
export function echoPathLatency(nic: NicProfile, packetBytes: number, addedNs = 0): EchoPathLatency {
  const wireNs = serializationNs(nic.link, packetBytes);
  const rxPipelineNs = interpolateLogSize(nic.echoPath.rxPipelineNs, packetBytes, 'linear-in-bytes');
  const txPipelineNs = interpolateLogSize(nic.echoPath.txPipelineNs, packetBytes, 'linear-in-bytes');
  const computeNs = forwardingComputeNs(nic, packetBytes) + addedNs;
  return {
    rxSerializationNs: wireNs,
    rxPipelineNs,
    computeNs,
    txPipelineNs,
    txSerializationNs: wireNs,
    totalNs: 2 * wireNs + rxPipelineNs + computeNs + txPipelineNs,
  };
}
