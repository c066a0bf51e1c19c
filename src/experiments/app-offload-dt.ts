/**
 * DT in the applications' offload experiment (iPipe §5: "DT: coordinator + 2 participants" on 3
 * servers; "each transaction reads 2 keys and writes 1"). Three simulated nodes on one fabric
 * (SimCluster): node 0 runs the coordinator and its host-pinned logging actor, nodes 1 and 2 one
 * participant (shard) each. The actors are DT's own (src/apps/dt/actors.ts), set up with the same
 * messages as DT's single-node experiment hook (sim-deployment.ts); clients are FaSST clients
 * (DtClientSession: reads straight to the owning participant, then a commit request to the
 * coordinator), each sending to the node that holds the actor it addresses.
 *
 * One client operation is one transaction (2 reads + commit, with the coordinator's lock,
 * validate, log and commit rounds behind it): throughput is committed transactions per second,
 * latency from begin to the outcome; aborted transactions count as refused.
 *
 * Value size grows with the packet size: a read answer carrying the value fills the packet.
 */

import type { ActorRef } from '../actor/actor-ref.ts';
import { dtCoordinator, dtLogger, dtParticipant } from '../apps/dt/actors.ts';
import { MemoryLogStorage, registerMemoryLogStorage } from '../apps/dt/log-storage.ts';
import { type DtMessage, dtMessages } from '../apps/dt/messages.ts';
import { DtSimClient, type DtSimSend } from '../apps/dt/sim-deployment.ts';
import { type Address, hashShardMap, type ShardMap } from '../apps/dt/types.ts';
import { type DtWorkload, fasstWorkload, keyName } from '../apps/dt/workload.ts';
import { ConfigError } from '../errors.ts';
import type { SimCluster } from '../platform/sim/sim-cluster.ts';
import { frameBytes } from '../platform/sim/sim-node.ts';
import { LatencyRecorder } from '../platform/sim/traffic.ts';
import type { AppDeployContext, AppDeployment, OffloadApp, TrafficPlan } from './app-offload.ts';

/** DT's experiment settings (`--app-config` for `ipipe experiment dt`). */
export interface DtOffloadOptions {
  /** Keys in the store (default 4000; every key's value is loaded before the run). */
  readonly keys?: number;
  /** Zipf exponent of key popularity; 0 (default) draws keys uniformly, as FaSST's benchmark. */
  readonly zipfExponent?: number;
  /** Participants, one per node after the coordinator's (default 2: the paper's three servers). */
  readonly participants?: number;
}

/** Coordinator-bound messages that arrive over the network (client or participants), not from its logger or timer. */
const COORDINATOR_NETWORK_TYPES: ReadonlySet<string> = new Set([
  'commit-request',
  'lock-reply',
  'validate-reply',
  'commit-ack',
  'abort-ack',
  'status-pending',
]);
/** Participant-bound messages that arrive over the network (clients' reads, the coordinator's rounds). */
const PARTICIPANT_NETWORK_TYPES: ReadonlySet<string> = new Set([
  'read',
  'lock',
  'validate',
  'commit',
  'abort',
  'status-query',
]);

const typeIn =
  (types: ReadonlySet<string>) =>
  (message: unknown): boolean =>
    types.has((message as { type: string }).type);

/** Bytes of a value such that a read answer carrying it fills a frame of `packetBytes`. */
export function dtValueBytes(packetBytes: number): number {
  const empty = dtMessages.sizeOf({
    type: 'read-reply',
    client: 0,
    seq: 0,
    shard: 0,
    key: keyName('k', 0),
    status: 'ok',
    found: true,
    value: new Uint8Array(0),
    version: 0,
    locked: false,
  });
  return Math.max(8, packetBytes - frameBytes(empty));
}

let storages = 0;
/** Keys per initial-data load message, and the time between two (see setUp). */
const LOAD_CHUNK_ITEMS = 16;
const LOAD_SPACING_NS = 20_000;

/** DT as an OffloadApp. */
export function dtOffloadApp(options: DtOffloadOptions = {}): OffloadApp {
  const keys = options.keys ?? 4000;
  const zipfExponent = options.zipfExponent ?? 0;
  const participants = options.participants ?? 2;
  if (!(Number.isInteger(keys) && keys >= 3))
    throw new ConfigError('dt.keys', `must be an integer ≥ 3, got ${keys}`);
  if (!(zipfExponent >= 0 && zipfExponent < 10)) {
    throw new ConfigError('dt.zipfExponent', `must be in [0, 10), got ${zipfExponent}`);
  }
  if (!(Number.isInteger(participants) && participants >= 1 && participants <= 8)) {
    throw new ConfigError('dt.participants', `must be an integer in [1, 8], got ${participants}`);
  }
  return {
    name: 'dt',
    roles: ['coordinator', 'participant'],
    // Transactions retransmit (clients after 1 ms, the coordinator after 200 µs): far more in
    // flight than the exclusive coordinator can hold turns into retransmission storms.
    probeOutstanding: 32,
    workload: {
      transaction: 'read 2 keys, write 1 (FaSST)',
      keys,
      keyDistribution: zipfExponent > 0 ? `zipf ${zipfExponent}` : 'uniform',
      participants,
    },
    deploy(context: AppDeployContext): AppDeployment {
      const valueBytes = dtValueBytes(context.packetBytes);
      const workload = fasstWorkload({
        keys,
        valueBytes,
        ...(zipfExponent > 0 ? { distribution: { kind: 'zipf' as const, exponent: zipfExponent } } : {}),
      });
      const cluster = context.newCluster(1 + participants);
      const shards = hashShardMap(participants);
      const host = context.placement === 'host-only' ? { domain: 'host' as const } : {};
      const logger = cluster.register(0, dtLogger, { name: 'dt-logger' });
      const coordinator = cluster.register(
        0,
        context.clientFacing(dtCoordinator, typeIn(COORDINATOR_NETWORK_TYPES)),
        { name: 'dt-coordinator', ...host },
      );
      const participantRefs = Array.from({ length: participants }, (_, shard) =>
        cluster.register(1 + shard, context.clientFacing(dtParticipant, typeIn(PARTICIPANT_NETWORK_TYPES)), {
          name: `dt-participant-${shard}`,
          ...host,
        }),
      );
      setUp(cluster, { logger, coordinator, participants: participantRefs, shards, workload, valueBytes });
      const route = (to: Address): Route | undefined => {
        if (to.kind === 'coordinator') return { node: 0, ref: coordinator };
        if (to.kind === 'participant') {
          const ref = participantRefs[to.shard];
          return ref ? { node: 1 + to.shard, ref } : undefined;
        }
        return undefined;
      };
      return {
        nodes: [
          { role: 'coordinator', node: cluster.node(0) },
          ...participantRefs.map((_, shard) => ({ role: 'participant', node: cluster.node(1 + shard) })),
        ],
        start: (plan) => startClients(cluster, shards, route, workload, plan, valueBytes),
      };
    },
  };
}

interface Route {
  readonly node: number;
  readonly ref: ActorRef<DtMessage, DtMessage>;
}

/**
 * The same setup DT's experiment hook sends (sim-deployment.ts), through the cluster: the
 * logger's, each participant's, the initial data, then the coordinator's (which starts recovery
 * against its logger); runs the kernel until all of it has settled.
 */
function setUp(
  cluster: SimCluster,
  parts: {
    readonly logger: ActorRef<DtMessage, DtMessage>;
    readonly coordinator: ActorRef<DtMessage, DtMessage>;
    readonly participants: readonly ActorRef<DtMessage, DtMessage>[];
    readonly shards: ShardMap;
    readonly workload: DtWorkload;
    readonly valueBytes: number;
  },
): void {
  const ignore = (): void => {};
  const disk = new MemoryLogStorage(`experiment-${++storages}`);
  const storageName = `app-offload-dt-${storages}`;
  registerMemoryLogStorage(storageName, disk);
  cluster.clientSend(
    0,
    parts.logger,
    {
      type: 'logger-setup',
      storage: `memory:${storageName}`,
      coordinator: 'dt-coordinator',
      groupCommitNs: 10_000,
      recovery: 'refuse-corruption',
    },
    ignore,
  );
  parts.participants.forEach((ref, shard) => {
    cluster.clientSend(
      1 + shard,
      ref,
      {
        type: 'participant-setup',
        shard,
        shardCount: parts.participants.length,
        coordinator: 'dt-coordinator',
        leaseNs: 2_000_000,
      },
      ignore,
    );
  });
  settle(cluster);
  // The initial data in small loads, spaced out: one 4000-key load would be a millisecond-long
  // handler, and the hybrid scheduler would (rightly) push the participant to the host before
  // the workload even starts.
  const data = parts.workload.initialData();
  const startNs = cluster.kernel.now();
  parts.participants.forEach((ref, shard) => {
    const items = data.filter((item) => parts.shards.shardOf(item.key) === shard);
    for (let start = 0, index = 0; start < items.length; start += LOAD_CHUNK_ITEMS, index++) {
      cluster
        .node(1 + shard)
        .clientSend(
          ref,
          { type: 'participant-load', items: items.slice(start, start + LOAD_CHUNK_ITEMS) },
          ignore,
          undefined,
          {
            atNs: startNs + index * LOAD_SPACING_NS,
          },
        );
    }
  });
  cluster.kernel.run({ untilNs: startNs + Math.ceil(data.length / LOAD_CHUNK_ITEMS) * LOAD_SPACING_NS });
  settle(cluster);
  cluster.clientSend(
    0,
    parts.coordinator,
    {
      type: 'coordinator-setup',
      participants: parts.participants.map((_, shard) => `dt-participant-${shard}`),
      logger: 'dt-logger',
      retryNs: 200_000,
      txnTimeoutNs: 5_000_000,
      logLimitRecords: 64,
      maxValueBytes: Math.max(1024, parts.valueBytes),
      nonce: 1,
    },
    ignore,
  );
  settle(cluster);
}

/**
 * Runs the kernel for a simulated millisecond: enough for setup messages to land and their
 * answers to return. (DT's actors keep periodic timers, so the kernel is never idle.)
 */
function settle(cluster: SimCluster): void {
  cluster.kernel.run({ untilNs: cluster.kernel.now() + 1_000_000 });
}

/**
 * Closed loop: `outstanding` clients, each running one transaction after another. Open loop:
 * transactions begin at Poisson times, each on an idle client (a new one when all are busy).
 */
function startClients(
  cluster: SimCluster,
  shards: ShardMap,
  route: (to: Address) => Route | undefined,
  workload: DtWorkload,
  plan: TrafficPlan,
  valueBytes: number,
): { readonly recorder: LatencyRecorder } {
  const recorder = new LatencyRecorder(plan.measureFromNs);
  const kernel = cluster.kernel;
  const plans = plan.random.fork('plans');
  let nextClientId = 1;
  // Each request goes to the node that holds its target; the answer comes back to the client.
  const send: DtSimSend = (to, message, onReply) => {
    const target = route(to);
    if (!target) return;
    cluster.clientSend(target.node, target.ref, message, (_id, _latency, ok, reply) => {
      if (ok && typeof reply === 'object' && reply !== null) onReply(reply as DtMessage);
    });
  };
  const newClient = () =>
    new DtSimClient(
      kernel,
      nextClientId++,
      shards,
      send,
      1_000_000,
      (result) =>
        recorder.record(
          result.finishedAtNs - result.latencyNs,
          result.latencyNs,
          result.outcome.outcome === 'committed',
        ),
      Math.max(1024, valueBytes),
    );
  if (plan.kind === 'closed') {
    for (let i = 0; i < plan.outstanding; i++) {
      const client = newClient();
      const next = (): void => {
        if (kernel.now() >= plan.endNs) return;
        client.run(workload.next(plans), next);
      };
      kernel.at(plan.startNs + plan.random.int(0, 10_000), next);
    }
    return { recorder };
  }
  const idle: DtSimClient[] = [];
  const gaps = plan.random.fork('arrivals');
  const meanGapNs = 1e9 / plan.ratePerSec;
  const arrive = (): void => {
    const client = idle.pop() ?? newClient();
    client.run(workload.next(plans), () => idle.push(client));
    const at = kernel.now() + Math.max(1, Math.round(-Math.log(1 - gaps.next()) * meanGapNs));
    if (at < plan.endNs) kernel.at(at, arrive);
  };
  kernel.at(plan.startNs, arrive);
  return { recorder };
}
