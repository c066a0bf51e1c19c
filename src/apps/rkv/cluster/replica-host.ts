/**
 * One replica of RKV's live cluster, as it runs inside its own OS process (paper, "The
 * applications": RKV = a consensus actor per replica running Multi-Paxos, a memtable, SSTables,
 * and a client front). For each shard it hosts a `PaxosReplica` (src/apps/rkv/paxos) over a
 * checksummed file log, whose state machine is the shard's `LsmEngine` (src/apps/rkv/lsm); it talks
 * to the other replicas over a TCP mesh (peer-transport.ts) and serves Redis clients through the
 * RESP front (src/apps/rkv/resp) as the front's `KvBackend`.
 *
 * Not yet ipipe actors: the live platform has no node-to-node actor routing, so this host drives
 * the Paxos and LSM logic directly on one event loop (docs/apps/rkv-cluster.md).
 *
 * ── A client command ──────────────────────────────────────────────────────────────────────────
 *   RESP front ─▶ backend.get/set/… ─▶ shard = hash(key) mod S ─▶ a session (clientId, seq)
 *     leader here?   handle({request}) on the local PaxosReplica
 *     else           forward {request} to the shard's leader over the mesh
 *   the leader's replica replies when the command's slot is applied; the reply goes to the
 *   replica named in the clientId (low bits), which resolves the front's promise. A redirect (not
 *   the leader) or silence re-sends the same (clientId, seq) — the replicated session table makes
 *   a re-sent command apply once — until the request timeout, then `-TRYAGAIN`.
 *
 * ── One event-loop turn (group commit, see group-commit-storage.ts) ───────────────────────────
 *   inputs (peer frames, client commands, timers) ─▶ handle() each, collecting sends and replies
 *   setImmediate: fsync each shard's log once ─▶ send frames ─▶ route replies ─▶ LSM maintenance
 *
 * Client ids: ((boot · 2^20 + counter) · 32 + replicaId). `boot` counts this replica's starts
 * (a file in its directory), so a restarted replica never reuses a client id whose sequence
 * numbers the session table already holds.
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Random } from '../../../random.ts';
import { LsmDirectoryLockedError } from '../lsm/index.ts';
import { FilePaxosStorage } from '../paxos/file-storage.ts';
import { type PaxosRandom, PaxosReplica } from '../paxos/replica.ts';
import {
  type ClientId,
  type ClientReply,
  type PaxosInput,
  type PaxosRole,
  type ReplicaId,
  replicaId as toReplicaId,
} from '../paxos/types.ts';
import type { InfoFields, KvBackend, KvBackendInfo, SetCondition } from '../resp/backend.ts';
import { BackendUnavailableError } from '../resp/errors.ts';
import { type RespServerHandle, startRespServer } from '../resp/server.ts';
import { type ClusterCommand, type ClusterResult, clusterCodec, shardOf } from './commands.ts';
import { ClusterDataDirInUseError, ClusterOptionsError } from './errors.ts';
import { GroupCommitStorage } from './group-commit-storage.ts';
import { LsmKvStateMachine, MAX_KEYS_PER_COMMAND } from './lsm-state-machine.ts';
import { PeerMesh, type PeerMeshStats } from './peer-transport.ts';
import { encodeWireMessage, type WireMessage } from './peer-wire.ts';

/** Replica ids live in the low bits of a client id: at most this many replicas. */
export const MAX_REPLICAS = 32;
const COUNTER_SPACE = 2 ** 20;
/** How soon the sweep looks again at commands held back for want of a leader. */
const SWEEP_HELD_MS = 50;
const MAX_BOOTS = 2 ** 28;

/** Failure-detection timing, in milliseconds. */
export interface ClusterTiming {
  readonly heartbeatMs: number;
  readonly electionTimeoutMinMs: number;
  readonly electionTimeoutMaxMs: number;
}

/**
 * Defaults sized for a busy shared machine: a stalled event loop (an LSM flush, a slow fsync)
 * must not look like a dead leader, so the election timeout is many heartbeats long.
 */
export const DEFAULT_CLUSTER_TIMING: ClusterTiming = {
  heartbeatMs: 100,
  electionTimeoutMinMs: 1000,
  electionTimeoutMaxMs: 2000,
};

/** Where one replica listens. */
export interface ReplicaAddresses {
  readonly peerPort: number;
  readonly respPort: number;
}

/** Everything one replica process needs to start. */
export interface ClusterReplicaConfig {
  readonly replicaId: number;
  readonly shardCount: number;
  /** This replica's own directory (boot counter, one sub-directory per shard). */
  readonly directory: string;
  /** Loopback (or any local) address every replica binds. */
  readonly host: string;
  /** Every replica's ports, by replica id; the length is the replica count. */
  readonly replicas: readonly ReplicaAddresses[];
  readonly timing?: ClusterTiming;
  /** Seed of the election-timeout draws (the replica id is mixed in). */
  readonly seed: number;
  /** Take a Paxos snapshot (and truncate the log) every this many entries (default 10 000). */
  readonly snapshotEveryEntries?: number;
  /** A client command not answered within this long fails with -TRYAGAIN (default 5000 ms). */
  readonly requestTimeoutMs?: number;
  /** Re-send an unanswered command to the (possibly new) leader this often (default 200 ms). */
  readonly retryIntervalMs?: number;
  /** LSM memtable size per shard (default 4 MiB). */
  readonly memtableBytes?: number;
}

/** One shard's role here, for the supervisor's table and INFO. */
export interface ShardView {
  readonly shard: number;
  readonly role: PaxosRole;
  /** The replica this one believes leads the shard (itself when leader), or null. */
  readonly leader: number | null;
  readonly ballot: number;
  readonly appliedThrough: number;
  readonly snapshotSlot: number;
  readonly keys: number;
}

interface Session {
  readonly clientId: ClientId;
  seq: number;
}

interface Shard {
  readonly index: number;
  readonly replica: PaxosReplica<ClusterCommand, ClusterResult>;
  readonly storage: GroupCommitStorage<ClusterCommand, ClusterResult>;
  readonly machine: LsmKvStateMachine;
  timer: NodeJS.Timeout | null;
  timerAtNs: number;
  readonly idleSessions: Session[];
  /** The leader a redirect last named. */
  redirectHint: number | null;
  /** Pending commands of this shard held back (`Pending.waiting`). */
  waiting: number;
}

interface Pending {
  readonly shard: Shard;
  readonly session: Session;
  readonly seq: number;
  readonly command: ClusterCommand;
  readonly deadlineMs: number;
  readonly resolve: (result: ClusterResult) => void;
  readonly reject: (error: Error) => void;
  /** When it was last sent (−∞: due now), and to whom. */
  sentAtMs: number;
  sentTo: number | null;
  /** Held back: no leader was known, or earlier commands of its shard are held back. */
  waiting: boolean;
}

interface OutboundSend {
  readonly to: number;
  readonly message: WireMessage;
}

interface RoutedReply {
  readonly shard: Shard;
  readonly reply: ClientReply<ClusterResult>;
}

function toBuffer(bytes: Uint8Array | null): Buffer | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Spreads shard leaders over the replicas at start: replica (shard mod N) draws the shortest first
 * election timeout for that shard and the others one in the upper half, so on a fresh start each
 * replica usually leads its own shards (leader work is spread, not piled on the fastest process).
 * Later draws are plain. Randomness only affects liveness in Paxos, never safety.
 */
function preferLeadership(random: PaxosRandom, preferred: boolean): PaxosRandom {
  let first = true;
  return {
    next(): number {
      if (!first) return random.next();
      first = false;
      return preferred ? 0 : 0.5 + random.next() / 2;
    },
  };
}

/** Reads, increments and durably writes this replica's start counter. */
function nextBoot(directory: string): number {
  const path = join(directory, 'boot-count');
  let boot = 0;
  try {
    boot = Number.parseInt(readFileSync(path, 'utf8').trim(), 10) || 0;
  } catch {
    boot = 0;
  }
  boot++;
  if (boot >= MAX_BOOTS)
    throw new ClusterOptionsError(`${path} says this replica started ${boot} times: too many`);
  writeFileSync(path, `${boot}\n`, { flush: true });
  return boot;
}

/** A running replica: its shards, its mesh, its RESP front. Create with `ClusterReplica.start`. */
export class ClusterReplica implements KvBackend {
  readonly config: ClusterReplicaConfig;
  readonly me: ReplicaId;
  readonly boot: number;
  readonly #shards: Shard[];
  readonly #mesh: PeerMesh;
  readonly #timing: ClusterTiming;
  readonly #requestTimeoutMs: number;
  readonly #retryIntervalMs: number;
  readonly #pending = new Map<ClientId, Pending>();
  #resp: RespServerHandle | null = null;
  #sends: OutboundSend[] = [];
  #replies: RoutedReply[] = [];
  #flushScheduled = false;
  #stopping: Promise<void> | null = null;
  /** Set once the stores are being closed: a late flush must not touch them. */
  #closed = false;
  #lastNowNs = 0;
  #lastRoles = '';
  #onRoles: ((views: ShardView[]) => void) | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #sweepAtMs = Number.POSITIVE_INFINITY;
  /** Client-id counter, shared by the shards so a client id names one pending command. */
  #nextCounter = 0;

  private constructor(config: ClusterReplicaConfig, shards: Shard[], boot: number) {
    this.config = config;
    this.me = toReplicaId(config.replicaId);
    this.boot = boot;
    this.#shards = shards;
    this.#timing = config.timing ?? DEFAULT_CLUSTER_TIMING;
    this.#requestTimeoutMs = config.requestTimeoutMs ?? 5000;
    this.#retryIntervalMs = config.retryIntervalMs ?? 200;
    this.#mesh = new PeerMesh({
      me: config.replicaId,
      peers: config.replicas.map((replica) => ({ host: config.host, port: replica.peerPort })),
      onMessage: (message) => this.#onWire(message),
      onFrameError: (error) => {
        process.stderr.write(`replica ${config.replicaId}: ${error.message}\n`);
      },
    });
  }

  /**
   * Opens every shard's store and log (recovering what the directory holds), joins the mesh and
   * starts the RESP front. Throws `ClusterDataDirInUseError` when another process holds a shard.
   */
  static async start(config: ClusterReplicaConfig): Promise<ClusterReplica> {
    const replicaCount = config.replicas.length;
    if (!(replicaCount >= 1 && replicaCount <= MAX_REPLICAS)) {
      throw new ClusterOptionsError(`replica count must be in [1, ${MAX_REPLICAS}], got ${replicaCount}`);
    }
    if (!(Number.isInteger(config.replicaId) && config.replicaId >= 0 && config.replicaId < replicaCount)) {
      throw new ClusterOptionsError(`replica id must be in [0, ${replicaCount}), got ${config.replicaId}`);
    }
    if (!(Number.isInteger(config.shardCount) && config.shardCount >= 1 && config.shardCount <= 64)) {
      throw new ClusterOptionsError(`shard count must be in [1, 64], got ${config.shardCount}`);
    }
    mkdirSync(config.directory, { recursive: true });
    const timing = config.timing ?? DEFAULT_CLUSTER_TIMING;
    const random = new Random(config.seed, `replica-${config.replicaId}`);
    const nowNs = Math.round(performance.now() * 1e6);
    const shards: Shard[] = [];
    try {
      for (let index = 0; index < config.shardCount; index++) {
        const shardDirectory = join(config.directory, `shard-${index}`);
        mkdirSync(shardDirectory, { recursive: true });
        let machine: LsmKvStateMachine;
        try {
          machine = LsmKvStateMachine.open({
            directory: join(shardDirectory, 'lsm'),
            engine: config.memtableBytes === undefined ? {} : { memtableBytes: config.memtableBytes },
          });
        } catch (error) {
          if (error instanceof LsmDirectoryLockedError) {
            // The cluster's directory is the replica directory's parent (supervisor.ts layout).
            throw new ClusterDataDirInUseError(
              dirname(config.directory),
              error.holderPid,
              `a process holding replica ${config.replicaId}'s store`,
              {
                cause: error,
              },
            );
          }
          throw error;
        }
        const storage = new GroupCommitStorage(
          FilePaxosStorage.open(join(shardDirectory, 'paxos.log'), clusterCodec),
        );
        const replica = new PaxosReplica<ClusterCommand, ClusterResult>({
          config: {
            replicaId: toReplicaId(config.replicaId),
            replicaCount,
            heartbeatIntervalNs: timing.heartbeatMs * 1e6,
            electionTimeoutMinNs: timing.electionTimeoutMinMs * 1e6,
            electionTimeoutMaxNs: timing.electionTimeoutMaxMs * 1e6,
            snapshotEveryEntries: config.snapshotEveryEntries ?? 10_000,
          },
          storage,
          stateMachine: machine,
          random: preferLeadership(random, index % replicaCount === config.replicaId),
          nowNs,
        });
        shards.push({
          index,
          replica,
          storage,
          machine,
          timer: null,
          timerAtNs: Number.NaN,
          idleSessions: [],
          redirectHint: null,
          waiting: 0,
        });
      }
    } catch (error) {
      for (const shard of shards) {
        shard.storage.close();
        shard.machine.close({ flush: false });
      }
      throw error;
    }
    const host = new ClusterReplica(config, shards, nextBoot(config.directory));
    host.#lastNowNs = nowNs;
    try {
      await host.#mesh.start();
      const own = config.replicas[config.replicaId]!;
      host.#resp = await startRespServer({ port: own.respPort, host: config.host, backend: host });
    } catch (error) {
      // A port in use: give the directories back before reporting.
      await host.stop();
      throw error;
    }
    for (const shard of shards) host.#schedule(shard, shard.replica.wakeAtNs);
    return host;
  }

  /** Where the RESP front listens. */
  get respPort(): number {
    return this.#resp?.address.port ?? 0;
  }

  /** Calls `listener` whenever a shard's role or leader changes here (and once now). */
  onRoles(listener: (views: ShardView[]) => void): void {
    this.#onRoles = listener;
    this.#lastRoles = '';
    this.#checkRoles();
  }

  /** Every shard's role, leader, ballot and log position here. */
  shardViews(): ShardView[] {
    return this.#shards.map((shard) => {
      const status = shard.replica.status();
      const leader =
        status.role === 'leader' ? this.me : status.role === 'follower' ? status.leaderHint : null;
      return {
        shard: shard.index,
        role: status.role,
        leader,
        ballot: status.role === 'follower' ? status.promised : status.ownBallot,
        appliedThrough: status.appliedThrough,
        snapshotSlot: status.snapshotSlot,
        keys: shard.machine.stats().keys,
      };
    });
  }

  meshStats(): PeerMeshStats {
    return this.#mesh.stats();
  }

  // ───────────────────────────── KvBackend ─────────────────────────────

  async get(key: Buffer): Promise<Buffer | null> {
    const result = await this.#submitForKey(key, { op: 'get', key: Uint8Array.from(key) });
    return result.op === 'value' ? toBuffer(result.value) : null;
  }

  async set(key: Buffer, value: Buffer, condition: SetCondition): Promise<boolean> {
    const command: ClusterCommand = {
      op: 'set',
      key: Uint8Array.from(key),
      value: Uint8Array.from(value),
      condition,
    };
    const result = await this.#submitForKey(key, command);
    return result.op === 'written' && result.written;
  }

  async del(keys: readonly Buffer[]): Promise<number> {
    return this.#sumByShard(keys, 'del');
  }

  async exists(keys: readonly Buffer[]): Promise<number> {
    return this.#sumByShard(keys, 'exists');
  }

  async mget(keys: readonly Buffer[]): Promise<ReadonlyArray<Buffer | null>> {
    const values = new Array<Buffer | null>(keys.length).fill(null);
    const parts = this.#splitByShard(keys);
    await Promise.all(
      parts.map(async ({ shard, positions }) => {
        const command: ClusterCommand = {
          op: 'mget',
          keys: positions.map((position) => Uint8Array.from(keys[position]!)),
        };
        const result = await this.#submit(this.#shards[shard]!, command);
        if (result.op !== 'values') return;
        positions.forEach((position, index) => {
          values[position] = toBuffer(result.values[index] ?? null);
        });
      }),
    );
    return values;
  }

  async dbsize(): Promise<number> {
    const counts = await Promise.all(this.#shards.map((shard) => this.#submit(shard, { op: 'dbsize' })));
    return counts.reduce((sum, result) => sum + (result.op === 'count' ? result.count : 0), 0);
  }

  info(): Promise<KvBackendInfo> {
    const views = this.shardViews();
    const leadsAll = views.every((view) => view.role === 'leader');
    const first = views[0]!;
    const fields: [string, string | number][] = [
      ['ipipe_backend', 'rkv-cluster'],
      ['ipipe_replica_id', this.me],
      ['ipipe_replicas', this.config.replicas.length],
      ['ipipe_shards', this.#shards.length],
      ['ipipe_leader_replica', first.leader === null ? 'unknown' : first.leader],
      ['ipipe_boot', this.boot],
      ['ipipe_pid', process.pid],
    ];
    for (const view of views) {
      const stats = this.#shards[view.shard]!.machine.stats();
      fields.push(
        [`shard_${view.shard}_role`, view.role],
        [`shard_${view.shard}_leader`, view.leader === null ? 'unknown' : view.leader],
        [`shard_${view.shard}_ballot`, view.ballot],
        [`shard_${view.shard}_applied_through`, view.appliedThrough],
        [`shard_${view.shard}_snapshot_slot`, view.snapshotSlot],
        [`shard_${view.shard}_keys`, view.keys],
        [`shard_${view.shard}_flushed_sequence`, stats.flushedSequence],
        [`shard_${view.shard}_snapshot_loads`, stats.snapshotLoads],
        [`shard_${view.shard}_log_fsyncs`, this.#shards[view.shard]!.storage.commits],
      );
    }
    const mesh = this.#mesh.stats();
    fields.push(
      ['mesh_connected_peers', mesh.connectedPeers],
      ['mesh_frames_sent', mesh.framesSent],
      ['mesh_frames_received', mesh.framesReceived],
      ['mesh_frames_dropped', mesh.framesDropped],
      ['mesh_frame_errors', mesh.frameErrors],
    );
    const replication: InfoFields = [
      ['ipipe_replica_id', this.me],
      ['connected_replicas', mesh.connectedPeers],
    ];
    const leaderPort = first.leader === null ? undefined : this.config.replicas[first.leader]?.respPort;
    const info: KvBackendInfo = {
      role: leadsAll ? 'leader' : 'follower',
      replication,
      ipipe: fields,
      ...(leaderPort === undefined ? {} : { leaderAddress: `${this.config.host}:${leaderPort}` }),
    };
    return Promise.resolve(info);
  }

  /**
   * Stops gracefully: the RESP front answers what it took, pending commands fail with -TRYAGAIN,
   * the logs are synced, the stores flushed and closed (a restart then replays nothing).
   */
  stop(): Promise<void> {
    if (this.#stopping !== null) return this.#stopping;
    this.#stopping = (async () => {
      await this.#resp?.close({ timeoutMs: 2000 });
      if (this.#sweepTimer !== null) clearTimeout(this.#sweepTimer);
      this.#sweepTimer = null;
      for (const pending of this.#pending.values()) {
        pending.reject(new BackendUnavailableError('the replica is shutting down; retry on another replica'));
      }
      this.#pending.clear();
      this.#flush();
      this.#closed = true;
      await this.#mesh.close();
      for (const shard of this.#shards) {
        if (shard.timer !== null) clearTimeout(shard.timer);
        shard.timer = null;
        shard.storage.commit();
        shard.storage.close();
        shard.machine.close({ flush: true });
      }
    })();
    return this.#stopping;
  }

  // ───────────────────────────── client commands ─────────────────────────────

  #submitForKey(key: Uint8Array, command: ClusterCommand): Promise<ClusterResult> {
    return this.#submit(this.#shards[shardOf(key, this.#shards.length)]!, command);
  }

  #splitByShard(keys: readonly Buffer[]): { shard: number; positions: number[] }[] {
    const byShard = new Map<number, number[][]>();
    keys.forEach((key, position) => {
      const shard = shardOf(key, this.#shards.length);
      let chunks = byShard.get(shard);
      if (chunks === undefined) {
        chunks = [[]];
        byShard.set(shard, chunks);
      }
      let last = chunks[chunks.length - 1]!;
      if (last.length >= MAX_KEYS_PER_COMMAND) {
        last = [];
        chunks.push(last);
      }
      last.push(position);
    });
    const parts: { shard: number; positions: number[] }[] = [];
    for (const [shard, chunks] of byShard) for (const positions of chunks) parts.push({ shard, positions });
    return parts;
  }

  async #sumByShard(keys: readonly Buffer[], op: 'del' | 'exists'): Promise<number> {
    const parts = this.#splitByShard(keys);
    // DEL counts a key named twice once: both copies hash to one shard, but could fall in two
    // chunks of a very long DEL; the second chunk then finds it deleted and does not count it.
    const results = await Promise.all(
      parts.map(({ shard, positions }) =>
        this.#submit(this.#shards[shard]!, {
          op,
          keys: positions.map((position) => Uint8Array.from(keys[position]!)),
        }),
      ),
    );
    return results.reduce((sum, result) => sum + (result.op === 'count' ? result.count : 0), 0);
  }

  #submit(shard: Shard, command: ClusterCommand): Promise<ClusterResult> {
    if (this.#stopping !== null) {
      return Promise.reject(
        new BackendUnavailableError('the replica is shutting down; retry on another replica'),
      );
    }
    const session = this.#acquireSession(shard);
    if (session === null) {
      return Promise.reject(new BackendUnavailableError('this replica ran out of client ids; restart it'));
    }
    session.seq++;
    return new Promise<ClusterResult>((resolve, reject) => {
      const pending: Pending = {
        shard,
        session,
        seq: session.seq,
        command,
        deadlineMs: performance.now() + this.#requestTimeoutMs,
        resolve,
        reject,
        sentAtMs: Number.NEGATIVE_INFINITY,
        sentTo: null,
        waiting: false,
      };
      this.#pending.set(session.clientId, pending);
      // Behind commands that are held back, this one waits too: a shard's commands are sent in
      // submission order (a pipelined SET k; GET k must not overtake each other).
      if (shard.waiting > 0) this.#hold(pending);
      else this.#send(pending);
    });
  }

  #acquireSession(shard: Shard): Session | null {
    const idle = shard.idleSessions.pop();
    if (idle !== undefined) return idle;
    if (this.#nextCounter >= COUNTER_SPACE) return null;
    const counter = this.#nextCounter++;
    const clientId = ((this.boot * COUNTER_SPACE + counter) * MAX_REPLICAS + this.me) as ClientId;
    return { clientId, seq: 0 };
  }

  /**
   * One attempt to send a pending command to its shard's leader (or to hand it to the local
   * replica when this one leads). With no leader known it is held back for the sweep.
   */
  #send(pending: Pending): void {
    const target = this.#leaderOf(pending.shard);
    if (target === null) {
      this.#hold(pending);
      return;
    }
    if (pending.waiting) {
      pending.waiting = false;
      pending.shard.waiting--;
    }
    pending.sentTo = target;
    pending.sentAtMs = performance.now();
    this.#armSweep(this.#retryIntervalMs);
    const request = {
      type: 'request',
      clientId: pending.session.clientId,
      seq: pending.seq,
      command: pending.command,
    } as const;
    if (target === this.me) this.#handle(pending.shard, request);
    else {
      this.#sends.push({
        to: target,
        message: { kind: 'request', from: this.me, shard: pending.shard.index, request },
      });
      this.#requestFlush();
    }
  }

  #hold(pending: Pending): void {
    if (!pending.waiting) {
      pending.waiting = true;
      pending.shard.waiting++;
    }
    this.#armSweep(SWEEP_HELD_MS);
  }

  /** Runs the sweep within `delayMs` (sooner if already armed sooner). */
  #armSweep(delayMs: number): void {
    const atMs = performance.now() + delayMs;
    if (this.#sweepTimer !== null && this.#sweepAtMs <= atMs) return;
    if (this.#sweepTimer !== null) clearTimeout(this.#sweepTimer);
    this.#sweepAtMs = atMs;
    this.#sweepTimer = setTimeout(() => this.#sweep(), delayMs);
  }

  /**
   * Re-sends, in submission order (the `#pending` map's order), every command that is held back
   * or unanswered for a retry interval, and fails those past their deadline. One timer for all
   * pending commands instead of one each; the order is what keeps a connection's pipelined
   * commands in order across leader changes and redirects.
   */
  #sweep(): void {
    this.#sweepTimer = null;
    this.#sweepAtMs = Number.POSITIVE_INFINITY;
    if (this.#closed) return;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    // A command sent to a replica that no longer leads is due at once, so after a leader change
    // the shard's commands reach the new leader in submission order.
    const leaders = this.#shards.map((shard) => this.#leaderOf(shard));
    for (const [clientId, pending] of this.#pending) {
      if (now >= pending.deadlineMs) {
        // The command may still be applied later: the session is abandoned, never reused.
        this.#pending.delete(clientId);
        if (pending.waiting) pending.shard.waiting--;
        pending.reject(
          new BackendUnavailableError(
            `shard ${pending.shard.index} did not answer within ${this.#requestTimeoutMs} ms ` +
              '(a leader election is under way, or a majority of replicas is down); retry',
          ),
        );
        continue;
      }
      const moved = pending.sentTo !== leaders[pending.shard.index] && leaders[pending.shard.index] !== null;
      const dueAtMs = pending.waiting || moved ? now : pending.sentAtMs + this.#retryIntervalMs;
      if (dueAtMs <= now) this.#send(pending);
      else next = Math.min(next, dueAtMs);
    }
    if (this.#pending.size > 0)
      this.#armSweep(Number.isFinite(next) ? Math.max(1, next - now) : SWEEP_HELD_MS);
  }

  /** The replica to send a shard's commands to, or null while no leader is known. */
  #leaderOf(shard: Shard): number | null {
    const status = shard.replica.status();
    if (status.role === 'leader') return this.me;
    if (status.role === 'follower' && status.leaderHint !== null) return status.leaderHint;
    return shard.redirectHint !== null && shard.redirectHint !== this.me ? shard.redirectHint : null;
  }

  #onReply(shard: Shard, reply: ClientReply<ClusterResult>): void {
    const pending = this.#pending.get(reply.clientId);
    if (pending === undefined || pending.seq !== reply.seq || pending.shard !== shard) return;
    if (reply.type === 'reply') {
      this.#pending.delete(reply.clientId);
      if (pending.waiting) shard.waiting--;
      shard.idleSessions.push(pending.session);
      pending.resolve(reply.result);
      return;
    }
    // Not the leader there: follow its hint soon (at once if it names someone new). The sweep
    // re-sends, so redirected commands keep their order.
    shard.redirectHint = reply.leaderHint;
    const fresh = reply.leaderHint !== null && reply.leaderHint !== pending.sentTo;
    const delayMs = fresh ? 1 : SWEEP_HELD_MS;
    pending.sentAtMs = performance.now() + delayMs - this.#retryIntervalMs;
    this.#armSweep(delayMs);
  }

  // ───────────────────────────── Paxos plumbing ─────────────────────────────

  #nowNs(): number {
    const now = Math.round(performance.now() * 1e6);
    if (now > this.#lastNowNs) this.#lastNowNs = now;
    return this.#lastNowNs;
  }

  #onWire(message: WireMessage): void {
    // While stopping, keep serving the cluster until the stores close: the front is draining the
    // commands it took, and they need their Paxos rounds.
    if (this.#closed) return;
    const shard = this.#shards[message.shard];
    if (shard === undefined) return; // a peer with another shard count: cluster up refuses that
    switch (message.kind) {
      case 'peer':
        this.#handle(shard, message.message);
        return;
      case 'request':
        this.#handle(shard, message.request);
        return;
      case 'reply':
        this.#onReply(shard, message.reply);
        return;
    }
  }

  /** One input through the shard's replica; outputs wait for the turn's group commit. */
  #handle(shard: Shard, input: PaxosInput<ClusterCommand, ClusterResult>): void {
    const outputs = shard.replica.handle(input, this.#nowNs());
    for (const { to, message } of outputs.send) {
      this.#sends.push({ to, message: { kind: 'peer', from: this.me, shard: shard.index, message } });
    }
    for (const reply of outputs.replies) this.#replies.push({ shard, reply });
    this.#schedule(shard, outputs.wakeAtNs);
    this.#requestFlush();
  }

  #schedule(shard: Shard, wakeAtNs: number): void {
    if (shard.timer !== null && shard.timerAtNs === wakeAtNs) return;
    if (shard.timer !== null) clearTimeout(shard.timer);
    shard.timer = null;
    if (!Number.isFinite(wakeAtNs) || this.#closed) return;
    shard.timerAtNs = wakeAtNs;
    const delayMs = Math.max(0, Math.ceil((wakeAtNs - this.#nowNs()) / 1e6));
    shard.timer = setTimeout(() => {
      shard.timer = null;
      if (!this.#closed) this.#handle(shard, { type: 'tick' });
    }, delayMs);
  }

  #requestFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  /** The end of a turn: fsync, then send, then answer (group commit), then LSM maintenance. */
  #flush(): void {
    this.#flushScheduled = false;
    if (this.#closed) return;
    for (const shard of this.#shards) shard.storage.commit();
    const sends = this.#sends;
    const replies = this.#replies;
    this.#sends = [];
    this.#replies = [];
    for (const { shard, reply } of replies) {
      const origin = reply.clientId % MAX_REPLICAS;
      if (origin === this.me) this.#onReply(shard, reply);
      else sends.push({ to: origin, message: { kind: 'reply', from: this.me, shard: shard.index, reply } });
    }
    // A broadcast is one PeerMessage object queued for each peer: encode it once.
    const frames = new Map<object, Uint8Array>();
    for (const { to, message } of sends) {
      const identity = message.kind === 'peer' ? message.message : message;
      let frame = frames.get(identity);
      if (frame === undefined) {
        frame = encodeWireMessage(message);
        frames.set(identity, frame);
      }
      this.#mesh.sendFrame(to, frame);
    }
    this.#mesh.flush();
    let moreDue = false;
    for (const shard of this.#shards) if (shard.machine.maintenanceStep()) moreDue = true;
    if (moreDue) this.#requestFlush();
    this.#checkRoles();
  }

  #checkRoles(): void {
    if (this.#onRoles === null) return;
    const views = this.shardViews();
    const key = views.map((view) => `${view.role}:${view.leader}`).join(',');
    if (key === this.#lastRoles) return;
    this.#lastRoles = key;
    this.#onRoles(views);
  }
}
