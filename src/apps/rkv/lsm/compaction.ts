/**
 * Compaction jobs: minor compaction (a memtable becomes a level-0 table — in iPipe §5's RKV "the
 * memtable object migrates to the host" and the compaction actor writes it out) and leveled major
 * compaction (level L tables merged into level L+1). Both are `CompactionJob`s that run in steps,
 * so the actor that drives one can serve requests between steps.
 *
 * A job's life:
 *
 *   step(budget) … step(budget)          merge input entries into output tables, roughly `budget`
 *        │                               bytes of entries per step; each output is written to
 *        │                               <n>.sst.tmp, fsynced and renamed once full
 *        ▼  (inputs exhausted)
 *   commit                               sync the directory, open the outputs again (checks
 *                                        them), write the new manifest (temp, fsync, rename,
 *                                        fsync dir), swap the in-memory version, delete inputs
 *
 * Until commit nothing a reader sees changes; a crash anywhere before the manifest's rename leaves
 * the old store plus orphan files that the next open deletes. A failed job removes its outputs and
 * changes nothing, so it can simply be retried.
 *
 * Tombstones: a tombstone is written out unless no older version of its key can exist below the
 * output level — no table in a deeper level (or, for a flush, any table at all) has a key range
 * that contains the key. At the last level that always holds, so every tombstone reaching the
 * last level is dropped; above it, one is dropped early only when it provably hides nothing.
 */

import { compareKeys } from './bytes.ts';
import type { EntryCursor } from './cursor.ts';
import { LsmClosedError } from './errors.ts';
import type { TableInfo } from './table-format.ts';
import type { ReadCounters, TableReader } from './table-reader.ts';
import type { TableWriter } from './table-writer.ts';

/** What a job does: flush a memtable, merge tables, or move a table down a level by manifest edit. */
export type JobKind = 'flush' | 'compaction' | 'move';

/** A job's progress so far (and its totals once `done`). */
export interface JobReport {
  readonly kind: JobKind;
  /** The level the inputs came from (−1 for a flush: the memtable). */
  readonly inputLevel: number;
  readonly outputLevel: number;
  /** File numbers of the input tables (empty for a flush). */
  readonly inputTables: readonly number[];
  /** File numbers of the output tables written so far. */
  readonly outputTables: readonly number[];
  /** Bytes of input table blocks read from files. */
  readonly bytesRead: number;
  /** Bytes of output tables written (complete tables, metadata included). */
  readonly bytesWritten: number;
  /** Bytes of the manifest written at commit. */
  readonly manifestBytesWritten: number;
  /** Entries taken from the inputs after merging (one per key). */
  readonly entriesIn: number;
  readonly entriesOut: number;
  readonly tombstonesDropped: number;
  readonly done: boolean;
}

/** What a job needs from the tree that runs it. */
export interface JobHost {
  /** Size at which an output table is closed and the next one begun. */
  targetTableBytes(): number;
  /** A writer for a fresh table file (allocates its number). */
  newTableWriter(): TableWriter;
  /** Makes the job's outputs part of the store (see the header); returns manifest bytes written. */
  commit(job: CompactionJob, outputs: readonly TableInfo[]): number;
  /** The job ended (committed, failed or aborted): it is no longer the tree's running job. */
  ended(job: CompactionJob): void;
}

/**
 * Decides whether a tombstone may be dropped: true when no table of `runs` (each a list of tables
 * with disjoint ranges, in key order) has a key range containing the key. Keys must be asked in
 * increasing order (a merge's order), which lets each run keep a moving position.
 */
export class TombstoneDropper {
  readonly #runs: readonly (readonly TableInfo[])[];
  readonly #positions: number[];

  constructor(runs: readonly (readonly TableInfo[])[]) {
    this.#runs = runs.filter((run) => run.length > 0);
    this.#positions = this.#runs.map(() => 0);
  }

  canDrop(key: Uint8Array): boolean {
    for (let r = 0; r < this.#runs.length; r++) {
      const run = this.#runs[r]!;
      let position = this.#positions[r]!;
      while (position < run.length && compareKeys(run[position]!.largestKey, key) < 0) position++;
      this.#positions[r] = position;
      const table = run[position];
      if (table !== undefined && compareKeys(table.smallestKey, key) <= 0) return false;
    }
    return true;
  }
}

/** A flush or compaction in progress; drive it with `step` until the report says `done`. */
export class CompactionJob {
  readonly kind: JobKind;
  readonly inputLevel: number;
  readonly outputLevel: number;
  readonly inputs: readonly TableReader[];
  /** For a flush: the sequence the manifest's flushedSequence becomes at least. */
  flushedSequence = 0;
  readonly #host: JobHost;
  readonly #cursor: EntryCursor | undefined;
  readonly #counters: ReadCounters = { bytesRead: 0, blocksRead: 0 };
  readonly #dropper: TombstoneDropper | undefined;
  #writer: TableWriter | undefined;
  readonly #outputs: TableInfo[] = [];
  #started = false;
  #state: 'running' | 'done' | 'failed' = 'running';
  #bytesWritten = 0;
  #manifestBytes = 0;
  #entriesIn = 0;
  #entriesOut = 0;
  #tombstonesDropped = 0;

  constructor(
    host: JobHost,
    kind: JobKind,
    inputLevel: number,
    outputLevel: number,
    inputs: readonly TableReader[],
    makeCursor: ((counters: ReadCounters) => EntryCursor) | undefined,
    dropper: TombstoneDropper | undefined,
  ) {
    this.#host = host;
    this.kind = kind;
    this.inputLevel = inputLevel;
    this.outputLevel = outputLevel;
    this.inputs = inputs;
    this.#cursor = makeCursor?.(this.#counters);
    this.#dropper = dropper;
  }

  /** Committed: its outputs are part of the store. */
  get done(): boolean {
    return this.#state === 'done';
  }

  /** Neither committed nor ended by a failure or `abort`: `step` may be called. */
  get running(): boolean {
    return this.#state === 'running';
  }

  /**
   * Merges about `budgetBytes` bytes of entries (keys + values), and commits once the inputs are
   * exhausted. Returns the progress so far. A thrown error ends the job (outputs removed, nothing
   * changed) and is passed on.
   */
  step(budgetBytes = 1 << 20): JobReport {
    if (this.#state !== 'running') {
      if (this.#state === 'done') return this.report();
      throw new LsmClosedError('this compaction job failed or was aborted: start a new one');
    }
    try {
      const cursor = this.#cursor;
      if (cursor !== undefined) {
        if (!this.#started) {
          this.#started = true;
          cursor.seekToFirst();
        }
        let budget = budgetBytes;
        while (cursor.valid && budget > 0) {
          // Borrowed: the writer copies what it keeps before the cursor moves.
          const entry = cursor.borrowEntry();
          this.#entriesIn++;
          if (entry.sequence > this.flushedSequence && this.kind === 'flush')
            this.flushedSequence = entry.sequence;
          budget -= entry.key.length + (entry.kind === 'put' ? entry.value.length : 0) + 8;
          if (entry.kind === 'tombstone' && this.#dropper?.canDrop(entry.key) === true) {
            this.#tombstonesDropped++;
          } else {
            if (this.#writer === undefined) this.#writer = this.#host.newTableWriter();
            this.#writer.add(entry);
            this.#entriesOut++;
            if (this.#writer.estimatedBytes >= this.#host.targetTableBytes()) this.#finishOutput();
          }
          cursor.next();
        }
        if (cursor.valid) return this.report();
        if (this.#writer !== undefined) this.#finishOutput();
        cursor.close();
      }
      this.#manifestBytes = this.#host.commit(this, this.#outputs);
      this.#state = 'done';
      this.#host.ended(this);
      return this.report();
    } catch (error) {
      this.abort();
      throw error;
    }
  }

  /** Steps until done. */
  run(budgetBytes = 4 << 20): JobReport {
    let report = this.step(budgetBytes);
    while (!report.done) report = this.step(budgetBytes);
    return report;
  }

  /** Stops the job: removes its output files; the store is unchanged. */
  abort(): void {
    if (this.#state !== 'running') return;
    this.#state = 'failed';
    const writer = this.#writer;
    this.#writer = undefined;
    try {
      writer?.abandon();
    } finally {
      try {
        this.#cursor?.close();
      } catch {
        // Closing cursors only drops references; nothing to undo.
      }
      this.#host.ended(this);
    }
  }

  /** Paths of the finished (renamed, not yet committed) outputs, for clean-up after a failure. */
  get uncommittedOutputs(): readonly TableInfo[] {
    return this.#state === 'done' ? [] : this.#outputs;
  }

  report(): JobReport {
    return {
      kind: this.kind,
      inputLevel: this.inputLevel,
      outputLevel: this.outputLevel,
      inputTables: this.inputs.map((table) => table.fileNumber),
      outputTables: this.#outputs.map((table) => table.fileNumber),
      bytesRead: this.#counters.bytesRead,
      bytesWritten: this.#bytesWritten,
      manifestBytesWritten: this.#manifestBytes,
      entriesIn: this.#entriesIn,
      entriesOut: this.#entriesOut,
      tombstonesDropped: this.#tombstonesDropped,
      done: this.#state === 'done',
    };
  }

  #finishOutput(): void {
    const writer = this.#writer!;
    this.#writer = undefined;
    try {
      const info = writer.finish();
      this.#outputs.push(info);
      this.#bytesWritten += info.sizeBytes;
    } catch (error) {
      writer.abandon();
      throw error;
    }
  }
}
