/**
 * A request inside a live node: what the scheduler queues (it satisfies SchedRequest) plus what a
 * core needs to run it. Shared by both domain controllers.
 */

import { writeU32 } from '../../../actor/codec-field-base.ts';
import { type NetworkEndpoint, NO_ORIGIN, type Origin } from '../../../actor/envelope.ts';
import type { ActorId } from '../../../ids.ts';
import { originSize, writeOrigin } from '../../../runtime/origin-codec.ts';
import type { SchedRequest } from '../../../sched/types.ts';
import { HEADER_BYTES } from '../net/wire.ts';
import { wallNs } from './clock.ts';
import { WORK_EXEC, WORK_TIMER } from './core-protocol.ts';

/**
 * A client as the NIC knows it: the endpoint its datagrams come from (shared by the origins of all
 * its requests) and that endpoint's `address:port` key, built once rather than per request.
 */
export interface LiveClient {
  readonly clientId: number;
  readonly endpoint: NetworkEndpoint;
  readonly key: string;
}

/** A timer delivery's payload: none (the timer's message is in the actor's heap); never written. */
const NO_PAYLOAD = new Uint8Array(0);

export class LiveRequest implements SchedRequest {
  actor: ActorId;
  readonly sizeBytes: number;
  arrivalNs: number;
  readonly origin: Origin;
  readonly payload: Uint8Array;
  /** Non-zero for a timer delivery. */
  readonly timerId: number;
  /** The client whose datagram it came from (undefined for internal messages). */
  readonly client: LiveClient | undefined;
  /**
   * The request's entry in the socket core's shared dedup (SharedRequestDedup), or -1: a client's
   * request as it arrived, not a message or a timer. Unused by NicController.
   */
  dedupEntry: number;
  /**
   * The socket core's number for a message the controller sent it (IN_ARRIVE), or 0: its entry in
   * the message ledger (socket-core-protocol.ts). Unused by NicController.
   */
  messageId: number;

  constructor(
    actor: ActorId,
    origin: Origin,
    payload: Uint8Array,
    timerId: number,
    client: LiveClient | undefined = undefined,
    arrivalNs = wallNs(),
  ) {
    this.actor = actor;
    this.sizeBytes = HEADER_BYTES + payload.length;
    this.arrivalNs = arrivalNs;
    this.origin = origin;
    this.payload = payload;
    this.timerId = timerId;
    this.client = client;
    this.dedupEntry = -1;
    this.messageId = 0;
  }

  /** The delivery of an actor's timer `timerId` (nobody to answer, no message: the timer holds it). */
  static timer(actor: ActorId, timerId: number): LiveRequest {
    return new LiveRequest(actor, NO_ORIGIN, NO_PAYLOAD, timerId);
  }

  /** Bytes of the work item a core runs for this request (see `writeWork`). */
  workSize(): number {
    return this.timerId !== 0 ? 13 : 9 + originSize(this.origin) + 4 + this.payload.length;
  }

  /**
   * Writes the work item (`workSize()` bytes) at `offset` of `bytes` — straight into a core's
   * ring, with no staging copy. Returns the offset after it.
   */
  writeWork(bytes: Uint8Array, offset: number): number {
    let at = offset;
    bytes[at] = this.timerId !== 0 ? WORK_TIMER : WORK_EXEC;
    writeU32(bytes, at + 1, 0);
    writeU32(bytes, at + 5, this.actor);
    at += 9;
    if (this.timerId !== 0) {
      writeU32(bytes, at, this.timerId);
      return at + 4;
    }
    at = writeOrigin(this.origin, bytes, at);
    const payload = this.payload;
    writeU32(bytes, at, payload.length);
    at += 4;
    if (payload.length <= 64) {
      // A loop beats set() for short payloads (no builtin call).
      for (let i = 0; i < payload.length; i++) bytes[at + i] = payload[i] as number;
    } else bytes.set(payload, at);
    return at + payload.length;
  }
}
