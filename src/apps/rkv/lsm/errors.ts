/**
 * The typed errors of RKV's LSM storage engine (iPipe §5 "The applications", RKV: the SSTable
 * reader and compaction actors keep the store's durable state in files on the host).
 *
 * Every one is an `IpipeError` with a stable `IPIPE_ERR_LSM_<WHAT>` code and a message that says
 * what was wrong, which file or directory it concerns, and what to do. Corruption is never
 * "handled" by serving what is left: the engine refuses to open (or to answer a read) and names
 * the file, so an operator can restore it from a replica.
 *
 * The codes are registered in src/errors.ts (ERROR_CODES) and documented in docs/errors.md;
 * `LSM_ERROR_CODES` is this engine's slice of that registry, and `LsmError` narrows `code` to it.
 */

import { type ErrorCode, IpipeError } from '../../../errors.ts';

/** Codes of the LSM engine's errors (each one checked against the registry at compile time). */
export const LSM_ERROR_CODES = [
  'IPIPE_ERR_LSM_INVALID_OPTIONS',
  'IPIPE_ERR_LSM_KEY_TOO_LARGE',
  'IPIPE_ERR_LSM_VALUE_TOO_LARGE',
  'IPIPE_ERR_LSM_INVALID_SEQUENCE',
  'IPIPE_ERR_LSM_LOCKED',
  'IPIPE_ERR_LSM_CORRUPT_TABLE',
  'IPIPE_ERR_LSM_CORRUPT_MANIFEST',
  'IPIPE_ERR_LSM_MISSING_TABLE',
  'IPIPE_ERR_LSM_IO',
  'IPIPE_ERR_LSM_CLOSED',
  'IPIPE_ERR_LSM_UNSORTED_INPUT',
] as const satisfies readonly ErrorCode[];

export type LsmErrorCode = (typeof LSM_ERROR_CODES)[number];

/** Base class: `instanceof LsmError` catches everything the LSM engine throws on purpose. */
export class LsmError extends IpipeError {
  declare readonly code: LsmErrorCode;
  constructor(code: LsmErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** An engine option outside its documented range. */
export class LsmOptionsError extends LsmError {
  /** The option's name, e.g. `blockBytes`. */
  readonly option: string;
  constructor(option: string, message: string) {
    super('IPIPE_ERR_LSM_INVALID_OPTIONS', `LSM option ${option}: ${message}`);
    this.option = option;
  }
}

/** A key longer than the configured `maxKeyBytes`. */
export class LsmKeyTooLargeError extends LsmError {
  readonly keyBytes: number;
  readonly maxKeyBytes: number;
  constructor(keyBytes: number, maxKeyBytes: number) {
    super(
      'IPIPE_ERR_LSM_KEY_TOO_LARGE',
      `key of ${keyBytes} bytes exceeds the limit of ${maxKeyBytes} bytes: use a shorter key or open ` +
        'the store with a larger maxKeyBytes',
    );
    this.keyBytes = keyBytes;
    this.maxKeyBytes = maxKeyBytes;
  }
}

/** A value longer than the configured `maxValueBytes`. */
export class LsmValueTooLargeError extends LsmError {
  readonly valueBytes: number;
  readonly maxValueBytes: number;
  constructor(valueBytes: number, maxValueBytes: number) {
    super(
      'IPIPE_ERR_LSM_VALUE_TOO_LARGE',
      `value of ${valueBytes} bytes exceeds the limit of ${maxValueBytes} bytes: split the value or open ` +
        'the store with a larger maxValueBytes',
    );
    this.valueBytes = valueBytes;
    this.maxValueBytes = maxValueBytes;
  }
}

/** A caller-chosen sequence number that does not exceed every earlier one. */
export class LsmSequenceError extends LsmError {
  constructor(message: string) {
    super('IPIPE_ERR_LSM_INVALID_SEQUENCE', message);
  }
}

/** The data directory is locked by another open store (this process or another one). */
export class LsmDirectoryLockedError extends LsmError {
  readonly directory: string;
  /** The lock holder's process id as written in the LOCK file. */
  readonly holderPid: number;
  constructor(directory: string, holderPid: number, thisProcess: boolean) {
    super(
      'IPIPE_ERR_LSM_LOCKED',
      `data directory ${directory} is in use by ${thisProcess ? 'this process' : 'process'} ${holderPid} ` +
        `(${directory}/LOCK): close that store first${
          thisProcess ? '' : ', or, if no such process runs any more, delete the LOCK file'
        }`,
    );
    this.directory = directory;
    this.holderPid = holderPid;
  }
}

/** An SSTable whose bytes fail a checksum or structure check; nothing is read from it. */
export class LsmCorruptTableError extends LsmError {
  /** Path of the damaged file. */
  readonly file: string;
  constructor(file: string, what: string) {
    super(
      'IPIPE_ERR_LSM_CORRUPT_TABLE',
      `SSTable ${file} is corrupt (${what}): restore the data directory from a replica or a backup`,
    );
    this.file = file;
  }
}

/** The manifest fails its checksum or structure checks; the store refuses to open. */
export class LsmCorruptManifestError extends LsmError {
  readonly file: string;
  constructor(file: string, what: string) {
    super(
      'IPIPE_ERR_LSM_CORRUPT_MANIFEST',
      `manifest ${file} is corrupt (${what}): restore the data directory from a replica or a backup`,
    );
    this.file = file;
  }
}

/** The manifest names a table file that is not in the directory. */
export class LsmMissingTableError extends LsmError {
  readonly file: string;
  constructor(file: string) {
    super(
      'IPIPE_ERR_LSM_MISSING_TABLE',
      `SSTable ${file} is named by the manifest but missing: restore the data directory from a replica ` +
        'or a backup',
    );
    this.file = file;
  }
}

/**
 * A filesystem operation failed (disk full, permissions, I/O error). `cause` holds the system
 * error. A failed flush or compaction changes nothing (it is retried by calling it again). Only a
 * failure of the directory fsync after the manifest's rename leaves the disk uncertain: the tree
 * then reports `needsRecovery` and reloads itself from the directory before its next change.
 */
export class LsmIoError extends LsmError {
  readonly file: string;
  readonly operation: string;
  constructor(operation: string, file: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('IPIPE_ERR_LSM_IO', `${operation} ${file} failed: ${reason}`, { cause });
    this.file = file;
    this.operation = operation;
  }
}

/** A call on a store (or iterator) that was closed, or that refuses changes after a failed commit. */
export class LsmClosedError extends LsmError {
  constructor(message: string) {
    super('IPIPE_ERR_LSM_CLOSED', message);
  }
}

/** Entries handed to a flush that are not in strictly increasing key order (a broken memtable). */
export class LsmUnsortedInputError extends LsmError {
  constructor(message: string) {
    super('IPIPE_ERR_LSM_UNSORTED_INPUT', message);
  }
}

/** Narrowing helper for catch blocks: `if (isLsmError(e, 'IPIPE_ERR_LSM_LOCKED'))`. */
export function isLsmError(value: unknown, code?: LsmErrorCode): value is LsmError {
  return value instanceof LsmError && (code === undefined || value.code === code);
}
