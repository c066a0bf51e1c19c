/**
 * A live iPipe node: the NIC domain and the host domain, each a set of worker-thread cores over
 * its own shared DMO memory, joined by the NIC↔host channel, serving real UDP clients (§3–4).
 *
 * In one process (`LiveNode.start`) the channel is a pair of shared-memory rings. For a NIC whose
 * cores run Linux (a BlueField-class DPU), the NIC domain runs as its own process on the card
 * (`startNicDomain`) and the host domain in the host's (`startHostDomain`), the channel a TCP
 * connection between them; the controllers are the same, they only see a `MessageChannel`.
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import { ConfigError } from '../../../errors.ts';
import type { ActorId } from '../../../ids.ts';
import type { SchedulerPolicy } from '../../../sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../../../sched/settings.ts';
import type { Decision, Domain } from '../../../sched/types.ts';
import { createSharedChannelPair, type MessageChannel } from '../channel/channel.ts';
import { DEFAULT_MAX_FRAME_BYTES } from '../net/wire.ts';
import { type CatalogEntry, loadDefinitions } from './actor-catalog.ts';
import { ChannelLink, InProcessDma } from './channel-link.ts';
import { HostController, type HostCoreStats } from './host-controller.ts';
import { NicController, type PeerEndpoint } from './nic-controller.ts';
import type { NicDomain } from './nic-domain.ts';
import type { LiveMigrationRecord } from './nic-migration.ts';
import { SocketCoreController } from './socket-core-controller.ts';

export type { LiveMigrationRecord, NicDomain, PeerEndpoint };

/**
 * Which thread owns the node's UDP socket. 'controller' (the default): the main thread receives,
 * checks and schedules each request and hands it to a NIC core worker over its rings. 'core': NIC
 * core 0 (one worker thread) owns the socket and receives, schedules, runs and answers NIC-resident
 * actors' requests itself, the controller kept for the host side and migration — about 1.2× a bare
 * node:dgram echo's CPU per request instead of ~1.8× (docs/live-echo-path.md). 'core' runs one NIC
 * core and no peers; LiveNode.start refuses what it does not support.
 */
export type IngressMode = 'controller' | 'core';
export const INGRESS_MODES: readonly IngressMode[] = Object.freeze(['controller', 'core']);

export interface LiveNodeOptions {
  readonly catalog: readonly CatalogEntry[];
  readonly nicCores?: number;
  readonly hostCores?: number;
  /** UDP port (0: any free port) and address to bind. */
  readonly port?: number;
  readonly address?: string;
  readonly policy?: SchedulerPolicy;
  readonly scheduler?: Partial<SchedulerSettings>;
  readonly regionBytes?: number;
  readonly maxActors?: number;
  /** A handler running longer than this gets its actor deregistered and its core replaced. */
  readonly watchdogMs?: number;
  /** Requests the NIC holds (queued or buffered) before it refuses new ones. */
  readonly ingressLimit?: number;
  readonly maxFrameBytes?: number;
  /** Bytes of each ring: core work/result rings and the shared NIC↔host channel. */
  readonly ringBytes?: number;
  /** Where each actor starts, by name (default: host-pinned on the host, the rest on the NIC). */
  readonly placement?: Readonly<Record<string, Domain>>;
  /** This node's id in a cluster (default 0); catalog entries with another `node` live elsewhere. */
  readonly nodeId?: number;
  /** The other nodes' UDP addresses, by node id (a cluster's nodes all list each other). */
  readonly peers?: Readonly<Record<number, PeerEndpoint>>;
  /** Which thread owns the UDP socket (default 'controller'; see IngressMode). */
  readonly ingress?: IngressMode;
  /**
   * With ingress 'core': keep a warm spare core thread (imports done, idle) to take the port over
   * when the watchdog stops core 0 — the port is dark ~30–60 ms instead of the ~1 s a fresh thread
   * takes to start (default true). It costs a worker's start-up at node start and its memory.
   */
  readonly warmSpare?: boolean;
}

export interface LiveNodeStats {
  readonly requests: number;
  readonly replies: number;
  readonly errorReplies: number;
  readonly duplicates: number;
  /** Nanoseconds of handler execution on each side since the node started. */
  readonly handlerNs: { readonly nic: number; readonly host: number };
  /**
   * Actor messages to and from the cluster's other nodes, and client answers relayed for them.
   * Messages too big for one datagram travel in fragments (net/fragments.ts): `fragmented` of the
   * messages sent, the fragments sent and received, messages rebuilt, and the bytes partial
   * messages hold now.
   */
  readonly peer: {
    readonly sent: number;
    readonly received: number;
    readonly relayedReplies: number;
    readonly fragmented: number;
    readonly fragmentsSent: number;
    readonly fragmentsReceived: number;
    readonly reassembled: number;
    readonly reassemblyBytesHeld: number;
  };
  readonly drops: Readonly<Record<string, number>>;
  readonly executed: Readonly<Record<string, { readonly nic: number; readonly host: number }>>;
  /** The last 256 migrations, oldest first; `migrationsTotal` counts all of them. */
  readonly migrations: readonly LiveMigrationRecord[];
  readonly migrationsTotal: number;
  /** The last 256 scheduler decisions, oldest first; `decisionsTotal` counts all of them. */
  readonly decisions: readonly Decision[];
  readonly decisionsTotal: number;
  readonly watchdogKills: number;
  /**
   * Requests a core's work ring had no room for when the scheduler handed them over (a message
   * bigger than a frame, e.g. one rebuilt from fragments); they waited and went in order.
   */
  readonly ringFullHandOffs: number;
  /**
   * A split node's NIC domain only (`ipipe node --role nic`): true once the channel to the host
   * process closed while serving (requests for host actors are then `host-unreachable` drops).
   */
  readonly hostLost?: boolean;
}

/**
 * Live defaults for the scheduler. The paper's rule for the thresholds — the mean and p99 latency
 * of plain forwarding through the NIC at line rate — applied to this runtime: an echo through the
 * live node (UDP, scheduler, a worker core and back) takes ~0.1–0.3 ms unloaded and ~2.4 ms at
 * p50 / ~12 ms at p99 with 64 requests outstanding at its peak rate on a 2-vCPU VM
 * (bench/RESULTS.md), two orders of magnitude above a LiquidIO's 40 µs, so the CN2350 figures
 * would push every actor to the host at once. Mean 2 ms / tail 8 ms sit at the knee of that
 * curve: a NIC domain running near its capacity pushes its heaviest actor out, a lightly loaded
 * one never does. The settle time is 50 ms (not 2 ms) because the live latency estimate moves
 * with wall-clock noise (timers, GC, the VM) that the simulator does not have.
 */
export const LIVE_SCHEDULER_DEFAULTS: Partial<SchedulerSettings> = Object.freeze({
  meanThreshNs: 2_000_000,
  tailThreshNs: 8_000_000,
  settleNs: 50_000_000,
  // 10 ms statistics windows: the FCFS mean forgets with time at 1/32 per window (docs/scheduler.md,
  // decision 9), so its memory by time is ~320 ms, a few settle periods. With the simulator's
  // 100 µs (a ~3 ms memory) a single 5 ms stall of the machine (GC, the VM) read as the NIC's
  // latency and pushed an actor; with 1 ms the showcase's live part, on a quiet 2-vCPU machine
  // whose worker threads are descheduled for ms at a time, made 4–9 scheduler moves in 1.6 s
  // (0–2 before the mean was bounded in time), with 10 ms 0–2 again. Rates and core utilisations
  // follow the same memory here.
  windowNs: 10_000_000,
  // Handing a request to a worker core costs a doorbell (a futex wake, ~25–50 µs on a VM when the
  // core sleeps) and an event-loop turn for its result, while a handler costs a few µs. With one
  // request per core the node served 9.9 k echo requests/s (0.14× a bare node:dgram echo); with
  // a core holding up to 16, one wake-up carries a batch: 21.7 k/s (0.35×), bench/RESULTS.md.
  // An exclusive actor's requests queue on the one core that holds it (see coreQueueDepth).
  coreQueueDepth: 16,
  // The first requests run cold (module loading, the JIT: an echo's first took 4.8 ms against
  // ~10 µs warm) and every request queued behind them waits as long; as the first samples of a
  // running mean they pushed a node's actors to the host at its first requests. 256 completions
  // is the default FCFS latency EWMA's own warm-up (1/latencyEwmaWeight), after which it is an
  // EWMA (a node that overrides the weight should set this to match).
  pushWarmupCompletions: 256,
});

interface Resolved {
  readonly options: Required<
    Omit<LiveNodeOptions, 'placement' | 'scheduler' | 'policy' | 'peers' | 'ingress' | 'warmSpare'>
  > &
    LiveNodeOptions;
  readonly peers: ReadonlyMap<number, PeerEndpoint>;
  readonly definitions: Map<ActorId, AnyActorDefinition>;
  readonly initialDomain: Map<ActorId, Domain>;
}

/** What `ingress: 'core'` does not do yet: refused at start, never served half-right. */
function checkCoreIngress(options: LiveNodeOptions): void {
  const refuse = (path: string, what: string, instead: string) => {
    throw new ConfigError(path, `${what} is not supported with ingress 'core' (--ingress core); ${instead}`);
  };
  if (options.nicCores !== undefined && options.nicCores !== 1) {
    refuse(
      'nicCores',
      `${options.nicCores} NIC cores (core 0 owns the socket and runs every NIC-resident actor)`,
      "use 1 NIC core, or ingress 'controller' for several",
    );
  }
  if (
    Object.keys(options.peers ?? {}).length > 0 ||
    options.catalog.some((e) => (e.node ?? options.nodeId ?? 0) !== (options.nodeId ?? 0))
  ) {
    refuse(
      'peers',
      'a cluster (peers, actors on other nodes)',
      "run cluster nodes with ingress 'controller'",
    );
  }
}

async function resolve(options: LiveNodeOptions): Promise<Resolved> {
  if (options.ingress !== undefined && !INGRESS_MODES.includes(options.ingress))
    throw new ConfigError(
      'ingress',
      `must be one of ${INGRESS_MODES.join(', ')}, got ${String(options.ingress)}`,
    );
  if (options.ingress === 'core') checkCoreIngress(options);
  const o = {
    nicCores: options.ingress === 'core' ? 1 : 2,
    hostCores: 2,
    port: 0,
    address: '127.0.0.1',
    regionBytes: 4 * 1024 * 1024,
    maxActors: 32,
    watchdogMs: 1_000,
    ingressLimit: 65_536,
    maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
    ringBytes: 1 << 21,
    nodeId: 0,
    ...options,
  };
  if (!Number.isInteger(o.nodeId) || o.nodeId < 0 || o.nodeId > 0xffff_ffff)
    throw new ConfigError('nodeId', `must be a u32, got ${o.nodeId}`);
  const peers = new Map<number, PeerEndpoint>();
  for (const [key, endpoint] of Object.entries(options.peers ?? {})) {
    const id = Number(key);
    if (!Number.isInteger(id) || id < 0 || id === o.nodeId) {
      throw new ConfigError(`peers.${key}`, "peer keys are the other nodes' ids (u32, not this node's own)");
    }
    if (
      typeof endpoint?.address !== 'string' ||
      !Number.isInteger(endpoint.port) ||
      endpoint.port < 1 ||
      endpoint.port > 65_535
    ) {
      throw new ConfigError(`peers.${key}`, 'expected { address: string, port: 1..65535 }');
    }
    peers.set(id, { address: endpoint.address, port: endpoint.port });
  }
  if (!Number.isInteger(o.nicCores) || o.nicCores < 1)
    throw new ConfigError('nicCores', `must be a positive integer, got ${o.nicCores}`);
  if (!Number.isInteger(o.hostCores) || o.hostCores < 1)
    throw new ConfigError('hostCores', `must be a positive integer, got ${o.hostCores}`);
  if (o.catalog.length === 0) throw new ConfigError('catalog', 'a node needs at least one actor');
  // A core's work ring must hold every request it may be handed at once (coreQueueDepth of them,
  // each a frame plus its origin), with room to spare for the forget/stop controls.
  const depth = o.scheduler?.coreQueueDepth ?? LIVE_SCHEDULER_DEFAULTS.coreQueueDepth ?? 1;
  const neededRingBytes = 2 * depth * (o.maxFrameBytes + 256);
  if (!Number.isInteger(o.ringBytes) || o.ringBytes < neededRingBytes) {
    throw new ConfigError(
      'ringBytes',
      `must be at least ${neededRingBytes} (2 × coreQueueDepth ${depth} × (maxFrameBytes ${o.maxFrameBytes} + 256)), got ${o.ringBytes}`,
    );
  }
  const loaded = await loadDefinitions(o.catalog);
  const definitions = new Map<ActorId, AnyActorDefinition>();
  const initialDomain = new Map<ActorId, Domain>();
  o.catalog.forEach((entry, index) => {
    const definition = loaded[index] as AnyActorDefinition;
    definitions.set(entry.id, definition);
    if ((entry.node ?? o.nodeId) !== o.nodeId) return; // another node's actor: a remote row only
    const wanted = options.placement?.[entry.name] ?? (definition.placement === 'host' ? 'host' : 'nic');
    if (definition.placement !== 'any' && definition.placement !== wanted) {
      throw new ConfigError(
        `placement.${entry.name}`,
        `actor ${entry.name} is pinned to the ${definition.placement}`,
      );
    }
    initialDomain.set(entry.id, wanted);
  });
  return { options: o, definitions, initialDomain, peers };
}

function nicOptions(r: Resolved) {
  const o = r.options;
  return {
    catalog: o.catalog,
    definitions: r.definitions,
    initialDomain: r.initialDomain,
    cores: o.nicCores,
    port: o.port,
    address: o.address,
    policy: o.policy ?? 'hybrid',
    scheduler: { ...LIVE_SCHEDULER_DEFAULTS, ...o.scheduler },
    regionBytes: o.regionBytes,
    maxActors: o.maxActors,
    watchdogMs: o.watchdogMs,
    ingressLimit: o.ingressLimit,
    maxFrameBytes: o.maxFrameBytes,
    ringBytes: o.ringBytes,
    nodeId: o.nodeId,
    peers: r.peers,
    warmSpare: o.warmSpare ?? true,
  };
}

function hostOptions(r: Resolved) {
  const o = r.options;
  return {
    catalog: o.catalog,
    definitions: r.definitions,
    initialDomain: r.initialDomain,
    cores: o.hostCores,
    regionBytes: o.regionBytes,
    maxActors: o.maxActors,
    watchdogMs: o.watchdogMs,
    ringBytes: o.ringBytes,
    coreQueueDepth: o.scheduler?.coreQueueDepth ?? LIVE_SCHEDULER_DEFAULTS.coreQueueDepth ?? 1,
  };
}

/** The NIC domain alone, its channel to the host given (e.g. a TCP connection): the DPU process. */
export async function startNicDomain(
  options: LiveNodeOptions,
  channel: MessageChannel,
): Promise<NicController> {
  if (options.ingress === 'core') {
    throw new ConfigError(
      'ingress',
      "the split node (NIC domain in its own process, host over TCP) is not supported with ingress 'core' (--ingress core); use ingress 'controller' for `ipipe node`",
    );
  }
  return NicController.start(nicOptions(await resolve(options)), new ChannelLink(channel));
}

/** The host domain alone, its channel to the NIC given: the host process of a split node. */
export async function startHostDomain(
  options: LiveNodeOptions,
  channel: MessageChannel,
): Promise<HostController> {
  return HostController.start(hostOptions(await resolve(options)), new ChannelLink(channel));
}

export class LiveNode {
  readonly nic: NicDomain;
  readonly host: HostController;
  /** Which thread owns the UDP socket. */
  readonly ingress: IngressMode;
  readonly #links: ChannelLink[];
  #stopped = false;

  private constructor(nic: NicDomain, host: HostController, links: ChannelLink[]) {
    this.nic = nic;
    this.ingress = nic instanceof SocketCoreController ? 'core' : 'controller';
    this.host = host;
    this.#links = links;
  }

  /** Both domains in this process, joined by shared-memory rings. */
  static async start(options: LiveNodeOptions): Promise<LiveNode> {
    const resolved = await resolve(options);
    const pair = createSharedChannelPair({ capacityBytes: resolved.options.ringBytes });
    // Both domains live in this process: regions move by "DMA" (see channel-link.ts).
    const dma = new InProcessDma();
    const nicLink = new ChannelLink(pair.nic, dma);
    const hostLink = new ChannelLink(pair.host, dma);
    const host = await HostController.start(hostOptions(resolved), hostLink);
    let nic: NicDomain;
    try {
      nic =
        options.ingress === 'core'
          ? await SocketCoreController.start(nicOptions(resolved), nicLink)
          : await NicController.start(nicOptions(resolved), nicLink);
    } catch (error) {
      // A NIC domain that cannot start (bad catalog, port taken) must not leave host cores running.
      await host.stop();
      await Promise.all([nicLink.close(), hostLink.close()]);
      throw error;
    }
    return new LiveNode(nic, host, [nicLink, hostLink]);
  }

  get address(): { readonly address: string; readonly port: number } {
    return this.nic.address;
  }

  actorId(name: string): ActorId {
    const entry = this.nic.table.lookupName(name);
    if (!entry) throw new ConfigError('actor', `no actor named "${name}" on this node`);
    return entry.id;
  }

  domainOf(actor: ActorId): Domain | 'migrating' {
    return this.nic.domainOf(actor);
  }

  migrate(actor: ActorId, to: Domain, trigger = 'forced'): Promise<LiveMigrationRecord> {
    return this.nic.migrate(actor, to, trigger);
  }

  stats(): LiveNodeStats {
    return domainStats(this.nic, this.host);
  }

  /** Each host core's rings and queue (/metrics). */
  hostCoreStats(): readonly HostCoreStats[] {
    return this.host.coreStats();
  }

  /** Every reason `stats().drops` may count, named as there (/metrics exports each from 0). */
  dropReasons(): readonly string[] {
    return domainDropReasons(this.nic, this.host);
  }

  /** Graceful stop: refuse new requests, let queued work finish (up to `drainMs`), stop every core. */
  async stop(drainMs = 2_000): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.nic.beginStop();
    const deadline = performance.now() + drainMs;
    while (performance.now() < deadline && (!this.nic.idle || this.host.busy)) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await this.nic.stop();
    await this.host.stop();
    await Promise.all(this.#links.map((link) => link.close()));
  }
}

/** What the host domain adds to a node's statistics (absent for a split NIC domain: another process). */
type HostCounters = Pick<HostController, 'drops' | 'replacedCores' | 'ringFullHandOffs'>;

/** The drop reasons `domainStats` may report: the NIC's, and the host's (prefixed) when it is here. */
function domainDropReasons(nic: NicDomain, host?: Pick<HostController, 'dropReasons'>): readonly string[] {
  return [...nic.dropReasons, ...(host?.dropReasons ?? []).map((reason) => `host-${reason}`)];
}

/**
 * A node's statistics as its NIC controller sees them, with the host domain's own counters when
 * the host runs in this process. A split NIC domain (`ipipe node --role nic`) has no `host`: its
 * host-side drops, watchdog kills and ring hand-offs are the host process's and are not counted.
 */
export function domainStats(nic: NicDomain, host?: HostCounters): LiveNodeStats {
  const executed: Record<string, { nic: number; host: number }> = {};
  for (const [id, counts] of nic.executed) executed[nic.table.lookup(id)?.name ?? String(id)] = { ...counts };
  return {
    requests: nic.requests,
    replies: nic.replies,
    errorReplies: nic.errorReplies,
    duplicates: nic.duplicates,
    handlerNs: { ...nic.handlerNs },
    peer: {
      sent: nic.peerFramesSent,
      received: nic.peerFramesReceived,
      relayedReplies: nic.relayedReplies,
      fragmented: nic.peerMessagesFragmented,
      fragmentsSent: nic.peerFragmentsSent,
      fragmentsReceived: nic.peerFragmentsReceived,
      reassembled: nic.reassembler.messagesRebuilt,
      reassemblyBytesHeld: nic.reassembler.bytesHeld,
    },
    drops: Object.fromEntries([
      ...nic.drops,
      ...[...(host?.drops ?? [])].map(([r, n]) => [`host-${r}`, n] as const),
    ]),
    executed,
    migrations: nic.migrations.recent(),
    migrationsTotal: nic.migrations.total,
    decisions: nic.decisions.recent(),
    decisionsTotal: nic.decisions.total,
    watchdogKills: nic.replacedCores + (host?.replacedCores ?? 0),
    ringFullHandOffs: nic.ringFullHandOffs + (host?.ringFullHandOffs ?? 0),
  };
}

/**
 * A split node's NIC domain (`startNicDomain`) seen as a node by the admin server: it serves
 * /metrics, /stats and /migrate like `LiveNode`, counting the NIC's side only.
 */
export function nicDomainNode(
  nic: NicController,
): Pick<LiveNode, 'nic' | 'stats' | 'dropReasons' | 'hostCoreStats' | 'actorId' | 'migrate'> {
  return {
    nic,
    stats: () => ({ ...domainStats(nic), hostLost: nic.hostLost }),
    dropReasons: () => domainDropReasons(nic),
    // The host cores are the host process's (which serves no /metrics): none reported here.
    hostCoreStats: () => [],
    actorId(name: string): ActorId {
      const entry = nic.table.lookupName(name);
      if (!entry) throw new ConfigError('actor', `no actor named "${name}" on this node`);
      return entry.id;
    },
    migrate: (actor, to, trigger = 'forced') => nic.migrate(actor, to, trigger),
  };
}
