/**
 * A minimal little-endian byte writer and reader for the consensus layer's durable records and
 * snapshots (file storage, KV snapshot and codec). Not a hot path: records are written once per
 * accepted slot. The reader throws `RangeError` on a short buffer; callers that read untrusted
 * bytes (recovery) catch it and treat the record as invalid.
 */

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

export class ByteWriter {
  #buffer: Uint8Array;
  #view: DataView;
  #length = 0;

  constructor(initialBytes = 64) {
    this.#buffer = new Uint8Array(initialBytes);
    this.#view = new DataView(this.#buffer.buffer);
  }

  #reserve(bytes: number): void {
    if (this.#length + bytes <= this.#buffer.length) return;
    let capacity = this.#buffer.length * 2;
    while (capacity < this.#length + bytes) capacity *= 2;
    const next = new Uint8Array(capacity);
    next.set(this.#buffer.subarray(0, this.#length));
    this.#buffer = next;
    this.#view = new DataView(next.buffer);
  }

  u8(value: number): this {
    this.#reserve(1);
    this.#view.setUint8(this.#length, value);
    this.#length += 1;
    return this;
  }

  u32(value: number): this {
    this.#reserve(4);
    this.#view.setUint32(this.#length, value, true);
    this.#length += 4;
    return this;
  }

  /** A double: every slot, ballot, client id and sequence number here is a safe integer. */
  f64(value: number): this {
    this.#reserve(8);
    this.#view.setFloat64(this.#length, value, true);
    this.#length += 8;
    return this;
  }

  /** Bytes as they are (no length prefix). */
  raw(value: Uint8Array): this {
    this.#reserve(value.length);
    this.#buffer.set(value, this.#length);
    this.#length += value.length;
    return this;
  }

  /** Length-prefixed (u32) bytes. */
  bytes(value: Uint8Array): this {
    this.u32(value.length);
    this.#reserve(value.length);
    this.#buffer.set(value, this.#length);
    this.#length += value.length;
    return this;
  }

  /** Length-prefixed UTF-8. */
  string(value: string): this {
    return this.bytes(textEncoder.encode(value));
  }

  get length(): number {
    return this.#length;
  }

  /** A copy of the bytes written so far. */
  finish(): Uint8Array {
    return this.#buffer.slice(0, this.#length);
  }
}

export class ByteReader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #offset: number;

  constructor(bytes: Uint8Array, offset = 0) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#offset = offset;
  }

  #need(bytes: number): void {
    if (this.#offset + bytes > this.#bytes.length) {
      throw new RangeError(`need ${bytes} byte(s) at offset ${this.#offset}, have ${this.#bytes.length}`);
    }
  }

  u8(): number {
    this.#need(1);
    const value = this.#view.getUint8(this.#offset);
    this.#offset += 1;
    return value;
  }

  u32(): number {
    this.#need(4);
    const value = this.#view.getUint32(this.#offset, true);
    this.#offset += 4;
    return value;
  }

  f64(): number {
    this.#need(8);
    const value = this.#view.getFloat64(this.#offset, true);
    this.#offset += 8;
    return value;
  }

  /** A safe non-negative integer stored as f64 (slot, ballot, id, seq); RangeError otherwise. */
  count(): number {
    const value = this.f64();
    if (!(Number.isSafeInteger(value) && value >= 0)) throw new RangeError(`not a count: ${value}`);
    return value;
  }

  bytes(): Uint8Array {
    const length = this.u32();
    this.#need(length);
    const value = this.#bytes.slice(this.#offset, this.#offset + length);
    this.#offset += length;
    return value;
  }

  string(): string {
    return textDecoder.decode(this.bytes());
  }

  get offset(): number {
    return this.#offset;
  }

  get remaining(): number {
    return this.#bytes.length - this.#offset;
  }
}
