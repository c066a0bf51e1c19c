/**
 * Structural checks of a transaction before it runs (iPipe §5 "DT"; the "bad input":
 * empty write set, duplicate keys, unknown shards). The client library runs them before sending
 * (and throws DtInvalidTransactionError), the coordinator runs them again on every commit request
 * (and answers `invalid` without touching a participant), and a participant re-checks placement on
 * every lock, so a misconfigured or hostile client cannot lock keys a shard does not own.
 */

import { utf8ByteLength } from '../../actor/index.ts';
import { DtInvalidTransactionError, type TxnProblem } from './errors.ts';
import { MAX_KEY_BYTES, MAX_TXN_ITEMS, MAX_VALUE_BYTES } from './messages.ts';
import type { ShardMap } from './types.ts';

/** A read as a commit request carries it: where, and the version the client saw. */
export interface ReadItem {
  readonly shard: number;
  readonly key: string;
  readonly version: number;
}

/** A write as a commit request carries it. */
export interface WriteItem {
  readonly shard: number;
  readonly key: string;
  readonly value: Uint8Array;
}

/** The parts of a transaction the checks look at. */
export interface TxnShape {
  readonly reads: readonly ReadItem[];
  readonly writes: readonly WriteItem[];
}

/** What the checks compare against. */
export interface ValidationLimits {
  readonly shards: ShardMap;
  /** Largest value accepted (≤ MAX_VALUE_BYTES). */
  readonly maxValueBytes: number;
}

/** Why `key` is not a usable key, or undefined when it is. */
export function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'keys must not be empty';
  const bytes = utf8ByteLength(key);
  if (bytes < 0) return 'keys must be well-formed Unicode (a lone surrogate cannot be encoded as UTF-8)';
  if (bytes > MAX_KEY_BYTES) return `keys are at most ${MAX_KEY_BYTES} UTF-8 bytes, this one is ${bytes}`;
  return undefined;
}

function placementProblem(key: string, shard: number, shards: ShardMap): TxnProblem | undefined {
  const detail = keyProblem(key);
  if (detail !== undefined) return { reason: 'invalid-key', key, detail };
  if (!(Number.isInteger(shard) && shard >= 0 && shard < shards.shardCount)) {
    return { reason: 'unknown-shard', key, shard, shardCount: shards.shardCount };
  }
  const expected = shards.shardOf(key);
  if (shard !== expected) return { reason: 'wrong-shard', key, shard, expected };
  return undefined;
}

/**
 * The first problem with `txn`, or undefined when it may run. Checks, in order: sizes of both
 * sets, a non-empty write set, every key (well-formed, on a known shard, on the shard the map
 * says), no key twice in a set, read versions, value sizes.
 */
export function findTxnProblem(txn: TxnShape, limits: ValidationLimits): TxnProblem | undefined {
  const maxValueBytes = Math.min(limits.maxValueBytes, MAX_VALUE_BYTES);
  if (txn.reads.length > MAX_TXN_ITEMS) {
    return { reason: 'too-many-items', set: 'reads', count: txn.reads.length, max: MAX_TXN_ITEMS };
  }
  if (txn.writes.length > MAX_TXN_ITEMS) {
    return { reason: 'too-many-items', set: 'writes', count: txn.writes.length, max: MAX_TXN_ITEMS };
  }
  if (txn.writes.length === 0) return { reason: 'empty-write-set' };
  const seenReads = new Set<string>();
  for (const read of txn.reads) {
    const problem = placementProblem(read.key, read.shard, limits.shards);
    if (problem) return problem;
    if (seenReads.has(read.key)) return { reason: 'duplicate-key', set: 'reads', key: read.key };
    seenReads.add(read.key);
    if (!(Number.isSafeInteger(read.version) && read.version >= 0)) {
      return { reason: 'invalid-version', key: read.key, version: read.version };
    }
  }
  const seenWrites = new Set<string>();
  for (const write of txn.writes) {
    const problem = placementProblem(write.key, write.shard, limits.shards);
    if (problem) return problem;
    if (seenWrites.has(write.key)) return { reason: 'duplicate-key', set: 'writes', key: write.key };
    seenWrites.add(write.key);
    if (write.value.length > maxValueBytes) {
      return {
        reason: 'value-too-large',
        key: write.key,
        bytes: write.value.length,
        maxBytes: maxValueBytes,
      };
    }
  }
  return undefined;
}

/** Throws DtInvalidTransactionError naming the first problem with `txn`. */
export function validateTransaction(txn: TxnShape, limits: ValidationLimits): void {
  const problem = findTxnProblem(txn, limits);
  if (problem) throw new DtInvalidTransactionError(problem);
}
