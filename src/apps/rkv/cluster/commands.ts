/**
 * The commands RKV's live cluster puts in its Multi-Paxos logs, their results, their binary codec
 * (for the durable log, snapshots' session tables and the replica wire), and the key → shard map
 * (paper, "The applications": RKV shards keys over consensus groups; each group's log carries
 * every read and write, so a GET is ordered with the writes and is linearizable).
 *
 * Keys and values are bytes (Redis keys are binary). Multi-key commands (DEL, EXISTS, MGET) are
 * split by shard by the caller: one command never spans two consensus groups.
 */

import { ByteReader, ByteWriter } from '../paxos/bytes.ts';
import type { PaxosCodec } from '../paxos/state-machine.ts';

/** When SET writes (Redis's SET, SET NX, SET XX). */
export type ClusterSetCondition = 'always' | 'if-absent' | 'if-present';

/** One command of a shard's log. */
export type ClusterCommand =
  | { readonly op: 'get'; readonly key: Uint8Array }
  | {
      readonly op: 'set';
      readonly key: Uint8Array;
      readonly value: Uint8Array;
      readonly condition: ClusterSetCondition;
    }
  /** Deletes the keys; the result counts those that existed (a key named twice counts once). */
  | { readonly op: 'del'; readonly keys: readonly Uint8Array[] }
  /** Counts the keys that exist (a key named twice counts twice, as in Redis). */
  | { readonly op: 'exists'; readonly keys: readonly Uint8Array[] }
  | { readonly op: 'mget'; readonly keys: readonly Uint8Array[] }
  /** Keys in the shard. */
  | { readonly op: 'dbsize' };

/** What a command produced (sent to the client by the leader, cached in the session table). */
export type ClusterResult =
  | { readonly op: 'value'; readonly value: Uint8Array | null }
  | { readonly op: 'values'; readonly values: readonly (Uint8Array | null)[] }
  | { readonly op: 'count'; readonly count: number }
  | { readonly op: 'written'; readonly written: boolean };

const OP = { get: 1, set: 2, del: 3, exists: 4, mget: 5, dbsize: 6 } as const;
const CONDITION: readonly ClusterSetCondition[] = ['always', 'if-absent', 'if-present'];
const RESULT = { value: 1, values: 2, count: 3, written: 4 } as const;

function writeKeys(writer: ByteWriter, keys: readonly Uint8Array[]): void {
  writer.u32(keys.length);
  for (const key of keys) writer.bytes(key);
}

function readKeys(reader: ByteReader): Uint8Array[] {
  const count = reader.u32();
  if (count > reader.remaining / 4) throw new RangeError(`key count ${count} exceeds the bytes left`);
  const keys: Uint8Array[] = [];
  for (let index = 0; index < count; index++) keys.push(reader.bytes());
  return keys;
}

function writeOptional(writer: ByteWriter, value: Uint8Array | null): void {
  if (value === null) writer.u8(0);
  else writer.u8(1).bytes(value);
}

function readOptional(reader: ByteReader): Uint8Array | null {
  const present = reader.u8();
  if (present === 0) return null;
  if (present === 1) return reader.bytes();
  throw new RangeError(`bad presence byte ${present}`);
}

/** Appends a command's bytes to `writer` (the wire codec embeds commands without a copy). */
export function writeCommand(writer: ByteWriter, command: ClusterCommand): void {
  writer.u8(OP[command.op]);
  switch (command.op) {
    case 'get':
      writer.bytes(command.key);
      return;
    case 'set':
      writer.bytes(command.key).bytes(command.value).u8(CONDITION.indexOf(command.condition));
      return;
    case 'del':
    case 'exists':
    case 'mget':
      writeKeys(writer, command.keys);
      return;
    case 'dbsize':
      return;
  }
}

/** Reads a command written by `writeCommand`; RangeError when the bytes are not one. */
export function readCommand(reader: ByteReader): ClusterCommand {
  const op = reader.u8();
  switch (op) {
    case OP.get:
      return { op: 'get', key: reader.bytes() };
    case OP.set: {
      const key = reader.bytes();
      const value = reader.bytes();
      const condition = CONDITION[reader.u8()];
      if (condition === undefined) throw new RangeError('bad SET condition');
      return { op: 'set', key, value, condition };
    }
    case OP.del:
      return { op: 'del', keys: readKeys(reader) };
    case OP.exists:
      return { op: 'exists', keys: readKeys(reader) };
    case OP.mget:
      return { op: 'mget', keys: readKeys(reader) };
    case OP.dbsize:
      return { op: 'dbsize' };
    default:
      throw new RangeError(`unknown cluster command op ${op}`);
  }
}

/** Appends a result's bytes to `writer`. */
export function writeResult(writer: ByteWriter, result: ClusterResult): void {
  writer.u8(RESULT[result.op]);
  switch (result.op) {
    case 'value':
      writeOptional(writer, result.value);
      return;
    case 'values':
      writer.u32(result.values.length);
      for (const value of result.values) writeOptional(writer, value);
      return;
    case 'count':
      writer.f64(result.count);
      return;
    case 'written':
      writer.u8(result.written ? 1 : 0);
      return;
  }
}

/** Reads a result written by `writeResult`; RangeError when the bytes are not one. */
export function readResult(reader: ByteReader): ClusterResult {
  const op = reader.u8();
  switch (op) {
    case RESULT.value:
      return { op: 'value', value: readOptional(reader) };
    case RESULT.values: {
      const count = reader.u32();
      if (count > reader.remaining) throw new RangeError(`value count ${count} exceeds the bytes left`);
      const values: (Uint8Array | null)[] = [];
      for (let index = 0; index < count; index++) values.push(readOptional(reader));
      return { op: 'values', values };
    }
    case RESULT.count:
      return { op: 'count', count: reader.count() };
    case RESULT.written:
      return { op: 'written', written: reader.u8() === 1 };
    default:
      throw new RangeError(`unknown cluster result op ${op}`);
  }
}

function whole<T>(bytes: Uint8Array, read: (reader: ByteReader) => T): T {
  const reader = new ByteReader(bytes);
  const value = read(reader);
  if (reader.remaining !== 0) throw new RangeError(`${reader.remaining} trailing byte(s)`);
  return value;
}

/** The `PaxosCodec` of the cluster's logs (FilePaxosStorage records and snapshots). */
export const clusterCodec: PaxosCodec<ClusterCommand, ClusterResult> = {
  encodeCommand(command) {
    const writer = new ByteWriter(32);
    writeCommand(writer, command);
    return writer.finish();
  },
  decodeCommand: (bytes) => whole(bytes, readCommand),
  encodeResult(result) {
    const writer = new ByteWriter(16);
    writeResult(writer, result);
    return writer.finish();
  },
  decodeResult: (bytes) => whole(bytes, readResult),
};

/**
 * The shard that owns `key`: FNV-1a (32-bit) of the key's bytes modulo the shard count. Stable
 * across processes and versions — it is part of the data directory's format (a directory created
 * with S shards must be opened with S shards, which `cluster up` checks).
 */
export function shardOf(key: Uint8Array, shardCount: number): number {
  if (shardCount === 1) return 0;
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) {
    hash ^= key[index]!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shardCount;
}
