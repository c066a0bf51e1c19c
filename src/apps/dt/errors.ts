/**
 * The typed errors of the distributed-transactions application (iPipe §5 "DT"; FaSST's OCC +
 * 2PC). Only what a caller must fix throws: a malformed transaction, a coordinator log that is
 * corrupt in the middle, a log file the system cannot read or write, a transaction handle used
 * after it finished. Expected outcomes — an abort on a lock conflict, a version change, a timeout —
 * are discriminated unions (`TxnOutcome`), never exceptions.
 *
 * Codes follow the registry's `IPIPE_ERR_<AREA>_<WHAT>` shape; they are registered in
 * src/errors.ts's `ERROR_CODES` and documented in docs/errors.md.
 */

import { IpipeError } from '../../errors.ts';

/** The DT codes (each also in `ERROR_CODES`). */
export const DT_ERROR_CODES = [
  'IPIPE_ERR_DT_INVALID_TRANSACTION',
  'IPIPE_ERR_DT_LOG_CORRUPT',
  'IPIPE_ERR_DT_LOG_IO',
  'IPIPE_ERR_DT_TRANSACTION_STATE',
] as const;

/** One of DT_ERROR_CODES. */
export type DtErrorCode = (typeof DT_ERROR_CODES)[number];

/**
 * Why a transaction is malformed. Narrow on `reason`; every variant names the offending key or
 * count so the message can say what to change.
 */
export type TxnProblem =
  | { readonly reason: 'empty-write-set' }
  | { readonly reason: 'duplicate-key'; readonly set: 'reads' | 'writes'; readonly key: string }
  | {
      readonly reason: 'unknown-shard';
      readonly key: string;
      readonly shard: number;
      readonly shardCount: number;
    }
  | {
      readonly reason: 'wrong-shard';
      readonly key: string;
      readonly shard: number;
      readonly expected: number;
    }
  | { readonly reason: 'invalid-key'; readonly key: string; readonly detail: string }
  | {
      readonly reason: 'value-too-large';
      readonly key: string;
      readonly bytes: number;
      readonly maxBytes: number;
    }
  | {
      readonly reason: 'too-many-items';
      readonly set: 'reads' | 'writes';
      readonly count: number;
      readonly max: number;
    }
  | { readonly reason: 'invalid-version'; readonly key: string; readonly version: number };

/** A one-line description of a problem, as the coordinator sends it back in an `invalid` outcome. */
export function describeTxnProblem(problem: TxnProblem): string {
  switch (problem.reason) {
    case 'empty-write-set':
      return 'the write set is empty: a DT transaction must write at least one key (FaSST read-only transactions are not offered)';
    case 'duplicate-key':
      return `key ${JSON.stringify(problem.key)} appears twice in the ${problem.set}: list each key once`;
    case 'unknown-shard':
      return `key ${JSON.stringify(problem.key)} names shard ${problem.shard}, but the cluster has ${problem.shardCount} shard(s) (0..${problem.shardCount - 1}): check the client's shard count`;
    case 'wrong-shard':
      return `key ${JSON.stringify(problem.key)} was sent to shard ${problem.shard} but belongs to shard ${problem.expected}: use the cluster's shard map`;
    case 'invalid-key':
      return `key ${JSON.stringify(problem.key)} is not usable: ${problem.detail}`;
    case 'value-too-large':
      return `the value for key ${JSON.stringify(problem.key)} is ${problem.bytes} bytes; the limit is ${problem.maxBytes}`;
    case 'too-many-items':
      return `the ${problem.set} hold ${problem.count} keys; at most ${problem.max} are allowed per transaction`;
    case 'invalid-version':
      return `the read of key ${JSON.stringify(problem.key)} carries version ${problem.version}; versions are integers ≥ 0`;
  }
}

/** A malformed transaction (refused by the client library before sending, or by the coordinator). */
export class DtInvalidTransactionError extends IpipeError {
  readonly problem: TxnProblem;
  constructor(problem: TxnProblem) {
    super('IPIPE_ERR_DT_INVALID_TRANSACTION', `invalid transaction: ${describeTxnProblem(problem)}`);
    this.problem = problem;
  }
}

/**
 * The coordinator log is damaged in the middle: a record fails its checksum (or framing) and valid
 * records follow it. Truncating there would silently drop records that were fsynced — commits that
 * may have been acknowledged — so recovery refuses. Restore the file from a replica or backup, or
 * accept the loss explicitly with the `discard-after-corruption` recovery policy.
 */
export class DtLogCorruptError extends IpipeError {
  /** Byte offset of the first bad record. */
  readonly offset: number;
  /** Why that record is bad. */
  readonly reason: string;
  /** Valid-looking records found after the damage (what truncation would lose). */
  readonly recordsAfter: number;
  constructor(offset: number, reason: string, recordsAfter: number, source: string) {
    super(
      'IPIPE_ERR_DT_LOG_CORRUPT',
      `coordinator log ${source} is corrupt at byte ${offset} (${reason}) and ${recordsAfter} valid record(s) follow: ` +
        'refusing to truncate committed records; restore the file, or start with ' +
        "recovery policy 'discard-after-corruption' to accept losing them",
    );
    this.offset = offset;
    this.reason = reason;
    this.recordsAfter = recordsAfter;
  }
}

/** Reading, writing or syncing the coordinator log file failed (disk full, permissions, I/O error). */
export class DtLogIoError extends IpipeError {
  readonly path: string;
  constructor(path: string, operation: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      'IPIPE_ERR_DT_LOG_IO',
      `coordinator log ${path}: ${operation} failed (${detail}); check the path, its permissions and free space`,
      { cause },
    );
    this.path = path;
  }
}

/** A transaction handle used out of order: read/write after commit, a second commit, two at once. */
export class DtTransactionStateError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_DT_TRANSACTION_STATE', message);
  }
}
