/**
 * `LevelCursor`: one cursor over a whole level ≥ 1, whose tables have disjoint key ranges and are
 * kept in key order — so the merge of a scan or compaction has one child per deep level instead
 * of one per table (iPipe §5, RKV: leveled SSTables).
 *
 * It references every table of the level for its whole life (a compaction that replaces them
 * cannot close them under it) and opens a table cursor only for the table it is in.
 */

import { compareKeys } from './bytes.ts';
import type { EntryCursor } from './cursor.ts';
import type { LsmEntry } from './memtable.ts';
import type { ReadCounters, TableReader } from './table-reader.ts';

/** Concatenates the cursors of a level's tables (disjoint, in key order). */
export class LevelCursor implements EntryCursor {
  readonly #tables: readonly TableReader[];
  readonly #fillCache: boolean;
  readonly #counters: ReadCounters | undefined;
  #index = 0;
  #current: EntryCursor | undefined;
  #closed = false;

  constructor(tables: readonly TableReader[], fillCache: boolean, counters?: ReadCounters) {
    this.#tables = tables;
    this.#fillCache = fillCache;
    this.#counters = counters;
    for (const table of tables) table.ref();
  }

  get valid(): boolean {
    return this.#current?.valid === true;
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
    this.#open(0);
    this.#current?.seekToFirst();
    this.#skipExhausted();
  }

  seek(key: Uint8Array): void {
    // First table whose largest key is ≥ key: the only one that can hold the first key ≥ key.
    const tables = this.#tables;
    let low = 0;
    let high = tables.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareKeys(tables[middle]!.info.largestKey, key) < 0) low = middle + 1;
      else high = middle;
    }
    this.#open(low);
    this.#current?.seek(key);
    this.#skipExhausted();
  }

  next(): void {
    this.#current?.next();
    this.#skipExhausted();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#current?.close();
    this.#current = undefined;
    for (const table of this.#tables) table.unref();
  }

  #skipExhausted(): void {
    while (this.#current !== undefined && !this.#current.valid) {
      this.#open(this.#index + 1);
      this.#current?.seekToFirst();
    }
  }

  #open(index: number): void {
    if (this.#closed) throw new Error('level cursor used after close');
    this.#current?.close();
    this.#index = index;
    const table = this.#tables[index];
    this.#current =
      table === undefined
        ? undefined
        : table.cursor(
            this.#counters === undefined
              ? { fillCache: this.#fillCache }
              : { fillCache: this.#fillCache, counters: this.#counters },
          );
  }
}
