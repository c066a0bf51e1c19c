/**
 * What a domain controller and its core threads say to each other over their two SPSC rings:
 * work items down (run this message on that actor; fire that timer; forget that actor), results
 * up (done in so many ns, with the messages the handler sent; or failed, with the error). Binary
 * and little-endian, decoded into reusable views: this is the per-request path of the live node.
 *
 *   work:    EXEC   [1][tag u32][actor u32][origin…][len u32][message, the actor's codec]
 *            TIMER  [2][tag u32][actor u32][timer id u32]
 *            FORGET [3][actor u32]                 drop the cached instance (the actor moved)
 *            STOP   [4]
 *   result:  DONE   [1][tag u32][exec ns f64][outputs u16] then per output:
 *                     SEND   [1][target u32][origin…][len u32][message, the target's codec]
 *                     REPLY  [2][origin…][len u32][reply, the replying actor's codec]
 *                     TIMER  [3][actor u32][timer id u32][due ns f64]
 *                     REPLY_WORK [4][len u32][reply]   a REPLY to the origin of the EXEC item
 *                                                     being answered (the usual `ctx.reply`)
 *            FAILED [2][tag u32][exec ns f64][code len u8][code][message len u16][message]
 *
 * REPLY_WORK saves the commonest result from carrying back the origin its work item brought: the
 * core skips encoding it, the controller skips decoding it, and the controller answers with the
 * origin object it already holds for that request (its client's cached endpoint key included).
 */

import type { Origin } from '../../../actor/envelope.ts';
import type { ActorId } from '../../../ids.ts';
import { originSize, readOrigin, writeOrigin } from '../../../runtime/origin-codec.ts';

export const WORK_EXEC = 1;
export const WORK_TIMER = 2;
export const WORK_FORGET = 3;
export const WORK_STOP = 4;
export const RESULT_DONE = 1;
export const RESULT_FAILED = 2;
/** The code of a RESULT_FAILED whose payload its actor's codec refused (the handler never ran). */
export const DECODE_FAILED = 'IPIPE_ERR_CODEC_DECODE';
export const OUT_SEND = 1;
export const OUT_REPLY = 2;
export const OUT_TIMER = 3;
export const OUT_REPLY_WORK = 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A growable scratch buffer messages are assembled in before they are copied into a ring. */
export class FrameBuilder {
  bytes = new Uint8Array(4096);
  view = new DataView(this.bytes.buffer);
  length = 0;

  reset(): this {
    this.length = 0;
    return this;
  }

  ensure(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.bytes.length) return;
    let size = this.bytes.length;
    while (size < needed) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.bytes.subarray(0, this.length));
    this.bytes = bigger;
    this.view = new DataView(bigger.buffer);
  }

  u8(value: number): void {
    this.ensure(1);
    this.view.setUint8(this.length, value);
    this.length += 1;
  }

  u16(value: number): void {
    this.ensure(2);
    this.view.setUint16(this.length, value, true);
    this.length += 2;
  }

  u32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.length, value >>> 0, true);
    this.length += 4;
  }

  f64(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  origin(origin: Origin): void {
    this.ensure(originSize(origin));
    this.length = writeOrigin(origin, this.bytes, this.length);
  }

  bytesField(bytes: Uint8Array): void {
    this.u32(bytes.length);
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Reserves `size` bytes for an encoder to fill in place (after a u32 length prefix). */
  reserveField(size: number): number {
    this.u32(size);
    this.ensure(size);
    const at = this.length;
    this.length += size;
    return at;
  }

  text(value: string, lengthBytes: 1 | 2): void {
    const bytes = encoder.encode(value);
    const max = lengthBytes === 1 ? 255 : 65_535;
    const cut = bytes.subarray(0, Math.min(bytes.length, max));
    if (lengthBytes === 1) this.u8(cut.length);
    else this.u16(cut.length);
    this.ensure(cut.length);
    this.bytes.set(cut, this.length);
    this.length += cut.length;
  }

  get frame(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

/** Reads doubles without a DataView per frame (the rings already require a little-endian host). */
const f64Scratch = new Float64Array(1);
const f64Bytes = new Uint8Array(f64Scratch.buffer);

/**
 * A cursor over received bytes; every read is bounds-checked (a short frame reads as `ok = false`).
 * It reads a window of a larger buffer in place (`resetWindow`: a ring record where it lies), so
 * delivering a result allocates no view.
 */
export class FrameReader {
  #bytes: Uint8Array = new Uint8Array(0);
  #end = 0;
  offset = 0;
  ok = true;

  reset(bytes: Uint8Array): this {
    return this.resetWindow(bytes, 0, bytes.length);
  }

  /** Reads `bytes[start, end)`; `offset` counts from the start of `bytes`. */
  resetWindow(bytes: Uint8Array, start: number, end: number): this {
    this.#bytes = bytes;
    this.#end = end;
    this.offset = start;
    this.ok = true;
    return this;
  }

  #take(size: number): number {
    const at = this.offset;
    if (at + size > this.#end) {
      this.ok = false;
      return -1;
    }
    this.offset += size;
    return at;
  }

  /** The next byte without consuming it, or -1 at the end. */
  peekU8(): number {
    return this.offset < this.#end ? (this.#bytes[this.offset] as number) : -1;
  }

  u8(): number {
    const at = this.#take(1);
    return at < 0 ? 0 : (this.#bytes[at] as number);
  }

  u16(): number {
    const at = this.#take(2);
    if (at < 0) return 0;
    const bytes = this.#bytes;
    return (bytes[at] as number) | ((bytes[at + 1] as number) << 8);
  }

  u32(): number {
    const at = this.#take(4);
    if (at < 0) return 0;
    const bytes = this.#bytes;
    return (
      ((bytes[at] as number) |
        ((bytes[at + 1] as number) << 8) |
        ((bytes[at + 2] as number) << 16) |
        ((bytes[at + 3] as number) << 24)) >>>
      0
    );
  }

  f64(): number {
    const at = this.#take(8);
    if (at < 0) return 0;
    const bytes = this.#bytes;
    for (let i = 0; i < 8; i++) f64Bytes[i] = bytes[at + i] as number;
    return f64Scratch[0] as number;
  }

  origin(): Origin {
    // Bounded by this record's end, not the ring's: nothing past the record is read.
    const read = readOrigin(this.#bytes, this.offset, 0, this.#end);
    if (!read) {
      this.ok = false;
      return { kind: 'none' };
    }
    this.offset = read.next;
    return read.origin;
  }

  /** A view (no copy) of a u32-length-prefixed field. */
  bytesField(): Uint8Array {
    const length = this.u32();
    const at = this.#take(length);
    return at < 0 ? new Uint8Array(0) : this.#bytes.subarray(at, at + length);
  }

  text(lengthBytes: 1 | 2): string {
    const length = lengthBytes === 1 ? this.u8() : this.u16();
    const at = this.#take(length);
    return at < 0 ? '' : decoder.decode(this.#bytes.subarray(at, at + length));
  }
}

/** One output of a handler, as the controller routes it. */
export type CoreOutput =
  | { readonly kind: 'send'; readonly target: ActorId; readonly origin: Origin; readonly message: Uint8Array }
  | { readonly kind: 'reply'; readonly origin: Origin; readonly message: Uint8Array }
  | { readonly kind: 'timer'; readonly actor: ActorId; readonly timerId: number; readonly dueAtNs: number };

/**
 * Decodes a DONE result's outputs (copies the message bytes: the ring slot is released after).
 * `workOrigin`: the origin of the EXEC item the result answers (what REPLY_WORK replies to).
 */
export function readOutputs(
  reader: FrameReader,
  count: number,
  workOrigin: Origin,
): CoreOutput[] | undefined {
  const outputs: CoreOutput[] = [];
  for (let i = 0; i < count; i++) {
    const kind = reader.u8();
    if (kind === OUT_SEND) {
      const target = reader.u32() as ActorId;
      const origin = reader.origin();
      outputs.push({ kind: 'send', target, origin, message: reader.bytesField().slice() });
    } else if (kind === OUT_REPLY) {
      const origin = reader.origin();
      outputs.push({ kind: 'reply', origin, message: reader.bytesField().slice() });
    } else if (kind === OUT_REPLY_WORK) {
      outputs.push({ kind: 'reply', origin: workOrigin, message: reader.bytesField().slice() });
    } else if (kind === OUT_TIMER) {
      outputs.push({
        kind: 'timer',
        actor: reader.u32() as ActorId,
        timerId: reader.u32(),
        dueAtNs: reader.f64(),
      });
    } else return undefined;
    if (!reader.ok) return undefined;
  }
  return outputs;
}
