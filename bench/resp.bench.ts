/**
 * RESP front benchmark (issue 5, §2 "speed"): the same `redis-benchmark` command against
 *
 *   redis       a real `redis-server` (Debian's, /usr/bin), started by this bench on a free
 *               loopback port with persistence off (`--save '' --appendonly no`);
 *   rkv front   the RKV RESP front (src/apps/rkv/resp) backed by `MemoryKvBackend`, a single-node
 *               in-memory store — the protocol front alone, no Paxos round, no LSM;
 *   rkv store   a one-replica RKV cluster (src/apps/rkv/cluster): the same front over Multi-Paxos
 *               and the LSM store, the log fsynced once per event-loop turn — RKV single-node;
 *
 * and prints the throughput ratios (rkv front ÷ redis, rkv store ÷ redis), per command.
 *
 * The command, identical for both servers (only the port differs):
 *
 *     redis-benchmark -h 127.0.0.1 -p <port> -t get,set -n 100000 -c 50 -P 1 -r 100000 --csv
 *
 * (`-q` output carries the same figures; `--csv` is what this bench parses.) `-r 100000` spreads
 * the requests over 100 000 random keys, so GETs find values and the stores grow, as in real use;
 * without it every request names the same key. A second configuration with `-P 16` (16 commands
 * pipelined per client) measures the front's batching; pass `--pipeline 1` to run only the first.
 *
 * Method. Each server runs in its own process (the front as a child Node process running this
 * file with `--role front`), and where `taskset` works and there are ≥ 2 CPUs the server is
 * pinned to CPU 1 and redis-benchmark to CPU 0, so the two never fight for a core and both
 * servers get the same placement. Rounds alternate the order (redis first, then rkv first) so
 * drift over the run favours neither. Reported: requests/s and p50 latency (medians over rounds),
 * server CPU time per request (from /proc, user + system, placement-independent), and the
 * median of the per-round throughput ratios.
 *
 * Run: `npx tsx bench/resp.bench.ts [--rounds 3] [--requests 100000] [--clients 50]
 * [--pipeline 1,16]` (or `npm run bench -- resp`). Skips, exit 0, with a clear message when
 * redis-server or redis-benchmark is missing (Debian: `apt-get install redis-server redis-tools`).
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ClusterSupervisor } from '../src/apps/rkv/cluster/supervisor.ts';
import { MemoryKvBackend } from '../src/apps/rkv/resp/memory-backend.ts';
import { startRespServer } from '../src/apps/rkv/resp/server.ts';

const SELF = fileURLToPath(import.meta.url);

/**
 * redis: a real redis-server; rkv: the RESP front over an in-memory map (the front's own cost);
 * rkv-store: a one-replica RKV cluster — the RESP front over Multi-Paxos and the LSM store, with
 * the log fsynced per event-loop turn (what `ipipe cluster up rkv --replicas 1` runs).
 */
type ServerKind = 'redis' | 'rkv' | 'rkv-store';

/** Options of `runRespBench`. */
export interface RespBenchOptions {
  readonly rounds?: number;
  readonly requests?: number;
  readonly clients?: number;
  /** Pipeline depths to run, each a configuration of its own (default 1 and 16). */
  readonly pipelines?: readonly number[];
  /** Pin servers to CPU 1 and redis-benchmark to CPU 0 when possible (default true). */
  readonly pin?: boolean;
  readonly log?: (line: string) => void;
}

/** One redis-benchmark test (SET or GET) against one server in one round. */
export interface RespBenchRun {
  readonly round: number;
  readonly pipeline: number;
  readonly server: ServerKind;
  readonly command: string;
  readonly requestsPerSec: number;
  readonly p50Ms: number;
  /** Server CPU (user + system) over the whole redis-benchmark invocation, per request of it. */
  readonly serverCpuUsPerRequest: number;
}

/** Medians for one (pipeline, command). */
export interface RespBenchSummary {
  readonly pipeline: number;
  readonly command: string;
  readonly redis: {
    readonly requestsPerSec: number;
    readonly p50Ms: number;
    readonly cpuUsPerRequest: number;
  };
  readonly rkv: { readonly requestsPerSec: number; readonly p50Ms: number; readonly cpuUsPerRequest: number };
  /** Median over rounds of rkv requests/s ÷ redis requests/s. */
  readonly ratio: number;
  readonly ratios: readonly number[];
  /** The one-replica RKV store (Paxos + LSM behind the front), and its ratio to redis-server. */
  readonly store: {
    readonly requestsPerSec: number;
    readonly p50Ms: number;
    readonly cpuUsPerRequest: number;
  };
  readonly storeRatio: number;
  readonly storeRatios: readonly number[];
}

/** What `runRespBench` measured, or why it did not run. */
export type RespBenchResult =
  | { readonly kind: 'skipped'; readonly reason: string }
  | {
      readonly kind: 'measured';
      readonly runs: readonly RespBenchRun[];
      readonly summaries: readonly RespBenchSummary[];
      readonly commandLine: string;
      readonly method: string;
    };

function findExecutable(name: string): string | null {
  for (const directory of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    try {
      accessSync(path.join(directory, name), constants.X_OK);
      return path.join(directory, name);
    } catch {
      // not in this directory
    }
  }
  return null;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function canPin(): boolean {
  if (os.cpus().length < 2) return false;
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

function pinned(cpu: number | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpu === undefined ? [command, [...args]] : ['taskset', ['-c', String(cpu), command, ...args]];
}

/** A loopback port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** CPU time (user + system) a process has used, µs, from /proc; null where there is no /proc. */
function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the parenthesised command name (which may hold spaces): utime is the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const ticksPerSec = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    return (ticks / ticksPerSec) * 1e6;
  } catch {
    return null;
  }
}

/** Resolves once `port` answers PING with +PONG (a server still starting refuses or stays silent). */
async function waitForPong(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answered = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      let received = '';
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1000, () => done(false));
      socket.on('error', () => done(false));
      socket.on('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
        if (received.includes('\r\n')) done(received.startsWith('+PONG'));
      });
    });
    if (answered) return;
    if (Date.now() > deadline)
      throw new Error(`no server answered PING on port ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface RunningServer {
  readonly kind: ServerKind;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function startServer(
  kind: ServerKind,
  redisServer: string,
  cpu: number | undefined,
): Promise<RunningServer> {
  if (kind === 'rkv-store') return startStore(cpu);
  const port = await freePort();
  const [command, args] =
    kind === 'redis'
      ? pinned(cpu, redisServer, [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--protected-mode',
          'no',
          '--daemonize',
          'no',
          '--logfile',
          '',
          '--loglevel',
          'warning',
          '--dir',
          os.tmpdir(),
        ])
      : pinned(cpu, process.execPath, [
          '--import',
          import.meta.resolve('tsx'),
          SELF,
          '--role',
          'front',
          '--port',
          String(port),
        ]);
  const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code}) before answering`)));
    child.once('error', reject);
  });
  await Promise.race([waitForPong(port), exited]);
  exited.catch(() => {});
  return { kind, port, pid: child.pid!, stop: () => stopChild(child) };
}

/** A one-replica RKV cluster in a fresh data directory, its replica process pinned like the others. */
async function startStore(cpu: number | undefined): Promise<RunningServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ipipe-resp-bench-'));
  const supervisor = await ClusterSupervisor.start({ replicas: 1, shards: 1, dataDir, respPort: 0, seed: 1 });
  await supervisor.waitForLeader(0);
  const replica = supervisor.replicas()[0];
  if (replica === undefined) throw new Error('the one-replica cluster has no replica');
  if (cpu !== undefined)
    spawnSync('taskset', ['-a', '-cp', String(cpu), String(replica.pid)], { stdio: 'ignore' });
  return {
    kind: 'rkv-store',
    port: replica.respPort,
    pid: replica.pid,
    stop: async () => {
      await supervisor.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs redis-benchmark to completion, asynchronously; returns its stdout. */
function runBenchmarkProcess(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`redis-benchmark exited ${code}: ${stderr.trim() || stdout.trim()}`));
    });
  });
}

/** redis-benchmark --csv: `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",…`. */
function parseCsv(output: string): Map<string, { requestsPerSec: number; p50Ms: number }> {
  const rows = new Map<string, { requestsPerSec: number; p50Ms: number }>();
  const lines = output.split('\n').map((line) => line.split(',').map((cell) => cell.replace(/^"|"$/g, '')));
  const header = lines[0] ?? [];
  const p50 = header.indexOf('p50_latency_ms');
  for (const cells of lines.slice(1)) {
    const rate = Number(cells[1]);
    if (cells[0] && Number.isFinite(rate)) {
      rows.set(cells[0], { requestsPerSec: rate, p50Ms: p50 >= 0 ? Number(cells[p50]) : Number.NaN });
    }
  }
  return rows;
}

function benchmarkArgs(port: number, requests: number, clients: number, pipeline: number): string[] {
  return [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-t',
    'get,set',
    '-n',
    String(requests),
    '-c',
    String(clients),
    '-P',
    String(pipeline),
    '-r',
    '100000',
    '--csv',
  ];
}

/** Measures; see the header for the method. */
export async function runRespBench(options: RespBenchOptions = {}): Promise<RespBenchResult> {
  const redisServer = findExecutable('redis-server');
  const redisBenchmark = findExecutable('redis-benchmark');
  if (redisServer === null || redisBenchmark === null) {
    const missing = [
      redisServer === null ? 'redis-server' : '',
      redisBenchmark === null ? 'redis-benchmark' : '',
    ]
      .filter(Boolean)
      .join(' and ');
    return {
      kind: 'skipped',
      reason: `${missing} not found on PATH (Debian: apt-get install redis-server redis-tools); nothing to compare against`,
    };
  }
  const rounds = options.rounds ?? 3;
  const requests = options.requests ?? 100_000;
  const clients = options.clients ?? 50;
  const pipelines = options.pipelines ?? [1, 16];
  const pin = (options.pin ?? true) && canPin();
  const log = options.log ?? (() => {});
  const serverCpu = pin ? 1 : undefined;
  const clientCpu = pin ? 0 : undefined;

  const runs: RespBenchRun[] = [];
  for (let round = 0; round < rounds; round++) {
    const order: ServerKind[] =
      round % 2 === 0 ? ['redis', 'rkv', 'rkv-store'] : ['rkv-store', 'rkv', 'redis'];
    for (const kind of order) {
      const server = await startServer(kind, redisServer, serverCpu);
      try {
        for (const pipeline of pipelines) {
          const cpuBefore = processCpuUs(server.pid);
          const [command, args] = pinned(
            clientCpu,
            redisBenchmark,
            benchmarkArgs(server.port, requests, clients, pipeline),
          );
          const rows = parseCsv(await runBenchmarkProcess(command, args));
          const cpuAfter = processCpuUs(server.pid);
          const totalRequests = requests * rows.size;
          const cpuPerRequest =
            cpuBefore === null || cpuAfter === null ? Number.NaN : (cpuAfter - cpuBefore) / totalRequests;
          for (const [name, row] of rows) {
            runs.push({
              round,
              pipeline,
              server: kind,
              command: name,
              requestsPerSec: row.requestsPerSec,
              p50Ms: row.p50Ms,
              serverCpuUsPerRequest: cpuPerRequest,
            });
            log(
              `round ${round + 1}/${rounds} ${kind} -P ${pipeline} ${name}: ${row.requestsPerSec.toFixed(0)} req/s`,
            );
          }
        }
      } finally {
        await server.stop();
      }
    }
  }

  const summaries: RespBenchSummary[] = [];
  for (const pipeline of pipelines) {
    for (const command of ['SET', 'GET']) {
      const of = (kind: ServerKind) =>
        runs.filter((run) => run.pipeline === pipeline && run.command === command && run.server === kind);
      const redisRuns = of('redis');
      const rkvRuns = of('rkv');
      const storeRuns = of('rkv-store');
      if (redisRuns.length === 0 || rkvRuns.length === 0 || storeRuns.length === 0) continue;
      const ratiosOf = (list: readonly RespBenchRun[]) =>
        list.map((run) => {
          const baseline = redisRuns.find((other) => other.round === run.round)!;
          return run.requestsPerSec / baseline.requestsPerSec;
        });
      const ratios = ratiosOf(rkvRuns);
      const storeRatios = ratiosOf(storeRuns);
      const summarize = (list: readonly RespBenchRun[]) => ({
        requestsPerSec: median(list.map((run) => run.requestsPerSec)),
        p50Ms: median(list.map((run) => run.p50Ms)),
        cpuUsPerRequest: median(list.map((run) => run.serverCpuUsPerRequest)),
      });
      summaries.push({
        pipeline,
        command,
        redis: summarize(redisRuns),
        rkv: summarize(rkvRuns),
        ratio: median(ratios),
        ratios,
        store: summarize(storeRuns),
        storeRatio: median(storeRatios),
        storeRatios,
      });
    }
  }
  return {
    kind: 'measured',
    runs,
    summaries,
    commandLine: `redis-benchmark -h 127.0.0.1 -p <port> -t get,set -n ${requests} -c ${clients} -P <${pipelines.join('|')}> -r 100000 --csv`,
    method:
      `${rounds} rounds, order alternating; ` +
      (pin
        ? 'servers pinned to CPU 1, redis-benchmark to CPU 0 (taskset)'
        : 'NOT pinned (no taskset or < 2 CPUs)'),
  };
}

function printResult(result: RespBenchResult): void {
  if (result.kind === 'skipped') {
    process.stdout.write(`resp bench skipped: ${result.reason}\n`);
    return;
  }
  const lines = [
    `command: ${result.commandLine}`,
    `method: ${result.method}; medians over rounds`,
    '',
    `${'pipeline'.padEnd(9)}${'cmd'.padEnd(5)}${'redis req/s'.padStart(13)}${'rkv req/s'.padStart(13)}` +
      `${'rkv/redis'.padStart(11)}${'redis p50 ms'.padStart(14)}${'rkv p50 ms'.padStart(12)}` +
      `${'redis CPU µs/req'.padStart(18)}${'rkv CPU µs/req'.padStart(16)}`,
  ];
  for (const summary of result.summaries) {
    lines.push(
      `${`-P ${summary.pipeline}`.padEnd(9)}${summary.command.padEnd(5)}` +
        `${summary.redis.requestsPerSec.toFixed(0).padStart(13)}${summary.rkv.requestsPerSec.toFixed(0).padStart(13)}` +
        `${`${summary.ratio.toFixed(2)}×`.padStart(11)}` +
        `${summary.redis.p50Ms.toFixed(3).padStart(14)}${summary.rkv.p50Ms.toFixed(3).padStart(12)}` +
        `${summary.redis.cpuUsPerRequest.toFixed(2).padStart(18)}${summary.rkv.cpuUsPerRequest.toFixed(2).padStart(16)}`,
    );
  }
  lines.push('');
  for (const summary of result.summaries) {
    lines.push(
      `rkv front vs redis-server, ${summary.command} -P ${summary.pipeline}: ${summary.ratio.toFixed(2)}× ` +
        `(rounds ${summary.ratios.map((ratio) => ratio.toFixed(2)).join(', ')})`,
    );
  }
  lines.push('');
  for (const summary of result.summaries) {
    lines.push(
      `RKV single-node store (Paxos + LSM) vs redis-server, ${summary.command} -P ${summary.pipeline}: ` +
        `${summary.store.requestsPerSec.toFixed(0)} vs ${summary.redis.requestsPerSec.toFixed(0)} req/s = ` +
        `${summary.storeRatio.toFixed(2)}× (rounds ${summary.storeRatios.map((r) => r.toFixed(2)).join(', ')}), ` +
        `p50 ${summary.store.p50Ms.toFixed(3)} ms, server CPU ${summary.store.cpuUsPerRequest.toFixed(2)} µs/req`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

// ---- command line and the child role ----------------------------------------------------------

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

function positiveInteger(name: string, fallback: number): number {
  const text = option(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) {
    process.stderr.write(`resp bench: ${name} must be a positive integer, got ${text}\n`);
    process.exit(2);
  }
  return value;
}

/** The child: the RESP front over a fresh in-memory store, until SIGTERM or stdin closes. */
async function frontRole(): Promise<void> {
  const server = await startRespServer({
    port: Number(option('--port')),
    host: '127.0.0.1',
    backend: new MemoryKvBackend(),
  });
  const stop = () => void server.close({ timeoutMs: 500 }).then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (option('--role') === 'front') {
    await frontRole();
  } else {
    const pipelines = (option('--pipeline') ?? '1,16').split(',').map(Number);
    if (pipelines.some((depth) => !Number.isSafeInteger(depth) || depth < 1)) {
      process.stderr.write(`resp bench: --pipeline takes positive integers separated by commas\n`);
      process.exit(2);
    }
    const result = await runRespBench({
      rounds: positiveInteger('--rounds', 3),
      requests: positiveInteger('--requests', 100_000),
      clients: positiveInteger('--clients', 50),
      pipelines,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    printResult(result);
  }
}
