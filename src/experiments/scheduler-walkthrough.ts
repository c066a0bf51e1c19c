/**
 * A scripted walkthrough of iPipe on a simulated SmartNIC (§3–4): four of the paper's task kinds
 * (Table 3) as real actors with their state in DMOs, on a LiquidIO CN2350 and its host (the
 * calibrated models of src/hw), meet a load that changes in phases. The run reports every
 * scheduler decision with the numbers behind it, each migration phase by phase with the DMO
 * bytes it moved, and per phase where each actor ran, what its requests saw, and how many NIC and
 * host cores the node used.
 *
 * The actors really run (the kv-cache stores, the sketch counts, the ranker sorts); only time is
 * modelled, from each handler's declared work on the core type that runs it. A seed reproduces
 * the run exactly.
 */

import * as hdr from 'hdr-histogram-js';
import type { ActorRef } from '../actor/actor-ref.ts';
import { flowClassifier, flowMonitor, kvCache, topRanker } from '../apps/tasks/task-actors.ts';
import { getNicProfile, hostOf } from '../hw/index.ts';
import type { ActorId } from '../ids.ts';
import { EventKernel, type EventKind } from '../platform/sim/event-kernel.ts';
import { timingFor } from '../platform/sim/hardware-timing.ts';
import { type MigrationRecord, type ReplySink, SimNode } from '../platform/sim/sim-node.ts';
import { Random } from '../random.ts';
import type { SchedulerSettings } from '../sched/settings.ts';
import type { ActorMode, Decision } from '../sched/types.ts';

export interface WalkthroughPhase {
  readonly name: string;
  readonly durationNs: number;
  /** Requests per second per actor name during this phase (absent: 0). */
  readonly ratesPerSec: Readonly<Record<string, number>>;
  readonly story: string;
}

export interface WalkthroughScenario {
  readonly nicProfile: string;
  readonly packetBytes: number;
  /** Entries a ranker `rank` request sorts, and one in how many ranker requests ranks. */
  readonly rankEntries: number;
  readonly rankEvery: number;
  readonly settings: Partial<SchedulerSettings>;
  readonly phases: readonly WalkthroughPhase[];
}

export interface ActorPhaseSummary {
  readonly name: string;
  readonly taskKind: string;
  readonly requests: number;
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
  /** Average NIC and host cores busy during the phase. */
  readonly nicCoresBusy: number;
  readonly hostCoresBusy: number;
  readonly actors: readonly ActorPhaseSummary[];
}

export interface NamedDecision {
  readonly atMs: number;
  readonly kind: Decision['kind'];
  readonly actor?: string;
  readonly why: string;
}

export interface WalkthroughMigration {
  readonly actor: string;
  readonly from: string;
  readonly to: string;
  readonly trigger: string;
  readonly atMs: number;
  readonly stateBytes: number;
  readonly bufferedRequests: number;
  readonly phasesUs: {
    readonly prepare: number;
    readonly ready: number;
    readonly gone: number;
    readonly clean: number;
  };
}

export interface WalkthroughResult {
  readonly schemaVersion: 1;
  readonly seed: number;
  readonly nic: string;
  readonly host: string;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly settings: SchedulerSettings;
  readonly actors: readonly { readonly name: string; readonly taskKind: string }[];
  readonly decisions: readonly NamedDecision[];
  readonly migrations: readonly WalkthroughMigration[];
  readonly phases: readonly PhaseSummary[];
  readonly requestsTotal: number;
  readonly requestsAnswered: number;
  readonly requestsRefused: number;
  readonly simulatedMs: number;
}

const MS = 1_000_000;

const ACTORS = [
  { name: 'kv-cache', taskKind: 'kv-cache: hash table, 95% get (Table 3: 3.7 µs)' },
  { name: 'flow-monitor', taskKind: 'flow-monitor: count-min sketch (3.2 µs)' },
  {
    name: 'top-ranker',
    taskKind: 'top-ranker: counts, and every 5th request quicksorts 256 entries (34 µs per 64)',
  },
  { name: 'flow-classifier', taskKind: 'flow-classifier: naive Bayes (71 µs)' },
] as const;

/**
 * The default story on a 12-core LiquidIO CN2350 (10 GbE) with its host, 1 KB requests, the
 * paper's thresholds: the ranker's large sorts stretch the FCFS tail and it moves to DRR; the
 * classifier's traffic surges past what the NIC can hold and it moves to the host; when the surge
 * ends it comes back.
 */
export const DEFAULT_WALKTHROUGH: WalkthroughScenario = {
  nicProfile: 'liquidio-cn2350',
  packetBytes: 1024,
  rankEntries: 256,
  rankEvery: 5,
  settings: {},
  phases: [
    {
      name: 'steady',
      durationNs: 40 * MS,
      ratesPerSec: {
        'kv-cache': 200_000,
        'flow-monitor': 200_000,
        'top-ranker': 20_000,
        'flow-classifier': 30_000,
      },
      story: "everything on the NIC; the ranker's big sorts stretch the FCFS tail",
    },
    {
      name: 'surge',
      durationNs: 40 * MS,
      ratesPerSec: {
        'kv-cache': 200_000,
        'flow-monitor': 200_000,
        'top-ranker': 20_000,
        'flow-classifier': 150_000,
      },
      story: "the classifier's traffic quintuples: more work than the NIC's cores can do",
    },
    {
      name: 'calm',
      durationNs: 60 * MS,
      ratesPerSec: {
        'kv-cache': 200_000,
        'flow-monitor': 200_000,
        'top-ranker': 20_000,
        'flow-classifier': 20_000,
      },
      story: 'the surge is over; the NIC has room again',
    },
  ],
};

type Maker = (random: Random, sequence: number) => unknown;

/** Runs the scenario in simulated time and returns what happened. Deterministic for a seed. */
export function runSchedulerWalkthrough(
  scenario: WalkthroughScenario,
  seed: number,
  onProgress?: (fraction: number) => void,
): WalkthroughResult {
  const nic = getNicProfile(scenario.nicProfile);
  const host = hostOf(nic);
  const timing = timingFor(nic, host);
  const kernel = new EventKernel();
  const node = new SimNode({ timing, kernel, scheduler: scenario.settings, regionBytes: 8 * 1024 * 1024 });
  const refs = [
    node.register(kvCache),
    node.register(flowMonitor),
    node.register(topRanker),
    node.register(flowClassifier),
  ] as unknown as ActorRef<unknown, unknown>[];
  const names = new Map<ActorId, string>(refs.map((ref) => [ref.id, ref.name]));
  const key = new Uint8Array(16);
  const value = new Uint8Array(64);
  const features = new Uint8Array(16);
  const makers: Maker[] = [
    (random) => {
      new DataView(key.buffer).setUint32(0, random.int(0, 10_000));
      return random.next() < 0.95
        ? { type: 'get', key: key.slice() }
        : { type: 'put', key: key.slice(), value };
    },
    (random) => ({ type: 'observe', flow: random.int(0, 1 << 20) }),
    (random, sequence) =>
      sequence % scenario.rankEvery === scenario.rankEvery - 1
        ? { type: 'rank', entries: scenario.rankEntries, top: 10 }
        : { type: 'count', key: random.int(0, 4096) },
    (random) => {
      for (let i = 0; i < features.length; i++) features[i] = random.int(0, 256);
      return { type: 'classify', features: features.slice() };
    },
  ];

  const phaseStarts: number[] = [];
  let totalNs = 0;
  for (const phase of scenario.phases) {
    phaseStarts.push(totalNs);
    totalNs += phase.durationNs;
  }
  const phaseOf = (t: number) => {
    let index = 0;
    while (index + 1 < phaseStarts.length && t >= (phaseStarts[index + 1] as number)) index++;
    return index;
  };
  const histograms = scenario.phases.map(() =>
    refs.map(() =>
      hdr.build({
        lowestDiscernibleValue: 1,
        highestTrackableValue: 60_000_000_000,
        numberOfSignificantValueDigits: 3,
      }),
    ),
  );
  let requestsTotal = 0;
  let requestsAnswered = 0;
  let requestsRefused = 0;
  const sinks: ReplySink[] = refs.map((_, index) => (_id, latencyNs, ok, _reply, sentAt) => {
    if (!ok) {
      requestsRefused++;
      return;
    }
    requestsAnswered++;
    const histogram = (histograms[phaseOf(sentAt)] as hdr.Histogram[])[index] as hdr.Histogram;
    histogram.recordValue(Math.max(1, Math.round(latencyNs)));
  });

  // One Poisson stream per actor, its rate following the phases.
  const random = new Random(seed);
  const streams = refs.map((ref) => random.fork(`arrivals/${ref.name}`));
  const contents = refs.map((ref) => random.fork(`requests/${ref.name}`));
  const sequences = refs.map(() => 0);
  const arrival: EventKind = kernel.registerKind((_k, index) => {
    const now = kernel.now();
    requestsTotal++;
    const sequence = sequences[index] as number;
    sequences[index] = sequence + 1;
    const message = (makers[index] as Maker)(contents[index] as Random, sequence);
    node.clientSend(
      refs[index] as ActorRef<unknown, unknown>,
      message,
      sinks[index] as ReplySink,
      scenario.packetBytes,
    );
    scheduleNext(index, now);
  }, 'walkthrough-arrival');
  const scheduleNext = (index: number, fromNs: number) => {
    let t = fromNs;
    const name = (refs[index] as ActorRef<unknown, unknown>).name;
    for (let phase = phaseOf(t); phase < scenario.phases.length; phase++) {
      const spec = scenario.phases[phase] as WalkthroughPhase;
      const rate = spec.ratesPerSec[name] ?? 0;
      const phaseEnd = (phaseStarts[phase] as number) + spec.durationNs;
      if (rate > 0) {
        const gap = Math.max(1, Math.round((-Math.log(1 - (streams[index] as Random).next()) * 1e9) / rate));
        // A memoryless gap that runs past the phase end is redrawn at the next phase's rate.
        if (t + gap < phaseEnd) {
          kernel.schedule(arrival, t + gap, index, 0);
          return;
        }
      }
      t = phaseEnd;
    }
  };
  refs.forEach((_, index) => {
    scheduleNext(index, 0);
  });

  // Phase-end snapshots: core roles, modes, busy cores.
  const snapshots: {
    fcfs: number;
    drr: number;
    modes: ActorMode[];
    nicBusyNs: number;
    hostBusyNs: number;
  }[] = [];
  const sum = (values: Float64Array) => values.reduce((a, b) => a + b, 0);
  const phaseEnd: EventKind = kernel.registerKind(() => {
    const view = node.scheduler.view();
    const busy = node.busyNs();
    snapshots.push({
      fcfs: view.fcfs.cores,
      drr: view.drr.cores,
      modes: refs.map((ref) => node.scheduler.modeOf(ref.id)),
      nicBusyNs: sum(busy.nic),
      hostBusyNs: sum(busy.host),
    });
    onProgress?.(kernel.now() / totalNs);
  }, 'phase-end');
  scenario.phases.forEach((phase, i) => {
    kernel.schedule(phaseEnd, (phaseStarts[i] as number) + phase.durationNs, i, 0);
  });

  kernel.run({});

  const decisions: NamedDecision[] = node.decisions.map((d) => ({
    atMs: d.atNs / MS,
    kind: d.kind,
    ...('actor' in d ? { actor: names.get(d.actor) ?? String(d.actor) } : {}),
    why: d.why,
  }));
  const migrations = node.migrations.map((m: MigrationRecord) => ({
    actor: m.name,
    from: m.from,
    to: m.to,
    trigger: m.trigger,
    atMs: m.startedAtNs / MS,
    stateBytes: m.stateBytes,
    bufferedRequests: m.bufferedRequests,
    phasesUs: {
      prepare: m.phasesNs.prepare / 1000,
      ready: m.phasesNs.ready / 1000,
      gone: m.phasesNs.gone / 1000,
      clean: m.phasesNs.clean / 1000,
    },
  }));
  return {
    schemaVersion: 1,
    seed,
    nic: nic.description,
    host: host.description,
    nicCores: node.nicCores,
    hostCores: node.hostCores,
    settings: node.scheduler.settings,
    actors: ACTORS.map((a) => ({ name: a.name, taskKind: a.taskKind })),
    decisions,
    migrations,
    phases: scenario.phases.map((phase, i) => {
      const snapshot = snapshots[i] as (typeof snapshots)[number];
      const previous = snapshots[i - 1];
      const durationNs = phase.durationNs;
      return {
        name: phase.name,
        story: phase.story,
        startMs: (phaseStarts[i] as number) / MS,
        endMs: ((phaseStarts[i] as number) + durationNs) / MS,
        fcfsCoresAtEnd: snapshot.fcfs,
        drrCoresAtEnd: snapshot.drr,
        nicCoresBusy: (snapshot.nicBusyNs - (previous?.nicBusyNs ?? 0)) / durationNs,
        hostCoresBusy: (snapshot.hostBusyNs - (previous?.hostBusyNs ?? 0)) / durationNs,
        actors: refs.map((ref, k) => {
          const histogram = (histograms[i] as hdr.Histogram[])[k] as hdr.Histogram;
          return {
            name: ref.name,
            taskKind: ACTORS[k]?.taskKind ?? '',
            requests: histogram.totalCount,
            p50Us: histogram.getValueAtPercentile(50) / 1000,
            p99Us: histogram.getValueAtPercentile(99) / 1000,
            modeAtEnd: snapshot.modes[k] as ActorMode,
          };
        }),
      };
    }),
    requestsTotal,
    requestsAnswered,
    requestsRefused,
    simulatedMs: totalNs / MS,
  };
}
