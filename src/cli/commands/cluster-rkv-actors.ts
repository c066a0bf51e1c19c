/**
 * `ipipe cluster up rkv --actors`: RKV as ipipe actors on live node processes (one replica per
 * node: consensus and memtable on its NIC domain, SSTable reader and compaction on its host; see
 * src/apps/rkv/cluster/actor-cluster.ts), behind one Redis-protocol front in this process. It
 * writes the same state file as the process-per-replica cluster, so `ipipe load --app rkv`,
 * `cluster status` and `cluster down` find it. Each replica keeps its durable log and SSTable
 * journal under the data directory (replica-<r>/), so `up` on a directory used before recovers the
 * replicas' state, and `--respawn` starts a dead node again and sets its replica up from its files.
 * `--shards S` runs S consensus groups over the same nodes (replica-<r>/s<k>/ each; keys by
 * hash), each shard's memtable sized from the NIC memory the nodes give (`--nic-memory`); the
 * shard count is part of the directory's shape, like the replica count.
 * Runs until SIGINT (exit 130) or SIGTERM (0).
 */

import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../apps/rkv/cluster/actor-backend.ts';
import {
  MAX_RKV_MEMTABLE_LIMIT_BYTES,
  RkvActorConnection,
  rkvActorClusterSpec,
  rkvActorStorageNames,
  rkvMemtableLimitBytes,
} from '../../apps/rkv/cluster/actor-cluster.ts';
import { ClusterDataDirInUseError, ClusterOptionsError } from '../../apps/rkv/cluster/errors.ts';
import {
  ACTOR_SHAPE_FILE,
  type ClusterStateFile,
  PROCESS_SHAPE_FILE,
  processAlive,
  readClusterState,
} from '../../apps/rkv/cluster/supervisor.ts';
import { type RespServerHandle, startRespServer } from '../../apps/rkv/resp/server.ts';
import { ClusterStartError, ConfigError, IpipeError } from '../../errors.ts';
import { LocalCluster } from '../../platform/live/cluster/launch.ts';
import { paint, table, writeJson, writeOut } from '../output.ts';

export interface RkvActorClusterUpOptions {
  readonly replicas: number;
  /** Consensus groups over the same nodes (1 to MAX_RKV_ACTOR_SHARDS). */
  readonly shards: number;
  /** NIC memory each node gives RKV's memtables; each shard's flush limit follows from it. */
  readonly nicMemoryBytes: number;
  readonly dataDir: string;
  readonly respPort: number;
  readonly basePort: number;
  readonly nicCores: number;
  readonly electionTimeoutMs: number;
  readonly seed: number;
  /** Start a node process again (after 1 s) when it exits unexpectedly; its replica rejoins from its files. */
  readonly respawn: boolean;
  readonly json: boolean;
}

const STATE_FILE = 'cluster-state.json';
/** Counts the fronts started on a directory: each takes client ids no earlier one used. */
const CLIENT_EPOCH_FILE = 'front-epoch';
/** Client ids per front (its pool of 64, with room). */
const CLIENT_IDS_PER_FRONT = 1024;

/**
 * Refuses a directory made with another group size (changing the group without a reconfiguration
 * protocol could leave out every replica holding a chosen value), another shard count (a key's
 * shard is its hash modulo the count: another count would look for keys in the wrong group) or
 * holding the process-per-replica cluster; records the shape on first use. A shape file without
 * `shards` was written before shards existed: one shard.
 */
function checkShape(dataDir: string, replicas: number, shards: number): void {
  if (existsSync(join(dataDir, PROCESS_SHAPE_FILE))) {
    throw new ClusterOptionsError(
      `${dataDir} holds the process-per-replica RKV cluster (cluster up rkv without --actors); use another --data-dir`,
    );
  }
  const path = join(dataDir, ACTOR_SHAPE_FILE);
  if (existsSync(path)) {
    const shape = JSON.parse(readFileSync(path, 'utf8')) as { replicas?: unknown; shards?: unknown };
    if (shape.replicas !== replicas) {
      throw new ClusterOptionsError(
        `${dataDir} was made with --replicas ${String(shape.replicas)}; start it with the same number (RKV has no ` +
          'membership change) or use a fresh --data-dir',
      );
    }
    const made = shape.shards ?? 1;
    if (made !== shards) {
      throw new ClusterOptionsError(
        `${dataDir} was made with --shards ${String(made)}; start it with the same number (keys are placed by ` +
          'hash modulo the shard count, and there is no resharding) or use a fresh --data-dir',
      );
    }
    return;
  }
  writeFileSync(path, `${JSON.stringify({ schemaVersion: 1, replicas, shards }, null, 2)}\n`);
}

/**
 * The first client id of this front: the replicas' session tables are durable, so a front that
 * reused an earlier front's ids would have its first puts taken for duplicates (acknowledged, not
 * applied). The epoch file is bumped and synced before any id is used.
 */
function nextClientIdBase(dataDir: string): number {
  const path = join(dataDir, CLIENT_EPOCH_FILE);
  const previous = existsSync(path) ? Number(readFileSync(path, 'utf8').trim()) : 0;
  if (!(Number.isSafeInteger(previous) && previous >= 0)) {
    throw new ClusterOptionsError(
      `${path} holds "${readFileSync(path, 'utf8').trim()}", not a count; restore it or remove the directory`,
    );
  }
  const epoch = previous + 1;
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, `${epoch}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return epoch * CLIENT_IDS_PER_FRONT + 1;
}
const CLUSTER_FILE = 'actor-cluster.json';

export async function rkvActorClusterUpCommand(options: RkvActorClusterUpOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  if (existsSync(join(dataDir, STATE_FILE))) {
    const holder = readClusterState(dataDir).supervisorPid;
    if (processAlive(holder)) {
      const error = new ClusterDataDirInUseError(dataDir, holder, 'a running cluster supervisor');
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return 3;
    }
  }
  // What the directory is and was: refused before any process starts.
  let firstClientId: number;
  let memtableLimitBytes: number;
  try {
    if (options.replicas < 2) {
      throw new ClusterOptionsError(
        '--actors needs --replicas 2 or more: a lone replica never holds a read lease (it needs a peer to acknowledge it)',
      );
    }
    memtableLimitBytes = rkvMemtableLimitBytes(options.nicMemoryBytes, options.shards);
    for (let replica = 0; replica < options.replicas; replica++) {
      for (let shard = 0; shard < options.shards; shard++)
        rkvActorStorageNames(dataDir, replica, shard, options.shards);
    }
    checkShape(dataDir, options.replicas, options.shards);
    firstClientId = nextClientIdBase(dataDir);
  } catch (error) {
    if (error instanceof ClusterOptionsError || error instanceof ConfigError) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return 2;
    }
    throw error;
  }
  const spec = rkvActorClusterSpec(
    {
      nodes: Array.from({ length: options.replicas }, (_, id) => ({
        id,
        address: '127.0.0.1',
        port: options.basePort + id,
        nicCores: options.nicCores,
      })),
    },
    { durable: true, shards: options.shards },
  );
  const file = join(dataDir, CLUSTER_FILE);
  writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
  const share = options.nicMemoryBytes / (2 * options.shards);
  // Say when the cap, not the share, set the limit (the printed arithmetic would not add up).
  const limitRule =
    memtableLimitBytes < share
      ? `NIC memory ${options.nicMemoryBytes / 1024} KiB / (2 × ${options.shards}), capped at ${MAX_RKV_MEMTABLE_LIMIT_BYTES / 1024} KiB: one ring message`
      : `NIC memory ${options.nicMemoryBytes / 1024} KiB / (2 × ${options.shards})`;
  process.stderr.write(
    `ipipe: starting ${options.replicas} live node processes for RKV's actors, ${options.shards} shard(s), ` +
      `memtables flushing at ${memtableLimitBytes} bytes (${limitRule}) (seed ${options.seed})…\n`,
  );
  let cluster: LocalCluster;
  try {
    cluster = await LocalCluster.launch({ file, spec });
  } catch (error) {
    if (error instanceof ClusterStartError) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return 3;
    }
    throw error;
  }
  const connection = await RkvActorConnection.connect(spec);
  const heartbeatMs = Math.max(1, Math.floor(options.electionTimeoutMs / 10));
  let server: RespServerHandle;
  try {
    await connection.setup({
      heartbeatMs,
      electionTimeoutMs: options.electionTimeoutMs,
      leader: options.seed % options.replicas,
      memtableLimitBytes,
      dataDir,
    });
    const backend = new ActorKvBackend(connection, { firstClientId });
    server = await startRespServer({ port: options.respPort, backend, limits: ACTOR_RESP_LIMITS });
  } catch (error) {
    await connection.close();
    await cluster.stopAll();
    if (error instanceof IpipeError) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return 3;
    }
    throw error;
  }
  const respPort = server.address.port;
  const startedAt = new Date().toISOString();
  /** The state file `load --app rkv`, `cluster status` and `cluster down` read (again after a respawn). */
  const writeState = (): void => {
    const state: ClusterStateFile = {
      schemaVersion: 1,
      supervisorPid: process.pid,
      host: '127.0.0.1',
      shards: options.shards,
      startedAt,
      replicas: cluster.nodes.map((node) => ({
        replicaId: node.nodeId,
        pid: node.pid,
        respPort,
        peerPort: node.banner.udp.port,
      })),
    };
    writeFileSync(join(dataDir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  };
  writeState();
  const nodes = cluster.nodes;
  const rows = nodes.map((node) => ({
    replica: node.nodeId,
    pid: node.pid,
    udp: `${node.banner.udp.address}:${node.banner.udp.port}`,
    actors: node.banner.actors.map((actor) => `${actor.name}(${actor.domain})`),
  }));
  if (options.json) {
    writeJson({
      schemaVersion: 1,
      app: 'rkv',
      engine: 'actors',
      dataDir,
      seed: options.seed,
      respPort,
      shards: options.shards,
      nicMemoryBytes: options.nicMemoryBytes,
      memtableLimitBytes,
      nodes: rows,
    });
  } else {
    writeOut(
      paint(
        'bold',
        `RKV on ipipe actors: ${options.replicas} live node processes, ${options.shards} shard(s); each node runs one replica of every shard`,
      ) +
        `\nmemtables flush at ${memtableLimitBytes} bytes per shard (${limitRule})` +
        `\nRESP port: ${respPort} (one front in this process; GET = lease read at the leader, SET = a Multi-Paxos put)\n`,
    );
    writeOut(
      table(
        ['replica', 'pid', 'udp', 'actors (domain)'],
        rows.map((row) => [row.replica, row.pid, row.udp, row.actors.join(' ')]),
      ),
    );
    writeOut(
      `\ntry:  redis-cli -p ${respPort} set k v · ipipe load --app rkv --data-dir ${options.dataDir}\n` +
        `      redis-cli -p ${respPort} set k v nx · del k · dbsize · info ipipe\n` +
        `stop: Ctrl-C, or ipipe cluster down --data-dir ${options.dataDir}`,
    );
  }
  let stopping = false;
  if (options.respawn) {
    const watch = (nodeId: number): void => {
      void cluster.node(nodeId)?.exited.then(async (code) => {
        if (stopping) return;
        process.stderr.write(`ipipe: node ${nodeId} exited (${code}); starting it again in 1 s\n`);
        await new Promise((wake) => setTimeout(wake, 1_000));
        if (stopping) return;
        try {
          await cluster.start(nodeId);
        } catch (error) {
          process.stderr.write(`ipipe: node ${nodeId} did not start again: ${(error as Error).message}\n`);
          return;
        }
        // The new process is watched and recorded before its setup, which may still fail.
        writeState();
        watch(nodeId);
        try {
          await connection.restartReplica(nodeId);
          process.stderr.write(`ipipe: replica ${nodeId} restarted from its files and set up again\n`);
        } catch (error) {
          process.stderr.write(
            `ipipe: replica ${nodeId} runs but was not set up: ${(error as Error).message}\n`,
          );
        }
      });
    };
    for (const node of cluster.nodes) watch(node.nodeId);
  }
  const signal = await new Promise<NodeJS.Signals>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal('SIGINT'));
    process.once('SIGTERM', () => resolveSignal('SIGTERM'));
  });
  stopping = true;
  process.stderr.write(`${signal}: stopping the front and the nodes\n`);
  await server.close({ timeoutMs: 1_000 });
  await connection.close();
  await cluster.stopAll();
  rmSync(join(dataDir, STATE_FILE), { force: true });
  return signal === 'SIGINT' ? 130 : 0;
}
