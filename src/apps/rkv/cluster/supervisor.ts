/**
 * `ipipe cluster up rkv` as a library: starts one OS process per replica on loopback, waits for
 * each to report ready, records the cluster in a state file in the data directory, follows the
 * replicas' role reports (who leads each shard), and stops them; `clusterDown` stops a cluster some
 * other process started, found through that state file.
 *
 *   <data-dir>/
 *     cluster-shape.json     replicas and shards the directory was created with (checked on up)
 *     cluster-state.json     while running: supervisor pid, each replica's pid and ports
 *     replica-<i>/           one replica's files: boot-count, replica.log, shard-<s>/{paxos.log, lsm/}
 *
 * A replica process runs replica-main.ts: under tsx (a clone, no build) it is started as
 * `node --import tsx replica-main.ts`, from a build as `node replica-main.js`. It exits when the
 * supervisor does (its IPC channel closes), so the supervisor is the one process to stop.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ClusterDataDirInUseError,
  ClusterNotRunningError,
  ClusterOptionsError,
  replicaStartError,
} from './errors.ts';
import {
  type ClusterReplicaConfig,
  type ClusterTiming,
  MAX_REPLICAS,
  type ShardView,
} from './replica-host.ts';
import type { ReplicaReport } from './replica-main.ts';

/** Options of `ClusterSupervisor.start`. */
export interface ClusterUpOptions {
  readonly replicas: number;
  readonly shards: number;
  readonly dataDir: string;
  /** Replica i serves RESP on `respPort + i`; 0 picks free ports. */
  readonly respPort: number;
  /** Address every replica binds (default 127.0.0.1). */
  readonly host?: string;
  /** Seed of the replicas' election-timeout draws. */
  readonly seed: number;
  readonly timing?: ClusterTiming;
  readonly snapshotEveryEntries?: number;
  readonly requestTimeoutMs?: number;
  /** How long a replica may take to report ready (default 60 s: a cold tsx start is slow). */
  readonly readyTimeoutMs?: number;
  /** Start a replica again, after `respawnDelayMs`, when it exits unexpectedly (default false). */
  readonly respawn?: boolean;
  readonly respawnDelayMs?: number;
  /** Progress and role changes, for the CLI. */
  readonly onEvent?: (event: ClusterEvent) => void;
}

/** What the supervisor reports while it runs. */
export type ClusterEvent =
  | { readonly type: 'ready'; readonly replicaId: number; readonly pid: number; readonly respPort: number }
  | { readonly type: 'roles'; readonly replicaId: number; readonly views: readonly ShardView[] }
  | {
      readonly type: 'exited';
      readonly replicaId: number;
      readonly pid: number;
      readonly code: number | null;
      readonly signal: string | null;
      readonly expected: boolean;
    };

/** One replica as the supervisor sees it. */
export interface ReplicaEntry {
  readonly replicaId: number;
  readonly pid: number;
  readonly respPort: number;
  readonly peerPort: number;
  readonly alive: boolean;
  /** The last role report (empty before the first). */
  readonly views: readonly ShardView[];
  readonly logPath: string;
}

/** The running cluster's state file (`cluster-state.json`). */
export interface ClusterStateFile {
  readonly schemaVersion: 1;
  readonly supervisorPid: number;
  readonly host: string;
  readonly shards: number;
  readonly startedAt: string;
  readonly replicas: readonly { replicaId: number; pid: number; respPort: number; peerPort: number }[];
}

interface ShapeFile {
  readonly schemaVersion: 1;
  readonly replicas: number;
  readonly shards: number;
}

interface Child {
  readonly replicaId: number;
  readonly respPort: number;
  readonly peerPort: number;
  readonly logPath: string;
  process: ChildProcess | null;
  pid: number;
  alive: boolean;
  expectExit: boolean;
  views: readonly ShardView[];
  exited: Promise<void>;
}

const STATE_FILE = 'cluster-state.json';
/** Data directories held by supervisors of this process (the state file names our own pid). */
const claimedHere = new Set<string>();
const SHAPE_FILE = 'cluster-shape.json';
/** The shape file of `cluster up rkv --actors` (cluster-rkv-actors.ts): a directory holds one form. */
export const ACTOR_SHAPE_FILE = 'actor-cluster-shape.json';
/** This form's shape file, for the actor form's own check. */
export const PROCESS_SHAPE_FILE: string = SHAPE_FILE;

function replicaEntryPath(): { entry: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const typescript = here.endsWith('.ts');
  const entry = join(dirname(here), typescript ? 'replica-main.ts' : 'replica-main.js');
  return { entry, execArgv: typescript ? ['--import', import.meta.resolve('tsx')] : [] };
}

/** Whether a process with this pid runs (one owned by another user counts). */
export function processAlive(pid: number): boolean {
  if (!(Number.isInteger(pid) && pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A free TCP port on `host` (bound and released; a tiny race, fine on loopback). */
async function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolvePort(port));
    });
  });
}

/** Reads a cluster's state file; `ClusterNotRunningError` when there is none or it is unreadable. */
export function readClusterState(dataDir: string): ClusterStateFile {
  const path = join(resolve(dataDir), STATE_FILE);
  if (!existsSync(path)) throw new ClusterNotRunningError(resolve(dataDir), `no ${STATE_FILE}`);
  try {
    const state = JSON.parse(readFileSync(path, 'utf8')) as ClusterStateFile;
    if (state.schemaVersion !== 1 || !Array.isArray(state.replicas)) throw new Error('unexpected content');
    return state;
  } catch (error) {
    throw new ClusterNotRunningError(
      resolve(dataDir),
      `${STATE_FILE} is unreadable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function validate(options: ClusterUpOptions): void {
  if (!(Number.isInteger(options.replicas) && options.replicas >= 1 && options.replicas <= MAX_REPLICAS)) {
    throw new ClusterOptionsError(
      `--replicas must be an integer in [1, ${MAX_REPLICAS}], got ${options.replicas}`,
    );
  }
  if (!(Number.isInteger(options.shards) && options.shards >= 1 && options.shards <= 64)) {
    throw new ClusterOptionsError(`--shards must be an integer in [1, 64], got ${options.shards}`);
  }
  if (
    !(
      Number.isInteger(options.respPort) &&
      options.respPort >= 0 &&
      options.respPort + options.replicas - 1 <= 65_535
    )
  ) {
    throw new ClusterOptionsError(
      `--resp-port must leave room for ${options.replicas} consecutive ports below 65536 (or be 0), got ${options.respPort}`,
    );
  }
}

/** Checks (or records) the directory's shape, and that no live supervisor holds it. */
function claimDataDir(dataDir: string, options: ClusterUpOptions): void {
  mkdirSync(dataDir, { recursive: true });
  if (claimedHere.has(dataDir))
    throw new ClusterDataDirInUseError(dataDir, process.pid, 'a running cluster supervisor');
  const statePath = join(dataDir, STATE_FILE);
  if (existsSync(statePath)) {
    let holder: number | undefined;
    try {
      holder = (JSON.parse(readFileSync(statePath, 'utf8')) as ClusterStateFile).supervisorPid;
    } catch {
      holder = undefined;
    }
    if (holder !== undefined && holder !== process.pid && processAlive(holder)) {
      throw new ClusterDataDirInUseError(dataDir, holder, 'a running cluster supervisor');
    }
  }
  if (existsSync(join(dataDir, ACTOR_SHAPE_FILE))) {
    throw new ClusterOptionsError(
      `${dataDir} holds RKV's actor cluster (cluster up rkv --actors); its files are not this cluster's: ` +
        'start it with --actors, or use another --data-dir',
    );
  }
  const shapePath = join(dataDir, SHAPE_FILE);
  if (existsSync(shapePath)) {
    const shape = JSON.parse(readFileSync(shapePath, 'utf8')) as ShapeFile;
    if (shape.replicas !== options.replicas || shape.shards !== options.shards) {
      throw new ClusterOptionsError(
        `${dataDir} was created with --replicas ${shape.replicas} --shards ${shape.shards}; start it with the ` +
          'same values (keys are placed by shard count) or use a fresh --data-dir',
      );
    }
  } else {
    const shape: ShapeFile = { schemaVersion: 1, replicas: options.replicas, shards: options.shards };
    writeFileSync(shapePath, `${JSON.stringify(shape, null, 2)}\n`);
  }
  claimedHere.add(dataDir);
}

/** A running cluster of replica processes. */
export class ClusterSupervisor {
  readonly dataDir: string;
  readonly host: string;
  readonly options: ClusterUpOptions;
  readonly #children: Child[];
  #stopping: Promise<void> | null = null;
  readonly #roleWaiters = new Set<() => void>();

  private constructor(options: ClusterUpOptions, dataDir: string, children: Child[]) {
    this.options = options;
    this.dataDir = dataDir;
    this.host = options.host ?? '127.0.0.1';
    this.#children = children;
  }

  /** Starts every replica and resolves once all report ready (or rejects, stopping the rest). */
  static async start(options: ClusterUpOptions): Promise<ClusterSupervisor> {
    validate(options);
    const dataDir = resolve(options.dataDir);
    claimDataDir(dataDir, options);
    const host = options.host ?? '127.0.0.1';
    const children: Child[] = [];
    try {
      for (let replicaId = 0; replicaId < options.replicas; replicaId++) {
        const directory = join(dataDir, `replica-${replicaId}`);
        mkdirSync(directory, { recursive: true });
        children.push({
          replicaId,
          respPort: options.respPort === 0 ? await freePort(host) : options.respPort + replicaId,
          peerPort: await freePort(host),
          logPath: join(directory, 'replica.log'),
          process: null,
          pid: 0,
          alive: false,
          expectExit: false,
          views: [],
          exited: Promise.resolve(),
        });
      }
    } catch (error) {
      claimedHere.delete(dataDir);
      throw error;
    }
    const supervisor = new ClusterSupervisor(options, dataDir, children);
    try {
      await Promise.all(children.map((child) => supervisor.#spawn(child)));
    } catch (error) {
      await supervisor.stop();
      throw error;
    }
    supervisor.#writeState();
    return supervisor;
  }

  /** Every replica: pid, ports, liveness and last role report. */
  replicas(): ReplicaEntry[] {
    return this.#children.map((child) => ({
      replicaId: child.replicaId,
      pid: child.pid,
      respPort: child.respPort,
      peerPort: child.peerPort,
      alive: child.alive,
      views: child.views,
      logPath: child.logPath,
    }));
  }

  /** The live replica that reports leading `shard`, or null. */
  leaderOf(shard = 0): number | null {
    for (const child of this.#children) {
      if (child.alive && child.views.some((view) => view.shard === shard && view.role === 'leader')) {
        return child.replicaId;
      }
    }
    return null;
  }

  /** Resolves with the leader of `shard` once a live replica reports leading it. */
  async waitForLeader(shard = 0, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = this.leaderOf(shard);
      if (leader !== null) return leader;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no replica reported leading shard ${shard} within ${timeoutMs} ms`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(done, Math.min(left, 250));
        function done(): void {
          clearTimeout(timer);
          wake();
        }
        this.#roleWaiters.add(done);
      });
    }
  }

  /** Sends `signal` to a replica (SIGKILL: a crash) and waits for it to exit. */
  async kill(replicaId: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#child(replicaId);
    if (!child.alive || child.process === null) return;
    child.expectExit = true;
    child.process.kill(signal);
    await child.exited;
  }

  /** Starts a stopped or killed replica again on the same directory and ports. */
  async restart(replicaId: number): Promise<void> {
    const child = this.#child(replicaId);
    if (child.alive) throw new ClusterOptionsError(`replica ${replicaId} is running; kill or stop it first`);
    await this.#spawn(child);
    this.#writeState();
  }

  /** Stops every replica (SIGTERM, then SIGKILL after `timeoutMs`) and removes the state file. */
  stop(timeoutMs = 15_000): Promise<void> {
    if (this.#stopping !== null) return this.#stopping;
    this.#stopping = (async () => {
      await Promise.all(
        this.#children.map(async (child) => {
          if (!child.alive || child.process === null) return;
          child.expectExit = true;
          const processHandle = child.process;
          processHandle.kill('SIGTERM');
          const timer = setTimeout(() => processHandle.kill('SIGKILL'), timeoutMs);
          await child.exited;
          clearTimeout(timer);
        }),
      );
      claimedHere.delete(this.dataDir);
      const statePath = join(this.dataDir, STATE_FILE);
      try {
        const state = JSON.parse(readFileSync(statePath, 'utf8')) as ClusterStateFile;
        if (state.supervisorPid === process.pid) rmSync(statePath, { force: true });
      } catch {
        // No state file (a failed start): nothing to remove.
      }
    })();
    return this.#stopping;
  }

  #child(replicaId: number): Child {
    const child = this.#children[replicaId];
    if (child === undefined)
      throw new ClusterOptionsError(`no replica ${replicaId} (the cluster has ${this.#children.length})`);
    return child;
  }

  #config(child: Child): ClusterReplicaConfig {
    const options = this.options;
    return {
      replicaId: child.replicaId,
      shardCount: options.shards,
      directory: join(this.dataDir, `replica-${child.replicaId}`),
      host: this.host,
      replicas: this.#children.map(({ peerPort, respPort }) => ({ peerPort, respPort })),
      seed: options.seed,
      ...(options.timing === undefined ? {} : { timing: options.timing }),
      ...(options.snapshotEveryEntries === undefined
        ? {}
        : { snapshotEveryEntries: options.snapshotEveryEntries }),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    };
  }

  /** Starts one replica process; resolves when it reports ready. */
  #spawn(child: Child): Promise<void> {
    const { entry, execArgv } = replicaEntryPath();
    const logFd = openSync(child.logPath, 'a');
    let processHandle: ChildProcess;
    try {
      processHandle = spawn(process.execPath, [...execArgv, entry, JSON.stringify(this.#config(child))], {
        stdio: ['ignore', logFd, logFd, 'ipc'],
        env: process.env,
      });
    } finally {
      closeSync(logFd);
    }
    child.process = processHandle;
    child.pid = processHandle.pid ?? 0;
    child.alive = true;
    child.expectExit = false;
    child.views = [];
    let exitedResolve: () => void = () => {};
    child.exited = new Promise<void>((done) => {
      exitedResolve = done;
    });
    return new Promise<void>((ready, fail) => {
      let started = false;
      const timeoutMs = this.options.readyTimeoutMs ?? 60_000;
      const timer = setTimeout(() => {
        if (started) return;
        fail(replicaStartError(child.replicaId, `no ready report within ${timeoutMs} ms`, child.logPath));
        processHandle.kill('SIGKILL');
      }, timeoutMs);
      processHandle.on('message', (raw) => {
        const message = raw as ReplicaReport;
        if (message.type === 'ready') {
          started = true;
          clearTimeout(timer);
          this.options.onEvent?.({
            type: 'ready',
            replicaId: child.replicaId,
            pid: message.pid,
            respPort: message.respPort,
          });
          ready();
        } else if (message.type === 'roles') {
          child.views = message.views;
          this.options.onEvent?.({ type: 'roles', replicaId: child.replicaId, views: message.views });
          for (const wake of [...this.#roleWaiters]) {
            this.#roleWaiters.delete(wake);
            wake();
          }
        } else if (message.type === 'failed' && !started) {
          clearTimeout(timer);
          started = true;
          fail(
            message.code === 'IPIPE_ERR_CLUSTER_DATA_DIR_IN_USE'
              ? replicaStartError(child.replicaId, message.message, child.logPath)
              : replicaStartError(child.replicaId, `${message.message} [${message.code}]`, child.logPath),
          );
        }
      });
      processHandle.on('exit', (code, signal) => {
        clearTimeout(timer);
        child.alive = false;
        child.views = [];
        this.options.onEvent?.({
          type: 'exited',
          replicaId: child.replicaId,
          pid: child.pid,
          code,
          signal,
          expected: child.expectExit,
        });
        exitedResolve();
        if (!started) {
          started = true;
          fail(
            replicaStartError(
              child.replicaId,
              `the process exited (code ${code}, signal ${signal})`,
              child.logPath,
            ),
          );
          return;
        }
        if (!child.expectExit && this.options.respawn === true && this.#stopping === null) {
          setTimeout(() => {
            if (this.#stopping === null && !child.alive) {
              this.restart(child.replicaId).catch(() => {});
            }
          }, this.options.respawnDelayMs ?? 1000);
        }
      });
    });
  }

  #writeState(): void {
    const state: ClusterStateFile = {
      schemaVersion: 1,
      supervisorPid: process.pid,
      host: this.host,
      shards: this.options.shards,
      startedAt: new Date().toISOString(),
      replicas: this.#children.map(({ replicaId, pid, respPort, peerPort }) => ({
        replicaId,
        pid,
        respPort,
        peerPort,
      })),
    };
    writeFileSync(join(this.dataDir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  }
}

/** What `clusterDown` did. */
export interface ClusterDownReport {
  readonly supervisorPid: number;
  /** Processes that were running and are gone now. */
  readonly stopped: readonly number[];
  /** Processes that ignored SIGTERM and were killed. */
  readonly killed: readonly number[];
}

/**
 * Stops the cluster recorded in `dataDir`'s state file: SIGTERM to its supervisor and replicas,
 * SIGKILL to whatever still runs after `timeoutMs`; removes the state file.
 */
export async function clusterDown(dataDir: string, timeoutMs = 15_000): Promise<ClusterDownReport> {
  const state = readClusterState(dataDir);
  const pids = [state.supervisorPid, ...state.replicas.map((replica) => replica.pid)].filter(
    (pid) => pid !== process.pid && processAlive(pid),
  );
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Gone meanwhile.
    }
  }
  const deadline = Date.now() + timeoutMs;
  while (pids.some(processAlive) && Date.now() < deadline) {
    await new Promise((wake) => setTimeout(wake, 50));
  }
  const killed: number[] = [];
  for (const pid of pids) {
    if (!processAlive(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  rmSync(join(resolve(dataDir), STATE_FILE), { force: true });
  return { supervisorPid: state.supervisorPid, stopped: pids, killed };
}
