/**
 * The modelled disk behind RKV's host actors on the simulated platform (iPipe §5 "RKV": "SSTable
 * reader (host, pinned, on disk)", "compaction (host, pinned)"). The live cluster runs the real
 * file-based LSM (src/apps/rkv/lsm); the simulator models what the host side holds instead:
 *
 *   base data   the pre-loaded data set: every key index in [0, baseKeys) has a value of
 *               `valueBytes` bytes computed from its index (`baseValue`), so a million keys cost
 *               no memory here; the tables below shadow it
 *   level 1     one sorted table, the merge of earlier level-0 tables (major compaction); the last
 *               level written, so tombstones are dropped here unless they hide base data
 *   level 0     the tables minor compactions wrote, newest last; each is one frozen memtable,
 *               tombstones (deleted keys) included
 *
 * A lookup reads level 0 newest first, then level 1, then the base data: the LSM read order.
 *
 * The disk also records D (`appliedSlot`): the largest log slot its tables hold the state of —
 * each flushed run carries the last slot its memtable applied, D is the maximum written so far
 * (a compaction merges tables, so it keeps it). A delete at slot s whose key the memtables do not
 * hold is decided by the disk only while D < s (storage-actors.ts "Deletes").
 * Tables are JS maps (the model needs their contents, not their block layout); what reading and
 * writing them costs a host core is declared by the actors' cost hooks (actors.ts), not measured
 * here. The disk is a device, not actor state: actors find it by the name their setup message
 * carries (`registerSimDisk`), as DT's logging actor finds its storage.
 */

import { ConfigError } from '../../../errors.ts';
import { rkvKey, rkvKeyIndex } from './messages.ts';

const latin1 = new TextDecoder('latin1');

function encodeLatin1(name: string): Uint8Array {
  const bytes = new Uint8Array(name.length);
  for (let i = 0; i < name.length; i++) bytes[i] = name.charCodeAt(i);
  return bytes;
}

/** A key as the disk's tables (and `countLiveKeys`) name it: one char per byte. */
export function diskKeyName(key: Uint8Array): string {
  return latin1.decode(key);
}

/** What a run entry holds: a value, or undefined for a tombstone (the key was deleted). */
export interface RunEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array | undefined;
}

/** The value length that marks a tombstone in a run (no value is that long: MAX_VALUE_BYTES). */
const TOMBSTONE_LENGTH = 0xffff_ffff;

/**
 * A frozen memtable as bytes, in key order: [count u32] then per entry [key length u8][key]
 * [value length u32][value] (little-endian); a tombstone is the value length 0xffffffff and no
 * value bytes (so a run of puts has the bytes it had before deletes existed). What a flush
 * carries from the NIC to the host.
 */
export function encodeRun(entries: readonly RunEntry[]): Uint8Array {
  let bytes = 4;
  for (const entry of entries) bytes += 1 + entry.key.length + 4 + (entry.value?.length ?? 0);
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  view.setUint32(0, entries.length, true);
  let at = 4;
  for (const { key, value } of entries) {
    out[at] = key.length;
    out.set(key, at + 1);
    at += 1 + key.length;
    if (value === undefined) {
      view.setUint32(at, TOMBSTONE_LENGTH, true);
      at += 4;
      continue;
    }
    view.setUint32(at, value.length, true);
    out.set(value, at + 4);
    at += 4 + value.length;
  }
  return out;
}

/** The entries of an encoded run. Throws RangeError on bytes `encodeRun` did not write. */
export function decodeRun(run: Uint8Array): RunEntry[] {
  const view = new DataView(run.buffer, run.byteOffset, run.byteLength);
  if (run.length < 4) throw new RangeError('run shorter than its header');
  const count = view.getUint32(0, true);
  const entries: RunEntry[] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    const keyBytes = run[at];
    if (keyBytes === undefined || at + 1 + keyBytes + 4 > run.length) throw new RangeError('run truncated');
    const key = run.slice(at + 1, at + 1 + keyBytes);
    at += 1 + keyBytes;
    const valueBytes = view.getUint32(at, true);
    if (valueBytes === TOMBSTONE_LENGTH) {
      entries.push({ key, value: undefined });
      at += 4;
      continue;
    }
    if (at + 4 + valueBytes > run.length) throw new RangeError('run truncated');
    entries.push({ key, value: run.slice(at + 4, at + 4 + valueBytes) });
    at += 4 + valueBytes;
  }
  return entries;
}

/** The value of base key `index`: `valueBytes` bytes derived from the index. */
export function baseValue(index: number, valueBytes: number): Uint8Array {
  const value = new Uint8Array(valueBytes);
  let x = (index * 2654435761) >>> 0;
  for (let i = 0; i < valueBytes; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    value[i] = x >>> 24;
  }
  return value;
}

/**
 * What one lookup found, and how deep it went (for tests and the docs' read order). `value`
 * undefined with a level: a tombstone there hid whatever lies below.
 */
export interface DiskLookup {
  readonly value: Uint8Array | undefined;
  /** 'level-0', 'level-1', 'base' or 'none'. */
  readonly from: 'level-0' | 'level-1' | 'base' | 'none';
}

/** The modelled disk of one replica's host (see the file header). */
export class SimDisk {
  readonly baseKeys: number;
  readonly valueBytes: number;
  /** Tables: key → value, or null for a tombstone. */
  readonly #level0: Map<string, Uint8Array | null>[] = [];
  #level1 = new Map<string, Uint8Array | null>();
  #tombstonesDropped = 0;
  #tablesWritten = 0;
  #bytesWritten = 0;
  #appliedSlot = 0;

  constructor(options: { readonly baseKeys: number; readonly valueBytes: number }) {
    if (!(Number.isSafeInteger(options.baseKeys) && options.baseKeys >= 0)) {
      throw new ConfigError('rkv.keys', `must be a non-negative integer, got ${options.baseKeys}`);
    }
    if (!(Number.isInteger(options.valueBytes) && options.valueBytes >= 0)) {
      throw new ConfigError('rkv.valueBytes', `must be a non-negative integer, got ${options.valueBytes}`);
    }
    this.baseKeys = options.baseKeys;
    this.valueBytes = options.valueBytes;
  }

  /** Level-0 tables on the disk now. */
  get level0Tables(): number {
    return this.#level0.length;
  }

  /** Tables written by minor compactions so far, and their bytes. */
  get tablesWritten(): number {
    return this.#tablesWritten;
  }

  get bytesWritten(): number {
    return this.#bytesWritten;
  }

  /** Tombstones that major compactions dropped (nothing older below them to hide). */
  get tombstonesDropped(): number {
    return this.#tombstonesDropped;
  }

  /**
   * D: the largest slot a written run said its memtable had applied (0: none). The disk holds no
   * write of a slot above it; it may lack some at or below it, which the memtables then hold.
   */
  get appliedSlot(): number {
    return this.#appliedSlot;
  }

  /**
   * Writes a flushed run as the newest level-0 table; returns its entry count. `appliedSlot`: the
   * last slot its memtable applied before it froze (D becomes at least that).
   */
  writeLevel0(run: Uint8Array, appliedSlot = 0): number {
    const table = new Map<string, Uint8Array | null>();
    for (const entry of decodeRun(run)) table.set(latin1.decode(entry.key), entry.value ?? null);
    this.#level0.push(table);
    this.#tablesWritten++;
    this.#bytesWritten += run.length;
    this.#appliedSlot = Math.max(this.#appliedSlot, appliedSlot);
    return table.size;
  }

  /**
   * Merges every level-0 table into level 1 (newest wins); returns the entries merged. Level 1 is
   * the last level the disk writes, so a tombstone is dropped there — unless the key is in the
   * base data below it (immutable: the tombstone is all that hides the base value).
   */
  compactLevel0(): number {
    let merged = 0;
    const level1 = new Map(this.#level1);
    for (const table of this.#level0) {
      for (const [key, value] of table) {
        level1.set(key, value);
        merged++;
      }
    }
    for (const [key, value] of level1) {
      if (value !== null || this.#inBase(key)) continue;
      level1.delete(key);
      this.#tombstonesDropped++;
    }
    this.#level0.length = 0;
    this.#level1 = level1;
    return merged;
  }

  #inBase(name: string): boolean {
    const index = rkvKeyIndex(encodeLatin1(name));
    return index !== undefined && index < this.baseKeys;
  }

  /**
   * The keys that hold a value on the disk, leaving out every key in `decided` (the memtable's: it
   * counts those itself). Reads every table and counts the base data by subtraction; a scan of the
   * whole store, which DBSIZE pays for.
   */
  countLiveKeys(decided: ReadonlySet<string>): number {
    const seen = new Set(decided);
    let live = 0;
    for (const table of [...this.#level0].reverse().concat([this.#level1])) {
      for (const [key, value] of table) {
        if (seen.has(key)) continue;
        seen.add(key);
        if (value !== null) live++;
      }
    }
    // Base keys that nothing above decided still hold their base value.
    let baseDecided = 0;
    for (const key of seen) if (this.#inBase(key)) baseDecided++;
    return live + this.baseKeys - baseDecided;
  }

  /**
   * The live pairs with start ≤ key < end (end undefined: no bound) in byte order, newest table
   * winning and tombstones hiding what lies below — lazily, so a SCAN page pulls only what it
   * needs. At most `maxSteps` entries are visited, tombstones included: the iteration then ends
   * returning the first key it did not visit (read on from there); it returns undefined when the
   * range is exhausted. The model's tables are unsorted maps: each call sorts the decided keys of
   * the range (O(table entries)); the base data is generated from the first index at or above
   * `start`. Finish the iteration or `return()` it (a `for…of` with `break` does).
   */
  *range(
    start: Uint8Array,
    end: Uint8Array | undefined,
    maxSteps = Number.POSITIVE_INFINITY,
  ): Generator<[Uint8Array, Uint8Array], Uint8Array | undefined, undefined> {
    const from = latin1.decode(start);
    const to = end === undefined ? undefined : latin1.decode(end);
    const inRange = (name: string): boolean => name >= from && (to === undefined || name < to);
    const decided = new Map<string, Uint8Array | null>();
    for (const table of [...this.#level0].reverse().concat([this.#level1])) {
      for (const [name, value] of table) if (inRange(name) && !decided.has(name)) decided.set(name, value);
    }
    // Latin-1 names compare as their bytes do (one UTF-16 unit per byte).
    const names = [...decided.keys()].sort();
    let index = this.#firstBaseIndexAtOrAbove(from);
    let nextBase = this.#baseName(index, to);
    let at = 0;
    let steps = 0;
    while (at < names.length || nextBase !== undefined) {
      const name = names[at];
      const fromTable = name !== undefined && (nextBase === undefined || name <= nextBase);
      if (steps++ >= maxSteps) return encodeLatin1(fromTable ? name : (nextBase as string));
      if (fromTable) {
        at++;
        // A table entry decides its key: it shadows the base value of the same key.
        if (name === nextBase) nextBase = this.#baseName(++index, to);
        const value = decided.get(name);
        if (value !== null && value !== undefined) yield [encodeLatin1(name), value];
        continue;
      }
      const key = rkvKey(index);
      const value = baseValue(index, this.valueBytes);
      nextBase = this.#baseName(++index, to);
      yield [key, value];
    }
    return undefined;
  }

  /** The base key of `index` as a name, if it exists and sorts below `to`. */
  #baseName(index: number, to: string | undefined): string | undefined {
    if (index >= this.baseKeys) return undefined;
    const name = latin1.decode(rkvKey(index));
    return to === undefined || name < to ? name : undefined;
  }

  /** The smallest base index whose key sorts at or above `name` (baseKeys if none): keys of the
   * `rkvKey` form sort as their indices do, so a binary search finds it. */
  #firstBaseIndexAtOrAbove(name: string): number {
    let low = 0;
    let high = this.baseKeys;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      if (latin1.decode(rkvKey(mid)) < name) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** The key's newest value in LSM read order (a tombstone ends the search: not found). */
  lookup(key: Uint8Array): DiskLookup {
    const name = latin1.decode(key);
    for (let i = this.#level0.length - 1; i >= 0; i--) {
      const value = this.#level0[i]?.get(name);
      if (value !== undefined) return { value: value ?? undefined, from: 'level-0' };
    }
    const value = this.#level1.get(name);
    if (value !== undefined) return { value: value ?? undefined, from: 'level-1' };
    const index = rkvKeyIndex(key);
    if (index !== undefined && index < this.baseKeys) {
      return { value: baseValue(index, this.valueBytes), from: 'base' };
    }
    return { value: undefined, from: 'none' };
  }
}

const disks = new Map<string, SimDisk>();

/** Makes `disk` reachable by `name` from the host actors' setup messages (this thread only). */
export function registerSimDisk(name: string, disk: SimDisk): void {
  disks.set(name, disk);
}

/** Forgets a registered disk. */
export function unregisterSimDisk(name: string): void {
  disks.delete(name);
}

/** The disk registered as `name`, or undefined. */
export function simDisk(name: string): SimDisk | undefined {
  return disks.get(name);
}
