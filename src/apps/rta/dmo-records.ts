/**
 * Small DMO helpers the RTA actors share (iPipe §3, "Distributed memory objects": an actor's state
 * lives only in its DMOs, because only its DMOs move when the runtime migrates it).
 *
 * - A *config object* keeps the actor's `configure` message, encoded with the actor's own codec
 *   behind a u32 length (`storeConfig` / `loadConfig`): the configuration travels with the actor,
 *   and re-reading it costs one decode.
 * - A *counter record* is one object of f64 slots (watermarks, totals, flags), read and written
 *   in place by slot index.
 * - *Progress* maps (input index → how far it has closed) and the windows they let close.
 */

import type { ActorContext } from '../../actor/context.ts';
import type { MessageCodec } from '../../actor/index.ts';
import type { DmoNumberMap } from '../../dmo/index.ts';
import type { DmoHeap } from '../../dmo/types.ts';
import type { ObjectId } from '../../ids.ts';
import { RtaNotConfiguredError } from './errors.ts';

const CONFIG_ROOT = 'config';

/** Stores `message` (the actor's configure message, encoded with `codec`) as its config object. */
export function storeConfig<M, R>(ctx: ActorContext<M, R>, codec: MessageCodec<M>, message: M): void {
  const bytes = codec.encode(message);
  const id = ctx.dmo.allocate(4 + bytes.length);
  ctx.dmo.writeU32(id, 0, bytes.length);
  ctx.dmo.write(id, 4, bytes);
  const old = ctx.root(CONFIG_ROOT);
  ctx.setRoot(CONFIG_ROOT, id);
  if (old !== undefined) ctx.dmo.free(old);
}

/**
 * The stored configure message, decoded with `codec`; throws RtaNotConfiguredError (naming the
 * message that needed it) when the actor has not been configured.
 */
export function loadConfig<M, R, C extends M>(
  ctx: ActorContext<M, R>,
  codec: MessageCodec<M>,
  isConfig: (message: M) => message is C,
  needed: string,
): C {
  const id = ctx.root(CONFIG_ROOT);
  if (id === undefined) throw new RtaNotConfiguredError(ctx.name, needed);
  const length = ctx.dmo.readU32(id, 0);
  const message = codec.decode(ctx.dmo.bytes(id), 4, length);
  if (!isConfig(message)) throw new RtaNotConfiguredError(ctx.name, needed);
  return message;
}

/** An object of `slots` f64 values, zero-filled, opened by id. */
export class F64Record {
  readonly id: ObjectId;
  readonly #heap: DmoHeap;

  constructor(heap: DmoHeap, id: ObjectId) {
    this.#heap = heap;
    this.id = id;
  }

  static allocate(heap: DmoHeap, slots: number): F64Record {
    return new F64Record(heap, heap.allocate(slots * 8));
  }

  get(slot: number): number {
    return this.#heap.readF64(this.id, slot * 8);
  }

  set(slot: number, value: number): void {
    this.#heap.writeF64(this.id, slot * 8, value);
  }

  add(slot: number, delta: number): number {
    const value = this.get(slot) + delta;
    this.set(slot, value);
    return value;
  }
}

/** The lowest progress over `inputs` sources (one not heard from yet is at −∞). */
export function lowestProgress(progress: DmoNumberMap, inputs: number): number {
  let lowest = Number.POSITIVE_INFINITY;
  for (let input = 0; input < inputs; input++) {
    lowest = Math.min(lowest, progress.get(input) ?? Number.NEGATIVE_INFINITY);
  }
  return lowest;
}

/** Keys of `open` (window ends) at or before `throughMs`, ascending. */
export function windowsThrough(open: DmoNumberMap, throughMs: number): number[] {
  const ends: number[] = [];
  for (const end of open.keys()) if (end <= throughMs) ends.push(end);
  return ends.sort((a, b) => a - b);
}
