/**
 * `ipipe cluster up rta|dt` and `ipipe load --app rta|dt`: an application's actors on several live
 * node processes on this machine (platform/live/cluster), configured over the wire, then driven:
 *   rta  the seeded tweet stream; the windows are checked against the reference computation;
 *   dt   bank transfers from closed-loop clients; every balance is read back and summed.
 *
 * `cluster up` writes, in its data directory, the cluster file every node reads and a state file
 * (pids, workload options) that `load` and `cluster down` read.
 */

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DtClusterConnection, dtClusterSpec, readAll } from '../../apps/dt/live-cluster.ts';
import { accountKey, bankWorkload, decodeBalance } from '../../apps/dt/workload.ts';
import { driveRta, RtaClusterClient, rtaClusterSpec } from '../../apps/rta/live-cluster.ts';
import { describeReadResult, readTupleFile } from '../../apps/rta/reader.ts';
import type { RtaTuple } from '../../apps/rta/tuple.ts';
import { rtaWorkload } from '../../apps/rta/workload.ts';
import { UsageError } from '../../errors.ts';
import type { ClusterSpec } from '../../platform/live/cluster/cluster-file.ts';
import { LocalCluster } from '../../platform/live/cluster/launch.ts';
import { Random } from '../../random.ts';
import { paint, table, writeJson, writeOut } from '../output.ts';
import { parseDurationMs, parseLoadSeed, parseOutstanding } from './load.ts';
import { parseRkvLoadOptions, rkvLoadCommand } from './load-rkv.ts';

export const DEFAULT_APP_CLUSTER_DIR = {
  rkv: '.ipipe/rkv-cluster',
  rta: '.ipipe/rta-cluster',
  dt: '.ipipe/dt-cluster',
} as const;
const STATE_FILE = 'actor-cluster-state.json';
const CLUSTER_FILE = 'cluster.json';

/** What `cluster up rta` leaves for `load` and `cluster down`. */
interface RtaClusterState {
  readonly schemaVersion: 1;
  readonly app: 'rta';
  readonly supervisorPid: number;
  readonly pids: readonly number[];
  readonly seed: number;
  readonly packetBytes: number;
  readonly counters: number;
  readonly rankers: number;
  readonly loaded: boolean;
}

/** What `cluster up dt` leaves for `load` and `cluster down`. */
interface DtClusterState {
  readonly schemaVersion: 1;
  readonly app: 'dt';
  readonly supervisorPid: number;
  readonly pids: readonly number[];
  readonly accounts: number;
  readonly initialBalance: number;
  /** Client ids already used (a later load takes fresh ones: the coordinator keys retries by client). */
  readonly clientsUsed: number;
}

type ActorClusterState = RtaClusterState | DtClusterState;

/** True when `dataDir` holds a cluster started by `cluster up rta|dt`. */
export function isActorCluster(dataDir: string): boolean {
  return existsSync(join(resolve(dataDir), STATE_FILE));
}

export interface RtaClusterUpOptions {
  readonly nodes: number;
  readonly basePort: number;
  readonly dataDir: string;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly seed: number;
  readonly packetBytes: number;
  readonly json: boolean;
}

function stateOf<A extends ActorClusterState['app']>(
  dataDir: string,
  app: A | undefined,
): { state: Extract<ActorClusterState, { app: A }>; spec: ClusterSpec } {
  const statePath = join(dataDir, STATE_FILE);
  const name = app ?? 'rta|dt';
  if (!existsSync(statePath)) {
    throw new UsageError(
      `no ${name} cluster in ${dataDir}: start one with \`ipipe cluster up ${name} --data-dir ${dataDir}\``,
    );
  }
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as ActorClusterState;
  if (app !== undefined && state.app !== app) {
    throw new UsageError(`${dataDir} holds a ${state.app} cluster, not ${app}: use --app ${state.app}`);
  }
  const spec = JSON.parse(readFileSync(join(dataDir, CLUSTER_FILE), 'utf8')) as ClusterSpec;
  return { state: state as Extract<ActorClusterState, { app: A }>, spec };
}

/** `count` nodes on loopback, node i on `basePort + i`, each with the same cores. */
function loopbackNodes(options: {
  readonly nodes: number;
  readonly basePort: number;
  readonly nicCores: number;
  readonly hostCores: number;
}): { id: number; address: string; port: number; nicCores: number; hostCores: number }[] {
  return Array.from({ length: options.nodes }, (_, id) => ({
    id,
    address: '127.0.0.1',
    port: options.basePort + id,
    nicCores: options.nicCores,
    hostCores: options.hostCores,
  }));
}

/** Resolves with the exit code once SIGINT/SIGTERM stopped every node. */
function untilSignalStop(cluster: LocalCluster, dataDir: string, app: string): Promise<number> {
  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`ipipe: ${signal}: stopping the ${app} nodes…\n`);
      cluster.stopAll().then(() => {
        rmSync(join(dataDir, STATE_FILE), { force: true });
        resolveExit(signal === 'SIGINT' ? 130 : 0);
      });
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
}

function workloadOf(state: Pick<RtaClusterState, 'seed' | 'packetBytes' | 'counters' | 'rankers'>) {
  return rtaWorkload({
    config: { counters: state.counters, rankers: state.rankers },
    packetBytes: state.packetBytes,
    seed: state.seed,
  });
}

/** Starts the cluster, configures the pipeline, prints where it serves, runs until a signal. */
export async function rtaClusterUpCommand(options: RtaClusterUpOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const counters = Math.max(1, options.nodes - 1) * 2;
  const rankers = Math.max(1, options.nodes - 1);
  const workload = workloadOf({ seed: options.seed, packetBytes: options.packetBytes, counters, rankers });
  const spec = rtaClusterSpec(workload, {
    nodes: loopbackNodes(options),
  });
  const file = join(dataDir, CLUSTER_FILE);
  writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
  process.stderr.write(`ipipe: starting ${options.nodes} RTA node processes (seed ${options.seed})…\n`);
  const cluster = await LocalCluster.launch({ file, spec });
  const client = await RtaClusterClient.connect(spec, workload);
  try {
    await client.configure();
  } finally {
    await client.close();
  }
  const state: RtaClusterState = {
    schemaVersion: 1,
    app: 'rta',
    supervisorPid: process.pid,
    pids: cluster.nodes.map((n) => n.pid),
    seed: options.seed,
    packetBytes: options.packetBytes,
    counters,
    rankers,
    loaded: false,
  };
  writeFileSync(join(dataDir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  const rows = cluster.nodes.map((node) => ({
    node: node.nodeId,
    pid: node.pid,
    udp: `${node.banner.udp.address}:${node.banner.udp.port}`,
    actors: node.banner.actors.map((a) => a.name),
  }));
  if (options.json) writeJson({ schemaVersion: 1, app: 'rta', dataDir, seed: options.seed, nodes: rows });
  else {
    writeOut(paint('bold', `RTA cluster: ${options.nodes} node processes, pipeline configured`));
    writeOut(
      table(
        ['node', 'pid', 'udp', 'actors'],
        rows.map((r) => [r.node, r.pid, r.udp, r.actors.join(' ')]),
      ),
    );
    writeOut(
      `drive it: ipipe load --app rta --data-dir ${options.dataDir}   · stop: Ctrl-C or ipipe cluster down --data-dir ${options.dataDir}`,
    );
  }
  return untilSignalStop(cluster, dataDir, 'RTA');
}

/** `ipipe cluster down` for an RTA or DT cluster: SIGTERM to the supervisor (it stops its nodes). */
export function actorClusterDownCommand(dataDir: string, json: boolean): number {
  const { state } = stateOf(resolve(dataDir), undefined);
  let signalled = false;
  try {
    process.kill(state.supervisorPid, 'SIGTERM');
    signalled = true;
  } catch {
    // The supervisor is gone: stop the nodes it left behind.
    for (const pid of state.pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    rmSync(join(resolve(dataDir), STATE_FILE), { force: true });
  }
  if (json) writeJson({ schemaVersion: 1, app: state.app, stopped: state.pids, supervisor: signalled });
  else
    writeOut(
      `stopping ${state.app} nodes ${state.pids.join(', ')}${signalled ? ' (through their supervisor)' : ''}`,
    );
  return 0;
}

export interface RtaLoadOptions {
  readonly dataDir: string;
  /** A tuple file to stream instead of the generator's tuples (NDJSON or CSV). */
  readonly input?: string;
  /** Event time of the stream to send, in ms of tweet time. */
  readonly streamMs: number;
  readonly inFlight: number;
  readonly json: boolean;
}

/** Streams the seeded tuples through the running cluster and checks every window. */
export async function rtaLoadCommand(options: RtaLoadOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  const { state, spec } = stateOf(dataDir, 'rta');
  if (state.loaded) {
    throw new UsageError(
      'this RTA cluster was already loaded: its windows are closed through the end of that stream. ' +
        'Restart it (ipipe cluster down, then cluster up rta) to load it again',
    );
  }
  const workload = workloadOf(state);
  let tuples: RtaTuple[];
  if (options.input === undefined) tuples = workload.generator().takeUntil(options.streamMs);
  else {
    const read = await readTupleFile(options.input);
    process.stderr.write(`ipipe: ${describeReadResult(options.input, read)}\n`);
    if (read.tuples.length === 0)
      throw new UsageError(`${options.input} holds no valid tuple: nothing to stream`);
    tuples = read.tuples;
  }
  const client = await RtaClusterClient.connect(spec, workload);
  let result: Awaited<ReturnType<typeof driveRta>>;
  try {
    result = await driveRta(client, workload, tuples, options.inFlight);
  } finally {
    await client.close();
  }
  writeFileSync(join(dataDir, STATE_FILE), `${JSON.stringify({ ...state, loaded: true }, null, 2)}\n`);
  const equal = result.mismatches.length === 0;
  const { latenciesUs: _latencies, ...summary } = result;
  if (options.json) {
    writeJson({
      schemaVersion: 1,
      app: 'rta',
      seed: state.seed,
      packetBytes: state.packetBytes,
      ...summary,
      equalsReference: equal,
    });
  } else {
    writeOut(
      table(
        ['requests', 'tuples', 'seconds', 'req/s', 'tuples/s', 'avg µs', 'p99 µs', 'windows', 'reference'],
        [
          [
            result.requests,
            result.tuples,
            Number(result.seconds.toFixed(2)),
            Math.round(result.requestsPerSec),
            Math.round(result.tuplesPerSec),
            Math.round(result.latencyUs.avg),
            Math.round(result.latencyUs.p99),
            result.windows,
            equal ? 'equal' : `${result.mismatches.length} differences`,
          ],
        ],
      ),
    );
    for (const line of result.mismatches.slice(0, 10)) writeOut(`  ${line}`);
  }
  return equal ? 0 : 1;
}

export interface DtClusterUpOptions {
  readonly nodes: number;
  readonly shards: number;
  readonly accounts: number;
  readonly basePort: number;
  readonly dataDir: string;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly json: boolean;
}

/**
 * Starts a DT cluster (coordinator + logger on node 0, participants on the others), loads the bank
 * accounts and runs until a signal. The participants keep their tables in DMOs only, so every
 * `cluster up dt` starts a fresh bank and a fresh coordinator log.
 */
export async function dtClusterUpCommand(options: DtClusterUpOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const spec = dtClusterSpec({
    shards: options.shards,
    nodes: loopbackNodes(options),
  });
  const file = join(dataDir, CLUSTER_FILE);
  writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
  const logPath = join(dataDir, 'coordinator.log');
  rmSync(logPath, { force: true });
  const bank = bankWorkload({ accounts: options.accounts, initialBalance: 1000 });
  process.stderr.write(`ipipe: starting ${options.nodes} DT node processes…\n`);
  const cluster = await LocalCluster.launch({ file, spec });
  const connection = await DtClusterConnection.connect(spec);
  const keys = Array.from({ length: options.accounts }, (_, index) => accountKey(index));
  let loadedTotal = 0;
  try {
    await connection.setup({ logPath, nonce: 1 }, bank.initialData());
    // Read every account back before saying the bank is open: the loads travel as datagrams.
    const { values } = await readAll(connection, keys, 1);
    for (const { value } of values.values()) loadedTotal += decodeBalance(value);
  } finally {
    await connection.close();
  }
  if (loadedTotal !== bank.totalBalance) {
    await cluster.stopAll();
    process.stderr.write(
      `ipipe: the participants hold ${loadedTotal} of the ${bank.totalBalance} loaded; stopped the cluster\n`,
    );
    return 1;
  }
  const state: DtClusterState = {
    schemaVersion: 1,
    app: 'dt',
    supervisorPid: process.pid,
    pids: cluster.nodes.map((n) => n.pid),
    accounts: options.accounts,
    initialBalance: 1000,
    clientsUsed: 1,
  };
  writeFileSync(join(dataDir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  const rows = cluster.nodes.map((node) => ({
    node: node.nodeId,
    pid: node.pid,
    udp: `${node.banner.udp.address}:${node.banner.udp.port}`,
    actors: node.banner.actors.map((a) => `${a.name}(${a.domain})`),
  }));
  if (options.json) writeJson({ schemaVersion: 1, app: 'dt', dataDir, logPath, nodes: rows });
  else {
    writeOut(
      paint('bold', `DT cluster: ${options.nodes} node processes, ${options.accounts} bank accounts loaded`),
    );
    writeOut(
      table(
        ['node', 'pid', 'udp', 'actors'],
        rows.map((r) => [r.node, r.pid, r.udp, r.actors.join(' ')]),
      ),
    );
    writeOut(
      `bank total ${loadedTotal} across ${options.accounts} accounts, read back · coordinator log: ${logPath}`,
    );
    writeOut(
      `drive it: ipipe load --app dt --data-dir ${options.dataDir}   · stop: Ctrl-C or ipipe cluster down --data-dir ${options.dataDir}`,
    );
  }
  return untilSignalStop(cluster, dataDir, 'DT');
}

export interface DtLoadOptions {
  readonly dataDir: string;
  readonly clients: number;
  readonly durationMs: number;
  readonly seed: number;
  readonly json: boolean;
}

/** Bank transfers from closed-loop clients for a while; then every balance is read back and summed. */
export async function dtLoadCommand(options: DtLoadOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  const { state, spec } = stateOf(dataDir, 'dt');
  const bank = bankWorkload({ accounts: state.accounts, initialBalance: state.initialBalance });
  const connection = await DtClusterConnection.connect(spec);
  const random = new Random(options.seed, 'dt-load');
  const firstClient = state.clientsUsed + 1;
  const clients = Array.from({ length: options.clients }, (_, i) => connection.client(firstClient + i));
  writeFileSync(
    join(dataDir, STATE_FILE),
    `${JSON.stringify({ ...state, clientsUsed: state.clientsUsed + options.clients + 1 }, null, 2)}\n`,
  );
  let committed = 0;
  let aborted = 0;
  let invalid = 0;
  const latenciesUs: number[] = [];
  const endAt = performance.now() + options.durationMs;
  const started = performance.now();
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < endAt) {
          const plan = bank.next(random);
          const begun = performance.now();
          const txn = client.begin();
          const values: (Uint8Array | undefined)[] = [];
          for (const key of plan.reads) values.push(await txn.read(key));
          const writes = plan.compute(values);
          plan.writeKeys.forEach((key, i) => {
            txn.write(key, writes[i] as Uint8Array);
          });
          const outcome = await txn.commit();
          latenciesUs.push((performance.now() - begun) * 1_000);
          if (outcome.outcome === 'committed') committed++;
          else if (outcome.outcome === 'aborted') aborted++;
          else invalid++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1_000;
    const keys = Array.from({ length: state.accounts }, (_, index) => accountKey(index));
    const { values, locked } = await readAll(connection, keys, firstClient + options.clients);
    let total = 0;
    for (const { value } of values.values()) total += decodeBalance(value);
    latenciesUs.sort((a, b) => a - b);
    const pick = (q: number) =>
      latenciesUs[Math.min(latenciesUs.length - 1, Math.floor(q * latenciesUs.length))] ?? 0;
    const avg = latenciesUs.reduce((a, b) => a + b, 0) / Math.max(1, latenciesUs.length);
    const result = {
      schemaVersion: 1,
      app: 'dt',
      seed: options.seed,
      clients: options.clients,
      seconds,
      committed,
      aborted,
      invalid,
      commitsPerSec: committed / seconds,
      latencyUs: { avg, p50: pick(0.5), p99: pick(0.99) },
      totalBalance: total,
      expectedBalance: bank.totalBalance,
      lockedAccounts: locked,
      invariantHolds: total === bank.totalBalance,
    };
    if (options.json) writeJson(result);
    else {
      writeOut(
        table(
          [
            'clients',
            'seconds',
            'committed',
            'aborted',
            'commits/s',
            'avg µs',
            'p99 µs',
            'balance',
            'invariant',
          ],
          [
            [
              options.clients,
              Number(seconds.toFixed(2)),
              committed,
              aborted,
              Math.round(result.commitsPerSec),
              Math.round(avg),
              Math.round(result.latencyUs.p99),
              `${total}/${bank.totalBalance}`,
              result.invariantHolds ? 'holds' : 'BROKEN',
            ],
          ],
        ),
      );
    }
    return result.invariantHolds ? 0 : 1;
  } finally {
    for (const client of clients) client.close();
    await connection.close();
  }
}

/** `ipipe load --app rkv|rta|dt [--data-dir D] [--duration T] [--closed N] [--seed S] [--json]` (rkv: more, load-rkv.ts). */
export async function actorLoadCommand(
  raw: {
    readonly app?: string;
    readonly dataDir?: string;
    readonly duration?: string;
    readonly closed?: string;
    readonly seed?: string;
    readonly json?: boolean;
    readonly target?: string;
    readonly rate?: string;
    readonly input?: string;
    readonly keys?: string;
    readonly zipf?: string;
    readonly gets?: string;
    readonly dels?: string;
    readonly size?: string;
    readonly warmup?: string;
    readonly timeout?: string;
  },
  freshSeed: () => number,
): Promise<number> {
  const app = raw.app;
  if (app !== 'rkv' && app !== 'rta' && app !== 'dt') {
    throw new UsageError(`--app must be rkv, rta or dt, got "${app}"`);
  }
  if (raw.target !== undefined || raw.rate !== undefined) {
    throw new UsageError('--app drives the cluster in its data directory: leave out --target and --rate');
  }
  if (app === 'rkv') {
    return rkvLoadCommand(parseRkvLoadOptions(raw, raw.dataDir ?? DEFAULT_APP_CLUSTER_DIR.rkv, freshSeed));
  }
  for (const [flag, value] of [
    ['--keys', raw.keys],
    ['--zipf', raw.zipf],
    ['--gets', raw.gets],
    ['--dels', raw.dels],
    ['--size', raw.size],
    ['--warmup', raw.warmup],
    ['--timeout', raw.timeout],
  ] as const) {
    if (value !== undefined) throw new UsageError(`${flag} is for --app rkv; ${app} runs its own workload`);
  }
  const dataDir = raw.dataDir ?? DEFAULT_APP_CLUSTER_DIR[app];
  const closed = raw.closed === undefined ? undefined : parseOutstanding(raw.closed);
  const seed = raw.seed === undefined ? freshSeed() : parseLoadSeed(raw.seed);
  const json = raw.json === true;
  if (app === 'rta') {
    const streamMs = raw.duration === undefined ? 5_000 : parseDurationMs('--duration')(raw.duration);
    return rtaLoadCommand({
      dataDir,
      streamMs,
      inFlight: closed ?? 8,
      json,
      ...(raw.input === undefined ? {} : { input: raw.input }),
    });
  }
  if (raw.input !== undefined)
    throw new UsageError('--input is for --app rta (a tuple file); DT runs its bank workload');
  const durationMs = raw.duration === undefined ? 10_000 : parseDurationMs('--duration')(raw.duration);
  if (!json) process.stderr.write(`ipipe: DT bank transfers for ${durationMs} ms (seed ${seed})…\n`);
  return dtLoadCommand({ dataDir, clients: closed ?? 4, durationMs, seed, json });
}
