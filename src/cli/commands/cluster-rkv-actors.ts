/**
 * `ipipe cluster up rkv --actors`: RKV as ipipe actors on live node processes (one replica per
 * node: consensus and memtable on its NIC domain, SSTable reader and compaction on its host; see
 * src/apps/rkv/cluster/actor-cluster.ts), behind one Redis-protocol front in this process. It
 * writes the same state file as the process-per-replica cluster, so `ipipe load --app rkv`,
 * `cluster status` and `cluster down` find it. Each replica keeps its durable log and SSTable
 * journal under the data directory (replica-<r>/), so `up` on a directory used before recovers the
 * replicas' state, and `--respawn` starts a dead node again and sets its replica up from its files.
 * Runs until SIGINT (exit 130) or SIGTERM (0).
 */

import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../apps/rkv/cluster/actor-backend.ts';
import { RkvActorConnection, rkvActorClusterSpec } from '../../apps/rkv/cluster/actor-cluster.ts';
import { ClusterDataDirInUseError } from '../../apps/rkv/cluster/errors.ts';
import { type ClusterStateFile, processAlive, readClusterState } from '../../apps/rkv/cluster/supervisor.ts';
import { startRespServer } from '../../apps/rkv/resp/server.ts';
import { ClusterStartError, IpipeError } from '../../errors.ts';
import { LocalCluster } from '../../platform/live/cluster/launch.ts';
import { paint, table, writeJson, writeOut } from '../output.ts';

export interface RkvActorClusterUpOptions {
  readonly replicas: number;
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
  const spec = rkvActorClusterSpec(
    {
      nodes: Array.from({ length: options.replicas }, (_, id) => ({
        id,
        address: '127.0.0.1',
        port: options.basePort + id,
        nicCores: options.nicCores,
      })),
    },
    { durable: true },
  );
  const file = join(dataDir, CLUSTER_FILE);
  writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
  process.stderr.write(
    `ipipe: starting ${options.replicas} live node processes for RKV's actors (seed ${options.seed})…\n`,
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
  try {
    await connection.setup({
      heartbeatMs,
      electionTimeoutMs: options.electionTimeoutMs,
      leader: options.seed % options.replicas,
      dataDir,
    });
  } catch (error) {
    await connection.close();
    await cluster.stopAll();
    if (error instanceof IpipeError) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return 3;
    }
    throw error;
  }
  const backend = new ActorKvBackend(connection);
  const server = await startRespServer({ port: options.respPort, backend, limits: ACTOR_RESP_LIMITS });
  const respPort = server.address.port;
  const startedAt = new Date().toISOString();
  /** The state file `load --app rkv`, `cluster status` and `cluster down` read (again after a respawn). */
  const writeState = (): void => {
    const state: ClusterStateFile = {
      schemaVersion: 1,
      supervisorPid: process.pid,
      host: '127.0.0.1',
      shards: 1,
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
      nodes: rows,
    });
  } else {
    writeOut(
      paint('bold', `RKV on ipipe actors: ${options.replicas} live node processes, one replica each`) +
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
        `      (DEL, SET NX/XX and DBSIZE answer -ERR: the actors do not have them yet)\n` +
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
          await connection.restartReplica(nodeId);
          writeState();
          process.stderr.write(`ipipe: replica ${nodeId} restarted from its files and set up again\n`);
          watch(nodeId);
        } catch (error) {
          process.stderr.write(`ipipe: replica ${nodeId} did not come back: ${(error as Error).message}\n`);
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
