/**
 * RKV's LSM storage engine — the public surface of src/apps/rkv/lsm (iPipe §5 "The applications",
 * RKV: a skip-list memtable in DMOs on the NIC, leveled SSTables with Bloom filters on the host,
 * minor and major compaction, tombstones for deletes).
 *
 * `LsmEngine` is the whole store behind one API. RKV's actors use the parts: the memtable actor a
 * `DmoMemtable`; the SSTable reader and compaction actors an `LsmTree` (`get`, `cursor`,
 * `beginFlush`, `compactStep`, `recover`; docs/apps/rkv-lsm.md shows the calls). Every file goes through an `LsmFileSystem`: real files
 * (`NodeFileSystem`), or the crashable in-memory disk (`MemoryFileSystem`).
 */

// ---- values ---------------------------------------------------------------------------------

/** The Bloom filter's expected false-positive rate and probe count for a bits-per-key setting. */
export { bloomFalsePositiveRate, bloomProbes } from './bloom.ts';
/** The key order of every memtable and table (unsigned bytes, shorter prefix first). */
export { compareKeys } from './bytes.ts';
/** A compaction or flush in progress, driven by `step`. */
export { CompactionJob } from './compaction.ts';
/** The memtable in an actor's DMOs (over the DMO skip list); re-open it by `rootId`. */
export { DmoMemtable } from './dmo-memtable.ts';
/** The LSM engine's typed errors (codes IPIPE_ERR_LSM_*). */
export {
  isLsmError,
  LSM_ERROR_CODES,
  LsmClosedError,
  LsmCorruptManifestError,
  LsmCorruptTableError,
  LsmDirectoryLockedError,
  LsmError,
  LsmIoError,
  LsmKeyTooLargeError,
  LsmMissingTableError,
  LsmOptionsError,
  LsmSequenceError,
  LsmUnsortedInputError,
  LsmValueTooLargeError,
} from './errors.ts';
/** Fails the k-th mutating filesystem call (crash tests on real files). */
export { FaultyFileSystem } from './faulty-file-system.ts';
/** Real files through node:fs, with a pid LOCK file. */
export { NodeFileSystem } from './file-system.ts';
/** The memtable + tree store. */
export { LsmEngine } from './lsm-engine.ts';
/** The on-disk levels of SSTables and their manifest. */
export { LsmTree } from './lsm-tree.ts';
/** An in-memory disk with explicit durability, power-loss simulation and fault injection. */
export { MemoryFileSystem, SimulatedCrash } from './memory-file-system.ts';
/** A memtable in JS memory. */
export { PlainMemtable } from './plain-memtable.ts';
/** One SSTable, opened and checked (tools and tests; the tree opens its own). */
export { TableReader } from './table-reader.ts';

// ---- types ----------------------------------------------------------------------------------

export type { JobKind, JobReport } from './compaction.ts';
export type { EntryCursor } from './cursor.ts';
export type { DmoMemtableOptions } from './dmo-memtable.ts';
export type { LsmErrorCode } from './errors.ts';
export type { FaultKind } from './faulty-file-system.ts';
export type { LsmFile, LsmFileSystem, LsmLockResult } from './file-system.ts';
export type {
  CloseOptions,
  LsmEngineOptions,
  LsmEngineStats,
  ScanOptions,
  WriteOptions,
} from './lsm-engine.ts';
export type {
  BeginFlushResult,
  CompactionStep,
  FlushOptions,
  LevelStats,
  LsmTreeStats,
} from './lsm-tree.ts';
export type { CrashMode } from './memory-file-system.ts';
export type { LsmEntry, LsmPut, LsmTombstone, Memtable } from './memtable.ts';
export type { LsmTreeOptions } from './options.ts';
export type { TableInfo } from './table-format.ts';
