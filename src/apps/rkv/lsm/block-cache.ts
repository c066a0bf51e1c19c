/**
 * `BlockCache`: an LRU of verified data-block payloads shared by all of a store's open tables, so
 * hot keys are served without a read or a checksum (RKV's SSTable reader answers the memtable's
 * misses, iPipe §5; under a Zipf workload most of them hit a few blocks).
 *
 * Capacity is in payload bytes. Entries live in one doubly-linked recency list; each table keeps
 * its own `Map<blockOffset, entry>` (a `BlockCacheOwner`), so lookups need no composite keys and a
 * closed table drops its blocks in one pass.
 *
 *   head (most recent) ⇄ entry ⇄ entry ⇄ … ⇄ tail (evicted first)
 */

interface CacheEntry {
  readonly owner: BlockCacheOwner;
  readonly offset: number;
  readonly payload: Uint8Array;
  newer: CacheEntry | undefined;
  older: CacheEntry | undefined;
}

/** One table's view of the cache. */
export class BlockCacheOwner {
  readonly entries = new Map<number, CacheEntry>();
}

/** Hit/miss counters and the bytes held. */
export interface BlockCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly bytes: number;
  readonly capacityBytes: number;
}

/** An LRU of block payloads bounded by total bytes. */
export class BlockCache {
  readonly #capacityBytes: number;
  #bytes = 0;
  #newest: CacheEntry | undefined;
  #oldest: CacheEntry | undefined;
  #hits = 0;
  #misses = 0;

  constructor(capacityBytes: number) {
    this.#capacityBytes = capacityBytes;
  }

  get(owner: BlockCacheOwner, offset: number): Uint8Array | undefined {
    const entry = owner.entries.get(offset);
    if (entry === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    if (entry !== this.#newest) {
      this.#unlink(entry);
      this.#pushNewest(entry);
    }
    return entry.payload;
  }

  insert(owner: BlockCacheOwner, offset: number, payload: Uint8Array): void {
    if (payload.length > this.#capacityBytes || owner.entries.has(offset)) return;
    const entry: CacheEntry = { owner, offset, payload, newer: undefined, older: undefined };
    owner.entries.set(offset, entry);
    this.#pushNewest(entry);
    this.#bytes += payload.length;
    while (this.#bytes > this.#capacityBytes && this.#oldest !== undefined) this.#evict(this.#oldest);
  }

  /** Drops every block of `owner` (its table was closed). */
  dropOwner(owner: BlockCacheOwner): void {
    for (const entry of owner.entries.values()) {
      this.#unlink(entry);
      this.#bytes -= entry.payload.length;
    }
    owner.entries.clear();
  }

  stats(): BlockCacheStats {
    return { hits: this.#hits, misses: this.#misses, bytes: this.#bytes, capacityBytes: this.#capacityBytes };
  }

  #evict(entry: CacheEntry): void {
    this.#unlink(entry);
    entry.owner.entries.delete(entry.offset);
    this.#bytes -= entry.payload.length;
  }

  #pushNewest(entry: CacheEntry): void {
    entry.older = this.#newest;
    entry.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = entry;
    this.#newest = entry;
    if (this.#oldest === undefined) this.#oldest = entry;
  }

  #unlink(entry: CacheEntry): void {
    if (entry.newer !== undefined) entry.newer.older = entry.older;
    else this.#newest = entry.older;
    if (entry.older !== undefined) entry.older.newer = entry.newer;
    else this.#oldest = entry.newer;
    entry.newer = undefined;
    entry.older = undefined;
  }
}
