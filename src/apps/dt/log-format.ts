/**
 * The coordinator log's on-disk format and the scan recovery starts from (iPipe §5 "DT": "write
 * the coordinator log — the commit point"; a logging actor pinned to the host persists it).
 *
 * The file is a sequence of self-framed records, appended only (compaction rewrites the file
 * whole, atomically). Every integer is little-endian:
 *
 *   offset  size  field
 *   0       4     magic 0x314C5444 ("DTL1": format version 1)
 *   4       4     payload length n (bytes, ≤ MAX_RECORD_PAYLOAD_BYTES)
 *   8       4     CRC-32C (Castagnoli) over bytes [0, 8) then the payload
 *   12      n     payload: u8 record type, then the type's fields
 *
 * The checksum covers the magic and the length too, so a flipped length bit cannot make the scan
 * skip to a wrong place and still "verify". Record types:
 *
 *   1 epoch       u32 epoch                       a coordinator incarnation began; fences older appends
 *   2 commit      u32 epoch, u32 client, u32 seq, u16 count,
 *                 count × (u16 shard, u16 key bytes, key UTF-8, f64 version, u32 value bytes, value)
 *                                                 the commit point of one transaction attempt
 *   3 checkpoint  u32 epoch, u32 count, count × (u32 client, u32 seq)
 *                                                 latest committed seq per client (the durable part
 *                                                 of the response cache) when the log was compacted
 *
 * Replay: the epoch is the largest seen; a client's last committed seq is the largest over
 * checkpoints and commit records; every commit record still in the file is a committed
 * transaction that may not yet be applied everywhere, and is redone (commits are idempotent at the
 * participants). Compaction drops only records of transactions every participant acknowledged.
 *
 * Scanning stops at the first record that does not verify. If nothing valid follows, that is a
 * torn tail — the crash interrupted an unsynced write — and the tail is discarded with a report
 * (how many bytes, and why). If valid records follow, the damage is in the middle of fsynced data:
 * the scan says so, and the recovery policy decides (refuse by default: see DtLogCorruptError).
 */

import { crc32c } from '../../dmo/crc32c.ts';
import type { LoggedWrite, TxnId } from './types.ts';

/** "DTL1" read as a little-endian u32. */
export const LOG_RECORD_MAGIC = 0x314c5444;
/** Bytes before a record's payload. */
export const LOG_HEADER_BYTES = 12;
/** Largest payload a record may declare (a longer length field is damage, not data). */
export const MAX_RECORD_PAYLOAD_BYTES = 16 * 1024 * 1024;

const TYPE_EPOCH = 1;
const TYPE_COMMIT = 2;
const TYPE_CHECKPOINT = 3;

/** A record of the coordinator log. Narrow on `type`. */
export type LogRecord =
  | { readonly type: 'epoch'; readonly epoch: number }
  | {
      readonly type: 'commit';
      readonly epoch: number;
      readonly client: number;
      readonly seq: number;
      readonly writes: readonly LoggedWrite[];
    }
  | { readonly type: 'checkpoint'; readonly epoch: number; readonly clients: readonly TxnId[] };

/** Why the scan stopped before the end of the bytes. */
export type LogDamage =
  | 'truncated-header'
  | 'truncated-record'
  | 'bad-magic'
  | 'bad-length'
  | 'bad-checksum'
  | 'bad-record';

/** What a scan of the log found. */
export interface LogScan {
  /** The records that verified, in file order. */
  readonly records: readonly LogRecord[];
  /** Bytes from the start that hold exactly those records. */
  readonly validBytes: number;
  readonly totalBytes: number;
  /** Bytes after `validBytes` (0 when the whole file verified). */
  readonly discardedBytes: number;
  /** Why the scan stopped early, or undefined when it did not. */
  readonly damage: LogDamage | undefined;
  /**
   * Records that verify *after* the damage. Zero means a torn tail (safe to drop); more means the
   * middle of the log is corrupt and dropping the tail would lose fsynced records.
   */
  readonly recordsAfterDamage: number;
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

/** Encodes one record with its frame (magic, length, checksum). */
export function encodeLogRecord(record: LogRecord): Uint8Array {
  const payload = encodePayload(record);
  const out = new Uint8Array(LOG_HEADER_BYTES + payload.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, LOG_RECORD_MAGIC, true);
  view.setUint32(4, payload.length, true);
  out.set(payload, LOG_HEADER_BYTES);
  view.setUint32(8, recordChecksum(out, 0, payload.length), true);
  return out;
}

function recordChecksum(bytes: Uint8Array, start: number, payloadLength: number): number {
  const headerCrc = crc32c(bytes, start, start + 8);
  return crc32c(bytes, start + LOG_HEADER_BYTES, start + LOG_HEADER_BYTES + payloadLength, headerCrc);
}

function encodePayload(record: LogRecord): Uint8Array {
  switch (record.type) {
    case 'epoch': {
      const out = new Uint8Array(5);
      out[0] = TYPE_EPOCH;
      new DataView(out.buffer).setUint32(1, record.epoch, true);
      return out;
    }
    case 'checkpoint': {
      const out = new Uint8Array(9 + 8 * record.clients.length);
      const view = new DataView(out.buffer);
      out[0] = TYPE_CHECKPOINT;
      view.setUint32(1, record.epoch, true);
      view.setUint32(5, record.clients.length, true);
      let pos = 9;
      for (const entry of record.clients) {
        view.setUint32(pos, entry.client, true);
        view.setUint32(pos + 4, entry.seq, true);
        pos += 8;
      }
      return out;
    }
    case 'commit': {
      const keys = record.writes.map((write) => textEncoder.encode(write.key));
      let size = 15;
      for (let i = 0; i < record.writes.length; i++) {
        size += 2 + 2 + keys[i]!.length + 8 + 4 + record.writes[i]!.value.length;
      }
      const out = new Uint8Array(size);
      const view = new DataView(out.buffer);
      out[0] = TYPE_COMMIT;
      view.setUint32(1, record.epoch, true);
      view.setUint32(5, record.client, true);
      view.setUint32(9, record.seq, true);
      view.setUint16(13, record.writes.length, true);
      let pos = 15;
      for (let i = 0; i < record.writes.length; i++) {
        const write = record.writes[i]!;
        const key = keys[i]!;
        view.setUint16(pos, write.shard, true);
        view.setUint16(pos + 2, key.length, true);
        out.set(key, pos + 4);
        pos += 4 + key.length;
        view.setFloat64(pos, write.version, true);
        view.setUint32(pos + 8, write.value.length, true);
        out.set(write.value, pos + 12);
        pos += 12 + write.value.length;
      }
      return out;
    }
  }
}

/** A payload that fails to parse although its checksum verified (a writer bug or a newer format). */
class PayloadError {
  readonly detail: string;
  constructor(detail: string) {
    this.detail = detail;
  }
}

function decodePayload(bytes: Uint8Array, start: number, length: number): LogRecord {
  const view = new DataView(bytes.buffer, bytes.byteOffset + start, length);
  const need = (pos: number, count: number): void => {
    if (pos + count > length) throw new PayloadError(`payload ends at ${length}, needs ${pos + count}`);
  };
  need(0, 1);
  const type = view.getUint8(0);
  if (type === TYPE_EPOCH) {
    if (length !== 5) throw new PayloadError(`epoch record of ${length} bytes (expected 5)`);
    return { type: 'epoch', epoch: view.getUint32(1, true) };
  }
  if (type === TYPE_CHECKPOINT) {
    need(1, 8);
    const epoch = view.getUint32(1, true);
    const count = view.getUint32(5, true);
    if (length !== 9 + 8 * count) throw new PayloadError(`checkpoint of ${count} clients in ${length} bytes`);
    const clients: TxnId[] = [];
    for (let i = 0, pos = 9; i < count; i++, pos += 8) {
      clients.push({ client: view.getUint32(pos, true), seq: view.getUint32(pos + 4, true) });
    }
    return { type: 'checkpoint', epoch, clients };
  }
  if (type === TYPE_COMMIT) {
    need(1, 14);
    const epoch = view.getUint32(1, true);
    const client = view.getUint32(5, true);
    const seq = view.getUint32(9, true);
    const count = view.getUint16(13, true);
    const writes: LoggedWrite[] = [];
    let pos = 15;
    for (let i = 0; i < count; i++) {
      need(pos, 4);
      const shard = view.getUint16(pos, true);
      const keyLength = view.getUint16(pos + 2, true);
      pos += 4;
      need(pos, keyLength + 12);
      const key = textDecoder.decode(bytes.subarray(start + pos, start + pos + keyLength));
      pos += keyLength;
      const version = view.getFloat64(pos, true);
      const valueLength = view.getUint32(pos + 8, true);
      pos += 12;
      need(pos, valueLength);
      const value = bytes.slice(start + pos, start + pos + valueLength);
      pos += valueLength;
      writes.push({ shard, key, value, version });
    }
    if (pos !== length) throw new PayloadError(`commit record has ${length - pos} trailing bytes`);
    return { type: 'commit', epoch, client, seq, writes };
  }
  throw new PayloadError(`unknown record type ${type}`);
}

type ParseResult =
  | { readonly ok: true; readonly record: LogRecord; readonly end: number }
  | { readonly ok: false; readonly damage: LogDamage };

function parseAt(bytes: Uint8Array, offset: number, view: DataView): ParseResult {
  const remaining = bytes.length - offset;
  if (remaining < LOG_HEADER_BYTES) {
    // A short header that is not even a magic prefix is garbage rather than a torn write.
    return { ok: false, damage: isMagicPrefix(bytes, offset) ? 'truncated-header' : 'bad-magic' };
  }
  if (view.getUint32(offset, true) !== LOG_RECORD_MAGIC) return { ok: false, damage: 'bad-magic' };
  const length = view.getUint32(offset + 4, true);
  if (length === 0 || length > MAX_RECORD_PAYLOAD_BYTES) return { ok: false, damage: 'bad-length' };
  if (LOG_HEADER_BYTES + length > remaining) return { ok: false, damage: 'truncated-record' };
  if (view.getUint32(offset + 8, true) !== recordChecksum(bytes, offset, length)) {
    return { ok: false, damage: 'bad-checksum' };
  }
  try {
    const record = decodePayload(bytes, offset + LOG_HEADER_BYTES, length);
    return { ok: true, record, end: offset + LOG_HEADER_BYTES + length };
  } catch (error) {
    if (error instanceof PayloadError || error instanceof TypeError)
      return { ok: false, damage: 'bad-record' };
    throw error;
  }
}

const MAGIC_BYTES = [0x44, 0x54, 0x4c, 0x31];

function isMagicPrefix(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset, j = 0; i < bytes.length && j < 4; i++, j++) {
    if (bytes[i] !== MAGIC_BYTES[j]) return false;
  }
  return true;
}

/** Records that verify anywhere after `from` (a resynchronising scan: only run after damage). */
function countRecordsAfter(bytes: Uint8Array, from: number, view: DataView): number {
  for (let offset = from; offset + LOG_HEADER_BYTES <= bytes.length; offset++) {
    if (bytes[offset] !== MAGIC_BYTES[0]) continue;
    let result = parseAt(bytes, offset, view);
    if (!result.ok) continue;
    let count = 0;
    for (;;) {
      count++;
      if (result.end >= bytes.length) return count;
      const next = parseAt(bytes, result.end, view);
      if (!next.ok) return count + countRecordsAfter(bytes, result.end + 1, view);
      result = next;
    }
  }
  return 0;
}

/** Scans `bytes` from the start; never throws on damage (it reports it). */
export function scanLog(bytes: Uint8Array): LogScan {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: LogRecord[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const result = parseAt(bytes, offset, view);
    if (!result.ok) {
      return {
        records,
        validBytes: offset,
        totalBytes: bytes.length,
        discardedBytes: bytes.length - offset,
        damage: result.damage,
        recordsAfterDamage: countRecordsAfter(bytes, offset + 1, view),
      };
    }
    records.push(result.record);
    offset = result.end;
  }
  return {
    records,
    validBytes: offset,
    totalBytes: bytes.length,
    discardedBytes: 0,
    damage: undefined,
    recordsAfterDamage: 0,
  };
}

/** A committed transaction as replay finds it in the log. */
export interface LoggedCommit {
  readonly epoch: number;
  readonly client: number;
  readonly seq: number;
  readonly writes: readonly LoggedWrite[];
}

/** The state the log describes: what a restarted coordinator needs. */
export interface LogState {
  /** The largest epoch any record carries (0 for an empty log). */
  readonly epoch: number;
  /** Latest committed seq per client. */
  readonly clients: ReadonlyMap<number, number>;
  /** Every commit record, once per (client, seq), in log order. */
  readonly commits: readonly LoggedCommit[];
}

/** Replays records into the state they describe (see the header for the rules). */
export function replayLog(records: readonly LogRecord[]): LogState {
  let epoch = 0;
  const clients = new Map<number, number>();
  const commits: LoggedCommit[] = [];
  const seen = new Set<string>();
  const noteClient = (client: number, seq: number): void => {
    const known = clients.get(client);
    if (known === undefined || seq > known) clients.set(client, seq);
  };
  for (const record of records) {
    epoch = Math.max(epoch, record.epoch);
    if (record.type === 'checkpoint') {
      for (const entry of record.clients) noteClient(entry.client, entry.seq);
    } else if (record.type === 'commit') {
      noteClient(record.client, record.seq);
      const key = `${record.client}:${record.seq}`;
      // A retransmitted append can be logged twice; the transaction is one.
      if (!seen.has(key)) {
        seen.add(key);
        commits.push(record);
      }
    }
  }
  return { epoch, clients, commits };
}

/** Decodes exactly one framed record (the coordinator's NIC-side log object holds such records). */
export function decodeLogRecord(bytes: Uint8Array): LogRecord | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result = parseAt(bytes, 0, view);
  return result.ok && result.end === bytes.length ? result.record : undefined;
}
