/**
 * The hybrid scheduler's knobs (iPipe §4.2, Algorithms 1 and 2), each with its default and why.
 *
 * The paper fixes only where Mean_thresh and Tail_thresh come from (the mean and p99 latency of
 * plain forwarding at the MTU size at which the NIC sustains line rate) and leaves α, Q_thresh and
 * the EWMA weights open. Everything here is validated by a zod schema; a bad value is a
 * SchedulerSettingsError that names the field and the constraint.
 */

import { z } from 'zod';
import { SchedulerSettingsError } from '../errors.ts';

/** How a DRR actor's quantum is chosen. */
export type QuantumRule =
  /** quantum = headroom(actor's mean request size), from the platform's hardware profile (the paper's rule). */
  | 'headroom'
  /** quantum = `fixedQuantumNs` for every actor (for experiments that isolate DRR from the profile). */
  | 'fixed';

export interface SchedulerSettings {
  /** Mean_thresh: FCFS mean latency (incl. queueing) above which the most loaded actor is pushed to the host. */
  readonly meanThreshNs: number;
  /** Tail_thresh: FCFS tail (µ+3σ) above which the highest-dispersion actor is downgraded to DRR. */
  readonly tailThreshNs: number;
  /** α: the hysteresis band; upgrade/pull happen only below (1−α)·threshold. */
  readonly alpha: number;
  /** Q_thresh: a DRR actor whose mailbox holds more than this many requests is pushed to the host. */
  readonly queueThresh: number;
  /** Weight of the newest sample in the group latency EWMAs (FCFS/DRR µ, σ, tail). */
  readonly latencyEwmaWeight: number;
  /** Weight of the newest sample in each actor's EWMAs (execution µᵢ, σᵢ, dispersion, request size). */
  readonly actorEwmaWeight: number;
  /**
   * Weight of the newest window in the per-window EWMAs of rates and utilisation; also the least
   * share of the FCFS latency mean that each window's reading takes (its bound in time, so the
   * mean is as current as the rates and utilisation it is read with; docs/scheduler.md, 9).
   */
  readonly windowEwmaWeight: number;
  /** Length of a statistics window (invocation rates, core utilisation). */
  readonly windowNs: number;
  /** After a decision, the same kind of decision waits this long so the statistics can show its effect. */
  readonly settleNs: number;
  /** Which rule sets DRR quanta. */
  readonly quantumRule: QuantumRule;
  /** Quantum for `quantumRule: 'fixed'`, and the fallback when the platform supplies no headroom. */
  readonly fixedQuantumNs: number;
  /** DRR group utilisation at or above which a FCFS core is moved to DRR (the paper's 95% rule). */
  readonly scaleUpUtilization: number;
  /** Which FCFS core is the management core (the paper uses FCFS core 0). */
  readonly managementCoreId: number;
  /**
   * Requests a core may hold at once: the one it runs and those handed to it to run next, in
   * order. 1 is the paper's model (a core takes work only when idle). A platform whose hand-off to
   * a core costs far more than a short handler (the live platform: a doorbell and an event-loop
   * turn per request) sets more, so one hand-off carries a batch. Only FCFS cores hold more than
   * one (a DRR visit is charged as requests complete), and an exclusive actor's requests are held
   * by one core at a time, which runs them in order.
   */
  readonly coreQueueDepth: number;
  /**
   * FCFS completions the node must have served before a push on mean latency (Algorithm 1) may
   * act; 0 acts from the first. Where the first requests are not representative — the live
   * platform's handlers run cold at first (module loading, the JIT: 4.8 ms for an echo whose
   * steady state is ~10 µs) — one of them alone carries the young mean over Mean_thresh and pushes
   * an actor that was never overloaded (and a NIC domain of one FCFS core never pulls it back).
   */
  readonly pushWarmupCompletions: number;
  /** Master switches, so experiments can run FCFS-only, DRR-only or without migration. */
  readonly enableDowngrade: boolean;
  readonly enableMigration: boolean;
  readonly enableAutoscale: boolean;
}

/**
 * Defaults. The two thresholds default to the LiquidIO CN2350 (10 GbE) forwarding figures at the
 * 1500 B MTU with 12 cores (Fig 5: average 39.4 µs, p99 73.6 µs) — the paper's rule applied to its
 * main card; platforms replace them with their own profile's forwarding figures.
 */
export const DEFAULT_SCHEDULER_SETTINGS: SchedulerSettings = Object.freeze({
  meanThreshNs: 39_400,
  tailThreshNs: 73_600,
  // A 20% band: wide enough that EWMA noise around one threshold (σ/µ of a few percent at
  // the weights below) cannot cross both edges, narrow enough to react within one settle period.
  alpha: 0.2,
  // 64 waiting requests at the paper's 32 µs mean cost is ~2 ms of backlog: past that, a DRR
  // actor cannot catch up by its quantum alone and is better served by host cores.
  queueThresh: 64,
  // 1/256: group latency includes queueing, which is strongly correlated within a burst. At
  // 1/16 and 1/64 ordinary Poisson bursts at 62-80% load carried the FCFS mean over Mean_thresh
  // and back, and actors were pushed and pulled every few ms (test/sched/migration-decisions);
  // at 1/256 the estimate turns over in ~256 requests (about 1 ms at 250 k requests/s), well
  // inside the 2 ms settle period, and the same scenarios take exactly the one decision they need.
  latencyEwmaWeight: 1 / 256,
  // 1/128: an actor's dispersion is often made by rare expensive requests (a few percent). With
  // 1/16 the estimate decays below the upgrade band during an ordinary run of cheap requests
  // between two expensive ones, and the actor flapped between FCFS and DRR every few ms
  // (test/sched/downgrade-upgrade.test.ts, 5% at 200 µs); at 1/128 the estimate needs ~370 cheap
  // requests in a row to fall that far (probability ~1e-8 at 5%), yet still follows a real change
  // within a few thousand requests.
  actorEwmaWeight: 1 / 128,
  // 1/32 per 100 µs window: a ~3 ms time constant, i.e. ~100 requests at the paper's 32 µs mean
  // cost. With 1/4 (0.4 ms) a single 200 µs request pushed a core's utilisation past the 95%
  // auto-scaling line on its own.
  windowEwmaWeight: 1 / 32,
  // 100 µs windows: thousands of windows per simulated second, each still holding tens of
  // requests per core at the paper's loads.
  windowNs: 100_000,
  // 2 ms: long enough for the latency EWMA (1/256 per completion: ~1 ms at 250 k requests/s;
  // and at most ~3 ms of memory by time, windowEwmaWeight) to turn over after a move, short
  // enough that a real overload is answered within a few milliseconds.
  settleNs: 2_000_000,
  quantumRule: 'headroom',
  // The CN2350's all-core headroom for 1 KB packets (Fig 4: 9.8 µs).
  fixedQuantumNs: 9_800,
  scaleUpUtilization: 0.95,
  managementCoreId: 0,
  coreQueueDepth: 1,
  // The paper's Algorithm 1 acts from the first sample; the simulator's handlers are never cold.
  pushWarmupCompletions: 0,
  enableDowngrade: true,
  enableMigration: true,
  enableAutoscale: true,
});

const positiveNs = z.number().finite().positive();

const schedulerSettingsSchema = z
  .object({
    meanThreshNs: positiveNs,
    tailThreshNs: positiveNs,
    alpha: z.number().gt(0).lt(1),
    queueThresh: z.number().int().positive(),
    latencyEwmaWeight: z.number().gt(0).lte(1),
    actorEwmaWeight: z.number().gt(0).lte(1),
    windowEwmaWeight: z.number().gt(0).lte(1),
    windowNs: positiveNs,
    settleNs: z.number().finite().nonnegative(),
    quantumRule: z.enum(['headroom', 'fixed']),
    fixedQuantumNs: positiveNs,
    scaleUpUtilization: z.number().gt(0).lte(1),
    managementCoreId: z.number().int().nonnegative(),
    coreQueueDepth: z.number().int().min(1).max(1024),
    pushWarmupCompletions: z.number().int().nonnegative(),
    enableDowngrade: z.boolean(),
    enableMigration: z.boolean(),
    enableAutoscale: z.boolean(),
  })
  .strict()
  .refine((s) => s.tailThreshNs >= s.meanThreshNs, {
    message: 'tailThreshNs must be at least meanThreshNs (a tail below the mean is impossible)',
    path: ['tailThreshNs'],
  });

/**
 * Merges overrides onto the defaults and validates the result.
 * @throws SchedulerSettingsError naming the first offending field.
 */
export function resolveSchedulerSettings(overrides: Partial<SchedulerSettings> = {}): SchedulerSettings {
  const merged = { ...DEFAULT_SCHEDULER_SETTINGS, ...overrides };
  const parsed = schedulerSettingsSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(settings)';
    throw new SchedulerSettingsError(`${where}: ${issue?.message ?? 'invalid'}`);
  }
  return Object.freeze(parsed.data);
}
