/**
 * What the LSM engine stores, and the memtable interface it reads from and flushes (iPipe §5
 * "The applications", RKV: a skip-list memtable on the NIC; on minor compaction "the memtable
 * object migrates to the host" and becomes a level-0 SSTable).
 *
 * An entry is a key, a sequence number and either a value or a tombstone. Deletes are explicit
 * tombstones rather than absences because a delete must hide older values that still live in
 * deeper levels until a compaction has merged them away.
 *
 * A memtable holds the newest entry per key (no snapshots are served, so older versions of a key
 * are useless once overwritten). Two implementations: `DmoMemtable` (dmo-memtable.ts, over the DMO
 * skip list, for the memtable actor) and `PlainMemtable` (plain-memtable.ts, JS memory).
 */

/** A key's newest write: a value. */
export interface LsmPut {
  readonly kind: 'put';
  readonly key: Uint8Array;
  /** Write order: a larger sequence is a newer write. Integer in [1, 2^53). */
  readonly sequence: number;
  readonly value: Uint8Array;
}

/** A key's newest write: a delete, which hides every older value of the key. */
export interface LsmTombstone {
  readonly kind: 'tombstone';
  readonly key: Uint8Array;
  readonly sequence: number;
}

/** One stored version of a key. Narrow on `kind` before reading `value`. */
export type LsmEntry = LsmPut | LsmTombstone;

/**
 * A sorted in-memory table of the newest entry per key: what writes go into and what a flush
 * (minor compaction) turns into a level-0 SSTable.
 *
 * Contract the engine relies on:
 * - `entries` yields keys in strictly increasing unsigned-byte order, one entry per key;
 * - an iterator stays valid while the memtable changes (it may or may not see the changes);
 * - `put`/`delete` replace the key's entry whatever its sequence (the engine orders writes).
 */
export interface Memtable {
  /** Entries held, tombstones included. */
  readonly entryCount: number;
  /** Approximate memory the entries take, in bytes: what flush thresholds compare against. */
  readonly approximateBytes: number;
  put(key: Uint8Array, value: Uint8Array, sequence: number): void;
  /** Records a tombstone for `key`. */
  delete(key: Uint8Array, sequence: number): void;
  /** The key's entry (value or tombstone), or undefined when the memtable has none. */
  get(key: Uint8Array): LsmEntry | undefined;
  /** Entries in key order from the first key ≥ `fromKey` (or the first key). */
  entries(fromKey?: Uint8Array): IterableIterator<LsmEntry>;
  /** Frees the memtable's memory; it must not be used afterwards. */
  destroy(): void;
}

/**
 * Bytes an entry is charged in a memtable: key + value + a fixed per-entry overhead (sequence,
 * kind, node links). Both memtables use it so flush thresholds mean the same for each.
 */
export const MEMTABLE_ENTRY_OVERHEAD_BYTES = 32;
