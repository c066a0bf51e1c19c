/**
 * The LSM engine's options, their defaults and their validation (RKV's storage engine, iPipe §5:
 * "leveled SSTables with exponentially growing size limits").
 *
 * Sizes are bytes and counts are integers; every option is checked once at open and a value
 * outside its range is an `LsmOptionsError` naming the option, rather than a store that misbehaves
 * later. `levelCount` is part of the data directory (recorded in the manifest at creation).
 */

import { LsmOptionsError } from './errors.ts';
import type { LsmFileSystem } from './file-system.ts';

/** Options of `LsmTree.open` (the on-disk part of the store). */
export interface LsmTreeOptions {
  /** The data directory (created when missing and `createIfMissing`). */
  readonly directory: string;
  /** Where files live (default: real files through node:fs). */
  readonly fileSystem?: LsmFileSystem;
  /** Create an empty store when the directory holds none (default true; false: refuse). */
  readonly createIfMissing?: boolean;
  /** Target payload size of a data block, 256 B .. 1 MiB (default 4 KiB). */
  readonly blockBytes?: number;
  /** Bloom filter bits per key, 0 (no filter) .. 32 (default 10: ≈0.82 % false positives). */
  readonly bloomBitsPerKey?: number;
  /** A compaction output table is closed once it reaches this size, ≥ 4 KiB (default 2 MiB). */
  readonly targetTableBytes?: number;
  /** Level-0 tables that make a level-0 → level-1 compaction due, 1..64 (default 4). */
  readonly level0CompactionTrigger?: number;
  /** Size limit of level 1 in bytes, ≥ 4 KiB (default 10 MiB). */
  readonly level1MaxBytes?: number;
  /** Each level may hold this many times the bytes of the one above, 2..1000 (default 10). */
  readonly levelSizeRatio?: number;
  /** Levels, 2..16 (default 7), fixed when the directory is created. */
  readonly levelCount?: number;
  /** Bytes of verified data blocks kept in memory across reads, 0 (none) or more (default 8 MiB). */
  readonly blockCacheBytes?: number;
  /**
   * Check every data block's checksum at open (default false: footer, index, filter and properties
   * blocks are always checked at open, data blocks when first read — a damaged data block is then
   * refused at read time, never served).
   */
  readonly verifyDataBlocksOnOpen?: boolean;
  /** Longest key accepted, 1 .. 2^24 (default 64 KiB). */
  readonly maxKeyBytes?: number;
  /** Longest value accepted, 0 .. 2^30 (default 64 MiB). */
  readonly maxValueBytes?: number;
}

/** Every option resolved to a value. */
export interface ResolvedTreeOptions {
  readonly directory: string;
  readonly fileSystem: LsmFileSystem;
  readonly createIfMissing: boolean;
  readonly blockBytes: number;
  readonly bloomBitsPerKey: number;
  readonly targetTableBytes: number;
  readonly level0CompactionTrigger: number;
  readonly level1MaxBytes: number;
  readonly levelSizeRatio: number;
  readonly levelCount: number | undefined;
  readonly blockCacheBytes: number;
  readonly verifyDataBlocksOnOpen: boolean;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
}

export const DEFAULT_LEVEL_COUNT = 7;
export const MAX_LEVEL_COUNT = 16;

function integer(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LsmOptionsError(name, `must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

/** Fills in defaults and checks ranges; `fileSystem` must be supplied by the caller's default. */
export function resolveTreeOptions(options: LsmTreeOptions, fileSystem: LsmFileSystem): ResolvedTreeOptions {
  if (typeof options.directory !== 'string' || options.directory.length === 0) {
    throw new LsmOptionsError('directory', 'must be a non-empty path');
  }
  return {
    directory: options.directory.replace(/\/+$/, '') || '/',
    fileSystem,
    createIfMissing: options.createIfMissing ?? true,
    blockBytes: integer('blockBytes', options.blockBytes, 4096, 256, 1 << 20),
    bloomBitsPerKey: integer('bloomBitsPerKey', options.bloomBitsPerKey, 10, 0, 32),
    targetTableBytes: integer('targetTableBytes', options.targetTableBytes, 2 << 20, 4096, 2 ** 40),
    level0CompactionTrigger: integer('level0CompactionTrigger', options.level0CompactionTrigger, 4, 1, 64),
    level1MaxBytes: integer('level1MaxBytes', options.level1MaxBytes, 10 << 20, 4096, 2 ** 50),
    levelSizeRatio: integer('levelSizeRatio', options.levelSizeRatio, 10, 2, 1000),
    levelCount:
      options.levelCount === undefined
        ? undefined
        : integer('levelCount', options.levelCount, DEFAULT_LEVEL_COUNT, 2, MAX_LEVEL_COUNT),
    blockCacheBytes: integer('blockCacheBytes', options.blockCacheBytes, 8 << 20, 0, 2 ** 40),
    verifyDataBlocksOnOpen: options.verifyDataBlocksOnOpen ?? false,
    maxKeyBytes: integer('maxKeyBytes', options.maxKeyBytes, 64 << 10, 1, 1 << 24),
    maxValueBytes: integer('maxValueBytes', options.maxValueBytes, 64 << 20, 0, 1 << 30),
  };
}
