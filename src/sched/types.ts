/**
 * Shared types of the scheduler policy: what a request must tell the scheduler, what the
 * scheduler hands back to a core, and the decisions it takes (iPipe §4.2, Algorithms 1 and 2).
 */

import type { ActorId } from '../ids.ts';

/** The two sides of a node. */
export type Domain = 'nic' | 'host';

/** What the scheduler needs to know of a request; platforms pass their own richer objects. */
export interface SchedRequest {
  readonly actor: ActorId;
  readonly sizeBytes: number;
  /** When the request entered the NIC, so latency includes all queueing. */
  readonly arrivalNs: number;
}

/** Where an actor's requests currently go. */
export type ActorMode =
  /** run to completion by FCFS cores from the shared queue */
  | 'fcfs'
  /** queued in its mailbox and served by DRR cores */
  | 'drr'
  /** lives on the host; NIC cores forward its requests over the channel */
  | 'host'
  /** between Prepare and Clean: its requests are buffered */
  | 'migrating'
  /** stopped (watchdog, isolation, delete): its requests are refused */
  | 'deregistered';

export type CoreRole = 'fcfs' | 'drr';

/** Why a request was not delivered to an actor. */
export type DropReason = 'unknown-actor' | 'deregistered';

/**
 * One step of a core's work, handed out by `takeFcfs` / `takeDrr`. Every request leaves the
 * shared queue as exactly one of these, so a platform can charge each step's cost to the core
 * that took it and publish it as an inspection event. Read it before the core's next take: the
 * `exec` step is one object per core, reused (the hot path allocates nothing per request).
 */
export type Work<R extends SchedRequest> =
  /** run `actor.exec` on this core, then call `complete` */
  | { readonly kind: 'exec'; readonly request: R }
  /** send over the NIC→host channel: the actor lives on the host */
  | { readonly kind: 'forward'; readonly request: R }
  /** pushed into the actor's mailbox (a DRR actor, or an exclusive actor busy on another core) */
  | { readonly kind: 'mailbox'; readonly request: R }
  /** held for an actor that is migrating; released by `finishMigration` */
  | { readonly kind: 'buffered'; readonly request: R }
  /** refused: the platform answers the requester with a typed error */
  | { readonly kind: 'drop'; readonly request: R; readonly reason: DropReason };

/** What the management core (or a DRR core) decided and the numbers that made it decide. */
export type Decision =
  | {
      readonly kind: 'downgrade';
      readonly actor: ActorId;
      readonly atNs: number;
      readonly fcfsTailNs: number;
      readonly tailThreshNs: number;
      readonly dispersionNs: number;
      readonly why: string;
    }
  | {
      readonly kind: 'upgrade';
      readonly actor: ActorId;
      readonly atNs: number;
      readonly fcfsTailNs: number;
      readonly dispersionNs: number;
      readonly bandNs: number;
      readonly why: string;
    }
  | {
      readonly kind: 'migrate';
      readonly actor: ActorId;
      readonly to: Domain;
      readonly atNs: number;
      readonly trigger: 'mean-latency' | 'mailbox-length' | 'pull-headroom';
      readonly loadCores: number;
      readonly why: string;
    }
  | {
      readonly kind: 'scale';
      readonly cores: readonly number[];
      readonly from: CoreRole;
      readonly to: CoreRole;
      readonly atNs: number;
      readonly fcfsUtilization: number;
      readonly drrUtilization: number;
      readonly why: string;
    };

/** Per-actor statistics as the scheduler sees them (for reports, dashboards and tests). */
export interface ActorSchedView {
  readonly id: ActorId;
  readonly mode: ActorMode;
  readonly execMeanNs: number;
  readonly execStdDevNs: number;
  /** µᵢ + 3σᵢ of the execution latency. */
  readonly dispersionNs: number;
  readonly meanRequestBytes: number;
  readonly ratePerSec: number;
  /** µᵢ × rate, in cores' worth of NIC time. */
  readonly loadCores: number;
  readonly mailboxLength: number;
  readonly bufferedLength: number;
  readonly deficitNs: number;
  readonly executed: number;
}

export interface CoreSchedView {
  readonly id: number;
  readonly role: CoreRole;
  readonly utilization: number;
  readonly busy: boolean;
}

export interface SchedulerView {
  readonly atNs: number;
  readonly fcfs: {
    readonly meanNs: number;
    readonly tailNs: number;
    readonly utilization: number;
    readonly cores: number;
  };
  readonly drr: {
    readonly meanNs: number;
    readonly tailNs: number;
    readonly utilization: number;
    readonly cores: number;
  };
  readonly sharedQueueLength: number;
  readonly actors: readonly ActorSchedView[];
  readonly cores: readonly CoreSchedView[];
}
