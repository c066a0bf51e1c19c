/**
 * The wire protocol between ipipe clients and a live node: one request or reply per UDP datagram
 * (iPipe §3 and §4: clients talk to actors over the network; the NIC's traffic manager sees every
 * packet, so a frame must be cheap to validate and self-describing enough to steer by actor id).
 *
 * A frame is a fixed 24-byte header followed by the payload. All integers are little-endian, the
 * same byte order as the message codec (src/actor/codec.ts), so x86 and ARM hosts and NIC cores
 * read them without byte swaps.
 *
 *   offset  size  field            meaning
 *   ------  ----  ---------------  -------------------------------------------------------------
 *        0     2  magic            0x1B1E (bytes 1E 1B): "iPipE"-ish; anything else is not ours
 *        2     1  version          WIRE_VERSION (1); a node refuses versions it does not speak
 *        3     1  flags            kind bits, see FLAG_*; exactly one of the allowed combinations
 *        4     4  target actor id  the actor the request is for (replies: the actor that answered)
 *        8     4  request id       chosen by the client; a reply carries its request's id; a
 *                                  retransmission reuses it so the server can deduplicate
 *       12     4  client id        chosen by the client (random at connect); echoed in replies,
 *                                  so (client id, request id) names a request across address changes
 *       16     4  payload length   bytes after the header; header + payload must equal the datagram
 *       20     4  checksum         CRC-32C over bytes [0, 20) then the payload [24, 24 + length)
 *       24     n  payload          request/reply: the actor's message in its codec's bytes;
 *                                  error reply: the error body (below); peer: the message's
 *                                  origin (runtime/origin-codec.ts) then the message's bytes
 *
 * Flags (byte 3). Allowed combinations: REQUEST, REQUEST|RETRANSMIT, REPLY, REPLY|ERROR, PEER,
 * PEER|FRAGMENT.
 *   0x01 REQUEST     a client → node request
 *   0x02 REPLY       a node → client answer to the request with the same (client id, request id)
 *   0x04 ERROR       with REPLY: the request failed; the payload is an error body
 *   0x08 RETRANSMIT  with REQUEST: not the first copy (purely informative: dedup goes by ids)
 *   0x10 PEER        a node → node actor message (ctx.send to an actor on another node); the
 *                    request id is 0 and the client id is that of the client the origin names
 *                    (0 if none), so the far node can answer that client directly
 *   0x20 FRAGMENT    with PEER: one piece of a peer message too big for one datagram (below)
 *   0x40..0x80       reserved, must be zero
 *
 * Fragments (PEER|FRAGMENT). A peer message whose frame would exceed the datagram limit is cut by
 * the sending node into `count` fragments, each a whole frame with its own CRC-32C, and rebuilt by
 * the receiving node (fragments.ts) before it enters the scheduler. Every fragment repeats the
 * message's target actor id and client id; the request id is the message id (a per-sending-node
 * counter, started at a random value so a restarted node does not reuse its predecessor's ids).
 * The payload starts with a 12-byte fragment header, then the fragment's piece of the message (the
 * peer payload: origin, then the message's bytes):
 *
 *   offset  size  field          meaning
 *        0     2  index          0 .. count − 1
 *        2     2  count          fragments of the message (2 .. 65535 as sent; 1 is accepted)
 *        4     4  total length   bytes of the whole message; piece i is bytes [i·c, min(total, (i+1)·c))
 *                                with c = ceil(total / count), so each piece's length is checkable
 *        8     4  message CRC    CRC-32C of the whole message, checked once it is rebuilt
 *       12     n  piece
 *
 * A lost fragment loses the whole message, exactly as a lost datagram loses a small one (the
 * protocols above retransmit); duplicates and any arrival order are fine.
 *
 * Error body (payload of a REPLY|ERROR frame):
 *   u8 code length (1..255) | code (ASCII, e.g. IPIPE_ERR_ACTOR_UNKNOWN) | u16 message length | message (UTF-8)
 *
 * Validation order (decodeFrame), cheapest and most specific first: size → magic → version →
 * declared length → checksum → flags. The checksum comes before the flags so that a damaged
 * flags byte is reported as damage ('bad-checksum'), and 'bad-flags' means a sender that computed
 * a correct checksum over flags we do not understand (a newer or broken peer).
 *
 * Hot paths: `readFrameInto` fills a caller-owned FrameView (no allocation but the payload view);
 * `sealFrame` checksums a frame whose payload was already encoded in place at offset 24 (the
 * client encodes a message straight into its send buffer with `codec.encodeInto(msg, buf, 24)`).
 */

import { crc32c } from '../../../dmo/crc32c.ts';
import { EncodeError } from '../../../errors.ts';

/** Header magic (u16, little-endian: bytes 0x1E 0x1B). */
export const WIRE_MAGIC = 0x1b1e;
/** The protocol version this code speaks. */
export const WIRE_VERSION = 1;
/** Bytes of the fixed header. */
export const HEADER_BYTES = 24;
/**
 * Default largest frame: 1472 bytes of UDP payload, what fits one unfragmented datagram on a
 * 1500-byte Ethernet MTU (1500 − 20 IPv4 − 8 UDP). Frames above it would be IP-fragmented, and a
 * NIC's traffic manager (and ours) sees one packet per request, so they are refused.
 */
export const DEFAULT_MAX_FRAME_BYTES = 1472;
/** Largest UDP payload over IPv4: the ceiling for any `maxFrameBytes` setting. */
export const MAX_UDP_PAYLOAD_BYTES = 65_507;

export const FLAG_REQUEST = 0x01;
export const FLAG_REPLY = 0x02;
export const FLAG_ERROR = 0x04;
export const FLAG_RETRANSMIT = 0x08;
export const FLAG_PEER = 0x10;
export const FLAG_FRAGMENT = 0x20;

const OFFSET_MAGIC = 0;
const OFFSET_VERSION = 2;
const OFFSET_FLAGS = 3;
const OFFSET_ACTOR = 4;
const OFFSET_REQUEST = 8;
const OFFSET_CLIENT = 12;
const OFFSET_LENGTH = 16;
const OFFSET_CHECKSUM = 20;

/** What a well-formed frame is ('fragment': one piece of a peer message, see the header). */
export type FrameKind = 'request' | 'reply' | 'error' | 'peer' | 'fragment';

/**
 * Why a datagram is not a frame. Stable words: the node's drop metrics and the CLI print them.
 *   short         fewer bytes than the header, or than the header's payload length says
 *   too-large     the datagram (or its declared payload) exceeds the frame size limit
 *   bad-magic     the first two bytes are not WIRE_MAGIC: not our protocol
 *   bad-version   a version this code does not speak
 *   bad-length    more bytes than header + declared payload (trailing garbage)
 *   bad-checksum  the CRC-32C does not match: damaged in flight
 *   bad-flags     a checksummed frame with a flag combination we do not understand
 */
export type WireDropReason =
  | 'short'
  | 'too-large'
  | 'bad-magic'
  | 'bad-version'
  | 'bad-length'
  | 'bad-checksum'
  | 'bad-flags';

export const WIRE_DROP_REASONS: readonly WireDropReason[] = Object.freeze([
  'short',
  'too-large',
  'bad-magic',
  'bad-version',
  'bad-length',
  'bad-checksum',
  'bad-flags',
]);

/** The header fields a sender chooses (magic, version, length and checksum are filled in). */
export interface FrameFields {
  readonly kind: FrameKind;
  /** Set on a request's second and later copies. Ignored for replies. */
  readonly retransmit?: boolean;
  readonly targetActorId: number;
  readonly requestId: number;
  readonly clientId: number;
}

/** A validated frame. `payload` is a view of the input bytes, not a copy. */
export interface Frame {
  readonly kind: FrameKind;
  readonly retransmit: boolean;
  readonly version: number;
  readonly flags: number;
  readonly targetActorId: number;
  readonly requestId: number;
  readonly clientId: number;
  readonly checksum: number;
  readonly payload: Uint8Array;
}

/** The outcome of `decodeFrame`: narrow on `ok` before reading. */
export type DecodeFrameResult =
  | { readonly ok: true; readonly frame: Frame }
  | { readonly ok: false; readonly reason: WireDropReason };

/**
 * A reusable, mutable frame header for hot paths: `readFrameInto` overwrites it per datagram, so
 * a receive loop allocates nothing per frame. `payloadOffset`/`payloadLength` locate the payload in
 * the bytes that were read; no view is made unless the caller makes one.
 */
export class FrameView {
  kind: FrameKind = 'request';
  retransmit = false;
  flags = 0;
  targetActorId = 0;
  requestId = 0;
  clientId = 0;
  checksum = 0;
  payloadOffset = HEADER_BYTES;
  payloadLength = 0;
}

/** Bytes a frame with `payloadBytes` of payload takes on the wire. */
export function frameSize(payloadBytes: number): number {
  return HEADER_BYTES + payloadBytes;
}

/** Most payload bytes a frame may carry under `maxFrameBytes`. */
export function maxPayloadBytes(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): number {
  return maxFrameBytes - HEADER_BYTES;
}

/** Throws RangeError unless `maxFrameBytes` is an integer in [HEADER_BYTES, MAX_UDP_PAYLOAD_BYTES]. */
export function checkMaxFrameBytes(maxFrameBytes: number): void {
  if (
    !Number.isInteger(maxFrameBytes) ||
    maxFrameBytes < HEADER_BYTES ||
    maxFrameBytes > MAX_UDP_PAYLOAD_BYTES
  ) {
    throw new RangeError(
      `maxFrameBytes must be an integer in [${HEADER_BYTES}, ${MAX_UDP_PAYLOAD_BYTES}], got ${maxFrameBytes}`,
    );
  }
}

function flagsOf(fields: FrameFields): number {
  switch (fields.kind) {
    case 'request':
      return fields.retransmit === true ? FLAG_REQUEST | FLAG_RETRANSMIT : FLAG_REQUEST;
    case 'reply':
      return FLAG_REPLY;
    case 'error':
      return FLAG_REPLY | FLAG_ERROR;
    case 'peer':
      return FLAG_PEER;
    case 'fragment':
      return FLAG_PEER | FLAG_FRAGMENT;
  }
}

function checkU32(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw new EncodeError(`frame ${name} must be a u32, got ${value}`);
  }
}

/** Little-endian field writers and readers of the wire's headers (fragments.ts uses them too). */
export function writeU16(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
}

export function writeU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

export function readU16(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

export function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** The checksum a frame of `payloadLength` bytes at `start` should carry (header fields already written). */
function frameChecksum(bytes: Uint8Array, start: number, payloadLength: number): number {
  const header = crc32c(bytes, start, start + OFFSET_CHECKSUM);
  const payloadStart = start + HEADER_BYTES;
  return crc32c(bytes, payloadStart, payloadStart + payloadLength, header);
}

/**
 * Writes the header of a frame whose `payloadLength` payload bytes already sit at
 * `into[offset + 24 ..]`, and its checksum. Returns the frame's size. For senders that encode the
 * payload in place (no copy). Throws EncodeError when a field is not a u32, the frame exceeds
 * `maxFrameBytes`, or `into` is too small.
 */
export function sealFrame(
  into: Uint8Array,
  fields: FrameFields,
  payloadLength: number,
  offset = 0,
  maxFrameBytes = DEFAULT_MAX_FRAME_BYTES,
): number {
  checkU32('target actor id', fields.targetActorId);
  checkU32('request id', fields.requestId);
  checkU32('client id', fields.clientId);
  const size = HEADER_BYTES + payloadLength;
  if (!Number.isInteger(payloadLength) || payloadLength < 0 || size > maxFrameBytes) {
    throw new EncodeError(
      `a frame with a ${payloadLength}-byte payload exceeds the ${maxFrameBytes}-byte frame limit ` +
        `(at most ${maxFrameBytes - HEADER_BYTES} payload bytes)`,
    );
  }
  if (!Number.isInteger(offset) || offset < 0 || offset + size > into.length) {
    throw new EncodeError(
      `a ${size}-byte frame does not fit at offset ${offset} of a ${into.length}-byte buffer`,
    );
  }
  writeU16(into, offset + OFFSET_MAGIC, WIRE_MAGIC);
  into[offset + OFFSET_VERSION] = WIRE_VERSION;
  into[offset + OFFSET_FLAGS] = flagsOf(fields);
  writeU32(into, offset + OFFSET_ACTOR, fields.targetActorId);
  writeU32(into, offset + OFFSET_REQUEST, fields.requestId);
  writeU32(into, offset + OFFSET_CLIENT, fields.clientId);
  writeU32(into, offset + OFFSET_LENGTH, payloadLength);
  writeU32(into, offset + OFFSET_CHECKSUM, frameChecksum(into, offset, payloadLength));
  return size;
}

/**
 * Encodes a frame into `into` at `offset`: header, then a copy of `payload`. Returns the frame's
 * size (`frameSize(payload.length)`). Throws EncodeError like `sealFrame`.
 */
export function encodeFrame(
  into: Uint8Array,
  fields: FrameFields,
  payload: Uint8Array,
  offset = 0,
  maxFrameBytes = DEFAULT_MAX_FRAME_BYTES,
): number {
  const size = HEADER_BYTES + payload.length;
  if (size <= maxFrameBytes && offset + size <= into.length && offset >= 0) {
    into.set(payload, offset + HEADER_BYTES);
  }
  return sealFrame(into, fields, payload.length, offset, maxFrameBytes);
}

/**
 * Rewrites, in place, a validated request frame into its reply (or error reply) header and
 * re-checksums it. For servers that answer in the datagram buffer they received (the echo server,
 * a NIC core answering from its packet buffer): no copy of the payload. `payloadLength` may differ
 * from the request's when the reply was written over it. Returns the reply's size.
 */
export function turnIntoReply(
  bytes: Uint8Array,
  kind: 'reply' | 'error',
  payloadLength: number,
  maxFrameBytes = DEFAULT_MAX_FRAME_BYTES,
): number {
  const size = HEADER_BYTES + payloadLength;
  if (size > maxFrameBytes || size > bytes.length) {
    throw new EncodeError(`a ${size}-byte reply exceeds the frame limit or its buffer`);
  }
  bytes[OFFSET_FLAGS] = kind === 'reply' ? FLAG_REPLY : FLAG_REPLY | FLAG_ERROR;
  writeU32(bytes, OFFSET_LENGTH, payloadLength);
  writeU32(bytes, OFFSET_CHECKSUM, frameChecksum(bytes, 0, payloadLength));
  return size;
}

/**
 * Marks an encoded request frame of `frameBytes` bytes as a retransmission (FLAG_RETRANSMIT) and
 * re-checksums it; ids and payload stay as they were, so the server can deduplicate by them.
 */
export function markRetransmit(bytes: Uint8Array, frameBytes: number): void {
  bytes[OFFSET_FLAGS] = FLAG_REQUEST | FLAG_RETRANSMIT;
  writeU32(bytes, OFFSET_CHECKSUM, frameChecksum(bytes, 0, frameBytes - HEADER_BYTES));
}

/**
 * Validates `bytes` (exactly one datagram) as a frame and fills `into`; returns undefined when it is
 * one, else why not. Never throws for any input bytes. Allocates nothing.
 */
export function readFrameInto(
  bytes: Uint8Array,
  into: FrameView,
  maxFrameBytes = DEFAULT_MAX_FRAME_BYTES,
): WireDropReason | undefined {
  const length = bytes.length;
  if (length > maxFrameBytes) return 'too-large';
  if (length < HEADER_BYTES) return 'short';
  if ((bytes[OFFSET_MAGIC]! | (bytes[OFFSET_MAGIC + 1]! << 8)) !== WIRE_MAGIC) return 'bad-magic';
  if (bytes[OFFSET_VERSION] !== WIRE_VERSION) return 'bad-version';
  const payloadLength = readU32(bytes, OFFSET_LENGTH);
  // A declared payload the limit could never hold is a sender bug or an attack, not truncation.
  if (payloadLength > maxFrameBytes - HEADER_BYTES) return 'too-large';
  if (HEADER_BYTES + payloadLength > length) return 'short';
  if (HEADER_BYTES + payloadLength < length) return 'bad-length';
  const checksum = readU32(bytes, OFFSET_CHECKSUM);
  if (frameChecksum(bytes, 0, payloadLength) !== checksum) return 'bad-checksum';
  const flags = bytes[OFFSET_FLAGS]!;
  let kind: FrameKind;
  if (flags === FLAG_REQUEST || flags === (FLAG_REQUEST | FLAG_RETRANSMIT)) kind = 'request';
  else if (flags === FLAG_REPLY) kind = 'reply';
  else if (flags === (FLAG_REPLY | FLAG_ERROR)) kind = 'error';
  else if (flags === FLAG_PEER) kind = 'peer';
  else if (flags === (FLAG_PEER | FLAG_FRAGMENT)) kind = 'fragment';
  else return 'bad-flags';
  into.kind = kind;
  into.retransmit = (flags & FLAG_RETRANSMIT) !== 0;
  into.flags = flags;
  into.targetActorId = readU32(bytes, OFFSET_ACTOR);
  into.requestId = readU32(bytes, OFFSET_REQUEST);
  into.clientId = readU32(bytes, OFFSET_CLIENT);
  into.checksum = checksum;
  into.payloadOffset = HEADER_BYTES;
  into.payloadLength = payloadLength;
  return undefined;
}

// decodeFrame is the convenient, allocating form; it reuses one view internally (decoding runs
// no user code, so calls cannot interleave) and copies the fields out into a fresh Frame.
const scratchView = new FrameView();

/**
 * Validates `bytes` (exactly one datagram) as a frame. Never throws for any input: bad bytes give
 * `{ ok: false, reason }`. The frame's payload is a view of `bytes`.
 */
export function decodeFrame(bytes: Uint8Array, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): DecodeFrameResult {
  if (!(bytes instanceof Uint8Array)) return { ok: false, reason: 'short' };
  const reason = readFrameInto(bytes, scratchView, maxFrameBytes);
  if (reason !== undefined) return { ok: false, reason };
  const v = scratchView;
  return {
    ok: true,
    frame: {
      kind: v.kind,
      retransmit: v.retransmit,
      version: WIRE_VERSION,
      flags: v.flags,
      targetActorId: v.targetActorId,
      requestId: v.requestId,
      clientId: v.clientId,
      checksum: v.checksum,
      payload: bytes.subarray(v.payloadOffset, v.payloadOffset + v.payloadLength),
    },
  };
}

// ---- error bodies -------------------------------------------------------------------------------

const utf8Encoder = new TextEncoder();
// Not fatal: an error message is for people; a bad byte in it should not hide the code.
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

/** Longest error code an error body can carry. */
export const MAX_ERROR_CODE_BYTES = 255;

/** A decoded error body, or why the bytes are not one. */
export type ErrorBodyResult =
  | { readonly ok: true; readonly code: string; readonly message: string }
  | { readonly ok: false; readonly problem: string };

/**
 * Writes an error body (code, message) at `into[offset..]`, using at most `maxBytes`. The code
 * must be 1..255 ASCII bytes; the message is cut (at a character boundary) to what fits, since a
 * shortened explanation is better than no error reply at all. Returns the bytes written.
 */
export function encodeErrorBody(
  into: Uint8Array,
  offset: number,
  code: string,
  message: string,
  maxBytes = into.length - offset,
): number {
  if (!/^[\x21-\x7e]{1,255}$/.test(code)) {
    throw new EncodeError(
      `an error code must be 1..255 printable ASCII characters, got ${JSON.stringify(code)}`,
    );
  }
  const needed = 1 + code.length + 2;
  if (needed > maxBytes || offset + needed > into.length) {
    throw new EncodeError(
      `an error body with code ${code} needs at least ${needed} bytes, ${maxBytes} available`,
    );
  }
  into[offset] = code.length;
  for (let i = 0; i < code.length; i++) into[offset + 1 + i] = code.charCodeAt(i);
  const messageAt = offset + needed;
  const room = Math.min(0xffff, maxBytes - needed, into.length - messageAt);
  // encodeInto never splits a character: it stops before one that would not fit.
  const { written } = utf8Encoder.encodeInto(message, into.subarray(messageAt, messageAt + room));
  writeU16(into, messageAt - 2, written);
  return needed + written;
}

/** Reads an error body spanning exactly `bytes[offset, offset + length)`. Never throws. */
export function decodeErrorBody(
  bytes: Uint8Array,
  offset = 0,
  length = bytes.length - offset,
): ErrorBodyResult {
  const end = offset + length;
  if (length < 3 || end > bytes.length) return { ok: false, problem: 'shorter than an error body' };
  const codeLength = bytes[offset]!;
  if (codeLength === 0) return { ok: false, problem: 'empty error code' };
  const messageLengthAt = offset + 1 + codeLength;
  if (messageLengthAt + 2 > end) return { ok: false, problem: 'error code runs past the body' };
  let code = '';
  for (let i = offset + 1; i < messageLengthAt; i++) {
    const c = bytes[i]!;
    if (c < 0x21 || c > 0x7e) return { ok: false, problem: 'error code is not printable ASCII' };
    code += String.fromCharCode(c);
  }
  const messageLength = bytes[messageLengthAt]! | (bytes[messageLengthAt + 1]! << 8);
  const messageAt = messageLengthAt + 2;
  if (messageAt + messageLength !== end)
    return { ok: false, problem: 'error message length does not match the body' };
  return { ok: true, code, message: utf8Decoder.decode(bytes.subarray(messageAt, end)) };
}

// ---- drop counters ------------------------------------------------------------------------------

/**
 * Why a receiver dropped a datagram: a wire reason, or a well-formed frame going the wrong way
 * ('unexpected-kind': a reply arriving at a server, a request at a client).
 */
export type DropReason = WireDropReason | 'unexpected-kind';

export const DROP_REASONS: readonly DropReason[] = Object.freeze([...WIRE_DROP_REASONS, 'unexpected-kind']);

const REASON_INDEX: ReadonlyMap<DropReason, number> = new Map(DROP_REASONS.map((r, i) => [r, i]));

/**
 * Counts dropped datagrams by reason, for a node's metrics. One Float64Array slot per reason
 * (exact to 2^53), so counting is an index and an add.
 */
export class DropCounters {
  readonly #counts = new Float64Array(DROP_REASONS.length);

  /** Counts one drop (or `count` drops) for `reason`. */
  add(reason: DropReason, count = 1): void {
    const index = REASON_INDEX.get(reason);
    if (index !== undefined) this.#counts[index]! += count;
  }

  /** Drops counted for `reason`. */
  get(reason: DropReason): number {
    const index = REASON_INDEX.get(reason);
    return index === undefined ? 0 : this.#counts[index]!;
  }

  /** Drops counted for every reason together. */
  get total(): number {
    let sum = 0;
    for (const count of this.#counts) sum += count;
    return sum;
  }

  /** Every reason with its count (zeros included), for printing and JSON. */
  snapshot(): Record<DropReason, number> {
    const out = {} as Record<DropReason, number>;
    for (let i = 0; i < DROP_REASONS.length; i++) out[DROP_REASONS[i]!] = this.#counts[i]!;
    return out;
  }

  reset(): void {
    this.#counts.fill(0);
  }
}
