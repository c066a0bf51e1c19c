/**
 * A binary form of a message's origin (actor/envelope.ts), so that an envelope can cross a ring,
 * a socket or sit in a DMO (a pending timer) and still answer whoever waits.
 *
 *   none:    [0]
 *   client:  [1][address length u8][address, UTF-8][port u16][request id u32]
 *   actor:   [2][actor id u32][request id u32][parent origin …]      (nested, at most 16 deep)
 *
 * Little-endian. Decoding never throws on hostile bytes: it returns undefined, and the caller
 * counts the frame as malformed.
 */

import type { Origin } from '../actor/envelope.ts';
import { NO_ORIGIN } from '../actor/envelope.ts';
import { EncodeError } from '../errors.ts';
import type { ActorId } from '../ids.ts';

const NONE = 0;
const CLIENT = 1;
const ACTOR = 2;
/** Request chains deeper than this are refused (they would be a loop, not a conversation). */
export const MAX_ORIGIN_DEPTH = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Bytes the origin takes. */
export function originSize(origin: Origin, depth = 0): number {
  if (depth > MAX_ORIGIN_DEPTH) throw new EncodeError(`origin chain deeper than ${MAX_ORIGIN_DEPTH}`);
  switch (origin.kind) {
    case 'none':
      return 1;
    case 'client':
      return 1 + 1 + encoder.encode(origin.endpoint.address).length + 2 + 4;
    case 'actor':
      return 1 + 4 + 4 + originSize(origin.parent, depth + 1);
  }
}

/** Writes the origin at `offset`; returns the offset after it. */
export function writeOrigin(origin: Origin, target: Uint8Array, offset: number, depth = 0): number {
  if (depth > MAX_ORIGIN_DEPTH) throw new EncodeError(`origin chain deeper than ${MAX_ORIGIN_DEPTH}`);
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  switch (origin.kind) {
    case 'none':
      view.setUint8(offset, NONE);
      return offset + 1;
    case 'client': {
      const address = encoder.encode(origin.endpoint.address);
      if (address.length > 255) throw new EncodeError('client address longer than 255 bytes');
      view.setUint8(offset, CLIENT);
      view.setUint8(offset + 1, address.length);
      target.set(address, offset + 2);
      let at = offset + 2 + address.length;
      view.setUint16(at, origin.endpoint.port, true);
      at += 2;
      view.setUint32(at, origin.requestId >>> 0, true);
      return at + 4;
    }
    case 'actor':
      view.setUint8(offset, ACTOR);
      view.setUint32(offset + 1, origin.actor, true);
      view.setUint32(offset + 5, origin.requestId >>> 0, true);
      return writeOrigin(origin.parent, target, offset + 9, depth + 1);
  }
}

export function encodeOrigin(origin: Origin): Uint8Array {
  const bytes = new Uint8Array(originSize(origin));
  writeOrigin(origin, bytes, 0);
  return bytes;
}

/** Reads an origin at `offset`: the origin and the offset after it, or undefined when malformed. */
export function readOrigin(
  bytes: Uint8Array,
  offset: number,
  depth = 0,
): { readonly origin: Origin; readonly next: number } | undefined {
  if (depth > MAX_ORIGIN_DEPTH || offset >= bytes.length) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = view.getUint8(offset);
  if (tag === NONE) return { origin: NO_ORIGIN, next: offset + 1 };
  if (tag === CLIENT) {
    if (offset + 2 > bytes.length) return undefined;
    const length = view.getUint8(offset + 1);
    const end = offset + 2 + length;
    if (end + 6 > bytes.length) return undefined;
    let address: string;
    try {
      address = decoder.decode(bytes.subarray(offset + 2, end));
    } catch {
      return undefined;
    }
    const port = view.getUint16(end, true);
    const requestId = view.getUint32(end + 2, true);
    return { origin: { kind: 'client', endpoint: { address, port }, requestId }, next: end + 6 };
  }
  if (tag === ACTOR) {
    if (offset + 9 > bytes.length) return undefined;
    const actor = view.getUint32(offset + 1, true) as ActorId;
    const requestId = view.getUint32(offset + 5, true);
    const parent = readOrigin(bytes, offset + 9, depth + 1);
    if (!parent) return undefined;
    return { origin: { kind: 'actor', actor, requestId, parent: parent.origin }, next: parent.next };
  }
  return undefined;
}
