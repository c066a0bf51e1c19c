/**
 * Variable-length leaf field kinds of the message codec: string and bytes (iPipe §3 "Actors":
 * request formats — keys and values of RKV, tuples of RTA).
 *
 *   string ... u32 byte length, then UTF-8 (well-formed only: lone surrogates are refused on
 *              encode, invalid UTF-8 on decode, so every string round-trips exactly)
 *   bytes .... u32 byte length, then the bytes; decoded as a copy, never a view of the input
 *
 * Both take an optional maxBytes, checked on encode and, before reading the content, on decode.
 */

import {
  BaseField,
  checkLimit,
  DecodeProblem,
  need,
  type ReadCursor,
  readU32At,
  show,
  U32_MAX,
  ValueProblem,
  writeU32,
} from './codec-field-base.ts';

const utf8Encoder = new TextEncoder();
// fatal: invalid UTF-8 is an error, not U+FFFD; ignoreBOM: a leading U+FEFF is data, not a marker
// to strip (otherwise "\uFEFFx" would decode as "x").
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// Up to this many UTF-16 units (or bytes, decoding) strings are converted by a JS loop. Measured
// with mitata on Node 20 for a 16-byte ASCII key: writing by loop is ~3.5x faster than
// TextEncoder.encodeInto on a subarray; reading by loop is on par with TextDecoder (kept because
// it allocates no subarray and needs no try/catch; non-ASCII falls through to TextDecoder).
const SHORT_STRING_UNITS = 48;

/** Bytes of `text` in UTF-8, or -1 when it holds a lone surrogate (not encodable faithfully). */
export function utf8ByteLength(text: string): number {
  const units = text.length;
  let bytes = units;
  for (let i = 0; i < units; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      bytes += 1;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1); // NaN past the end: fails the test below
      if (!(next >= 0xdc00 && next <= 0xdfff)) return -1;
      bytes += 2; // two units → four bytes
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return -1;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

function writeUtf8(target: Uint8Array, pos: number, text: string, byteLength: number): number {
  if (text.length > SHORT_STRING_UNITS) {
    utf8Encoder.encodeInto(text, target.subarray(pos, pos + byteLength));
    return pos + byteLength;
  }
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      target[pos++] = c;
    } else if (c < 0x800) {
      target[pos++] = 0xc0 | (c >> 6);
      target[pos++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdbff) {
      // measure() already proved the low surrogate is there.
      c = 0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
      target[pos++] = 0xf0 | (c >> 18);
      target[pos++] = 0x80 | ((c >> 12) & 0x3f);
      target[pos++] = 0x80 | ((c >> 6) & 0x3f);
      target[pos++] = 0x80 | (c & 0x3f);
    } else {
      target[pos++] = 0xe0 | (c >> 12);
      target[pos++] = 0x80 | ((c >> 6) & 0x3f);
      target[pos++] = 0x80 | (c & 0x3f);
    }
  }
  return pos;
}

function readUtf8(bytes: Uint8Array, start: number, byteLength: number): string | undefined {
  if (byteLength <= SHORT_STRING_UNITS) {
    // Short ASCII (keys, names) is the common case: build it directly, no subarray, no call out.
    let text = '';
    let i = 0;
    for (; i < byteLength; i++) {
      const b = bytes[start + i]!;
      if (b >= 0x80) break;
      text += String.fromCharCode(b);
    }
    if (i === byteLength) return text;
  }
  try {
    return utf8Decoder.decode(bytes.subarray(start, start + byteLength));
  } catch {
    return undefined;
  }
}

export class StringField extends BaseField<string> {
  readonly kind = 'string';
  readonly minBytes = 4;
  readonly fixedBytes = undefined;
  readonly maxBytes: number;
  constructor(maxBytes: number | undefined) {
    super();
    this.maxBytes = checkLimit('string maxBytes', maxBytes) ?? U32_MAX;
  }
  describe(): string {
    return this.maxBytes === U32_MAX ? 'string' : `string(maxBytes=${this.maxBytes})`;
  }
  measure(value: unknown): number {
    if (typeof value !== 'string') throw new ValueProblem(`expected a string, got ${show(value)}`);
    const byteLength = utf8ByteLength(value);
    if (byteLength < 0) {
      throw new ValueProblem('string holds a lone UTF-16 surrogate, which UTF-8 cannot carry faithfully');
    }
    if (byteLength > this.maxBytes) {
      throw new ValueProblem(`string is ${byteLength} UTF-8 bytes, over its limit of ${this.maxBytes}`);
    }
    return 4 + byteLength;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    const text = value as string;
    // Measured again rather than cached from measure(): a cache keyed by the string would cost a
    // compare per call too, and the scan is a tight loop over char codes.
    const byteLength = utf8ByteLength(text);
    writeU32(target, pos, byteLength);
    return writeUtf8(target, pos + 4, text, byteLength);
  }
  read(cursor: ReadCursor): string {
    need(cursor, 4, 'string length');
    const start = cursor.pos;
    const byteLength = readU32At(cursor.bytes, start);
    if (byteLength > this.maxBytes) {
      throw new DecodeProblem(
        'too-long',
        start,
        `string of ${byteLength} bytes is over its limit of ${this.maxBytes}`,
      );
    }
    cursor.pos += 4;
    need(cursor, byteLength, 'string');
    const text = readUtf8(cursor.bytes, cursor.pos, byteLength);
    if (text === undefined)
      throw new DecodeProblem('invalid-utf8', cursor.pos, `${byteLength} bytes are not valid UTF-8`);
    cursor.pos += byteLength;
    return text;
  }
}

// Copies of up to this many bytes are done with a loop; longer ones with set() on a subarray.
const SHORT_COPY_BYTES = 64;

export class BytesField extends BaseField<Uint8Array> {
  readonly kind = 'bytes';
  readonly minBytes = 4;
  readonly fixedBytes = undefined;
  readonly maxBytes: number;
  constructor(maxBytes: number | undefined) {
    super();
    this.maxBytes = checkLimit('bytes maxBytes', maxBytes) ?? U32_MAX;
  }
  describe(): string {
    return this.maxBytes === U32_MAX ? 'bytes' : `bytes(maxBytes=${this.maxBytes})`;
  }
  measure(value: unknown): number {
    if (!(value instanceof Uint8Array)) throw new ValueProblem(`expected a Uint8Array, got ${show(value)}`);
    if (value.length > this.maxBytes) {
      throw new ValueProblem(`bytes are ${value.length} long, over their limit of ${this.maxBytes}`);
    }
    return 4 + value.length;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    const source = value as Uint8Array;
    const length = source.length;
    writeU32(target, pos, length);
    pos += 4;
    if (length <= SHORT_COPY_BYTES) {
      for (let i = 0; i < length; i++) target[pos + i] = source[i]!;
    } else {
      target.set(source, pos);
    }
    return pos + length;
  }
  read(cursor: ReadCursor): Uint8Array {
    need(cursor, 4, 'bytes length');
    const start = cursor.pos;
    const length = readU32At(cursor.bytes, start);
    if (length > this.maxBytes) {
      throw new DecodeProblem(
        'too-long',
        start,
        `bytes of length ${length} are over their limit of ${this.maxBytes}`,
      );
    }
    cursor.pos += 4;
    need(cursor, length, 'bytes');
    // Always a copy: the input is usually a ring slot or a datagram buffer that gets reused, and
    // a handler may keep the value. A plain Uint8Array even when the input is a Buffer.
    const out = new Uint8Array(length);
    const { bytes, pos } = cursor;
    if (length <= SHORT_COPY_BYTES) {
      for (let i = 0; i < length; i++) out[i] = bytes[pos + i]!;
    } else {
      out.set(bytes.subarray(pos, pos + length));
    }
    cursor.pos = pos + length;
    return out;
  }
}
