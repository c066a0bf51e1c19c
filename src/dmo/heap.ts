/**
 * `RegionHeap`: the checked DMO API an actor uses on its own region (iPipe §3, "Distributed memory
 * objects", Table 4's dmo_malloc / dmo_free / dmo_memset / dmo_memcpy / dmo_memmove).
 *
 * Every call resolves the id through the object table before touching a byte, in this order:
 *   owner    an id of another actor                      → DmoForeignObjectError
 *   liveness slot 0, never allocated, freed, stale gen   → DmoUnknownObjectError
 *   range    offset/length not integers, or past the end → DmoOutOfBoundsError
 * and only then reads or writes, so a failed call changes nothing. Number accessors allocate
 * nothing: one typed-array row lookup, one range test, one DataView access (little-endian).
 */

import { DmoInvalidSizeError, DmoOutOfBoundsError } from '../errors.ts';
import type { ActorId, ObjectId } from '../ids.ts';
import type { Region } from './region.ts';
import type { DmoHeap, DmoHeapStats } from './types.ts';

let regionOfHeap: (heap: RegionHeap) => Region;

/** The DmoHeap over one actor's region of a DmoDomain. Made by `DmoDomain`, not by callers. */
export class RegionHeap implements DmoHeap {
  readonly owner: ActorId;
  readonly #region: Region;
  readonly #u8: Uint8Array;
  readonly #u32: Uint32Array;
  readonly #view: DataView;
  readonly #base: number;

  static {
    regionOfHeap = (heap) => heap.#region;
  }

  constructor(region: Region) {
    this.owner = region.owner;
    this.#region = region;
    this.#u8 = region.u8;
    this.#u32 = region.u32;
    this.#view = region.view;
    this.#base = region.base;
  }

  allocate(sizeBytes: number): ObjectId {
    return this.#region.allocate(sizeBytes);
  }

  free(id: ObjectId): void {
    this.#region.free(id);
  }

  sizeOf(id: ObjectId): number {
    const row = this.#region.lookup(id);
    if (row < 0) this.#region.failLookup(id);
    return this.#u32[row + 1]!;
  }

  has(id: ObjectId): boolean {
    return this.#region.lookup(id) >= 0;
  }

  fill(id: ObjectId, byte: number, offset = 0, length?: number): void {
    if (!Number.isInteger(byte) || byte < 0 || byte > 255) throw new DmoInvalidSizeError('fill byte', byte);
    const row = this.#row(id);
    const size = this.#u32[row + 1]!;
    const span = length ?? size - offset;
    this.#checkRange(id, offset, span, size);
    const start = this.#base + this.#u32[row]! + offset;
    this.#u8.fill(byte, start, start + span);
  }

  copy(dst: ObjectId, dstOffset: number, src: ObjectId, srcOffset: number, length: number): void {
    // copyWithin is memmove: overlap is handled correctly even though copy's contract forbids it.
    this.move(dst, dstOffset, src, srcOffset, length);
  }

  move(dst: ObjectId, dstOffset: number, src: ObjectId, srcOffset: number, length: number): void {
    const dstRow = this.#row(dst);
    const srcRow = this.#row(src);
    this.#checkRange(dst, dstOffset, length, this.#u32[dstRow + 1]!);
    this.#checkRange(src, srcOffset, length, this.#u32[srcRow + 1]!);
    const srcStart = this.#base + this.#u32[srcRow]! + srcOffset;
    this.#u8.copyWithin(this.#base + this.#u32[dstRow]! + dstOffset, srcStart, srcStart + length);
  }

  read(id: ObjectId, offset: number, length: number): Uint8Array {
    const row = this.#row(id);
    this.#checkRange(id, offset, length, this.#u32[row + 1]!);
    const start = this.#base + this.#u32[row]! + offset;
    return this.#u8.slice(start, start + length);
  }

  write(id: ObjectId, offset: number, bytes: Uint8Array): void {
    const row = this.#row(id);
    this.#checkRange(id, offset, bytes.length, this.#u32[row + 1]!);
    this.#u8.set(bytes, this.#base + this.#u32[row]! + offset);
  }

  bytes(id: ObjectId): Uint8Array {
    const row = this.#row(id);
    const start = this.#base + this.#u32[row]!;
    return this.#u8.subarray(start, start + this.#u32[row + 1]!);
  }

  readU8(id: ObjectId, offset: number): number {
    return this.#u8[this.#at(id, offset, 1)]!;
  }

  writeU8(id: ObjectId, offset: number, value: number): void {
    this.#u8[this.#at(id, offset, 1)] = value;
  }

  readU32(id: ObjectId, offset: number): number {
    return this.#view.getUint32(this.#at(id, offset, 4), true);
  }

  writeU32(id: ObjectId, offset: number, value: number): void {
    this.#view.setUint32(this.#at(id, offset, 4), value, true);
  }

  readI32(id: ObjectId, offset: number): number {
    return this.#view.getInt32(this.#at(id, offset, 4), true);
  }

  writeI32(id: ObjectId, offset: number, value: number): void {
    this.#view.setInt32(this.#at(id, offset, 4), value, true);
  }

  readF64(id: ObjectId, offset: number): number {
    return this.#view.getFloat64(this.#at(id, offset, 8), true);
  }

  writeF64(id: ObjectId, offset: number, value: number): void {
    this.#view.setFloat64(this.#at(id, offset, 8), value, true);
  }

  objects(): IterableIterator<ObjectId> {
    return this.#region.objects();
  }

  stats(): DmoHeapStats {
    return this.#region.stats();
  }

  /** Row of a live object of this heap, or throws. */
  #row(id: ObjectId): number {
    const row = this.#region.lookup(id);
    if (row < 0) this.#region.failLookup(id);
    return row;
  }

  /** Absolute byte index of [offset, offset + width) inside object `id`, or throws. */
  #at(id: ObjectId, offset: number, width: number): number {
    const row = this.#region.lookup(id);
    if (row < 0) this.#region.failLookup(id);
    const size = this.#u32[row + 1]!;
    // `>>> 0` rejects negatives, NaN and fractions in one test; the sum cannot overflow a double.
    if (offset >>> 0 !== offset || offset + width > size) {
      throw new DmoOutOfBoundsError(id, offset, width, size);
    }
    return this.#base + this.#u32[row]! + offset;
  }

  #checkRange(id: ObjectId, offset: number, length: number, size: number): void {
    if (offset >>> 0 !== offset || length >>> 0 !== length || offset + length > size) {
      throw new DmoOutOfBoundsError(id, offset, length, size);
    }
  }
}

/**
 * The region behind a heap, for the collections and snapshots of this area (they resolve an id
 * once and then work on the typed arrays). Refuses heaps that are not DmoDomain's.
 */
export function regionOf(heap: DmoHeap): Region {
  if (!(heap instanceof RegionHeap)) {
    throw new TypeError('DMO collections and snapshots need a heap made by DmoDomain');
  }
  return regionOfHeap(heap);
}
