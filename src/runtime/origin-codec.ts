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
 *
 * This is on the live node's per-request path (every work item and every reply carries a client
 * origin), so client addresses — IP literals, ASCII — are written and read byte by byte rather than
 * through TextEncoder/TextDecoder (a native call and a fresh buffer or string each), and the last
 * address decoded is kept: a node answering one client decodes the same bytes to the same string
 * over and over. Any non-ASCII address takes the UTF-8 codecs, as before.
 */

import { readU32At, writeU32 } from '../actor/codec-field-base.ts';
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

/** UTF-8 bytes of `text`: its length when ASCII (the usual IP literal), else the encoder's. */
function utf8Length(text: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) >= 0x80) return encoder.encode(text).length;
  }
  return text.length;
}

/** Bytes the origin takes. */
export function originSize(origin: Origin, depth = 0): number {
  if (depth > MAX_ORIGIN_DEPTH) throw new EncodeError(`origin chain deeper than ${MAX_ORIGIN_DEPTH}`);
  switch (origin.kind) {
    case 'none':
      return 1;
    case 'client':
      return 1 + 1 + utf8Length(origin.endpoint.address) + 2 + 4;
    case 'actor':
      return 1 + 4 + 4 + originSize(origin.parent, depth + 1);
  }
}

/** Writes `address` as UTF-8 at `at` (length byte before it); returns the offset after it. */
function writeAddress(address: string, target: Uint8Array, at: number): number {
  const length = address.length;
  let ascii = length <= 255;
  for (let i = 0; ascii && i < length; i++) if (address.charCodeAt(i) >= 0x80) ascii = false;
  if (ascii) {
    if (at + 1 + length > target.length) throw new RangeError('origin does not fit its buffer');
    target[at] = length;
    for (let i = 0; i < length; i++) target[at + 1 + i] = address.charCodeAt(i);
    return at + 1 + length;
  }
  const bytes = encoder.encode(address);
  if (bytes.length > 255) throw new EncodeError('client address longer than 255 bytes');
  target[at] = bytes.length;
  target.set(bytes, at + 1);
  return at + 1 + bytes.length;
}

/** Writes the origin at `offset`; returns the offset after it. */
export function writeOrigin(origin: Origin, target: Uint8Array, offset: number, depth = 0): number {
  if (depth > MAX_ORIGIN_DEPTH) throw new EncodeError(`origin chain deeper than ${MAX_ORIGIN_DEPTH}`);
  switch (origin.kind) {
    case 'none':
      if (offset >= target.length) throw new RangeError('origin does not fit its buffer');
      target[offset] = NONE;
      return offset + 1;
    case 'client': {
      target[offset] = CLIENT;
      const at = writeAddress(origin.endpoint.address, target, offset + 1);
      if (at + 6 > target.length) throw new RangeError('origin does not fit its buffer');
      const port = origin.endpoint.port;
      target[at] = port & 0xff;
      target[at + 1] = (port >>> 8) & 0xff;
      writeU32(target, at + 2, origin.requestId >>> 0);
      return at + 6;
    }
    case 'actor':
      if (offset + 9 > target.length) throw new RangeError('origin does not fit its buffer');
      target[offset] = ACTOR;
      writeU32(target, offset + 1, origin.actor);
      writeU32(target, offset + 5, origin.requestId >>> 0);
      return writeOrigin(origin.parent, target, offset + 9, depth + 1);
  }
}

export function encodeOrigin(origin: Origin): Uint8Array {
  const bytes = new Uint8Array(originSize(origin));
  writeOrigin(origin, bytes, 0);
  return bytes;
}

/** The last address `readAddress` decoded, and its bytes (see the module comment). */
let lastAddress = '';
const lastAddressBytes = new Uint8Array(255);
let lastAddressLength = -1;

/** The UTF-8 string in `bytes[start, end)`, or undefined when it is not valid UTF-8. */
function readAddress(bytes: Uint8Array, start: number, end: number): string | undefined {
  const length = end - start;
  if (length === lastAddressLength) {
    let same = true;
    for (let i = 0; same && i < length; i++) same = bytes[start + i] === lastAddressBytes[i];
    if (same) return lastAddress;
  }
  // Copy first, then decode the copy: in a shared ring another thread may be rewriting these bytes
  // (a malformed record read past its end), and the cached string must be exactly the decoding of
  // the cached bytes. The cache is invalid until the decode succeeds.
  lastAddressLength = -1;
  const copy = lastAddressBytes;
  for (let i = 0; i < length; i++) copy[i] = bytes[start + i]!;
  let address = '';
  let ascii = true;
  for (let i = 0; ascii && i < length; i++) if (copy[i]! >= 0x80) ascii = false;
  if (ascii) {
    for (let i = 0; i < length; i++) address += String.fromCharCode(copy[i]!);
  } else {
    try {
      address = decoder.decode(copy.subarray(0, length));
    } catch {
      return undefined;
    }
  }
  lastAddressLength = length;
  lastAddress = address;
  return address;
}

/** Reads an origin at `offset`: the origin and the offset after it, or undefined when malformed. */
export function readOrigin(
  bytes: Uint8Array,
  offset: number,
  depth = 0,
  /** Reads stop here (a record's end inside a larger buffer, such as a ring); default: the buffer's. */
  limit = bytes.length,
): { readonly origin: Origin; readonly next: number } | undefined {
  if (depth > MAX_ORIGIN_DEPTH || offset >= limit) return undefined;
  const tag = bytes[offset];
  if (tag === NONE) return { origin: NO_ORIGIN, next: offset + 1 };
  if (tag === CLIENT) {
    if (offset + 2 > limit) return undefined;
    const length = bytes[offset + 1]!;
    const end = offset + 2 + length;
    if (end + 6 > limit) return undefined;
    const address = readAddress(bytes, offset + 2, end);
    if (address === undefined) return undefined;
    const port = bytes[end]! | (bytes[end + 1]! << 8);
    const requestId = readU32At(bytes, end + 2);
    return { origin: { kind: 'client', endpoint: { address, port }, requestId }, next: end + 6 };
  }
  if (tag === ACTOR) {
    if (offset + 9 > limit) return undefined;
    const actor = readU32At(bytes, offset + 1) as ActorId;
    const requestId = readU32At(bytes, offset + 5);
    const parent = readOrigin(bytes, offset + 9, depth + 1, limit);
    if (!parent) return undefined;
    return { origin: { kind: 'actor', actor, requestId, parent: parent.origin }, next: parent.next };
  }
  return undefined;
}
