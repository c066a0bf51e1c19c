/**
 * Sorted cursors and the merging cursor that reads the LSM tree as one sorted map (iPipe §5, RKV:
 * "reads go memtable → level 0 → upward"; a scan merges them all, newest wins).
 *
 * A cursor walks entries in key order, one entry per key. The merging cursor takes child cursors
 * and yields, for each distinct key, the child entry with the largest sequence number (ties go to
 * the child listed first — callers list newer sources first). It yields tombstones too: a scan
 * skips them, a compaction keeps them unless it may drop them.
 *
 * Sources are few (two memtables, a handful of level-0 tables, one cursor per deeper level), so
 * the merge finds the smallest child by a linear pass instead of a heap: fewer branches and no
 * bookkeeping on the hot path for the usual 2..10 children.
 */

import { compareKeys, keysEqual } from './bytes.ts';
import type { LsmEntry, Memtable } from './memtable.ts';

/** A position in a sorted run of entries (one per key). */
export interface EntryCursor {
  /** False once past the last entry. Read the fields below only while valid. */
  readonly valid: boolean;
  /** The current key; may be a view that changes when the cursor moves (copy it to keep it). */
  readonly key: Uint8Array;
  readonly sequence: number;
  /** A copy of the current entry. */
  entry(): LsmEntry;
  /**
   * The current entry, possibly as views of the cursor's buffers that change once it moves: for
   * consumers that copy what they keep (a compaction's table writer), saving two copies per entry.
   */
  borrowEntry(): LsmEntry;
  next(): void;
  /** Positions at the first entry with key ≥ `key`. */
  seek(key: Uint8Array): void;
  seekToFirst(): void;
  /** Releases what the cursor holds (open tables); it must not be used afterwards. */
  close(): void;
}

/** A cursor over a memtable (restarts the memtable's iterator on seek). */
export class MemtableCursor implements EntryCursor {
  readonly #memtable: Memtable;
  #iterator: Iterator<LsmEntry> | undefined;
  #current: LsmEntry | undefined;

  constructor(memtable: Memtable) {
    this.#memtable = memtable;
  }

  get valid(): boolean {
    return this.#current !== undefined;
  }
  get key(): Uint8Array {
    return this.#current!.key;
  }
  get sequence(): number {
    return this.#current!.sequence;
  }
  borrowEntry(): LsmEntry {
    return this.#current!;
  }
  entry(): LsmEntry {
    return this.#current!;
  }
  next(): void {
    const step = this.#iterator?.next();
    this.#current = step === undefined || step.done === true ? undefined : step.value;
  }
  seek(key: Uint8Array): void {
    this.#restart(key);
  }
  seekToFirst(): void {
    this.#restart(undefined);
  }
  close(): void {
    this.#iterator?.return?.();
    this.#iterator = undefined;
    this.#current = undefined;
  }

  #restart(from: Uint8Array | undefined): void {
    this.#iterator?.return?.();
    this.#iterator = this.#memtable.entries(from);
    this.next();
  }
}

/** Merges child cursors into one: per key, the newest entry. Closes its children on close. */
export class MergingCursor implements EntryCursor {
  readonly #children: readonly EntryCursor[];
  #current: EntryCursor | undefined;

  /** `children` newest source first (used only to break sequence ties). */
  constructor(children: readonly EntryCursor[]) {
    this.#children = children;
  }

  get valid(): boolean {
    return this.#current !== undefined;
  }
  get key(): Uint8Array {
    return this.#current!.key;
  }
  get sequence(): number {
    return this.#current!.sequence;
  }
  entry(): LsmEntry {
    return this.#current!.entry();
  }
  borrowEntry(): LsmEntry {
    return this.#current!.borrowEntry();
  }

  seekToFirst(): void {
    for (const child of this.#children) child.seekToFirst();
    this.#findSmallest();
  }

  seek(key: Uint8Array): void {
    for (const child of this.#children) child.seek(key);
    this.#findSmallest();
  }

  next(): void {
    const current = this.#current;
    if (current === undefined) return;
    // Older versions of the current key in other children are hidden: step past them first,
    // while `current.key` (possibly a view into current's block) is still the key.
    const key = current.key;
    for (const child of this.#children) {
      if (child !== current && child.valid && keysEqual(child.key, key)) child.next();
    }
    current.next();
    this.#findSmallest();
  }

  close(): void {
    for (const child of this.#children) child.close();
    this.#current = undefined;
  }

  #findSmallest(): void {
    let best: EntryCursor | undefined;
    for (const child of this.#children) {
      if (!child.valid) continue;
      if (best === undefined) {
        best = child;
        continue;
      }
      const order = compareKeys(child.key, best.key);
      if (order < 0 || (order === 0 && child.sequence > best.sequence)) best = child;
    }
    this.#current = best;
  }
}
