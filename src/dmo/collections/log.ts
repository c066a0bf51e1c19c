/**
 * `DmoLog`: an append-only log of byte records in DMOs — the Multi-Paxos log and the 2PC
 * coordinator log of iPipe §5's RKV and DT applications, which truncate their prefix once a
 * snapshot covers it.
 *
 * Objects and links (local ids: generation·2^24 + slot, owner implied; 0 = none):
 *
 *   root    (32 B)  [magic, version, count, capacity, head, ring link, firstIndex f64]
 *   ring    (capacity × 4 B)  a circular array of record links; record i (counting from the
 *                             oldest kept) is at ring[(head + i) mod capacity]
 *   record  (n B)   the record's bytes
 *
 *           head                         head + count
 *            v                            v
 *   ring: [ . . r5 r6 r7 r8 r9 . . . . . ]            firstIndex = 5, nextIndex = 10
 *
 * Indices are absolute and never reused: `append` returns firstIndex + count, and
 * `truncatePrefix(i)` drops records below i (freeing them) without renumbering the rest. The ring
 * doubles when full; it is stored as one object so the log costs one object per record plus two.
 */

import { DmoCollectionFormatError, DmoInvalidSizeError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import { regionOf } from '../heap.ts';
import type { Region } from '../region.ts';
import type { DmoHeap } from '../types.ts';
import { checkRoot, initRoot } from './collection-header.ts';

const ROOT_BYTES = 32;
const ROOT = { count: 2, capacity: 3, head: 4, ring: 5 } as const;
/** firstIndex is a float64 at byte 24 of the root (8-aligned), so indices may pass 2^32. */
const FIRST_INDEX_BYTE = 24;
const DEFAULT_CAPACITY = 16;

/** How a log starts. */
export interface DmoLogOptions {
  /** Ring slots to start with (default 16; doubles as needed). */
  readonly initialCapacity?: number;
  /** Index of the first record (default 0): a log rebuilt after a snapshot may start later. */
  readonly firstIndex?: number;
}

/** An append-only log of byte records stored in one actor's DMOs; re-open it by `rootId`. */
export class DmoLog {
  /** The root object's id: keep it to re-open the log. */
  readonly rootId: ObjectId;
  readonly #region: Region;
  readonly #rootLocal: number;

  private constructor(region: Region, rootId: ObjectId) {
    this.#region = region;
    this.rootId = rootId;
    this.#rootLocal = region.localOf(rootId);
  }

  /** A new empty log in `heap`. */
  static create(heap: DmoHeap, options: DmoLogOptions = {}): DmoLog {
    const region = regionOf(heap);
    const capacity = options.initialCapacity ?? DEFAULT_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > 2 ** 28) {
      throw new DmoInvalidSizeError('log initial capacity', capacity);
    }
    const firstIndex = options.firstIndex ?? 0;
    if (!Number.isSafeInteger(firstIndex) || firstIndex < 0) {
      throw new DmoInvalidSizeError('log first index', firstIndex);
    }
    const ringId = region.allocate(capacity * 4);
    let rootId: ObjectId;
    try {
      rootId = region.allocate(ROOT_BYTES);
    } catch (error) {
      region.free(ringId);
      throw error;
    }
    const root = initRoot(region, rootId, 'log');
    region.u32[root + ROOT.capacity] = capacity;
    region.u32[root + ROOT.ring] = region.localOf(ringId);
    region.f64[(root * 4 + FIRST_INDEX_BYTE) >>> 3] = firstIndex;
    return new DmoLog(region, rootId);
  }

  /** Re-opens the log whose root is `rootId`. */
  static open(heap: DmoHeap, rootId: ObjectId): DmoLog {
    const region = regionOf(heap);
    checkRoot(region, rootId, 'log', ROOT_BYTES);
    return new DmoLog(region, rootId);
  }

  /** Records currently kept. */
  get length(): number {
    return this.#region.u32[this.#rootWord() + ROOT.count]!;
  }

  /** Index of the oldest kept record (= nextIndex when empty). */
  get firstIndex(): number {
    return this.#region.f64[(this.#rootWord() * 4 + FIRST_INDEX_BYTE) >>> 3]!;
  }

  /** Index the next append will get. */
  get nextIndex(): number {
    return this.firstIndex + this.length;
  }

  /** Appends a copy of `record`; returns its index. */
  append(record: Uint8Array): number {
    const region = this.#region;
    const u32 = region.u32;
    let root = this.#rootWord();
    if (u32[root + ROOT.count] === u32[root + ROOT.capacity]) {
      this.#grow();
      root = this.#rootWord();
    }
    const recordId = region.allocate(record.length);
    region.u8.set(record, region.startOf(recordId));
    const count = u32[root + ROOT.count]!;
    const capacity = u32[root + ROOT.capacity]!;
    const ring = this.#ringWord(root);
    u32[ring + ((u32[root + ROOT.head]! + count) % capacity)] = region.localOf(recordId);
    u32[root + ROOT.count] = count + 1;
    return region.f64[(root * 4 + FIRST_INDEX_BYTE) >>> 3]! + count;
  }

  /** A copy of record `index`, or undefined when it was truncated or not yet appended. */
  read(index: number): Uint8Array | undefined {
    const row = this.#recordRow(index);
    if (row < 0) return undefined;
    const start = this.#region.rowStart(row);
    return this.#region.u8.slice(start, start + this.#region.rowSize(row));
  }

  /** Copies record `index` into `target` if it fits; returns its length, or −1 when absent. */
  readInto(index: number, target: Uint8Array, targetOffset = 0): number {
    const row = this.#recordRow(index);
    if (row < 0) return -1;
    const start = this.#region.rowStart(row);
    const length = this.#region.rowSize(row);
    if (targetOffset >>> 0 === targetOffset && targetOffset + length <= target.length) {
      target.set(this.#region.u8.subarray(start, start + length), targetOffset);
    }
    return length;
  }

  /** Byte length of record `index`, or −1 when absent. */
  recordLength(index: number): number {
    const row = this.#recordRow(index);
    return row < 0 ? -1 : this.#region.rowSize(row);
  }

  /** Drops (and frees) every record with an index below `index`. Returns how many were dropped. */
  truncatePrefix(index: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const firstByte = root * 4 + FIRST_INDEX_BYTE;
    const first = region.f64[firstByte >>> 3]!;
    const count = u32[root + ROOT.count]!;
    const drop = Math.min(count, Math.max(0, Math.floor(index - first)));
    if (!(drop > 0)) return 0;
    const capacity = u32[root + ROOT.capacity]!;
    const ring = this.#ringWord(root);
    let head = u32[root + ROOT.head]!;
    for (let i = 0; i < drop; i++) {
      region.free(region.idOf(u32[ring + head]!));
      u32[ring + head] = 0;
      head = (head + 1) % capacity;
    }
    u32[root + ROOT.head] = head;
    u32[root + ROOT.count] = count - drop;
    region.f64[firstByte >>> 3] = first + drop;
    return drop;
  }

  /** Drops (and frees) every record with an index ≥ `index`. Returns how many were dropped. */
  truncateSuffix(index: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const first = region.f64[(root * 4 + FIRST_INDEX_BYTE) >>> 3]!;
    const count = u32[root + ROOT.count]!;
    const keep = Math.min(count, Math.max(0, Math.ceil(index - first)));
    if (!(keep < count)) return 0;
    const capacity = u32[root + ROOT.capacity]!;
    const ring = this.#ringWord(root);
    const head = u32[root + ROOT.head]!;
    for (let i = keep; i < count; i++) {
      const at = ring + ((head + i) % capacity);
      region.free(region.idOf(u32[at]!));
      u32[at] = 0;
    }
    u32[root + ROOT.count] = keep;
    return count - keep;
  }

  /** [index, record copy] pairs, oldest first; records appended while iterating are included. */
  *entries(): IterableIterator<[number, Uint8Array]> {
    for (let index = this.firstIndex; index < this.nextIndex; index++) {
      const record = this.read(index);
      if (record !== undefined) yield [index, record];
    }
  }

  *values(): IterableIterator<Uint8Array> {
    for (const [, record] of this.entries()) yield record;
  }

  [Symbol.iterator](): IterableIterator<[number, Uint8Array]> {
    return this.entries();
  }

  /** Frees every object of the log, root included; it must not be used afterwards. */
  destroy(): void {
    this.truncateSuffix(this.firstIndex);
    const region = this.#region;
    region.free(region.idOf(region.u32[this.#rootWord() + ROOT.ring]!));
    region.free(this.rootId);
  }

  #rootWord(): number {
    return this.#region.startOfLocal(this.#rootLocal) >>> 2;
  }

  /**
   * Word index of the ring, after checking that the stored capacity, head and count fit it (they
   * are used to compute addresses, so they are treated as untrusted).
   */
  #ringWord(root: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const link = u32[root + ROOT.ring]!;
    const row = region.lookupLinked(link);
    if (row < 0) region.failLookup(region.idOf(link));
    const capacity = u32[root + ROOT.capacity]!;
    if (
      capacity < 1 ||
      capacity * 4 > region.rowSize(row) ||
      u32[root + ROOT.head]! >= capacity ||
      u32[root + ROOT.count]! > capacity
    ) {
      throw new DmoCollectionFormatError(
        `DmoLog ${this.rootId} is damaged: its ring does not fit its object`,
      );
    }
    return region.rowStart(row) >>> 2;
  }

  /** Row of record `index`'s object, or −1 when the index is outside the kept range. */
  #recordRow(index: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const offset = index - region.f64[(root * 4 + FIRST_INDEX_BYTE) >>> 3]!;
    const count = u32[root + ROOT.count]!;
    if (!(offset >= 0 && offset < count) || !Number.isInteger(offset)) return -1;
    const capacity = u32[root + ROOT.capacity]!;
    const ring = this.#ringWord(root);
    const link = u32[ring + ((u32[root + ROOT.head]! + offset) % capacity)]!;
    const row = region.lookupLocal(link);
    if (row < 0) region.failLookup(region.idOf(link));
    return row;
  }

  /** Doubles the ring, unrolling it so the oldest record is at slot 0. */
  #grow(): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const capacity = u32[root + ROOT.capacity]!;
    if (capacity >= 2 ** 28) throw new DmoInvalidSizeError('log capacity', capacity * 2);
    const newRingId = region.allocate(capacity * 8);
    const oldLink = u32[root + ROOT.ring]!;
    const oldRing = this.#ringWord(root);
    const newRing = region.startOf(newRingId) >>> 2;
    const head = u32[root + ROOT.head]!;
    const count = u32[root + ROOT.count]!;
    for (let i = 0; i < count; i++) u32[newRing + i] = u32[oldRing + ((head + i) % capacity)]!;
    u32[root + ROOT.capacity] = capacity * 2;
    u32[root + ROOT.head] = 0;
    u32[root + ROOT.ring] = region.localOf(newRingId);
    region.free(region.idOf(oldLink));
  }
}
