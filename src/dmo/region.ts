/**
 * One actor's region of a DMO domain: its allocator and its rows of the object table (iPipe §3,
 * "Distributed memory objects": each registered actor gets an equal-sized region, allocation
 * beyond it fails, and every access is translated through the object table).
 *
 * This is the engine behind `RegionHeap` (the checked public API) and the collections, which use it
 * directly to resolve an id once and then work on the domain's typed arrays. It is internal to
 * src/dmo: nothing outside the area should hold a Region.
 *
 * Allocator (segregated fit, see size-classes.ts for the classes):
 *   1. pop the head of the request's own class list (O(1));
 *   2. else bump-allocate from the gap between data and table (O(1));
 *   3. else take a block from the next non-empty larger class (a 128-bit bitmap finds it in ≤ 4
 *      word scans) and return the remainder to its class list;
 *   4. else coalesce: gather every free block, sort by offset, merge neighbours into larger
 *      blocks, and retry once (O(f log f), only when the region is otherwise full);
 *   5. else DmoRegionExhaustedError, with nothing changed.
 * Freed blocks go back to their class list without merging, and the bump pointer never moves down
 * (so memory once used for data never becomes table rows; see #freeLocked). A workload that frees
 * many small objects and then asks for one large one succeeds only if step 4 finds enough adjacent
 * free neighbours: objects never move (ids and `bytes()` views stay valid), so external
 * fragmentation is bounded only by that merge — a snapshot/restore (migration) compacts fully.
 *
 * Slots: freed rows join a FIFO and the slot's 8-bit generation is bumped, so an id kept after
 * `free` fails with DmoUnknownObjectError. FIFO (not LIFO) reuse means a stale id could only
 * alias a new object after its slot went round the whole free queue 256 times.
 *
 * Threads: metadata changes (allocate, free) take a futex lock in the region header when the
 * domain is shared and the owner is not exclusive (measured: ~30 ns per locked call here); reads and writes of object bytes take none — an actor racing a free against
 * its own use of the same object is the actor's bug (the paper leaves concurrency control over an
 * actor's state to the programmer).
 */

import {
  ActorDeregisteredError,
  DmoForeignObjectError,
  DmoInvalidSizeError,
  DmoRegionExhaustedError,
  DmoUnknownObjectError,
} from '../errors.ts';
import { type ActorId, MAX_OBJECT_SLOT, type ObjectId, objectOwner } from '../ids.ts';
import { lockWord, unlockWord } from './futex-lock.ts';
import {
  alignUp,
  GENERATION_MASK,
  nextIncarnation,
  ownerTag,
  REGION_FIXED_HEADER_BYTES,
  REGION_FLAG_EXCLUSIVE,
  REGION_LAYOUT_VERSION,
  REGION_MAGIC,
  REGION_WORD,
  ROW_BYTES,
  ROW_LIVE,
  ROW_WORD,
} from './layout.ts';
import type { DomainMemory } from './memory.ts';
import { classCeil, classFloor, classSize, MAX_CLASS_COUNT, MIN_BLOCK_BYTES } from './size-classes.ts';
import type { DmoHeapStats, ObjectTableRow } from './types.ts';

const OWNER_MULTIPLIER = 2 ** 32;
const GENERATION_MULTIPLIER = 2 ** 24;
const SLOT_MASK = 0xff_ffff;
/** The largest object: a u32 size whose block (rounded up to its class) still fits a u32. */
export const MAX_OBJECT_BYTES = 0xf000_0000;

/** Header bytes of a region of `regionBytes`: fixed fields plus one list head per usable class. */
export function regionHeaderBytes(regionBytes: number): number {
  return alignUp(REGION_FIXED_HEADER_BYTES + 4 * regionClassCount(regionBytes), 16);
}

/** Size classes a region of `regionBytes` keeps list heads for (up to one block the whole region's size). */
export function regionClassCount(regionBytes: number): number {
  return Math.min(MAX_CLASS_COUNT, classCeil(regionBytes) + 1);
}

/** Block bytes an object of `sizeBytes` occupies (its class's size). */
export function blockBytesFor(sizeBytes: number): number {
  return classSize(classCeil(sizeBytes));
}

/** The engine of one actor's region: id resolution, allocator, object-table rows. */
export class Region {
  readonly memory: DomainMemory;
  readonly u8: Uint8Array;
  readonly u32: Uint32Array;
  readonly f64: Float64Array;
  readonly view: DataView;
  readonly owner: ActorId;
  /** Absolute byte offset of the region in the domain buffer (16-aligned). */
  readonly base: number;
  readonly regionBytes: number;
  /** The incarnation this handle was made for (see REGION_WORD.incarnation). */
  readonly incarnation: number;
  readonly #i32: Int32Array;
  readonly #headerWord: number;
  /**
   * Absolute word indices of the header fields that every id resolution reads, computed once:
   * V8 does not fold module-level constants (REGION_WORD.x is a context load, a map check and a
   * field load each time), so the hot path reads plain fields of `this` instead.
   */
  readonly #slotCountWord: number;
  readonly #ownerTagWord: number;
  readonly #dataTopWord: number;
  readonly #layoutEpochWord: number;
  readonly #mutationsWord: number;
  /** The owner tag as the int32 with the same bits (compared with an Int32Array load). */
  readonly #ownerTagInt32: number;
  /** `base / 4`: word index of the region's first byte (base is 16-aligned). */
  readonly #baseWord: number;
  /** Word index one past the region's last word: slot s's row starts at endWord − 4s. */
  readonly #endWord: number;
  readonly #ownerBase: number;
  readonly #ownerTag: number;
  readonly #classCount: number;
  /** Take the futex lock around allocate/free: shared memory and an owner that may run in parallel. */
  readonly #locking: boolean;
  /** Out-parameter of #takeBlock (the block's size), to avoid returning a tuple on the hot path. */
  #takenBlockBytes = 0;

  /** A handle on a region whose header is already initialised for `owner`. */
  constructor(memory: DomainMemory, base: number, owner: ActorId) {
    this.memory = memory;
    this.u8 = memory.u8;
    this.u32 = memory.u32;
    this.f64 = memory.f64;
    this.view = memory.view;
    this.#i32 = memory.i32;
    this.base = base;
    this.#headerWord = base >>> 2;
    this.#slotCountWord = this.#headerWord + REGION_WORD.slotCount;
    this.#ownerTagWord = this.#headerWord + REGION_WORD.ownerTag;
    this.#dataTopWord = this.#headerWord + REGION_WORD.dataTop;
    this.#layoutEpochWord = this.#headerWord + REGION_WORD.layoutEpoch;
    this.#mutationsWord = this.#headerWord + REGION_WORD.mutations;
    this.#baseWord = base >>> 2;
    this.regionBytes = memory.u32[this.#headerWord + REGION_WORD.regionBytes]!;
    this.#endWord = (base + this.regionBytes) >>> 2;
    this.#classCount = memory.u32[this.#headerWord + REGION_WORD.classCount]!;
    this.incarnation = memory.u32[this.#headerWord + REGION_WORD.incarnation]!;
    this.owner = owner;
    this.#ownerBase = owner * OWNER_MULTIPLIER;
    this.#ownerTag = ownerTag(owner, this.incarnation);
    this.#ownerTagInt32 = this.#ownerTag | 0;
    this.#locking =
      memory.shared && (memory.u32[this.#headerWord + REGION_WORD.flags]! & REGION_FLAG_EXCLUSIVE) === 0;
  }

  /**
   * Writes a fresh, empty region header for `owner` (the caller holds the domain lock). `flags`
   * are REGION_FLAG_* bits.
   */
  static initialise(
    memory: DomainMemory,
    base: number,
    regionBytes: number,
    owner: ActorId,
    flags: number,
  ): Region {
    const u32 = memory.u32;
    const header = base >>> 2;
    const headerBytes = regionHeaderBytes(regionBytes);
    const incarnation =
      u32[header + REGION_WORD.magic] === REGION_MAGIC ? u32[header + REGION_WORD.incarnation]! : 0;
    u32.fill(0, header, header + (headerBytes >>> 2));
    u32[header + REGION_WORD.magic] = REGION_MAGIC;
    u32[header + REGION_WORD.version] = REGION_LAYOUT_VERSION;
    const next = nextIncarnation(incarnation);
    u32[header + REGION_WORD.incarnation] = next;
    u32[header + REGION_WORD.dataTop] = headerBytes;
    u32[header + REGION_WORD.classCount] = regionClassCount(regionBytes);
    u32[header + REGION_WORD.headerBytes] = headerBytes;
    u32[header + REGION_WORD.regionBytes] = regionBytes;
    u32[header + REGION_WORD.layoutEpoch] = 1;
    u32[header + REGION_WORD.flags] = flags;
    u32[header + REGION_WORD.lastOwner] = owner;
    // Publish the owner last: a thread scanning for the actor's region sees a complete header.
    Atomics.store(u32, header + REGION_WORD.ownerTag, ownerTag(owner, next));
    return new Region(memory, base, owner);
  }

  /** True while the region still belongs to this handle's actor and incarnation. */
  isCurrent(): boolean {
    const header = this.#headerWord;
    return (
      this.u32[header + REGION_WORD.ownerTag] === this.#ownerTag &&
      this.u32[header + REGION_WORD.incarnation] === this.incarnation
    );
  }

  /** See REGION_WORD.layoutEpoch: when it changes, every cached object offset is stale. */
  layoutEpoch(): number {
    return this.u32[this.#layoutEpochWord]!;
  }

  /** REGION_WORD.mutations as an int32: read it before validating what a cache will keep. */
  mutationStamp(): number {
    return this.#i32[this.#mutationsWord]!;
  }

  /**
   * True while the region is still this handle's (owner tag and incarnation) and no object has
   * been allocated or freed since `stamp` was read: every object that was live then still is, at
   * the same place, with the same size.
   */
  unchangedSince(stamp: number): boolean {
    const i32 = this.#i32;
    return i32[this.#mutationsWord] === stamp && i32[this.#ownerTagWord] === this.#ownerTagInt32;
  }

  /** Region offset one past the highest byte ever handed out as data. */
  dataTop(): number {
    return this.u32[this.#dataTopWord]!;
  }

  /** Hands the region back to the domain; every id of it stops resolving at once. */
  markReleased(): void {
    Atomics.store(this.u32, this.#headerWord + REGION_WORD.ownerTag, 0);
  }

  // ---- resolving ids (hot path) -------------------------------------------------------------

  /** The id of this region's object whose low 32 bits are `local` (generation·2^24 + slot). */
  idOf(local: number): ObjectId {
    // `>>> 0`: a caller may hold a link as the int32 with the same bits (see lookupLocal).
    return (this.#ownerBase + (local >>> 0)) as ObjectId;
  }

  /** The low 32 bits of an id: what collections store as links (the owner is implied). */
  localOf(id: ObjectId): number {
    return id - this.#ownerBase;
  }

  /** Row word index of a live object of this region, or −1. Never throws. */
  lookup(id: number): number {
    const local = id - this.#ownerBase;
    // One test rejects NaN, fractions, other owners' ids and anything outside [0, 2^32).
    if (local >>> 0 !== local) return -1;
    return this.lookupLocal(local);
  }

  /**
   * Like lookup, from a local id (a u32 read from a collection's link field, or the int32 with the
   * same bits: only `& SLOT_MASK` and `>>> 24` of it are used, and both read bits).
   */
  lookupLocal(local: number): number {
    // Literals, not SLOT_MASK / ROW_WORD.meta / ROW_LIVE: V8 re-loads and checks a module-level
    // constant on every use, and this runs once per collection operation.
    const u32 = this.u32;
    const slot = local & 0xff_ffff; /* SLOT_MASK */
    if (slot === 0 || slot > u32[this.#slotCountWord]! || u32[this.#ownerTagWord] !== this.#ownerTag) {
      return -1;
    }
    const row = this.#endWord - (slot << 2);
    return u32[row + 3 /* ROW_WORD.meta */] === ((local >>> 24) | 0x100) /* ROW_LIVE */ ? row : -1;
  }

  /**
   * Word index (of `u32`) where the live object `local` starts, or throws — startOfLocal for
   * callers that address objects by word. Always below 2^30, so V8 keeps it a small integer where
   * a byte offset past 2 GiB would be a boxed double.
   */
  startWordOfLocal(local: number): number {
    // lookupLocal written out (same checks): one call for V8 to inline instead of two nested ones,
    // which left it out of the hash map's lookup once that had used up its inlining budget.
    const u32 = this.u32;
    const slot = local & 0xff_ffff; /* SLOT_MASK */
    const row = this.#endWord - (slot << 2);
    if (
      slot === 0 ||
      slot > u32[this.#slotCountWord]! ||
      u32[this.#ownerTagWord] !== this.#ownerTag ||
      u32[row + 3 /* ROW_WORD.meta */] !== ((local >>> 24) | 0x100) /* ROW_LIVE */
    ) {
      this.failLookup(this.idOf(local));
    }
    return this.#baseWord + (u32[row]! >>> 2);
  }

  /** `base / 4`: the word index of the region's first byte. */
  get baseWord(): number {
    return this.#baseWord;
  }

  /**
   * Word index one past the region's last word: slot s's row starts at `endWord − 4s`. For
   * collections that resolve many links in one operation inline (see DmoHashMap's probe).
   */
  get endWord(): number {
    return this.#endWord;
  }

  /** Slots 1..slotLimit() exist (a read through a precomputed word index, for hot paths). */
  slotLimit(): number {
    return this.u32[this.#slotCountWord]!;
  }

  /** Absolute start of a live object, or throws the precise error. */
  startOf(id: ObjectId): number {
    const row = this.lookup(id);
    if (row < 0) this.failLookup(id);
    return this.base + this.u32[row]!;
  }

  /** Absolute start of the object a link names, or throws (a dangling link is a broken structure). */
  startOfLocal(local: number): number {
    const row = this.lookupLocal(local);
    if (row < 0) this.failLookup(this.idOf(local));
    return this.base + this.u32[row]!;
  }

  /**
   * Like startOfLocal without the region-ownership test, for the second and later links a
   * collection follows in one synchronous operation: the operation already resolved its root
   * through startOfLocal, which proved the region is still this actor's. Slot range and generation
   * are still checked, so a dangling link cannot reach a row outside the table.
   */
  startOfLinked(local: number): number {
    const row = this.lookupLinked(local);
    if (row < 0) this.failLookup(this.idOf(local));
    return this.base + this.u32[row]!;
  }

  /** Row of the object a link names, or −1, without the ownership test (see startOfLinked). */
  lookupLinked(local: number): number {
    const u32 = this.u32;
    const slot = local & SLOT_MASK;
    const row = this.#endWord - (slot << 2);
    return slot !== 0 &&
      slot <= u32[this.#slotCountWord]! &&
      u32[row + ROW_WORD.meta] === ((local >>> 24) | ROW_LIVE)
      ? row
      : -1;
  }

  /** Absolute start of the object at `row` (a value lookup returned). */
  rowStart(row: number): number {
    return this.base + this.u32[row]!;
  }

  rowSize(row: number): number {
    return this.u32[row + ROW_WORD.sizeBytes]!;
  }

  /** Throws the error that says why `id` did not resolve (the cold half of lookup). */
  failLookup(id: number): never {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
      throw new DmoUnknownObjectError(id, 'not an object id');
    }
    const owner = objectOwner(id as ObjectId);
    if (owner !== this.owner) throw new DmoForeignObjectError(id, owner, this.owner);
    if (!this.isCurrent()) throw new DmoUnknownObjectError(id, `actor ${this.owner}'s heap was released`);
    const local = id - this.#ownerBase;
    const slot = local & SLOT_MASK;
    const generation = local >>> 24;
    if (slot === 0) throw new DmoUnknownObjectError(id, 'slot 0 is never used');
    if (slot > this.u32[this.#headerWord + REGION_WORD.slotCount]!) {
      throw new DmoUnknownObjectError(id, 'never allocated');
    }
    const meta = this.u32[this.#endWord - (slot << 2) + ROW_WORD.meta]!;
    if ((meta & ROW_LIVE) === 0 && (meta & GENERATION_MASK) === ((generation + 1) & GENERATION_MASK)) {
      throw new DmoUnknownObjectError(id, 'freed');
    }
    throw new DmoUnknownObjectError(
      id,
      `stale id: slot ${slot} is at generation ${meta & GENERATION_MASK}, the id has ${generation}`,
    );
  }

  // ---- allocation ---------------------------------------------------------------------------

  /** dmo_malloc: a zero-filled object of `sizeBytes`. */
  allocate(sizeBytes: number): ObjectId {
    if (!Number.isInteger(sizeBytes) || sizeBytes < 0 || sizeBytes > MAX_OBJECT_BYTES) {
      throw new DmoInvalidSizeError('object size in bytes', sizeBytes);
    }
    if (this.#locking) lockWord(this.#i32, this.#headerWord + REGION_WORD.lock);
    try {
      return this.#allocateLocked(sizeBytes);
    } finally {
      if (this.#locking) unlockWord(this.#i32, this.#headerWord + REGION_WORD.lock);
    }
  }

  #allocateLocked(sizeBytes: number): ObjectId {
    const u32 = this.u32;
    const header = this.#headerWord;
    if (!this.isCurrent()) throw new ActorDeregisteredError(this.owner, 'its DMO heap was released');
    const sizeClass = classCeil(sizeBytes);
    if (
      sizeClass >= this.#classCount ||
      (u32[header + REGION_WORD.freeSlotHead] === 0 &&
        u32[header + REGION_WORD.slotCount]! >= MAX_OBJECT_SLOT)
    ) {
      throw this.#exhausted(sizeBytes);
    }
    let offset = this.#takeBlock(sizeClass);
    if (offset === 0 && this.#coalesce()) offset = this.#takeBlock(sizeClass);
    if (offset === 0) throw this.#exhausted(sizeBytes);
    const blockBytes = this.#takenBlockBytes;

    // #takeBlock made sure a row is available: a free slot, or 16 bytes of gap to carve one.
    let slot = u32[header + REGION_WORD.freeSlotHead]!;
    let row: number;
    let generation: number;
    if (slot !== 0) {
      row = this.#endWord - (slot << 2);
      const next = u32[row + ROW_WORD.offset]!;
      u32[header + REGION_WORD.freeSlotHead] = next;
      if (next === 0) u32[header + REGION_WORD.freeSlotTail] = 0;
      generation = u32[row + ROW_WORD.meta]! & GENERATION_MASK;
    } else {
      slot = u32[header + REGION_WORD.slotCount]! + 1;
      u32[header + REGION_WORD.slotCount] = slot;
      row = this.#endWord - (slot << 2);
      generation = 0;
    }
    u32[row + ROW_WORD.offset] = offset;
    u32[row + ROW_WORD.sizeBytes] = sizeBytes;
    u32[row + ROW_WORD.blockBytes] = blockBytes;
    u32[row + ROW_WORD.meta] = generation | ROW_LIVE;
    u32[header + REGION_WORD.liveObjects]!++;
    u32[header + REGION_WORD.usedBytes] = u32[header + REGION_WORD.usedBytes]! + blockBytes;
    u32[this.#mutationsWord] = u32[this.#mutationsWord]! + 1;
    // Zero-fill: a block may hold a previous object's bytes (ours, or a former owner's). Blocks
    // are 16-byte aligned multiples of 16, so whole words up to the size rounded to 4 are ours.
    const start = this.base + offset;
    const startWord = start >>> 2;
    const endWord = (start + sizeBytes + 3) >>> 2;
    if (sizeBytes <= 64) {
      for (let word = startWord; word < endWord; word++) u32[word] = 0;
    } else {
      u32.fill(0, startWord, endWord);
    }
    return (this.#ownerBase + generation * GENERATION_MULTIPLIER + slot) as ObjectId;
  }

  /** Region offset of a block of class `sizeClass` (its size in #takenBlockBytes), or 0. */
  #takeBlock(sizeClass: number): number {
    const u32 = this.u32;
    const header = this.#headerWord;
    const rowBytes = u32[header + REGION_WORD.freeSlotHead] === 0 ? ROW_BYTES : 0;
    const dataTop = u32[header + REGION_WORD.dataTop]!;
    const tableBottom = this.regionBytes - u32[header + REGION_WORD.slotCount]! * ROW_BYTES;
    const rowFits = dataTop + rowBytes <= tableBottom;
    if (rowFits && u32[header + REGION_WORD.classHeads + sizeClass] !== 0) {
      const offset = this.#popFree(sizeClass);
      if (offset !== 0) return offset;
    }
    const needBytes = classSize(sizeClass);
    if (dataTop + needBytes + rowBytes <= tableBottom) {
      u32[header + REGION_WORD.dataTop] = dataTop + needBytes;
      this.#takenBlockBytes = needBytes;
      return dataTop;
    }
    if (!rowFits) return 0;
    for (let larger = this.#nextNonEmptyClass(sizeClass + 1); larger >= 0; ) {
      const offset = this.#popFree(larger);
      if (offset === 0) {
        larger = this.#nextNonEmptyClass(larger);
        continue;
      }
      const blockBytes = this.#takenBlockBytes;
      if (blockBytes - needBytes >= MIN_BLOCK_BYTES) {
        this.#pushFree(offset + needBytes, blockBytes - needBytes);
        this.#takenBlockBytes = needBytes;
      }
      return offset;
    }
    return 0;
  }

  /**
   * Pops the head of class `sizeClass`'s list and leaves its size in #takenBlockBytes. Returns 0
   * (and empties the list) when the head is not a plausible free block of that class: free blocks
   * keep their links in data memory, which a buggy actor could still reach through a view it kept
   * after `free`. Checking each block against the data area before handing it out means such
   * corruption can at worst make the actor's own objects overlap — never place one outside its
   * region, or over its object table (which never shares memory with data, see #freeLocked).
   */
  #popFree(sizeClass: number): number {
    const u32 = this.u32;
    const header = this.#headerWord;
    const headWord = header + REGION_WORD.classHeads + sizeClass;
    const offset = u32[headWord]!;
    const blockWord = (this.base + offset) >>> 2;
    const blockBytes = u32[blockWord + 1]!;
    if (!this.#plausibleFreeBlock(offset, blockBytes, sizeClass)) {
      this.#dropList(sizeClass);
      return 0;
    }
    const next = u32[blockWord]!;
    u32[headWord] = next;
    if (next === 0) this.#clearClassBit(sizeClass);
    u32[header + REGION_WORD.freeListBytes] = u32[header + REGION_WORD.freeListBytes]! - blockBytes;
    this.#takenBlockBytes = blockBytes;
    return offset;
  }

  #plausibleFreeBlock(offset: number, blockBytes: number, sizeClass: number): boolean {
    const header = this.#headerWord;
    return (
      (offset & 15) === 0 &&
      (blockBytes & 15) === 0 &&
      offset >= this.u32[header + REGION_WORD.headerBytes]! &&
      blockBytes >= classSize(sizeClass) &&
      offset + blockBytes <= this.u32[header + REGION_WORD.dataTop]!
    );
  }

  /** Forgets a corrupted class list (its blocks leak; the stats' free bytes drift by as much). */
  #dropList(sizeClass: number): void {
    this.u32[this.#headerWord + REGION_WORD.classHeads + sizeClass] = 0;
    this.#clearClassBit(sizeClass);
  }

  #clearClassBit(sizeClass: number): void {
    const bitmapWord = this.#headerWord + REGION_WORD.bitmap + (sizeClass >>> 5);
    this.u32[bitmapWord] = this.u32[bitmapWord]! & ~(1 << (sizeClass & 31));
  }

  #pushFree(offset: number, blockBytes: number): void {
    const u32 = this.u32;
    const header = this.#headerWord;
    const sizeClass = classFloor(blockBytes);
    const headWord = header + REGION_WORD.classHeads + sizeClass;
    const blockWord = (this.base + offset) >>> 2;
    u32[blockWord] = u32[headWord]!;
    u32[blockWord + 1] = blockBytes;
    u32[headWord] = offset;
    const bitmapWord = header + REGION_WORD.bitmap + (sizeClass >>> 5);
    u32[bitmapWord] = u32[bitmapWord]! | (1 << (sizeClass & 31));
    u32[header + REGION_WORD.freeListBytes] = u32[header + REGION_WORD.freeListBytes]! + blockBytes;
  }

  /** Smallest class ≥ `from` with a non-empty free list, or −1. */
  #nextNonEmptyClass(from: number): number {
    const u32 = this.u32;
    const bitmap = this.#headerWord + REGION_WORD.bitmap;
    for (let word = from >>> 5; word < MAX_CLASS_COUNT >>> 5; word++) {
      let bits = u32[bitmap + word]!;
      if (word === from >>> 5) bits &= -1 << (from & 31);
      if (bits !== 0) {
        const sizeClass = (word << 5) + (31 - Math.clz32(bits & -bits));
        return sizeClass < this.#classCount ? sizeClass : -1;
      }
    }
    return -1;
  }

  /** Merges adjacent free blocks into larger ones. True if anything merged. */
  #coalesce(): boolean {
    const u32 = this.u32;
    const header = this.#headerWord;
    const offsets: number[] = [];
    const sizes = new Map<number, number>();
    for (let sizeClass = 0; sizeClass < this.#classCount; sizeClass++) {
      let offset = u32[header + REGION_WORD.classHeads + sizeClass]!;
      while (offset !== 0) {
        const blockWord = (this.base + offset) >>> 2;
        const blockBytes = u32[blockWord + 1]!;
        // A corrupt link ends the walk: the rest of that list is dropped (see #popFree).
        if (!this.#plausibleFreeBlock(offset, blockBytes, sizeClass) || sizes.has(offset)) break;
        offsets.push(offset);
        sizes.set(offset, blockBytes);
        offset = u32[blockWord]!;
      }
    }
    offsets.sort((a, b) => a - b);
    const runStarts: number[] = [];
    const runBytes: number[] = [];
    for (const offset of offsets) {
      const size = sizes.get(offset)!;
      const last = runStarts.length - 1;
      if (last >= 0 && runStarts[last]! + runBytes[last]! === offset) runBytes[last]! += size;
      else if (last >= 0 && runStarts[last]! + runBytes[last]! > offset)
        continue; // overlap: corrupt
      else {
        runStarts.push(offset);
        runBytes.push(size);
      }
    }
    u32.fill(0, header + REGION_WORD.bitmap, header + REGION_WORD.bitmap + (MAX_CLASS_COUNT >>> 5));
    u32.fill(0, header + REGION_WORD.classHeads, header + REGION_WORD.classHeads + this.#classCount);
    u32[header + REGION_WORD.freeListBytes] = 0;
    for (let i = 0; i < runStarts.length; i++) this.#pushFree(runStarts[i]!, runBytes[i]!);
    return runStarts.length < offsets.length;
  }

  #exhausted(sizeBytes: number): DmoRegionExhaustedError {
    return new DmoRegionExhaustedError(this.owner, sizeBytes, this.regionBytes, this.stats().freeBytes);
  }

  /** dmo_free. */
  free(id: ObjectId): void {
    if (this.#locking) lockWord(this.#i32, this.#headerWord + REGION_WORD.lock);
    try {
      this.#freeLocked(id);
    } finally {
      if (this.#locking) unlockWord(this.#i32, this.#headerWord + REGION_WORD.lock);
    }
  }

  #freeLocked(id: ObjectId): void {
    const row = this.lookup(id);
    if (row < 0) this.failLookup(id);
    const u32 = this.u32;
    const header = this.#headerWord;
    const offset = u32[row + ROW_WORD.offset]!;
    const blockBytes = u32[row + ROW_WORD.blockBytes]!;
    // The block goes to a free list even when it is the topmost one: the bump pointer never moves
    // down, so memory that was once data (and may still be reachable through a view kept past
    // free) never becomes object-table rows, which the checked API trusts.
    this.#pushFree(offset, blockBytes);
    const slot = (this.#endWord - row) >>> 2;
    u32[row + ROW_WORD.meta] = (u32[row + ROW_WORD.meta]! + 1) & GENERATION_MASK;
    u32[row + ROW_WORD.offset] = 0;
    u32[row + ROW_WORD.sizeBytes] = 0;
    u32[row + ROW_WORD.blockBytes] = 0;
    const tail = u32[header + REGION_WORD.freeSlotTail]!;
    if (tail === 0) u32[header + REGION_WORD.freeSlotHead] = slot;
    else u32[this.#endWord - (tail << 2) + ROW_WORD.offset] = slot;
    u32[header + REGION_WORD.freeSlotTail] = slot;
    u32[header + REGION_WORD.liveObjects]!--;
    u32[header + REGION_WORD.usedBytes] = u32[header + REGION_WORD.usedBytes]! - blockBytes;
    u32[this.#mutationsWord] = u32[this.#mutationsWord]! + 1;
  }

  // ---- whole-region views -------------------------------------------------------------------

  get slotCount(): number {
    return this.u32[this.#headerWord + REGION_WORD.slotCount]!;
  }

  /** Row word 3 of `slot` (generation | LIVE), for snapshots. */
  slotMeta(slot: number): number {
    return this.u32[this.#endWord - (slot << 2) + ROW_WORD.meta]!;
  }

  /** Row word index of `slot` (1 ≤ slot ≤ slotCount). */
  slotRow(slot: number): number {
    return this.#endWord - (slot << 2);
  }

  stats(): DmoHeapStats {
    const u32 = this.u32;
    const header = this.#headerWord;
    const tableBottom = this.regionBytes - u32[header + REGION_WORD.slotCount]! * ROW_BYTES;
    const gapBytes = tableBottom - u32[header + REGION_WORD.dataTop]!;
    return {
      regionBytes: this.regionBytes,
      usedBytes: u32[header + REGION_WORD.usedBytes]!,
      freeBytes: gapBytes + u32[header + REGION_WORD.freeListBytes]!,
      liveObjects: u32[header + REGION_WORD.liveObjects]!,
    };
  }

  *objects(): IterableIterator<ObjectId> {
    for (let slot = 1; slot <= this.slotCount; slot++) {
      const meta = this.slotMeta(slot);
      if ((meta & ROW_LIVE) !== 0) {
        yield (this.#ownerBase + (meta & GENERATION_MASK) * GENERATION_MULTIPLIER + slot) as ObjectId;
      }
    }
  }

  *tableRows(): IterableIterator<ObjectTableRow> {
    const u32 = this.u32;
    for (let slot = 1; slot <= this.slotCount; slot++) {
      const row = this.slotRow(slot);
      const meta = u32[row + ROW_WORD.meta]!;
      if ((meta & ROW_LIVE) === 0) continue;
      yield {
        objectId: (this.#ownerBase + (meta & GENERATION_MASK) * GENERATION_MULTIPLIER + slot) as ObjectId,
        actorId: this.owner,
        start: this.base + u32[row + ROW_WORD.offset]!,
        sizeBytes: u32[row + ROW_WORD.sizeBytes]!,
      };
    }
  }

  /**
   * Lays out a restored table in a freshly initialised region: slot s gets `metas[s − 1]`
   * (generation | LIVE) and, when live, a bump-allocated block of `sizes[s − 1]` bytes. Free slots
   * join the FIFO in slot order. Returns each slot's absolute data start (0 for free slots). The
   * caller has checked that everything fits (restoreFootprintBytes). `layoutEpoch` must differ
   * from the snapshot's (objects moved).
   */
  layOutRestoredTable(metas: Uint32Array, sizes: Uint32Array, layoutEpoch: number): Float64Array {
    const u32 = this.u32;
    const header = this.#headerWord;
    const slotCount = metas.length;
    const starts = new Float64Array(slotCount);
    let dataTop = u32[header + REGION_WORD.dataTop]!;
    let live = 0;
    let usedBytes = 0;
    let tail = 0;
    for (let slot = 1; slot <= slotCount; slot++) {
      const row = this.#endWord - (slot << 2);
      const meta = metas[slot - 1]!;
      if ((meta & ROW_LIVE) !== 0) {
        const sizeBytes = sizes[slot - 1]!;
        const blockBytes = blockBytesFor(sizeBytes);
        u32[row + ROW_WORD.offset] = dataTop;
        u32[row + ROW_WORD.sizeBytes] = sizeBytes;
        u32[row + ROW_WORD.blockBytes] = blockBytes;
        u32[row + ROW_WORD.meta] = meta;
        starts[slot - 1] = this.base + dataTop;
        dataTop += blockBytes;
        usedBytes += blockBytes;
        live++;
      } else {
        u32[row + ROW_WORD.offset] = 0;
        u32[row + ROW_WORD.sizeBytes] = 0;
        u32[row + ROW_WORD.blockBytes] = 0;
        u32[row + ROW_WORD.meta] = meta & GENERATION_MASK;
        if (tail === 0) u32[header + REGION_WORD.freeSlotHead] = slot;
        else u32[this.#endWord - (tail << 2) + ROW_WORD.offset] = slot;
        tail = slot;
      }
    }
    u32[header + REGION_WORD.freeSlotTail] = tail;
    u32[header + REGION_WORD.layoutEpoch] = layoutEpoch;
    u32[header + REGION_WORD.slotCount] = slotCount;
    u32[header + REGION_WORD.dataTop] = dataTop;
    u32[header + REGION_WORD.liveObjects] = live;
    u32[header + REGION_WORD.usedBytes] = usedBytes;
    return starts;
  }
}

/** Bytes a region needs to hold a restored table of `slotCount` rows and live objects of `sizes`. */
export function restoreFootprintBytes(
  regionBytes: number,
  slotCount: number,
  liveSizes: Iterable<number>,
): number {
  let bytes = regionHeaderBytes(regionBytes) + slotCount * ROW_BYTES;
  for (const sizeBytes of liveSizes) bytes += blockBytesFor(sizeBytes);
  return bytes;
}
