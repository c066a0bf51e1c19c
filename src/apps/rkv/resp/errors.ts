/**
 * Typed errors of the Redis-protocol (RESP2) front of the replicated KV store (issue 5, §2 and §6).
 *
 * Two kinds live here:
 *   - errors the front throws at its caller: limits that make no sense, a port it cannot bind;
 *   - errors a `KvBackend` rejects with to tell the front *why* it cannot answer, which the front
 *     turns into the matching RESP error reply (`-READONLY …`, `-TRYAGAIN …`) instead of a generic
 *     `-ERR`. Any other rejection becomes `-ERR internal error: …`.
 * Malformed client input is not an exception: the parser reports it as a value (see parser.ts).
 */

import { type ErrorCode, IpipeError } from '../../../errors.ts';

/** The codes of this module (registered in src/errors.ts, documented in docs/errors.md). */
export const RESP_ERROR_CODES = [
  'IPIPE_ERR_RESP_INVALID_LIMITS',
  'IPIPE_ERR_RESP_LISTEN',
  'IPIPE_ERR_RESP_NOT_LEADER',
  'IPIPE_ERR_RESP_UNAVAILABLE',
  'IPIPE_ERR_RESP_CLIENT',
  'IPIPE_ERR_RESP_UNSUPPORTED',
  'IPIPE_ERR_RESP_SCAN_CURSOR_EXPIRED',
] as const satisfies readonly ErrorCode[];

/** One of this module's codes. */
export type RespErrorCode = (typeof RESP_ERROR_CODES)[number];

/** Base of the RESP front's errors: `code` is one of `RESP_ERROR_CODES`. */
export class RespError extends IpipeError {
  readonly respCode: RespErrorCode;
  constructor(code: RespErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.respCode = code;
  }
}

/** A limit passed to the parser or the server is not a positive integer, or limits contradict. */
export class RespLimitsError extends RespError {
  /** The limit at fault, e.g. `maxBulkBytes`. */
  readonly limit: string;
  constructor(limit: string, message: string) {
    super('IPIPE_ERR_RESP_INVALID_LIMITS', `RESP limit ${limit}: ${message}`);
    this.limit = limit;
  }
}

/** The server could not listen (port in use, address not available, no permission). */
export class RespListenError extends RespError {
  constructor(host: string, port: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      'IPIPE_ERR_RESP_LISTEN',
      `cannot listen for RESP clients on ${host}:${port} (${why}): pick a free port (0 picks one) ` +
        'or stop whatever holds it',
      { cause },
    );
  }
}

/**
 * A backend rejects with this when the replica it runs on is not the leader. RKV serves both
 * reads (linearizable reads go through the leader) and writes only at the leader, so a follower
 * refuses both. The front answers `-READONLY this replica is not the leader …`: `READONLY` is what
 * Redis replicas answer writes with, and what clients already watch for to follow a fail-over
 * (ioredis's documented `reconnectOnError` recipe matches it).
 */
export class NotLeaderError extends RespError {
  /** Where the leader is, as the client should dial it (`host:port`), when this replica knows. */
  readonly leaderAddress: string | undefined;
  constructor(leaderAddress?: string) {
    super(
      'IPIPE_ERR_RESP_NOT_LEADER',
      leaderAddress === undefined
        ? 'this replica is not the leader and knows no leader yet; retry shortly'
        : `this replica is not the leader; the leader is ${leaderAddress}: send commands there`,
    );
    this.leaderAddress = leaderAddress;
  }
}

/**
 * A backend rejects with this when it cannot answer for now (no quorum, an election under way, a
 * shard migrating): the front answers `-TRYAGAIN <reason>` so the client knows a retry may work.
 */
export class BackendUnavailableError extends RespError {
  constructor(reason: string) {
    super('IPIPE_ERR_RESP_UNAVAILABLE', reason);
  }
}

/**
 * A backend rejects with this when it does not implement what the command asks (a store without
 * deletes or conditional writes): the front answers `-ERR <message>`, not "internal error" — the
 * command is understood, the store behind it cannot do it.
 */
export class BackendUnsupportedError extends RespError {
  constructor(message: string) {
    super('IPIPE_ERR_RESP_UNSUPPORTED', message);
  }
}

/**
 * A SCAN cursor this front gave but no longer keeps (scan-cursors.ts: only the newest
 * MAX_OPEN_SCAN_CURSORS continuations are kept): the scan cannot go on from it and must restart
 * from cursor 0. The front answers `-ERR <message>`.
 */
export class ScanCursorExpiredError extends RespError {
  readonly cursor: string;
  constructor(cursor: string, kept: number) {
    super(
      'IPIPE_ERR_RESP_SCAN_CURSOR_EXPIRED',
      `SCAN cursor ${cursor} expired (this front keeps its newest ${kept} cursors): restart the scan from cursor 0`,
    );
    this.cursor = cursor;
  }
}

/** Why a `RespClient` command failed without a reply from the server. */
export type RespClientFailure = 'connect' | 'closed' | 'timeout' | 'protocol';

/**
 * A `RespClient` command got no reply: the connection could not be made or closed under it (a
 * killed replica), no reply came within the client's timeout, or the server sent bytes that are
 * not RESP2. An error *reply* (`-ERR …`) is not this: it resolves as `{ error }`.
 */
export class RespClientError extends RespError {
  readonly failure: RespClientFailure;
  readonly endpoint: string;
  constructor(failure: RespClientFailure, endpoint: string, detail: string, options?: ErrorOptions) {
    const advice: Record<RespClientFailure, string> = {
      connect: 'check that a RESP server listens there (`ipipe cluster status` lists the ports)',
      closed:
        'the server closed the connection or died; the command may or may not have run — reconnect and retry',
      timeout:
        'the command may or may not have run; retry it, or raise the timeout if the server is just slow',
      protocol: 'the peer is not speaking RESP2; check the port',
    };
    super('IPIPE_ERR_RESP_CLIENT', `RESP ${endpoint}: ${detail}; ${advice[failure]}`, options);
    this.failure = failure;
    this.endpoint = endpoint;
  }
}
