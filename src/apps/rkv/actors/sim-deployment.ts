/**
 * RKV on a SimCluster (iPipe §5: "RKV: leader + 2 followers" on three servers): each replica is
 * one simulated node running the four actors — consensus and memtable (`any`: on the NIC unless
 * the runtime moves them), SSTable reader and compaction (pinned to the host) — with its own
 * modelled disk. Registers them, sends the setup messages and waits for every answer; the leader's
 * phase 1 runs during that wait. Used by the offload experiment and the tests.
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { ActorRef } from '../../../actor/index.ts';
import { ExperimentSetupError } from '../../../errors.ts';
import type { SimCluster } from '../../../platform/sim/sim-cluster.ts';
import { rkvConsensus } from './consensus-actor.ts';
import type { RkvMessage } from './messages.ts';
import { registerSimDisk, SimDisk } from './sim-disk.ts';
import { rkvCompaction, rkvMemtable, rkvSstableReader } from './storage-actors.ts';

/** The actors of one replica, by role. */
export type RkvActorRole = 'consensus' | 'memtable' | 'sstable' | 'compaction';

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
  readonly disks: readonly SimDisk[];
}

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
  const disks = replicaIds.map(
    () => new SimDisk({ baseKeys: options.baseKeys ?? 1_000_000, valueBytes: options.valueBytes }),
  );
  const diskNames = replicaIds.map((r) => `rkv-disk-${deployment}-${r}`);
  disks.forEach((disk, r) => {
    registerSimDisk(diskNames[r] as string, disk);
  });
  const sstables = replicaIds.map((r) => register('sstable', r, any(rkvSstableReader)));
  const compactions = replicaIds.map((r) => register('compaction', r, any(rkvCompaction)));
  const memtables = replicaIds.map((r) => register('memtable', r, any(rkvMemtable)));
  const consensus = replicaIds.map((r) => register('consensus', r, any(rkvConsensus)));

  const sends: { node: number; ref: ActorRef<RkvMessage, RkvMessage>; message: RkvMessage }[] = [];
  for (const r of replicaIds) {
    sends.push({ node: r, ref: sstables[r]!, message: { type: 'sstable-setup', disk: diskNames[r]! } });
    sends.push({
      node: r,
      ref: compactions[r]!,
      message: {
        type: 'compaction-setup',
        disk: diskNames[r]!,
        memtable: rkvInstanceName('memtable', r),
        level0Trigger: options.level0Trigger ?? 4,
      },
    });
    sends.push({
      node: r,
      ref: memtables[r]!,
      message: {
        type: 'memtable-setup',
        limitBytes: options.memtableLimitBytes ?? 1024 * 1024,
        sstable: rkvInstanceName('sstable', r),
        compaction: rkvInstanceName('compaction', r),
      },
    });
  }
  // Followers first: the leader's prepare must find them set up.
  for (const r of [...replicaIds.filter((r) => r !== leader), leader]) {
    sends.push({
      node: r,
      ref: consensus[r]!,
      message: {
        type: 'consensus-setup',
        replica: r,
        leader,
        replicas: replicaIds.map((id) => rkvInstanceName('consensus', id)),
        memtable: rkvInstanceName('memtable', r),
        heartbeatNs: options.consensus?.heartbeatNs ?? 0,
        electionTimeoutNs: options.consensus?.electionTimeoutNs ?? 0,
        maxLogEntries: options.consensus?.maxLogEntries ?? 0,
        unsafe: options.consensus?.unsafe ?? 0,
      },
    });
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
  return { cluster, leader, consensus, memtables, sstables, compactions, disks };
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
