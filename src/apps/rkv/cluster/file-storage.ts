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
 * wrote it. Records are [u32 length][u32 CRC-32C of the length][u32 CRC-32C of the payload]
 * [payload]: a last record that is incomplete is the unsynced tail of a crash and is cut off
 * (`scanJournal` says exactly when); any other record that does not check out is damage and
 * refuses the open with the file's name — never serve state from a damaged log. Payloads are JSON (bytes as base64): these files are small and readable,
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
import { type DiskLookup, decodeRun, diskKeyName, SimDisk } from '../actors/sim-disk.ts';
import { type DurableEntry, SimLog, type SnapshotChunk } from '../actors/sim-log.ts';
import type { LsmFileSystem } from '../lsm/file-system.ts';
import { LsmEngine } from '../lsm/lsm-engine.ts';
import { ClusterStorageError } from './errors.ts';

/** [u32 length][u32 CRC-32C of the length][u32 CRC-32C of the payload], then the payload. */
const HEADER_BYTES = 12;
/** No record is larger: a length beyond it is damage, not a record. */
const MAX_RECORD_BYTES = 256 << 20;

/** What scanning a journal's bytes found: the whole records, and where the good part ends. */
interface Scan {
  readonly records: Uint8Array[];
  /** Bytes up to the end of the last whole record. */
  readonly end: number;
}

/**
 * Splits a journal into records. Every record is fsynced before the next is written, so only the
 * LAST one can be incomplete after a crash: a header cut short, an all-zero remainder (the file
 * grew but its data never reached the disk), or a last record whose payload runs past the end or
 * fails its checksum are a torn tail, cut off. Anything else that does not check out — a header
 * whose own checksum fails, a bad record followed by more bytes — is damage, and refuses the open.
 */
function scanJournal(path: string, content: Uint8Array): Scan {
  const view = new DataView(content.buffer, content.byteOffset, content.byteLength);
  const records: Uint8Array[] = [];
  let at = 0;
  const damaged = (why: string): never => {
    throw new ClusterStorageError(path, `the record at byte ${at} ${why}: the file is damaged`);
  };
  while (at < content.length) {
    const rest = content.subarray(at);
    if (rest.length < HEADER_BYTES || rest.every((byte) => byte === 0)) break; // torn tail
    const length = view.getUint32(at, true);
    if (crc32c(content, at, at + 4) !== view.getUint32(at + 4, true)) damaged('fails its header checksum');
    if (length > MAX_RECORD_BYTES) damaged(`claims ${length} bytes`);
    const end = at + HEADER_BYTES + length;
    if (end > content.length) break; // torn tail: the header reached the disk, not all the payload
    const payload = content.subarray(at + HEADER_BYTES, end);
    if (crc32c(payload) !== view.getUint32(at + 8, true)) {
      if (end === content.length) break; // the last record, written only in part
      damaged('fails its payload checksum');
    }
    records.push(payload);
    at = end;
  }
  return { records, end: at };
}

/** An append-only file of checksummed records (see the header). */
class JournalFile {
  readonly path: string;
  #fd: number;
  #bytes: number;
  /** Set when a rewrite failed half-way: the file descriptor may name an unlinked file. */
  #broken: Error | undefined;

  private constructor(path: string, fd: number, bytes: number) {
    this.path = path;
    this.#fd = fd;
    this.#bytes = bytes;
  }

  /** Opens (creating) the journal; returns it with the payloads of its whole records. */
  static open(path: string): { journal: JournalFile; records: Uint8Array[] } {
    const created = !existsSync(path);
    mkdirSync(dirname(path), { recursive: true });
    const content = created ? new Uint8Array(0) : new Uint8Array(readFileSync(path));
    const { records, end } = scanJournal(path, content);
    const fd = JournalFile.#openFd(path, 'a');
    if (end < content.length) {
      // The unsynced tail of a crash: cut it so the next record starts on a boundary.
      ftruncateSync(fd, end);
      fsyncSync(fd);
    }
    // A new file's name must survive a power loss too.
    if (created) fsyncDirectory(path);
    return { journal: new JournalFile(path, fd, end), records };
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
    this.#checkUsable();
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

  /**
   * Replaces the whole journal with `payloads`, atomically and durably (temp file, fsync, rename,
   * directory fsync). A failure after the rename leaves the journal refusing every later write:
   * its descriptor might name the unlinked old file, where appends would be lost.
   */
  replace(payloads: readonly Uint8Array[]): void {
    this.#checkUsable();
    const temporary = `${this.path}.tmp`;
    let renamed = false;
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
      renamed = true;
      const old = this.#fd;
      this.#fd = openSync(this.path, 'a');
      closeSync(old);
      fsyncDirectory(this.path);
      this.#bytes = bytes;
    } catch (error) {
      const failure = new ClusterStorageError(this.path, `cannot rewrite (${(error as Error).message})`, {
        cause: error,
      });
      if (renamed) this.#broken = failure;
      throw failure;
    }
  }

  #checkUsable(): void {
    if (this.#broken !== undefined) throw this.#broken;
  }
}

function fsyncDirectory(path: string): void {
  const directory = openSync(dirname(path), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}

function frame(payload: Uint8Array): Uint8Array {
  const record = new Uint8Array(HEADER_BYTES + payload.length);
  const view = new DataView(record.buffer);
  view.setUint32(0, payload.length, true);
  view.setUint32(4, crc32c(record, 0, 4), true);
  view.setUint32(8, crc32c(payload), true);
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
  /** Chunks were staged and the switch has not happened: a rewrite now would lose them on disk. */
  #staging = false;
  /** The state's encoded size at the last look: the next look waits for the journal to outgrow it. */
  #stateBytes = 0;

  readonly #rewriteMinBytes: number;

  private constructor(journal: JournalFile, rewriteMinBytes: number) {
    super();
    this.#journal = journal;
    this.#rewriteMinBytes = rewriteMinBytes;
  }

  /**
   * Opens the log at `path`, replaying its journal. ClusterStorageError if it is damaged.
   * `rewriteMinBytes`: the journal is never rewritten below this size (default 1 MiB).
   */
  static open(path: string, options: { readonly rewriteMinBytes?: number } = {}): FileLog {
    const { journal, records } = JournalFile.open(path);
    const log = new FileLog(journal, options.rewriteMinBytes ?? LOG_REWRITE_MIN_BYTES);
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
    const installed = super.stage(slot, chunk, chunks, content);
    // A refused chunk (slot at or below the truncation point) stages nothing.
    if (slot > this.truncated || installed !== undefined) this.#staging = installed === undefined;
    return installed;
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
      case 'stage': {
        const installed = super.stage(record.slot, record.chunk, record.chunks, record.content);
        if (record.slot > this.truncated || installed !== undefined) this.#staging = installed === undefined;
        return;
      }
      default:
        throw new ClusterStorageError(path, `unknown record ${JSON.stringify(record).slice(0, 80)}`);
    }
  }

  /**
   * The journal as the few records that rebuild today's state: the snapshot installed at the
   * truncation point, then the promise and the entries above it. No rewrite happens while chunks
   * are staged: the image has no place for them, and they must survive a crash until the switch.
   */
  #maybeRewrite(): void {
    // Cheap checks first: encoding the state costs as much as the state is big.
    if (
      this.#staging ||
      this.#journal.bytes < Math.max(this.#rewriteMinBytes, LOG_REWRITE_FACTOR * this.#stateBytes)
    ) {
      return;
    }
    const state = this.read();
    this.#stateBytes = toPayload(state).length;
    if (this.#journal.bytes < LOG_REWRITE_FACTOR * this.#stateBytes) return;
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

/** Where LsmDisk keeps D: the empty key, which no RKV write uses (see LsmDisk). */
const APPLIED_SLOT_KEY = new Uint8Array(0);

function encodeAppliedSlot(slot: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(slot), true);
  return bytes;
}

function decodeAppliedSlot(directory: string, bytes: Uint8Array): number {
  const slot =
    bytes.length === 8 ? Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true)) : -1;
  if (!Number.isSafeInteger(slot) || slot < 0)
    throw new ClusterStorageError(directory, `its applied slot is ${bytes.length} bytes, not a u64 slot`);
  return slot;
}

/**
 * A `SimDisk` that is the real LSM engine (src/apps/rkv/lsm) over a directory: each flushed
 * memtable run is written as checksummed SSTables (index block, Bloom filter) and made durable
 * before `writeLevel0` returns; `compactLevel0` runs the engine's leveled compaction (levels
 * growing by its size ratio) until nothing is due. Lookups read the
 * engine in LSM order. The engine's directory lock keeps a second process off the files.
 *
 * D (`appliedSlot`, sim-disk.ts) is stored IN the store, under the empty key — a key RKV never
 * writes (its puts and deletes need a key of 1 byte or more, messages.ts "Deletes") — as a u64
 * written with the run that raises it. So it lands in the same table and manifest commit as the
 * writes it describes: after a crash it is exactly what the durable tables say (a table written but
 * not yet named by the manifest is gone, and its D with it), never ahead or behind. Each write
 * stores max(D, the run's slot), so the newest entry of the key — what reads and compactions
 * keep — is the maximum. Lookups, counts and scans leave the key out. A store with tables and no
 * D (written before D was kept) counts as ahead of every slot.
 */
export class LsmDisk extends SimDisk {
  readonly #engine: LsmEngine;
  #appliedSlot: number;

  private constructor(engine: LsmEngine) {
    super({ baseKeys: 0, valueBytes: 0 });
    this.#engine = engine;
    const stored = engine.get(APPLIED_SLOT_KEY);
    if (stored !== undefined) this.#appliedSlot = decodeAppliedSlot(engine.tree.directory, stored);
    // Tables but no D: a store written before D was kept (or only by runs of no slot). What it
    // holds is unknown, so it is taken as ahead of every slot: its reader decides no delete's
    // probe (as a restarted replica's never did before), never one from a later state.
    else this.#appliedSlot = engine.flushedSequence > 0 ? Number.MAX_SAFE_INTEGER : 0;
  }

  /** D, as the durable tables hold it (see the class comment). */
  override get appliedSlot(): number {
    return this.#appliedSlot;
  }

  /**
   * Opens (or creates) the store in `directory`; LSM errors name the file at fault. `fileSystem`:
   * the engine's (default the node's; tests inject faults).
   */
  static open(directory: string, options: { readonly fileSystem?: LsmFileSystem } = {}): LsmDisk {
    mkdirSync(directory, { recursive: true });
    // A run is flushed whole by writeLevel0, never by the memtable filling up.
    const engineOptions = { directory, createIfMissing: true, memtableBytes: 1 << 30 };
    return new LsmDisk(
      LsmEngine.open(
        options.fileSystem === undefined
          ? engineOptions
          : { ...engineOptions, fileSystem: options.fileSystem },
      ),
    );
  }

  override get level0Tables(): number {
    return this.#engine.stats().levels[0]?.tableCount ?? 0;
  }

  override writeLevel0(run: Uint8Array, appliedSlot = 0): number {
    const entries = decodeRun(run);
    for (const { key, value } of entries) {
      // The engine's own tombstone: its compaction drops it at the last level (lsm/compaction.ts).
      if (value === undefined) this.#engine.delete(key);
      else this.#engine.put(key, value);
    }
    if (appliedSlot > this.#appliedSlot) {
      this.#engine.put(APPLIED_SLOT_KEY, encodeAppliedSlot(appliedSlot));
      // Raised before the flush: if it fails, the engine retries it with a later flush, and a D
      // ahead of the tables only makes the reader decide fewer deletes (one behind would be wrong).
      this.#appliedSlot = appliedSlot;
    }
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
    if (key.length === 0) return { value: undefined, from: 'none' };
    const value = this.#engine.get(key);
    return value === undefined ? { value: undefined, from: 'none' } : { value, from: 'level-1' };
  }

  /** The engine's live keys outside `decided` (a full scan of the store: DBSIZE). */
  override countLiveKeys(decided: ReadonlySet<string>): number {
    let live = 0;
    for (const [key] of this.#engine.scan()) if (key.length > 0 && !decided.has(diskKeyName(key))) live++;
    return live;
  }

  /**
   * The engine's live pairs in [start, end), from its range cursor (memtables and every level),
   * at most `maxSteps` entries visited, tombstones included (the engine's scan skips them inside,
   * so without the budget one page could walk every tombstone on disk); returns where it stopped.
   */
  override *range(
    start: Uint8Array,
    end: Uint8Array | undefined,
    maxSteps = Number.POSITIVE_INFINITY,
  ): Generator<[Uint8Array, Uint8Array], Uint8Array | undefined, undefined> {
    // The empty key holds the disk's applied slot (see `appliedSlot`), never a client's pair.
    const pairs = this.#engine.scan(end === undefined ? { start, maxSteps } : { start, end, maxSteps });
    for (;;) {
      const step = pairs.next();
      if (step.done === true) return step.value;
      if (step.value[0].length > 0) yield step.value;
    }
  }

  /** Closes the engine, its lock released (`flush: false` leaves nothing more on disk: tests). */
  close(options: { readonly flush?: boolean } = {}): void {
    this.#engine.close(options);
  }
}
