/**
 * The software dispatcher of off-path NICs (§2.1/§4: BlueField, Stingray). These cards have no
 * hardware traffic manager: the NIC switch steers flows to per-core receive rings by rule, so
 * iPipe's single shared queue must be built in software — one core receives every packet and
 * hands it to the workers through a shared ring.
 *
 * Its cost per packet (an assumption; the data do not measure a dispatcher):
 *
 *     dispatch(S) = rxShare · w(S, 1) + enqueueNs
 *
 * the receive half (rxShare = ½) of a lone forwarding core's I/O interval — it receives but never
 * transmits — plus one cache-line transfer to hand the descriptor over (the NIC's L2 latency,
 * Table 2). On the Stingray that is ~0.5 × 0.22 µs + 25 ns ≈ 0.14 µs, a ceiling of ~7 Mpps: enough
 * for line rate at 512 B and above (5.9 Mpps), not at 256 B (11.3 Mpps).
 *
 * Does the Stingray's published cores-for-line-rate (3 cores at 256 B, §2.2.2) include such a core?
 * No: Fig 4 shows 8 cores at 16.7 Gbps (wire) with 1 µs added per packet = 7.56 Mpps, i.e.
 * ≤ 1.06 µs per packet per core with 8 workers; 7 workers could reach at most 7 / 1 µs = 7.0 Mpps =
 * 15.5 Gbps. So the echo benchmark used every core as a worker on its own steered ring (RSS), and
 * under iPipe's runtime an off-path NIC spends one more core than the published counts.
 */

import type { NicProfile } from '../schema.ts';
import { ioIntervalNs } from './forwarding.ts';

/** The dispatcher core's time per packet, ns; 0 on an on-path NIC (its traffic manager is hardware). */
export function dispatcherPerPacketNs(nic: NicProfile, packetBytes: number): number {
  const dispatch = nic.dispatch;
  if (dispatch.kind === 'traffic-manager') return 0;
  return dispatch.rxShare * ioIntervalNs(nic, packetBytes, 1) + dispatch.enqueueNs;
}

/** Cores the runtime must set aside for dispatching: 1 off-path, 0 on-path. */
export function dispatcherCores(nic: NicProfile): number {
  return nic.dispatch.kind === 'traffic-manager' ? 0 : 1;
}

/** Packets per second one dispatcher core can hand out (Infinity on-path). */
export function dispatcherCapacityPacketsPerSec(nic: NicProfile, packetBytes: number): number {
  const perPacketNs = dispatcherPerPacketNs(nic, packetBytes);
  return perPacketNs === 0 ? Number.POSITIVE_INFINITY : 1e9 / perPacketNs;
}
