/**
 * A request inside a live node: what the scheduler queues (it satisfies SchedRequest) plus what a
 * core needs to run it. Shared by both domain controllers.
 */

import type { Origin } from '../../../actor/envelope.ts';
import type { ActorId } from '../../../ids.ts';
import type { SchedRequest } from '../../../sched/types.ts';
import { HEADER_BYTES } from '../net/wire.ts';
import { wallNs } from './clock.ts';
import { type FrameBuilder, WORK_EXEC, WORK_TIMER } from './core-protocol.ts';

export class LiveRequest implements SchedRequest {
  actor: ActorId;
  readonly sizeBytes: number;
  arrivalNs: number;
  readonly origin: Origin;
  readonly payload: Uint8Array;
  /** Non-zero for a timer delivery. */
  readonly timerId: number;
  /** Dedup key of the client request it came from ('' for internal messages). */
  readonly dedupKey: string;

  constructor(actor: ActorId, origin: Origin, payload: Uint8Array, timerId: number, dedupKey = '') {
    this.actor = actor;
    this.sizeBytes = HEADER_BYTES + payload.length;
    this.arrivalNs = wallNs();
    this.origin = origin;
    this.payload = payload;
    this.timerId = timerId;
    this.dedupKey = dedupKey;
  }

  /** The work item a core runs for this request. */
  workFrame(frame: FrameBuilder): Uint8Array {
    frame.reset();
    if (this.timerId !== 0) {
      frame.u8(WORK_TIMER);
      frame.u32(0);
      frame.u32(this.actor);
      frame.u32(this.timerId);
    } else {
      frame.u8(WORK_EXEC);
      frame.u32(0);
      frame.u32(this.actor);
      frame.origin(this.origin);
      frame.bytesField(this.payload);
    }
    return frame.frame;
  }
}
