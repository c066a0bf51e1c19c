/**
 * SSTable blocks: the checksummed unit every table read and write works in, and the sorted data
 * block format (after LevelDB's: prefix-compressed keys with restart points).
 *
 * Every block on disk, of any type:
 *
 *   ┌──────────────── payload ────────────────┬─ type u8 ─┬─ crc32c u32 LE ─┐
 *   │ (data, index, filter or properties)     │  1..4     │ over payload+type│
 *   └─────────────────────────────────────────┴───────────┴─────────────────┘
 *
 * The type byte is under the checksum, so a block handle that points at the wrong block (a
 * damaged index) fails the check instead of being parsed as something else.
 *
 * Data block payload (keys in strictly increasing order):
 *
 *   entry*  restart_offset u32 LE * R   R u32 LE
 *   entry = shared varint · unshared varint · valueLength varint · sequence varint · kind u8 ·
 *           key[shared..] (unshared bytes) · value (valueLength bytes)
 *
 * `shared` is how many leading bytes the key has in common with the previous key; every
 * RESTART_INTERVAL-th entry stores its whole key (shared = 0) and its offset is in the restart
 * array, so a lookup binary-searches the restarts and then decodes at most RESTART_INTERVAL
 * entries. kind: 1 put, 2 tombstone (valueLength 0).
 */

import { crc32c } from '../../../dmo/crc32c.ts';
import { ByteReader, type ByteWriter, FormatError, MAX_VARINT } from './bytes.ts';
import type { LsmEntry } from './memtable.ts';

export const BLOCK_TYPE = { data: 1, index: 2, filter: 3, properties: 4 } as const;
export type BlockType = (typeof BLOCK_TYPE)[keyof typeof BLOCK_TYPE];
/** type byte + crc32c. */
export const BLOCK_TRAILER_BYTES = 5;
/** Entries between full keys in a data block. */
export const RESTART_INTERVAL = 16;
const KIND_PUT = 1;
const KIND_TOMBSTONE = 2;

/** Appends the trailer (type, checksum) to a payload already in `writer` starting at `start`. */
export function sealBlock(writer: ByteWriter, start: number, type: BlockType): void {
  writer.u8(type);
  const bytes = writer.view();
  writer.u32(crc32c(bytes, start, bytes.length));
}

/**
 * Checks a whole block (payload + trailer) read from disk; returns its payload, or a string that
 * says what is wrong (the table reader wraps it in an error naming the file).
 */
export function openBlock(block: Uint8Array, type: BlockType): Uint8Array | string {
  if (block.length < BLOCK_TRAILER_BYTES)
    return `a block of ${block.length} bytes is shorter than its trailer`;
  const payloadEnd = block.length - BLOCK_TRAILER_BYTES;
  const stored =
    (block[payloadEnd + 1]! |
      (block[payloadEnd + 2]! << 8) |
      (block[payloadEnd + 3]! << 16) |
      (block[payloadEnd + 4]! << 24)) >>>
    0;
  const computed = crc32c(block, 0, payloadEnd + 1);
  if (stored !== computed) {
    return `block checksum mismatch (stored ${hex32(stored)}, computed ${hex32(computed)})`;
  }
  if (block[payloadEnd] !== type) return `block of type ${block[payloadEnd]} where type ${type} was expected`;
  return block.subarray(0, payloadEnd);
}

function hex32(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}

/** Builds one data block's payload. */
export class DataBlockBuilder {
  readonly #writer: ByteWriter;
  readonly #restarts: number[] = [];
  /** A copy of the last key added (entries may be views that change after `add` returns). */
  #previousKey = new Uint8Array(64);
  #previousKeyLength = 0;
  #sinceRestart = 0;
  #start = 0;
  #entries = 0;

  /** Writes into `writer` (the table's file buffer) from its current end. */
  constructor(writer: ByteWriter) {
    this.#writer = writer;
    this.#start = writer.length;
  }

  /** Starts a new block at the writer's current end. */
  reset(): void {
    this.#restarts.length = 0;
    this.#previousKeyLength = 0;
    this.#sinceRestart = 0;
    this.#start = this.#writer.length;
    this.#entries = 0;
  }

  get entryCount(): number {
    return this.#entries;
  }

  /** Payload bytes so far, plus the restart array it would end with. */
  get estimatedBytes(): number {
    return this.#writer.length - this.#start + 4 * (this.#restarts.length + 1);
  }

  /** Appends an entry; the caller guarantees strictly increasing keys. */
  add(entry: LsmEntry): void {
    const writer = this.#writer;
    const key = entry.key;
    let shared = 0;
    if (this.#sinceRestart === RESTART_INTERVAL || this.#entries === 0) {
      this.#restarts.push(writer.length - this.#start);
      this.#sinceRestart = 0;
    } else {
      const previous = this.#previousKey;
      const limit = Math.min(this.#previousKeyLength, key.length);
      while (shared < limit && previous[shared] === key[shared]) shared++;
    }
    writer.varint(shared);
    writer.varint(key.length - shared);
    if (entry.kind === 'put') {
      writer.varint(entry.value.length);
      writer.varint(entry.sequence);
      writer.u8(KIND_PUT);
      writer.bytes(key, shared);
      writer.bytes(entry.value);
    } else {
      writer.varint(0);
      writer.varint(entry.sequence);
      writer.u8(KIND_TOMBSTONE);
      writer.bytes(key, shared);
    }
    if (this.#previousKey.length < key.length)
      this.#previousKey = new Uint8Array(Math.max(key.length, 2 * this.#previousKey.length));
    this.#previousKey.set(key);
    this.#previousKeyLength = key.length;
    this.#sinceRestart++;
    this.#entries++;
  }

  /** Appends the restart array (the payload is then complete; the caller seals it). */
  finish(): void {
    for (const restart of this.#restarts) this.#writer.u32(restart);
    this.#writer.u32(this.#restarts.length);
  }
}

/**
 * A cursor over one data block's payload. Decodes lazily; `key` is a scratch buffer reused between
 * entries (copy it to keep it). Throws FormatError on malformed bytes.
 */
export class DataBlockCursor {
  readonly #payload: Uint8Array;
  readonly #reader: ByteReader;
  readonly #restartsStart: number;
  readonly #restartCount: number;
  readonly #view: DataView;
  #key = new Uint8Array(64);
  #keyLength = 0;
  #valueStart = 0;
  #valueLength = 0;
  #sequence = 0;
  #kind = 0;
  /** Offset of the next entry to decode. */
  #next = 0;
  #valid = false;

  constructor(payload: Uint8Array) {
    this.#payload = payload;
    this.#view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    if (payload.length < 4) throw new FormatError('data block shorter than its restart count');
    const restartCount = this.#view.getUint32(payload.length - 4, true);
    const restartsStart = payload.length - 4 - 4 * restartCount;
    if (restartCount === 0 || restartsStart < 0) {
      throw new FormatError(`data block with ${restartCount} restarts in ${payload.length} bytes`);
    }
    this.#restartCount = restartCount;
    this.#restartsStart = restartsStart;
    this.#reader = new ByteReader(payload, 0, restartsStart);
  }

  get valid(): boolean {
    return this.#valid;
  }

  /** The current key (a view of a reused buffer). */
  get key(): Uint8Array {
    return this.#key.subarray(0, this.#keyLength);
  }

  get sequence(): number {
    return this.#sequence;
  }

  /** compareKeys(current key, `key`) without making a view of the current key. */
  compareKey(key: Uint8Array): number {
    return compareScratch(this.#key, this.#keyLength, key);
  }

  get isTombstone(): boolean {
    return this.#kind === KIND_TOMBSTONE;
  }

  /** A copy of the current entry. */
  entry(): LsmEntry {
    const key = this.#key.slice(0, this.#keyLength);
    if (this.#kind === KIND_TOMBSTONE) return { kind: 'tombstone', key, sequence: this.#sequence };
    return { kind: 'put', key, sequence: this.#sequence, value: this.value() };
  }

  /** The current entry as views of the cursor's buffers: valid until the cursor moves. */
  borrowEntry(): LsmEntry {
    const key = this.#key.subarray(0, this.#keyLength);
    if (this.#kind === KIND_TOMBSTONE) return { kind: 'tombstone', key, sequence: this.#sequence };
    const value = this.#payload.subarray(this.#valueStart, this.#valueStart + this.#valueLength);
    return { kind: 'put', key, sequence: this.#sequence, value };
  }

  /** A copy of the current value (empty for a tombstone). */
  value(): Uint8Array {
    return this.#payload.slice(this.#valueStart, this.#valueStart + this.#valueLength);
  }

  seekToFirst(): void {
    this.#seekRestart(0);
    this.next();
  }

  /** Positions at the first entry whose key is ≥ `target` (invalid when there is none). */
  seek(target: Uint8Array): void {
    // Binary search for the last restart whose key is < target; decode forward from there.
    let low = 0;
    let high = this.#restartCount - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      this.#seekRestart(middle);
      this.next();
      if (!this.#valid) throw new FormatError('restart point past the entries');
      if (compareScratch(this.#key, this.#keyLength, target) < 0) low = middle;
      else high = middle - 1;
    }
    this.#seekRestart(low);
    for (this.next(); this.#valid; this.next()) {
      if (compareScratch(this.#key, this.#keyLength, target) >= 0) return;
    }
  }

  /** Advances to the next entry (invalid at the end). */
  next(): void {
    const reader = this.#reader;
    reader.position = this.#next;
    if (reader.position >= this.#restartsStart) {
      this.#valid = false;
      return;
    }
    const shared = reader.varint();
    const unshared = reader.varint();
    const valueLength = reader.varint();
    const sequence = reader.varint();
    const kind = reader.u8();
    if (shared > this.#keyLength)
      throw new FormatError(`entry shares ${shared} bytes of a ${this.#keyLength}-byte key`);
    if (kind !== KIND_PUT && (kind !== KIND_TOMBSTONE || valueLength !== 0)) {
      throw new FormatError(`entry of kind ${kind} with a ${valueLength}-byte value`);
    }
    if (sequence < 1 || sequence > MAX_VARINT) throw new FormatError(`entry with sequence ${sequence}`);
    // Hot path (every entry a seek or scan passes): positions and a byte loop, no views made.
    const suffixStart = reader.skip(unshared);
    const keyLength = shared + unshared;
    if (keyLength > this.#key.length) {
      const grown = new Uint8Array(Math.max(keyLength, this.#key.length * 2));
      grown.set(this.#key.subarray(0, shared));
      this.#key = grown;
    }
    const key = this.#key;
    const payload = this.#payload;
    for (let i = 0; i < unshared; i++) key[shared + i] = payload[suffixStart + i]!;
    this.#keyLength = keyLength;
    this.#valueStart = reader.skip(valueLength);
    this.#valueLength = valueLength;
    this.#sequence = sequence;
    this.#kind = kind;
    this.#next = reader.position;
    this.#valid = true;
  }

  #seekRestart(index: number): void {
    const offset = this.#view.getUint32(this.#restartsStart + 4 * index, true);
    if (offset >= this.#restartsStart) throw new FormatError(`restart offset ${offset} past the entries`);
    this.#next = offset;
    this.#keyLength = 0;
    this.#valid = false;
  }
}

/** compareKeys for a key held in the first `length` bytes of a scratch buffer. */
function compareScratch(scratch: Uint8Array, length: number, key: Uint8Array): number {
  const common = Math.min(length, key.length);
  for (let i = 0; i < common; i++) {
    const difference = scratch[i]! - key[i]!;
    if (difference !== 0) return difference;
  }
  return length - key.length;
}

/** compareKeys(cursor's key, key) without copying the cursor's key. */
export function compareCursorKey(cursor: DataBlockCursor, key: Uint8Array): number {
  return cursor.compareKey(key);
}
