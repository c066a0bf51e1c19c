/**
 * RKV's actors on live nodes (issue 5: the same actors on both platforms): replica r is node r of
 * a cluster of live node processes (`ipipe run --cluster`), running the four actors the simulator
 * runs — consensus and memtable on the node's NIC domain (worker threads standing in for NIC
 * cores, migratable to the host), SSTable reader and compaction pinned to its host domain — and
 * the replicas' consensus actors talk Multi-Paxos to each other as actor messages between nodes
 * (PEER frames). Clients use the ipipe wire protocol: a put goes to the consensus actor of the
 * replica believed to lead and is answered by that replica's memtable once committed and applied;
 * a get is a lease read at the leader.
 *
 *   node r ─┬─ NIC: rkv-consensus-r ─apply─▶ rkv-memtable-r ─put-ok / value─▶ client
 *           └─ host: rkv-sstable-r, rkv-compaction-r, rkv-log-r (files, or memory)
 *
 * With a data directory (and a `durable` spec) each replica also runs the simulator's durable-log
 * actor on its host; its log is a journaled file and its SSTables the real LSM engine
 * (file-storage.ts): a node that
 * dies is started again (`LocalCluster.start`) and `restartReplica` sets it up from its files.
 * Without one, state is memory. No DEL yet (docs/apps/rkv-cluster.md).
 *
 * Shards (`shards` S > 1): S independent consensus groups over the same node processes. Replica r
 * of shard k is the five actors `rkv-<role>-s<k>-<r>` on node r, with its own storage under
 * `<dataDir>/replica-<r>/s<k>/`; a key belongs to shard `shardOf(key, S)` — the FNV-1a hash the
 * process-per-replica form places keys by (commands.ts). One shard keeps the names and paths of
 * directories made before shards existed (`rkv-<role>-<r>`, `<dataDir>/replica-<r>/`).
 *
 *   node r ─┬─ NIC:  rkv-consensus-s0-r, rkv-memtable-s0-r, rkv-consensus-s1-r, rkv-memtable-s1-r, …
 *           └─ host: rkv-{sstable,compaction,log}-s0-r, rkv-{sstable,compaction,log}-s1-r, …
 */

import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, ExperimentSetupError } from '../../../errors.ts';
import { type ClusterSpec, parseClusterSpec } from '../../../platform/live/cluster/cluster-file.ts';
import { connectToNodes } from '../../../platform/live/cluster/node-clients.ts';
import { IpipeClient } from '../../../platform/live/net/client.ts';
import { RemoteError } from '../../../platform/live/net/errors.ts';
import {
  COND_NX,
  COND_XX,
  DEL_EXISTED,
  DEL_UNKNOWN,
  MAX_KEY_BYTES,
  MAX_NAME_BYTES,
  MAX_REPLICAS,
  MAX_SCAN_LIMIT,
  MAX_SCAN_PAGE_BYTES,
  NO_LEADER,
  type RkvMessage,
  rkvMessages,
} from '../actors/messages.ts';
import { shardOf } from './commands.ts';
import { ClusterUnavailableError } from './errors.ts';
import {
  assertScanMovesOn,
  compareKeyBytes,
  mergeShardPages,
  type RkvPair,
  type RkvScanPage,
} from './scan-merge.ts';

export type { RkvPair, RkvScanPage } from './scan-merge.ts';

/** Options of `RkvActorClient.scan` and `scanAll`. */
export interface RkvScanOptions {
  /** Most pairs per page (1 … MAX_SCAN_LIMIT; default 100). */
  readonly limit?: number;
  /** About this many bytes of pairs per page (default and most: MAX_SCAN_PAGE_BYTES). */
  readonly maxBytes?: number;
  /** Give up on a shard's page after this long (default 10 s). */
  readonly giveUpMs?: number;
}

const NO_KEY = new Uint8Array(0);

/** The module every node loads the actors from. */
export const RKV_ACTOR_MODULE: string = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './actor-module.ts' : './actor-module.js', import.meta.url),
);

export type RkvActorRole = 'consensus' | 'memtable' | 'sstable' | 'compaction' | 'log';

/**
 * The datagram size the actor cluster's nodes and clients use: Multi-Paxos messages between nodes
 * carry up to 64 log entries (catch-up) or a snapshot chunk (state transfer), far more than one
 * Ethernet frame; on loopback a datagram may be 65 507 bytes.
 */
export const RKV_ACTOR_FRAME_BYTES = 65_000;
/** Bytes of items per state-transfer chunk: one chunk per datagram, with room for its framing. */
export const RKV_ACTOR_SNAPSHOT_CHUNK_BYTES = 48 * 1024;

/**
 * Most shards of an actor cluster: 64, as the process-per-replica form. A shard puts five actors on
 * every node, and each node's DMO domains get a region for every actor the node runs
 * (`rkvActorNodeMaxActors`), so regions do not bound S. What does: NIC memory (each shard's
 * memtable needs MIN_RKV_MEMTABLE_LIMIT_BYTES twice, so S shards need 64·S KiB of it), and the
 * work — every node's 3·S host actors share its one host core and its S consensus actors'
 * heartbeats its NIC cores; 64 shards × 3 nodes start, elect and serve on one two-core machine.
 */
export const MAX_RKV_ACTOR_SHARDS = 64;

/**
 * Bytes of each actor region on an RKV node: LiveNode's default, kept whatever S. The memtable
 * actor's region holds two memtables (active + frozen) of at most MAX_RKV_MEMTABLE_LIMIT_BYTES
 * plus their skip-list nodes (under 2 MiB together), but the consensus actor's region holds the
 * log a lagging replica may need (up to maxLogEntries entries, each with its key and value),
 * which does not shrink as S grows — so a smaller region would trade a fixed saving for a log
 * that overflows under lag. Unused regions cost address space only: a domain's SharedArrayBuffer
 * is zero pages until an actor is placed in a region.
 */
export const RKV_ACTOR_REGION_BYTES = 4 * 1024 * 1024;

/**
 * Actor regions per DMO domain on every node of an RKV actor cluster: each node runs 4 actors per
 * shard (5 with the durable log), any of them may end up in the host domain (consensus and
 * memtable migrate there under load), so the host domain needs a region for all of them. Never
 * below LiveNode's default 32, so clusters of up to six shards start exactly as before.
 */
export function rkvActorNodeMaxActors(shards: number, durable: boolean): number {
  return Math.max(32, shards * (durable ? 5 : 4));
}

/**
 * Instance name of replica `replica`'s actor of shard `shard` in a cluster of `shards` shards:
 * `rkv-<role>-<r>` with one shard (the simulator's deployment's names, and those of directories
 * made before shards), `rkv-<role>-s<k>-<r>` with more.
 */
export function rkvActorName(role: RkvActorRole, replica: number, shard = 0, shards = 1): string {
  return shards === 1 ? `rkv-${role}-${replica}` : `rkv-${role}-s${shard}-${replica}`;
}

/** The NIC memory each node gives RKV's memtables unless told otherwise (one shard: 256 KiB runs). */
export const DEFAULT_RKV_NIC_MEMORY_BYTES = 512 * 1024;
/**
 * The largest flush limit. A frozen memtable goes to the host as one NIC↔host ring message, and a
 * ring message is at most half the 2 MiB ring (1 MiB − 8): a limit of 1 MiB made runs of 1 MiB plus
 * the entry that crossed it, which never arrived (no SSTable was written; 1 000 000 bytes did
 * flush). Half of that leaves room for the crossing entry and the run's framing; two such memtables
 * and their skip lists also fit the memtable actor's 4 MiB DMO region (LiveNode's `regionBytes`).
 */
export const MAX_RKV_MEMTABLE_LIMIT_BYTES = 512 * 1024;
/** The smallest flush limit: below it a memtable of the largest entries flushes every few puts. */
export const MIN_RKV_MEMTABLE_LIMIT_BYTES = 32 * 1024;

/**
 * The memtable flush limit of each shard when a node gives `nicMemoryBytes` of NIC memory to
 * RKV's memtables: each of the S shards gets an equal share, and a shard holds up to two memtables
 * at once (the active one filling to the limit, the frozen one while its flush to the host is in
 * flight), so limit = nicMemory / (2·S), at most MAX_RKV_MEMTABLE_LIMIT_BYTES (one ring message). Throws ConfigError when the share is below MIN_RKV_MEMTABLE_LIMIT_BYTES.
 */
export function rkvMemtableLimitBytes(nicMemoryBytes: number, shards: number): number {
  const limit = Math.floor(nicMemoryBytes / (2 * shards));
  if (!(Number.isFinite(limit) && limit >= MIN_RKV_MEMTABLE_LIMIT_BYTES)) {
    throw new ConfigError(
      'nicMemory',
      `${nicMemoryBytes} bytes of NIC memory over ${shards} shard(s) leave each memtable ${limit} bytes ` +
        `(NIC memory / (2 × shards): the active memtable and the one being flushed); a memtable needs at least ` +
        `${MIN_RKV_MEMTABLE_LIMIT_BYTES}: give the nodes more NIC memory (at least ${2 * shards * MIN_RKV_MEMTABLE_LIMIT_BYTES} bytes) or use fewer shards`,
    );
  }
  return Math.min(limit, MAX_RKV_MEMTABLE_LIMIT_BYTES);
}

export interface RkvActorClusterLayout {
  readonly nodes: readonly {
    readonly id: number;
    readonly address: string;
    readonly port: number;
    readonly nicCores?: number;
  }[];
}

/**
 * The cluster file: one replica per node of every shard; every node gets one host core (see
 * actor-module.ts: a shard's SSTable reader and compaction must share the worker that holds its
 * disk). `durable`: each replica also runs the durable-log actor on its host (needed for a data
 * directory). `shards` (default 1): consensus groups, each with its own five actors per node.
 */
export function rkvActorClusterSpec(
  layout: RkvActorClusterLayout,
  options: { readonly durable?: boolean; readonly shards?: number } = {},
): ClusterSpec {
  const count = layout.nodes.length;
  // One replica alone never holds a read lease (a lease needs another replica's heartbeat ack).
  if (!(count >= 2 && count <= MAX_REPLICAS)) {
    throw new ConfigError('nodes', `an RKV group needs 2 to ${MAX_REPLICAS} nodes, got ${count}`);
  }
  const shards = options.shards ?? 1;
  checkShardCount(shards);
  const exports: Record<RkvActorRole, string> = {
    consensus: 'liveRkvConsensus',
    memtable: 'liveRkvMemtable',
    sstable: 'liveRkvSstableReader',
    compaction: 'liveRkvCompaction',
    log: 'liveRkvLog',
  };
  const roles: RkvActorRole[] = [
    'sstable',
    'compaction',
    ...(options.durable === true ? (['log'] as const) : []),
    'memtable',
    'consensus',
  ];
  const onHost: ReadonlySet<RkvActorRole> = new Set(['sstable', 'compaction', 'log']);
  const actors = layout.nodes.flatMap((node, replica) =>
    Array.from({ length: shards }, (_, shard) =>
      roles.map((role) => ({
        name: rkvActorName(role, replica, shard, shards),
        module: RKV_ACTOR_MODULE,
        exportName: exports[role],
        node: node.id,
        ...(onHost.has(role) ? { domain: 'host' as const } : {}),
      })),
    ).flat(),
  );
  return parseClusterSpec({
    schemaVersion: 1,
    nodes: layout.nodes.map((node) => ({
      ...node,
      hostCores: 1,
      maxFrameBytes: RKV_ACTOR_FRAME_BYTES,
      maxActors: rkvActorNodeMaxActors(shards, options.durable === true),
      regionBytes: RKV_ACTOR_REGION_BYTES,
    })),
    actors,
  });
}

function checkShardCount(shards: number): void {
  if (!(Number.isInteger(shards) && shards >= 1 && shards <= MAX_RKV_ACTOR_SHARDS)) {
    throw new ConfigError(
      'shards',
      `an RKV actor cluster has 1 to ${MAX_RKV_ACTOR_SHARDS} shards (as the process-per-replica form), got ${shards}`,
    );
  }
}

/**
 * The storage names replica `replica` of shard `shard` (of `shards`) is set up with under
 * `dataDir`: `file:<dir>/lsm` (its LSM store) and `file:<dir>/log.journal` (its durable log),
 * `<dir>` = `<dataDir>/replica-<r>` with one shard, `<dataDir>/replica-<r>/s<k>` with more —
 * relative to this process's working directory when that is shorter (the nodes inherit it).
 * Throws ConfigError when a name does not fit a setup message's name field.
 */
export function rkvActorStorageNames(
  dataDir: string,
  replica: number,
  shard = 0,
  shards = 1,
): { disk: string; log: string } {
  const absolute =
    shards === 1
      ? resolve(dataDir, `replica-${replica}`)
      : resolve(dataDir, `replica-${replica}`, `s${shard}`);
  const relativePath = relative(process.cwd(), absolute);
  const dir =
    relativePath.length < absolute.length && !relativePath.startsWith('..') ? relativePath : absolute;
  const names = { disk: `file:${join(dir, 'lsm')}`, log: `file:${join(dir, 'log.journal')}` };
  for (const name of Object.values(names)) {
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
      throw new ConfigError(
        'dataDir',
        `the storage name "${name}" is longer than the ${MAX_NAME_BYTES} bytes a setup message carries; use a shorter data directory path`,
      );
    }
  }
  return names;
}

/** The protocol's timing and the memtable's size, in wall-clock terms. */
export interface RkvActorClusterSetup {
  /** The leader's heartbeat period (default 50 ms). */
  readonly heartbeatMs?: number;
  /** T: a follower that hears no leader for [T, 2T) stands; also the read lease (default 300 ms). */
  readonly electionTimeoutMs?: number;
  /** Replica that runs shard 0's first election's phase 1 (default 0); shard k's is leader + k. */
  readonly leader?: number;
  /**
   * NIC memory each node gives RKV's memtables (default DEFAULT_RKV_NIC_MEMORY_BYTES): each shard's
   * memtable flushes at `rkvMemtableLimitBytes(nicMemoryBytes, shards)`.
   */
  readonly nicMemoryBytes?: number;
  /** Flush each shard's memtable to the host at this many bytes (overrides `nicMemoryBytes`). */
  readonly memtableLimitBytes?: number;
  /** Log entries kept for a replica that lags before it is left behind (default 4096). */
  readonly maxLogEntries?: number;
  /**
   * Where the replicas keep their durable log and LSM store (`<dir>/replica-<r>/…`); the
   * cluster must have been made with `durable`. Without it the replicas' state is memory. Storage
   * names travel in setup messages (63 bytes at most), so a relative path from the nodes' working
   * directory is used when it is shorter.
   */
  readonly dataDir?: string;
}

const NS_PER_MS = 1_000_000;

/** Talks to a running RKV actor cluster over UDP: setup, then puts and gets. */
export class RkvActorConnection {
  readonly spec: ClusterSpec;
  /** Replicas of every shard: one per node. */
  readonly replicas: number;
  /** Consensus groups; a key's is `shardOf(key)`. */
  readonly shards: number;
  readonly #clients: Map<number, IpipeClient>;

  readonly #timeoutMs: number;
  readonly #retries: number;
  /** What `setup` was given: a restarted replica is set up the same way. */
  #setup: RkvActorClusterSetup | undefined;

  private constructor(
    spec: ClusterSpec,
    clients: Map<number, IpipeClient>,
    timeoutMs: number,
    retries: number,
  ) {
    this.spec = spec;
    this.#clients = clients;
    this.#timeoutMs = timeoutMs;
    this.#retries = retries;
    const consensus = spec.actors.filter((actor) => actor.exportName === 'liveRkvConsensus');
    this.replicas = new Set(consensus.map((actor) => actor.node)).size;
    this.shards = Math.max(1, consensus.length / Math.max(1, this.replicas));
    if (!Number.isInteger(this.shards)) {
      throw new ConfigError(
        'actors',
        `${consensus.length} consensus actors over ${this.replicas} nodes is not one per node per shard: ` +
          'write the cluster file with rkvActorClusterSpec',
      );
    }
  }

  /** The shard that owns `key`: the process-per-replica form's FNV-1a placement (commands.ts). */
  shardOf(key: Uint8Array): number {
    return shardOf(key, this.shards);
  }

  /** The instance name of replica `replica`'s `role` actor in shard `shard`. */
  actorName(role: RkvActorRole, replica: number, shard = 0): string {
    return rkvActorName(role, replica, shard, this.shards);
  }

  /** One client socket per node; each call waits `timeoutMs` for an answer, resent `retries` times. */
  static async connect(
    spec: ClusterSpec,
    options: { readonly timeoutMs?: number; readonly retries?: number } = {},
  ): Promise<RkvActorConnection> {
    const timeoutMs = options.timeoutMs ?? 250;
    const retries = options.retries ?? 1;
    const clients = await connectToNodes(spec, { timeoutMs, retries, maxFrameBytes: RKV_ACTOR_FRAME_BYTES });
    return new RkvActorConnection(spec, clients, timeoutMs, retries);
  }

  /**
   * Sends `message` to `replica`'s `role` actor; undefined when no answer came in time (a dead or
   * cut-off node). An error reply from the node (a handler that threw — e.g. a damaged storage
   * file — or a node refusing work) rejects with its `RemoteError`, so it is not mistaken for
   * silence.
   */
  async ask(
    role: RkvActorRole,
    replica: number,
    message: RkvMessage,
    shard = 0,
  ): Promise<RkvMessage | undefined> {
    const name = this.actorName(role, replica, shard);
    const entry = this.spec.actors.find((actor) => actor.name === name);
    if (entry === undefined) throw new ConfigError('replica', `no actor ${name} in this cluster`);
    const client = this.#clients.get(entry.node) as IpipeClient;
    try {
      return await client.call(entry.id as number, rkvMessages, rkvMessages, message);
    } catch (error) {
      if (error instanceof RemoteError) throw error;
      return undefined;
    }
  }

  /**
   * Sets every replica of every shard up — storage first, then the consensus actors, followers
   * before the shard's first leader so its prepare finds them ready — and waits for each `ready`.
   * Shard k's first leader is replica (leader + k) mod N, so leaders spread over the nodes. Throws
   * ExperimentSetupError naming an actor that refused or never answered, ConfigError when the
   * NIC memory leaves a shard's memtable too small.
   */
  async setup(setup: RkvActorClusterSetup = {}): Promise<void> {
    const replicas = Array.from({ length: this.replicas }, (_, r) => r);
    this.memtableLimitBytes(setup);
    this.#setup = setup;
    for (let shard = 0; shard < this.shards; shard++) {
      for (const r of replicas) await this.#setupStorage(r, shard, setup);
    }
    for (let shard = 0; shard < this.shards; shard++) {
      const leader = this.#firstLeader(setup, shard);
      for (const r of [...replicas.filter((r) => r !== leader), leader])
        await this.#setupConsensus(r, shard, setup, leader);
    }
  }

  /** Where each shard's memtable flushes under `setup` (see `rkvMemtableLimitBytes`). */
  memtableLimitBytes(setup: RkvActorClusterSetup = this.#setup ?? {}): number {
    const given = setup.memtableLimitBytes;
    if (given === undefined) {
      return rkvMemtableLimitBytes(setup.nicMemoryBytes ?? DEFAULT_RKV_NIC_MEMORY_BYTES, this.shards);
    }
    // Above the cap a frozen memtable no longer fits one ring message (its flush would be lost).
    // (Small limits are allowed: tests use them to make flushes happen.)
    if (!(given > 0 && given <= MAX_RKV_MEMTABLE_LIMIT_BYTES)) {
      throw new ConfigError(
        'memtableLimitBytes',
        `must be in (0, ${MAX_RKV_MEMTABLE_LIMIT_BYTES}] bytes (a flushed memtable crosses the NIC-host ring as one message), got ${given}`,
      );
    }
    return given;
  }

  #firstLeader(setup: RkvActorClusterSetup, shard: number): number {
    return ((setup.leader ?? 0) + shard) % this.replicas;
  }

  /**
   * Sets a restarted replica up again (its node process was started anew, see
   * `LocalCluster.start`), in every shard: storage first — the files are reopened and replayed —
   * then its consensus actors, each recovering from its durable log and rejoining its group as a
   * follower (catching up, or by state transfer if the log was truncated past it). Needs a
   * durable `setup`.
   */
  async restartReplica(replica: number): Promise<void> {
    const setup = this.#setup;
    if (setup?.dataDir === undefined) {
      throw new ConfigError(
        'dataDir',
        'a replica can rejoin only from its files: set the cluster up with a dataDir (and a durable spec)',
      );
    }
    const node = this.spec.actors.find((actor) => actor.name === this.actorName('consensus', replica))?.node;
    if (node !== undefined) await this.#reconnect(node);
    for (let shard = 0; shard < this.shards; shard++) await this.#setupStorage(replica, shard, setup);
    for (let shard = 0; shard < this.shards; shard++)
      await this.#setupConsensus(replica, shard, setup, this.#firstLeader(setup, shard));
  }

  /** Storage names for replica r of a shard: files under the data directory, or memory. */
  #storage(replica: number, shard: number, setup: RkvActorClusterSetup): { disk: string; log: string } {
    return setup.dataDir === undefined
      ? {
          disk: this.shards === 1 ? `rkv-live-disk-${replica}` : `rkv-live-disk-s${shard}-${replica}`,
          log: '',
        }
      : rkvActorStorageNames(setup.dataDir, replica, shard, this.shards);
  }

  async #setupStorage(r: number, shard: number, setup: RkvActorClusterSetup): Promise<void> {
    const storage = this.#storage(r, shard, setup);
    const name = (role: RkvActorRole): string => this.actorName(role, r, shard);
    await this.#expectReady('sstable', r, shard, { type: 'sstable-setup', disk: storage.disk });
    await this.#expectReady('compaction', r, shard, {
      type: 'compaction-setup',
      disk: storage.disk,
      memtable: name('memtable'),
      level0Trigger: 4,
    });
    await this.#expectReady('memtable', r, shard, {
      type: 'memtable-setup',
      limitBytes: this.memtableLimitBytes(setup),
      sstable: name('sstable'),
      compaction: name('compaction'),
    });
    if (storage.log !== '') {
      await this.#expectReady('log', r, shard, {
        type: 'log-setup',
        log: storage.log,
        consensus: name('consensus'),
        snapshotChunkBytes: RKV_ACTOR_SNAPSHOT_CHUNK_BYTES,
      });
    }
  }

  async #setupConsensus(
    r: number,
    shard: number,
    setup: RkvActorClusterSetup,
    leader: number,
  ): Promise<void> {
    const durable = setup.dataDir !== undefined;
    await this.#expectReady('consensus', r, shard, {
      type: 'consensus-setup',
      replica: r,
      leader,
      replicas: Array.from({ length: this.replicas }, (_, id) => this.actorName('consensus', id, shard)),
      memtable: this.actorName('memtable', r, shard),
      heartbeatNs: (setup.heartbeatMs ?? 50) * NS_PER_MS,
      electionTimeoutNs: (setup.electionTimeoutMs ?? 300) * NS_PER_MS,
      maxLogEntries: setup.maxLogEntries ?? 4096,
      unsafe: 0,
      log: durable ? this.actorName('log', r, shard) : '',
      preVote: true,
    });
  }

  async #expectReady(role: RkvActorRole, replica: number, shard: number, message: RkvMessage): Promise<void> {
    let answer: RkvMessage | undefined;
    for (let attempt = 0; attempt < 20 && answer === undefined; attempt++) {
      try {
        answer = await this.ask(role, replica, message, shard);
      } catch (error) {
        throw new ExperimentSetupError(
          this.actorName(role, replica, shard),
          error instanceof RemoteError
            ? `its setup failed on the node: ${error.remoteMessage} [${error.remoteCode}]`
            : `its setup could not be sent: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    if (answer?.type !== 'ready') {
      throw new ExperimentSetupError(
        this.actorName(role, replica, shard),
        answer === undefined
          ? 'it never answered its setup'
          : `it refused its setup (${answer.type === 'refused' ? answer.reason : answer.type})`,
      );
    }
  }

  /** A fresh socket toward `nodeId` (its process restarted on the same port). */
  async #reconnect(nodeId: number): Promise<void> {
    const node = this.spec.nodes.find((n) => n.id === nodeId);
    const old = this.#clients.get(nodeId);
    if (node === undefined || old === undefined) return;
    this.#clients.set(
      nodeId,
      await IpipeClient.connect({
        host: node.address,
        port: node.port,
        timeoutMs: this.#timeoutMs,
        retries: this.#retries,
        maxFrameBytes: RKV_ACTOR_FRAME_BYTES,
      }),
    );
    await old.close();
  }

  /** A client with its own exactly-once session (`clientId` ≥ 1, unique per cluster). */
  client(clientId: number): RkvActorClient {
    return new RkvActorClient(this, clientId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
  }
}

/**
 * Puts and gets with leader discovery: a command goes to its key's shard (`shardOf`), to the
 * replica the client believes leads that shard; a refusal names the leader (or none yet, then the
 * next replica is tried after a pause); no answer moves on to the next replica. A put keeps its
 * `(clientId, seq)` across retries, so the shard's replicas apply it once however often it is
 * re-sent. `seq` counts over all shards, so each shard's session table sees it increase (with
 * gaps): one id serves every shard. One command at a time per client.
 */
export class RkvActorClient {
  readonly clientId: number;
  readonly #connection: RkvActorConnection;
  #seq = 0;
  /** Per shard, the replica believed to lead it. */
  readonly #leaders: number[];
  #busy = false;

  constructor(connection: RkvActorConnection, clientId: number) {
    if (!(Number.isSafeInteger(clientId) && clientId >= 1)) {
      throw new ConfigError('clientId', `must be a positive integer, got ${clientId}`);
    }
    this.#connection = connection;
    this.clientId = clientId;
    this.#leaders = Array.from({ length: connection.shards }, () => 0);
  }

  /** The replica this client last saw leading shard 0. */
  get leader(): number {
    return this.leaderOf(0);
  }

  /** The replica this client last saw leading `shard`. */
  leaderOf(shard: number): number {
    return this.#leaders[shard] ?? 0;
  }

  /**
   * Writes; resolves once committed and applied at the leader, with its log slot — or 0 when a
   * retry was answered from the session table (the first attempt was applied, its answer lost).
   */
  async put(key: Uint8Array, value: Uint8Array, giveUpMs = 10_000): Promise<number> {
    if (key.length === 0) throw new ConfigError('key', 'a put needs a key of 1 byte or more');
    const message: RkvMessage = { type: 'put', clientId: this.clientId, seq: ++this.#seq, key, value };
    const answer = await this.#command(message, 'put-ok', giveUpMs);
    return answer.type === 'put-ok' ? answer.slot : -1;
  }

  /**
   * Deletes under this client's session (exactly once, like a put); resolves once the tombstone is
   * applied at the leader: true when the key held a value just before, false when it did not,
   * null when a retry found it applied at a replica that holds no answer for it (one that re-applied
   * it after a restart past a later flush of its disk, or installed a snapshot covering it: the
   * delete took effect once; every other replica decided and kept its answer when it applied it, so
   * a fail-over alone does not lose it).
   */
  async del(key: Uint8Array, giveUpMs = 10_000): Promise<boolean | null> {
    if (key.length === 0) throw new ConfigError('key', 'a delete needs a key of 1 byte or more');
    const message: RkvMessage = { type: 'del', clientId: this.clientId, seq: ++this.#seq, key };
    const answer = await this.#command(message, 'del-ok', giveUpMs);
    if (answer.type !== 'del-ok' || answer.existed === DEL_UNKNOWN) return null;
    return answer.existed === DEL_EXISTED;
  }

  /**
   * SET NX (`condition` 'nx': write only if the key is absent) or SET XX ('xx': only if present),
   * under this client's session; resolves true when it wrote, false when the condition did not
   * hold (messages.ts "Conditional puts": decided by the leader at its applied point).
   */
  async cput(
    key: Uint8Array,
    value: Uint8Array,
    condition: 'nx' | 'xx',
    giveUpMs = 10_000,
  ): Promise<boolean> {
    if (key.length === 0) throw new ConfigError('key', 'a conditional put needs a key of 1 byte or more');
    const message: RkvMessage = {
      type: 'cput',
      clientId: this.clientId,
      seq: ++this.#seq,
      key,
      value,
      condition: condition === 'nx' ? COND_NX : COND_XX,
    };
    const answer = await this.#command(message, ['put-ok', 'cond-ok'], giveUpMs);
    return answer.type === 'put-ok' || (answer.type === 'cond-ok' && answer.written);
  }

  /** Reads at the leader (under its lease); null when the key is absent. */
  async get(key: Uint8Array, giveUpMs = 10_000): Promise<Uint8Array | null> {
    const answer = await this.#command({ type: 'get', key }, 'value', giveUpMs);
    return answer.type === 'value' && answer.found ? answer.value : null;
  }

  /**
   * DBSIZE of one shard: its live keys, counted at its leader (under its lease) at one point in the
   * shard's log — a scan of that replica's whole store (storage-actors.ts "DBSIZE").
   */
  async dbsize(shard: number, giveUpMs = 10_000): Promise<number> {
    if (!(Number.isInteger(shard) && shard >= 0 && shard < this.#connection.shards)) {
      throw new ConfigError('shard', `must be an integer in [0, ${this.#connection.shards}), got ${shard}`);
    }
    const answer = await this.#command({ type: 'dbsize' }, 'size', giveUpMs, shard);
    return answer.type === 'size' ? answer.keys : 0;
  }

  /**
   * One page of a range scan: the live pairs with start ≤ key < end (end undefined or empty: no
   * bound) in byte order, at most `limit` of them, and where the next page starts (`next`; null
   * when the range is done). Each shard's part is a lease read at its leader at one point in that
   * shard's log (messages.ts "SCAN"); the shards' parts are merged in key order (scan-merge.ts).
   * A page is not one snapshot of all shards, and the pages of one scan are not one snapshot
   * either: a key written between two pages appears if it sorts after the first page's end.
   * Throws ConfigError for a bad limit or a key longer than MAX_KEY_BYTES, ClusterUnavailableError
   * when a shard finds no leader within `giveUpMs`.
   */
  async scan(
    start: Uint8Array,
    end: Uint8Array | undefined,
    options: RkvScanOptions = {},
  ): Promise<RkvScanPage> {
    const limit = options.limit ?? 100;
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_SCAN_LIMIT)) {
      throw new ConfigError('limit', `a scan page holds 1 to ${MAX_SCAN_LIMIT} pairs, got ${limit}`);
    }
    const maxBytes = Math.min(options.maxBytes ?? MAX_SCAN_PAGE_BYTES, MAX_SCAN_PAGE_BYTES);
    if (!(maxBytes > 0))
      throw new ConfigError('maxBytes', `must be a positive number of bytes, got ${maxBytes}`);
    for (const [name, key] of [
      ['start', start],
      ['end', end ?? NO_KEY],
    ] as const) {
      if (key.length > MAX_KEY_BYTES) {
        throw new ConfigError(
          name,
          `a scan's ${name} key is at most ${MAX_KEY_BYTES} bytes, got ${key.length}`,
        );
      }
    }
    const bounded = end !== undefined && end.length > 0;
    if (bounded && compareKeyBytes(start, end) >= 0) return { pairs: [], next: null };
    const message: RkvMessage = { type: 'scan', start, end: bounded ? end : NO_KEY, limit, maxBytes };
    const giveUpMs = options.giveUpMs ?? 10_000;
    // The shards are asked at once, each following its own leader: a page waits for the slowest
    // shard rather than the sum of them (at worst giveUpMs, not shards × giveUpMs). A scan carries
    // no session seq, so its requests may overlap; the client is still busy for the whole page.
    this.#claim();
    try {
      const pages = await Promise.all(
        Array.from({ length: this.#connection.shards }, async (_, shard): Promise<RkvScanPage> => {
          const answer = await this.#askLeader(message, 'scan-page', giveUpMs, shard);
          if (answer.type !== 'scan-page') throw new ClusterUnavailableError('scan', giveUpMs);
          return { pairs: answer.pairs, next: answer.done ? null : answer.next };
        }),
      );
      return mergeShardPages(pages, limit, maxBytes);
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Every live pair with start ≤ key < end, in key order, page by page (`scan`; each page
   * linearizable per shard, the whole not one snapshot). Throws ClusterScanStalledError for a page
   * whose next key does not move past its start, rather than loop on it.
   */
  async *scanAll(
    start: Uint8Array,
    end: Uint8Array | undefined,
    options: RkvScanOptions = {},
  ): AsyncGenerator<RkvPair, void, undefined> {
    let from: Uint8Array | null = start;
    while (from !== null) {
      const page = await this.scan(from, end, options);
      assertScanMovesOn(from, page);
      yield* page.pairs;
      from = page.next;
    }
  }

  async #command(
    message: RkvMessage,
    expect: RkvMessage['type'] | readonly RkvMessage['type'][],
    giveUpMs: number,
    toShard?: number,
  ): Promise<RkvMessage> {
    this.#claim();
    try {
      const shard = toShard ?? ('key' in message ? this.#connection.shardOf(message.key) : 0);
      return await this.#askLeader(message, expect, giveUpMs, shard);
    } finally {
      this.#busy = false;
    }
  }

  #claim(): void {
    if (this.#busy)
      throw new ConfigError('client', 'one command at a time per RkvActorClient (sessions are sequential)');
    this.#busy = true;
  }

  /** Asks `shard`'s leader, following refusals and moving past silent replicas, until `giveUpMs`. */
  async #askLeader(
    message: RkvMessage,
    expect: RkvMessage['type'] | readonly RkvMessage['type'][],
    giveUpMs: number,
    shard: number,
  ): Promise<RkvMessage> {
    const deadline = performance.now() + giveUpMs;
    const replicas = this.#connection.replicas;
    while (performance.now() < deadline) {
      const leader = this.leaderOf(shard);
      let answer: RkvMessage | undefined;
      try {
        answer = await this.#connection.ask('consensus', leader, message, shard);
      } catch {
        // The node refused the request (overloaded, stopping): back off, then the next replica.
        this.#leaders[shard] = (leader + 1) % replicas;
        await new Promise((wake) => setTimeout(wake, 25));
        continue;
      }
      if (
        answer !== undefined &&
        (answer.type === expect || (Array.isArray(expect) && expect.includes(answer.type)))
      )
        return answer;
      if (answer?.type === 'refused' && answer.leader !== NO_LEADER && answer.leader !== leader) {
        this.#leaders[shard] = answer.leader;
        continue;
      }
      // No answer (a dead or cut-off node) or no leader known yet: the next replica, after a pause.
      this.#leaders[shard] = (leader + 1) % replicas;
      await new Promise((wake) => setTimeout(wake, answer === undefined ? 0 : 25));
    }
    throw new ClusterUnavailableError(message.type, giveUpMs);
  }
}
