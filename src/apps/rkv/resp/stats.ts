/**
 * The RESP front's counters: connections, commands, error replies, and protocol errors by reason
 * (issue 5, §6: malformed input is counted, not just refused). Plain numbers bumped in place on
 * the hot path; `snapshot()` copies them out for `stats()`, INFO and the admin metrics.
 */

import { PROTOCOL_VIOLATION_REASONS, type ProtocolViolationReason } from './parser.ts';

/**
 * Why a connection was closed for what it sent: a parser violation, or `cross-protocol` — a line
 * that starts like HTTP (`POST`, `Host:`), which Redis also closes on sight, without a reply, since
 * it is how a browser page attacks a Redis port.
 */
export type ProtocolErrorReason = ProtocolViolationReason | 'cross-protocol';

/** A copy of the counters at one moment. */
export interface RespServerStats {
  /** Connections accepted since start (including those then refused for `maxConnections`). */
  readonly connectionsAccepted: number;
  /** Connections refused with `-ERR max number of clients reached`. */
  readonly connectionsRejected: number;
  /** Connections open now. */
  readonly connectionsOpen: number;
  /** Commands parsed and dispatched (unknown ones included). */
  readonly commandsProcessed: number;
  /** Error replies sent (`-ERR`, `-READONLY`, `-TRYAGAIN`, protocol errors…). */
  readonly errorReplies: number;
  /** Commands answered `-ERR unknown command`. */
  readonly unknownCommands: number;
  /** Backend rejections answered `-READONLY` (this replica is not the leader). */
  readonly notLeaderReplies: number;
  /** Backend rejections answered `-TRYAGAIN`. */
  readonly unavailableReplies: number;
  /** Other backend failures, answered `-ERR internal error: …`. */
  readonly backendErrors: number;
  /** Connections closed for malformed input, by reason. */
  readonly protocolErrors: Readonly<Record<ProtocolErrorReason, number>>;
  /** Sum of `protocolErrors`. */
  readonly protocolErrorsTotal: number;
  /** Times a connection stopped being read for back-pressure (too many commands in flight, or a client not reading its replies). */
  readonly readPauses: number;
  /** Socket errors (resets, broken pipes). */
  readonly socketErrors: number;
  readonly bytesReceived: number;
  readonly bytesSent: number;
}

/** Every reason a connection can be closed for its input. */
export const PROTOCOL_ERROR_REASONS: readonly ProtocolErrorReason[] = [
  ...PROTOCOL_VIOLATION_REASONS,
  'cross-protocol',
];

/** Mutable counters, owned by one server. */
export class RespCounters {
  connectionsAccepted = 0;
  connectionsRejected = 0;
  connectionsOpen = 0;
  commandsProcessed = 0;
  errorReplies = 0;
  unknownCommands = 0;
  notLeaderReplies = 0;
  unavailableReplies = 0;
  backendErrors = 0;
  readPauses = 0;
  socketErrors = 0;
  bytesReceived = 0;
  bytesSent = 0;
  readonly protocolErrors: Record<ProtocolErrorReason, number> = Object.fromEntries(
    PROTOCOL_ERROR_REASONS.map((reason) => [reason, 0]),
  ) as Record<ProtocolErrorReason, number>;

  snapshot(): RespServerStats {
    const protocolErrors = { ...this.protocolErrors };
    let protocolErrorsTotal = 0;
    for (const reason of PROTOCOL_ERROR_REASONS) protocolErrorsTotal += protocolErrors[reason];
    return {
      connectionsAccepted: this.connectionsAccepted,
      connectionsRejected: this.connectionsRejected,
      connectionsOpen: this.connectionsOpen,
      commandsProcessed: this.commandsProcessed,
      errorReplies: this.errorReplies,
      unknownCommands: this.unknownCommands,
      notLeaderReplies: this.notLeaderReplies,
      unavailableReplies: this.unavailableReplies,
      backendErrors: this.backendErrors,
      protocolErrors,
      protocolErrorsTotal,
      readPauses: this.readPauses,
      socketErrors: this.socketErrors,
      bytesReceived: this.bytesReceived,
      bytesSent: this.bytesSent,
    };
  }
}
