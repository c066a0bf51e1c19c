/**
 * `DmoHashMap`: a byte-string → byte-string hash map kept entirely in an actor's DMOs (iPipe §3,
 * "Distributed memory objects": structures link by object id, never by pointer; the paper's
 * applications keep their key-value state — e.g. the RKV's index, DT's lock table — in such
 * structures so that the runtime can migrate them as plain objects).
 *
 * Objects (a *link* is a local id: the low 32 bits of an ObjectId, generation·2^24 + slot; the
 * owner is implied because a collection never spans actors; 0 = none). Layout version 2:
 *
 *   root   (168 B) [magic, version, count, capacity, table link, seed, table offset, epoch,
 *                   slab chain head, 0, then per slab class c (stride 16·(c+1) B, c < 16):
 *                   free entry (slab link, offset in the slab)]                               u32
 *   table  (capacity × 12 B)  slot i = [hash, link, offset]; link 0 = empty. `link` names the
 *                   object holding the entry — the entry itself, or the slab it is in — and
 *                   `offset` is the entry's region offset, a cached translation (below).
 *   entry  (16 + 4⌈k/4⌉ + c B)  [stamp, keyLength, valueLength, valueCapacity c, key (zero-padded
 *                   to whole words), value bytes]. c ≥ valueLength leaves slack that lets a value
 *                   grow in place. stamp = the entry's own link for an entry object; for a slab
 *                   entry a counter bumped each time its storage is reused (iteration uses it).
 *   slab   (16 + n × stride B)  [magic 0x53000000, next slab link, stride, start], then n entries of
 *                   `stride` bytes; start = the slab's region offset when the table's offsets
 *                   were last translated. A free entry: [stamp, 0xffffffff, next free slab link,
 *                   next free offset in that slab].
 *
 * Slabs (entries of up to 256 bytes: small keys and values, the common case). The region
 * allocator costs an object per entry: a row in the object table, a free-list pop and push, and —
 * once the map has churned — two cache misses each (the rows and blocks come back in the order
 * they were freed). Instead, a map carves its small entries from slabs it owns: one object holding
 * n entries of one stride (16-byte classes up to 256 B), with one free list per class kept in the
 * root. A new slab threads its entries onto that list in address order, so inserts take
 * consecutive memory; n grows with the map (¼ of its count, 4 to ~8 KiB of entries), so a small
 * map stays small. Deleting an entry zero-fills it and pushes it on its class list; the slab is
 * freed by `clear`/`destroy` (a map's memory is bounded by its peak per class, not returned at
 * each delete). Larger entries are one object each, as before. Entries are still addressed by
 * object id (slab id + place in it): no pointer leaves the map, and snapshots, restores and
 * migration carry slabs like any other object.
 *
 * Translation cache. iPipe names object-table translation as one of the runtime's two main costs
 * (and mentions a software cache over DMOs). Links are the truth; next to each the table keeps
 * the entry's region offset, and the root the table's. A cached offset is used only
 *   • while the root's epoch equals the region's layout epoch (a restore after migration re-lays
 *     objects out and advances the epoch: the first operation afterwards re-translates every
 *     offset, once, like a TLB flush — an entry object's from its row, a slab entry's by the
 *     distance its slab moved, from the start recorded in the slab's header);
 *   • for an entry that lies inside the object its link names: every probe that reaches a
 *     candidate entry resolves the link through the object table (slot range, generation; the
 *     owner was proven by the root) and checks the entry — header, key, value capacity — against
 *     that object's start and size before reading a word of it. The entry's address comes from
 *     the slot, not the row, so the two loads overlap; a map has few slabs, so their rows stay
 *     in cache. An offset that fails is damage (offsets are never stale otherwise) and throws.
 * The root and table checks themselves (root through the object table, epoch, table bounds) are
 * done once and their result reused while the region's mutation count and owner tag are
 * unchanged (no object allocated or freed since, so the root and table are where they were) and
 * the root still holds the table offset and capacity that were checked.
 *
 * Open addressing with linear probing over a power-of-two table; the full 32-bit hash is cached in
 * the table so probes compare keys only on a hash match and growth never re-hashes a key. Load
 * factor ≤ 3/4; the table doubles when it would be exceeded (the old table is freed after the new
 * one is filled, so a failed growth leaves the map as it was). Deletion shifts the following run
 * back (no tombstones), so probe lengths do not decay under churn. The table never shrinks.
 *
 * Cost of one operation (the benchmark's 16-byte keys; see docs/dmo-hash-map-performance.md).
 * Every check runs at most once per operation or per candidate entry, never per byte. What made lookups
 * cost ~1500 machine instructions (measured with cachegrind) was not the checks but how V8
 * compiled them:
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

const ROOT = {
  count: 2,
  capacity: 3,
  table: 4,
  seed: 5,
  tableOffset: 6,
  epoch: 7,
  /** Link of the newest slab; each slab's header links the one before (0 ends the chain). */
  slabs: 8,
  /** Class c's free-list head: (slab link, offset in the slab) at words freeLists + 2c, + 2c + 1. */
  freeLists: 10,
} as const;
const SLOT_WORDS = 3;
const SLOT = { hash: 0, link: 1, offset: 2 } as const;
const ENTRY = { stamp: 0, keyLength: 1, valueLength: 2, valueCapacity: 3, key: 4 } as const;
const ENTRY_HEADER_BYTES = 16;
/** Slab header words; entries follow from byte SLAB_HEADER_BYTES on, `stride` bytes apart. */
const SLAB = { magic: 0, next: 1, stride: 2, start: 3 } as const;
const SLAB_HEADER_BYTES = 16;
/** Word 0 of an object-table row: the object's region offset (ROW_WORD.offset). */
const ROW_OFFSET = 0;
/**
 * Marks a hash-map slab, so a damaged chain cannot free other objects. Its low 24 bits are 0: no
 * link has slot 0, so a slab's first word never equals an entry object's first word (its own
 * link) — which is how a link is told to name a slab or an entry object.
 */
const SLAB_MAGIC = 0x53_00_00_00;
/** In a free slab entry's keyLength word: no key is that long. */
const FREE_KEY_LENGTH = 0xffff_ffff;
/** Entries up to this many bytes live in slabs (16-byte classes); larger ones are objects. */
const SLAB_MAX_STRIDE = 256;
const SLAB_CLASSES = SLAB_MAX_STRIDE / 16;
/** A slab's entries take at most about this many bytes (and at least 4 entries). */
const SLAB_MAX_BYTES = 8192;
const SLAB_MIN_ENTRIES = 4;
const ROOT_BYTES = 4 * (ROOT.freeLists + 2 * SLAB_CLASSES);
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
  /** The region's u32 view and where its words start and end: fixed for the region's life. */
  readonly #u32: Uint32Array;
  readonly #baseWord: number;
  readonly #endWord: number;
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
  /** The table's word index #find used (valid until the map grows). */
  #table = 0;
  /**
   * What #revalidate proved about the root and table, kept while Region.unchangedSince(#stamp)
   * holds (no allocate or free in the region, same owner and incarnation) and the root still
   * holds the same table offset and capacity — so most operations skip re-resolving the root
   * through the object table and re-checking the table's bounds. Until the first #revalidate
   * succeeds nothing is cached: a restored region's stamp starts at 0 like a fresh handle's, so
   * the stamp alone cannot tell "checked" from "never checked".
   */
  #validated = false;
  #stamp = 0;
  #cachedRoot = 0;
  #cachedTable = 0;
  #cachedCapacity = 0;
  #cachedTableOffset = 0;
  #cachedSlotLimit = 0;

  private constructor(region: Region, rootId: ObjectId) {
    this.#region = region;
    this.#u32 = region.u32;
    this.#baseWord = region.baseWord;
    this.#endWord = region.endWord;
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
   * change to this map, and writes through it change the stored value. Like `DmoHeap.bytes`, it is
   * a raw typed array (unchecked once made, not revoked by a release, its `.buffer` the whole
   * domain): a fast path for trusted code, not an isolation boundary (docs/dmo-isolation.md).
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

  /** Removes every entry (their objects and slabs are freed; the table keeps its capacity). */
  clear(): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const table = this.#tableWord(root);
    const capacity = u32[root + ROOT.capacity]!;
    // Entries that are objects of their own are freed one by one; slab entries go with their
    // slabs below.
    for (let i = 0; i < capacity; i++) {
      const slot = table + SLOT_WORDS * i;
      const link = u32[slot + SLOT.link]!;
      if (link === 0) continue;
      const row = region.lookupLinked(link);
      if (row < 0) region.failLookup(region.idOf(link));
      if (this.#isEntryObject(link, row, u32[slot + SLOT.offset]!)) region.free(region.idOf(link));
    }
    u32.fill(0, table, table + SLOT_WORDS * capacity);
    u32[root + ROOT.count] = 0;
    this.#freeSlabs(root);
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
    const refs = this.#entryRefs();
    for (let i = 0; i < refs.length; i += 3) {
      this.#rootWord(); // the heap may have been released while we were suspended
      const link = refs[i]!;
      const row = region.lookupLinked(link);
      if (row < 0) continue; // an entry object freed since
      const offset = refs[i + 1]!;
      const word = (region.rowStart(row) + offset) >>> 2;
      // A slab entry deleted since (free marker) or deleted and reused (new stamp) is skipped.
      if (offset !== 0 && region.u32[word + ENTRY.keyLength] === FREE_KEY_LENGTH) continue;
      if (region.u32[word + ENTRY.stamp] !== refs[i + 2]) continue;
      const start = this.#checkedEntry(link, row, offset);
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

  /** The root's word index, with the cached table offset brought up to date. */
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
   * The hot path (#find, #tableWord, #findInto, #takeSlabEntry, the in-place branch of #set)
   * spells the layout's field offsets as literals, each named in a comment: V8 folds a literal
   * into the instruction, while ROOT.count or a module-level `const` is re-loaded and type-checked
   * on every use (about a fifth of a lookup's instructions before). The ROOT, SLOT, ENTRY and SLAB
   * tables above stay the definition, and the cold paths use them.
   */

  /**
   * Word index of the table slot holding `key[0, keyLength)`, or −1. Leaves its hash (as int32) in
   * #hash, the root in #root, the table in #table and, on a hit, the entry's word index in
   * #foundEntryWord; on a miss, the empty slot that ended the probe in #emptyIndex.
   */
  #find(key: Uint8Array, keyLength: number): number {
    // Two specialised probes rather than one with both key paths: each is small enough for V8 to
    // inline into its caller, and the 16-byte one keeps the key in four locals.
    return keyLength === 16 ? this.#find16(key) : this.#findWords(key, keyLength);
  }

  /**
   * Once per operation: the root (object table, epoch) and the table (bounds), or the cached
   * result of those checks while nothing they depend on can have changed (see #revalidate).
   * Returns the root's word index and leaves the table's in #table.
   */
  #prepare(): number {
    const u32 = this.#u32;
    let root = this.#cachedRoot;
    if (
      !this.#validated ||
      !this.#region.unchangedSince(this.#stamp) ||
      u32[root + 3 /* ROOT.capacity */] !== this.#cachedCapacity ||
      (u32[root + 6 /* ROOT.tableOffset */]! | 0) !== this.#cachedTableOffset
    ) {
      root = this.#revalidate();
    }
    this.#root = root;
    this.#table = this.#cachedTable;
    return root;
  }

  /** #find for 16-byte keys (ids, UUIDs): read into four locals, one unrolled hash stripe. */
  #find16(key: Uint8Array): number {
    const u32 = this.#u32;
    this.#prepare();
    const table = this.#table;
    const mask = this.#cachedCapacity - 1;
    const baseWord = this.#baseWord;
    const endWord = this.#endWord;
    const slotLimit = this.#cachedSlotLimit;
    const w0 = key[0]! | (key[1]! << 8) | (key[2]! << 16) | (key[3]! << 24);
    const w1 = key[4]! | (key[5]! << 8) | (key[6]! << 16) | (key[7]! << 24);
    const w2 = key[8]! | (key[9]! << 8) | (key[10]! << 16) | (key[11]! << 24);
    const w3 = key[12]! | (key[13]! << 8) | (key[14]! << 16) | (key[15]! << 24);
    const hash = hashWords16(w0, w1, w2, w3, this.#seed);
    this.#hash = hash | 0;
    for (let i = hash & mask, probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
      const slot = table + 3 /* SLOT_WORDS */ * i;
      const link = u32[slot + 1 /* SLOT.link */]!;
      if (link === 0) {
        this.#emptyIndex = i;
        return -1;
      }
      if (u32[slot /* + SLOT.hash */] !== hash) continue;
      // #entryWord(slot, link, 32), written out: hashWords16 uses up V8's inlining budget here,
      // and a call per probed entry cost more than the checks themselves.
      const objectSlot = link & 0xff_ffff;
      const row = endWord - (objectSlot << 2);
      if (
        objectSlot === 0 ||
        objectSlot > slotLimit ||
        u32[row + 3 /* ROW_WORD.meta */] !== ((link >>> 24) | 0x100) /* ROW_LIVE */
      ) {
        this.#region.failLookup(this.#region.idOf(link)); // a dangling link: throws
      }
      const offset = u32[slot + 2 /* SLOT.offset */]!;
      const word = baseWord + (offset >>> 2);
      const inObject = offset - u32[row /* + ROW_WORD.offset */]!;
      const objectBytes = u32[row + 1 /* ROW_WORD.sizeBytes */]!;
      if ((offset & 3) !== 0 || inObject < 0 || inObject + 32 /* ENTRY_HEADER_BYTES + 16 */ > objectBytes) {
        throw this.#damaged(`an entry (offset ${offset}) is not inside object ${this.#region.idOf(link)}`);
      }
      const valueCapacity = u32[word + 3 /* ENTRY.valueCapacity */]!;
      if (
        u32[word + 2 /* ENTRY.valueLength */]! > valueCapacity ||
        inObject + 32 + valueCapacity > objectBytes
      ) {
        throw this.#damaged(`an entry (offset ${offset}) is not inside object ${this.#region.idOf(link)}`);
      }
      if (u32[word + 1 /* ENTRY.keyLength */] !== 16) continue;
      if (u32[word + 4 /* ENTRY.key */] !== w0 >>> 0 || u32[word + 5] !== w1 >>> 0) continue;
      if (u32[word + 6] !== w2 >>> 0 || u32[word + 7] !== w3 >>> 0) continue;
      this.#foundEntryWord = word;
      return slot;
    }
    // Only a damaged table has no empty slot: the load factor stays ≤ 3/4.
    throw this.#damaged('its table has no empty slot');
  }

  /** #find for other key lengths: the key packed into #keyWords, compared a word at a time. */
  #findWords(key: Uint8Array, keyLength: number): number {
    const u32 = this.#region.u32;
    this.#prepare();
    const table = this.#table;
    const mask = this.#cachedCapacity - 1;
    const wordCount = (keyLength + 3) >>> 2;
    let keyWords = this.#keyWords;
    if (wordCount > keyWords.length) {
      keyWords = new Uint32Array(Math.max(wordCount, keyWords.length * 2));
      this.#keyWords = keyWords;
    }
    packWords(key, keyLength, keyWords);
    const hash = hashWords(keyWords, keyLength, this.#seed);
    this.#hash = hash | 0;
    const keyEnd = ENTRY_HEADER_BYTES + 4 * wordCount;
    for (let i = hash & mask, probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
      const slot = table + SLOT_WORDS * i;
      const link = u32[slot + SLOT.link]!;
      if (link === 0) {
        this.#emptyIndex = i;
        return -1;
      }
      if (u32[slot + SLOT.hash] !== hash) continue;
      const word = this.#entryWord(slot, link, keyEnd);
      if (u32[word + ENTRY.keyLength] !== keyLength) continue;
      const keyWord = word + ENTRY.key;
      let w = 0;
      while (w < wordCount && u32[keyWord + w] === keyWords[w]) w++;
      if (w !== wordCount) continue;
      this.#foundEntryWord = word;
      return slot;
    }
    throw this.#damaged('its table has no empty slot');
  }

  /**
   * Word index of the entry a probed slot (whose hash matched) names, after proving it lies inside
   * the object its link names: the link resolved (slot in range, generation live — the owner was
   * proven by the root), then the entry's header and key (`keyEnd` bytes) checked before any word
   * of it is read, then its value capacity (≥ its length). Throws for a dangling link or an entry
   * outside its object. The entry's address comes from the slot's cached offset, not from the
   * row, so the two loads overlap.
   */
  #entryWord(slot: number, link: number, keyEnd: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const objectSlot = link & 0xff_ffff;
    const row = region.endWord - (objectSlot << 2);
    if (
      objectSlot === 0 ||
      objectSlot > this.#cachedSlotLimit ||
      u32[row + 3 /* ROW_WORD.meta */] !== ((link >>> 24) | 0x100) /* ROW_LIVE */
    ) {
      region.failLookup(region.idOf(link)); // a dangling link: throws
    }
    const offset = u32[slot + 2 /* SLOT.offset */]!;
    const word = region.baseWord + (offset >>> 2);
    const inObject = offset - u32[row /* + ROW_WORD.offset */]!;
    const objectBytes = u32[row + 1 /* ROW_WORD.sizeBytes */]!;
    if (
      (offset & 3) !== 0 ||
      inObject < 0 ||
      inObject + keyEnd > objectBytes ||
      u32[word + 2 /* ENTRY.valueLength */]! > u32[word + 3 /* ENTRY.valueCapacity */]! ||
      inObject + keyEnd + u32[word + 3 /* ENTRY.valueCapacity */]! > objectBytes
    ) {
      throw this.#damaged(`an entry (offset ${offset}) is not inside object ${region.idOf(link)}`);
    }
    return word;
  }

  /**
   * The full per-operation checks — the root through the object table (owner tag, slot,
   * generation) and its epoch, then the table's bounds — whose results #find then reuses. The
   * stamp is read first, so an allocate or free racing these checks forces the next operation to
   * repeat them. Returns the root's word index.
   */
  #revalidate(): number {
    const region = this.#region;
    const u32 = region.u32;
    const stamp = region.mutationStamp();
    const root = this.#rootWord();
    this.#cachedTable = this.#tableWord(root);
    this.#cachedCapacity = u32[root + ROOT.capacity]!;
    this.#cachedTableOffset = u32[root + ROOT.tableOffset]! | 0;
    this.#cachedSlotLimit = region.slotLimit();
    this.#cachedRoot = root;
    this.#stamp = stamp;
    this.#validated = true;
    return root;
  }

  /**
   * Word index of the table, after checking that the cached offset is where the table object its
   * link names starts, and that `capacity` slots fit in that object. The map writes slots at
   * addresses computed from these stored numbers, and the actor can overwrite them through its
   * own checked API, so they are untrusted input. Checking against `dataTop` alone was not
   * enough: an offset below the region's header bytes made `set` write the allocator's header
   * (dataTop, slotCount, class heads), from which forged object-table rows reach other actors'
   * regions. Inside the table object, a damaged map can only damage the actor's own objects.
   */
  #tableWord(root: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const capacity = u32[root + 3 /* ROOT.capacity */]!;
    const tableOffset = u32[root + 6 /* ROOT.tableOffset */]!;
    // The root was resolved through the object table (owner tag) by the caller; the link's slot
    // range and generation are checked here (Region.lookupLinked written out with literals).
    const link = u32[root + 4 /* ROOT.table */]!;
    const slot = link & 0xff_ffff; /* SLOT_MASK */
    const row = this.#endWord - (slot << 2);
    if (
      capacity < DEFAULT_CAPACITY ||
      (capacity & (capacity - 1)) !== 0 ||
      slot === 0 ||
      slot > region.slotLimit() ||
      u32[row + 3 /* ROW_WORD.meta */] !== ((link >>> 24) | 0x100) /* ROW_LIVE */ ||
      tableOffset !== u32[row /* + ROW_WORD.offset */] ||
      capacity * 12 /* SLOT_WORDS * 4 */ > u32[row + 1 /* ROW_WORD.sizeBytes */]!
    ) {
      throw this.#damaged(
        `its table (capacity ${capacity}, offset ${tableOffset}) is not the table object its root names`,
      );
    }
    return region.baseWord + (tableOffset >>> 2);
  }

  #damaged(what: string): DmoCollectionFormatError {
    return new DmoCollectionFormatError(
      `DmoHashMap ${this.rootId} is damaged: ${what}. Its memory was overwritten (a view kept past ` +
        'a change?); rebuild the map from its source of truth',
    );
  }

  /**
   * Absolute start of the entry at byte `offset` of object `link` (at `row`), after checking that
   * it lies inside that object; an entry object (offset 0) must also carry its own link.
   */
  #checkedEntry(link: number, row: number, offset: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const objectBytes = region.rowSize(row);
    if ((offset & 3) !== 0 || offset + ENTRY_HEADER_BYTES > objectBytes) {
      throw this.#damaged(`entry at ${offset} of object ${region.idOf(link)} is outside it`);
    }
    const start = region.rowStart(row) + offset;
    const word = start >>> 2;
    const needBytes =
      ENTRY_HEADER_BYTES + paddedKeyBytes(u32[word + ENTRY.keyLength]!) + u32[word + ENTRY.valueCapacity]!;
    if (
      (offset === 0 && u32[word + ENTRY.stamp] !== link) ||
      u32[word + ENTRY.valueLength]! > u32[word + ENTRY.valueCapacity]! ||
      offset + needBytes > objectBytes
    ) {
      throw this.#damaged(`entry at ${offset} of object ${region.idOf(link)} disagrees with its object`);
    }
    return start;
  }

  /** True when the entry at region offset `offset` is object `link` (at `row`) itself, not a slab entry. */
  #isEntryObject(link: number, row: number, offset: number): boolean {
    const u32 = this.#region.u32;
    return u32[row + ROW_OFFSET] === offset && u32[(this.#region.rowStart(row) >>> 2) + ENTRY.stamp] === link;
  }

  /**
   * After a restore (objects moved, the epoch advanced): every cached offset is re-translated from
   * its link, once, like a TLB flush — the table's from the table's row; an entry object's is its
   * object's start; a slab entry keeps its place in the slab, which the slab's header records as
   * the start the slab had when the offsets were last translated. Nothing here is trusted: each
   * offset is checked against its object when it is used.
   */
  #retranslate(root: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const tableRow = region.lookupLocal(u32[root + ROOT.table]!);
    if (tableRow < 0) region.failLookup(region.idOf(u32[root + ROOT.table]!));
    const capacity = u32[root + ROOT.capacity]!;
    if (capacity * SLOT_WORDS * 4 > region.rowSize(tableRow))
      throw this.#damaged('capacity exceeds its table');
    const tableOffset = region.rowStart(tableRow) - region.base;
    u32[root + ROOT.tableOffset] = tableOffset;
    const table = region.baseWord + (tableOffset >>> 2);
    for (let i = 0; i < capacity; i++) {
      const slot = table + SLOT_WORDS * i;
      const link = u32[slot + SLOT.link]!;
      if (link === 0) continue;
      const row = region.lookupLinked(link);
      if (row < 0) region.failLookup(region.idOf(link));
      const start = u32[row + ROW_OFFSET]!;
      const object = region.rowStart(row) >>> 2;
      const isSlab = region.rowSize(row) >= SLAB_HEADER_BYTES && u32[object + SLAB.magic] === SLAB_MAGIC;
      // (a − b) >>> 0 keeps the sum a u32 even for damaged numbers; the use-time check decides.
      u32[slot + SLOT.offset] = isSlab
        ? (start + u32[slot + SLOT.offset]! - u32[object + SLAB.start]!) >>> 0
        : start;
    }
    // Only now: every slot of a slab above used the slab's old start.
    let link = u32[root + ROOT.slabs]!;
    for (let walked = region.slotLimit(); link !== 0 && walked > 0; walked--) {
      const row = region.lookupLinked(link);
      if (row < 0 || region.rowSize(row) < SLAB_HEADER_BYTES) break;
      const slab = region.rowStart(row) >>> 2;
      if (u32[slab + SLAB.magic] !== SLAB_MAGIC) break;
      u32[slab + SLAB.start] = u32[row + ROW_OFFSET]!;
      link = u32[slab + SLAB.next]!;
    }
    u32[root + ROOT.epoch] = region.layoutEpoch();
  }

  #findInto(key: Uint8Array, keyLength: number, target: Uint8Array, targetOffset: number): number {
    if (this.#find(key, keyLength) < 0) return -1;
    const u32 = this.#region.u32;
    const entryWord = this.#foundEntryWord;
    const length = u32[entryWord + 2 /* ENTRY.valueLength */]!;
    if (targetOffset >>> 0 === targetOffset && targetOffset + length <= target.length) {
      // #find checked that the value lies inside its object; it starts word-aligned after the key.
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
        // The value fits the entry it already has (#find checked the capacity against its
        // object's bounds): overwrite in place.
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
      // Outgrown: a new entry first (an exhausted region leaves the old one in place), then
      // the old one is released.
      const oldLink = u32[slot + 1 /* SLOT.link */]!;
      const oldOffset = u32[slot + 2 /* SLOT.offset */]!;
      this.#newEntry(key, keyLength, value);
      u32[slot + 1 /* SLOT.link */] = this.#newLink;
      u32[slot + 2 /* SLOT.offset */] = this.#newOffset;
      this.#releaseEntry(this.#root, oldLink, oldOffset);
      return;
    }
    const hash = this.#hash;
    let root = this.#root;
    const count = u32[root + 2 /* ROOT.count */]!;
    // #find's probe stopped at the empty slot the key goes to; only a grown table needs a new probe.
    let i = this.#emptyIndex;
    const grown = (count + 1) * 4 > u32[root + 3 /* ROOT.capacity */]! * 3;
    if (grown) {
      this.#grow(root);
      root = this.#rootWord();
      const grownTable = this.#tableWord(root);
      const mask = u32[root + ROOT.capacity]! - 1;
      i = hash & mask;
      while (u32[grownTable + SLOT_WORDS * i + SLOT.link] !== 0) i = (i + 1) & mask;
    }
    const table = grown ? this.#tableWord(root) : this.#table;
    this.#newEntry(key, keyLength, value);
    const slotWord = table + 3 /* SLOT_WORDS */ * i;
    u32[slotWord /* + SLOT.hash */] = hash;
    u32[slotWord + 1 /* SLOT.link */] = this.#newLink;
    u32[slotWord + 2 /* SLOT.offset */] = this.#newOffset;
    u32[root + 2 /* ROOT.count */] = count + 1;
  }

  /** Outputs of #newEntry / #takeSlabEntry: the new entry's (link, offset) and word index. */
  #newLink = 0;
  #newOffset = 0;
  #newWord = 0;

  /**
   * Stores `key[0, keyLength)` → `value` in a new entry — a slab entry when it is small enough,
   * else an object of its own — and leaves its (link, offset) in #newLink / #newOffset. Changes
   * nothing of the map's structure if the region is exhausted.
   */
  #newEntry(key: Uint8Array, keyLength: number, value: Uint8Array): void {
    const region = this.#region;
    const u32 = region.u32;
    const keyBytes = paddedKeyBytes(keyLength);
    const valueLength = value.length;
    const needBytes = 16 /* ENTRY_HEADER_BYTES */ + keyBytes + valueLength;
    let word: number;
    let entryBytes: number;
    if (needBytes <= 256 /* SLAB_MAX_STRIDE */) {
      entryBytes = (needBytes + 15) & ~15;
      this.#takeSlabEntry(entryBytes);
      word = this.#newWord;
      u32[word /* + ENTRY.stamp */] = (u32[word]! + 1) | 0; // a new life for this storage
    } else {
      // Ask for the whole block the allocator would hand out anyway: the slack is growth room.
      entryBytes = blockBytesFor(needBytes);
      const id = region.allocate(entryBytes);
      const link = region.localOf(id);
      const start = region.startOf(id);
      word = start >>> 2;
      u32[word /* + ENTRY.stamp */] = link;
      this.#newLink = link | 0;
      this.#newOffset = start - region.base;
    }
    u32[word + 1 /* ENTRY.keyLength */] = keyLength;
    u32[word + 2 /* ENTRY.valueLength */] = valueLength;
    u32[word + 3 /* ENTRY.valueCapacity */] = entryBytes - 16 /* ENTRY_HEADER_BYTES */ - keyBytes;
    packWords(key, keyLength, u32, word + 4 /* ENTRY.key */);
    copyBytesToWords(value, valueLength, region.u8, u32, word + 4 /* ENTRY.key */ + (keyBytes >>> 2));
  }

  /**
   * Pops a free entry of `stride` bytes off its class list (carving a new slab when the list is
   * empty) into #newLink / #newOffset / #newWord. The head is checked like any stored number:
   * its slab must resolve, be a slab of this stride, hold the offset, and the entry must be
   * marked free. A head that fails is dropped (its entries leak until `clear`) rather than
   * trusted — the same policy as the region allocator's free lists.
   */
  #takeSlabEntry(stride: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#root;
    const head = root + 10 /* ROOT.freeLists */ + 2 * ((stride >>> 4) - 1);
    const link = u32[head]!;
    if (link !== 0) {
      const row = region.lookupLinked(link);
      const offset = u32[head + 1]!;
      if (row >= 0) {
        const slab = region.baseWord + (u32[row /* + ROW_WORD.offset */]! >>> 2);
        const word = slab + (offset >>> 2);
        if (
          u32[slab /* + SLAB.magic */] === SLAB_MAGIC &&
          u32[slab + 2 /* SLAB.stride */] === stride &&
          (offset & 15) === 0 &&
          offset >= 16 /* SLAB_HEADER_BYTES */ &&
          offset + stride <= u32[row + 1 /* ROW_WORD.sizeBytes */]! &&
          u32[word + 1 /* ENTRY.keyLength */] === FREE_KEY_LENGTH
        ) {
          u32[head] = u32[word + 2]!;
          u32[head + 1] = u32[word + 3]!;
          this.#newLink = link | 0;
          this.#newOffset = u32[row /* + ROW_WORD.offset */]! + offset;
          this.#newWord = word;
          return;
        }
      }
      u32[head] = 0;
      u32[head + 1] = 0;
    }
    this.#newSlab(root, head, stride);
  }

  /** Carves a slab of `stride`-byte entries: the first goes to the caller, the rest onto the list. */
  #newSlab(root: number, head: number, stride: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const maxEntries = Math.max(SLAB_MIN_ENTRIES, Math.floor((SLAB_MAX_BYTES - SLAB_HEADER_BYTES) / stride));
    const entries = Math.min(maxEntries, Math.max(SLAB_MIN_ENTRIES, u32[root + ROOT.count]! >>> 2));
    const id = region.allocate(SLAB_HEADER_BYTES + entries * stride); // zero-filled
    const link = region.localOf(id);
    const slabStart = region.startOf(id) - region.base;
    const slab = region.baseWord + (slabStart >>> 2);
    u32[slab + SLAB.magic] = SLAB_MAGIC;
    u32[slab + SLAB.next] = u32[root + ROOT.slabs]!;
    u32[slab + SLAB.stride] = stride;
    u32[slab + SLAB.start] = slabStart;
    u32[root + ROOT.slabs] = link;
    // Entries 1..n−1 onto the free list in address order (the list is empty: we were called
    // because it was), so the inserts that follow fill the slab front to back.
    const strideWords = stride >>> 2;
    for (let e = 1; e < entries; e++) {
      const word = slab + (SLAB_HEADER_BYTES >>> 2) + e * strideWords;
      u32[word + ENTRY.keyLength] = FREE_KEY_LENGTH;
      if (e + 1 < entries) {
        u32[word + 2] = link;
        u32[word + 3] = SLAB_HEADER_BYTES + (e + 1) * stride;
      }
    }
    if (entries > 1) {
      u32[head] = link;
      u32[head + 1] = SLAB_HEADER_BYTES + stride;
    }
    this.#newLink = link | 0;
    this.#newOffset = slabStart + SLAB_HEADER_BYTES;
    this.#newWord = slab + (SLAB_HEADER_BYTES >>> 2);
  }

  /**
   * Releases the entry at region offset `offset` in object `link`: an entry object is freed; a
   * slab entry is zero-filled (a deleted value does not linger, e.g. in a snapshot) and pushed on
   * its class list, after checking that its slab is one and holds it.
   */
  #releaseEntry(root: number, link: number, offset: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const row = region.lookupLinked(link);
    if (row < 0) region.failLookup(region.idOf(link));
    if (this.#isEntryObject(link, row, offset)) {
      region.free(region.idOf(link));
      return;
    }
    const inSlab = offset - u32[row + ROW_OFFSET]!;
    const slab = region.rowStart(row) >>> 2;
    const stride = u32[slab + SLAB.stride]!;
    if (
      region.rowSize(row) < SLAB_HEADER_BYTES ||
      u32[slab + SLAB.magic] !== SLAB_MAGIC ||
      stride < 16 ||
      stride > SLAB_MAX_STRIDE ||
      (stride & 15) !== 0 ||
      (inSlab & 15) !== 0 ||
      inSlab < SLAB_HEADER_BYTES ||
      inSlab + stride > region.rowSize(row)
    ) {
      throw this.#damaged(`entry at ${offset} in object ${region.idOf(link)} is not in one of its slabs`);
    }
    const word = slab + (inSlab >>> 2);
    // A damaged table naming one entry from two slots would free it twice: a cycle in the free
    // list, then two keys sharing one entry. Refuse the second release.
    if (u32[word + ENTRY.keyLength] === FREE_KEY_LENGTH) {
      throw this.#damaged(`entry at ${offset} in object ${region.idOf(link)} is already free`);
    }
    const head = root + ROOT.freeLists + 2 * ((stride >>> 4) - 1);
    u32.fill(0, word + ENTRY.valueLength, word + (stride >>> 2));
    u32[word + ENTRY.keyLength] = FREE_KEY_LENGTH;
    u32[word + 2] = u32[head]!;
    u32[word + 3] = u32[head + 1]!;
    u32[head] = link;
    u32[head + 1] = inSlab;
  }

  /**
   * Frees every slab on the root's chain and empties the free lists. The chain is checked as it
   * is walked (each link must resolve to a slab); a damaged one ends the walk, leaking the rest
   * rather than freeing an object that is not a slab. Each step frees what it visited, so even a
   * cycle ends.
   */
  #freeSlabs(root: number): void {
    const region = this.#region;
    const u32 = region.u32;
    let link = u32[root + ROOT.slabs]!;
    u32[root + ROOT.slabs] = 0;
    u32.fill(0, root + ROOT.freeLists, root + ROOT.freeLists + 2 * SLAB_CLASSES);
    while (link !== 0) {
      const row = region.lookupLinked(link);
      if (row < 0 || region.rowSize(row) < SLAB_HEADER_BYTES) break;
      const slab = region.rowStart(row) >>> 2;
      if (u32[slab + SLAB.magic] !== SLAB_MAGIC) break;
      const next = u32[slab + SLAB.next]!;
      region.free(region.idOf(link));
      link = next;
    }
  }

  #delete(key: Uint8Array, keyLength: number): boolean {
    const region = this.#region;
    const u32 = region.u32;
    const slot = this.#find(key, keyLength);
    if (slot < 0) return false;
    const root = this.#root;
    // The table and capacity #find probed, checked by #prepare (through #tableWord) this operation.
    const table = this.#table;
    const mask = this.#cachedCapacity - 1;
    let hole = (slot - table) / SLOT_WORDS;
    // The empty slot that ends the probe run, found before anything changes: the shift below
    // stops only there, and a damaged table (the actor can overwrite its links) may have none —
    // without this bound, delete would loop forever. #find's probe is bounded the same way.
    let end = (hole + 1) & mask;
    for (let steps = 0; u32[table + SLOT_WORDS * end + SLOT.link] !== 0; end = (end + 1) & mask) {
      if (++steps > mask) throw this.#damaged('its table has no empty slot');
    }
    this.#releaseEntry(root, u32[slot + SLOT.link]!, u32[slot + SLOT.offset]!);
    // Backward-shift deletion: pull later members of the probe run into the hole unless their home
    // slot lies cyclically in (hole, j], where moving them would put them before their home.
    for (let j = (hole + 1) & mask; j !== end; j = (j + 1) & mask) {
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

  /** (link, offset in the object, stamp) of every entry, in table order: what `entries()` walks. */
  #entryRefs(): Uint32Array {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const table = this.#tableWord(root);
    const capacity = u32[root + ROOT.capacity]!;
    const refs = new Uint32Array(3 * Math.min(capacity, u32[root + ROOT.count]!));
    let n = 0;
    for (let i = 0; i < capacity && n < refs.length; i++) {
      const slot = table + SLOT_WORDS * i;
      const link = u32[slot + SLOT.link]!;
      if (link === 0) continue;
      const row = region.lookupLinked(link);
      if (row < 0) region.failLookup(region.idOf(link));
      const inObject = u32[slot + SLOT.offset]! - u32[row + ROW_OFFSET]!;
      refs[n++] = link;
      refs[n++] = inObject;
      refs[n++] = u32[this.#checkedEntry(link, row, inObject) >>> 2]!;
    }
    return refs.subarray(0, n);
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
