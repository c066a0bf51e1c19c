/**
 * The hybrid scheduler as pure policy (iPipe §4.2). Value exports first, then types.
 */

/** EWMA mean/deviation/tail and the windowed EWMA for rates and utilisation. */
export { Ewma, WindowedEwma } from './ewma.ts';
export type { HybridSchedulerOptions, SchedActorRegistration, SchedulerPolicy } from './hybrid-scheduler.ts';
/** The scheduler: queues, FCFS/DRR groups, decisions, migration hooks. */
export { HybridScheduler } from './hybrid-scheduler.ts';
export type { QuantumRule, SchedulerSettings } from './settings.ts';
/** Defaults (with reasons, see docs/scheduler.md) and validation of settings. */
export { DEFAULT_SCHEDULER_SETTINGS, resolveSchedulerSettings } from './settings.ts';
export type {
  ActorMode,
  ActorSchedView,
  CoreRole,
  CoreSchedView,
  Decision,
  Domain,
  DropReason,
  SchedRequest,
  SchedulerView,
  Work,
} from './types.ts';
