/**
 * File-backed `PaxosStorage` for the live platform: an append-only log of checksummed records,
 * fsynced on every `sync()` (storage.ts, contract 1–4), compacted by rewriting when a snapshot is
 * saved (paper, "The applications": RKV truncates its log after a snapshot).
 *
 * File layout: a magic, then one checksummed frame per `sync()` holding that sync's records.
 *
 *   ┌──────────────┬──────────────────────────────────────────────┬───────────────┐
 *   │ "IPXPAXL2"   │ frame: len u32 │ crc32 u32 │ payload (len B)   │ frame …       │
 *   │ (8 B magic)  │                  (of the payload)              │               │
 *   └──────────────┴──────────────────────────────────────────────┴───────────────┘
 *   payload = records, each  len u32, then  type u8 and
 *                            1 promise:  ballot f64
 *                            2 accepted: slot f64, ballot f64, kind u8 (0 noop | 1 request:
 *                                        clientId f64, seq f64, command bytes)
 *                            3 snapshot: lastIncludedSlot f64, state bytes, sessions u32 ×
 *                                        (clientId f64, seq f64, result bytes)
 *
 * Why a frame per sync rather than a checksum per record: a crash inside `sync()` can tear only
 * the bytes that sync was writing, in any pattern (pages reach the disk in any order), so the unit
 * that is either whole or damaged is the sync's batch. With one checksum over the batch, a tear
 * always shows as a bad *last* frame, and nothing of a torn batch is half-applied.
 *
 * Recovery replays frames in order. A bad frame (short, implausible length, CRC mismatch) with no
 * valid frame after it is the torn tail a crash leaves: the file is truncated there so new frames
 * follow valid ones, and `recovery` says so (records kept, bytes discarded, why). Nobody was told
 * about a torn batch (the replica sends nothing before `sync` returns), so dropping it is safe.
 * Damage a crash cannot leave is refused with `PaxosStorageCorruptError` naming the file and the
 * offset — dropping those records would make the acceptor forget promises it gave:
 *   - a bad frame followed by a valid one (damage in the middle of the log), and
 *   - a frame whose CRC holds but whose records do not decode (a bug, or a file of another format).
 * Damage to a length field in the middle of the file cannot be told from a torn tail (the next
 * frame cannot be found); it is truncated like one. A checksummed header would close that gap.
 *
 * Compaction: when a snapshot is synced, the whole durable state (magic, snapshot, promise,
 * accepted entries above the snapshot) is written to `<path>.tmp`, fsynced, renamed over `<path>`,
 * and the directory fsynced — atomic on POSIX, so a crash leaves either the old or the new file.
 * A stale `.tmp` found at open is an interrupted compaction and is deleted.
 */

import {
  closeSync,
  existsSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { ByteReader, ByteWriter } from './bytes.ts';
import { PaxosStorageCorruptError, PaxosStorageIoError } from './errors.ts';
import type { PaxosCodec } from './state-machine.ts';
import type { DurableAccepted, PaxosStorage, PersistedState } from './storage.ts';
import {
  type Ballot,
  type ClientId,
  type LogCommand,
  NO_BALLOT,
  type SessionRecord,
  type Snapshot,
} from './types.ts';

const MAGIC = new TextEncoder().encode('IPXPAXL2');
const FRAME_HEADER_BYTES = 8;
/** Frames larger than this are treated as garbage during recovery (a torn length field). */
const MAX_FRAME_BYTES = 1 << 30;
const TYPE_PROMISE = 1;
const TYPE_ACCEPTED = 2;
const TYPE_SNAPSHOT = 3;

/** What `open` found in the file. */
export interface RecoveryReport {
  readonly path: string;
  /** The file did not exist (or held only a torn magic) and was created empty. */
  readonly created: boolean;
  /** Frames (one per sync or compaction) and the records in them, replayed. */
  readonly framesRecovered: number;
  readonly recordsRecovered: number;
  /** Bytes of valid data kept (magic included). */
  readonly validBytes: number;
  /** Bytes after the last valid frame, cut off (0 when the file ended cleanly). */
  readonly discardedBytes: number;
  /** Why replay stopped early, when it did ("crc mismatch at offset 4096", …); null otherwise. */
  readonly stoppedEarly: string | null;
  /** Removed an interrupted compaction's temporary file. */
  readonly removedStaleTemp: boolean;
}

type Parsed<C, R> =
  | { readonly kind: 'promise'; readonly ballot: Ballot }
  | { readonly kind: 'accepted'; readonly entry: DurableAccepted<C> }
  | { readonly kind: 'snapshot'; readonly snapshot: Snapshot<R> };

export class FilePaxosStorage<C, R> implements PaxosStorage<C, R> {
  readonly path: string;
  readonly recovery: RecoveryReport;
  readonly #codec: PaxosCodec<C, R>;
  #fd: number;
  /** Where the next record goes (the end of the valid data). */
  #appendOffset: number;
  // The durable state, mirrored in memory so compaction can rewrite the file without reading it.
  #promised: Ballot = NO_BALLOT;
  #snapshot: Snapshot<R> | null = null;
  readonly #accepted = new Map<number, DurableAccepted<C>>();
  #pending: Parsed<C, R>[] = [];

  /** Opens (or creates) the log at `path` and replays it; see `recovery` for what was found. */
  static open<C, R>(path: string, codec: PaxosCodec<C, R>): FilePaxosStorage<C, R> {
    return new FilePaxosStorage(path, codec);
  }

  private constructor(path: string, codec: PaxosCodec<C, R>) {
    this.path = path;
    this.#codec = codec;
    const tempPath = `${path}.tmp`;
    const removedStaleTemp = existsSync(tempPath);
    if (removedStaleTemp) io(path, 'remove stale compaction file', () => rmSync(tempPath));

    let bytes: Uint8Array | null = existsSync(path) ? io(path, 'read', () => readFileSync(path)) : null;
    if (bytes !== null && bytes.length < MAGIC.length && isPrefixOf(bytes, MAGIC)) bytes = null; // torn create
    let created = false;
    if (bytes === null) {
      writeFileDurably(path, MAGIC);
      bytes = MAGIC;
      created = true;
    }
    if (bytes.length < MAGIC.length || !isPrefixOf(MAGIC, bytes)) {
      throw new PaxosStorageCorruptError(path, 'not a Paxos log (bad magic; expected "IPXPAXL2")');
    }

    let offset = MAGIC.length;
    let frames = 0;
    let records = 0;
    let stoppedEarly: string | null = null;
    while (offset < bytes.length) {
      const frame = readFrame(bytes, offset);
      if (frame.kind === 'damaged') {
        // A torn tail only if nothing valid follows: a crash tears the last sync's frame alone.
        const after = frame.next;
        if (after !== null && after < bytes.length && readFrame(bytes, after).kind === 'ok') {
          throw new PaxosStorageCorruptError(
            path,
            `the frame at offset ${offset} is damaged (${frame.why}) but a valid frame follows at offset ${after}`,
          );
        }
        stoppedEarly = `${frame.why} at offset ${offset}`;
        break;
      }
      let decoded: Parsed<C, R>[];
      try {
        decoded = this.#decodeFrame(frame.payload);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        throw new PaxosStorageCorruptError(
          path,
          `the frame at offset ${offset} passes its checksum but does not decode (${why})`,
        );
      }
      for (const record of decoded) this.#make(record);
      offset = frame.next;
      frames++;
      records += decoded.length;
    }
    const discardedBytes = bytes.length - offset;
    this.#fd = io(path, 'open', () => openSync(path, 'r+'));
    if (discardedBytes > 0) {
      io(path, 'truncate torn tail', () => {
        ftruncateSync(this.#fd, offset);
        fsyncSync(this.#fd);
      });
    }
    this.#appendOffset = offset;
    this.recovery = {
      path,
      created,
      framesRecovered: frames,
      recordsRecovered: records,
      validBytes: offset,
      discardedBytes,
      stoppedEarly,
      removedStaleTemp,
    };
  }

  load(): PersistedState<C, R> {
    const accepted = [...this.#accepted.values()].sort((a, b) => a.slot - b.slot);
    return { promised: this.#promised, snapshot: this.#snapshot, accepted };
  }

  savePromise(ballot: Ballot): void {
    this.#pending.push({ kind: 'promise', ballot });
  }

  saveAccepted(slot: number, ballot: Ballot, command: LogCommand<C>): void {
    this.#pending.push({ kind: 'accepted', entry: { slot, ballot, command } });
  }

  saveSnapshot(snapshot: Snapshot<R>): void {
    this.#pending.push({ kind: 'snapshot', snapshot });
  }

  sync(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    const compact = pending.some((record) => record.kind === 'snapshot');
    if (compact) {
      for (const record of pending) this.#make(record);
      this.#rewrite();
      return;
    }
    const writer = new ByteWriter(256);
    this.#frame(writer, pending);
    const bytes = writer.finish();
    io(this.path, 'append', () => {
      let written = 0;
      while (written < bytes.length) {
        written += writeSync(this.#fd, bytes, written, bytes.length - written, this.#appendOffset + written);
      }
      fsyncSync(this.#fd);
    });
    this.#appendOffset += bytes.length;
    for (const record of pending) this.#make(record);
  }

  /** Closes the file. Unsynced records are dropped (as a crash would). */
  close(): void {
    this.#pending = [];
    io(this.path, 'close', () => closeSync(this.#fd));
  }

  /** Writes the durable state to a fresh file and atomically replaces the log with it. */
  #rewrite(): void {
    const writer = new ByteWriter(1024);
    for (const byte of MAGIC) writer.u8(byte);
    const state: Parsed<C, R>[] = [];
    if (this.#snapshot !== null) state.push({ kind: 'snapshot', snapshot: this.#snapshot });
    if (this.#promised !== NO_BALLOT) state.push({ kind: 'promise', ballot: this.#promised });
    for (const entry of [...this.#accepted.values()].sort((a, b) => a.slot - b.slot)) {
      state.push({ kind: 'accepted', entry });
    }
    if (state.length > 0) this.#frame(writer, state);
    const bytes = writer.finish();
    const tempPath = `${this.path}.tmp`;
    writeFileDurably(tempPath, bytes);
    io(this.path, 'replace with compacted log', () => {
      closeSync(this.#fd);
      renameSync(tempPath, this.path);
      fsyncDirectory(dirname(this.path));
      this.#fd = openSync(this.path, 'r+');
    });
    this.#appendOffset = bytes.length;
  }

  /** Applies one record to the in-memory mirror of the durable state. */
  #make(record: Parsed<C, R>): void {
    if (record.kind === 'promise') this.#promised = record.ballot;
    else if (record.kind === 'accepted') {
      if (record.entry.slot > (this.#snapshot?.lastIncludedSlot ?? 0)) {
        this.#accepted.set(record.entry.slot, record.entry);
      }
    } else if (record.snapshot.lastIncludedSlot > (this.#snapshot?.lastIncludedSlot ?? 0)) {
      this.#snapshot = record.snapshot;
      for (const slot of [...this.#accepted.keys()]) {
        if (slot <= record.snapshot.lastIncludedSlot) this.#accepted.delete(slot);
      }
    }
  }

  /** Appends one frame holding `records` (the unit a crash tears or leaves whole). */
  #frame(writer: ByteWriter, records: readonly Parsed<C, R>[]): void {
    const payload = new ByteWriter(256);
    for (const record of records) payload.bytes(this.#encode(record));
    const bytes = payload.finish();
    writer.u32(bytes.length).u32(crc32(bytes));
    writer.raw(bytes);
  }

  #encode(record: Parsed<C, R>): Uint8Array {
    const writer = new ByteWriter(64);
    if (record.kind === 'promise') return writer.u8(TYPE_PROMISE).f64(record.ballot).finish();
    if (record.kind === 'accepted') {
      const { slot, ballot, command } = record.entry;
      writer.u8(TYPE_ACCEPTED).f64(slot).f64(ballot);
      if (command.kind === 'noop') writer.u8(0);
      else
        writer.u8(1).f64(command.clientId).f64(command.seq).bytes(this.#codec.encodeCommand(command.payload));
      return writer.finish();
    }
    const snapshot = record.snapshot;
    writer
      .u8(TYPE_SNAPSHOT)
      .f64(snapshot.lastIncludedSlot)
      .bytes(snapshot.state)
      .u32(snapshot.sessions.length);
    for (const session of snapshot.sessions) {
      writer.f64(session.clientId).f64(session.seq).bytes(this.#codec.encodeResult(session.result));
    }
    return writer.finish();
  }

  /** The records of a frame whose checksum held; throws when they do not decode. */
  #decodeFrame(payload: Uint8Array): Parsed<C, R>[] {
    const reader = new ByteReader(payload);
    const records: Parsed<C, R>[] = [];
    while (reader.remaining > 0) records.push(this.#decode(reader.bytes()));
    if (records.length === 0) throw new RangeError('empty frame');
    return records;
  }

  #decode(payload: Uint8Array): Parsed<C, R> {
    const reader = new ByteReader(payload);
    const type = reader.u8();
    let record: Parsed<C, R>;
    if (type === TYPE_PROMISE) record = { kind: 'promise', ballot: reader.count() as Ballot };
    else if (type === TYPE_ACCEPTED) {
      const slot = reader.count();
      const ballot = reader.count() as Ballot;
      const kind = reader.u8();
      let command: LogCommand<C>;
      if (kind === 0) command = { kind: 'noop' };
      else if (kind === 1) {
        const clientId = reader.count() as ClientId;
        const seq = reader.count();
        command = { kind: 'request', clientId, seq, payload: this.#codec.decodeCommand(reader.bytes()) };
      } else throw new RangeError(`unknown command kind ${kind}`);
      record = { kind: 'accepted', entry: { slot, ballot, command } };
    } else if (type === TYPE_SNAPSHOT) {
      const lastIncludedSlot = reader.count();
      const state = reader.bytes();
      const count = reader.u32();
      const sessions: SessionRecord<R>[] = [];
      for (let i = 0; i < count; i++) {
        const clientId = reader.count() as ClientId;
        const seq = reader.count();
        sessions.push({ clientId, seq, result: this.#codec.decodeResult(reader.bytes()) });
      }
      record = { kind: 'snapshot', snapshot: { lastIncludedSlot, state, sessions } };
    } else throw new RangeError(`unknown record type ${type}`);
    if (reader.remaining !== 0) throw new RangeError(`${reader.remaining} trailing byte(s)`);
    return record;
  }
}

type FrameRead =
  | { readonly kind: 'ok'; readonly payload: Uint8Array; readonly next: number }
  /** `next`: where the frame would end by its length field, when that is plausible and in the file. */
  | { readonly kind: 'damaged'; readonly why: string; readonly next: number | null };

/** The frame at `offset`, or why it is not a valid one. */
function readFrame(bytes: Uint8Array, offset: number): FrameRead {
  if (offset + FRAME_HEADER_BYTES > bytes.length) {
    return { kind: 'damaged', why: 'truncated frame header', next: null };
  }
  const header = new DataView(bytes.buffer, bytes.byteOffset + offset, FRAME_HEADER_BYTES);
  const length = header.getUint32(0, true);
  const checksum = header.getUint32(4, true);
  if (length === 0 || length > MAX_FRAME_BYTES) {
    return { kind: 'damaged', why: `implausible frame length ${length}`, next: null };
  }
  const start = offset + FRAME_HEADER_BYTES;
  if (start + length > bytes.length) return { kind: 'damaged', why: 'truncated frame payload', next: null };
  const payload = bytes.subarray(start, start + length);
  if (crc32(payload) !== checksum) return { kind: 'damaged', why: 'crc mismatch', next: start + length };
  return { kind: 'ok', payload, next: start + length };
}

function isPrefixOf(prefix: Uint8Array, bytes: Uint8Array): boolean {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== bytes[i]) return false;
  return true;
}

function io<T>(path: string, operation: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new PaxosStorageIoError(path, operation, error);
  }
}

/** Creates/overwrites `path` with `bytes`, fsyncs it and its directory. */
function writeFileDurably(path: string, bytes: Uint8Array): void {
  io(path, 'write', () => {
    const fd = openSync(path, 'w');
    try {
      let written = 0;
      while (written < bytes.length)
        written += writeSync(fd, bytes, written, bytes.length - written, written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncDirectory(dirname(path));
  });
}

function fsyncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
