/**
 * `LsmTree`: the on-disk part of RKV's LSM store — leveled SSTables in a data directory, their
 * manifest, point reads, merged scans, and the flush and compaction jobs that change them (iPipe
 * §5 "The applications": the SSTable reader and compaction actors, both pinned to the host; the
 * memtable lives with the memtable actor on the NIC and is handed to `beginFlush` when full).
 *
 * Levels: level 0 holds flushed memtables, newest first, with overlapping key ranges; each deeper
 * level holds tables with disjoint ranges in key order, and may hold `levelSizeRatio` times the
 * bytes of the level above (level 1: `level1MaxBytes`); the last level has no limit.
 *
 *   compaction due when   level 0: tables ≥ level0CompactionTrigger      (score = count / trigger)
 *                         level L: bytes  > level1MaxBytes·ratio^(L−1)  (score = bytes / limit)
 *   picked                the level with the highest score ≥ 1
 *   inputs                level 0: all its tables + the level-1 tables overlapping their span;
 *                         level L: one table (round robin by key) + the overlapping level-L+1 tables;
 *                         a table with no overlap below is moved by a manifest edit alone
 *
 * Reads: `get` tries level-0 tables newest first, then at most one table per deeper level (binary
 * search by key range); each table is skipped on its key range or Bloom filter before any block
 * is read. `cursor` merges memtables (given by the caller) with every level.
 *
 * Opening: takes the directory's lock, reads the manifest (refusing a corrupt one), deletes
 * temporary files and tables the manifest does not name (left by a crash mid-flush or
 * mid-compaction), opens every named table (refusing a missing, truncated or corrupt one — it
 * never serves a partial store), and writes an empty manifest for a new store.
 *
 * Failures: a job that fails changes nothing and can be begun again. The one failure that leaves
 * the disk uncertain — the directory fsync after the manifest's rename — marks the tree
 * `needsRecovery`; reads go on, and the next change first runs `recover()`, which redoes the
 * loading part of open in place (manifest, orphans, tables) and rewrites the manifest durably.
 *
 * One thread: a tree and its jobs are used from one thread (one actor's core, or interleaved by
 * the runtime); it holds no locks of its own beyond the directory lock.
 */

import { BlockCache, type BlockCacheStats } from './block-cache.ts';
import { type BloomHash, bloomHash } from './bloom.ts';
import { compareKeys } from './bytes.ts';
import { CompactionJob, type JobHost, type JobReport, TombstoneDropper } from './compaction.ts';
import { type EntryCursor, MemtableCursor, MergingCursor } from './cursor.ts';
import {
  LsmClosedError,
  LsmCorruptManifestError,
  LsmDirectoryLockedError,
  LsmIoError,
  LsmMissingTableError,
  LsmOptionsError,
} from './errors.ts';
import { type LsmFileSystem, NodeFileSystem } from './file-system.ts';
import { LevelCursor } from './level-cursor.ts';
import {
  MANIFEST_FILE,
  MANIFEST_TEMP_FILE,
  type ManifestState,
  readManifest,
  writeManifest,
} from './manifest.ts';
import type { LsmEntry, Memtable } from './memtable.ts';
import {
  DEFAULT_LEVEL_COUNT,
  type LsmTreeOptions,
  type ResolvedTreeOptions,
  resolveTreeOptions,
} from './options.ts';
import { parseTableFileName, type TableInfo, tableFileName } from './table-format.ts';
import { TableReader } from './table-reader.ts';
import { io, removeBestEffort, TableWriter } from './table-writer.ts';

/** The result of asking for a flush to start. */
export type BeginFlushResult =
  | { readonly kind: 'started'; readonly job: CompactionJob }
  /** A flush is already running: finish it first (flushes must commit in memtable order). */
  | { readonly kind: 'busy'; readonly job: CompactionJob }
  /** The memtable was empty: nothing to write (flushedSequence advanced if asked to). */
  | { readonly kind: 'empty' };

/** One step of background work (see `compactStep`). */
export type CompactionStep =
  | { readonly kind: 'idle' }
  | { readonly kind: 'progress'; readonly report: JobReport }
  | { readonly kind: 'done'; readonly report: JobReport };

/** One level's shape. */
export interface LevelStats {
  readonly level: number;
  readonly tableCount: number;
  readonly bytes: number;
  /** The level's size limit (Infinity for level 0, counted in tables, and the last level). */
  readonly maxBytes: number;
  /** ≥ 1 when the level is due for compaction. */
  readonly score: number;
}

/** Counters of a tree since it was opened. */
export interface LsmTreeStats {
  readonly levels: readonly LevelStats[];
  readonly flushedSequence: number;
  readonly blockCache: BlockCacheStats;
  /** Point reads, and tables whose Bloom filter ruled the key out. */
  readonly gets: number;
  readonly bloomNegatives: number;
  /** Totals over committed jobs. */
  readonly flushes: number;
  readonly compactions: number;
  readonly compactionBytesRead: number;
  readonly compactionBytesWritten: number;
  readonly flushBytesWritten: number;
  /** Bytes of all table files named by the manifest. */
  readonly tableBytes: number;
}

/** Options of `beginFlush`. */
export interface FlushOptions {
  /**
   * What `flushedSequence` becomes at least once the flush commits (default: the largest sequence
   * in the memtable) — e.g. the replicated log index the memtable covers.
   */
  readonly flushedSequence?: number;
}

/** The on-disk LSM tree: levels of SSTables and their manifest. */
export class LsmTree {
  readonly directory: string;
  readonly levelCount: number;
  readonly #options: ResolvedTreeOptions;
  readonly #fileSystem: LsmFileSystem;
  readonly #cache: BlockCache | undefined;
  readonly #release: () => void;
  /** Open tables per level (level 0 newest first; deeper levels by key). */
  #levels: TableReader[][];
  #nextFileNumber: number;
  #flushedSequence: number;
  /** Where round-robin compaction of each level resumes (largest key of the last one picked). */
  readonly #compactPointers: (Uint8Array | undefined)[];
  #flushJob: CompactionJob | undefined;
  #majorJob: CompactionJob | undefined;
  #closed = false;
  /** Set when a manifest write failed part-way: the on-disk state is unknown until reopened. */
  #failure: unknown;
  readonly #hash: BloomHash = { h1: 0, h2: 0 };
  #gets = 0;
  #bloomNegatives = 0;
  #flushes = 0;
  #compactions = 0;
  #compactionBytesRead = 0;
  #compactionBytesWritten = 0;
  #flushBytesWritten = 0;

  private constructor(
    options: ResolvedTreeOptions,
    release: () => void,
    state: ManifestState,
    levels: TableReader[][],
    cache: BlockCache | undefined,
  ) {
    this.#options = options;
    this.#fileSystem = options.fileSystem;
    this.directory = options.directory;
    this.#release = release;
    this.levelCount = state.levelCount;
    this.#levels = levels;
    this.#nextFileNumber = state.nextFileNumber;
    this.#flushedSequence = state.flushedSequence;
    this.#compactPointers = levels.map(() => undefined);
    this.#cache = cache;
  }

  /** Opens (or creates) the store in `options.directory`; see the header for what is checked. */
  static open(options: LsmTreeOptions): LsmTree {
    const resolved = resolveTreeOptions(options, options.fileSystem ?? new NodeFileSystem());
    const { fileSystem, directory } = resolved;
    if (resolved.createIfMissing) io('mkdir', directory, () => fileSystem.makeDirectory(directory));
    else if (!directoryExists(fileSystem, directory)) {
      throw new LsmOptionsError(
        'createIfMissing',
        `${directory} does not exist and createIfMissing is false`,
      );
    }
    const lock = io('lock', directory, () => fileSystem.lock(directory));
    if (lock.kind === 'held') throw new LsmDirectoryLockedError(directory, lock.holderPid, lock.thisProcess);
    try {
      const cache = resolved.blockCacheBytes > 0 ? new BlockCache(resolved.blockCacheBytes) : undefined;
      const version = loadVersion(resolved, cache);
      const tree = new LsmTree(resolved, lock.release, version.state, version.levels, cache);
      // A new store, or one whose leftovers were just deleted: make that durable now.
      try {
        io('write manifest', directory, () => writeManifest(fileSystem, directory, version.state));
      } catch (error) {
        for (const level of version.levels) for (const reader of level) reader.unref();
        throw error;
      }
      return tree;
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The largest sequence number whose write is in a table (durable). */
  get flushedSequence(): number {
    return this.#flushedSequence;
  }

  /** The tables of each level (level 0 newest first). */
  tables(): TableInfo[][] {
    return this.#levels.map((level) => level.map((table) => table.info));
  }

  /**
   * The newest entry for `key` in the tables — a value, a tombstone (the key was deleted), or
   * undefined (no table has it). Memtables are the caller's to consult first.
   */
  get(key: Uint8Array): LsmEntry | undefined {
    this.#checkOpen();
    this.#gets++;
    const hash = bloomHash(key, this.#hash);
    for (const table of this.#levels[0]!) {
      const found = this.#getFrom(table, key, hash);
      if (found !== undefined) return found;
    }
    for (let level = 1; level < this.#levels.length; level++) {
      const tables = this.#levels[level]!;
      if (tables.length === 0) continue;
      const table = tables[findTable(tables, key)];
      if (table === undefined) continue;
      const found = this.#getFrom(table, key, hash);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /**
   * A cursor merging `memtables` (newest first; the caller keeps them alive until `close`) with
   * every table. Tombstones are included: skip them to read the store, keep them to compact.
   * Close the cursor to release its tables.
   */
  cursor(memtables: readonly Memtable[] = [], options: { fillCache?: boolean } = {}): EntryCursor {
    this.#checkOpen();
    const fillCache = options.fillCache ?? true;
    const children: EntryCursor[] = memtables.map((memtable) => new MemtableCursor(memtable));
    for (const table of this.#levels[0]!) children.push(table.cursor({ fillCache }));
    for (let level = 1; level < this.#levels.length; level++) {
      const tables = this.#levels[level]!;
      if (tables.length > 0) children.push(new LevelCursor(tables, fillCache));
    }
    return new MergingCursor(children);
  }

  /**
   * Starts writing `memtable` as a level-0 table (minor compaction). The memtable must not change
   * until the job is done (freeze it: writes go to a new one). Flushes commit one at a time, in the
   * order the memtables were filled.
   */
  beginFlush(memtable: Memtable, options: FlushOptions = {}): BeginFlushResult {
    this.#checkWritable();
    if (this.#flushJob !== undefined) return { kind: 'busy', job: this.#flushJob };
    if (memtable.entryCount === 0) {
      const target = options.flushedSequence ?? 0;
      if (target > this.#flushedSequence) {
        this.#commitState(this.#levels, this.#nextFileNumber, target);
        this.#flushedSequence = target;
      }
      return { kind: 'empty' };
    }
    // A tombstone in the memtable can be dropped if no table at all could hold an older value.
    const runs: TableInfo[][] = this.#levels[0]!.map((table) => [table.info]);
    for (let level = 1; level < this.#levels.length; level++)
      runs.push(this.#levels[level]!.map((t) => t.info));
    const job = new CompactionJob(
      this.#jobHost,
      'flush',
      -1,
      0,
      [],
      () => new MemtableCursor(memtable),
      new TombstoneDropper(runs),
    );
    job.flushedSequence = options.flushedSequence ?? 0;
    this.#flushJob = job;
    return { kind: 'started', job };
  }

  /** Flushes `memtable` to completion (see `beginFlush`); returns the job's report. */
  flush(memtable: Memtable, options: FlushOptions = {}): JobReport | undefined {
    let begun = this.beginFlush(memtable, options);
    if (begun.kind === 'busy') {
      begun.job.run();
      begun = this.beginFlush(memtable, options);
    }
    return begun.kind === 'started' ? begun.job.run() : undefined;
  }

  /** The running major compaction, if any. */
  get compactionJob(): CompactionJob | undefined {
    return this.#majorJob;
  }

  /** Whether some level is due for compaction. */
  get compactionNeeded(): boolean {
    return this.#majorJob !== undefined || this.#pickLevel() !== undefined;
  }

  /**
   * One step of major compaction: continues the running job, or starts the most urgent one. Returns
   * 'idle' when no level is due.
   */
  compactStep(budgetBytes = 1 << 20): CompactionStep {
    this.#checkWritable();
    let job = this.#majorJob;
    if (job === undefined) {
      const level = this.#pickLevel();
      if (level === undefined) return { kind: 'idle' };
      job = this.#startCompaction(level, false);
    }
    const report = job.step(budgetBytes);
    return report.done ? { kind: 'done', report } : { kind: 'progress', report };
  }

  /** Runs compactions until no level is due; returns their reports. */
  compactUntilBalanced(budgetBytes = 4 << 20): JobReport[] {
    const reports: JobReport[] = [];
    for (;;) {
      const step = this.compactStep(budgetBytes);
      if (step.kind === 'idle') return reports;
      if (step.kind === 'done') reports.push(step.report);
    }
  }

  /**
   * Merges every level down into the last one (a full major compaction): afterwards the store is
   * one sorted run with no tombstones. Finishes a running compaction first.
   */
  compactAll(budgetBytes = 4 << 20): JobReport[] {
    this.#checkWritable();
    const reports: JobReport[] = [];
    if (this.#majorJob !== undefined) reports.push(this.#majorJob.run(budgetBytes));
    for (let level = 0; level < this.levelCount - 1; level++) {
      if (this.#levels[level]!.length === 0) continue;
      reports.push(this.#startCompaction(level, true).run(budgetBytes));
    }
    return reports;
  }

  stats(): LsmTreeStats {
    let tableBytes = 0;
    const levels = this.#levels.map((tables, level) => {
      const bytes = sumBytes(tables);
      tableBytes += bytes;
      return {
        level,
        tableCount: tables.length,
        bytes,
        maxBytes: this.#maxBytes(level),
        score: this.#score(level),
      };
    });
    return {
      levels,
      flushedSequence: this.#flushedSequence,
      blockCache: this.#cache?.stats() ?? { hits: 0, misses: 0, bytes: 0, capacityBytes: 0 },
      gets: this.#gets,
      bloomNegatives: this.#bloomNegatives,
      flushes: this.#flushes,
      compactions: this.#compactions,
      compactionBytesRead: this.#compactionBytesRead,
      compactionBytesWritten: this.#compactionBytesWritten,
      flushBytesWritten: this.#flushBytesWritten,
      tableBytes,
    };
  }

  /** Aborts running jobs, closes every table and releases the directory lock. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#flushJob?.abort();
    this.#majorJob?.abort();
    this.#closed = true;
    for (const level of this.#levels) for (const table of level) table.unref();
    this.#levels = this.#levels.map(() => []);
    this.#release();
  }

  /**
   * Whether a manifest write failed after its rename (see `recover`): reads still work, and the
   * next flush or compaction recovers first.
   */
  get needsRecovery(): boolean {
    return this.#failure !== undefined;
  }

  /**
   * After a manifest write that failed past its rename, reloads the store from its directory in
   * place — exactly what closing and reopening would do, without giving up the directory lock or
   * this object: re-read the manifest that is visible now, delete the files it does not name,
   * reopen its tables and write it again (so it is durable). Running jobs are aborted (start new
   * ones); open cursors keep reading the tables they hold. `flushedSequence` may move forward (the
   * uncertain commit did land). A no-op when nothing failed; throws (and stays failed, to be
   * retried) when the disk still refuses.
   */
  recover(): void {
    this.#checkOpen();
    if (this.#failure === undefined) return;
    this.#flushJob?.abort();
    this.#majorJob?.abort();
    const version = loadVersion(this.#options, this.#cache);
    try {
      io('write manifest', this.directory, () =>
        writeManifest(this.#fileSystem, this.directory, version.state),
      );
    } catch (error) {
      for (const level of version.levels) for (const reader of level) reader.unref();
      throw error;
    }
    for (const level of this.#levels) for (const table of level) table.unref();
    this.#levels = version.levels;
    this.#nextFileNumber = version.state.nextFileNumber;
    this.#flushedSequence = version.state.flushedSequence;
    this.#compactPointers.fill(undefined);
    this.#failure = undefined;
  }

  // ---- internals ----------------------------------------------------------------------------

  #getFrom(table: TableReader, key: Uint8Array, hash: BloomHash): LsmEntry | undefined {
    const info = table.info;
    if (compareKeys(key, info.smallestKey) < 0 || compareKeys(key, info.largestKey) > 0) return undefined;
    if (!table.mayContain(hash)) {
      this.#bloomNegatives++;
      return undefined;
    }
    return table.get(key, hash);
  }

  #checkOpen(): void {
    if (this.#closed) throw new LsmClosedError(`the store in ${this.directory} is closed: open it again`);
  }

  /** Entry points that change the store: recover first if a manifest write left it uncertain. */
  #checkWritable(): void {
    this.#checkOpen();
    if (this.#failure !== undefined) this.recover();
  }

  /** Inside a job's commit: an uncertain store is refused, not recovered (that would abort the job). */
  #checkCommittable(): void {
    this.#checkOpen();
    if (this.#failure !== undefined) {
      throw new LsmClosedError(
        `the store in ${this.directory} refuses changes after a failed manifest write (${describe(this.#failure)}): ` +
          'call recover() (any new flush or compaction does) or reopen it',
      );
    }
  }

  #maxBytes(level: number): number {
    if (level === 0 || level === this.levelCount - 1) return Number.POSITIVE_INFINITY;
    return this.#options.level1MaxBytes * this.#options.levelSizeRatio ** (level - 1);
  }

  #score(level: number): number {
    const tables = this.#levels[level]!;
    if (level === 0) return tables.length / this.#options.level0CompactionTrigger;
    if (level === this.levelCount - 1) return 0;
    return sumBytes(tables) / this.#maxBytes(level);
  }

  /** The level most in need of compaction (score ≥ 1), or undefined. */
  #pickLevel(): number | undefined {
    let best: number | undefined;
    let bestScore = 0;
    for (let level = 0; level < this.levelCount - 1; level++) {
      const score = this.#score(level);
      if (score >= 1 && score > bestScore) {
        best = level;
        bestScore = score;
      }
    }
    return best;
  }

  /** Chooses inputs for compacting `level` into level + 1 and creates the job. */
  #startCompaction(level: number, wholeLevel: boolean): CompactionJob {
    const tables = this.#levels[level]!;
    let inputs: TableReader[];
    if (level === 0 || wholeLevel) {
      inputs = [...tables];
    } else {
      // Round robin: the first table after the last one compacted from this level.
      const pointer = this.#compactPointers[level];
      const table =
        tables.find((t) => pointer === undefined || compareKeys(t.info.smallestKey, pointer) > 0) ??
        tables[0]!;
      inputs = [table];
      this.#compactPointers[level] = table.info.largestKey;
    }
    let smallest = inputs[0]!.info.smallestKey;
    let largest = inputs[0]!.info.largestKey;
    for (const input of inputs) {
      if (compareKeys(input.info.smallestKey, smallest) < 0) smallest = input.info.smallestKey;
      if (compareKeys(input.info.largestKey, largest) > 0) largest = input.info.largestKey;
    }
    const outputLevel = level + 1;
    // Every table of the next level overlapping the inputs' whole span (not just each input's
    // range): the outputs cover the span, and must not overlap what stays in that level.
    const below = this.#levels[outputLevel]!.filter(
      (t) => compareKeys(t.info.largestKey, smallest) >= 0 && compareKeys(t.info.smallestKey, largest) <= 0,
    );
    const lastLevel = outputLevel === this.levelCount - 1;
    let job: CompactionJob;
    if (below.length === 0 && inputs.length === 1 && (!lastLevel || inputs[0]!.info.tombstoneCount === 0)) {
      // Nothing to merge with: move the table down by editing the manifest.
      job = new CompactionJob(this.#jobHost, 'move', level, outputLevel, inputs, undefined, undefined);
    } else {
      const deeper: TableInfo[][] = [];
      for (let l = outputLevel + 1; l < this.levelCount; l++)
        deeper.push(this.#levels[l]!.map((t) => t.info));
      const sources = [...inputs];
      job = new CompactionJob(
        this.#jobHost,
        'compaction',
        level,
        outputLevel,
        [...inputs, ...below],
        (counters) => {
          // Level-0 inputs newest first (their order breaks no ties: sequences do), then the
          // next level as one cursor.
          const children: EntryCursor[] = sources.map((t) => t.cursor({ fillCache: false, counters }));
          if (below.length > 0) children.push(new LevelCursor(below, false, counters));
          return new MergingCursor(children);
        },
        new TombstoneDropper(deeper),
      );
    }
    this.#majorJob = job;
    return job;
  }

  /** The tree's side of its jobs (kept off the public surface). */
  readonly #jobHost: JobHost = {
    targetTableBytes: () => this.#options.targetTableBytes,
    newTableWriter: () => {
      const fileNumber = this.#nextFileNumber++;
      return new TableWriter(this.#fileSystem, `${this.directory}/${tableFileName(fileNumber)}`, fileNumber, {
        blockBytes: this.#options.blockBytes,
        bloomBitsPerKey: this.#options.bloomBitsPerKey,
      });
    },
    commit: (job, outputs) => this.#commit(job, outputs),
    ended: (job) => this.#ended(job),
  };

  #commit(job: CompactionJob, outputs: readonly TableInfo[]): number {
    this.#checkCommittable();
    const fileSystem = this.#fileSystem;
    const directory = this.directory;
    if (outputs.length > 0) io('fsync', directory, () => fileSystem.syncDirectory(directory));
    // Read every output back before the manifest names it: a table that does not open is never
    // committed.
    const readers: TableReader[] = [];
    try {
      for (const info of outputs) {
        readers.push(
          TableReader.open(fileSystem, `${directory}/${tableFileName(info.fileNumber)}`, info.fileNumber, {
            expected: info,
            ...(this.#cache === undefined ? {} : { cache: this.#cache }),
          }),
        );
      }
    } catch (error) {
      for (const reader of readers) reader.unref();
      throw error;
    }
    let levels: TableReader[][];
    const flushedSequence = Math.max(this.#flushedSequence, job.kind === 'flush' ? job.flushedSequence : 0);
    let manifestBytes: number;
    try {
      const removed = new Set(job.inputs);
      levels = this.#levels.map((tables) => tables.filter((table) => !removed.has(table)));
      const target = levels[job.outputLevel]!;
      target.push(...readers);
      if (job.kind === 'move') target.push(job.inputs[0]!);
      if (job.outputLevel === 0) sortLevelZero(target);
      else target.sort((a, b) => compareKeys(a.info.smallestKey, b.info.smallestKey));
      checkDisjoint(levels, job.outputLevel);
      manifestBytes = this.#commitState(levels, this.#nextFileNumber, flushedSequence);
    } catch (error) {
      for (const reader of readers) reader.unref();
      throw error;
    }
    // Committed: swap the version, then let go of the inputs (open cursors keep their own
    // references) and delete their files (a failure leaves orphans for the next open).
    this.#levels = levels;
    this.#flushedSequence = flushedSequence;
    const report = job.report();
    if (job.kind === 'flush') {
      this.#flushes++;
      this.#flushBytesWritten += report.bytesWritten;
    } else {
      this.#compactions++;
      this.#compactionBytesRead += report.bytesRead;
      this.#compactionBytesWritten += report.bytesWritten;
    }
    if (job.kind !== 'move') {
      for (const input of job.inputs) {
        input.unref();
        removeBestEffort(fileSystem, input.path);
      }
    }
    return manifestBytes;
  }

  /**
   * Writes the manifest. A failure before its rename changed nothing: the caller's job fails and
   * can be retried. A failure after it (the directory fsync) leaves the disk uncertain — the new
   * manifest is visible, the old one may come back after power loss — so the tree is marked
   * failed: the other running job is aborted, no file is deleted, reads go on from the old
   * version (every file of both versions is kept), and the next change first calls `recover`.
   */
  #commitState(levels: readonly TableReader[][], nextFileNumber: number, flushedSequence: number): number {
    let renamed = false;
    try {
      return writeManifest(
        this.#fileSystem,
        this.directory,
        {
          levelCount: this.levelCount,
          nextFileNumber,
          flushedSequence,
          levels: levels.map((tables) => tables.map((table) => table.info)),
        },
        () => {
          renamed = true;
        },
      );
    } catch (error) {
      if (renamed) {
        this.#failure = error;
        this.#flushJob?.abort();
        this.#majorJob?.abort();
      }
      throw error;
    }
  }

  #ended(job: CompactionJob): void {
    if (this.#flushJob === job) this.#flushJob = undefined;
    if (this.#majorJob === job) this.#majorJob = undefined;
    if (job.done || this.#failure !== undefined) return;
    // A failed job's finished outputs were never committed: remove them (best effort).
    for (const info of job.uncommittedOutputs) {
      removeBestEffort(this.#fileSystem, `${this.directory}/${tableFileName(info.fileNumber)}`);
    }
  }
}

/** A store's state as read from its directory: the manifest and every table it names, open. */
interface LoadedVersion {
  readonly state: ManifestState;
  readonly levels: TableReader[][];
}

/**
 * Reads the manifest (refusing a corrupt one), deletes temporary files and tables the manifest
 * does not name (left by a crash or a failed job), and opens every named table (refusing a
 * missing or corrupt one). Shared by `open` and by the in-place recovery after an uncertain
 * manifest write. On failure every table it opened is closed again.
 */
function loadVersion(resolved: ResolvedTreeOptions, cache: BlockCache | undefined): LoadedVersion {
  const { fileSystem, directory } = resolved;
  let state = readManifest(fileSystem, directory);
  const names = io('list', directory, () => fileSystem.list(directory));
  if (state === undefined) {
    const tables = names.filter((name) => parseTableFileName(name) !== undefined);
    if (tables.length > 0) {
      throw new LsmCorruptManifestError(
        `${directory}/${MANIFEST_FILE}`,
        `it is missing while ${tables.length} table file(s) (${tables.slice(0, 3).join(', ')}…) are present`,
      );
    }
    if (!resolved.createIfMissing) {
      throw new LsmOptionsError(
        'createIfMissing',
        `${directory} holds no store and createIfMissing is false`,
      );
    }
    const levelCount = resolved.levelCount ?? DEFAULT_LEVEL_COUNT;
    state = {
      levelCount,
      nextFileNumber: 1,
      flushedSequence: 0,
      levels: Array.from({ length: levelCount }, () => []),
    };
  } else if (resolved.levelCount !== undefined && resolved.levelCount !== state.levelCount) {
    throw new LsmOptionsError(
      'levelCount',
      `${directory} was created with ${state.levelCount} levels; open it without levelCount or with ${state.levelCount}`,
    );
  }
  const named = new Set<number>();
  for (const level of state.levels) for (const table of level) named.add(table.fileNumber);
  // Leftovers of a crash: temporary files, and tables written but never committed.
  for (const name of names) {
    const fileNumber = parseTableFileName(name);
    const orphanTable = fileNumber !== undefined && !named.has(fileNumber);
    if (orphanTable || name === MANIFEST_TEMP_FILE || /^\d{6,16}\.sst\.tmp$/.test(name)) {
      io('remove', `${directory}/${name}`, () => fileSystem.remove(`${directory}/${name}`));
    }
  }
  const present = new Set(names);
  const opened: TableReader[] = [];
  try {
    const levels: TableReader[][] = state.levels.map((tables) =>
      tables.map((info) => {
        const name = tableFileName(info.fileNumber);
        const path = `${directory}/${name}`;
        if (!present.has(name)) throw new LsmMissingTableError(path);
        const reader = TableReader.open(fileSystem, path, info.fileNumber, {
          expected: info,
          ...(cache === undefined ? {} : { cache }),
          verifyAll: resolved.verifyDataBlocksOnOpen,
        });
        opened.push(reader);
        return reader;
      }),
    );
    sortLevelZero(levels[0]!);
    return { state, levels };
  } catch (error) {
    for (const reader of opened) reader.unref();
    throw error;
  }
}

/** Whether `directory` exists (a missing one lists as ENOENT; other failures are I/O errors). */
function directoryExists(fileSystem: LsmFileSystem, directory: string): boolean {
  try {
    fileSystem.list(directory);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new LsmIoError('list', directory, error);
  }
}

/** Level 0 order: newest first (largest sequence, then file number). */
function sortLevelZero(tables: TableReader[]): void {
  tables.sort((a, b) => b.info.largestSequence - a.info.largestSequence || b.fileNumber - a.fileNumber);
}

/** Index of the table of a sorted, disjoint level whose range may hold `key` (first largest ≥ key). */
function findTable(tables: readonly TableReader[], key: Uint8Array): number {
  let low = 0;
  let high = tables.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareKeys(tables[middle]!.info.largestKey, key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Invariant check before any manifest is written: a deep level's tables must not overlap. */
function checkDisjoint(levels: readonly TableReader[][], level: number): void {
  if (level === 0) return;
  const tables = levels[level]!;
  for (let i = 1; i < tables.length; i++) {
    if (compareKeys(tables[i - 1]!.info.largestKey, tables[i]!.info.smallestKey) >= 0) {
      throw new Error(
        `internal error: level ${level} tables ${tables[i - 1]!.fileNumber} and ${tables[i]!.fileNumber} overlap ` +
          '(refusing to commit)',
      );
    }
  }
}

function sumBytes(tables: readonly TableReader[]): number {
  let bytes = 0;
  for (const table of tables) bytes += table.info.sizeBytes;
  return bytes;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
