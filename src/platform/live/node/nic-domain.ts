/**
 * What a live node, its admin server and the CLI read from and ask of its NIC domain, whichever
 * thread owns the UDP socket: the controller (NicController, `ingress: 'controller'`) or NIC core
 * 0 (SocketCoreController, `ingress: 'core'`; docs/live-echo-path.md).
 */

import type { ActorTable } from '../../../actor/actor-table.ts';
import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { ActorId } from '../../../ids.ts';
import type { SchedulerPolicy } from '../../../sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../../../sched/settings.ts';
import type { Decision, Domain } from '../../../sched/types.ts';
import type { CatalogEntry } from './actor-catalog.ts';
import type { LinkSendingStats } from './channel-link.ts';
import type { CoreRingStats } from './domain-cores.ts';
import type { LiveMigrationRecord, MigrationCount } from './nic-migration.ts';
import type { RecentLog } from './recent-log.ts';

/**
 * What a live node gives its NIC domain, whichever controller runs it (LiveNode builds one set
 * for both); each controller's options add what only it uses.
 */
export interface NicDomainOptions {
  readonly catalog: readonly CatalogEntry[];
  readonly definitions: ReadonlyMap<ActorId, AnyActorDefinition>;
  readonly initialDomain: ReadonlyMap<ActorId, Domain>;
  readonly port: number;
  readonly address: string;
  readonly policy: SchedulerPolicy;
  readonly scheduler: Partial<SchedulerSettings>;
  readonly regionBytes: number;
  readonly maxActors: number;
  readonly watchdogMs: number;
  readonly ingressLimit: number;
  readonly maxFrameBytes: number;
  readonly ringBytes: number;
  /** This node's id in its cluster (catalog entries with another `node` live elsewhere). */
  readonly nodeId: number;
}

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
  /** Every reason `drops` may count (drop-reasons.ts): /metrics exports each from 0. */
  readonly dropReasons: readonly string[];
  readonly executed: ReadonlyMap<ActorId, { readonly nic: number; readonly host: number }>;
  readonly migrations: RecentLog<LiveMigrationRecord>;
  readonly decisions: RecentLog<Decision>;
  readonly migrationCounts: ReadonlyMap<string, MigrationCount>;
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
