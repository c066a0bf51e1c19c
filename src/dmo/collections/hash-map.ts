/**
 * `DmoHashMap`: a byte-string → byte-string hash map kept entirely in an actor's DMOs (iPipe §3,
 * "Distributed memory objects": structures link by object id, never by pointer; the paper's
 * applications keep their key-value state — e.g. the RKV's index, DT's lock table — in such
 * structures so that the runtime can migrate them as plain objects).
 *
 * Objects (a *link* is a local id: the low 32 bits of an ObjectId, generation·2^24 + slot; the
 * owner is implied because a collection never spans actors; 0 = none):
 *
 *   root   (32 B)  [magic, version, count, capacity, table link, seed, table offset, epoch]   u32
 *   table  (capacity × 12 B)  slot i = [hash, entry link, entry offset]; entry link 0 = empty
 *   entry  (16 + 4⌈k/4⌉ + c B)  [own link, keyLength, valueLength, valueCapacity c, key
 *                                (zero-padded to whole words), value bytes]
 *          An entry is allocated at its allocator block's full size, so c ≥ valueLength leaves
 *          slack that lets a value grow in place.
 *
 * Open addressing with linear probing over a power-of-two table; the full 32-bit hash is cached in
 * the table so probes compare keys only on a hash match and growth never re-hashes a key. Load
 * factor ≤ 3/4; the table doubles when it would be exceeded (the old table is freed after the new
 * one is filled, so a failed growth leaves the map as it was). Deletion shifts the following run
 * back (no tombstones), so probe lengths do not decay under churn. The table never shrinks.
 *
 * Translation cache. iPipe names object-table translation as one of the runtime's two main costs
 * (and mentions a software cache over DMOs). Links are the truth, but next to each link the map
 * also keeps the object's region offset — the translation, cached — so a lookup resolves only the
 * root through the object table. A cached offset is trusted only when
 *   • the root's epoch equals the region's layout epoch (a restore after migration re-lays objects
 *     out and advances the epoch: the first operation afterwards re-translates every link, once,
 *     like a TLB flush);
 *   • the entry it points to lies inside the data the region has handed out, and starts with the
 *     link the table holds (its own link), which a freed or moved block would not.
 * Otherwise the map falls back to the object table and repairs the cached offset; a link that no
 * longer resolves throws, as any stale id does. Offsets are always bounded by the region's data,
 * so even a corrupted table cannot reach another actor's memory.
 *
 * A lookup packs the key into 32-bit words once (a reused scratch array), hashes the words
 * (xxHash32) and compares them with the stored key a word at a time. `get` copies the value out
 * (one allocation, like any API returning fresh bytes); `getInto` and `getView` exist for hot paths
 * that must not allocate. String keys are encoded into a reused scratch buffer.
 *
 * Cost of one operation (the benchmark's 16-byte keys; see docs/apps/dmo-hash-map-performance.md).
 * Every check runs once per operation, never per byte: the root is resolved through the object
 * table (owner tag, slot, generation) and its epoch compared; the table's capacity and offset are
 * bounds-checked against the region's data; then each probed slot whose hash matches has its entry
 * bounds-checked and its own link compared before a word of it is read. What made it cost ~1500
 * machine instructions (measured with cachegrind) was not the checks but how V8 compiled them:
 *   • field offsets and hash primes were module-level constants, which V8 does not fold: each use
 *     was a context load plus a map or number check (and the primes, above 2^31, made the lane
 *     set-up float64 arithmetic). They are numeric literals in the hot methods here, in hash.ts
 *     and in Region's id resolution, each named in a comment;
 *   • values above 2^31 (the seed, hashes, ids) kept in object fields became boxed doubles, and a
 *     link passed to a call that V8 did not inline was boxed per call. Fields now hold the int32
 *     with the same bits, and entries are addressed by word index (always < 2^30);
 *   • 16-byte keys are read into four locals, hashed by an unrolled xxHash32 stripe and compared as
 *     four words; values are written a word at a time.
 */

import { DmoCollectionFormatError, DmoInvalidSizeError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import { copyBytesToWords, copyWordsToBytes, hashWords, hashWords16, packWords } from '../hash.ts';
import { regionOf } from '../heap.ts';
import { blockBytesFor, type Region } from '../region.ts';
import type { DmoHeap } from '../types.ts';
import { checkRoot, initRoot } from './collection-header.ts';
import { Utf8Scratch } from './utf8-scratch.ts';

const ROOT_BYTES = 32;
const ROOT = { count: 2, capacity: 3, table: 4, seed: 5, tableOffset: 6, epoch: 7 } as const;
const SLOT_WORDS = 3;
const SLOT = { hash: 0, link: 1, offset: 2 } as const;
const ENTRY = { ownLink: 0, keyLength: 1, valueLength: 2, valueCapacity: 3, key: 4 } as const;
const ENTRY_HEADER_BYTES = 16;
const DEFAULT_CAPACITY = 16;
const DEFAULT_SEED = 0x9e3779b9;
/** Largest table: its 12-byte slots must fit one object. */
const MAX_CAPACITY = 2 ** 27;
const valueEncoder = new TextEncoder();

/** How a hash map starts. */
export interface DmoHashMapOptions {
  /** Slots of the first table: rounded up to a power of two ≥ 16 (default 16). */
  readonly initialCapacity?: number;
  /** Hash seed (u32). Pass a secret one when keys come from untrusted clients. */
  readonly seed?: number;
}

/** A byte-string → byte-string hash map stored in one actor's DMOs; re-open it by `rootId`. */
export class DmoHashMap {
  /** The root object's id: keep it to re-open the map (after migration, too). */
  readonly rootId: ObjectId;
  readonly #region: Region;
  readonly #rootLocal: number;
  readonly #scratch = new Utf8Scratch();
  /** Set once at creation and never changed, so a copy outside the DMO cannot go stale. */
  readonly #seed: number;
  /** Keys other than 16 bytes long, packed into little-endian words by #find (scratch). */
  #keyWords = new Uint32Array(16);
  /**
   * Outputs of #find, kept in fields to avoid returning tuples on the hot path. Word indices stay
   * below 2^30 and the hash is kept as an int32 (`| 0`), so V8 stores all three as small integers.
   */
  #root = 0;
  #foundEntryWord = 0;
  #hash = 0;
  /** On a miss, the table index of the empty slot that ended #find's probe (where an insert goes). */
  #emptyIndex = 0;

  private constructor(region: Region, rootId: ObjectId) {
    this.#region = region;
    this.rootId = rootId;
    // int32 with the link's bits (see Region.lookupLocal): a small integer for V8, never a double.
    this.#rootLocal = region.localOf(rootId) | 0;
    this.#seed = region.u32[(region.startOf(rootId) >>> 2) + ROOT.seed]! | 0;
  }

  /** A new empty map in `heap`. Throws DmoRegionExhaustedError (allocating nothing) if it cannot fit. */
  static create(heap: DmoHeap, options: DmoHashMapOptions = {}): DmoHashMap {
    const region = regionOf(heap);
    const capacity = tableCapacity(options.initialCapacity ?? DEFAULT_CAPACITY);
    const tableId = region.allocate(capacity * SLOT_WORDS * 4);
    let rootId: ObjectId;
    try {
      rootId = region.allocate(ROOT_BYTES);
    } catch (error) {
      region.free(tableId);
      throw error;
    }
    const root = initRoot(region, rootId, 'hashMap');
    const u32 = region.u32;
    u32[root + ROOT.capacity] = capacity;
    u32[root + ROOT.table] = region.localOf(tableId);
    u32[root + ROOT.seed] = (options.seed ?? DEFAULT_SEED) >>> 0;
    u32[root + ROOT.tableOffset] = region.startOf(tableId) - region.base;
    u32[root + ROOT.epoch] = region.layoutEpoch();
    return new DmoHashMap(region, rootId);
  }

  /** Re-opens the map whose root is `rootId`. Throws DmoCollectionFormatError if it is not one. */
  static open(heap: DmoHeap, rootId: ObjectId): DmoHashMap {
    const region = regionOf(heap);
    checkRoot(region, rootId, 'hashMap', ROOT_BYTES);
    return new DmoHashMap(region, rootId);
  }

  get size(): number {
    return this.#region.u32[this.#rootWord() + ROOT.count]!;
  }

  has(key: Uint8Array): boolean {
    return this.#find(key, key.length) >= 0;
  }

  /** A copy of the value stored under `key`, or undefined. */
  get(key: Uint8Array): Uint8Array | undefined {
    const keyLength = key.length;
    if (this.#find(key, keyLength) < 0) return undefined;
    // A fresh array filled a word at a time (the value is word-aligned after the key): cheaper
    // than slice() on the domain's large array for the short values a map usually holds.
    const u32 = this.#region.u32;
    const entryWord = this.#foundEntryWord;
    const length = u32[entryWord + 2 /* ENTRY.valueLength */]!;
    const copy = new Uint8Array(length);
    copyWordsToBytes(u32, entryWord + 4 /* ENTRY.key */ + ((keyLength + 3) >>> 2), length, copy, 0);
    return copy;
  }

  /**
   * A view of the value inside the DMO (no copy). It aliases the map's memory: valid until the next
   * change to this map, and writes through it change the stored value.
   */
  getView(key: Uint8Array): Uint8Array | undefined {
    if (this.#find(key, key.length) < 0) return undefined;
    const start = this.#valueStart();
    return this.#region.u8.subarray(start, start + this.#valueLength());
  }

  /**
   * Copies the value into `target` at `targetOffset` without allocating. Returns the value's length
   * (the bytes are copied only if they fit: compare the result with the room you gave), or −1 when
   * the key is absent.
   */
  getInto(key: Uint8Array, target: Uint8Array, targetOffset = 0): number {
    return this.#findInto(key, key.length, target, targetOffset);
  }

  /** Stores `value` under `key` (both copied into DMOs). */
  set(key: Uint8Array, value: Uint8Array): this {
    this.#set(key, key.length, value);
    return this;
  }

  /** Removes `key`; false when it was absent. */
  delete(key: Uint8Array): boolean {
    return this.#delete(key, key.length);
  }

  hasString(key: string): boolean {
    const length = this.#scratch.encode(key);
    return this.#find(this.#scratch.bytes, length) >= 0;
  }

  /** The value under a string key, as bytes (a copy). */
  getString(key: string): Uint8Array | undefined {
    const length = this.#scratch.encode(key);
    if (this.#find(this.#scratch.bytes, length) < 0) return undefined;
    const start = this.#valueStart();
    return this.#region.u8.slice(start, start + this.#valueLength());
  }

  /** The value under a string key, decoded as UTF-8. */
  getStringValue(key: string): string | undefined {
    const length = this.#scratch.encode(key);
    if (this.#find(this.#scratch.bytes, length) < 0) return undefined;
    const start = this.#valueStart();
    return this.#scratch.decode(this.#region.u8, start, start + this.#valueLength());
  }

  /** Like getInto, with a string key. */
  getStringInto(key: string, target: Uint8Array, targetOffset = 0): number {
    const length = this.#scratch.encode(key);
    return this.#findInto(this.#scratch.bytes, length, target, targetOffset);
  }

  /** Stores a value (bytes, or a string stored as UTF-8) under a string key. */
  setString(key: string, value: Uint8Array | string): this {
    const bytes = typeof value === 'string' ? valueEncoder.encode(value) : value;
    const length = this.#scratch.encode(key);
    this.#set(this.#scratch.bytes, length, bytes);
    return this;
  }

  deleteString(key: string): boolean {
    const length = this.#scratch.encode(key);
    return this.#delete(this.#scratch.bytes, length);
  }

  /** Removes every entry (their objects are freed; the table keeps its capacity). */
  clear(): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const table = this.#tableWord(root);
    const capacity = u32[root + ROOT.capacity]!;
    for (let i = 0; i < capacity; i++) {
      const link = u32[table + SLOT_WORDS * i + SLOT.link]!;
      if (link !== 0) region.free(region.idOf(link));
    }
    u32.fill(0, table, table + SLOT_WORDS * capacity);
    u32[root + ROOT.count] = 0;
  }

  /** Frees every object of the map, root included; the map must not be used afterwards. */
  destroy(): void {
    this.clear();
    const region = this.#region;
    region.free(region.idOf(region.u32[this.#rootWord() + ROOT.table]!));
    region.free(this.rootId);
  }

  /**
   * [key, value] copies in table order. Each pair was in the map when iteration began and still is
   * when yielded; entries added during iteration are not visited.
   */
  *entries(): IterableIterator<[Uint8Array, Uint8Array]> {
    const region = this.#region;
    for (const link of this.#entryLinks()) {
      this.#rootWord(); // the heap may have been released while we were suspended
      const row = region.lookupLinked(link);
      if (row < 0) continue;
      const start = this.#checkedEntry(link, row);
      const word = start >>> 2;
      const keyLength = region.u32[word + ENTRY.keyLength]!;
      const keyStart = start + ENTRY_HEADER_BYTES;
      const valueStart = keyStart + paddedKeyBytes(keyLength);
      yield [
        region.u8.slice(keyStart, keyStart + keyLength),
        region.u8.slice(valueStart, valueStart + region.u32[word + ENTRY.valueLength]!),
      ];
    }
  }

  *keys(): IterableIterator<Uint8Array> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<Uint8Array> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[Uint8Array, Uint8Array]> {
    return this.entries();
  }

  // ---- internals ----------------------------------------------------------------------------

  /** The root's word index, with the translation cache brought up to date. */
  #rootWord(): number {
    const region = this.#region;
    // Resolves the root through the object table: owner tag, slot range and generation.
    const root = region.startWordOfLocal(this.#rootLocal);
    if (region.u32[root + 7 /* ROOT.epoch */] !== region.layoutEpoch()) this.#retranslate(root);
    return root;
  }

  /** Byte offset (in the domain buffer) of the found entry's value. */
  #valueStart(): number {
    const word = this.#foundEntryWord;
    return 4 * (word + ENTRY.key) + paddedKeyBytes(this.#region.u32[word + ENTRY.keyLength]!);
  }

  #valueLength(): number {
    return this.#region.u32[this.#foundEntryWord + ENTRY.valueLength]!;
  }

  /*
   * The hot path (#find, #tableWord, #findInto, the in-place branch of #set) spells the layout's
   * field offsets as literals, each named in a comment: V8 folds a literal into the instruction,
   * while ROOT.count or a module-level `const` is re-loaded and type-checked on every use (about a
   * fifth of a lookup's instructions before). The ROOT, SLOT and ENTRY tables above stay the
   * definition, and the cold paths use them.
   */

  /**
   * Word index of the table slot holding `key[0, keyLength)`, or −1. Leaves its hash (as int32) in
   * #hash, the root in #root and, on a hit, the entry's word index in #foundEntryWord.
   */
  #find(key: Uint8Array, keyLength: number): number {
    const region = this.#region;
    const u32 = region.u32;
    // Once per operation: the root (object table, epoch), then the table (bounds).
    const root = this.#rootWord();
    this.#root = root;
    const table = this.#tableWord(root);
    const mask = u32[root + 3 /* ROOT.capacity */]! - 1;
    // An entry whose key and value end beyond the handed-out data cannot be genuine.
    const dataLimit = region.dataTop();
    const baseWord = region.baseWord;
    const wordCount = (keyLength + 3) >>> 2;
    // The common fixed-width key (ids, UUIDs): four words straight into locals, hashed by one
    // unrolled stripe and compared below without a loop. Other lengths go through #keyWords.
    let keyWords = this.#keyWords;
    let w0 = 0;
    let w1 = 0;
    let w2 = 0;
    let w3 = 0;
    let hash: number;
    if (keyLength === 16) {
      w0 = key[0]! | (key[1]! << 8) | (key[2]! << 16) | (key[3]! << 24);
      w1 = key[4]! | (key[5]! << 8) | (key[6]! << 16) | (key[7]! << 24);
      w2 = key[8]! | (key[9]! << 8) | (key[10]! << 16) | (key[11]! << 24);
      w3 = key[12]! | (key[13]! << 8) | (key[14]! << 16) | (key[15]! << 24);
      hash = hashWords16(w0, w1, w2, w3, this.#seed);
    } else {
      if (wordCount > keyWords.length) {
        keyWords = new Uint32Array(Math.max(wordCount, keyWords.length * 2));
        this.#keyWords = keyWords;
      }
      packWords(key, keyLength, keyWords);
      hash = hashWords(keyWords, keyLength, this.#seed);
    }
    this.#hash = hash | 0;
    // Bytes from an entry's start to the end of its key: header + padded key.
    const keyEnd = 16 /* ENTRY_HEADER_BYTES */ + 4 * wordCount;
    for (let i = hash & mask, probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
      const slot = table + 3 /* SLOT_WORDS */ * i;
      const link = u32[slot + 1 /* SLOT.link */]!;
      if (link === 0) {
        this.#emptyIndex = i;
        return -1;
      }
      if (u32[slot /* + SLOT.hash */] !== hash) continue;
      let offset = u32[slot + 2 /* SLOT.offset */]!;
      let word = baseWord + (offset >>> 2);
      // The cached offset is trusted only if the entry lies inside the data (checked before any
      // word of it is read), is word-aligned, starts with its own link, and its value capacity
      // (≥ its length) ends inside the data too; otherwise re-translate the link.
      if (
        offset + keyEnd > dataLimit ||
        (offset & 3) !== 0 ||
        u32[word /* + ENTRY.ownLink */] !== link ||
        u32[word + 2 /* ENTRY.valueLength */]! > u32[word + 3 /* ENTRY.valueCapacity */]! ||
        offset + keyEnd + u32[word + 3 /* ENTRY.valueCapacity */]! > dataLimit
      ) {
        offset = this.#repairSlot(slot);
        word = baseWord + (offset >>> 2);
      }
      if (u32[word + 1 /* ENTRY.keyLength */] !== keyLength) continue;
      const keyWord = word + 4; /* ENTRY.key */
      if (keyLength === 16) {
        if (u32[keyWord] !== w0 >>> 0 || u32[keyWord + 1] !== w1 >>> 0) continue;
        if (u32[keyWord + 2] !== w2 >>> 0 || u32[keyWord + 3] !== w3 >>> 0) continue;
      } else {
        let w = 0;
        while (w < wordCount && u32[keyWord + w] === keyWords[w]) w++;
        if (w !== wordCount) continue;
      }
      this.#foundEntryWord = word;
      return slot;
    }
    // Only a damaged table has no empty slot: the load factor stays ≤ 3/4.
    throw this.#damaged('its table has no empty slot');
  }

  /**
   * Word index of the table, after checking that capacity and cached offset keep it inside the
   * region's data: the map computes addresses from these stored numbers, so they are checked like
   * any other untrusted input before use.
   */
  #tableWord(root: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const capacity = u32[root + 3 /* ROOT.capacity */]!;
    const tableOffset = u32[root + 6 /* ROOT.tableOffset */]!;
    if (
      capacity < DEFAULT_CAPACITY ||
      (capacity & (capacity - 1)) !== 0 ||
      (tableOffset & 3) !== 0 ||
      tableOffset + capacity * 12 /* SLOT_WORDS * 4 */ > region.dataTop()
    ) {
      throw this.#damaged(`its table (capacity ${capacity}, offset ${tableOffset}) is out of bounds`);
    }
    return region.baseWord + (tableOffset >>> 2);
  }

  #damaged(what: string): DmoCollectionFormatError {
    return new DmoCollectionFormatError(`DmoHashMap ${this.rootId} is damaged: ${what}`);
  }

  /**
   * Re-translates one slot's link through the object table and stores the offset again. Throws
   * if the link is dangling or the entry's header disagrees with its object.
   */
  #repairSlot(slot: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const link = u32[slot + SLOT.link]!;
    const row = region.lookupLinked(link);
    if (row < 0) region.failLookup(region.idOf(link));
    const offset = this.#checkedEntry(link, row) - region.base;
    u32[slot + SLOT.offset] = offset;
    return offset;
  }

  /** Start of entry `link` (at `row`), after checking that its header fits its object. */
  #checkedEntry(link: number, row: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const start = region.rowStart(row);
    const word = start >>> 2;
    const needBytes =
      ENTRY_HEADER_BYTES + paddedKeyBytes(u32[word + ENTRY.keyLength]!) + u32[word + ENTRY.valueCapacity]!;
    if (
      u32[word + ENTRY.ownLink] !== link ||
      u32[word + ENTRY.valueLength]! > u32[word + ENTRY.valueCapacity]! ||
      needBytes > region.rowSize(row)
    ) {
      throw this.#damaged(`entry ${region.idOf(link)} disagrees with its object`);
    }
    return start;
  }

  /** After a restore: every cached offset is re-translated from its link (once per migration). */
  #retranslate(root: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const tableRow = region.lookupLocal(u32[root + ROOT.table]!);
    if (tableRow < 0) region.failLookup(region.idOf(u32[root + ROOT.table]!));
    const capacity = u32[root + ROOT.capacity]!;
    if (capacity * SLOT_WORDS * 4 > region.rowSize(tableRow))
      throw this.#damaged('capacity exceeds its table');
    const tableStart = region.rowStart(tableRow);
    u32[root + ROOT.tableOffset] = tableStart - region.base;
    const table = tableStart >>> 2;
    for (let i = 0; i < capacity; i++) {
      if (u32[table + SLOT_WORDS * i + SLOT.link] !== 0) this.#repairSlot(table + SLOT_WORDS * i);
    }
    u32[root + ROOT.epoch] = region.layoutEpoch();
  }

  #findInto(key: Uint8Array, keyLength: number, target: Uint8Array, targetOffset: number): number {
    if (this.#find(key, keyLength) < 0) return -1;
    const u32 = this.#region.u32;
    const entryWord = this.#foundEntryWord;
    const length = u32[entryWord + 2 /* ENTRY.valueLength */]!;
    if (targetOffset >>> 0 === targetOffset && targetOffset + length <= target.length) {
      // #find checked that the value lies inside the data; it starts word-aligned after the key.
      copyWordsToBytes(
        u32,
        entryWord + 4 /* ENTRY.key */ + ((keyLength + 3) >>> 2),
        length,
        target,
        targetOffset,
      );
    }
    return length;
  }

  #set(key: Uint8Array, keyLength: number, value: Uint8Array): void {
    const region = this.#region;
    const u32 = region.u32;
    const slot = this.#find(key, keyLength);
    const valueLength = value.length;
    if (slot >= 0) {
      const entryWord = this.#foundEntryWord;
      if (valueLength <= u32[entryWord + 3 /* ENTRY.valueCapacity */]!) {
        // The value fits the entry it already has (#find checked the capacity against the data
        // bounds): overwrite in place.
        u32[entryWord + 2 /* ENTRY.valueLength */] = valueLength;
        copyBytesToWords(
          value,
          valueLength,
          region.u8,
          u32,
          entryWord + 4 /* ENTRY.key */ + ((keyLength + 3) >>> 2),
        );
        return;
      }
    }
    // Ask for the whole block the allocator would hand out anyway: the slack is growth room.
    const entryBytes = blockBytesFor(ENTRY_HEADER_BYTES + paddedKeyBytes(keyLength) + valueLength);
    if (slot >= 0) {
      const oldLink = u32[slot + SLOT.link]!;
      const id = region.allocate(entryBytes);
      const newStart = region.startOf(id);
      this.#writeEntry(newStart, region.localOf(id), entryBytes, key, keyLength, value);
      u32[slot + SLOT.link] = region.localOf(id);
      u32[slot + SLOT.offset] = newStart - region.base;
      region.free(region.idOf(oldLink));
      return;
    }
    const hash = this.#hash;
    let root = this.#root;
    const count = u32[root + ROOT.count]!;
    // #find's probe stopped at the empty slot the key goes to; only a grown table needs a new probe.
    let i = this.#emptyIndex;
    if ((count + 1) * 4 > u32[root + ROOT.capacity]! * 3) {
      this.#grow(root);
      root = this.#rootWord();
      const grownTable = this.#tableWord(root);
      const mask = u32[root + ROOT.capacity]! - 1;
      i = hash & mask;
      while (u32[grownTable + SLOT_WORDS * i + SLOT.link] !== 0) i = (i + 1) & mask;
    }
    const id = region.allocate(entryBytes);
    const link = region.localOf(id);
    const start = region.startOf(id);
    this.#writeEntry(start, link, entryBytes, key, keyLength, value);
    const slotWord = this.#tableWord(root) + SLOT_WORDS * i;
    u32[slotWord + SLOT.hash] = hash;
    u32[slotWord + SLOT.link] = link;
    u32[slotWord + SLOT.offset] = start - region.base;
    u32[root + ROOT.count] = count + 1;
  }

  /** Fills a new entry from `key[0, keyLength)` and `value`. */
  #writeEntry(
    start: number,
    ownLink: number,
    entryBytes: number,
    key: Uint8Array,
    keyLength: number,
    value: Uint8Array,
  ): void {
    const region = this.#region;
    const u32 = region.u32;
    const word = start >>> 2;
    const wordCount = (keyLength + 3) >>> 2;
    u32[word + ENTRY.ownLink] = ownLink;
    u32[word + ENTRY.keyLength] = keyLength;
    u32[word + ENTRY.valueLength] = value.length;
    u32[word + ENTRY.valueCapacity] = entryBytes - ENTRY_HEADER_BYTES - 4 * wordCount;
    packWords(key, keyLength, u32, word + ENTRY.key);
    copyBytesToWords(value, value.length, region.u8, u32, word + ENTRY.key + wordCount);
  }

  #delete(key: Uint8Array, keyLength: number): boolean {
    const region = this.#region;
    const u32 = region.u32;
    const slot = this.#find(key, keyLength);
    if (slot < 0) return false;
    region.free(region.idOf(u32[slot + SLOT.link]!));
    const root = this.#root;
    const table = this.#tableWord(root);
    const mask = u32[root + ROOT.capacity]! - 1;
    // Backward-shift deletion: pull later members of the probe run into the hole unless their home
    // slot lies cyclically in (hole, j], where moving them would put them before their home.
    let hole = (slot - table) / SLOT_WORDS;
    for (let j = (hole + 1) & mask; u32[table + SLOT_WORDS * j + SLOT.link] !== 0; j = (j + 1) & mask) {
      const home = u32[table + SLOT_WORDS * j + SLOT.hash]! & mask;
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (!stays) {
        u32.copyWithin(table + SLOT_WORDS * hole, table + SLOT_WORDS * j, table + SLOT_WORDS * (j + 1));
        hole = j;
      }
    }
    u32.fill(0, table + SLOT_WORDS * hole, table + SLOT_WORDS * (hole + 1));
    u32[root + ROOT.count] = u32[root + ROOT.count]! - 1;
    return true;
  }

  /** Doubles the table. Allocates first, so an exhausted region leaves the map untouched. */
  #grow(root: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const oldCapacity = u32[root + ROOT.capacity]!;
    if (oldCapacity >= MAX_CAPACITY) throw new DmoInvalidSizeError('hash map capacity', oldCapacity * 2);
    const capacity = oldCapacity * 2;
    const newTableId = region.allocate(capacity * SLOT_WORDS * 4);
    const oldLink = u32[root + ROOT.table]!;
    const oldTable = this.#tableWord(root);
    const newTableStart = region.startOf(newTableId);
    const newTable = newTableStart >>> 2;
    const mask = capacity - 1;
    for (let i = 0; i < oldCapacity; i++) {
      const from = oldTable + SLOT_WORDS * i;
      if (u32[from + SLOT.link] === 0) continue;
      const hash = u32[from + SLOT.hash]!;
      let j = hash & mask;
      while (u32[newTable + SLOT_WORDS * j + SLOT.link] !== 0) j = (j + 1) & mask;
      // Three stores, not copyWithin: a builtin call per slot was most of a rehash's cost.
      const to = newTable + SLOT_WORDS * j;
      u32[to + SLOT.hash] = hash;
      u32[to + SLOT.link] = u32[from + SLOT.link]!;
      u32[to + SLOT.offset] = u32[from + SLOT.offset]!;
    }
    u32[root + ROOT.capacity] = capacity;
    u32[root + ROOT.table] = region.localOf(newTableId);
    u32[root + ROOT.tableOffset] = newTableStart - region.base;
    region.free(region.idOf(oldLink));
  }

  #entryLinks(): Uint32Array {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const table = this.#tableWord(root);
    const capacity = u32[root + ROOT.capacity]!;
    const links = new Uint32Array(Math.min(capacity, u32[root + ROOT.count]!));
    let n = 0;
    for (let i = 0; i < capacity && n < links.length; i++) {
      const link = u32[table + SLOT_WORDS * i + SLOT.link]!;
      if (link !== 0) links[n++] = link;
    }
    return links;
  }
}

/** Bytes the key takes in an entry: whole words, so key compares and the value stay aligned. */
function paddedKeyBytes(keyLength: number): number {
  return ((keyLength + 3) >>> 2) << 2;
}

function tableCapacity(requested: number): number {
  if (!Number.isInteger(requested) || requested < 0 || requested > MAX_CAPACITY) {
    throw new DmoInvalidSizeError('hash map initial capacity', requested);
  }
  let capacity = DEFAULT_CAPACITY;
  while (capacity < requested) capacity *= 2;
  return capacity;
}
