/**
 * `LsmEngine`: the whole LSM store — a memtable in front of an `LsmTree` — as one key-value API
 * (iPipe §5 "The applications", RKV: "skip-list memtable; leveled SSTables …; minor and major
 * compaction; deletes are tombstones; reads go memtable → level 0 → upward").
 *
 * RKV splits this across actors (the memtable actor on the NIC holds a `DmoMemtable`; the SSTable
 * reader and compaction actors on the host share an `LsmTree`); the engine is the same logic in
 * one place, for a standalone store, for tests against a model, and for the single-node path.
 *
 * Writes and reads:
 *
 *   put/delete → active memtable          get → active → frozen → tables (newest first)
 *                   │ full (memtableBytes)                scan → merge of all of them, newest wins,
 *                   ▼                                            tombstones hide older values
 *               frozen memtable ──flush──▶ level-0 table ──compaction──▶ deeper levels
 *
 * Durability contract. There is no write-ahead log here: in RKV the replicated consensus log is
 * the log. A write is durable once a flush that includes it commits; `flushedSequence` is the
 * largest durable sequence number, and after a crash the reopened store holds exactly the writes
 * with sequence ≤ `flushedSequence` — every one of them, and none later. The caller re-applies
 * the rest from its log (writes may carry the log's own index as their `sequence` for this). A
 * clean `close()` flushes first, so nothing is lost without a crash.
 *
 * Maintenance: with `maintenance: 'inline'` (default) a write that finds the memtable full first
 * flushes it and compacts until no level is due (so a write that throws was not applied). With 'manual' the owner calls
 * `maintenanceStep(budget)` between requests — each call does a bounded amount of flush or
 * compaction work — so an actor can interleave it with serving; writes then never block on I/O.
 */

import { compareKeys } from './bytes.ts';
import type { CompactionJob, JobReport } from './compaction.ts';
import {
  LsmClosedError,
  LsmKeyTooLargeError,
  LsmOptionsError,
  LsmSequenceError,
  LsmValueTooLargeError,
} from './errors.ts';
import { NodeFileSystem } from './file-system.ts';
import { type CompactionStep, LsmTree, type LsmTreeStats } from './lsm-tree.ts';
import type { Memtable } from './memtable.ts';
import { type LsmTreeOptions, resolveTreeOptions } from './options.ts';
import { PlainMemtable } from './plain-memtable.ts';

/** Options of `LsmEngine.open`: the tree's, plus the memtable's. */
export interface LsmEngineOptions extends LsmTreeOptions {
  /** A memtable this full (approximate bytes) is flushed, ≥ 1 KiB (default 4 MiB). */
  readonly memtableBytes?: number;
  /** Makes an empty memtable (default: a `PlainMemtable`; RKV: a `DmoMemtable` in the actor's heap). */
  readonly createMemtable?: () => Memtable;
  /** 'inline' (default): writes flush and compact when due; 'manual': call `maintenanceStep`. */
  readonly maintenance?: 'inline' | 'manual';
}

/** Options of a write. */
export interface WriteOptions {
  /**
   * The write's sequence number: an integer above every earlier one (default: the last + 1) —
   * e.g. the consensus log index of the command, so `flushedSequence` says where replay starts.
   */
  readonly sequence?: number;
}

/**
 * A key range to scan: `start` inclusive, `end` exclusive, at most `limit` pairs, and at most
 * `maxSteps` entries visited (tombstones and shadowed versions the merge skips included).
 */
export interface ScanOptions {
  readonly start?: Uint8Array;
  readonly end?: Uint8Array;
  readonly limit?: number;
  readonly maxSteps?: number;
}

/** Options of `close`. */
export interface CloseOptions {
  /** Flush the memtables first (default true; false leaves unflushed writes to the caller's log). */
  readonly flush?: boolean;
}

/** The engine's shape and counters. */
export interface LsmEngineStats extends LsmTreeStats {
  readonly lastSequence: number;
  readonly memtableEntries: number;
  readonly memtableBytes: number;
  /** Whether a frozen memtable is waiting for (or in) its flush. */
  readonly flushPending: boolean;
}

interface MemtableHandle {
  readonly memtable: Memtable;
  /** Open scans reading it: it is destroyed only when they are done. */
  pins: number;
  retired: boolean;
}

/** A memtable + LSM tree key-value store with a durability contract tied to sequence numbers. */
export class LsmEngine {
  /** The on-disk part (levels, compaction); shared API for RKV's host actors. */
  readonly tree: LsmTree;
  readonly #createMemtable: () => Memtable;
  readonly #memtableBytes: number;
  readonly #inline: boolean;
  readonly #maxKeyBytes: number;
  readonly #maxValueBytes: number;
  #active: MemtableHandle;
  /** A full memtable waiting for or in its flush (reads still see it). */
  #frozen: MemtableHandle | undefined;
  #flushJob: CompactionJob | undefined;
  /** The last sequence number written before the frozen memtable was frozen. */
  #frozenThrough = 0;
  #lastSequence: number;
  #closed = false;

  private constructor(tree: LsmTree, options: LsmEngineOptions, maxKeyBytes: number, maxValueBytes: number) {
    this.tree = tree;
    this.#createMemtable = options.createMemtable ?? (() => new PlainMemtable());
    const memtableBytes = options.memtableBytes ?? 4 << 20;
    if (!Number.isInteger(memtableBytes) || memtableBytes < 1024) {
      throw new LsmOptionsError('memtableBytes', `must be an integer ≥ 1024, got ${memtableBytes}`);
    }
    this.#memtableBytes = memtableBytes;
    const maintenance = options.maintenance ?? 'inline';
    if (maintenance !== 'inline' && maintenance !== 'manual') {
      throw new LsmOptionsError('maintenance', `must be 'inline' or 'manual', got ${String(maintenance)}`);
    }
    this.#inline = maintenance === 'inline';
    this.#maxKeyBytes = maxKeyBytes;
    this.#maxValueBytes = maxValueBytes;
    this.#active = { memtable: this.#createMemtable(), pins: 0, retired: false };
    this.#lastSequence = tree.flushedSequence;
  }

  /** Opens (or creates) a store; see LsmTree.open for what is checked and cleaned. */
  static open(options: LsmEngineOptions): LsmEngine {
    const resolved = resolveTreeOptions(options, options.fileSystem ?? new NodeFileSystem());
    const tree = LsmTree.open({ ...options, fileSystem: resolved.fileSystem });
    try {
      return new LsmEngine(tree, options, resolved.maxKeyBytes, resolved.maxValueBytes);
    } catch (error) {
      tree.close();
      throw error;
    }
  }

  /** The sequence number of the last write (its own, or the flushed state's after open). */
  get lastSequence(): number {
    return this.#lastSequence;
  }

  /** The largest sequence number whose write is durable (see the durability contract). */
  get flushedSequence(): number {
    return this.tree.flushedSequence;
  }

  /** Stores `value` under `key`; returns the write's sequence number. */
  put(key: Uint8Array, value: Uint8Array, options: WriteOptions = {}): number {
    this.#checkOpen();
    this.#checkKey(key);
    if (value.length > this.#maxValueBytes)
      throw new LsmValueTooLargeError(value.length, this.#maxValueBytes);
    const sequence = this.#nextSequence(options);
    this.#beforeWrite();
    this.#active.memtable.put(key, value, sequence);
    this.#lastSequence = sequence;
    return sequence;
  }

  /** Deletes `key` (writes a tombstone); returns the write's sequence number. */
  delete(key: Uint8Array, options: WriteOptions = {}): number {
    this.#checkOpen();
    this.#checkKey(key);
    const sequence = this.#nextSequence(options);
    this.#beforeWrite();
    this.#active.memtable.delete(key, sequence);
    this.#lastSequence = sequence;
    return sequence;
  }

  /** The value under `key`, or undefined (never written, or deleted). */
  get(key: Uint8Array): Uint8Array | undefined {
    this.#checkOpen();
    const fromActive = this.#active.memtable.get(key);
    if (fromActive !== undefined) return fromActive.kind === 'put' ? fromActive.value.slice() : undefined;
    const fromFrozen = this.#frozen?.memtable.get(key);
    if (fromFrozen !== undefined) return fromFrozen.kind === 'put' ? fromFrozen.value.slice() : undefined;
    const fromTables = this.tree.get(key);
    return fromTables?.kind === 'put' ? fromTables.value : undefined;
  }

  /**
   * [key, value] pairs in key order over a range. Writes made while iterating may or may not be
   * seen; flushes and compactions meanwhile do not disturb it. Finish the iteration or `break`
   * out of it (a `for…of` does): an abandoned iterator keeps its tables open. With `maxSteps`, the
   * iteration ends after that many entries visited (a run of tombstones costs its length, though
   * it yields nothing) and returns the first key it did not visit, to scan on from; it returns
   * undefined when it ended for any other reason (the range's end, `limit`).
   */
  *scan(options: ScanOptions = {}): Generator<[Uint8Array, Uint8Array], Uint8Array | undefined, undefined> {
    this.#checkOpen();
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const maxSteps = options.maxSteps ?? Number.POSITIVE_INFINITY;
    if (!(limit > 0)) return undefined;
    const handles = this.#frozen === undefined ? [this.#active] : [this.#active, this.#frozen];
    for (const handle of handles) handle.pins++;
    const cursor = this.tree.cursor(handles.map((handle) => handle.memtable));
    try {
      if (options.start === undefined) cursor.seekToFirst();
      else cursor.seek(options.start);
      const end = options.end;
      let yielded = 0;
      let steps = 0;
      while (cursor.valid) {
        if (end !== undefined && compareKeys(cursor.key, end) >= 0) return undefined;
        if (steps++ >= maxSteps) return cursor.key.slice();
        const entry = cursor.entry();
        if (entry.kind === 'put') {
          yield [entry.key.slice(), entry.value.slice()];
          if (++yielded >= limit) return undefined;
        }
        cursor.next();
      }
      return undefined;
    } finally {
      cursor.close();
      for (const handle of handles) this.#unpin(handle);
    }
  }

  /**
   * Makes every write so far durable: finishes a running flush, then flushes the active memtable.
   * Returns the last flush's report (undefined when there was nothing to flush).
   */
  flush(): JobReport | undefined {
    this.#checkOpen();
    // After an uncertain manifest write, durability means rewriting it first (a no-op otherwise).
    this.tree.recover();
    let report: JobReport | undefined;
    if (this.#frozen !== undefined) report = this.#runFlush();
    if (this.#active.memtable.entryCount > 0) {
      this.#freeze();
      report = this.#runFlush();
    }
    return report;
  }

  /**
   * A bounded piece of background work, for owners that interleave it with serving
   * (`maintenance: 'manual'`): continue or start a flush when the memtable is full, else one step
   * of compaction. 'idle' when nothing is due.
   */
  maintenanceStep(budgetBytes = 1 << 20): CompactionStep {
    this.#checkOpen();
    if (this.#frozen === undefined && this.#active.memtable.approximateBytes >= this.#memtableBytes)
      this.#freeze();
    if (this.#frozen !== undefined) {
      const job = this.#flushJob?.running === true ? this.#flushJob : this.#beginFlush();
      if (job !== undefined) {
        const report = this.#stepFlush(job, budgetBytes);
        return report.done ? { kind: 'done', report } : { kind: 'progress', report };
      }
    }
    return this.tree.compactStep(budgetBytes);
  }

  /** Whether `maintenanceStep` has work to do. */
  get maintenanceDue(): boolean {
    return (
      this.#frozen !== undefined ||
      this.#active.memtable.approximateBytes >= this.#memtableBytes ||
      this.tree.compactionNeeded
    );
  }

  stats(): LsmEngineStats {
    const frozen = this.#frozen?.memtable;
    return {
      ...this.tree.stats(),
      lastSequence: this.#lastSequence,
      memtableEntries: this.#active.memtable.entryCount + (frozen?.entryCount ?? 0),
      memtableBytes: this.#active.memtable.approximateBytes + (frozen?.approximateBytes ?? 0),
      flushPending: frozen !== undefined,
    };
  }

  /** Flushes (unless `flush: false`), closes the tree and frees the memtables. Idempotent. */
  close(options: CloseOptions = {}): void {
    if (this.#closed) return;
    try {
      if (options.flush ?? true) this.flush();
    } finally {
      this.#closed = true;
      this.tree.close();
      this.#flushJob = undefined;
      if (this.#frozen !== undefined) this.#retire(this.#frozen);
      this.#frozen = undefined;
      this.#retire(this.#active);
    }
  }

  // ---- internals ----------------------------------------------------------------------------

  #checkOpen(): void {
    if (this.#closed)
      throw new LsmClosedError(`the store in ${this.tree.directory} is closed: open it again`);
  }

  #checkKey(key: Uint8Array): void {
    if (!(key instanceof Uint8Array)) throw new LsmOptionsError('key', 'must be a Uint8Array');
    if (key.length > this.#maxKeyBytes) throw new LsmKeyTooLargeError(key.length, this.#maxKeyBytes);
  }

  #nextSequence(options: WriteOptions): number {
    const sequence = options.sequence;
    if (sequence === undefined) {
      if (this.#lastSequence >= Number.MAX_SAFE_INTEGER)
        throw new LsmSequenceError('sequence numbers exhausted');
      return this.#lastSequence + 1;
    }
    if (!Number.isSafeInteger(sequence) || sequence <= this.#lastSequence) {
      throw new LsmSequenceError(
        `sequence ${sequence} must be an integer above the last one (${this.#lastSequence}) and below 2^53`,
      );
    }
    return sequence;
  }

  /**
   * Inline maintenance runs before the write is applied, so a write that throws (an I/O error
   * while flushing) was not applied: an error from put/delete always means "not written".
   */
  #beforeWrite(): void {
    if (!this.#inline || this.#active.memtable.approximateBytes < this.#memtableBytes) return;
    this.flush();
    this.tree.compactUntilBalanced();
  }

  /** The active memtable becomes the frozen one; writes go to a fresh memtable. */
  #freeze(): void {
    // Every write so far is in the frozen memtable or already durable: once it is flushed, the
    // store holds everything up to here (even if the memtable's newest entries were tombstones
    // that the flush could drop).
    this.#frozenThrough = this.#lastSequence;
    this.#frozen = this.#active;
    this.#active = { memtable: this.#createMemtable(), pins: 0, retired: false };
  }

  #beginFlush(): CompactionJob | undefined {
    const frozen = this.#frozen!;
    this.#flushJob = undefined;
    // After an uncertain manifest write the tree reloads what the directory holds; if that was
    // this memtable's own flush landing after all, the memtable is durable and needs no rewrite.
    this.tree.recover();
    if (this.tree.flushedSequence >= this.#frozenThrough) {
      this.#flushDone();
      return undefined;
    }
    for (;;) {
      const begun = this.tree.beginFlush(frozen.memtable, { flushedSequence: this.#frozenThrough });
      if (begun.kind === 'busy') {
        // A flush started through `tree` directly: it must commit before ours (memtable order).
        begun.job.run();
        continue;
      }
      if (begun.kind === 'empty') {
        this.#flushDone();
        return undefined;
      }
      this.#flushJob = begun.job;
      return begun.job;
    }
  }

  /** Runs the frozen memtable's flush to the end. */
  #runFlush(): JobReport | undefined {
    // A job the tree aborted (its recovery after an uncertain manifest write does) is begun again.
    const job = this.#flushJob?.running === true ? this.#flushJob : this.#beginFlush();
    if (job === undefined) return undefined;
    const report = this.#stepFlush(job, Number.POSITIVE_INFINITY);
    return report;
  }

  /** One step of the flush; a failed flush is forgotten (the frozen memtable stays, to retry). */
  #stepFlush(job: CompactionJob, budgetBytes: number): JobReport {
    let report: JobReport;
    try {
      report = budgetBytes === Number.POSITIVE_INFINITY ? job.run() : job.step(budgetBytes);
    } catch (error) {
      this.#flushJob = undefined;
      throw error;
    }
    if (report.done) this.#flushDone();
    return report;
  }

  #flushDone(): void {
    this.#flushJob = undefined;
    if (this.#frozen !== undefined) this.#retire(this.#frozen);
    this.#frozen = undefined;
  }

  #retire(handle: MemtableHandle): void {
    handle.retired = true;
    if (handle.pins === 0) handle.memtable.destroy();
  }

  #unpin(handle: MemtableHandle): void {
    handle.pins--;
    if (handle.retired && handle.pins === 0) handle.memtable.destroy();
  }
}
