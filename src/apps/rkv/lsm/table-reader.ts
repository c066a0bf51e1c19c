/**
 * `TableReader`: one open SSTable — RKV's SSTable reader actor serves memtable misses from these
 * (iPipe §5). A point read goes Bloom filter → index → one data block; a scan walks the blocks.
 *
 * At open the footer, filter, index and properties blocks are read and checksummed, and checked
 * against each other and against what the manifest recorded (size, entry count, key range): a
 * truncated, torn or swapped file is refused with `LsmCorruptTableError` naming it. Data blocks are
 * checksummed when first read (or all at open with `verifyAll`), so a bit flip in one is refused at
 * read time instead of answered. Verified payloads go into the shared block cache.
 *
 * Lifetime: a reader is reference-counted. The store's current version holds one reference, every
 * open scan or compaction cursor another; the file is closed when the last one goes. (A table a
 * compaction replaced may already be unlinked by then — POSIX keeps its bytes readable through the
 * open descriptor, so a scan that started before the compaction finishes on the data it began on.)
 */

import { BLOCK_TYPE, type BlockType, compareCursorKey, DataBlockCursor, openBlock } from './block.ts';
import type { BlockCache } from './block-cache.ts';
import { BlockCacheOwner } from './block-cache.ts';
import { BloomFilter, type BloomHash } from './bloom.ts';
import { compareKeys, FormatError, keysEqual } from './bytes.ts';
import type { EntryCursor } from './cursor.ts';
import { LsmCorruptTableError } from './errors.ts';
import type { LsmFile, LsmFileSystem } from './file-system.ts';
import type { LsmEntry } from './memtable.ts';
import {
  type BlockHandle,
  decodeFooter,
  decodeIndex,
  decodeProperties,
  FOOTER_BYTES,
  type TableInfo,
  type TableProperties,
} from './table-format.ts';
import { io } from './table-writer.ts';

/** Bytes and blocks a cursor read from files (compaction reports them). */
export interface ReadCounters {
  bytesRead: number;
  blocksRead: number;
}

interface TableInternals {
  findBlock(reader: TableReader, key: Uint8Array): number;
  loadBlock(
    reader: TableReader,
    index: number,
    fillCache: boolean,
    counters: ReadCounters | undefined,
  ): Uint8Array;
  cursor(reader: TableReader, payload: Uint8Array, index: number): DataBlockCursor;
  corruptBlock(reader: TableReader, index: number, what: string): LsmCorruptTableError;
}
let tableInternals: TableInternals;

/** Options of `TableReader.open`. */
export interface TableReaderOpenOptions {
  /** What the manifest says about the table; the file must agree. */
  readonly expected?: TableInfo;
  /** Where verified data blocks are kept between reads (none: every read goes to the file). */
  readonly cache?: BlockCache;
  /** Read and check every data block now (default false: each when first read). */
  readonly verifyAll?: boolean;
}

/** An open SSTable. */
export class TableReader {
  readonly path: string;
  readonly fileNumber: number;
  readonly info: TableInfo;
  readonly properties: TableProperties;
  readonly #file: LsmFile;
  readonly #cache: BlockCache | undefined;
  readonly #cacheOwner = new BlockCacheOwner();
  readonly #filter: BloomFilter;
  readonly #indexKeys: Uint8Array[];
  readonly #blockHandles: BlockHandle[];
  #references = 1;

  private constructor(
    path: string,
    fileNumber: number,
    file: LsmFile,
    info: TableInfo,
    properties: TableProperties,
    filter: BloomFilter,
    indexKeys: Uint8Array[],
    blockHandles: BlockHandle[],
    cache: BlockCache | undefined,
  ) {
    this.path = path;
    this.fileNumber = fileNumber;
    this.#file = file;
    this.info = info;
    this.properties = properties;
    this.#filter = filter;
    this.#indexKeys = indexKeys;
    this.#blockHandles = blockHandles;
    this.#cache = cache;
  }

  /** Opens and checks a table file. Throws LsmCorruptTableError (naming `path`) on any damage. */
  static open(
    fileSystem: LsmFileSystem,
    path: string,
    fileNumber: number,
    options: TableReaderOpenOptions = {},
  ): TableReader {
    const file = io('open', path, () => fileSystem.openRead(path));
    try {
      return TableReader.#load(path, fileNumber, file, options);
    } catch (error) {
      file.close();
      throw error;
    }
  }

  static #load(
    path: string,
    fileNumber: number,
    file: LsmFile,
    options: TableReaderOpenOptions,
  ): TableReader {
    const corrupt = (what: string): LsmCorruptTableError => new LsmCorruptTableError(path, what);
    const sizeBytes = io('stat', path, () => file.sizeBytes());
    const expected = options.expected;
    if (expected !== undefined && sizeBytes !== expected.sizeBytes) {
      throw corrupt(
        `it has ${sizeBytes} bytes where the manifest recorded ${expected.sizeBytes} (truncated or overwritten)`,
      );
    }
    if (sizeBytes < FOOTER_BYTES) throw corrupt(`${sizeBytes} bytes is too short for a table`);
    const dataEnd = sizeBytes - FOOTER_BYTES;
    try {
      const footer = decodeFooter(readExactly(file, path, dataEnd, FOOTER_BYTES), dataEnd);
      const metadataBlock = (handle: BlockHandle, type: BlockType, name: string): Uint8Array => {
        const payload = openBlock(readExactly(file, path, handle.offset, handle.length), type);
        if (typeof payload === 'string') throw corrupt(`${name} block: ${payload}`);
        return payload;
      };
      const properties = decodeProperties(
        metadataBlock(footer.properties, BLOCK_TYPE.properties, 'properties'),
      );
      const index = decodeIndex(metadataBlock(footer.index, BLOCK_TYPE.index, 'index'));
      let filter: BloomFilter;
      try {
        filter = new BloomFilter(metadataBlock(footer.filter, BLOCK_TYPE.filter, 'filter'));
      } catch (error) {
        if (error instanceof RangeError) throw corrupt(`filter block: ${error.message}`);
        throw error;
      }
      // The index must describe contiguous data blocks in key order, ending where the table's
      // largest key says, before the filter block.
      if (index.length !== properties.dataBlockCount || index.length === 0) {
        throw corrupt(`index lists ${index.length} blocks, properties ${properties.dataBlockCount}`);
      }
      let nextOffset = 0;
      for (let i = 0; i < index.length; i++) {
        const entry = index[i]!;
        if (entry.handle.offset !== nextOffset || entry.handle.length < 9) {
          throw corrupt(`index entry ${i} points at [${entry.handle.offset}, +${entry.handle.length})`);
        }
        nextOffset += entry.handle.length;
        if (i > 0 && compareKeys(index[i - 1]!.lastKey, entry.lastKey) >= 0)
          throw corrupt('index keys out of order');
      }
      if (nextOffset !== footer.filter.offset)
        throw corrupt('data blocks do not end where the filter begins');
      if (!keysEqual(index[index.length - 1]!.lastKey, properties.largestKey)) {
        throw corrupt('the last index key is not the largest key');
      }
      if (compareKeys(properties.smallestKey, properties.largestKey) > 0 || properties.entryCount === 0) {
        throw corrupt('properties describe an empty or inverted key range');
      }
      const info: TableInfo = {
        fileNumber,
        sizeBytes,
        entryCount: properties.entryCount,
        tombstoneCount: properties.tombstoneCount,
        smallestKey: properties.smallestKey,
        largestKey: properties.largestKey,
        smallestSequence: properties.smallestSequence,
        largestSequence: properties.largestSequence,
      };
      if (expected !== undefined) {
        const disagreement = describeDisagreement(expected, info);
        if (disagreement !== undefined) throw corrupt(`it does not match the manifest: ${disagreement}`);
      }
      const reader = new TableReader(
        path,
        fileNumber,
        file,
        info,
        properties,
        filter,
        index.map((entry) => entry.lastKey),
        index.map((entry) => entry.handle),
        options.cache,
      );
      if (options.verifyAll === true) reader.#verifyAllBlocks();
      return reader;
    } catch (error) {
      if (error instanceof FormatError) throw corrupt(error.message);
      throw error;
    }
  }

  /** Bytes of the Bloom filter held in memory. */
  get filterBytes(): number {
    return this.#filter.sizeBytes;
  }

  get dataBlockCount(): number {
    return this.#blockHandles.length;
  }

  /** False when the key is certainly not in this table. */
  mayContain(hash: BloomHash): boolean {
    return this.#filter.mayContain(hash);
  }

  /**
   * The table's entry for `key` (value or tombstone), or undefined. Checks the key range and the
   * Bloom filter first; reads at most one data block.
   */
  get(key: Uint8Array, hash: BloomHash): LsmEntry | undefined {
    if (compareKeys(key, this.info.smallestKey) < 0 || compareKeys(key, this.info.largestKey) > 0)
      return undefined;
    if (!this.#filter.mayContain(hash)) return undefined;
    const blockIndex = this.#findBlock(key);
    if (blockIndex >= this.#blockHandles.length) return undefined;
    const cursor = this.#cursor(this.#loadBlock(blockIndex, true, undefined), blockIndex);
    try {
      cursor.seek(key);
      if (!cursor.valid || compareCursorKey(cursor, key) !== 0) return undefined;
      return cursor.entry();
    } catch (error) {
      if (error instanceof FormatError) throw this.#corruptBlock(blockIndex, error.message);
      throw error;
    }
  }

  /** A cursor over the table (takes a reference; `close()` returns it). */
  cursor(options: { fillCache: boolean; counters?: ReadCounters }): EntryCursor {
    this.ref();
    return new TableCursor(this, options.fillCache, options.counters);
  }

  ref(): void {
    if (this.#references <= 0) throw new Error(`table ${this.path} used after close`);
    this.#references++;
  }

  /** Drops a reference; the last one closes the file and frees its cached blocks. */
  unref(): void {
    if (--this.#references > 0) return;
    this.#cache?.dropOwner(this.#cacheOwner);
    try {
      this.#file.close();
    } catch {
      // Closing a read-only descriptor fails only if it is already gone.
    }
  }

  // ---- internals shared with TableCursor ----------------------------------------------------

  /** Index of the first block whose last key is ≥ `key` (blockCount when none). */
  #findBlock(key: Uint8Array): number {
    const keys = this.#indexKeys;
    let low = 0;
    let high = keys.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareKeys(keys[middle]!, key) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** A verified block payload, from the cache or the file. */
  #loadBlock(index: number, fillCache: boolean, counters: ReadCounters | undefined): Uint8Array {
    const handle = this.#blockHandles[index]!;
    const cache = this.#cache;
    if (cache !== undefined) {
      const cached = cache.get(this.#cacheOwner, handle.offset);
      if (cached !== undefined) return cached;
    }
    const block = readExactly(this.#file, this.path, handle.offset, handle.length);
    if (counters !== undefined) {
      counters.bytesRead += handle.length;
      counters.blocksRead++;
    }
    const payload = openBlock(block, BLOCK_TYPE.data);
    if (typeof payload === 'string') throw this.#corruptBlock(index, payload);
    if (fillCache && cache !== undefined) cache.insert(this.#cacheOwner, handle.offset, payload);
    return payload;
  }

  #cursor(payload: Uint8Array, blockIndex: number): DataBlockCursor {
    try {
      return new DataBlockCursor(payload);
    } catch (error) {
      if (error instanceof FormatError) throw this.#corruptBlock(blockIndex, error.message);
      throw error;
    }
  }

  #corruptBlock(index: number, what: string): LsmCorruptTableError {
    const handle = this.#blockHandles[index]!;
    return new LsmCorruptTableError(this.path, `data block ${index} at offset ${handle.offset}: ${what}`);
  }

  #verifyAllBlocks(): void {
    let entries = 0;
    let previousKey: Uint8Array | undefined;
    for (let i = 0; i < this.#blockHandles.length; i++) {
      const cursor = this.#cursor(this.#loadBlock(i, false, undefined), i);
      try {
        for (cursor.seekToFirst(); cursor.valid; cursor.next()) {
          if (previousKey !== undefined && compareCursorKey(cursor, previousKey) <= 0) {
            throw this.#corruptBlock(i, 'keys out of order');
          }
          previousKey = cursor.key.slice();
          entries++;
        }
      } catch (error) {
        if (error instanceof FormatError) throw this.#corruptBlock(i, error.message);
        throw error;
      }
      if (previousKey === undefined || !keysEqual(previousKey, this.#indexKeys[i]!)) {
        throw this.#corruptBlock(i, 'its last key differs from the index');
      }
    }
    if (entries !== this.properties.entryCount) {
      throw new LsmCorruptTableError(
        this.path,
        `${entries} entries where the properties say ${this.properties.entryCount}`,
      );
    }
  }

  static {
    tableInternals = {
      findBlock: (reader, key) => reader.#findBlock(key),
      loadBlock: (reader, index, fillCache, counters) => reader.#loadBlock(index, fillCache, counters),
      cursor: (reader, payload, index) => reader.#cursor(payload, index),
      corruptBlock: (reader, index, what) => reader.#corruptBlock(index, what),
    };
  }
}

/** Walks one table's data blocks in order. */
class TableCursor implements EntryCursor {
  readonly #table: TableReader;
  readonly #fillCache: boolean;
  readonly #counters: ReadCounters | undefined;
  #blockIndex = 0;
  #block: DataBlockCursor | undefined;
  #closed = false;

  constructor(table: TableReader, fillCache: boolean, counters: ReadCounters | undefined) {
    this.#table = table;
    this.#fillCache = fillCache;
    this.#counters = counters;
  }

  get valid(): boolean {
    return this.#block?.valid === true;
  }
  get key(): Uint8Array {
    return this.#block!.key;
  }
  get sequence(): number {
    return this.#block!.sequence;
  }
  entry(): LsmEntry {
    return this.#block!.entry();
  }
  borrowEntry(): LsmEntry {
    return this.#block!.borrowEntry();
  }

  seekToFirst(): void {
    this.#open(0);
    this.#guard(() => this.#block?.seekToFirst());
    this.#skipEmpty();
  }

  seek(key: Uint8Array): void {
    const index = tableInternals.findBlock(this.#table, key);
    this.#open(index);
    this.#guard(() => this.#block?.seek(key));
    this.#skipEmpty();
  }

  next(): void {
    this.#guard(() => this.#block?.next());
    this.#skipEmpty();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#block = undefined;
    this.#table.unref();
  }

  /** Moves to the next block while the current one is exhausted. */
  #skipEmpty(): void {
    while (this.#block !== undefined && !this.#block.valid) {
      this.#open(this.#blockIndex + 1);
      this.#guard(() => this.#block?.seekToFirst());
    }
  }

  #open(index: number): void {
    if (this.#closed) throw new Error(`cursor over ${this.#table.path} used after close`);
    this.#blockIndex = index;
    if (index >= this.#table.dataBlockCount) {
      this.#block = undefined;
      return;
    }
    const payload = tableInternals.loadBlock(this.#table, index, this.#fillCache, this.#counters);
    this.#block = tableInternals.cursor(this.#table, payload, index);
  }

  #guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (error instanceof FormatError)
        throw tableInternals.corruptBlock(this.#table, this.#blockIndex, error.message);
      throw error;
    }
  }
}

/** Reads exactly `length` bytes at `position`; a short read means the file is truncated. */
function readExactly(file: LsmFile, path: string, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  const got = io('read', path, () => file.read(bytes, 0, length, position));
  if (got !== length) {
    throw new LsmCorruptTableError(path, `read ${got} of ${length} bytes at offset ${position} (truncated)`);
  }
  return bytes;
}

function describeDisagreement(expected: TableInfo, actual: TableInfo): string | undefined {
  if (expected.entryCount !== actual.entryCount)
    return `${actual.entryCount} entries, manifest ${expected.entryCount}`;
  if (!keysEqual(expected.smallestKey, actual.smallestKey)) return 'smallest key differs';
  if (!keysEqual(expected.largestKey, actual.largestKey)) return 'largest key differs';
  if (expected.largestSequence !== actual.largestSequence) return 'largest sequence differs';
  if (expected.smallestSequence !== actual.smallestSequence) return 'smallest sequence differs';
  if (expected.tombstoneCount !== actual.tombstoneCount) return 'tombstone count differs';
  return undefined;
}
