/**
 * `PlainMemtable`: a memtable in ordinary JS memory, for tests, for benchmarks' baselines, and for
 * a store that runs without DMOs (a standalone LsmEngine's default).
 *
 * A `Map` keyed by the key's latin1 string gives O(1) point operations. Sorted iteration sorts the
 * keys lazily: the sorted list is rebuilt (O(n log n)) only after a new key arrived since the last
 * iteration. Latin1 maps byte b to UTF-16 code unit b, so JS string order (`<`) is exactly the
 * unsigned-byte order of the keys, prefix rule included.
 *
 * Iterators survive changes: they walk the sorted list they started with, and after any change
 * re-seek to the first key after the one they last yielded in the current list.
 */

import { Buffer } from 'node:buffer';
import { type LsmEntry, MEMTABLE_ENTRY_OVERHEAD_BYTES, type Memtable } from './memtable.ts';

function keyString(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
}

/** A memtable in JS memory (Map + lazily sorted key list). */
export class PlainMemtable implements Memtable {
  readonly #entries = new Map<string, LsmEntry>();
  /** Keys in order, or undefined when a key was added since it was built. */
  #sortedKeys: string[] | undefined = [];
  /** Bumped by every change, so iterators know to re-seek. */
  #changes = 0;
  #approximateBytes = 0;

  get entryCount(): number {
    return this.#entries.size;
  }

  get approximateBytes(): number {
    return this.#approximateBytes;
  }

  put(key: Uint8Array, value: Uint8Array, sequence: number): void {
    this.#store({ kind: 'put', key: key.slice(), sequence, value: value.slice() });
  }

  delete(key: Uint8Array, sequence: number): void {
    this.#store({ kind: 'tombstone', key: key.slice(), sequence });
  }

  get(key: Uint8Array): LsmEntry | undefined {
    return this.#entries.get(keyString(key));
  }

  *entries(fromKey?: Uint8Array): IterableIterator<LsmEntry> {
    let keys = this.#sorted();
    let index = fromKey === undefined ? 0 : lowerBound(keys, keyString(fromKey));
    let seenChanges = this.#changes;
    while (index < keys.length) {
      const key = keys[index]!;
      const entry = this.#entries.get(key);
      if (entry !== undefined) yield entry;
      if (this.#changes !== seenChanges) {
        // Keys were added or the list rebuilt while we were suspended: continue after `key`.
        keys = this.#sorted();
        seenChanges = this.#changes;
        index = lowerBound(keys, key);
        if (keys[index] === key) index++;
      } else {
        index++;
      }
    }
  }

  destroy(): void {
    this.#entries.clear();
    this.#sortedKeys = [];
    this.#approximateBytes = 0;
    this.#changes++;
  }

  #store(entry: LsmEntry): void {
    const key = keyString(entry.key);
    const previous = this.#entries.get(key);
    if (previous === undefined) {
      this.#sortedKeys = undefined;
      this.#approximateBytes += entry.key.length + MEMTABLE_ENTRY_OVERHEAD_BYTES;
    } else if (previous.kind === 'put') {
      this.#approximateBytes -= previous.value.length;
    }
    if (entry.kind === 'put') this.#approximateBytes += entry.value.length;
    this.#entries.set(key, entry);
    this.#changes++;
  }

  #sorted(): string[] {
    let keys = this.#sortedKeys;
    if (keys === undefined) {
      keys = [...this.#entries.keys()].sort();
      this.#sortedKeys = keys;
    }
    return keys;
  }
}

/** Index of the first element ≥ `key` in a sorted list. */
function lowerBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keys[middle]! < key) low = middle + 1;
    else high = middle;
  }
  return low;
}
