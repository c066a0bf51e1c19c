/**
 * The replicated state machine of one RKV shard on the live cluster: the shard's Multi-Paxos log
 * drives an `LsmEngine` (paper, "The applications": the consensus actor hands each committed entry
 * to the memtable; SSTables on the host hold the rest). The log is the write-ahead log — the LSM
 * engine has none (lsm-engine.ts, durability contract) — so the two are tied by one number:
 *
 *   apply index  = how many commands `apply` has been called with since the store was empty.
 *                  The sequence of `apply` calls is a function of the chosen log (no-ops and
 *                  session duplicates never reach the state machine), so the index is the same on
 *                  every replica at the same slot.
 *   LSM sequence = apply index · K (+ the key's position, for a multi-key DEL). After a crash the
 *                  engine holds exactly the writes with sequence ≤ `flushedSequence` (its
 *                  contract). The engine runs with manual maintenance and the host calls
 *                  `maintenanceStep` only between commands, so a memtable is never frozen in the
 *                  middle of a command: `flushedSequence / K` is the last whole command flushed.
 *
 * Restart (`restore` from the local Paxos snapshot, or no snapshot at all): the engine holds the
 * state at some index F (= flushedSequence / K), the replica restarts its log at the snapshot's index A ≤ F (a snapshot
 * flushes the engine first, so F ≥ A) and re-applies A+1, A+2, … as the leader re-teaches them.
 * Commands with index ≤ F are *replayed*: their writes are already in the engine and are skipped.
 *
 *      apply index:   1 … A ───────────── F ─────────── now
 *                     └ snapshot (log    └ engine holds   └ writes again
 *                       truncated here)    these writes
 *
 * Snapshot transfer (a follower too far behind, `restore` with a peer's bytes): the bytes carry
 * A, the index C the dumped content is at (C ≥ A: a snapshot taken while replaying dumps the
 * engine's newer content), and every key/value. A receiver whose own content is at C or beyond
 * keeps its engine; otherwise it empties its directory and loads the dump with sequences
 * C·K−n+1 … C·K (n ≤ C: every live key was written by a distinct command), and replays up to C.
 * Re-applying a suffix of the command sequence, in order, on top of a state that already
 * includes it ends in the same state, so replay only ever gives wrong *intermediate* answers.
 *
 * Known limit of replay: a command replayed over newer content computes its result against that
 * content (GET may see a later value, SET NX/DEL may report differently). The result reaches no
 * client directly (only the leader replies, and a leader has caught up), but it is cached in the
 * replicated session table, so a client that retries that very command against this replica after
 * a fail-over could get it. docs/apps/rkv-cluster.md discusses it.
 */

import { rmSync } from 'node:fs';
import { LsmEngine, type LsmEngineOptions } from '../lsm/index.ts';
import { ByteReader, ByteWriter } from '../paxos/bytes.ts';
import type { ReplicatedStateMachine } from '../paxos/state-machine.ts';
import type { ClusterCommand, ClusterResult } from './commands.ts';

const SNAPSHOT_MAGIC = 0x524b5653; // "RKVS"

/**
 * LSM sequence numbers per apply index: command i writes with sequences i·K … i·K + K − 1 (a DEL
 * writes one tombstone per key), so `flushedSequence / K` is an apply index. Commands carry at
 * most K keys (the cluster backend splits longer DELs); 2^53 / K still leaves 2^43 commands.
 */
export const SEQUENCES_PER_COMMAND = 1024;
/** The most keys one multi-key command may carry. */
export const MAX_KEYS_PER_COMMAND = SEQUENCES_PER_COMMAND;

/** Options of `LsmKvStateMachine.open`. */
export interface LsmKvStateMachineOptions {
  /** The shard's LSM directory (created when missing; locked while open). */
  readonly directory: string;
  /** Passed to `LsmEngine.open` (memtable size, block cache…). */
  readonly engine?: Omit<LsmEngineOptions, 'directory'>;
}

/** Counters for INFO. */
export interface LsmKvStateMachineStats {
  readonly applyIndex: number;
  /** Commands up to this index are replays over content the engine already holds. */
  readonly replayThrough: number;
  readonly keys: number;
  readonly flushedSequence: number;
  readonly snapshotLoads: number;
}

/** A shard's LSM store as a Paxos state machine (see the header for the index bookkeeping). */
export class LsmKvStateMachine implements ReplicatedStateMachine<ClusterCommand, ClusterResult> {
  readonly #directory: string;
  readonly #engineOptions: Omit<LsmEngineOptions, 'directory'>;
  #engine: LsmEngine;
  #applyIndex = 0;
  #replayThrough: number;
  #keys: number;
  #snapshotLoads = 0;

  private constructor(directory: string, engineOptions: Omit<LsmEngineOptions, 'directory'>) {
    this.#directory = directory;
    this.#engineOptions = engineOptions;
    this.#engine = LsmEngine.open({ ...engineOptions, directory, maintenance: 'manual' });
    this.#replayThrough = Math.floor(this.#engine.flushedSequence / SEQUENCES_PER_COMMAND);
    this.#keys = this.#countKeys();
  }

  /** Opens (or creates) the shard's store; throws `LsmDirectoryLockedError` when it is in use. */
  static open(options: LsmKvStateMachineOptions): LsmKvStateMachine {
    return new LsmKvStateMachine(options.directory, options.engine ?? {});
  }

  get engine(): LsmEngine {
    return this.#engine;
  }

  stats(): LsmKvStateMachineStats {
    return {
      applyIndex: this.#applyIndex,
      replayThrough: this.#replayThrough,
      keys: this.#keys,
      flushedSequence: this.#engine.flushedSequence,
      snapshotLoads: this.#snapshotLoads,
    };
  }

  apply(command: ClusterCommand): ClusterResult {
    const index = ++this.#applyIndex;
    const write = index > this.#replayThrough;
    const engine = this.#engine;
    switch (command.op) {
      case 'get':
        return { op: 'value', value: engine.get(command.key) ?? null };
      case 'mget':
        return { op: 'values', values: command.keys.map((key) => engine.get(key) ?? null) };
      case 'exists': {
        let count = 0;
        for (const key of command.keys) if (engine.get(key) !== undefined) count++;
        return { op: 'count', count };
      }
      case 'dbsize':
        return { op: 'count', count: this.#keys };
      case 'set': {
        const existed = engine.get(command.key) !== undefined;
        if (command.condition !== 'always' && existed !== (command.condition === 'if-present')) {
          return { op: 'written', written: false };
        }
        if (write) {
          engine.put(command.key, command.value, { sequence: index * SEQUENCES_PER_COMMAND });
          if (!existed) this.#keys++;
        }
        return { op: 'written', written: true };
      }
      case 'del': {
        // Deduplicate: a key named twice counts once, and one tombstone is enough.
        const seen = new Set<string>();
        const present: Uint8Array[] = [];
        for (const key of command.keys) {
          const name = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
          if (seen.has(name)) continue;
          seen.add(name);
          if (engine.get(key) !== undefined) present.push(key);
        }
        if (write) {
          let sequence = index * SEQUENCES_PER_COMMAND;
          for (const key of present) engine.delete(key, { sequence: sequence++ });
          this.#keys -= present.length;
        }
        return { op: 'count', count: present.length };
      }
    }
  }

  /** The state as bytes: the engine is flushed first, so a restart never needs the dump. */
  snapshot(): Uint8Array {
    this.#engine.flush();
    const contentIndex = Math.max(this.#applyIndex, this.#replayThrough);
    const pairs: [Uint8Array, Uint8Array][] = [...this.#engine.scan()];
    // The counter follows the engine's own answers; resynchronise it should it ever drift.
    this.#keys = pairs.length;
    const writer = new ByteWriter(1024);
    writer.u32(SNAPSHOT_MAGIC).f64(this.#applyIndex).f64(contentIndex).f64(pairs.length);
    for (const [key, value] of pairs) writer.bytes(key).bytes(value);
    return writer.finish();
  }

  restore(snapshot: Uint8Array): void {
    const reader = new ByteReader(snapshot);
    const magic = reader.u32();
    if (magic !== SNAPSHOT_MAGIC) throw new RangeError(`not an RKV shard snapshot (magic ${magic})`);
    const applyIndex = reader.count();
    const contentIndex = reader.count();
    const keyCount = reader.count();
    const ownContent = Math.max(
      this.#applyIndex,
      this.#replayThrough,
      Math.floor(this.#engine.lastSequence / SEQUENCES_PER_COMMAND),
    );
    if (ownContent < contentIndex) {
      // Behind the snapshot: replace the whole store with the dump.
      this.#engine.close({ flush: false });
      rmSync(this.#directory, { recursive: true, force: true });
      this.#engine = LsmEngine.open({
        ...this.#engineOptions,
        directory: this.#directory,
        maintenance: 'manual',
      });
      // Sequences (C·K − n, C·K]: above every earlier command's, and C's own (n ≤ C ≤ C·K).
      let sequence = contentIndex * SEQUENCES_PER_COMMAND - keyCount;
      for (let index = 0; index < keyCount; index++) {
        const key = reader.bytes();
        const value = reader.bytes();
        this.#engine.put(key, value, { sequence: ++sequence });
      }
      this.#engine.flush();
      this.#keys = keyCount;
      this.#replayThrough = contentIndex;
      this.#snapshotLoads++;
    } else {
      this.#replayThrough = ownContent;
    }
    this.#applyIndex = applyIndex;
  }

  /**
   * A bounded piece of flush/compaction work, for the host to call between commands (never inside
   * `apply`: see the header). Returns whether more is due.
   */
  maintenanceStep(budgetBytes = 1 << 20): boolean {
    if (!this.#engine.maintenanceDue) return false;
    this.#engine.maintenanceStep(budgetBytes);
    return this.#engine.maintenanceDue;
  }

  /** Flushes (unless told not to) and closes the engine, releasing the directory's lock. */
  close(options: { readonly flush?: boolean } = {}): void {
    this.#engine.close({ flush: options.flush ?? true });
  }

  #countKeys(): number {
    let count = 0;
    for (const _ of this.#engine.scan()) count++;
    return count;
  }
}
