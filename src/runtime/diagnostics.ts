/**
 * The runtime's inspection stream: typed events on named `node:diagnostics_channel` channels
 * (`ipipe:*`). Metrics, packet traces, reports and the dashboard subscribe to this one stream;
 * publishing checks `hasSubscribers` first, so nothing is built when no one listens.
 */

import diagnostics_channel from 'node:diagnostics_channel';
import type { ActorId } from '../ids.ts';
import type { Domain } from '../sched/types.ts';

/** A scheduler decision with its reason (downgrade, upgrade, migrate, scale). */
export interface DecisionEvent {
  readonly node: number;
  readonly atNs: number;
  readonly kind: string;
  readonly actor?: ActorId;
  readonly why: string;
}

/** One migration phase begun or ended. */
export interface MigrationPhaseEvent {
  readonly node: number;
  readonly actor: ActorId;
  readonly phase: MigrationPhase;
  readonly edge: 'begin' | 'end';
  readonly atNs: number;
  readonly from: Domain;
  readonly to: Domain;
}

/** A request or frame that was refused, and why. */
export interface DropEvent {
  readonly node: number;
  readonly atNs: number;
  readonly reason: string;
  readonly actor?: ActorId;
}

/** A request executed by an actor (published per request: subscribe only when tracing). */
export interface ExecutedEvent {
  readonly node: number;
  readonly actor: ActorId;
  readonly domain: Domain;
  readonly core: number;
  readonly startNs: number;
  readonly endNs: number;
}

export type MigrationPhase = 'prepare' | 'ready' | 'gone' | 'clean';

export const channels = {
  decision: diagnostics_channel.channel('ipipe:sched:decision'),
  migration: diagnostics_channel.channel('ipipe:migration:phase'),
  drop: diagnostics_channel.channel('ipipe:drop'),
  executed: diagnostics_channel.channel('ipipe:request:executed'),
} as const;

export function publishDecision(event: DecisionEvent): void {
  if (channels.decision.hasSubscribers) channels.decision.publish(event);
}

export function publishMigrationPhase(event: MigrationPhaseEvent): void {
  if (channels.migration.hasSubscribers) channels.migration.publish(event);
}

export function publishDrop(event: DropEvent): void {
  if (channels.drop.hasSubscribers) channels.drop.publish(event);
}

/** True when someone traces executions (callers skip building the event otherwise). */
export function tracingExecutions(): boolean {
  return channels.executed.hasSubscribers;
}

export function publishExecuted(event: ExecutedEvent): void {
  channels.executed.publish(event);
}
