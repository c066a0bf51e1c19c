/**
 * Files under RKV's actors on live nodes: the simulator models a replica's host disk with two JS
 * objects — `SimLog`, the consensus actor's durable log (sim-log.ts), and `SimDisk`, the SSTables
 * the compaction actor writes (sim-disk.ts). Live, the same objects keep the same contents, and
 * every change to them is first appended to a journal file and fsynced: the log actor's "write,
 * fsync, then forward" holds because the write returns only once the record is on disk.
 *
 *   FileLog   journal of write(promised, entries) / truncate(through) / stage(chunk) calls; a
 *             truncation that leaves the journal ≥ 4× the state it holds rewrites it as an image
 *             (install the snapshot at the truncation point, then write the entries above it)
 *   FileDisk  journal of level-0 runs and compactions; a compaction rewrites it as one run holding
 *             level 1
 *
 * Opening replays the journal through the same methods, so a reopened object equals the one that
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
import { encodeRun, SimDisk } from '../actors/sim-disk.ts';
import { type DurableEntry, SimLog, type SnapshotChunk } from '../actors/sim-log.ts';
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

type DiskRecord = { readonly op: 'level0'; readonly run: Uint8Array } | { readonly op: 'compact' };

/** A `SimDisk` whose level-0 tables and compactions are journaled and fsynced first (see the header). */
export class FileDisk extends SimDisk {
  readonly #journal: JournalFile;
  #replaying = true;

  private constructor(journal: JournalFile) {
    super({ baseKeys: 0, valueBytes: 0 });
    this.#journal = journal;
  }

  static open(path: string): FileDisk {
    const { journal, records } = JournalFile.open(path);
    const disk = new FileDisk(journal);
    for (const payload of records) {
      const record = fromPayload(path, payload) as DiskRecord;
      if (record.op === 'level0') disk.writeLevel0(record.run);
      else if (record.op === 'compact') disk.compactLevel0();
      else throw new ClusterStorageError(path, `unknown record ${JSON.stringify(record).slice(0, 80)}`);
    }
    disk.#replaying = false;
    return disk;
  }

  override writeLevel0(run: Uint8Array): number {
    if (!this.#replaying) this.#journal.append(toPayload({ op: 'level0', run }));
    return super.writeLevel0(run);
  }

  override compactLevel0(): number {
    const merged = super.compactLevel0();
    // Level 0 is empty now: the journal becomes level 1, written as one run and compacted.
    if (!this.#replaying) {
      this.#journal.replace([
        toPayload({ op: 'level0', run: encodeRun(this.levelOne()) }),
        toPayload({ op: 'compact' }),
      ]);
    }
    return merged;
  }
}
