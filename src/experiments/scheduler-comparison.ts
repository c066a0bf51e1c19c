/**
 * The paper's scheduler comparison (§5.3): FCFS only, DRR only and the hybrid scheduler on one
 * SmartNIC under Poisson arrivals at loads 0.1 … 0.9, with request costs drawn from an
 * exponential or a bimodal distribution, reporting p50 and p99 latency per load and scheduler.
 *
 * Setup (the paper leaves these open; the choices are ours and documented in docs/experiments.md):
 * `actors` synthetic actors share the traffic uniformly, each request's NIC cost drawn from the
 * distribution; the bimodal mix is `bimodalShareA` of the first mode (default 50/50); load is the
 * offered NIC core occupancy λ·E[occupancy]/cores, with occupancy from the forwarding model;
 * migration is off so all three disciplines run on the NIC only.
 */

import { type ActorRef, refOf } from '../actor/actor-ref.ts';
import type { NicProfile } from '../hw/schema.ts';
import { EventKernel } from '../platform/sim/event-kernel.ts';
import { FRAME_OVERHEAD_BYTES, SimNode } from '../platform/sim/sim-node.ts';
import type { SimTiming } from '../platform/sim/timing.ts';
import { OpenLoopSource } from '../platform/sim/traffic.ts';
import { Random } from '../random.ts';
import type { SchedulerPolicy } from '../sched/hybrid-scheduler.ts';
import { padOf, syntheticActor } from './synthetic-actor.ts';

export type CostDistribution =
  | { readonly kind: 'exponential'; readonly meanNs: number }
  | { readonly kind: 'bimodal'; readonly aNs: number; readonly bNs: number; readonly shareA: number };

export interface SchedulerComparisonOptions {
  readonly timing: SimTiming;
  readonly distribution: CostDistribution;
  readonly loads: readonly number[];
  readonly schedulers: readonly SchedulerPolicy[];
  readonly seed: number;
  /** Simulated time per point, after the warm-up. */
  readonly durationNs: number;
  readonly warmupNs: number;
  readonly actors: number;
  readonly packetBytes: number;
  readonly onPoint?: (done: number, total: number) => void;
}

export interface SchedulerPoint {
  readonly scheduler: SchedulerPolicy;
  readonly load: number;
  readonly offeredRps: number;
  readonly answered: number;
  readonly refused: number;
  /**
   * Latency of the answered requests (mean, percentiles); null when none was answered (a point too
   * short to complete one): there is no latency, and a 0 would read as an instant answer.
   */
  readonly meanUs: number | null;
  readonly p50Us: number | null;
  readonly p99Us: number | null;
  readonly downgrades: number;
  readonly upgrades: number;
}

export interface SchedulerComparisonResult {
  readonly schemaVersion: 1;
  readonly experiment: 'scheduler';
  readonly nic: string;
  readonly seed: number;
  readonly distribution: CostDistribution;
  readonly nicCores: number;
  readonly packetBytes: number;
  readonly actors: number;
  readonly durationNs: number;
  readonly warmupNs: number;
  readonly results: readonly SchedulerPoint[];
}

/**
 * The paper's distributions for a NIC (LiquidIO: 32 µs / 35–60 µs; Stingray: 27 µs / 25–55 µs).
 * The family is read from the cores, not the name: ARM cards (Stingray, BlueField, a user's
 * BlueField-2 under any name) take the Stingray's, the others the LiquidIO's.
 */
export function paperDistribution(
  nic: Pick<NicProfile, 'cores'>,
  kind: 'exponential' | 'bimodal',
  shareA = 0.5,
): CostDistribution {
  const stingrayLike = /\bARM\b/i.test(nic.cores.isa);
  if (kind === 'exponential') return { kind, meanNs: stingrayLike ? 27_000 : 32_000 };
  return stingrayLike
    ? { kind, aNs: 25_000, bNs: 55_000, shareA }
    : { kind, aNs: 35_000, bNs: 60_000, shareA };
}

function meanCostNs(distribution: CostDistribution): number {
  return distribution.kind === 'exponential'
    ? distribution.meanNs
    : distribution.shareA * distribution.aNs + (1 - distribution.shareA) * distribution.bNs;
}

function sampleCostNs(distribution: CostDistribution, random: Random): number {
  if (distribution.kind === 'exponential') {
    return Math.max(1, Math.round(-Math.log(1 - random.next()) * distribution.meanNs));
  }
  return random.next() < distribution.shareA ? distribution.aNs : distribution.bNs;
}

export function runSchedulerComparison(options: SchedulerComparisonOptions): SchedulerComparisonResult {
  const results: SchedulerPoint[] = [];
  const total = options.loads.length * options.schedulers.length;
  const root = new Random(options.seed);
  for (const scheduler of options.schedulers) {
    for (const load of options.loads) {
      // Every scheduler sees the same arrivals and costs at a given load (same forked streams).
      results.push(runPoint(options, scheduler, load, root.fork(`load-${load}`)));
      options.onPoint?.(results.length, total);
    }
  }
  return {
    schemaVersion: 1,
    experiment: 'scheduler',
    nic: options.timing.label,
    seed: options.seed,
    distribution: options.distribution,
    nicCores: options.timing.nicCores,
    packetBytes: options.packetBytes,
    actors: options.actors,
    durationNs: options.durationNs,
    warmupNs: options.warmupNs,
    results,
  };
}

function runPoint(
  options: SchedulerComparisonOptions,
  scheduler: SchedulerPolicy,
  load: number,
  random: Random,
): SchedulerPoint {
  const kernel = new EventKernel();
  const timing = options.timing;
  const node = new SimNode({
    timing,
    kernel,
    policy: scheduler,
    scheduler: { enableMigration: false },
    ingressQueuePackets: 1_000_000,
  });
  const refs: ActorRef<unknown, unknown>[] = [];
  for (let i = 0; i < options.actors; i++) {
    const ref = node.register(syntheticActor, { name: `synthetic-${i}` });
    refs.push(refOf(syntheticActor, ref.id, ref.name) as unknown as ActorRef<unknown, unknown>);
  }
  const occupancyNs = timing.nicPacketNs(options.packetBytes, meanCostNs(options.distribution));
  const offeredRps = (load * timing.nicCores * 1e9) / occupancyNs;
  const pad = padOf(Math.max(0, options.packetBytes - FRAME_OVERHEAD_BYTES - 9));
  const endNs = options.warmupNs + options.durationNs;
  const costs = random.fork('costs');
  const source = new OpenLoopSource({
    node,
    random: random.fork('arrivals'),
    ratePerSec: offeredRps,
    endNs,
    measureFromNs: options.warmupNs,
    // The node's only client: it may hand arrivals over in batches.
    sendAhead: 64,
    make: (pick) => ({
      target: refs[Math.floor(pick.next() * refs.length)] as ActorRef<unknown, unknown>,
      message: { type: 'work', costNs: sampleCostNs(options.distribution, costs), pad },
      packetBytes: options.packetBytes,
    }),
  });
  kernel.run({});
  const recorder = source.recorder;
  return {
    scheduler,
    load,
    offeredRps,
    answered: recorder.answered,
    refused: recorder.refused,
    meanUs: recorder.answered === 0 ? null : recorder.meanNs / 1000,
    p50Us: recorder.answered === 0 ? null : recorder.percentileNs(50) / 1000,
    p99Us: recorder.answered === 0 ? null : recorder.percentileNs(99) / 1000,
    downgrades: node.decisions.filter((d) => d.kind === 'downgrade').length,
    upgrades: node.decisions.filter((d) => d.kind === 'upgrade').length,
  };
}
