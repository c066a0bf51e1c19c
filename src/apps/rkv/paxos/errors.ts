/**
 * Typed errors of RKV's consensus layer (Multi-Paxos replica, its storage) and of the correctness
 * kit that checks it (linearizability checker, simulation harness).
 *
 * Expected outcomes are not errors here: a rejected ballot is a `reject` message, a torn log tail
 * is a `RecoveryReport`, a non-linearizable history is a `CheckResult`. These classes are for
 * input the caller must fix (bad configuration, a malformed history, a file that is not a Paxos
 * log) and for invariants that must never break (a chosen slot changing value).
 *
 * The codes follow the registry's `IPIPE_ERR_<AREA>_<WHAT>` scheme with area `PAXOS`; they are
 * members of `ERROR_CODES` (src/errors.ts) and documented in docs/errors.md.
 */

import { type ErrorCode, IpipeError } from '../../../errors.ts';

/** Every code this area throws (a subset of `ERROR_CODES`: `satisfies` checks it). */
export const PAXOS_ERROR_CODES = [
  'IPIPE_ERR_PAXOS_INVALID_CONFIG',
  'IPIPE_ERR_PAXOS_INVALID_TIME',
  'IPIPE_ERR_PAXOS_SAFETY_VIOLATION',
  'IPIPE_ERR_PAXOS_STORAGE_CORRUPT',
  'IPIPE_ERR_PAXOS_STORAGE_IO',
  'IPIPE_ERR_PAXOS_SIMULATED_CRASH',
  'IPIPE_ERR_PAXOS_INVALID_HISTORY',
] as const satisfies readonly ErrorCode[];

export type PaxosErrorCode = (typeof PAXOS_ERROR_CODES)[number];

/** Base of this area's errors: `instanceof PaxosError` catches all of them. */
export class PaxosError extends IpipeError {
  constructor(code: PaxosErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** A replica configuration that cannot work (no majority possible, timeouts out of order, ...). */
export class PaxosConfigError extends PaxosError {
  constructor(message: string) {
    super('IPIPE_ERR_PAXOS_INVALID_CONFIG', `invalid Paxos configuration: ${message}`);
  }
}

/** The host passed a time earlier than one it passed before, or one that is not a finite integer. */
export class PaxosTimeError extends PaxosError {
  constructor(nowNs: number, lastNs: number) {
    super(
      'IPIPE_ERR_PAXOS_INVALID_TIME',
      `replica time must be a non-decreasing integer number of ns: got ${nowNs} after ${lastNs}; ` +
        'pass the host clock (monotonic) to every handle() call',
    );
  }
}

/**
 * A consensus safety invariant broke: two different commands for one chosen slot, or a log
 * applied out of order. Never expected; it means a bug (or a deliberately broken variant in tests).
 */
export class PaxosSafetyError extends PaxosError {
  constructor(message: string) {
    super('IPIPE_ERR_PAXOS_SAFETY_VIOLATION', `Paxos safety violated: ${message}`);
  }
}

/**
 * A storage file that is not a Paxos log (wrong magic), or whose valid records are interrupted by
 * damage that a crash cannot leave (a torn write only ever damages the last sync's frame). The
 * replica refuses to start on it: dropping records would make it forget promises and accepts.
 */
export class PaxosStorageCorruptError extends PaxosError {
  readonly path: string;
  constructor(path: string, message: string) {
    super(
      'IPIPE_ERR_PAXOS_STORAGE_CORRUPT',
      `${path}: ${message}; refusing to start on it. Restore the file from a backup (starting this ` +
        'replica empty instead makes it forget promises it gave, which can undo a chosen value)',
    );
    this.path = path;
  }
}

/** A storage operation the operating system refused (disk full, permissions). */
export class PaxosStorageIoError extends PaxosError {
  readonly path: string;
  constructor(path: string, operation: string, cause: unknown) {
    super('IPIPE_ERR_PAXOS_STORAGE_IO', `${path}: ${operation} failed: ${String(cause)}`, { cause });
    this.path = path;
  }
}

/**
 * Thrown by the in-memory storage when a simulation arms a crash inside `sync()`: the replica that
 * was persisting dies mid-handle, its outputs never leave, and only part of its writes survived.
 */
export class PaxosSimulatedCrash extends PaxosError {
  constructor(survivingRecords: number, lostRecords: number) {
    super(
      'IPIPE_ERR_PAXOS_SIMULATED_CRASH',
      `simulated crash during sync: ${survivingRecords} record(s) reached storage, ${lostRecords} lost`,
    );
  }
}

/** A history the linearizability checker cannot read (a return before its call, a NaN time). */
export class HistoryError extends PaxosError {
  constructor(message: string) {
    super('IPIPE_ERR_PAXOS_INVALID_HISTORY', `invalid history: ${message}`);
  }
}
