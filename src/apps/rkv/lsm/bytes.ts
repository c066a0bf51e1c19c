/**
 * Byte-level helpers shared by the LSM engine's file formats: the key order, varints, a growable
 * output buffer and a bounds-checked input cursor.
 *
 * Key order is unsigned lexicographic by byte, a shorter prefix first — the order DmoSkipList
 * keeps (src/dmo/collections/skip-list.ts), so a memtable's iteration order is a table's order.
 *
 * Varints are LEB128 (7 bits per byte, low group first) for integers up to 2^53 − 1, so sequence
 * numbers and file offsets stay exact doubles. Every decode is bounds-checked and throws
 * `FormatError`, which the table and manifest readers turn into a typed corruption error that
 * names the file: bytes read from disk are untrusted even after their checksum passes (a checksum
 * can collide, and a bug in a writer must not become an out-of-bounds read).
 */

/** Thrown by the decoders below; callers wrap it in an error naming the file. */
export class FormatError extends Error {}

/** The largest integer a varint may carry (exact in a double). */
export const MAX_VARINT = Number.MAX_SAFE_INTEGER;

/** −, 0, + as `a` sorts before, with, or after `b` (unsigned bytes, shorter prefix first). */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  const aLength = a.length;
  const bLength = b.length;
  const common = Math.min(aLength, bLength);
  for (let i = 0; i < common; i++) {
    const difference = a[i]! - b[i]!;
    if (difference !== 0) return difference;
  }
  return aLength - bLength;
}

/** True when the two byte strings are equal. */
export function keysEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Bytes a varint of `value` takes. */
export function varintBytes(value: number): number {
  let bytes = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) bytes++;
  return bytes;
}

/** Little-endian u64 (< 2^53) at `offset`. */
export function writeU64(view: DataView, offset: number, value: number): void {
  view.setUint32(offset, value % 0x1_0000_0000, true);
  view.setUint32(offset + 4, Math.floor(value / 0x1_0000_0000), true);
}

/** Little-endian u64 at `offset`; throws FormatError when it is not an exact double. */
export function readU64(view: DataView, offset: number): number {
  const low = view.getUint32(offset, true);
  const high = view.getUint32(offset + 4, true);
  if (high > 0x1f_ffff) throw new FormatError(`u64 at ${offset} exceeds 2^53`);
  return high * 0x1_0000_0000 + low;
}

/** A growable byte buffer written front to back (blocks and files are built in one). */
export class ByteWriter {
  #bytes: Uint8Array;
  #view: DataView;
  /** Bytes written so far. */
  length = 0;

  constructor(initialBytes = 4096) {
    this.#bytes = new Uint8Array(initialBytes);
    this.#view = new DataView(this.#bytes.buffer);
  }

  /** The written bytes as a view (valid until the next write). */
  view(): Uint8Array {
    return this.#bytes.subarray(0, this.length);
  }

  /** Makes room for `bytes` more bytes. */
  reserve(bytes: number): void {
    const needed = this.length + bytes;
    if (needed <= this.#bytes.length) return;
    let capacity = this.#bytes.length * 2;
    while (capacity < needed) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.#bytes.subarray(0, this.length));
    this.#bytes = grown;
    this.#view = new DataView(grown.buffer);
  }

  u8(value: number): void {
    this.reserve(1);
    this.#bytes[this.length++] = value;
  }

  u32(value: number): void {
    this.reserve(4);
    this.#view.setUint32(this.length, value >>> 0, true);
    this.length += 4;
  }

  u64(value: number): void {
    this.reserve(8);
    writeU64(this.#view, this.length, value);
    this.length += 8;
  }

  varint(value: number): void {
    this.reserve(8);
    const bytes = this.#bytes;
    let position = this.length;
    let rest = value;
    // Bit operations are exact below 2^31; the division path handles the rest up to 2^53.
    while (rest >= 0x8000_0000) {
      bytes[position++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    while (rest >= 0x80) {
      bytes[position++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    bytes[position++] = rest;
    this.length = position;
  }

  bytes(source: Uint8Array, start = 0, end = source.length): void {
    const length = end - start;
    this.reserve(length);
    this.#bytes.set(start === 0 && end === source.length ? source : source.subarray(start, end), this.length);
    this.length += length;
  }

  /** A varint length followed by the bytes. */
  lengthPrefixed(source: Uint8Array): void {
    this.varint(source.length);
    this.bytes(source);
  }

  /** Overwrites a u32 already written at `offset`. */
  patchU32(offset: number, value: number): void {
    this.#view.setUint32(offset, value >>> 0, true);
  }

  /** Forgets the contents, keeping the capacity. */
  reset(): void {
    this.length = 0;
  }
}

/** A bounds-checked cursor over untrusted bytes; every read throws FormatError past the end. */
export class ByteReader {
  readonly bytes: Uint8Array;
  position: number;
  readonly end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.position = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  u8(): number {
    if (this.position >= this.end) throw new FormatError('unexpected end of data');
    return this.bytes[this.position++]!;
  }

  varint(): number {
    const bytes = this.bytes;
    let position = this.position;
    const end = this.end;
    let result = 0;
    let multiplier = 1;
    for (;;) {
      if (position >= end) throw new FormatError('varint runs past the end of its data');
      const byte = bytes[position++]!;
      result += (byte & 0x7f) * multiplier;
      if (byte < 0x80) break;
      multiplier *= 0x80;
      if (multiplier > 2 ** 49) throw new FormatError('varint longer than 8 bytes');
    }
    if (result > MAX_VARINT) throw new FormatError('varint exceeds 2^53');
    this.position = position;
    return result;
  }

  /** Steps over the next `length` bytes; returns where they start (no view is made). */
  skip(length: number): number {
    if (length < 0 || length > this.end - this.position) {
      throw new FormatError(`${length} bytes requested, ${this.end - this.position} left`);
    }
    const start = this.position;
    this.position += length;
    return start;
  }

  /** A view of the next `length` bytes. */
  view(length: number): Uint8Array {
    if (length < 0 || length > this.end - this.position) {
      throw new FormatError(`${length} bytes requested, ${this.end - this.position} left`);
    }
    const start = this.position;
    this.position += length;
    return this.bytes.subarray(start, start + length);
  }

  /** A copy of a varint-length-prefixed byte string. */
  lengthPrefixed(): Uint8Array {
    return this.view(this.varint()).slice();
  }
}
