/**
 * Files under RKV's actors on live nodes: the simulator models a replica's host disk with two JS
 * objects — `SimLog`, the consensus actor's durable log (sim-log.ts), and `SimDisk`, the SSTables
 * the compaction actor writes (sim-disk.ts). Live, the log keeps the same contents with every
 * change first appended to a journal file and fsynced (the log actor's "write, fsync, then
 * forward" holds because the write returns only once the record is on disk), and the disk is the
 * real LSM engine the process-per-replica cluster uses.
 *
 *   FileLog   journal of write(promised, entries) / truncate(through) / stage(chunk) calls; a
 *             truncation that leaves the journal ≥ 4× the state it holds rewrites it as an image
 *             (install the snapshot at the truncation point, then write the entries above it)
 *   LsmDisk   not a journal: the real LSM engine (SSTables with index blocks, Bloom filters and
 *             checksums, leveled compaction) in a directory, each flushed run written and synced
 *
 * Opening replays the log's journal through the same methods, so a reopened log equals the one that
 * wrote it. Records are [u32 length][u32 CRC-32C][payload]: a record cut short at the end of the
 * file is the unsynced tail of a crash and is dropped (the file is cut back); a whole record whose
 * CRC does not match is corruption and refuses the open with the file's name — never serve state
 * from a damaged log. Payloads are JSON (bytes as base64): these files are small and readable,
 * not fast. One writer per file: the node's host core that runs the actor (one per node).
 */

import {
  closeSync,
  existsSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { crc32c } from '../../../dmo/crc32c.ts';
import { type DiskLookup, decodeRun, SimDisk } from '../actors/sim-disk.ts';
import { type DurableEntry, SimLog, type SnapshotChunk } from '../actors/sim-log.ts';
import { LsmEngine } from '../lsm/lsm-engine.ts';
import { ClusterStorageError } from './errors.ts';

const HEADER_BYTES = 8;

/** An append-only file of checksummed records (see the header). */
class JournalFile {
  readonly path: string;
  #fd: number;
  #bytes: number;

  private constructor(path: string, fd: number, bytes: number) {
    this.path = path;
    this.#fd = fd;
    this.#bytes = bytes;
  }

  /** Opens (creating) the journal; returns it with the payloads of its whole records. */
  static open(path: string): { journal: JournalFile; records: Uint8Array[] } {
    mkdirSync(dirname(path), { recursive: true });
    const content = existsSync(path) ? new Uint8Array(readFileSync(path)) : new Uint8Array(0);
    const view = new DataView(content.buffer, content.byteOffset, content.byteLength);
    const records: Uint8Array[] = [];
    let at = 0;
    while (at + HEADER_BYTES <= content.length) {
      const length = view.getUint32(at, true);
      if (at + HEADER_BYTES + length > content.length) break; // torn tail
      const payload = content.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
      if (crc32c(payload) !== view.getUint32(at + 4, true)) {
        throw new ClusterStorageError(
          path,
          `record at byte ${at} fails its CRC-32C check: the file is damaged`,
        );
      }
      records.push(payload);
      at += HEADER_BYTES + length;
    }
    const fd = JournalFile.#openFd(path, 'a');
    if (at < content.length) {
      // The unsynced tail of a crash: cut it so the next record starts on a boundary.
      ftruncateSync(fd, at);
      fsyncSync(fd);
    }
    return { journal: new JournalFile(path, fd, at), records };
  }

  static #openFd(path: string, flags: string): number {
    try {
      return openSync(path, flags);
    } catch (error) {
      throw new ClusterStorageError(path, `cannot open it (${(error as Error).message})`, { cause: error });
    }
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Appends one record and fsyncs: durable when this returns. */
  append(payload: Uint8Array): void {
    const record = frame(payload);
    try {
      writeSync(this.#fd, record);
      fsyncSync(this.#fd);
    } catch (error) {
      throw new ClusterStorageError(this.path, `cannot append (${(error as Error).message})`, {
        cause: error,
      });
    }
    this.#bytes += record.length;
  }

  /** Replaces the whole journal with `payloads`, atomically and durably (temp file, fsync, rename). */
  replace(payloads: readonly Uint8Array[]): void {
    const temporary = `${this.path}.tmp`;
    try {
      const fd = openSync(temporary, 'w');
      let bytes = 0;
      for (const payload of payloads) {
        const record = frame(payload);
        writeSync(fd, record);
        bytes += record.length;
      }
      fsyncSync(fd);
      closeSync(fd);
      renameSync(temporary, this.path);
      const directory = openSync(dirname(this.path), 'r');
      fsyncSync(directory);
      closeSync(directory);
      closeSync(this.#fd);
      this.#fd = openSync(this.path, 'a');
      this.#bytes = bytes;
    } catch (error) {
      throw new ClusterStorageError(this.path, `cannot rewrite (${(error as Error).message})`, {
        cause: error,
      });
    }
  }
}

function frame(payload: Uint8Array): Uint8Array {
  const record = new Uint8Array(HEADER_BYTES + payload.length);
  const view = new DataView(record.buffer);
  view.setUint32(0, payload.length, true);
  view.setUint32(4, crc32c(payload), true);
  record.set(payload, HEADER_BYTES);
  return record;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON with byte arrays as `{ "$b": base64 }`. */
function toPayload(value: unknown): Uint8Array {
  return encoder.encode(
    JSON.stringify(value, (_key, v: unknown) =>
      v instanceof Uint8Array
        ? { $b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }
        : v,
    ),
  );
}

function fromPayload(path: string, payload: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(payload), (_key, v: unknown) =>
      typeof v === 'object' && v !== null && typeof (v as { $b?: unknown }).$b === 'string'
        ? new Uint8Array(Buffer.from((v as { $b: string }).$b, 'base64'))
        : v,
    );
  } catch (error) {
    throw new ClusterStorageError(path, `a record does not decode (${(error as Error).message})`, {
      cause: error,
    });
  }
}

type LogRecord =
  | { readonly op: 'write'; readonly promised: number; readonly entries: readonly DurableEntry[] }
  | { readonly op: 'truncate'; readonly through: number }
  | {
      readonly op: 'stage';
      readonly slot: number;
      readonly chunk: number;
      readonly chunks: number;
      readonly content: SnapshotChunk;
    };

/** Rewrite the log's journal when it is this many times the size of the state it holds. */
const LOG_REWRITE_FACTOR = 4;
/** …and at least this big. */
const LOG_REWRITE_MIN_BYTES = 1 << 20;

/** A `SimLog` whose every change is journaled and fsynced first (see the header). */
export class FileLog extends SimLog {
  readonly #journal: JournalFile;
  #replaying = true;

  private constructor(journal: JournalFile) {
    super();
    this.#journal = journal;
  }

  /** Opens the log at `path`, replaying its journal. ClusterStorageError if it is damaged. */
  static open(path: string): FileLog {
    const { journal, records } = JournalFile.open(path);
    const log = new FileLog(journal);
    for (const payload of records) log.#apply(path, fromPayload(path, payload) as LogRecord);
    log.#replaying = false;
    return log;
  }

  get journalBytes(): number {
    return this.#journal.bytes;
  }

  override write(promised: number, entries: readonly DurableEntry[]): void {
    this.#record({ op: 'write', promised, entries });
    super.write(promised, entries);
  }

  override truncate(through: number): number {
    this.#record({ op: 'truncate', through });
    const truncated = super.truncate(through);
    this.#maybeRewrite();
    return truncated;
  }

  override stage(
    slot: number,
    chunk: number,
    chunks: number,
    content: SnapshotChunk,
  ): { readonly items: number; readonly sessions: number } | undefined {
    this.#record({ op: 'stage', slot, chunk, chunks, content });
    return super.stage(slot, chunk, chunks, content);
  }

  #record(record: LogRecord): void {
    if (!this.#replaying) this.#journal.append(toPayload(record));
  }

  #apply(path: string, record: LogRecord): void {
    switch (record.op) {
      case 'write':
        super.write(record.promised, record.entries);
        return;
      case 'truncate':
        super.truncate(record.through);
        return;
      case 'stage':
        super.stage(record.slot, record.chunk, record.chunks, record.content);
        return;
      default:
        throw new ClusterStorageError(path, `unknown record ${JSON.stringify(record).slice(0, 80)}`);
    }
  }

  /**
   * The journal as the few records that rebuild today's state: the snapshot installed at the
   * truncation point, then the promise and the entries above it. A transfer being staged is left
   * out — after a crash it is fetched again, as after a crash mid-transfer.
   */
  #maybeRewrite(): void {
    const state = this.read();
    const stateBytes = toPayload(state).length;
    if (this.#journal.bytes < Math.max(LOG_REWRITE_MIN_BYTES, LOG_REWRITE_FACTOR * stateBytes)) return;
    const records: LogRecord[] = [];
    if (state.truncated > 0) {
      records.push({
        op: 'stage',
        slot: state.truncated,
        chunk: 0,
        chunks: 1,
        content: { items: state.snapshot, sessions: state.sessions },
      });
    }
    records.push({ op: 'write', promised: state.promised, entries: state.entries });
    this.#journal.replace(records.map(toPayload));
  }
}

/**
 * A `SimDisk` that is the real LSM engine (src/apps/rkv/lsm) over a directory: each flushed
 * memtable run is written as checksummed SSTables (index block, Bloom filter) and made durable
 * before `writeLevel0` returns; `compactLevel0` runs the engine's leveled compaction (levels
 * growing by its size ratio) until nothing is due. Lookups read the
 * engine in LSM order. The engine's directory lock keeps a second process off the files.
 */
export class LsmDisk extends SimDisk {
  readonly #engine: LsmEngine;

  private constructor(engine: LsmEngine) {
    super({ baseKeys: 0, valueBytes: 0 });
    this.#engine = engine;
  }

  /** Opens (or creates) the store in `directory`; LSM errors name the file at fault. */
  static open(directory: string): LsmDisk {
    mkdirSync(directory, { recursive: true });
    // A run is flushed whole by writeLevel0, never by the memtable filling up.
    return new LsmDisk(LsmEngine.open({ directory, createIfMissing: true, memtableBytes: 1 << 30 }));
  }

  override get level0Tables(): number {
    return this.#engine.stats().levels[0]?.tableCount ?? 0;
  }

  override writeLevel0(run: Uint8Array): number {
    const entries = decodeRun(run);
    for (const { key, value } of entries) this.#engine.put(key, value);
    this.#engine.flush();
    return entries.length;
  }

  /**
   * Runs the engine's leveled compaction until nothing is due (level 0 into level 1, and on down
   * the levels as they fill); returns the compaction steps taken. The compaction actor calls it
   * once level 0 holds its trigger's worth of tables.
   */
  override compactLevel0(): number {
    let steps = 0;
    while (this.#engine.tree.compactionNeeded && this.#engine.maintenanceStep().kind !== 'idle') steps++;
    return steps;
  }

  override lookup(key: Uint8Array): DiskLookup {
    const value = this.#engine.get(key);
    return value === undefined ? { value: undefined, from: 'none' } : { value, from: 'level-1' };
  }

  /** Closes the engine (its lock released). */
  close(): void {
    this.#engine.close();
  }
}
