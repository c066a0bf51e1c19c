/**
 * The applications' offload experiment (iPipe §5, "Host cores used at maximum throughput,
 * baseline vs offloaded, at 64/256/512/1024-byte packets"; "latency vs per-core throughput"):
 * one application deployed on simulated nodes twice per packet size — every actor on the host
 * (the baseline: the host does the packet I/O, as with DPDK on a standard NIC) and offloaded
 * (actors where their placement hints put them, the hybrid scheduler free to migrate) — and for
 * each, the host cores the same offered load keeps busy, the per-core throughput and the client
 * latency.
 *
 * The method (docs/apps/experiments.md says it at length):
 *
 *   1. capacity: for each placement, closed-loop clients with `outstanding` requests in flight
 *      saturate the deployment; its answered requests per second are its capacity. The link's
 *      line rate caps it by itself (the node's ingress is a FIFO at line rate).
 *   2. the point: both placements are offered the same Poisson load,
 *      `loadFraction × min(capacity host-only, capacity offloaded)`, on a fresh deployment, and
 *      measured after a warm-up:
 *        hostCores    = Σ busy ns of the host cores of a node / measured ns (a core-seconds rate)
 *        throughput   = answered requests sent in the window / window
 *        perCoreMops  = throughput / hostCores (null when no host core worked at all)
 *        latency      = average and p99 of what the clients saw (HDR histogram).
 *
 * Nothing here knows the paper's figures: every number comes from the actors' declared work,
 * the calibrated hardware models (src/hw through timingFor) and the simulated node.
 *
 * Applications plug in through `OffloadApp` (app-offload-rta.ts, app-offload-dt.ts, …): they
 * register their actors on the nodes they are given, run their own setup, and start their clients
 * (`requestTraffic` for apps whose operation is one request).
 */

import { type ActorRef, refOf } from '../actor/actor-ref.ts';
import type { HandlerWork } from '../actor/cost.ts';
import { type AnyActorDefinition, redefineActor } from '../actor/define-actor.ts';
import { ConfigError, ExperimentNoCapacityError, ExperimentSetupError } from '../errors.ts';
import { messagingLatencyNs } from '../hw/models/messaging.ts';
import { EventKernel } from '../platform/sim/event-kernel.ts';
import { SimCluster } from '../platform/sim/sim-cluster.ts';
import { frameBytes, MIN_FRAME_BYTES, SimNode } from '../platform/sim/sim-node.ts';
import type { SimTiming } from '../platform/sim/timing.ts';
import {
  ClosedLoopClients,
  type LatencyRecorder,
  type NextRequest,
  OpenLoopSource,
} from '../platform/sim/traffic.ts';
import { Random } from '../random.ts';

/** Version of the JSON document `runAppOffload` returns. */
export const APP_OFFLOAD_SCHEMA_VERSION = 1;

/** The two deployments compared: the host-only baseline and iPipe's offload. */
export const OFFLOAD_PLACEMENTS = ['host-only', 'offloaded'] as const;
/** One of OFFLOAD_PLACEMENTS. */
export type OffloadPlacement = (typeof OFFLOAD_PLACEMENTS)[number];

/** The paper's packet sizes for the host-core experiment. */
export const PAPER_PACKET_SIZES: readonly number[] = Object.freeze([64, 256, 512, 1024]);

/** The applications with an offload experiment. */
export const OFFLOAD_APP_NAMES = ['rkv', 'dt', 'rta'] as const;
/** One of OFFLOAD_APP_NAMES. */
export type OffloadAppName = (typeof OFFLOAD_APP_NAMES)[number];

/** What an application is given to deploy itself for one run. */
export interface AppDeployContext {
  readonly kernel: EventKernel;
  readonly timing: SimTiming;
  readonly placement: OffloadPlacement;
  /** Request frame size under test. */
  readonly packetBytes: number;
  /** Seed of the application's own workload (its generator, its keys). */
  readonly random: Random;
  /**
   * The client request rate this run expects (the capacity probe: the line rate; the point: its
   * offered load). Apps whose data carries event time (RTA) pace it by this rate.
   */
  readonly expectedRequestsPerSec: number;
  /** Builds a lone node on the run's kernel, set up for this placement. */
  newNode(): SimNode;
  /**
   * Builds `nodes` nodes on the run's kernel joined by the modelled network (SimCluster), each
   * set up for this placement; actor ids are then global (register through the cluster).
   */
  newCluster(nodes: number): SimCluster;
  /**
   * The definition to register for an actor that receives client packets: in the host-only
   * placement the host core pays the packet I/O (see `withHostPacketIo`); offloaded, as is.
   */
  clientFacing<D extends AnyActorDefinition>(
    definition: D,
    isClientMessage: (message: unknown) => boolean,
  ): D;
}

/** The clients of one run, as the engine asks an app to start them. */
export type TrafficPlan = (
  | { readonly kind: 'closed'; readonly outstanding: number }
  | { readonly kind: 'open'; readonly ratePerSec: number }
) & {
  /** The run's client randomness (what to send, arrival gaps). */
  readonly random: Random;
  readonly startNs: number;
  /** No client begins an operation at or after this time. */
  readonly endNs: number;
  /** Operations begun before this are not recorded. */
  readonly measureFromNs: number;
};

/** One deployment, ready for clients. */
export interface AppDeployment {
  /** Every node and the role it plays (rows are per role). */
  readonly nodes: readonly { readonly role: string; readonly node: SimNode }[];
  /**
   * Starts the clients; the recorder counts one answered operation per completed client
   * operation (a request, a transaction) with the latency the client saw. Apps whose operation
   * is one request use `requestTraffic`.
   */
  start(plan: TrafficPlan): { readonly recorder: LatencyRecorder };
}

/**
 * Clients of one-request operations: Poisson arrivals (open) or a fixed number in flight
 * (closed), every request to `entry`, made by `next` in send order.
 *
 * `sendAhead`: how many open-loop arrivals are handed to the node ahead of their time (default
 * 64, cheaper to simulate). Only safe when the clients are the only sender on the node's ingress
 * link: an arrival handed over early reserves that FIFO, so frames from other nodes (a Paxos
 * follower's `accepted`) would wait behind requests not yet sent. Multi-node apps pass 1.
 */
export function requestTraffic(
  entry: SimNode,
  next: (random: Random, sequence: number) => NextRequest,
  plan: TrafficPlan,
  sendAhead = 64,
): { readonly recorder: LatencyRecorder } {
  return plan.kind === 'open'
    ? new OpenLoopSource({
        node: entry,
        random: plan.random,
        ratePerSec: plan.ratePerSec,
        startNs: plan.startNs,
        endNs: plan.endNs,
        measureFromNs: plan.measureFromNs,
        sendAhead,
        make: next,
      })
    : new ClosedLoopClients({
        node: entry,
        random: plan.random,
        outstanding: plan.outstanding,
        endNs: plan.endNs,
        measureFromNs: plan.measureFromNs,
        make: next,
      });
}

/** An application as the experiment drives it. */
export interface OffloadApp {
  readonly name: OffloadAppName;
  /** The roles its nodes play, in report order. */
  readonly roles: readonly string[];
  /**
   * Operations in flight during the capacity probe unless the caller says: enough to saturate
   * the deployment, few enough that its own retransmissions do not collapse it.
   */
  readonly probeOutstanding: number;
  /** A description of the workload for the JSON document (parameters, not results). */
  readonly workload: Readonly<Record<string, string | number | boolean>>;
  /** Registers the actors on fresh nodes and runs the app's setup to completion. */
  deploy(context: AppDeployContext): AppDeployment;
}

/** What `runAppOffload` takes. */
export interface AppOffloadOptions {
  readonly app: OffloadApp;
  readonly timing: SimTiming;
  /** Label of the NIC profile (reports). */
  readonly nic: string;
  /** Label of the host profile it sits in (reports); simulated runs only. */
  readonly host?: string;
  readonly packetSizes: readonly number[];
  readonly placements?: readonly OffloadPlacement[];
  readonly seed: number;
  /** Simulated time measured per point, after the warm-up. */
  readonly durationNs: number;
  readonly warmupNs: number;
  /** Simulated time of each capacity probe (closed loop), after the same warm-up. */
  readonly probeNs?: number;
  /** Fraction of the smaller capacity offered at the point (default 0.9: the paper's p99 point). */
  readonly loadFraction?: number;
  /** Operations in flight during the capacity probe (default: the app's probeOutstanding). */
  readonly outstanding?: number;
  /** Host-only placement: charge the host core DPDK receive + send per client packet (default true). */
  readonly hostPacketIo?: boolean;
  readonly onPoint?: (done: number, total: number) => void;
}

/** One row: a role's nodes at one packet size and placement. */
export interface AppOffloadRow {
  readonly app: OffloadAppName;
  readonly role: string;
  readonly packetSize: number;
  readonly placement: OffloadPlacement;
  /** Nodes playing this role (their figures are averaged per node). */
  readonly nodes: number;
  /** Host core-seconds per second on one node of this role. */
  readonly hostCores: number;
  /** NIC core-seconds per second on one node of this role. */
  readonly nicCores: number;
  /** The load offered (requests/s ÷ 1e6), the same for both placements at this size. */
  readonly offeredMops: number;
  /** Requests answered per second ÷ 1e6. */
  readonly throughputMops: number;
  /** throughputMops / hostCores; null when no host core worked. */
  readonly perCoreMops: number | null;
  /** Latency of the answered requests; null when none was answered (no latency, not 0 µs). */
  readonly avgLatencyUs: number | null;
  readonly p99LatencyUs: number | null;
  /** This placement's capacity from the closed-loop probe, requests/s ÷ 1e6. */
  readonly capacityMops: number;
  readonly answered: number;
  readonly refused: number;
  /** Migrations the scheduler made on this role's nodes during the measured run. */
  readonly migrations: number;
  /** Actors on this role's nodes that were on the host at the end of the window (space-separated). */
  readonly actorsOnHost: string;
}

/** The experiment's JSON document (`schemaVersion` 1). */
export interface AppOffloadResult {
  readonly schemaVersion: typeof APP_OFFLOAD_SCHEMA_VERSION;
  readonly experiment: 'app-offload';
  readonly app: OffloadAppName;
  readonly nic: string;
  /** The host profile of a simulated run (absent live: the host is this machine). */
  readonly host?: string;
  readonly seed: number;
  readonly workload: Readonly<Record<string, string | number | boolean>>;
  readonly method: {
    readonly loadFraction: number;
    readonly outstanding: number;
    readonly durationNs: number;
    readonly warmupNs: number;
    readonly probeNs: number;
    readonly hostPacketIo: boolean;
    readonly nicCores: number;
    readonly hostCoresAvailable: number;
  };
  readonly results: readonly AppOffloadRow[];
}

/** What one measured run of one deployment gives, per role and overall. */
interface RunMeasure {
  readonly throughputPerSec: number;
  readonly recorder: LatencyRecorder;
  readonly perRole: ReadonlyMap<
    string,
    {
      readonly nodes: number;
      readonly hostCores: number;
      readonly nicCores: number;
      readonly migrations: number;
      readonly actorsOnHost: readonly string[];
    }
  >;
}

/**
 * Runs the experiment: for each packet size, a capacity probe per placement, then the point at
 * the common offered load. Deterministic in `seed`.
 */
export function runAppOffload(options: AppOffloadOptions): AppOffloadResult {
  const placements = options.placements ?? OFFLOAD_PLACEMENTS;
  const loadFraction = options.loadFraction ?? 0.9;
  const outstanding = options.outstanding ?? options.app.probeOutstanding;
  const probeNs = options.probeNs ?? options.durationNs;
  const hostPacketIo = options.hostPacketIo ?? true;
  check('loadFraction', loadFraction > 0 && loadFraction <= 1, `must be in (0, 1], got ${loadFraction}`);
  check(
    'outstanding',
    Number.isInteger(outstanding) && outstanding >= 1,
    `must be a positive integer, got ${outstanding}`,
  );
  check('durationNs', options.durationNs > 0, `must be positive, got ${options.durationNs}`);
  check('probeNs', probeNs > 0, `must be positive, got ${probeNs}`);
  check('warmupNs', options.warmupNs >= 0, `must be ≥ 0, got ${options.warmupNs}`);
  check('packetSizes', options.packetSizes.length > 0, 'give at least one packet size');
  for (const size of options.packetSizes) {
    check(
      'packetSizes',
      Number.isInteger(size) && size >= 64 && size <= 9000,
      `each must be an integer in [64, 9000], got ${size}`,
    );
  }
  check('placements', placements.length > 0, 'give at least one placement');

  const root = new Random(options.seed);
  const rows: AppOffloadRow[] = [];
  const total = options.packetSizes.length * placements.length * 2;
  let done = 0;
  for (const packetBytes of options.packetSizes) {
    const sizeRandom = root.fork(`size-${packetBytes}`);
    const lineRatePerSec = 1e9 / options.timing.frameNs(packetBytes);
    const base = { options, packetBytes, hostPacketIo, random: sizeRandom };
    // 1. Capacity of each placement (same seeds for both: same requests in the same order).
    const capacity = new Map<OffloadPlacement, number>();
    for (const placement of placements) {
      const measure = runOnce({
        ...base,
        placement,
        expectedPerSec: lineRatePerSec,
        traffic: { kind: 'closed', outstanding },
        measuredNs: probeNs,
      });
      if (!(measure.throughputPerSec > 0)) {
        throw new ExperimentNoCapacityError(options.app.name, placement, packetBytes);
      }
      capacity.set(placement, measure.throughputPerSec);
      options.onPoint?.(++done, total);
    }
    // 2. The point: the same offered load for every placement.
    const offeredPerSec = loadFraction * Math.min(...capacity.values());
    for (const placement of placements) {
      const measure = runOnce({
        ...base,
        placement,
        expectedPerSec: offeredPerSec,
        traffic: { kind: 'open', ratePerSec: offeredPerSec },
        measuredNs: options.durationNs,
      });
      options.onPoint?.(++done, total);
      for (const role of options.app.roles) {
        const perRole = measure.perRole.get(role);
        if (!perRole) continue;
        const throughputMops = measure.throughputPerSec / 1e6;
        rows.push({
          app: options.app.name,
          role,
          packetSize: packetBytes,
          placement,
          nodes: perRole.nodes,
          hostCores: round(perRole.hostCores, 4),
          nicCores: round(perRole.nicCores, 4),
          offeredMops: round(offeredPerSec / 1e6, 4),
          throughputMops: round(throughputMops, 4),
          perCoreMops: perRole.hostCores > 0 ? round(throughputMops / perRole.hostCores, 4) : null,
          avgLatencyUs: measure.recorder.answered === 0 ? null : round(measure.recorder.meanNs / 1000, 3),
          p99LatencyUs:
            measure.recorder.answered === 0 ? null : round(measure.recorder.percentileNs(99) / 1000, 3),
          capacityMops: round((capacity.get(placement) ?? 0) / 1e6, 4),
          answered: measure.recorder.answered,
          refused: measure.recorder.refused,
          migrations: perRole.migrations,
          actorsOnHost: perRole.actorsOnHost.join(' '),
        });
      }
    }
  }
  return {
    schemaVersion: APP_OFFLOAD_SCHEMA_VERSION,
    experiment: 'app-offload',
    app: options.app.name,
    nic: options.nic,
    ...(options.host === undefined ? {} : { host: options.host }),
    seed: options.seed,
    workload: options.app.workload,
    method: {
      loadFraction,
      outstanding,
      durationNs: options.durationNs,
      warmupNs: options.warmupNs,
      probeNs,
      hostPacketIo,
      nicCores: options.timing.nicCores,
      hostCoresAvailable: options.timing.hostCores,
    },
    results: rows,
  };
}

interface RunSpec {
  readonly options: AppOffloadOptions;
  readonly packetBytes: number;
  readonly placement: OffloadPlacement;
  readonly hostPacketIo: boolean;
  readonly random: Random;
  readonly expectedPerSec: number;
  readonly traffic:
    | { readonly kind: 'closed'; readonly outstanding: number }
    | { readonly kind: 'open'; readonly ratePerSec: number };
  readonly measuredNs: number;
}

/** One deployment, one load, measured after the warm-up. */
function runOnce(spec: RunSpec): RunMeasure {
  const { options, packetBytes, placement } = spec;
  const kernel = new EventKernel();
  // The baseline keeps every actor on the host: nothing may migrate to the NIC.
  const scheduler = placement === 'host-only' ? { enableMigration: false } : {};
  const context: AppDeployContext = {
    kernel,
    timing: options.timing,
    placement,
    packetBytes,
    random: spec.random.fork('workload'),
    expectedRequestsPerSec: spec.expectedPerSec,
    newNode: () => new SimNode({ timing: options.timing, kernel, scheduler }),
    newCluster: (nodes) => new SimCluster({ kernel, timing: options.timing, nodes, node: { scheduler } }),
    clientFacing: (definition, isClientMessage) =>
      placement === 'host-only' && spec.hostPacketIo
        ? withHostPacketIo(definition, isClientMessage, packetBytes)
        : definition,
  };
  const deployment = options.app.deploy(context);
  const startNs = kernel.now();
  const measureFromNs = startNs + options.warmupNs;
  const endNs = measureFromNs + spec.measuredNs;
  const source = deployment.start({
    ...spec.traffic,
    random: spec.random.fork('requests'),
    startNs,
    endNs,
    measureFromNs,
  });
  kernel.run({ untilNs: measureFromNs });
  const before = deployment.nodes.map(({ node }) => busySums(node));
  const migrationsBefore = deployment.nodes.map(({ node }) => node.migrations.length);
  kernel.run({ untilNs: endNs });
  const after = deployment.nodes.map(({ node }) => busySums(node));
  const onHost = deployment.nodes.map(({ node }) => actorsOnHost(node));
  // Let requests sent inside the window finish (bounded: an overloaded run never drains).
  kernel.run({ untilNs: endNs + Math.max(options.warmupNs, spec.measuredNs) });
  const windowNs = spec.measuredNs;
  const perRole = new Map<
    string,
    { nodes: number; hostCores: number; nicCores: number; migrations: number; actorsOnHost: string[] }
  >();
  deployment.nodes.forEach(({ role, node }, index) => {
    const entry = perRole.get(role) ?? {
      nodes: 0,
      hostCores: 0,
      nicCores: 0,
      migrations: 0,
      actorsOnHost: [],
    };
    entry.actorsOnHost.push(...(onHost[index] as string[]));
    const b = before[index] as BusySums;
    const a = after[index] as BusySums;
    entry.nodes++;
    entry.hostCores += (a.hostNs - b.hostNs) / windowNs;
    entry.nicCores += (a.nicNs - b.nicNs) / windowNs;
    entry.migrations += node.migrations.length - (migrationsBefore[index] as number);
    perRole.set(role, entry);
  });
  for (const entry of perRole.values()) {
    entry.hostCores /= entry.nodes;
    entry.nicCores /= entry.nodes;
  }
  return {
    throughputPerSec: (source.recorder.answered * 1e9) / windowNs,
    recorder: source.recorder,
    perRole,
  };
}

interface BusySums {
  readonly hostNs: number;
  readonly nicNs: number;
}

/** Names of the actors living on `node`'s host (registered there, or migrated there). */
function actorsOnHost(node: SimNode): string[] {
  const names: string[] = [];
  for (const entry of node.table) {
    if (entry.location.domain === 'remote') continue;
    if (node.domainOf(entry.id) === 'host') names.push(entry.name);
  }
  return names;
}

function busySums(node: SimNode): BusySums {
  const busy = node.busyNs();
  let hostNs = 0;
  let nicNs = 0;
  for (const ns of busy.host) hostNs += ns;
  for (const ns of busy.nic) nicNs += ns;
  return { hostNs, nicNs };
}

/**
 * The host-only baseline's packet I/O: with a standard NIC the host core itself receives each
 * client packet and sends its answer (a DPDK poll-mode path). The definition returned charges,
 * on top of the actor's declared work, the DPDK receive time of the request frame and the send
 * time of a minimum-size answer frame (Fig 6's DPDK curves, unbatched) for every message
 * `isClientMessage` accepts. Same codecs, so refs and topology lookups still match.
 */
export function withHostPacketIo<D extends AnyActorDefinition>(
  definition: D,
  isClientMessage: (message: unknown) => boolean,
  packetBytes: number,
  replyBytes = MIN_FRAME_BYTES,
): D {
  const txNs = messagingLatencyNs('dpdk-send', replyBytes);
  const rxNsBySize = new Map<number, number>();
  const rxNs = (bytes: number): number => {
    let ns = rxNsBySize.get(bytes);
    if (ns === undefined) {
      ns = messagingLatencyNs('dpdk-recv', bytes);
      rxNsBySize.set(bytes, ns);
    }
    return ns;
  };
  const cost = (message: unknown): HandlerWork => {
    const work = definition.cost(message) ?? { instructions: 0 };
    if (!isClientMessage(message)) return work;
    const bytes = Math.max(packetBytes, frameBytes(definition.messages.sizeOf(message)));
    return { ...work, fixedNs: (work.fixedNs ?? 0) + rxNs(bytes) + txNs };
  };
  return redefineActor<unknown, unknown>(definition, { cost }) as unknown as D;
}

/** A ref to the actor registered under `name` on `node` (apps address their entry actors so). */
export function refByName(node: SimNode, name: string): ActorRef<unknown, unknown> {
  const entry = node.table.lookupName(name);
  if (!entry) throw new ConfigError('app', `no actor "${name}" is registered on node ${node.id}`);
  return refOf(entry.definition, entry.id, entry.name);
}

/** One setup message: sent by a client to the actor registered as `name`, answered before the next. */
export interface SetupSend {
  readonly name: string;
  readonly message: unknown;
}

/**
 * Sends each setup message to its actor on `node` as a client would, and runs the kernel until
 * it is answered before sending the next (an app's configure messages depend on each other).
 * Throws ExperimentSetupError when one is refused or never answered.
 */
export function runSetup(node: SimNode, sends: readonly SetupSend[]): void {
  for (const send of sends) {
    let outcome: { ok: boolean; reply: unknown } | undefined;
    node.clientSend(refByName(node, send.name), send.message, (_id, _latencyNs, ok, reply) => {
      outcome = { ok, reply };
    });
    node.kernel.run({});
    if (outcome === undefined || !outcome.ok) {
      throw new ExperimentSetupError(
        send.name,
        outcome === undefined ? 'it was never answered' : `it was refused (${String(outcome.reply)})`,
      );
    }
  }
}

function check(path: string, ok: boolean, message: string): void {
  if (!ok) throw new ConfigError(path, message);
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
