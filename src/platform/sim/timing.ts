/**
 * What the simulated node asks of the hardware models: how long each step of a request takes on
 * the modelled NIC cores, PCIe channel, host cores and link. `timingFor(nic, host)` builds it
 * from the calibrated profiles in src/hw; tests may build small hand-made ones.
 *
 * Everything here is a duration in integer nanoseconds derived from declared work and message
 * sizes — never from the JS wall clock — so a run is a function of its inputs and seed. Every
 * method must be a pure function of its arguments: the node remembers the last results per path
 * (SimNode's per-size memos) and calls again only when the arguments change.
 */

import type { HandlerWork } from '../../actor/cost.ts';

export interface SimTiming {
  /** A label for reports: the NIC profile (and host) this timing models. */
  readonly label: string;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly linkGbps: number;
  /** On-path NICs (LiquidIO) pass every packet through a NIC core; off-path ones steer in hardware. */
  readonly placement: 'on-path' | 'off-path';
  /**
   * NIC core occupancy for a packet of `packetBytes` from or to the wire whose handling adds
   * `addedNs` of processing (the forwarding model of Figs 2–4).
   */
  nicPacketNs(packetBytes: number, addedNs: number): number;
  /** Time of a handler's declared work on a NIC core. */
  nicHandlerNs(work: HandlerWork): number;
  /** Time of a handler's declared work on a host core. */
  hostHandlerNs(work: HandlerWork): number;
  /** NIC core time to push a request into a mailbox or migration buffer. */
  readonly nicDispatchNs: number;
  /** NIC core time to hand a message of `bytes` to the NIC→host channel (added to packet handling). */
  nicToHostSendNs(bytes: number): number;
  /** Host core time to hand a message of `bytes` to the host→NIC channel or the wire. */
  hostSendNs(bytes: number): number;
  /** One-way latency of a message of `bytes` across the PCIe channel (NIC→host or host→NIC). */
  channelNs(bytes: number, direction: 'to-host' | 'to-nic'): number;
  /** Time the PCIe link is occupied by a message of `bytes` (its serialisation with TLP overhead). */
  channelSerialNs(bytes: number): number;
  /** Time to move `bytes` of actor state across PCIe during migration phase 3. */
  migrationTransferNs(bytes: number, direction: 'to-host' | 'to-nic'): number;
  /** Off-path NICs: cores reserved for the software dispatcher (0 on-path), and its time per packet. */
  readonly dispatcherCores: number;
  dispatcherNs(packetBytes: number): number;
  /** Link serialisation of one frame carrying `packetBytes` (with per-frame overhead). */
  frameNs(packetBytes: number): number;
  /** Latency from a frame's last bit arriving to a core being able to take it (not core time). */
  rxPipelineNs(packetBytes: number): number;
  /** Latency from a core handing a frame to transmit to its first bit on the wire (not core time). */
  txPipelineNs(packetBytes: number): number;
  /** One-way propagation and switching between a client and the NIC. */
  readonly wireLatencyNs: number;
  /** DRR quantum: the largest per-request processing that sustains line rate at this size. */
  headroomNs(packetBytes: number): number;
  /** The paper's thresholds for this NIC. */
  readonly meanThreshNs: number;
  readonly tailThreshNs: number;
}
