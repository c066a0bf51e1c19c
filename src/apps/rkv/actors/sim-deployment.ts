/**
 * RKV on a SimCluster (iPipe §5: "RKV: leader + 2 followers" on three servers): each replica is
 * one simulated node running the four actors — consensus and memtable (`any`: on the NIC unless
 * the runtime moves them), SSTable reader and compaction (pinned to the host) — with its own
 * modelled disk. Registers them, sends the setup messages and waits for every answer; the leader's
 * phase 1 runs during that wait. Used by the offload experiment and the tests.
 *
 * With `durableLog` each replica also runs a durable-log actor (log-actor.ts, pinned to the host)
 * over a modelled log (sim-log.ts) that the deployment keeps, with the SimDisk, across a node's
 * crash: `crashReplica` crashes the node (SimCluster.crash) and takes its disk and log away from
 * the dead incarnation; `restartReplica` restarts it (the same actors from init on a fresh node),
 * hands the disk and log to the new incarnation and sets the actors up again — the consensus actor
 * then recovers from its log and rejoins as a follower.
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { ActorRef } from '../../../actor/index.ts';
import { ConfigError, ExperimentSetupError } from '../../../errors.ts';
import type { SimCluster } from '../../../platform/sim/sim-cluster.ts';
import { rkvConsensus } from './consensus-actor.ts';
import { rkvLog } from './log-actor.ts';
import type { RkvMessage } from './messages.ts';
import { registerSimDisk, SimDisk, unregisterSimDisk } from './sim-disk.ts';
import { registerSimLog, SimLog, unregisterSimLog } from './sim-log.ts';
import { rkvCompaction, rkvMemtable, rkvSstableReader } from './storage-actors.ts';

/** The actors of one replica, by role. */
export type RkvActorRole = 'consensus' | 'memtable' | 'sstable' | 'compaction' | 'log';

/** What `deployRkvOnSimCluster` takes. */
export interface RkvSimOptions {
  /** Replica whose node leads (default 0). */
  readonly leader?: number;
  /** Keys of the pre-loaded data set on every replica's disk (default 1 000 000). */
  readonly baseKeys?: number;
  /** Bytes of each pre-loaded value. */
  readonly valueBytes: number;
  /** Flush the memtable once it holds this many bytes (default 1 MiB; see docs/apps/rkv-sim.md). */
  readonly memtableLimitBytes?: number;
  /** Level-0 tables that trigger a merge into level 1 (default 4). */
  readonly level0Trigger?: number;
  /** Register every actor on the host (the host-only baseline); default: by placement. */
  readonly allOnHost?: boolean;
  /**
   * Give each replica a durable log on its host (log-actor.ts): promises and accepts are synced
   * before they are answered, and a replica survives `crashReplica` / `restartReplica`. Default
   * false: the acceptor state lives only in NIC memory (the offload experiment's fault-free model).
   */
  readonly durableLog?: boolean;
  /**
   * The consensus actors' timers (consensus-actor.ts): heartbeat period H and election timeout /
   * lease T, in ns. Absent (or heartbeatNs 0): static mode — the setup leader leads for good, no
   * timers (the offload experiment). With timers the deployment returns as soon as every setup is
   * answered; the leader's election then runs with the caller's kernel.
   */
  readonly consensus?: {
    readonly heartbeatNs: number;
    readonly electionTimeoutNs: number;
    /** Log entries kept for a replica that does not apply them (default DEFAULT_MAX_LOG_ENTRIES). */
    readonly maxLogEntries?: number;
    /** Test-only mutations (UNSAFE_* in consensus-actor.ts). */
    readonly unsafe?: number;
    /**
     * Bytes of items and sessions per state-transfer chunk (durableLog only: the log serves the
     * snapshot); default SNAPSHOT_CHUNK_BYTES. Tests set it small to cut a few keys into chunks.
     */
    readonly snapshotChunkBytes?: number;
    /**
     * Pre-vote before standing (consensus-actor.ts): a replica that was cut off does not depose a
     * leader the others still hear. Default false (the step-by-step tests build elections by
     * cutting one replica off).
     */
    readonly preVote?: boolean;
  };
  /** Replaces an actor's definition before registration (the experiment's packet-I/O wrapper). */
  readonly wrap?: (role: RkvActorRole, definition: AnyActorDefinition) => AnyActorDefinition;
}

/** The deployed group. */
export interface RkvSimDeployment {
  readonly cluster: SimCluster;
  readonly leader: number;
  readonly consensus: readonly ActorRef<RkvMessage, RkvMessage>[];
  readonly memtables: readonly ActorRef<RkvMessage, RkvMessage>[];
  readonly sstables: readonly ActorRef<RkvMessage, RkvMessage>[];
  readonly compactions: readonly ActorRef<RkvMessage, RkvMessage>[];
  /** Durable-log actors, by replica (empty without `durableLog`). */
  readonly logActors: readonly ActorRef<RkvMessage, RkvMessage>[];
  readonly disks: readonly SimDisk[];
  /** Each replica's durable log (empty without `durableLog`); kept across restarts. */
  readonly logs: readonly SimLog[];
}

/** What restarting a replica needs: its setup messages and its storage's names per incarnation. */
interface Restartable {
  readonly setups: (replica: number) => { ref: ActorRef<RkvMessage, RkvMessage>; message: RkvMessage }[];
  readonly storageNames: (replica: number) => { disk: string; log: string };
  readonly incarnations: number[];
}
const restartables = new WeakMap<RkvSimDeployment, Restartable>();

/** Instance names of replica `replica`'s actors. */
export function rkvInstanceName(role: RkvActorRole, replica: number): string {
  return `rkv-${role}-${replica}`;
}

let deployments = 0;
/** With timers: how long (simulated) a setup may take to be answered. */
const SETUP_WAIT_NS = 50_000_000;

/**
 * Registers the four actors on every node of `cluster` (replica r on node r), sets them up and
 * runs the kernel until each setup is answered. Throws ExperimentSetupError when one is refused
 * or never answered.
 */
export function deployRkvOnSimCluster(cluster: SimCluster, options: RkvSimOptions): RkvSimDeployment {
  const replicas = cluster.nodes.length;
  const leader = options.leader ?? 0;
  const deployment = ++deployments;
  const host = options.allOnHost === true ? { domain: 'host' as const } : {};
  const wrap = options.wrap ?? ((_role, definition) => definition);
  const register = (role: RkvActorRole, replica: number, definition: AnyActorDefinition) =>
    cluster.register(replica, wrap(role, definition), {
      name: rkvInstanceName(role, replica),
      ...host,
    }) as unknown as ActorRef<RkvMessage, RkvMessage>;
  const any = (definition: unknown) => definition as AnyActorDefinition;
  const replicaIds = Array.from({ length: replicas }, (_, r) => r);
  const durable = options.durableLog === true;
  const disks = replicaIds.map(
    () => new SimDisk({ baseKeys: options.baseKeys ?? 1_000_000, valueBytes: options.valueBytes }),
  );
  const logs = durable ? replicaIds.map(() => new SimLog()) : [];
  const incarnations = replicaIds.map(() => 1);
  // Per incarnation: a crashed node's actors must not find the storage its successor uses.
  const storageNames = (r: number) => {
    const suffix = incarnations[r] === 1 ? '' : `-i${incarnations[r]}`;
    return { disk: `rkv-disk-${deployment}-${r}${suffix}`, log: `rkv-log-${deployment}-${r}${suffix}` };
  };
  for (const r of replicaIds) {
    registerSimDisk(storageNames(r).disk, disks[r] as SimDisk);
    if (durable) registerSimLog(storageNames(r).log, logs[r] as SimLog);
  }
  const sstables = replicaIds.map((r) => register('sstable', r, any(rkvSstableReader)));
  const compactions = replicaIds.map((r) => register('compaction', r, any(rkvCompaction)));
  const memtables = replicaIds.map((r) => register('memtable', r, any(rkvMemtable)));
  const logActors = durable ? replicaIds.map((r) => register('log', r, any(rkvLog))) : [];
  const consensus = replicaIds.map((r) => register('consensus', r, any(rkvConsensus)));

  /** Replica r's setup messages but the consensus actor's (storage first, then the durable log). */
  const storageSetups = (r: number) => {
    const names = storageNames(r);
    const list: { ref: ActorRef<RkvMessage, RkvMessage>; message: RkvMessage }[] = [
      { ref: sstables[r]!, message: { type: 'sstable-setup', disk: names.disk } },
      {
        ref: compactions[r]!,
        message: {
          type: 'compaction-setup',
          disk: names.disk,
          memtable: rkvInstanceName('memtable', r),
          level0Trigger: options.level0Trigger ?? 4,
        },
      },
      {
        ref: memtables[r]!,
        message: {
          type: 'memtable-setup',
          limitBytes: options.memtableLimitBytes ?? 1024 * 1024,
          sstable: rkvInstanceName('sstable', r),
          compaction: rkvInstanceName('compaction', r),
        },
      },
    ];
    if (durable) {
      list.push({
        ref: logActors[r]!,
        message: {
          type: 'log-setup',
          log: names.log,
          consensus: rkvInstanceName('consensus', r),
          snapshotChunkBytes: options.consensus?.snapshotChunkBytes ?? 0,
        },
      });
    }
    return list;
  };
  const consensusSetup = (r: number) => ({
    ref: consensus[r]!,
    message: {
      type: 'consensus-setup' as const,
      replica: r,
      leader,
      replicas: replicaIds.map((id) => rkvInstanceName('consensus', id)),
      memtable: rkvInstanceName('memtable', r),
      heartbeatNs: options.consensus?.heartbeatNs ?? 0,
      electionTimeoutNs: options.consensus?.electionTimeoutNs ?? 0,
      maxLogEntries: options.consensus?.maxLogEntries ?? 0,
      unsafe: options.consensus?.unsafe ?? 0,
      log: durable ? rkvInstanceName('log', r) : '',
      preVote: options.consensus?.preVote ?? false,
    },
  });

  const sends: { node: number; ref: ActorRef<RkvMessage, RkvMessage>; message: RkvMessage }[] = [];
  for (const r of replicaIds) for (const send of storageSetups(r)) sends.push({ node: r, ...send });
  // Followers first: the leader's prepare must find them set up.
  for (const r of [...replicaIds.filter((r) => r !== leader), leader]) {
    sends.push({ node: r, ...consensusSetup(r) });
  }
  // With timers the kernel never goes idle: stop at the answer instead.
  const timed = (options.consensus?.heartbeatNs ?? 0) > 0;
  for (const send of sends) {
    let outcome: { ok: boolean; reply: unknown } | undefined;
    cluster.clientSend(send.node, send.ref, send.message, (_id, _latency, ok, reply) => {
      outcome = { ok, reply };
      if (timed) cluster.kernel.stop();
    });
    cluster.kernel.run(timed ? { untilNs: cluster.kernel.now() + SETUP_WAIT_NS } : {});
    const reply = outcome?.reply as RkvMessage | undefined;
    if (outcome === undefined || !outcome.ok || reply?.type !== 'ready') {
      throw new ExperimentSetupError(
        send.ref.name,
        outcome === undefined
          ? 'it was never answered'
          : `it was refused (${reply?.type === 'refused' ? reply.reason : String(reply?.type)})`,
      );
    }
  }
  const deployed: RkvSimDeployment = {
    cluster,
    leader,
    consensus,
    memtables,
    sstables,
    compactions,
    logActors,
    disks,
    logs,
  };
  restartables.set(deployed, {
    setups: (r) => [...storageSetups(r), consensusSetup(r)],
    storageNames,
    incarnations,
  });
  return deployed;
}

/**
 * Crashes replica `replica`'s node (SimCluster.crash: its NIC and host memory, queues and timers
 * are lost) and takes its disk and durable log away from the dead incarnation; both stay in the
 * deployment for `restartReplica`.
 */
export function crashReplica(deployment: RkvSimDeployment, replica: number): void {
  const restartable = restartables.get(deployment);
  if (restartable === undefined) throw new ExperimentSetupError('rkv', 'not a deployRkvOnSimCluster result');
  requireDurableLog(deployment, 'crashReplica');
  deployment.cluster.crash(replica);
  const names = restartable.storageNames(replica);
  unregisterSimDisk(names.disk);
  unregisterSimLog(names.log);
}

/**
 * A replica without a durable log keeps its promises and accepts only in NIC memory: restarted, it
 * would come back with none and could promise or accept against what it acknowledged before (a
 * Paxos safety violation), so crash/restart needs a deployment with `durableLog`.
 */
function requireDurableLog(deployment: RkvSimDeployment, operation: string): void {
  if (deployment.logs.length > 0) return;
  throw new ConfigError(
    'durableLog',
    `${operation} needs a deployment built with durableLog: true — without a durable log a restarted ` +
      'replica loses its promises and accepted entries, which breaks consensus safety; deploy with ' +
      '{ durableLog: true } to crash and restart replicas',
  );
}

/** Between two setup messages of a restart (they are sent ahead, in order, not waited for). */
const RESTART_SETUP_SPACING_NS = 2_000;

/**
 * Restarts a crashed replica: a fresh node with the same actors from init (SimCluster.restart),
 * its disk and durable log under the new incarnation's names, and every actor set up again —
 * storage and log first, the consensus actor last (it then asks its log for the durable state).
 * Sends the setups without running the kernel (it may be called from inside a kernel event);
 * they are handled as the caller's run goes on.
 */
export function restartReplica(deployment: RkvSimDeployment, replica: number): void {
  const restartable = restartables.get(deployment);
  if (restartable === undefined) throw new ExperimentSetupError('rkv', 'not a deployRkvOnSimCluster result');
  requireDurableLog(deployment, 'restartReplica');
  const node = deployment.cluster.restart(replica);
  restartable.incarnations[replica] = (restartable.incarnations[replica] ?? 1) + 1;
  const names = restartable.storageNames(replica);
  registerSimDisk(names.disk, deployment.disks[replica] as SimDisk);
  const log = deployment.logs[replica];
  if (log !== undefined) registerSimLog(names.log, log);
  const now = deployment.cluster.kernel.now();
  restartable.setups(replica).forEach((send, index) => {
    node.clientSend(send.ref, send.message, () => {}, undefined, {
      atNs: now + (index + 1) * RESTART_SETUP_SPACING_NS,
    });
  });
}

/** Items per `memtable-load` message, and the time between two (see `loadMemtables`). */
const LOAD_CHUNK_ITEMS = 4;
const LOAD_SPACING_NS = 20_000;

/**
 * Loads pre-existing committed data into every replica's memtable (the same items, the same
 * sequence numbers), in small messages spaced out as DT loads its participants: one big load would
 * be a long handler, and the scheduler would rightly move the memtable to the host before the
 * workload starts. Runs the kernel until every load is answered.
 */
export function loadMemtables(
  deployment: RkvSimDeployment,
  items: readonly { readonly key: Uint8Array; readonly value: Uint8Array }[],
): void {
  const { cluster } = deployment;
  const startNs = cluster.kernel.now();
  let answered = 0;
  let sent = 0;
  deployment.memtables.forEach((ref, node) => {
    for (let start = 0, index = 0; start < items.length; start += LOAD_CHUNK_ITEMS, index++) {
      sent++;
      cluster.node(node).clientSend(
        ref,
        {
          type: 'memtable-load',
          items: items.slice(start, start + LOAD_CHUNK_ITEMS),
          firstSequence: start + 1,
        },
        (_id, _latency, ok) => {
          if (ok) answered++;
        },
        undefined,
        { atNs: startNs + index * LOAD_SPACING_NS },
      );
    }
  });
  cluster.kernel.run({});
  if (answered !== sent) {
    throw new ExperimentSetupError('rkv-memtable', `${sent - answered} of ${sent} loads were not answered`);
  }
}
