/**
 * The errors a UDP client request can end with (iPipe §3: a client's request to an actor either
 * gets the actor's reply or a reason it did not).
 *
 * They are IpipeErrors with codes in src/errors.ts's registry (docs/errors.md).
 */

import { IpipeError } from '../../../errors.ts';

/** Codes of the network client's errors. */
export const NET_ERROR_CODES = [
  'IPIPE_ERR_NET_TIMEOUT',
  'IPIPE_ERR_NET_REMOTE',
  'IPIPE_ERR_NET_CLOSED',
] as const;

export type NetErrorCode = (typeof NET_ERROR_CODES)[number];

/** Base class: `instanceof NetError` catches every failure of a client request. */
export class NetError extends IpipeError {
  declare readonly code: NetErrorCode;
  constructor(code: NetErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** No reply within the timeout, after every retry. The node may be down, overloaded or unreachable. */
export class RequestTimeoutError extends NetError {
  readonly actorId: number;
  readonly requestId: number;
  /** Copies sent: 1 + retries. */
  readonly attempts: number;
  readonly timeoutMs: number;
  constructor(actorId: number, requestId: number, attempts: number, timeoutMs: number) {
    super(
      'IPIPE_ERR_NET_TIMEOUT',
      `request ${requestId} to actor ${actorId} got no reply after ${attempts} attempt(s) of ${timeoutMs} ms each: ` +
        'check that the node is running at that address, or raise the timeout or retries',
    );
    this.actorId = actorId;
    this.requestId = requestId;
    this.attempts = attempts;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The node answered with an error reply. `remoteCode` is the node's own code (e.g.
 * IPIPE_ERR_ACTOR_UNKNOWN), `remoteMessage` its explanation.
 */
export class RemoteError extends NetError {
  readonly actorId: number;
  readonly requestId: number;
  readonly remoteCode: string;
  readonly remoteMessage: string;
  constructor(actorId: number, requestId: number, remoteCode: string, remoteMessage: string) {
    super(
      'IPIPE_ERR_NET_REMOTE',
      `actor ${actorId} refused request ${requestId}: ${remoteMessage} [${remoteCode}]`,
    );
    this.actorId = actorId;
    this.requestId = requestId;
    this.remoteCode = remoteCode;
    this.remoteMessage = remoteMessage;
  }
}

/** The client was closed while the request waited, or a request was made after `close()`. */
export class ClientClosedError extends NetError {
  constructor(what: string) {
    super('IPIPE_ERR_NET_CLOSED', `${what}: the client is closed; connect a new one`);
  }
}

/** Narrowing helper for catch blocks: `if (isNetError(e, 'IPIPE_ERR_NET_TIMEOUT'))`. */
export function isNetError(value: unknown, code?: NetErrorCode): value is NetError {
  return value instanceof NetError && (code === undefined || value.code === code);
}
