/**
 * A scripted walkthrough of iPipe's hybrid scheduler (§4.2): synthetic actors with the costs of
 * the paper's offloaded task kinds (Table 3, LiquidIO CN2350, 1 KB requests) meet a load that
 * changes in phases, and the run prints every decision the scheduler takes and why.
 *
 * What is modelled and what is not: arrivals are Poisson; each request's NIC execution time is
 * drawn from its actor's declared distribution (never the JS wall clock), so a seed reproduces the
 * run exactly. Forwarding a request to the host costs the NIC core the CN2350's hardware messaging
 * send time (Fig 6, 0.32 µs); a migration's state transfer takes the actor's state size at one
 * core's 2 KB DMA write rate (2.1 GB/s, §2.2.4). Host cores run forwarded requests at the same
 * declared cost — no host speed-up is claimed here; the simulated platform's host model does that.
 */

import * as hdr from 'hdr-histogram-js';
import { type ActorId, actorId } from '../ids.ts';
import { createSampler, type DistributionSpec, type Sampler } from '../platform/sim/distributions.ts';
import { EventKernel, type EventKind } from '../platform/sim/event-kernel.ts';
import { Random } from '../platform/sim/random.ts';
import { HybridScheduler } from '../sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../sched/settings.ts';
import type { ActorMode, Decision, SchedRequest } from '../sched/types.ts';

export interface WalkthroughActor {
  readonly name: string;
  /** Which of Table 3's task kinds its cost follows. */
  readonly taskKind: string;
  /** NIC execution time per request, in ns. */
  readonly costNs: DistributionSpec;
  readonly exclusive: boolean;
  /** Bytes of DMO state it carries when it migrates. */
  readonly stateBytes: number;
  readonly requestBytes: number;
}

export interface WalkthroughPhase {
  readonly name: string;
  readonly durationNs: number;
  /** Requests per second per actor name during this phase (absent: 0). */
  readonly ratesPerSec: Readonly<Record<string, number>>;
  readonly story: string;
}

export interface WalkthroughScenario {
  readonly nicName: string;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly settings: Partial<SchedulerSettings>;
  readonly actors: readonly WalkthroughActor[];
  readonly phases: readonly WalkthroughPhase[];
}

export interface ActorPhaseSummary {
  readonly name: string;
  readonly requests: number;
  readonly ranOnNic: number;
  readonly ranOnHost: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly modeAtEnd: ActorMode;
}

export interface PhaseSummary {
  readonly name: string;
  readonly story: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly fcfsCoresAtEnd: number;
  readonly drrCoresAtEnd: number;
  readonly fcfsMeanUsAtEnd: number;
  readonly fcfsTailUsAtEnd: number;
  readonly actors: readonly ActorPhaseSummary[];
}

export interface NamedDecision {
  readonly atMs: number;
  readonly kind: Decision['kind'];
  readonly actor?: string;
  readonly why: string;
}

export interface WalkthroughResult {
  readonly schemaVersion: 1;
  readonly seed: number;
  readonly nic: string;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly settings: SchedulerSettings;
  readonly decisions: readonly NamedDecision[];
  readonly phases: readonly PhaseSummary[];
  readonly requestsTotal: number;
  readonly requestsAnswered: number;
  readonly simulatedMs: number;
}

/** CN2350 hardware-assisted messaging send time for a 1 KB message (Fig 6). */
const FORWARD_NS = 320;
/** One CN2350 core's DMA write throughput with 2 KB payloads (§2.2.4): 2.1 GB/s = 2.1 bytes/ns. */
const DMA_BYTES_PER_NS = 2.1;
/** Non-blocking DMA write latency (Fig 7): the one-way crossing a forwarded request pays. */
const CROSSING_NS = 530;
/** How often the management core checks when it is otherwise idle. */
const MANAGE_EVERY_NS = 20_000;

const US = 1_000;
const MS = 1_000_000;

/**
 * The default story on a 12-core LiquidIO CN2350 with the paper's thresholds (Fig 5 at the 1500 B
 * MTU): a ranker with erratic sorts is downgraded to DRR; a flow classifier surges and is pushed to
 * the host; when the surge ends it is pulled back.
 */
export const DEFAULT_WALKTHROUGH: WalkthroughScenario = {
  nicName: 'LiquidIO CN2350 (10 GbE, 12 cores)',
  nicCores: 12,
  hostCores: 12,
  settings: {},
  actors: [
    {
      name: 'kv-cache',
      taskKind: 'kv-cache (hash table, 3.7 µs)',
      costNs: { kind: 'exponential', mean: 3_700 },
      exclusive: false,
      stateBytes: 4 * 1024 * 1024,
      requestBytes: 1024,
    },
    {
      name: 'flow-monitor',
      taskKind: 'flow-monitor (count-min sketch, 3.2 µs)',
      costNs: { kind: 'exponential', mean: 3_200 },
      exclusive: false,
      stateBytes: 1024 * 1024,
      requestBytes: 1024,
    },
    {
      name: 'top-ranker',
      taskKind: 'top-ranker (quicksort, 34 µs mean; bimodal 10/130 µs)',
      costNs: { kind: 'bimodal-point', a: 10_000, b: 130_000, probabilityA: 0.8 },
      exclusive: true,
      stateBytes: 256 * 1024,
      requestBytes: 1024,
    },
    {
      name: 'flow-classifier',
      taskKind: 'flow-classifier (naive Bayes, 71 µs mean, lognormal σ=0.25)',
      costNs: { kind: 'lognormal', mean: 71_000, sigma: 0.25 },
      exclusive: false,
      stateBytes: 2 * 1024 * 1024,
      requestBytes: 1024,
    },
  ],
  phases: [
    {
      name: 'steady',
      durationNs: 40 * MS,
      ratesPerSec: {
        'kv-cache': 600_000,
        'flow-monitor': 400_000,
        'top-ranker': 20_000,
        'flow-classifier': 30_000,
      },
      story: "everything on the NIC; the ranker's 130 µs sorts stretch the FCFS tail",
    },
    {
      name: 'surge',
      durationNs: 40 * MS,
      ratesPerSec: {
        'kv-cache': 600_000,
        'flow-monitor': 400_000,
        'top-ranker': 20_000,
        'flow-classifier': 110_000,
      },
      story: "the classifier's traffic almost quadruples: 7.8 cores of work on top of 3.5 on a 12-core NIC",
    },
    {
      name: 'calm',
      durationNs: 60 * MS,
      ratesPerSec: {
        'kv-cache': 600_000,
        'flow-monitor': 400_000,
        'top-ranker': 20_000,
        'flow-classifier': 20_000,
      },
      story: 'the surge is over; the NIC has room again',
    },
  ],
};

interface WalkRequest extends SchedRequest {
  readonly actorIndex: number;
}

class PhaseStats {
  readonly histograms: hdr.Histogram[];
  readonly ranOnNic: number[];
  readonly ranOnHost: number[];
  constructor(actors: number) {
    this.histograms = [];
    for (let i = 0; i < actors; i++) {
      this.histograms.push(
        hdr.build({
          lowestDiscernibleValue: 1,
          highestTrackableValue: 10 * 1_000_000_000,
          numberOfSignificantValueDigits: 3,
        }),
      );
    }
    this.ranOnNic = new Array<number>(actors).fill(0);
    this.ranOnHost = new Array<number>(actors).fill(0);
  }
}

/** Runs the scenario in simulated time and returns what happened. Deterministic for a seed. */
export function runSchedulerWalkthrough(
  scenario: WalkthroughScenario,
  seed: number,
  onProgress?: (fraction: number) => void,
): WalkthroughResult {
  const random = new Random(seed);
  const arrivalsRandom = random.fork('arrivals');
  const costRandom = random.fork('costs');
  const kernel = new EventKernel();
  const actors = scenario.actors;
  const ids = actors.map((_, i) => actorId(i + 1));
  const names = new Map<ActorId, string>(actors.map((a, i) => [ids[i] as ActorId, a.name]));
  const scheduler = new HybridScheduler<WalkRequest>({
    cores: scenario.nicCores,
    settings: scenario.settings,
    nameOf: (id) => names.get(id) ?? `actor ${id}`,
  });
  actors.forEach((a, i) => {
    scheduler.addActor({ id: ids[i] as ActorId, placement: 'any', exclusive: a.exclusive });
  });
  const costSamplers: Sampler[] = actors.map((a) => createSampler(a.costNs));
  const phaseStarts: number[] = [];
  let totalNs = 0;
  for (const phase of scenario.phases) {
    phaseStarts.push(totalNs);
    totalNs += phase.durationNs;
  }
  const phaseStats = scenario.phases.map(() => new PhaseStats(actors.length));
  const phaseSnapshots: Omit<PhaseSummary, 'actors' | 'name' | 'story' | 'startMs' | 'endMs'>[] = [];
  const modesAtPhaseEnd: ActorMode[][] = [];
  const decisions: NamedDecision[] = [];
  const phaseIndexAt = (t: number) => {
    let index = 0;
    while (index + 1 < phaseStarts.length && t >= (phaseStarts[index + 1] as number)) index++;
    return index;
  };
  let requestsTotal = 0;
  let requestsAnswered = 0;

  // ── NIC cores ──
  const coreBusy = new Array<boolean>(scenario.nicCores).fill(false);
  const coreRequest: (WalkRequest | null)[] = new Array(scenario.nicCores).fill(null);
  const migrating = new Set<number>();
  const hostQueue: WalkRequest[] = [];
  let hostQueueHead = 0;
  let hostBusy = 0;

  const record = (request: WalkRequest, onHost: boolean) => {
    const stats = phaseStats[phaseIndexAt(request.arrivalNs)] as PhaseStats;
    (stats.histograms[request.actorIndex] as hdr.Histogram).recordValue(
      Math.max(1, kernel.now() - request.arrivalNs),
    );
    if (onHost) stats.ranOnHost[request.actorIndex] = (stats.ranOnHost[request.actorIndex] as number) + 1;
    else stats.ranOnNic[request.actorIndex] = (stats.ranOnNic[request.actorIndex] as number) + 1;
    requestsAnswered++;
  };

  const sampleCost = (index: number) =>
    Math.max(1, Math.round((costSamplers[index] as Sampler).sample(costRandom)));

  const handleDecisions = (list: readonly Decision[]) => {
    for (const d of list) {
      decisions.push({
        atMs: kernel.now() / MS,
        kind: d.kind,
        ...('actor' in d ? { actor: names.get(d.actor) ?? String(d.actor) } : {}),
        why: d.why,
      });
      if (d.kind === 'migrate') {
        scheduler.prepareMigration(d.actor, d.to, kernel.now());
        migrating.add(d.actor - 1);
        progressMigrations();
      }
    }
  };

  const migrationDoneKind: EventKind = kernel.registerKind((_k, index) => {
    const id = ids[index] as ActorId;
    for (const request of scheduler.finishMigration(id, kernel.now())) enqueueHost(request);
    pumpCores();
  }, 'migration-done');

  const progressMigrations = () => {
    for (const index of migrating) {
      const id = ids[index] as ActorId;
      if (!scheduler.isQuiescent(id)) continue;
      migrating.delete(index);
      const transferNs = Math.round((actors[index] as WalkthroughActor).stateBytes / DMA_BYTES_PER_NS);
      kernel.scheduleAfter(migrationDoneKind, transferNs, index, 0);
    }
  };

  const hostDoneKind: EventKind = kernel.registerKind((_k, index) => {
    hostBusy--;
    const request = hostInFlight[index] as WalkRequest;
    hostInFlight[index] = null;
    freeHostSlots.push(index);
    record(request, true);
    scheduler.recordHostExecution(request.actor, hostCost[index] as number);
    startHost();
  }, 'host-done');
  const hostInFlight: (WalkRequest | null)[] = new Array(scenario.hostCores).fill(null);
  const hostCost: number[] = new Array(scenario.hostCores).fill(0);
  const freeHostSlots: number[] = Array.from(
    { length: scenario.hostCores },
    (_, i) => scenario.hostCores - 1 - i,
  );
  const startHost = () => {
    while (hostBusy < scenario.hostCores && hostQueueHead < hostQueue.length) {
      const request = hostQueue[hostQueueHead++] as WalkRequest;
      const slot = freeHostSlots.pop() as number;
      hostInFlight[slot] = request;
      const cost = sampleCost(request.actorIndex);
      hostCost[slot] = cost;
      hostBusy++;
      kernel.scheduleAfter(hostDoneKind, cost, slot, 0);
    }
    if (hostQueueHead > 4096 && hostQueueHead * 2 > hostQueue.length) {
      hostQueue.splice(0, hostQueueHead);
      hostQueueHead = 0;
    }
  };
  const hostArrivalKind: EventKind = kernel.registerKind((_k, index) => {
    hostQueue.push(pendingCrossings[index] as WalkRequest);
    pendingCrossings[index] = null;
    freeCrossings.push(index);
    startHost();
  }, 'host-arrival');
  const pendingCrossings: (WalkRequest | null)[] = [];
  const freeCrossings: number[] = [];
  const enqueueHost = (request: WalkRequest) => {
    const slot = freeCrossings.pop() ?? pendingCrossings.length;
    pendingCrossings[slot] = request;
    kernel.scheduleAfter(hostArrivalKind, CROSSING_NS, slot, 0);
  };

  const coreDoneKind: EventKind = kernel.registerKind((_k, core) => {
    const request = coreRequest[core] as WalkRequest;
    coreRequest[core] = null;
    coreBusy[core] = false;
    record(request, false);
    handleDecisions(scheduler.complete(core, kernel.now()));
    progressMigrations();
    pumpCores();
  }, 'core-done');
  const coreFreeKind: EventKind = kernel.registerKind((_k, core) => {
    coreBusy[core] = false;
    pumpCores();
  }, 'core-free');

  /** Every idle core takes work until it is busy or there is none; overheads keep it busy too. */
  const pumpCores = () => {
    const now = kernel.now();
    for (let core = 0; core < scenario.nicCores; core++) {
      let overheadNs = 0;
      while (!coreBusy[core]) {
        const work =
          scheduler.roleOf(core) === 'fcfs' ? scheduler.takeFcfs(core, now) : scheduler.takeDrr(core, now);
        if (!work) break;
        if (work.kind === 'exec') {
          coreBusy[core] = true;
          coreRequest[core] = work.request;
          kernel.scheduleAfter(coreDoneKind, overheadNs + sampleCost(work.request.actorIndex), core, 0);
          overheadNs = 0;
        } else if (work.kind === 'forward') {
          overheadNs += FORWARD_NS;
          enqueueHost(work.request);
        }
      }
      if (overheadNs > 0) {
        scheduler.recordOverhead(core, overheadNs);
        coreBusy[core] = true;
        kernel.scheduleAfter(coreFreeKind, overheadNs, core, 0);
      }
    }
  };

  // ── arrivals: one Poisson stream per actor whose rate follows the phases ──
  const arrivalKind: EventKind = kernel.registerKind((_k, index) => {
    const now = kernel.now();
    const actor = actors[index] as WalkthroughActor;
    requestsTotal++;
    scheduler.arrive(
      { actor: ids[index] as ActorId, sizeBytes: actor.requestBytes, arrivalNs: now, actorIndex: index },
      now,
    );
    scheduleNextArrival(index, now);
    pumpCores();
  }, 'arrival');
  const scheduleNextArrival = (index: number, fromNs: number) => {
    let t = fromNs;
    for (let phase = phaseIndexAt(t); phase < scenario.phases.length; phase++) {
      const rate =
        (scenario.phases[phase] as WalkthroughPhase).ratesPerSec[(actors[index] as WalkthroughActor).name] ??
        0;
      const phaseEnd =
        (phaseStarts[phase] as number) + (scenario.phases[phase] as WalkthroughPhase).durationNs;
      if (rate > 0) {
        const gap = Math.max(1, Math.round((-Math.log(1 - arrivalsRandom.next()) * 1e9) / rate));
        // A memoryless gap that runs past the phase end is redrawn at the next phase's rate.
        if (t + gap < phaseEnd) {
          kernel.schedule(arrivalKind, t + gap, index, 0);
          return;
        }
      }
      t = phaseEnd;
    }
  };
  for (let i = 0; i < actors.length; i++) scheduleNextArrival(i, 0);

  // ── the management core's idle poll, and phase-end snapshots ──
  const manageKind: EventKind = kernel.registerKind(() => {
    handleDecisions(scheduler.manage(kernel.now()));
    pumpCores();
    if (kernel.now() + MANAGE_EVERY_NS <= totalNs) kernel.scheduleAfter(manageKind, MANAGE_EVERY_NS, 0, 0);
  }, 'manage');
  kernel.schedule(manageKind, MANAGE_EVERY_NS, 0, 0);
  const phaseEndKind: EventKind = kernel.registerKind(() => {
    const view = scheduler.view();
    phaseSnapshots.push({
      fcfsCoresAtEnd: view.fcfs.cores,
      drrCoresAtEnd: view.drr.cores,
      fcfsMeanUsAtEnd: view.fcfs.meanNs / US,
      fcfsTailUsAtEnd: view.fcfs.tailNs / US,
    });
    modesAtPhaseEnd.push(view.actors.map((a) => a.mode));
    onProgress?.(kernel.now() / totalNs);
  }, 'phase-end');
  scenario.phases.forEach((phase, i) => {
    kernel.schedule(phaseEndKind, (phaseStarts[i] as number) + phase.durationNs, i, 0);
  });

  // Run the phases, then drain what is still queued so every request is answered.
  kernel.run({ untilNs: totalNs });
  kernel.run({});

  return {
    schemaVersion: 1,
    seed,
    nic: scenario.nicName,
    nicCores: scenario.nicCores,
    hostCores: scenario.hostCores,
    settings: scheduler.settings,
    decisions,
    phases: scenario.phases.map((phase, i) => {
      const stats = phaseStats[i] as PhaseStats;
      const snapshot = phaseSnapshots[i] as (typeof phaseSnapshots)[number];
      return {
        name: phase.name,
        story: phase.story,
        startMs: (phaseStarts[i] as number) / MS,
        endMs: ((phaseStarts[i] as number) + phase.durationNs) / MS,
        ...snapshot,
        actors: actors.map((a, k) => {
          const histogram = stats.histograms[k] as hdr.Histogram;
          return {
            name: a.name,
            requests: histogram.totalCount,
            ranOnNic: stats.ranOnNic[k] as number,
            ranOnHost: stats.ranOnHost[k] as number,
            p50Us: histogram.getValueAtPercentile(50) / US,
            p99Us: histogram.getValueAtPercentile(99) / US,
            modeAtEnd: (modesAtPhaseEnd[i] as ActorMode[])[k] as ActorMode,
          };
        }),
      };
    }),
    requestsTotal,
    requestsAnswered,
    simulatedMs: totalNs / MS,
  };
}
