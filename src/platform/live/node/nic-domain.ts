/**
 * What a live node, its admin server and the CLI read from and ask of its NIC domain, whichever
 * thread owns the UDP socket: the controller (NicController, `ingress: 'controller'`) or NIC core
 * 0 (SocketCoreController, `ingress: 'core'`; docs/live-echo-path.md).
 */

import type { ActorTable } from '../../../actor/actor-table.ts';
import type { ActorId } from '../../../ids.ts';
import type { Decision, Domain } from '../../../sched/types.ts';
import type { LinkSendingStats } from './channel-link.ts';
import type { CoreRingStats } from './domain-cores.ts';
import type { LiveMigrationRecord } from './nic-controller.ts';
import type { RecentLog } from './recent-log.ts';

export interface NicDomain {
  readonly table: ActorTable;
  readonly address: { readonly address: string; readonly port: number };
  readonly requests: number;
  readonly replies: number;
  readonly errorReplies: number;
  readonly duplicates: number;
  /** Nanoseconds of handler execution on each side since start. */
  readonly handlerNs: { readonly nic: number; readonly host: number };
  readonly peerFramesSent: number;
  readonly peerFramesReceived: number;
  readonly relayedReplies: number;
  readonly peerMessagesFragmented: number;
  readonly peerFragmentsSent: number;
  readonly peerFragmentsReceived: number;
  readonly maxPeerMessageBytes: number;
  readonly reassembler: { readonly messagesRebuilt: number; readonly bytesHeld: number };
  /** Frames and requests refused, by reason. */
  readonly drops: ReadonlyMap<string, number>;
  readonly executed: ReadonlyMap<ActorId, { readonly nic: number; readonly host: number }>;
  readonly migrations: RecentLog<LiveMigrationRecord>;
  readonly decisions: RecentLog<Decision>;
  readonly migrationCounts: ReadonlyMap<
    string,
    { readonly actor: string; readonly to: Domain; count: number }
  >;
  readonly replacedCores: number;
  readonly ringFullHandOffs: number;
  /** True when the NIC holds no request and no migration is under way. */
  readonly idle: boolean;
  /** Each scheduler decision as it is taken. */
  onDecision: ((decision: Decision) => void) | undefined;
  /** Seconds from a request's arrival to its reply, per actor (for metrics). */
  onReplyLatency: ((actor: ActorId, seconds: number) => void) | undefined;
  /** Each NIC core's rings (bytes waiting, hand-offs). */
  ringStats(): readonly CoreRingStats[];
  /** The NIC→host direction of the channel between the domains (bytes unread, backlog, capacity). */
  hostChannelStats(): LinkSendingStats;
  /** Requests the NIC scheduler holds (shared queue, mailboxes, migration buffers, running). */
  heldRequests(): number;
  /** NIC cores by scheduler role. */
  coreRoles(): { readonly fcfs: number; readonly drr: number };
  domainOf(actor: ActorId): Domain | 'migrating';
  migrate(actor: ActorId, to: Domain, trigger?: string): Promise<LiveMigrationRecord>;
  /** Stops taking requests (they are answered IPIPE_ERR_NODE_STOPPED). */
  beginStop(): void;
  stop(): Promise<void>;
}
