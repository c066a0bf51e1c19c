/**
 * `DmoNumberMap`: a number → number hash map in one DMO table (iPipe §3 "Distributed memory
 * objects"; the real-time analytics counters of §5 — word counts, flow counters — are this shape).
 *
 * The general DmoHashMap keeps one object per entry; a numeric map needs none. Two objects:
 *
 *   root   (32 B)  [magic, version, count, capacity, table link, seed, table offset, epoch]
 *   table  (capacity × 17 B)  pairs [key f64, value f64] × capacity, then one state byte per slot
 *                             (0 empty, 1 full)
 *
 * Linear probing, load ≤ 3/4, doubling growth, backward-shift deletion (as DmoHashMap). Keys use
 * Map's SameValueZero: −0 and +0 are one key, NaN is a key equal to itself. Integer keys in the
 * int32 range hash without touching memory; other numbers hash their IEEE-754 bits. The table's
 * offset is cached in the root under the region's layout epoch, exactly as DmoHashMap does (see
 * there), so an operation resolves one id — the root's — through the object table.
 */

import { DmoCollectionFormatError, DmoInvalidSizeError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import { mix32 } from '../hash.ts';
import { regionOf } from '../heap.ts';
import type { Region } from '../region.ts';
import type { DmoHeap } from '../types.ts';
import { checkRoot, initRoot } from './collection-header.ts';

const ROOT_BYTES = 32;
const ROOT = { count: 2, capacity: 3, table: 4, seed: 5, tableOffset: 6, epoch: 7 } as const;
const PAIR_BYTES = 16;
const DEFAULT_CAPACITY = 16;
const DEFAULT_SEED = 0x9e3779b9;
const MAX_CAPACITY = 2 ** 26;

const bitsScratch = new Float64Array(1);
const bitsWords = new Uint32Array(bitsScratch.buffer);

function hashNumber(key: number, seed: number): number {
  if ((key | 0) === key) return mix32(key ^ seed);
  bitsScratch[0] = Number.isNaN(key) ? Number.NaN : key;
  return mix32(bitsWords[0]! ^ mix32(bitsWords[1]! ^ seed));
}

/** How a number map starts. */
export interface DmoNumberMapOptions {
  /** Slots of the first table: rounded up to a power of two ≥ 16 (default 16). */
  readonly initialCapacity?: number;
  /** Hash seed (u32). */
  readonly seed?: number;
}

/** A number → number hash map stored in one actor's DMOs; re-open it by `rootId`. */
export class DmoNumberMap {
  /** The root object's id: keep it to re-open the map. */
  readonly rootId: ObjectId;
  readonly #region: Region;
  readonly #rootLocal: number;
  /** Outputs of #find, to avoid returning tuples: the table's start and the hash. */
  #tableStart = 0;
  #capacity = 0;
  #hash = 0;

  private constructor(region: Region, rootId: ObjectId) {
    this.#region = region;
    this.rootId = rootId;
    this.#rootLocal = region.localOf(rootId);
  }

  /** A new empty map in `heap`. */
  static create(heap: DmoHeap, options: DmoNumberMapOptions = {}): DmoNumberMap {
    const region = regionOf(heap);
    const capacity = tableCapacity(options.initialCapacity ?? DEFAULT_CAPACITY);
    const tableId = region.allocate(capacity * (PAIR_BYTES + 1));
    let rootId: ObjectId;
    try {
      rootId = region.allocate(ROOT_BYTES);
    } catch (error) {
      region.free(tableId);
      throw error;
    }
    const root = initRoot(region, rootId, 'numberMap');
    region.u32[root + ROOT.capacity] = capacity;
    region.u32[root + ROOT.table] = region.localOf(tableId);
    region.u32[root + ROOT.seed] = (options.seed ?? DEFAULT_SEED) >>> 0;
    region.u32[root + ROOT.tableOffset] = region.startOf(tableId) - region.base;
    region.u32[root + ROOT.epoch] = region.layoutEpoch();
    return new DmoNumberMap(region, rootId);
  }

  /** Re-opens the map whose root is `rootId`. */
  static open(heap: DmoHeap, rootId: ObjectId): DmoNumberMap {
    const region = regionOf(heap);
    checkRoot(region, rootId, 'numberMap', ROOT_BYTES);
    return new DmoNumberMap(region, rootId);
  }

  get size(): number {
    return this.#region.u32[this.#rootWord() + ROOT.count]!;
  }

  has(key: number): boolean {
    return this.#find(key) >= 0;
  }

  get(key: number): number | undefined {
    const i = this.#find(key);
    return i < 0 ? undefined : this.#region.f64[(this.#tableStart >>> 3) + 2 * i + 1];
  }

  set(key: number, value: number): this {
    const i = this.#find(key);
    if (i >= 0) this.#region.f64[(this.#tableStart >>> 3) + 2 * i + 1] = value;
    else this.#insert(key, value);
    return this;
  }

  /** Adds `delta` to the value under `key` (absent counts as 0) and returns the new value. */
  increment(key: number, delta = 1): number {
    const i = this.#find(key);
    if (i < 0) {
      this.#insert(key, delta);
      return delta;
    }
    const f64 = this.#region.f64;
    const at = (this.#tableStart >>> 3) + 2 * i + 1;
    const value = f64[at]! + delta;
    f64[at] = value;
    return value;
  }

  delete(key: number): boolean {
    const i = this.#find(key);
    if (i < 0) return false;
    const region = this.#region;
    const f64 = region.f64;
    const u8 = region.u8;
    const start = this.#tableStart;
    const pairs = start >>> 3;
    const capacity = this.#capacity;
    const states = start + capacity * PAIR_BYTES;
    const mask = capacity - 1;
    const seed = region.u32[this.#rootWord() + ROOT.seed]!;
    let hole = i;
    // The empty slot that ends the probe run, found before anything changes: the shift below
    // stops only there, and a damaged table (the actor can overwrite its state bytes) may have
    // none — without this bound, delete would loop forever. #find's probe is bounded the same way.
    let end = (hole + 1) & mask;
    for (let steps = 0; u8[states + end] !== 0; end = (end + 1) & mask) {
      if (++steps > mask) {
        throw new DmoCollectionFormatError(
          `DmoNumberMap ${this.rootId} is damaged: its table has no empty slot`,
        );
      }
    }
    for (let j = (hole + 1) & mask; j !== end; j = (j + 1) & mask) {
      const home = hashNumber(f64[pairs + 2 * j]!, seed) & mask;
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (!stays) {
        f64[pairs + 2 * hole] = f64[pairs + 2 * j]!;
        f64[pairs + 2 * hole + 1] = f64[pairs + 2 * j + 1]!;
        hole = j;
      }
    }
    u8[states + hole] = 0;
    f64[pairs + 2 * hole] = 0;
    f64[pairs + 2 * hole + 1] = 0;
    const root = this.#rootWord();
    region.u32[root + ROOT.count] = region.u32[root + ROOT.count]! - 1;
    return true;
  }

  clear(): void {
    const region = this.#region;
    const root = this.#rootWord();
    const capacity = region.u32[root + ROOT.capacity]!;
    const start = this.#translateTable(root);
    region.u8.fill(0, start, start + capacity * (PAIR_BYTES + 1));
    region.u32[root + ROOT.count] = 0;
  }

  /** Frees the map's objects; it must not be used afterwards. */
  destroy(): void {
    const region = this.#region;
    region.free(region.idOf(region.u32[this.#rootWord() + ROOT.table]!));
    region.free(this.rootId);
  }

  /** [key, value] pairs in table order (a snapshot taken when iteration starts). */
  *entries(): IterableIterator<[number, number]> {
    const region = this.#region;
    const root = this.#rootWord();
    const capacity = region.u32[root + ROOT.capacity]!;
    const start = this.#translateTable(root);
    const pairs: [number, number][] = [];
    for (let i = 0; i < capacity; i++) {
      if (region.u8[start + capacity * PAIR_BYTES + i] !== 0) {
        pairs.push([region.f64[(start >>> 3) + 2 * i]!, region.f64[(start >>> 3) + 2 * i + 1]!]);
      }
    }
    yield* pairs;
  }

  *keys(): IterableIterator<number> {
    for (const [key] of this.entries()) yield key;
  }

  [Symbol.iterator](): IterableIterator<[number, number]> {
    return this.entries();
  }

  #rootWord(): number {
    return this.#region.startOfLocal(this.#rootLocal) >>> 2;
  }

  /**
   * Absolute start of the table, re-translated after a restore, and checked to be the start of the
   * table object the root's link names, with room there for `capacity` slots: the map writes at
   * addresses computed from these stored numbers, and the actor can overwrite them through its
   * own checked API. (Checking the offset against `dataTop` alone let an offset inside the
   * region's header through, and `set` then rewrote the allocator's header — from which forged
   * object-table rows reach other actors' regions.)
   */
  #translateTable(root: number): number {
    const region = this.#region;
    const u32 = region.u32;
    // The caller resolved the root through the object table (owner tag); the link's slot range and
    // generation are checked here (Region.lookupLinked written out with literals, as DmoHashMap's
    // probe does: this runs once per operation, and V8 re-loads module-level constants per use).
    const link = u32[root + 4 /* ROOT.table */]!;
    const slot = link & 0xff_ffff; /* SLOT_MASK */
    const row = region.endWord - (slot << 2);
    if (
      slot === 0 ||
      slot > region.slotLimit() ||
      u32[row + 3 /* ROW_WORD.meta */] !== ((link >>> 24) | 0x100)
    ) {
      region.failLookup(region.idOf(link));
    }
    const tableOffset = u32[row /* + ROW_WORD.offset */]!;
    if (u32[root + 7 /* ROOT.epoch */] !== region.layoutEpoch()) {
      u32[root + ROOT.tableOffset] = tableOffset;
      u32[root + ROOT.epoch] = region.layoutEpoch();
    }
    const capacity = u32[root + 3 /* ROOT.capacity */]!;
    if (
      capacity < 16 /* DEFAULT_CAPACITY */ ||
      (capacity & (capacity - 1)) !== 0 ||
      u32[root + 6 /* ROOT.tableOffset */] !== tableOffset ||
      capacity * 17 /* PAIR_BYTES + 1 */ > u32[row + 1 /* ROW_WORD.sizeBytes */]!
    ) {
      throw new DmoCollectionFormatError(
        `DmoNumberMap ${this.rootId} is damaged: its table is not the table object its root names`,
      );
    }
    return region.base + tableOffset;
  }

  /** Slot index of `key`, or −1; sets #tableStart, #capacity and #hash. */
  #find(key: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const root = region.startOfLocal(this.#rootLocal) >>> 2;
    const start = this.#translateTable(root);
    const capacity = u32[root + ROOT.capacity]!;
    this.#tableStart = start;
    this.#capacity = capacity;
    const hash = hashNumber(key, u32[root + ROOT.seed]!);
    this.#hash = hash;
    const mask = capacity - 1;
    const f64 = region.f64;
    const u8 = region.u8;
    const pairs = start >>> 3;
    const states = start + capacity * PAIR_BYTES;
    const keyIsNaN = Number.isNaN(key);
    for (let i = hash & mask, probes = 0; probes < capacity; i = (i + 1) & mask, probes++) {
      if (u8[states + i] === 0) return -1;
      const stored = f64[pairs + 2 * i]!;
      if (stored === key || (keyIsNaN && Number.isNaN(stored))) return i;
    }
    // Only a damaged table is full: the load factor stays ≤ 3/4.
    throw new DmoCollectionFormatError(`DmoNumberMap ${this.rootId} is damaged: its table has no empty slot`);
  }

  /** Adds an absent key (after #find missed it). */
  #insert(key: number, value: number): void {
    const region = this.#region;
    let root = this.#rootWord();
    const count = region.u32[root + ROOT.count]!;
    if ((count + 1) * 4 > this.#capacity * 3) {
      this.#grow();
      root = this.#rootWord();
    }
    const start = this.#translateTable(root);
    const capacity = region.u32[root + ROOT.capacity]!;
    const mask = capacity - 1;
    const states = start + capacity * PAIR_BYTES;
    let i = this.#hash & mask;
    while (region.u8[states + i] !== 0) i = (i + 1) & mask;
    region.u8[states + i] = 1;
    // Store +0 for −0 so iteration reports the key the way Map does.
    region.f64[(start >>> 3) + 2 * i] = key === 0 ? 0 : key;
    region.f64[(start >>> 3) + 2 * i + 1] = value;
    region.u32[root + ROOT.count] = count + 1;
  }

  #grow(): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const oldCapacity = u32[root + ROOT.capacity]!;
    if (oldCapacity >= MAX_CAPACITY) throw new DmoInvalidSizeError('number map capacity', oldCapacity * 2);
    const capacity = oldCapacity * 2;
    const newId = region.allocate(capacity * (PAIR_BYTES + 1));
    const oldLink = u32[root + ROOT.table]!;
    const oldStart = this.#translateTable(root);
    const newStart = region.startOf(newId);
    const seed = u32[root + ROOT.seed]!;
    const f64 = region.f64;
    const u8 = region.u8;
    const mask = capacity - 1;
    for (let i = 0; i < oldCapacity; i++) {
      if (u8[oldStart + oldCapacity * PAIR_BYTES + i] === 0) continue;
      const key = f64[(oldStart >>> 3) + 2 * i]!;
      let j = hashNumber(key, seed) & mask;
      while (u8[newStart + capacity * PAIR_BYTES + j] !== 0) j = (j + 1) & mask;
      u8[newStart + capacity * PAIR_BYTES + j] = 1;
      f64[(newStart >>> 3) + 2 * j] = key;
      f64[(newStart >>> 3) + 2 * j + 1] = f64[(oldStart >>> 3) + 2 * i + 1]!;
    }
    u32[root + ROOT.capacity] = capacity;
    u32[root + ROOT.table] = region.localOf(newId);
    u32[root + ROOT.tableOffset] = newStart - region.base;
    region.free(region.idOf(oldLink));
  }
}

function tableCapacity(requested: number): number {
  if (!Number.isInteger(requested) || requested < 0 || requested > MAX_CAPACITY) {
    throw new DmoInvalidSizeError('number map initial capacity', requested);
  }
  let capacity = DEFAULT_CAPACITY;
  while (capacity < requested) capacity *= 2;
  return capacity;
}
