/**
 * Typed errors of the RKV live cluster (`ipipe cluster up rkv`): options, a data directory held by
 * another process, replicas that fail to start, `cluster down` with nothing running, and damaged
 * replica-to-replica frames. Codes `IPIPE_ERR_CLUSTER_*`, documented in docs/errors.md.
 */

import { ClusterStartError, IpipeError } from '../../../errors.ts';

/** A cluster option out of range, or one that contradicts the data directory's recorded shape. */
export class ClusterOptionsError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_CLUSTER_INVALID_OPTIONS', message);
  }
}

/** Another live process (a supervisor or a replica) holds the data directory. */
export class ClusterDataDirInUseError extends IpipeError {
  readonly directory: string;
  readonly holderPid: number;
  constructor(directory: string, holderPid: number, what: string, options?: ErrorOptions) {
    super(
      'IPIPE_ERR_CLUSTER_DATA_DIR_IN_USE',
      `data directory ${directory} is in use by ${what} (process ${holderPid}): stop it first ` +
        `(ipipe cluster down --data-dir ${directory}) or pick another --data-dir`,
      options,
    );
    this.directory = directory;
    this.holderPid = holderPid;
  }
}

/** A replica process exited, or did not report ready in time, while the cluster started. */
export function replicaStartError(replicaId: number, why: string, logPath: string): ClusterStartError {
  return new ClusterStartError(
    replicaId,
    `replica ${replicaId} did not start: ${why}; see its log ${logPath}, fix the cause and start again`,
  );
}

export { ClusterStartError };

/** `cluster down` / `cluster status` found no (readable) cluster state file. */
export class ClusterNotRunningError extends IpipeError {
  constructor(directory: string, why: string) {
    super(
      'IPIPE_ERR_CLUSTER_NOT_RUNNING',
      `no cluster is running from ${directory} (${why}): check --data-dir`,
    );
  }
}

/** A replica-to-replica frame that fails its length or CRC-32 check, or does not decode. */
export class ClusterFrameError extends IpipeError {
  constructor(message: string) {
    super(
      'IPIPE_ERR_CLUSTER_FRAME',
      `replica frame rejected: ${message}; the connection is dropped and dialled again`,
    );
  }
}

/**
 * A client of RKV's actor cluster got no answer from a leader in time: every replica it tried was
 * dead, cut off, or knew no leader (an election that cannot finish without a majority).
 */
export class ClusterUnavailableError extends IpipeError {
  constructor(what: string, ms: number) {
    super(
      'IPIPE_ERR_CLUSTER_UNAVAILABLE',
      `${what}: no replica led and answered within ${ms} ms; check that a majority of the nodes run, then retry`,
    );
  }
}

/**
 * A live RKV replica's durable log (file-storage.ts) cannot be read or written, or is damaged: the
 * replica refuses to start from it rather than serve from it.
 */
export class ClusterStorageError extends IpipeError {
  readonly path: string;
  constructor(path: string, why: string, options?: ErrorOptions) {
    super(
      'IPIPE_ERR_CLUSTER_STORAGE',
      `${path}: ${why}; restore the file from a backup — do not start the replica without it: a durable ` +
        'log that forgets promises it made can break consensus safety',
      options,
    );
    this.path = path;
  }
}

/**
 * A scan page named a next key at or before the key it started from: a scan that went on from it
 * would read the same page for ever (`RkvActorClient.scanAll`, the RESP front's SCAN). A replica
 * answering such a page is a bug in RKV, not something a retry fixes.
 */
export class ClusterScanStalledError extends IpipeError {
  readonly start: Uint8Array;
  readonly next: Uint8Array;
  constructor(start: Uint8Array, next: Uint8Array) {
    super(
      'IPIPE_ERR_CLUSTER_SCAN_STALLED',
      `a scan page from key ${hexOf(start)} names next key ${hexOf(next)}, not past it: the scan would ` +
        'never end; report it as an RKV bug (with the keys) and read the range by another start key',
    );
    this.start = start.slice();
    this.next = next.slice();
  }
}

function hexOf(key: Uint8Array): string {
  return key.length === 0 ? '(empty)' : `0x${Buffer.from(key).toString('hex')}`;
}
