/**
 * `DmoSkipList`: an ordered byte-string map in DMOs — the RKV memtable of iPipe §3/§5 ("a skip-list
 * node stores the object ids of its forward nodes and of its value").
 *
 * Objects and links (a link is a local id: generation·2^24 + slot, owner implied; 0 = none):
 *
 *   root  (32 B)  [magic, version, count, maxLevel, level, rngState, head link, tail link]  u32
 *   node  (12 + 4·level + k B)  [keyLength, level, value link, forward[0..level), key bytes]
 *   value (v B)   the value's bytes, a separate object so that a longer value replaces only it
 *
 * The head node has maxLevel forward links and no key. Keys order lexicographically by unsigned
 * byte (shorter prefix first). A node's level is drawn with p = 1/4 (as LevelDB), from an
 * xorshift32 generator whose state lives in the root — so a re-opened or migrated list continues
 * the same deterministic sequence — or from a caller's `random()` when one is given. Expected
 * search cost: (log₄ n) levels × ~3 node visits; the tail link makes `last()` O(1).
 *
 * Iterators survive changes: they remember the last key they yielded and, if its node was
 * deleted meanwhile, re-seek to the first key after it.
 *
 * Stored numbers (levels, key lengths) are untrusted: every node is checked against its object's
 * size before its fields or links are read, so even a damaged list cannot read or write outside
 * the actor's own objects; it throws DmoCollectionFormatError instead.
 */

import { DmoCollectionFormatError, DmoInvalidSizeError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import { compareBytes, copyBytes } from '../hash.ts';
import { regionOf } from '../heap.ts';
import type { Region } from '../region.ts';
import type { DmoHeap } from '../types.ts';
import { checkRoot, initRoot } from './collection-header.ts';

const ROOT_BYTES = 32;
const ROOT = { count: 2, maxLevel: 3, level: 4, rngState: 5, head: 6, tail: 7 } as const;
/** Node words: keyLength, level, value link, then forward links. */
const NODE = { keyLength: 0, level: 1, value: 2, forward: 3 } as const;
const NODE_HEADER_BYTES = 12;
const DEFAULT_MAX_LEVEL = 16;
/** One xorshift32 draw gives 16 two-bit trials: levels beyond 17 would need a second draw. */
const MAX_LEVEL_LIMIT = 17;
const DEFAULT_SEED = 0x2545f491;

/** How a skip list starts. */
export interface DmoSkipListOptions {
  /** Most levels a node can have, 1..17 (default 16: fine up to ~4^16 entries). */
  readonly maxLevel?: number;
  /** Seed of the stored level generator (a non-zero u32; default fixed). */
  readonly seed?: number;
  /**
   * A random source in [0, 1) for node levels, used instead of the stored generator (it is a JS
   * function, so it is not kept in DMOs: pass it again when re-opening).
   */
  readonly random?: () => number;
}

/** Options when re-opening a list. */
export interface DmoSkipListOpenOptions {
  readonly random?: () => number;
}

/** An ordered byte-string map stored in one actor's DMOs; re-open it by `rootId`. */
export class DmoSkipList {
  /** The root object's id: keep it to re-open the list. */
  readonly rootId: ObjectId;
  readonly #region: Region;
  readonly #rootLocal: number;
  /** Fixed at creation (never rewritten), so a copy outside the DMO cannot go stale. */
  readonly #maxLevel: number;
  readonly #random: (() => number) | undefined;
  /** Predecessor links per level from the last #seek (scratch, not data). */
  readonly #update: Uint32Array;

  private constructor(region: Region, rootId: ObjectId, random: (() => number) | undefined) {
    this.#region = region;
    this.rootId = rootId;
    this.#rootLocal = region.localOf(rootId);
    this.#random = random;
    const maxLevel = region.u32[(region.startOf(rootId) >>> 2) + ROOT.maxLevel]!;
    if (maxLevel < 1 || maxLevel > MAX_LEVEL_LIMIT) {
      throw new DmoCollectionFormatError(`DmoSkipList ${rootId} has maxLevel ${maxLevel}`);
    }
    this.#maxLevel = maxLevel;
    this.#update = new Uint32Array(maxLevel);
  }

  /** A new empty list in `heap`. */
  static create(heap: DmoHeap, options: DmoSkipListOptions = {}): DmoSkipList {
    const region = regionOf(heap);
    const maxLevel = options.maxLevel ?? DEFAULT_MAX_LEVEL;
    if (!Number.isInteger(maxLevel) || maxLevel < 1 || maxLevel > MAX_LEVEL_LIMIT) {
      throw new DmoInvalidSizeError(`skip list maxLevel (1..${MAX_LEVEL_LIMIT})`, maxLevel);
    }
    const headId = region.allocate(NODE_HEADER_BYTES + 4 * maxLevel);
    let rootId: ObjectId;
    try {
      rootId = region.allocate(ROOT_BYTES);
    } catch (error) {
      region.free(headId);
      throw error;
    }
    const u32 = region.u32;
    u32[(region.startOf(headId) >>> 2) + NODE.level] = maxLevel;
    const root = initRoot(region, rootId, 'skipList');
    u32[root + ROOT.maxLevel] = maxLevel;
    u32[root + ROOT.level] = 1;
    u32[root + ROOT.rngState] = (options.seed ?? DEFAULT_SEED) >>> 0 || DEFAULT_SEED;
    u32[root + ROOT.head] = region.localOf(headId);
    return new DmoSkipList(region, rootId, options.random);
  }

  /** Re-opens the list whose root is `rootId`. */
  static open(heap: DmoHeap, rootId: ObjectId, options: DmoSkipListOpenOptions = {}): DmoSkipList {
    const region = regionOf(heap);
    checkRoot(region, rootId, 'skipList', ROOT_BYTES);
    return new DmoSkipList(region, rootId, options.random);
  }

  get size(): number {
    return this.#region.u32[this.#rootWord() + ROOT.count]!;
  }

  has(key: Uint8Array): boolean {
    return this.#findExact(key) !== 0;
  }

  /** A copy of the value under `key`, or undefined. */
  get(key: Uint8Array): Uint8Array | undefined {
    const node = this.#findExact(key);
    return node === 0 ? undefined : this.#valueOf(node);
  }

  /** Copies the value into `target` without allocating; returns its length, or −1 when absent. */
  getInto(key: Uint8Array, target: Uint8Array, targetOffset = 0): number {
    const node = this.#findExact(key);
    if (node === 0) return -1;
    const region = this.#region;
    const valueRow = this.#valueRow(node);
    const start = region.rowStart(valueRow);
    const length = region.rowSize(valueRow);
    if (targetOffset >>> 0 === targetOffset && targetOffset + length <= target.length) {
      copyBytes(region.u8, start, length, target, targetOffset);
    }
    return length;
  }

  /** Stores `value` under `key`. */
  set(key: Uint8Array, value: Uint8Array): this {
    const region = this.#region;
    const u32 = region.u32;
    const found = this.#seek(key);
    if (found !== 0 && this.#nodeKeyEquals(found, key)) {
      const nodeWord = this.#nodeWord(found);
      const valueLink = u32[nodeWord + NODE.value]!;
      const valueRow = this.#valueRow(found);
      if (region.rowSize(valueRow) === value.length) {
        region.u8.set(value, region.rowStart(valueRow));
      } else {
        const valueId = region.allocate(value.length);
        region.u8.set(value, region.startOf(valueId));
        u32[nodeWord + NODE.value] = region.localOf(valueId);
        region.free(region.idOf(valueLink));
      }
      return this;
    }
    const level = this.#randomLevel();
    const valueId = region.allocate(value.length);
    let nodeId: ObjectId;
    try {
      nodeId = region.allocate(NODE_HEADER_BYTES + 4 * level + key.length);
    } catch (error) {
      region.free(valueId);
      throw error;
    }
    region.u8.set(value, region.startOf(valueId));
    const nodeLink = region.localOf(nodeId);
    const nodeWord = region.startOf(nodeId) >>> 2;
    u32[nodeWord + NODE.keyLength] = key.length;
    u32[nodeWord + NODE.level] = level;
    u32[nodeWord + NODE.value] = region.localOf(valueId);
    region.u8.set(key, nodeWord * 4 + NODE_HEADER_BYTES + 4 * level);
    const root = this.#rootWord();
    const update = this.#update;
    const listLevel = u32[root + ROOT.level]!;
    if (level > listLevel) {
      for (let l = listLevel; l < level; l++) update[l] = u32[root + ROOT.head]!;
      u32[root + ROOT.level] = level;
    }
    for (let l = 0; l < level; l++) {
      // #seek checked that each update[l] has a forward link at level l.
      const predecessorWord = this.#nodeWord(update[l]!);
      u32[nodeWord + NODE.forward + l] = u32[predecessorWord + NODE.forward + l]!;
      u32[predecessorWord + NODE.forward + l] = nodeLink;
    }
    if (u32[nodeWord + NODE.forward] === 0) u32[root + ROOT.tail] = nodeLink;
    u32[root + ROOT.count] = u32[root + ROOT.count]! + 1;
    return this;
  }

  /** Removes `key`; false when it was absent. */
  delete(key: Uint8Array): boolean {
    const region = this.#region;
    const u32 = region.u32;
    const found = this.#seek(key);
    if (found === 0 || !this.#nodeKeyEquals(found, key)) return false;
    const root = this.#rootWord();
    const update = this.#update;
    const nodeWord = this.#nodeWord(found);
    const nodeLevel = u32[nodeWord + NODE.level]!;
    const listLevel = u32[root + ROOT.level]!;
    for (let l = 0; l < listLevel; l++) {
      const predecessorWord = this.#nodeWord(update[l]!);
      if (u32[predecessorWord + NODE.forward + l] !== found) break;
      if (l >= nodeLevel) throw this.#damaged(`node ${region.idOf(found)} is linked above its level`);
      u32[predecessorWord + NODE.forward + l] = u32[nodeWord + NODE.forward + l]!;
    }
    const head = u32[root + ROOT.head]!;
    if (u32[root + ROOT.tail] === found) u32[root + ROOT.tail] = update[0] === head ? 0 : update[0]!;
    const headWord = this.#nodeWord(head);
    let level = listLevel;
    while (level > 1 && u32[headWord + NODE.forward + level - 1] === 0) level--;
    u32[root + ROOT.level] = level;
    u32[root + ROOT.count] = u32[root + ROOT.count]! - 1;
    region.free(region.idOf(u32[nodeWord + NODE.value]!));
    region.free(region.idOf(found));
    return true;
  }

  /** The smallest entry, or undefined when empty. */
  first(): [Uint8Array, Uint8Array] | undefined {
    const u32 = this.#region.u32;
    const node = u32[this.#nodeWord(u32[this.#rootWord() + ROOT.head]!) + NODE.forward]!;
    return node === 0 ? undefined : [this.#keyOf(node), this.#valueOf(node)];
  }

  /** The largest entry, or undefined when empty (O(1) through the tail link). */
  last(): [Uint8Array, Uint8Array] | undefined {
    const node = this.#region.u32[this.#rootWord() + ROOT.tail]!;
    return node === 0 ? undefined : [this.#keyOf(node), this.#valueOf(node)];
  }

  /** Up to `limit` entries in key order, starting at the first key ≥ `fromKey` (all keys if absent). */
  range(fromKey?: Uint8Array, limit = Number.POSITIVE_INFINITY): [Uint8Array, Uint8Array][] {
    const out: [Uint8Array, Uint8Array][] = [];
    if (!(limit > 0)) return out;
    for (const entry of this.entriesFrom(fromKey)) {
      out.push(entry);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** [key, value] copies in key order, from the first key ≥ `fromKey` (or the start). */
  *entriesFrom(fromKey?: Uint8Array): IterableIterator<[Uint8Array, Uint8Array]> {
    const region = this.#region;
    const u32 = region.u32;
    let node: number;
    if (fromKey === undefined) {
      node = u32[this.#nodeWord(u32[this.#rootWord() + ROOT.head]!) + NODE.forward]!;
    } else {
      node = this.#seek(fromKey);
    }
    let lastKey: Uint8Array | undefined;
    for (let hops = 0; node !== 0; hops++) {
      if (hops > region.slotCount) throw this.#damaged('its links form a cycle');
      const key = this.#keyOf(node);
      // Keys strictly increase along level 0; anything else is a damaged (or cyclic) list.
      if (lastKey !== undefined && compareBytes(lastKey, key, 0, key.length) >= 0) {
        throw this.#damaged('its keys are out of order');
      }
      lastKey = key;
      yield [key, this.#valueOf(node)];
      this.#rootWord(); // the heap may have been released while we were suspended
      if (region.lookupLinked(node) >= 0) {
        node = u32[this.#nodeWord(node) + NODE.forward]!;
      } else {
        // The node was deleted while we were suspended: continue after the key we last gave out.
        node = this.#seek(key);
        if (node !== 0 && this.#nodeKeyEquals(node, key)) node = u32[this.#nodeWord(node) + NODE.forward]!;
      }
    }
  }

  entries(): IterableIterator<[Uint8Array, Uint8Array]> {
    return this.entriesFrom();
  }

  *keys(): IterableIterator<Uint8Array> {
    for (const [key] of this.entriesFrom()) yield key;
  }

  [Symbol.iterator](): IterableIterator<[Uint8Array, Uint8Array]> {
    return this.entriesFrom();
  }

  /** Removes every entry, freeing their objects. */
  clear(): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const headWord = this.#nodeWord(u32[root + ROOT.head]!);
    let node = u32[headWord + NODE.forward]!;
    while (node !== 0) {
      const nodeWord = this.#nodeWord(node);
      const next = u32[nodeWord + NODE.forward]!;
      region.free(region.idOf(u32[nodeWord + NODE.value]!));
      region.free(region.idOf(node));
      node = next;
    }
    u32.fill(0, headWord + NODE.forward, headWord + NODE.forward + this.#maxLevel);
    u32[root + ROOT.count] = 0;
    u32[root + ROOT.level] = 1;
    u32[root + ROOT.tail] = 0;
  }

  /** Frees every object of the list, root included; it must not be used afterwards. */
  destroy(): void {
    this.clear();
    const region = this.#region;
    region.free(region.idOf(region.u32[this.#rootWord() + ROOT.head]!));
    region.free(this.rootId);
  }

  // ---- internals ----------------------------------------------------------------------------

  /** The root's word index; resolving it also proves the region is still this actor's. */
  #rootWord(): number {
    const root = this.#region.startOfLocal(this.#rootLocal) >>> 2;
    const level = this.#region.u32[root + ROOT.level]!;
    if (level < 1 || level > this.#maxLevel) throw this.#damaged(`its level is ${level}`);
    return root;
  }

  /**
   * Word index of node `link`, after checking that its stored level and key length fit its
   * object (so every field and forward link read through it stays inside it).
   */
  #nodeWord(link: number): number {
    const region = this.#region;
    const row = region.lookupLinked(link);
    if (row < 0) region.failLookup(region.idOf(link));
    const word = region.rowStart(row) >>> 2;
    const u32 = region.u32;
    const level = u32[word + NODE.level]!;
    if (
      level < 1 ||
      level > this.#maxLevel ||
      NODE_HEADER_BYTES + 4 * level + u32[word + NODE.keyLength]! > region.rowSize(row)
    ) {
      throw this.#damaged(`node ${region.idOf(link)} does not fit its object`);
    }
    return word;
  }

  #damaged(what: string): DmoCollectionFormatError {
    return new DmoCollectionFormatError(`DmoSkipList ${this.rootId} is damaged: ${what}`);
  }

  /**
   * Link of the first node whose key is ≥ `key` (0 if none). Leaves in #update, for every level
   * below the list's level, the last node whose key is < `key`.
   */
  #seek(key: Uint8Array): number {
    const region = this.#region;
    const u32 = region.u32;
    const u8 = region.u8;
    const root = this.#rootWord();
    const update = this.#update;
    let node = u32[root + ROOT.head]!;
    let word = this.#nodeWord(node);
    let nodeLevel = u32[word + NODE.level]!;
    // The node that stopped the previous level's walk: the next level often stops at it again,
    // and remembering it saves resolving and comparing it twice.
    let stoppedAt = 0;
    // A well-formed list visits each node at most once per level; more hops mean a cycle.
    let hopBudget = region.slotCount * this.#maxLevel;
    for (let level = u32[root + ROOT.level]! - 1; level >= 0; level--) {
      if (level >= nodeLevel) throw this.#damaged(`node ${region.idOf(node)} is linked above its level`);
      for (;;) {
        if (--hopBudget < 0) throw this.#damaged('its links form a cycle');
        const next = u32[word + NODE.forward + level]!;
        if (next === 0 || next === stoppedAt) {
          stoppedAt = next;
          break;
        }
        const nextWord = this.#nodeWord(next);
        const nextLevel = u32[nextWord + NODE.level]!;
        if (
          compareBytes(
            key,
            u8,
            nextWord * 4 + NODE_HEADER_BYTES + 4 * nextLevel,
            u32[nextWord + NODE.keyLength]!,
          ) <= 0
        ) {
          stoppedAt = next;
          break;
        }
        if (level >= nextLevel) throw this.#damaged(`node ${region.idOf(next)} is linked above its level`);
        node = next;
        word = nextWord;
        nodeLevel = nextLevel;
      }
      update[level] = node;
    }
    return u32[word + NODE.forward]!;
  }

  #findExact(key: Uint8Array): number {
    const node = this.#seek(key);
    return node !== 0 && this.#nodeKeyEquals(node, key) ? node : 0;
  }

  #nodeKeyEquals(node: number, key: Uint8Array): boolean {
    const region = this.#region;
    const word = this.#nodeWord(node);
    const keyLength = region.u32[word + NODE.keyLength]!;
    if (keyLength !== key.length) return false;
    const keyStart = word * 4 + NODE_HEADER_BYTES + 4 * region.u32[word + NODE.level]!;
    return compareBytes(key, region.u8, keyStart, keyLength) === 0;
  }

  #keyOf(node: number): Uint8Array {
    const region = this.#region;
    const word = this.#nodeWord(node);
    const keyStart = word * 4 + NODE_HEADER_BYTES + 4 * region.u32[word + NODE.level]!;
    return region.u8.slice(keyStart, keyStart + region.u32[word + NODE.keyLength]!);
  }

  #valueRow(node: number): number {
    const region = this.#region;
    const link = region.u32[this.#nodeWord(node) + NODE.value]!;
    const row = region.lookupLinked(link);
    if (row < 0) region.failLookup(region.idOf(link));
    return row;
  }

  #valueOf(node: number): Uint8Array {
    const region = this.#region;
    const row = this.#valueRow(node);
    const start = region.rowStart(row);
    return region.u8.slice(start, start + region.rowSize(row));
  }

  #randomLevel(): number {
    const region = this.#region;
    const root = this.#rootWord();
    const maxLevel = this.#maxLevel;
    let level = 1;
    const random = this.#random;
    if (random !== undefined) {
      while (level < maxLevel && random() < 0.25) level++;
      return level;
    }
    let x = region.u32[root + ROOT.rngState]!;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    region.u32[root + ROOT.rngState] = x;
    for (let bits = x; level < maxLevel && (bits & 3) === 0; bits >>>= 2) level++;
    return level;
  }
}
