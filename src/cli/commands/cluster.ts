/**
 * `ipipe cluster up rkv` / `ipipe cluster down` / `ipipe cluster status`: a local RKV cluster of
 * replica processes on loopback that redis-cli and redis-benchmark talk to (src/apps/rkv/cluster).
 * `cluster up rta|dt` and `cluster down` of such a cluster are handed to cluster-actors.ts.
 *
 * `up` stays in the foreground: it prints the RESP ports and each replica's pid and role on stdout
 * (or one JSON document with --json), role changes and replica exits on stderr, and stops the
 * replicas on SIGINT (exit 130) or SIGTERM (exit 0); a data directory in use or a replica that
 * cannot start exits 3, options that contradict the directory 2. `down` stops a cluster started
 * elsewhere, found through the state file in its data directory.
 */

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import {
  DEFAULT_RKV_NIC_MEMORY_BYTES,
  MAX_RKV_ACTOR_SHARDS,
  MAX_RKV_MEMTABLE_LIMIT_BYTES,
} from '../../apps/rkv/cluster/actor-cluster.ts';
import {
  ClusterDataDirInUseError,
  ClusterOptionsError,
  ClusterStartError,
} from '../../apps/rkv/cluster/errors.ts';
import { DEFAULT_CLUSTER_TIMING } from '../../apps/rkv/cluster/replica-host.ts';
import {
  type ClusterEvent,
  ClusterSupervisor,
  clusterDown,
  readClusterState,
} from '../../apps/rkv/cluster/supervisor.ts';
import { UsageError } from '../../errors.ts';
import { freshSeed } from '../../random.ts';
import { givenFlags, parseChoice, parseIntegerIn, parseSeed, refuseFlags } from '../options.ts';
import { table, writeJson, writeOut } from '../output.ts';
import {
  actorClusterDownCommand,
  DEFAULT_APP_CLUSTER_DIR,
  dtClusterUpCommand,
  isActorCluster,
  rtaClusterUpCommand,
} from './cluster-actors.ts';
import { rkvActorClusterUpCommand } from './cluster-rkv-actors.ts';

/** Where `cluster up` keeps its files when given no --data-dir (ignored by git). */
export const DEFAULT_CLUSTER_DATA_DIR = DEFAULT_APP_CLUSTER_DIR.rkv;
/** Replica i serves RESP on this port + i by default. */
export const DEFAULT_CLUSTER_RESP_PORT = 7000;

/** Options of `cluster up`, parsed. */
export interface ClusterUpCommandOptions {
  readonly replicas: number;
  readonly shards: number;
  readonly dataDir: string;
  readonly respPort: number;
  readonly seed: number;
  readonly respawn: boolean;
  /** Shortest election timeout in ms (the longest is twice it, heartbeats a tenth of it). */
  readonly electionTimeoutMs: number;
  readonly json: boolean;
}

function describeEvent(event: ClusterEvent): string | null {
  switch (event.type) {
    case 'ready':
      return `replica ${event.replicaId} ready (pid ${event.pid}, RESP port ${event.respPort})`;
    case 'roles': {
      const led = event.views.filter((view) => view.role === 'leader').map((view) => view.shard);
      return led.length === 0
        ? null
        : `replica ${event.replicaId} now leads shard${led.length > 1 ? 's' : ''} ${led.join(', ')}`;
    }
    case 'exited':
      return `replica ${event.replicaId} (pid ${event.pid}) exited (${
        event.signal === null ? `code ${event.code}` : `signal ${event.signal}`
      })${event.expected ? '' : ' unexpectedly'}`;
  }
}

/** Runs `cluster up` until a signal; resolves with the exit code. */
export async function clusterUpCommand(options: ClusterUpCommandOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  let announced = false;
  process.stderr.write(
    `starting ${options.replicas} RKV replica process(es), ${options.shards} shard(s), data in ${dataDir}, seed ${options.seed}\n`,
  );
  let supervisor: ClusterSupervisor;
  try {
    supervisor = await ClusterSupervisor.start({
      replicas: options.replicas,
      shards: options.shards,
      dataDir,
      respPort: options.respPort,
      seed: options.seed,
      respawn: options.respawn,
      timing: {
        heartbeatMs: Math.max(1, Math.floor(options.electionTimeoutMs / 10)),
        electionTimeoutMinMs: options.electionTimeoutMs,
        electionTimeoutMaxMs: options.electionTimeoutMs * 2,
      },
      onEvent: (event) => {
        if (!announced && event.type === 'roles') return;
        const line = describeEvent(event);
        if (line !== null) process.stderr.write(`${line}\n`);
      },
    });
  } catch (error) {
    // A busy directory or a replica that cannot start is the environment's problem (exit 3); a
    // shape that contradicts the directory is a usage error (exit 2).
    if (
      error instanceof ClusterDataDirInUseError ||
      error instanceof ClusterStartError ||
      error instanceof ClusterOptionsError
    ) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return error instanceof ClusterOptionsError ? 2 : 3;
    }
    throw error;
  }
  // Wait (a few election timeouts at most) until every shard has a leader, so the table says who.
  for (let shard = 0; shard < options.shards; shard++) {
    try {
      await supervisor.waitForLeader(shard, 20_000);
    } catch {
      process.stderr.write(`no leader for shard ${shard} yet; the table shows what is known\n`);
    }
  }
  announced = true;
  const replicas = supervisor.replicas();
  const roleOf = (views: (typeof replicas)[number]['views']): string =>
    views.length === 0
      ? 'starting'
      : views.map((view) => (options.shards > 1 ? `${view.shard}:${view.role}` : view.role)).join(' ');
  const firstPort = replicas[0]?.respPort ?? 0;
  if (options.json) {
    writeJson({
      schemaVersion: 1,
      app: 'rkv',
      dataDir,
      seed: options.seed,
      shards: options.shards,
      respPort: firstPort,
      replicas: replicas.map((replica) => ({
        replicaId: replica.replicaId,
        pid: replica.pid,
        respPort: replica.respPort,
        peerPort: replica.peerPort,
        roles: replica.views.map((view) => ({ shard: view.shard, role: view.role, leader: view.leader })),
        logPath: replica.logPath,
      })),
    });
  } else {
    writeOut(
      `RKV cluster up: ${replicas.length} replicas, ${options.shards} shard(s), data in ${dataDir}\n` +
        `RESP port: ${firstPort} (every replica serves RESP; followers forward commands to the leader)\n`,
    );
    writeOut(
      table(
        ['replica', 'pid', 'RESP port', 'peer port', options.shards > 1 ? 'roles (shard:role)' : 'role'],
        replicas.map((replica) => [
          String(replica.replicaId),
          String(replica.pid),
          String(replica.respPort),
          String(replica.peerPort),
          roleOf(replica.views),
        ]),
      ),
    );
    writeOut(
      `\ntry:  redis-cli -p ${firstPort} info ipipe\n` +
        `      redis-benchmark -p ${firstPort} -t get,set -n 100000\n` +
        `stop: Ctrl-C, or ipipe cluster down --data-dir ${options.dataDir}`,
    );
  }
  const signal = await new Promise<NodeJS.Signals>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal('SIGINT'));
    process.once('SIGTERM', () => resolveSignal('SIGTERM'));
  });
  process.stderr.write(`${signal}: stopping the replicas\n`);
  await supervisor.stop();
  process.stderr.write('cluster stopped\n');
  return signal === 'SIGINT' ? 130 : 0;
}

/** `cluster down`: resolves with the exit code. */
export async function clusterDownCommand(options: { dataDir: string; json: boolean }): Promise<number> {
  const report = await clusterDown(options.dataDir);
  if (options.json) writeJson({ schemaVersion: 1, ...report });
  else {
    writeOut(
      report.stopped.length === 0
        ? `nothing was running from ${resolve(options.dataDir)} (stale state file removed)`
        : `stopped ${report.stopped.length} process(es): ${report.stopped.join(', ')}` +
            (report.killed.length > 0 ? ` (killed after the timeout: ${report.killed.join(', ')})` : ''),
    );
  }
  return 0;
}

/** `cluster status`: the state file, with each process's liveness. */
export function clusterStatusCommand(options: { dataDir: string; json: boolean }): number {
  if (
    !existsSync(join(options.dataDir, 'cluster-state.json')) &&
    existsSync(join(options.dataDir, 'actor-cluster-state.json'))
  ) {
    // An RTA or DT cluster (cluster-actors.ts) keeps another state file: status covers RKV only.
    throw new UsageError(
      `${resolve(options.dataDir)} holds an RTA or DT cluster; \`cluster status\` covers RKV clusters only: ` +
        '`cluster down --data-dir` stops it, and each of its nodes answers /stats on its admin port',
    );
  }
  const state = readClusterState(options.dataDir);
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const replicas = state.replicas.map((replica) => ({ ...replica, alive: alive(replica.pid) }));
  if (options.json) {
    writeJson({ ...state, supervisorAlive: alive(state.supervisorPid), replicas });
  } else {
    writeOut(
      `supervisor pid ${state.supervisorPid} (${alive(state.supervisorPid) ? 'running' : 'gone'}), ${state.shards} shard(s)`,
    );
    writeOut(
      table(
        ['replica', 'pid', 'RESP port', 'state'],
        replicas.map((replica) => [
          String(replica.replicaId),
          String(replica.pid),
          String(replica.respPort),
          replica.alive ? 'running' : 'gone',
        ]),
      ),
    );
    writeOut(`roles: redis-cli -p ${replicas[0]?.respPort ?? 0} info ipipe`);
  }
  return replicas.every((replica) => replica.alive) ? 0 : 1;
}

/** Default data directory of `cluster up <app>`. */
function defaultDataDir(app: 'rkv' | 'rta' | 'dt'): string {
  return DEFAULT_APP_CLUSTER_DIR[app];
}

/**
 * Adds `cluster up|down|status` to the program; `setExit` records the action's exit code.
 * `cluster up rkv` is this file's (src/apps/rkv/cluster); `cluster up rta|dt` hands over to
 * cluster-actors.ts (actors on live nodes joined by the live platform's cluster routing).
 */
/** The options each form of `cluster up` uses (besides --data-dir and --json); others are refused. */
const CLUSTER_UP_OPTIONS: Readonly<Record<'rkv' | 'rkv --actors' | 'rta' | 'dt', readonly string[]>> = {
  rkv: ['--replicas', '--shards', '--resp-port', '--election-timeout', '--respawn', '--seed'],
  'rkv --actors': [
    '--actors',
    '--replicas',
    '--shards',
    '--nic-memory',
    '--resp-port',
    '--base-port',
    '--nic-cores',
    '--election-timeout',
    '--respawn',
    '--seed',
  ],
  rta: ['--nodes', '--base-port', '--nic-cores', '--host-cores', '--packet-size', '--seed'],
  // Nothing in DT's start-up is drawn at random (the bank is loaded with fixed balances): no --seed.
  dt: ['--nodes', '--shards', '--accounts', '--base-port', '--nic-cores', '--host-cores'],
};
const ALL_CLUSTER_UP_OPTIONS = [...new Set(Object.values(CLUSTER_UP_OPTIONS).flat())];

export function addClusterCommands(program: Command, setExit: (code: number) => void): void {
  const cluster = program
    .command('cluster')
    .description('local multi-process clusters: rkv (replicated KV, Redis clients welcome), rta, dt');
  cluster
    .command('up')
    .description(
      'rkv: replica processes on loopback (Multi-Paxos per shard, LSM store, RESP front); ' +
        'rta|dt: one live node process per node. Runs until Ctrl-C',
    )
    .argument(
      '<app>',
      'the application to run: rkv, rta or dt',
      parseChoice('<app>', ['rkv', 'rta', 'dt'] as const),
    )
    .option(
      '--data-dir <dir>',
      `where its files live (default ${DEFAULT_CLUSTER_DATA_DIR}, .ipipe/rta-cluster, .ipipe/dt-cluster)`,
    )
    .option('--seed <n>', 'seed of every random choice (printed)', parseSeed)
    .option('--json', 'print the cluster table as one JSON document')
    .option(
      '--replicas <n>',
      'rkv: replica processes (a majority must be up to serve)',
      parseIntegerIn('--replicas', 1, 32),
      3,
    )
    .option(
      '--shards <n>',
      `rkv: consensus groups, keys placed by hash (default 1; at most ${MAX_RKV_ACTOR_SHARDS} with --actors, ` +
        'which needs --nic-memory of at least 64 × shards KiB); dt: participant shards',
      parseIntegerIn('--shards', 1, 64),
    )
    .option(
      '--resp-port <port>',
      'rkv: replica i serves RESP on port + i (0: any free ports)',
      parseIntegerIn('--resp-port', 0, 65_535),
      DEFAULT_CLUSTER_RESP_PORT,
    )
    .option(
      '--election-timeout <ms>',
      'rkv: a follower that hears no leader for this long (to twice it) starts an election; heartbeats every tenth',
      parseIntegerIn('--election-timeout', 20, 60_000),
      DEFAULT_CLUSTER_TIMING.electionTimeoutMinMs,
    )
    .option('--respawn', 'rkv: start a replica again when it exits unexpectedly')
    .option(
      '--actors',
      "rkv: run RKV's actors on live node processes (consensus and memtable on each node's NIC cores, SSTable reader and compaction on its host) behind one RESP front, instead of the process-per-replica store; --base-port, --nic-cores apply",
    )
    .option(
      '--nic-memory <KiB>',
      `rkv --actors: NIC memory each node gives the memtables; a shard's memtable flushes at NIC memory / (2 × shards), at most ${MAX_RKV_MEMTABLE_LIMIT_BYTES / 1024} KiB (default ${DEFAULT_RKV_NIC_MEMORY_BYTES / 1024})`,
      parseIntegerIn('--nic-memory', 64, 1_048_576),
    )
    .option('--nodes <n>', 'rta|dt: node processes', parseIntegerIn('--nodes', 1, 16), 3)
    .option(
      '--base-port <port>',
      'rta|dt, rkv --actors: node i serves UDP on port + i',
      parseIntegerIn('--base-port', 1, 65_535),
      9100,
    )
    .option(
      '--nic-cores <n>',
      'rta|dt, rkv --actors: NIC cores per node',
      parseIntegerIn('--nic-cores', 1, 64),
      1,
    )
    .option('--host-cores <n>', 'rta|dt: host cores per node', parseIntegerIn('--host-cores', 1, 64), 1)
    .option('--packet-size <bytes>', 'rta: tuple frame size', parseIntegerIn('--packet-size', 64, 9000), 256)
    .option('--accounts <n>', 'dt: bank accounts', parseIntegerIn('--accounts', 1, 10_000_000), 1000)
    .action(async (app, options, command) => {
      const dataDir = options.dataDir ?? defaultDataDir(app);
      const json = options.json === true;
      const seed = options.seed ?? freshSeed();
      if (options.nicMemory !== undefined && (app !== 'rkv' || options.actors !== true)) {
        throw new UsageError('--nic-memory sizes the memtables of RKV on actors: use it with rkv --actors');
      }
      const mode = app === 'rkv' && options.actors === true ? 'rkv --actors' : app;
      const uses = CLUSTER_UP_OPTIONS[mode];
      refuseFlags(
        givenFlags(command),
        ALL_CLUSTER_UP_OPTIONS.filter((flag) => !uses.includes(flag)),
        `cluster up ${mode}`,
        `it takes ${uses.join(', ')} (and --data-dir, --json)`,
      );
      if (app === 'rta') {
        setExit(
          await rtaClusterUpCommand({
            nodes: options.nodes,
            basePort: options.basePort,
            dataDir,
            nicCores: options.nicCores,
            hostCores: options.hostCores,
            seed,
            packetBytes: options.packetSize,
            json,
          }),
        );
        return;
      }
      if (app === 'dt') {
        setExit(
          await dtClusterUpCommand({
            nodes: options.nodes,
            shards: options.shards ?? Math.max(1, options.nodes - 1),
            accounts: options.accounts,
            basePort: options.basePort,
            dataDir,
            nicCores: options.nicCores,
            hostCores: options.hostCores,
            json,
          }),
        );
        return;
      }
      if (options.actors === true) {
        const shards = options.shards ?? 1;
        if (shards > MAX_RKV_ACTOR_SHARDS) {
          throw new UsageError(
            `--shards with --actors must be at most ${MAX_RKV_ACTOR_SHARDS}, got ${shards}`,
          );
        }
        setExit(
          await rkvActorClusterUpCommand({
            replicas: options.replicas,
            shards,
            nicMemoryBytes: (options.nicMemory ?? DEFAULT_RKV_NIC_MEMORY_BYTES / 1024) * 1024,
            dataDir,
            respPort: options.respPort,
            basePort: options.basePort,
            nicCores: options.nicCores,
            electionTimeoutMs: options.electionTimeout,
            seed,
            respawn: options.respawn === true,
            json,
          }),
        );
        return;
      }
      setExit(
        await clusterUpCommand({
          replicas: options.replicas,
          shards: options.shards ?? 1,
          dataDir,
          respPort: options.respPort,
          seed,
          respawn: options.respawn === true,
          electionTimeoutMs: options.electionTimeout,
          json,
        }),
      );
    });
  cluster
    .command('down')
    .description('stop the cluster running from a data directory (its supervisor and its processes)')
    .option(
      '--data-dir <dir>',
      `the data directory given to \`cluster up\` (default: ${DEFAULT_CLUSTER_DATA_DIR})`,
    )
    .option('--json', 'print one JSON document')
    .action(async (options) => {
      const json = options.json === true;
      // Without --data-dir: the first default directory that holds a running cluster.
      const candidates =
        options.dataDir !== undefined
          ? [options.dataDir]
          : [DEFAULT_CLUSTER_DATA_DIR, DEFAULT_APP_CLUSTER_DIR.rta, DEFAULT_APP_CLUSTER_DIR.dt];
      const actorDir = candidates.find((dir) => isActorCluster(dir));
      const rkvDir = candidates.find((dir) => existsSync(join(resolve(dir), 'cluster-state.json')));
      if (rkvDir === undefined && actorDir !== undefined) {
        setExit(actorClusterDownCommand(actorDir, json));
        return;
      }
      setExit(await clusterDownCommand({ dataDir: rkvDir ?? candidates[0]!, json }));
    });
  cluster
    .command('status')
    .description("an rkv cluster's processes and ports, from its state file (exit 1 if one is gone)")
    .option('--data-dir <dir>', 'the data directory given to `cluster up`', DEFAULT_CLUSTER_DATA_DIR)
    .option('--json', 'print one JSON document')
    .action((options) => {
      setExit(clusterStatusCommand({ dataDir: options.dataDir, json: options.json === true }));
    });
}
