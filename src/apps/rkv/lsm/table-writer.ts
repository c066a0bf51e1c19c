/**
 * `TableWriter`: streams sorted entries into one SSTable file (table-format.ts draws the layout) —
 * what a minor compaction turns a memtable into and what a major compaction writes its merged
 * output as (iPipe §5, RKV's compaction actor).
 *
 * The file is written as `<name>.sst.tmp`; `finish()` appends the filter, index, properties and
 * footer, fsyncs the file, closes it and renames it to `<name>.sst`. The caller syncs the
 * directory (once for all of a job's outputs) before the manifest may name the table, so a table
 * the manifest names is always complete on disk. `abandon()` removes the temporary file.
 *
 * Output is buffered and written in chunks of ~256 KiB at explicit positions.
 */

import { BLOCK_TYPE, DataBlockBuilder, sealBlock } from './block.ts';
import { BloomBuilder } from './bloom.ts';
import { ByteWriter, compareKeys } from './bytes.ts';
import { LsmIoError, LsmUnsortedInputError } from './errors.ts';
import type { LsmFile, LsmFileSystem } from './file-system.ts';
import type { LsmEntry } from './memtable.ts';
import {
  type BlockHandle,
  encodeFooter,
  encodeIndex,
  encodeProperties,
  type IndexEntry,
  type TableInfo,
} from './table-format.ts';

const WRITE_CHUNK_BYTES = 256 * 1024;

/** Settings a writer needs. */
export interface TableWriterSettings {
  readonly blockBytes: number;
  readonly bloomBitsPerKey: number;
}

/** Writes one SSTable from entries given in strictly increasing key order. */
export class TableWriter {
  readonly path: string;
  readonly tempPath: string;
  readonly fileNumber: number;
  readonly #fileSystem: LsmFileSystem;
  readonly #settings: TableWriterSettings;
  readonly #file: LsmFile;
  readonly #buffer = new ByteWriter(WRITE_CHUNK_BYTES + 65536);
  readonly #block: DataBlockBuilder;
  readonly #bloom: BloomBuilder;
  readonly #index: IndexEntry[] = [];
  /** Bytes already written to the file (the buffer starts here). */
  #fileOffset = 0;
  #blockStart = 0;
  /** A copy of the last key added, in a reused buffer (entries may be borrowed views). */
  #lastKey = new Uint8Array(64);
  #lastKeyLength = 0;
  #smallestKey: Uint8Array | undefined;
  #entryCount = 0;
  #tombstoneCount = 0;
  #smallestSequence = Number.MAX_SAFE_INTEGER;
  #largestSequence = 0;
  #keyBytes = 0;
  #valueBytes = 0;
  #done = false;

  /** Creates `<path>.tmp`; `path` is the table's final name. */
  constructor(fileSystem: LsmFileSystem, path: string, fileNumber: number, settings: TableWriterSettings) {
    this.path = path;
    this.tempPath = `${path}.tmp`;
    this.fileNumber = fileNumber;
    this.#fileSystem = fileSystem;
    this.#settings = settings;
    this.#block = new DataBlockBuilder(this.#buffer);
    this.#bloom = new BloomBuilder(settings.bloomBitsPerKey);
    this.#file = io('create', this.tempPath, () => fileSystem.create(this.tempPath));
  }

  get entryCount(): number {
    return this.#entryCount;
  }

  /** Bytes the file has so far (written plus buffered). */
  get estimatedBytes(): number {
    return this.#fileOffset + this.#buffer.length;
  }

  add(entry: LsmEntry): void {
    const key = entry.key;
    const lastKey = this.#lastKey.subarray(0, this.#lastKeyLength);
    if (this.#entryCount > 0 && compareKeys(lastKey, key) >= 0) {
      throw new LsmUnsortedInputError(
        `table ${this.path}: key ${hexPreview(key)} does not follow ${hexPreview(lastKey)}: ` +
          'entries must come in strictly increasing key order (is the memtable damaged?)',
      );
    }
    if (this.#smallestKey === undefined) this.#smallestKey = key.slice();
    this.#block.add(entry);
    if (this.#lastKey.length < key.length) {
      this.#lastKey = new Uint8Array(Math.max(key.length, 2 * this.#lastKey.length));
    }
    this.#lastKey.set(key);
    this.#lastKeyLength = key.length;
    this.#bloom.add(key);
    this.#entryCount++;
    this.#keyBytes += key.length;
    if (entry.kind === 'tombstone') this.#tombstoneCount++;
    else this.#valueBytes += entry.value.length;
    if (entry.sequence < this.#smallestSequence) this.#smallestSequence = entry.sequence;
    if (entry.sequence > this.#largestSequence) this.#largestSequence = entry.sequence;
    if (this.#block.estimatedBytes >= this.#settings.blockBytes) this.#finishBlock();
  }

  /**
   * Completes the table: metadata blocks, footer, fsync, close, rename to its final name. Returns
   * its description. The table must have at least one entry.
   */
  finish(): TableInfo {
    if (this.#entryCount === 0 || this.#smallestKey === undefined) {
      throw new Error('TableWriter.finish on an empty table (callers skip empty outputs)');
    }
    if (this.#block.entryCount > 0) this.#finishBlock();
    const largestKey = this.#lastKey.slice(0, this.#lastKeyLength);
    const buffer = this.#buffer;
    const filter = this.#appendBlock(BLOCK_TYPE.filter, () => buffer.bytes(this.#bloom.finish()));
    const index = this.#appendBlock(BLOCK_TYPE.index, () => encodeIndex(buffer, this.#index));
    const properties = this.#appendBlock(BLOCK_TYPE.properties, () =>
      encodeProperties(buffer, {
        entryCount: this.#entryCount,
        tombstoneCount: this.#tombstoneCount,
        dataBlockCount: this.#index.length,
        smallestSequence: this.#smallestSequence,
        largestSequence: this.#largestSequence,
        smallestKey: this.#smallestKey!,
        largestKey,
        keyBytes: this.#keyBytes,
        valueBytes: this.#valueBytes,
      }),
    );
    buffer.bytes(encodeFooter({ filter, index, properties }));
    this.#flushBuffer();
    io('fsync', this.tempPath, () => this.#file.sync());
    this.#done = true;
    io('close', this.tempPath, () => this.#file.close());
    io('rename', this.tempPath, () => this.#fileSystem.rename(this.tempPath, this.path));
    return {
      fileNumber: this.fileNumber,
      sizeBytes: this.#fileOffset,
      entryCount: this.#entryCount,
      tombstoneCount: this.#tombstoneCount,
      smallestKey: this.#smallestKey,
      largestKey,
      smallestSequence: this.#smallestSequence,
      largestSequence: this.#largestSequence,
    };
  }

  /** Closes and removes the temporary file (best effort: a leftover is cleaned at the next open). */
  abandon(): void {
    if (this.#done) return;
    this.#done = true;
    try {
      this.#file.close();
    } catch {
      // Closing may fail after an I/O error; the descriptor is gone either way.
    }
    // On failure left for the next open's clean-up of *.tmp files.
    removeBestEffort(this.#fileSystem, this.tempPath);
  }

  #finishBlock(): void {
    const start = this.#blockStart;
    this.#block.finish();
    sealBlock(this.#buffer, start, BLOCK_TYPE.data);
    this.#index.push({
      lastKey: this.#lastKey.slice(0, this.#lastKeyLength),
      handle: { offset: this.#fileOffset + start, length: this.#buffer.length - start },
    });
    if (this.#buffer.length >= WRITE_CHUNK_BYTES) this.#flushBuffer();
    this.#blockStart = this.#buffer.length;
    this.#block.reset();
  }

  #appendBlock(type: (typeof BLOCK_TYPE)[keyof typeof BLOCK_TYPE], write: () => void): BlockHandle {
    const start = this.#buffer.length;
    write();
    sealBlock(this.#buffer, start, type);
    return { offset: this.#fileOffset + start, length: this.#buffer.length - start };
  }

  #flushBuffer(): void {
    const bytes = this.#buffer.view();
    if (bytes.length > 0) {
      io('write', this.tempPath, () => this.#file.write(bytes, 0, bytes.length, this.#fileOffset));
      this.#fileOffset += bytes.length;
    }
    this.#buffer.reset();
    this.#blockStart = 0;
  }
}

/** Runs a filesystem call, turning a system error (ENOSPC, EIO…) into an LsmIoError naming the file. */
export function io<T>(operation: string, path: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (isSystemError(error)) throw new LsmIoError(operation, path, error);
    // Our own typed errors and a test's simulated crash pass through unchanged.
    throw error;
  }
}

/**
 * Deletes a file whose removal is only housekeeping (a replaced input, an uncommitted output, a
 * temp file): a system error is ignored — the file is then an orphan, which the next open deletes.
 * Anything else (a test's simulated crash: the process is dead) still propagates.
 */
export function removeBestEffort(fileSystem: LsmFileSystem, path: string): void {
  try {
    fileSystem.remove(path);
  } catch (error) {
    if (!isSystemError(error)) throw error;
  }
}

function isSystemError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && !code.startsWith('IPIPE_');
}

/** First bytes of a key in hex, for messages. */
export function hexPreview(key: Uint8Array): string {
  let out = '';
  for (let i = 0; i < Math.min(key.length, 16); i++) out += key[i]!.toString(16).padStart(2, '0');
  return key.length > 16 ? `0x${out}… (${key.length} B)` : `0x${out}`;
}
