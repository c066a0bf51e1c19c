/**
 * A request or actor message inside the simulated node: what the scheduler queues (it satisfies
 * SchedRequest) plus what the node needs to run and answer it. Mutable on purpose — the node
 * fills one in as it moves from the wire to a queue to a core.
 */

import type { Origin } from '../../actor/envelope.ts';
import type { ActorId } from '../../ids.ts';
import type { SchedRequest } from '../../sched/types.ts';

export class SimRequest implements SchedRequest {
  actor: ActorId;
  /** Bytes on the wire for client packets (the forwarding model's packet size); message bytes otherwise. */
  sizeBytes: number;
  /** When it entered the NIC (queueing included in its latency from here). */
  arrivalNs: number;
  readonly message: unknown;
  readonly origin: Origin;
  /** True for a packet that came from the wire (it pays the NIC's packet I/O cost). */
  readonly fromWire: boolean;
  /** Non-zero for a timer delivery: the handler runs through `fireTimer(timerId)`. */
  readonly timerId: number;
  /** Set once a NIC core has received the packet (paid its I/O occupancy). */
  received = false;
  /**
   * A host actor's message (or timer) that crossed to the NIC because its target was not on the
   * host then (it was migrating): SimNode counts it until it runs, is dropped or crosses back, so
   * that the host's newer messages to that actor wait for it (SimNode #draining).
   */
  viaNic = false;
  /**
   * A wire frame for an actor just moved to the host, queued on the NIC's path while the off-path
   * switch does not steer its frames yet: SimNode counts it until a core takes it (#steerGates).
   */
  gated = false;

  constructor(
    actor: ActorId,
    sizeBytes: number,
    arrivalNs: number,
    message: unknown,
    origin: Origin,
    fromWire: boolean,
    timerId = 0,
  ) {
    this.actor = actor;
    this.sizeBytes = sizeBytes;
    this.arrivalNs = arrivalNs;
    this.message = message;
    this.origin = origin;
    this.fromWire = fromWire;
    this.timerId = timerId;
  }
}
