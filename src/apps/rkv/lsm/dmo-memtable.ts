/**
 * `DmoMemtable`: the memtable over the DMO skip list — how RKV's memtable actor keeps its memtable
 * on the NIC (iPipe §5, RKV: "a skip-list memtable"; on minor compaction the memtable object
 * migrates to the host, where the compaction actor re-opens it by its root id and flushes it).
 *
 * Objects (all in the owning actor's DMO region, so a snapshot or region image moves them whole):
 *
 *   header (32 B)  [magic 'LSMM' u32, version u32, skip-list root id f64,
 *                   approximateBytes f64, reserved f64]
 *   skip list      key → encoded entry:
 *                     [kind u8: 1 put, 2 tombstone][sequence u64 LE][value bytes (puts only)]
 *
 * The tombstone is explicit in the stored bytes, so a deleted key still sorts and flushes like any
 * other entry. The byte count lives in the header object, not in this JS object, so a memtable
 * re-opened after migration still knows how full it is.
 */

import { type DmoHeap, DmoSkipList } from '../../../dmo/index.ts';
import { DmoCollectionFormatError } from '../../../errors.ts';
import type { ObjectId } from '../../../ids.ts';
import { type LsmEntry, MEMTABLE_ENTRY_OVERHEAD_BYTES, type Memtable } from './memtable.ts';

const HEADER_BYTES = 32;
const HEADER_MAGIC = 0x4d4d534c; // 'LSMM' little-endian
const HEADER_VERSION = 1;
const HEADER = { magic: 0, version: 4, skipListRoot: 8, approximateBytes: 16 } as const;
const KIND_PUT = 1;
const KIND_TOMBSTONE = 2;
/** kind byte + u64 sequence. */
const ENTRY_HEADER_BYTES = 9;
const NO_BYTES = new Uint8Array(0);

/** How a DMO memtable starts. */
export interface DmoMemtableOptions {
  /** Seed of the skip list's level generator (default: the skip list's fixed seed). */
  readonly seed?: number;
  /** Most skip-list levels (default 16, fine up to ~4^16 entries). */
  readonly maxLevel?: number;
}

/** A memtable in one actor's DMOs; re-open it by `rootId` (e.g. on the host after migration). */
export class DmoMemtable implements Memtable {
  /** The header object's id: keep it to re-open the memtable. */
  readonly rootId: ObjectId;
  readonly #heap: DmoHeap;
  readonly #list: DmoSkipList;
  /** Encoding scratch, grown to the largest entry seen. */
  #scratch = new Uint8Array(256);
  #scratchView = new DataView(this.#scratch.buffer);

  private constructor(heap: DmoHeap, rootId: ObjectId, list: DmoSkipList) {
    this.#heap = heap;
    this.rootId = rootId;
    this.#list = list;
  }

  /** A new, empty memtable in `heap`. */
  static create(heap: DmoHeap, options: DmoMemtableOptions = {}): DmoMemtable {
    const list = DmoSkipList.create(heap, {
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.maxLevel === undefined ? {} : { maxLevel: options.maxLevel }),
    });
    let rootId: ObjectId;
    try {
      rootId = heap.allocate(HEADER_BYTES);
    } catch (error) {
      list.destroy();
      throw error;
    }
    heap.writeU32(rootId, HEADER.magic, HEADER_MAGIC);
    heap.writeU32(rootId, HEADER.version, HEADER_VERSION);
    heap.writeF64(rootId, HEADER.skipListRoot, list.rootId);
    heap.writeF64(rootId, HEADER.approximateBytes, 0);
    return new DmoMemtable(heap, rootId, list);
  }

  /** Re-opens the memtable whose header is `rootId` (after a migration, or on another thread). */
  static open(heap: DmoHeap, rootId: ObjectId): DmoMemtable {
    if (
      heap.sizeOf(rootId) !== HEADER_BYTES ||
      heap.readU32(rootId, HEADER.magic) !== HEADER_MAGIC ||
      heap.readU32(rootId, HEADER.version) !== HEADER_VERSION
    ) {
      throw new DmoCollectionFormatError(`object ${rootId} is not a DmoMemtable header`);
    }
    const list = DmoSkipList.open(heap, heap.readF64(rootId, HEADER.skipListRoot) as ObjectId);
    return new DmoMemtable(heap, rootId, list);
  }

  get entryCount(): number {
    return this.#list.size;
  }

  get approximateBytes(): number {
    return this.#heap.readF64(this.rootId, HEADER.approximateBytes);
  }

  put(key: Uint8Array, value: Uint8Array, sequence: number): void {
    this.#store(key, KIND_PUT, value, sequence);
  }

  delete(key: Uint8Array, sequence: number): void {
    this.#store(key, KIND_TOMBSTONE, NO_BYTES, sequence);
  }

  get(key: Uint8Array): LsmEntry | undefined {
    const stored = this.#list.get(key);
    return stored === undefined ? undefined : this.#decode(key, stored);
  }

  *entries(fromKey?: Uint8Array): IterableIterator<LsmEntry> {
    for (const [key, stored] of this.#list.entriesFrom(fromKey)) yield this.#decode(key, stored);
  }

  destroy(): void {
    this.#list.destroy();
    this.#heap.free(this.rootId);
  }

  #store(key: Uint8Array, kind: number, value: Uint8Array, sequence: number): void {
    const encodedBytes = ENTRY_HEADER_BYTES + value.length;
    if (this.#scratch.length < encodedBytes) {
      this.#scratch = new Uint8Array(Math.max(encodedBytes, this.#scratch.length * 2));
      this.#scratchView = new DataView(this.#scratch.buffer);
    }
    const scratch = this.#scratch;
    scratch[0] = kind;
    this.#scratchView.setUint32(1, sequence % 0x1_0000_0000, true);
    this.#scratchView.setUint32(5, Math.floor(sequence / 0x1_0000_0000), true);
    scratch.set(value, ENTRY_HEADER_BYTES);
    // getInto with an empty target returns the stored length without copying: the old entry's
    // size, so the byte count stays exact across overwrites.
    const previousBytes = this.#list.getInto(key, NO_BYTES);
    this.#list.set(key, scratch.subarray(0, encodedBytes));
    const charged =
      previousBytes < 0
        ? key.length + MEMTABLE_ENTRY_OVERHEAD_BYTES + value.length
        : value.length - (previousBytes - ENTRY_HEADER_BYTES);
    const heap = this.#heap;
    heap.writeF64(
      this.rootId,
      HEADER.approximateBytes,
      heap.readF64(this.rootId, HEADER.approximateBytes) + charged,
    );
  }

  #decode(key: Uint8Array, stored: Uint8Array): LsmEntry {
    if (stored.length < ENTRY_HEADER_BYTES) {
      throw new DmoCollectionFormatError(`DmoMemtable ${this.rootId}: an entry of ${stored.length} bytes`);
    }
    const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
    const sequence = view.getUint32(1, true) + view.getUint32(5, true) * 0x1_0000_0000;
    const kind = stored[0];
    if (kind === KIND_PUT) return { kind: 'put', key, sequence, value: stored.subarray(ENTRY_HEADER_BYTES) };
    if (kind === KIND_TOMBSTONE && stored.length === ENTRY_HEADER_BYTES) {
      return { kind: 'tombstone', key, sequence };
    }
    throw new DmoCollectionFormatError(`DmoMemtable ${this.rootId}: an entry of kind ${kind}`);
  }
}
