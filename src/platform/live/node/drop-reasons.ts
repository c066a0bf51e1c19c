/**
 * The reasons a live node counts drops under (/stats `drops`, /metrics `ipipe_drops_total`), one
 * list per counter. /metrics exports every listed reason from the start, at 0, so a dashboard or an
 * alert can tell "nothing dropped" from "not exported"; each counter takes only its own list's type,
 * so a reason cannot be counted without being listed here. (The socket-owning NIC core's list is
 * SOCKET_CORE_DROP_REASONS: it also lays out that core's counter slots.)
 */

import { FRAGMENT_DROP_REASONS } from '../net/fragments.ts';
import { DROP_REASONS } from '../net/wire.ts';

/** What NicController (`ingress: 'controller'`) counts. */
export const NIC_CONTROLLER_DROP_REASONS = Object.freeze([
  // A receiver's: the wire's reasons, and a frame going the wrong way.
  ...DROP_REASONS,
  ...FRAGMENT_DROP_REASONS,
  // The scheduler's (sched/types.ts DropReason), and the node's own.
  'unknown-actor',
  'deregistered',
  'remote-actor',
  'ingress-full',
  'stopping',
  'socket-closed',
  'peer-unknown',
  'peer-malformed',
  'peer-too-large',
  'peer-unknown-node',
  'relay-unknown-client',
  'decode',
  'handler-failed',
  'malformed-result',
  'host-unreachable',
  'placement-mismatch',
  'channel-unknown-message',
  'stray-image',
  'corrupt-image',
  'watchdog',
] as const);

export type NicControllerDropReason = (typeof NIC_CONTROLLER_DROP_REASONS)[number];

/** What SocketCoreController counts itself, beside what its core counts (SOCKET_CORE_DROP_REASONS). */
export const SOCKET_CORE_CONTROLLER_DROP_REASONS = Object.freeze([
  'decode',
  'malformed-result',
  'failed-result',
  'stray-prepared',
  'channel-unknown-message',
  'stray-image',
  'corrupt-image',
  'watchdog',
  'core-exited',
] as const);

export type SocketCoreControllerDropReason = (typeof SOCKET_CORE_CONTROLLER_DROP_REASONS)[number];

/** What HostController counts (a node reports them prefixed `host-`). */
export const HOST_DROP_REASONS = Object.freeze([
  'unanswerable-refusal',
  'stray-image',
  'corrupt-image',
] as const);

export type HostDropReason = (typeof HOST_DROP_REASONS)[number];
