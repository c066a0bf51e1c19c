/**
 * A configurable synthetic actor for experiments: each request carries the NIC time it should
 * cost (drawn by the workload from a distribution) and the actor answers it. Its cost hook
 * declares exactly that time, so the simulator charges what the experiment asked for; `pad`
 * makes the request as large as the packet size under test.
 */

import { defineActor, field, messages } from '../actor/index.ts';

export const syntheticMessages = messages({
  work: { costNs: field.u32(), pad: field.bytes({ maxBytes: 9000 }) },
});
export const syntheticReplies = messages({ done: {} });

/** Answers every request after its declared cost; holds no state. */
export const syntheticActor = defineActor({
  name: 'synthetic',
  messages: syntheticMessages,
  replies: syntheticReplies,
  placement: 'any',
  exclusive: false,
  exec(ctx) {
    ctx.reply({ type: 'done' });
  },
  cost: (message) => ({ instructions: 0, fixedNs: message.costNs }),
});

const EMPTY = new Uint8Array(0);
const pads = new Map<number, Uint8Array>();

/** A shared zero pad of `bytes` bytes (requests never mutate it). */
export function padOf(bytes: number): Uint8Array {
  if (bytes <= 0) return EMPTY;
  let pad = pads.get(bytes);
  if (!pad) {
    pad = new Uint8Array(bytes);
    pads.set(bytes, pad);
  }
  return pad;
}
