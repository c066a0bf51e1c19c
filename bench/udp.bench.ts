/**
 * UDP echo benchmark: what the runtime and the wire protocol cost a server (iPipe §5 measures the
 * runtime's overhead against a bare forwarding path; this is the same question for ours).
 *
 *   ipipe node  the live node (src/platform/live/node) serving examples/echo.ts: UDP in, frame
 *               checks, dedup, the hybrid scheduler, a NIC core (a worker thread) over its shared
 *               ring, the actor's codec and handler, and back — one NIC core, one host core, the
 *               actor kept on the NIC (migration off) so every request takes that path.
 *   ipipe node, core 0 owns the socket  the same node started with `ingress: 'core'`: NIC core 0
 *               (one worker thread) receives, checks, schedules, runs the echo actor inline and
 *               answers; the main thread is on no request's path (docs/live-echo-path.md).
 *   ipipe echo  src/platform/live/net/echo-server.ts: every datagram fully validated (size, magic,
 *               version, length, CRC-32C over header + payload), the header rewritten into a reply
 *               in place and re-checksummed: the protocol alone, no runtime.
 *   raw dgram   the same node:dgram socket with no protocol: every datagram sent straight back.
 *
 * Method. One client for both: the load generator (load.ts) in closed loop, 64 requests
 * outstanding, 64-byte payloads (88-byte frames). Against the raw reflector the client accepts the
 * reflected request as its reply, so the client does identical work (encode, checksum, validate
 * and match the reply) in both runs and only the server differs. Server and client each run in
 * their own child process, so they do not share an event loop, and, where `taskset` exists and
 * there are ≥ 2 CPUs, each is pinned to its own core (server on CPU 1, client on CPU 0): on this
 * 2-vCPU machine two unpinned processes swing by 2× depending on where the scheduler puts them.
 * Rounds alternate the order (ipipe, raw / raw, ipipe) so drift over the run does not favour
 * one side; throughput and p50/p99 are medians over rounds, and the ratio is the median of the
 * per-round throughput ratios.
 *
 * Two figures that do not depend on who was the bottleneck or where the VM put the vCPUs:
 *   - server CPU µs per datagram (user + system, from the server's first datagram on, and again
 *     from the end of the client's warm-up on, without the JIT's first compilations), and its
 *     ratio: the throughput ratio swings with the client and with neighbours on a shared 2-vCPU
 *     VM, the CPU cost per datagram much less;
 *   - the protocol work alone (validate + CRC-32C + re-seal into a reply), timed in-process with
 *     no sockets, to set against the socket work that dominates the per-datagram cost.
 *
 * Run: `npx tsx bench/udp.bench.ts` (prints a table and `echo vs raw dgram: 0.NN×`);
 * `runUdpBench()` returns the numbers. The same file is the child's entry point (`--role`).
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { echoMessageOfSize } from '../src/apps/echo/echo-actor.ts';
import { actorId } from '../src/ids.ts';
import { startEchoServer, startRawEchoServer } from '../src/platform/live/net/echo-server.ts';
import { runLoad } from '../src/platform/live/net/load.ts';
import {
  FrameView,
  frameSize,
  readFrameInto,
  sealFrame,
  turnIntoReply,
} from '../src/platform/live/net/wire.ts';
import { startAdminServer } from '../src/platform/live/node/admin-server.ts';
import { LiveNode } from '../src/platform/live/node/live-node.ts';

type ServerKind = 'node' | 'node-core' | 'ipipe' | 'raw';
const KINDS: readonly ServerKind[] = ['node', 'node-core', 'ipipe', 'raw'];

/** Options of `runUdpBench`. */
export interface UdpBenchOptions {
  /** Measured time per run, ms (default 2000). */
  readonly durationMs?: number;
  /** Unmeasured lead-in per run, ms (default 500). */
  readonly warmupMs?: number;
  /** Rounds; each runs both servers once (default 5). */
  readonly rounds?: number;
  /** Requests outstanding (default 64). */
  readonly outstanding?: number;
  /** Payload bytes (default 64). */
  readonly payloadBytes?: number;
  /** Pin server and client to separate cores with taskset when possible (default true). */
  readonly pin?: boolean;
  /** Progress lines go here (default: nowhere). */
  readonly log?: (line: string) => void;
}

/** One server's run in one round. */
export interface UdpBenchRun {
  readonly round: number;
  readonly server: ServerKind;
  readonly throughputPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly answered: number;
  readonly timeouts: number;
  /**
   * Server process CPU time (user + system) per datagram from its first datagram on, µs. Unlike
   * throughput, this does not depend on whether the client or the server was the bottleneck.
   */
  readonly serverCpuUsPerDatagram: number;
  /**
   * The same from the end of the client's warm-up on: without the JIT's first compilations and
   * a worker thread's start of serving, which weigh on a 2 s run (the node's hot path is much more
   * code than a bare echo's).
   */
  readonly serverCpuUsPerDatagramSteady: number;
}

/** Medians of one server's runs. */
export interface UdpBenchSummary {
  readonly throughputPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly serverCpuUsPerDatagram: number;
  readonly serverCpuUsPerDatagramSteady: number;
}

/** What `runUdpBench` measured. */
export interface UdpBenchResult {
  readonly runs: readonly UdpBenchRun[];
  readonly median: Readonly<Record<ServerKind, UdpBenchSummary>>;
  /** Median over rounds of (live node echo throughput / raw dgram throughput): "echo vs raw dgram". */
  readonly nodeRatio: number;
  /** Each round's node/raw throughput ratio, to show the spread. */
  readonly nodeRatios: readonly number[];
  /** Median over rounds of (node server CPU per datagram / raw dgram's); the node's counts its worker threads. */
  readonly nodeCpuRatio: number;
  /** The same three for the node with `ingress: 'core'` (NIC core 0 owns the socket). */
  readonly nodeCoreRatio: number;
  readonly nodeCoreRatios: readonly number[];
  readonly nodeCoreCpuRatio: number;
  /** Median over rounds of the steady-state CPU ratios (after the warm-up), node and node-core to raw. */
  readonly nodeSteadyCpuRatio: number;
  readonly nodeCoreSteadyCpuRatio: number;
  /** Median over rounds of (protocol echo server throughput / raw dgram throughput). */
  readonly throughputRatio: number;
  /** Each round's protocol-echo/raw throughput ratio. */
  readonly throughputRatios: readonly number[];
  /** Median over rounds of (protocol echo server CPU per datagram / raw dgram's). */
  readonly serverCpuRatio: number;
  /**
   * The protocol's own work per request frame, measured in this process with no sockets:
   * validate (readFrameInto, CRC included) + rewrite into a reply and re-checksum (turnIntoReply).
   */
  readonly protocolNsPerDatagram: number;
  readonly method: string;
}

const SELF = fileURLToPath(import.meta.url);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function canPin(): boolean {
  if (os.cpus().length < 2) return false;
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

/** Starts this file in a child process (pinned to `cpu` when given). */
function child(args: readonly string[], cpu: number | undefined): ChildProcess {
  // Resolve tsx from this file, not from the working directory, so the bench runs from anywhere.
  const node = [process.execPath, '--import', import.meta.resolve('tsx'), SELF, ...args];
  const [command, ...rest] = cpu === undefined ? node : ['taskset', '-c', String(cpu), ...node];
  return spawn(command!, rest, { stdio: ['pipe', 'pipe', 'inherit'] });
}

/** Reads a child's stdout line by line; `next()` resolves with the next line. */
function lines(process: ChildProcess): { next(): Promise<string> } {
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  const failures: ((error: Error) => void)[] = [];
  let buffered = '';
  process.stdout!.setEncoding('utf8');
  process.stdout!.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const waiter = waiting.shift();
      failures.shift();
      if (waiter) waiter(line);
      else queue.push(line);
    }
  });
  process.once('exit', (code) => {
    for (const fail of failures.splice(0))
      fail(new Error(`benchmark child exited with ${code} before answering`));
  });
  return {
    next: () =>
      new Promise((resolve, reject) => {
        const line = queue.shift();
        if (line !== undefined) resolve(line);
        else {
          waiting.push(resolve);
          failures.push(reject);
        }
      }),
  };
}

async function measure(
  kind: ServerKind,
  round: number,
  settings: Required<Omit<UdpBenchOptions, 'log' | 'rounds' | 'pin'>>,
  pin: boolean,
): Promise<UdpBenchRun> {
  const server = child(
    ['--role', 'server', '--kind', kind, '--warmup', String(settings.warmupMs)],
    pin ? 1 : undefined,
  );
  const serverLines = lines(server);
  try {
    const { port } = JSON.parse(await serverLines.next()) as { port: number };
    const client = child(
      [
        '--role',
        'client',
        '--kind',
        kind,
        '--port',
        String(port),
        '--duration',
        String(settings.durationMs),
        '--warmup',
        String(settings.warmupMs),
        '--outstanding',
        String(settings.outstanding),
        '--size',
        String(settings.payloadBytes),
      ],
      pin ? 0 : undefined,
    );
    const result = JSON.parse(await lines(client).next()) as Omit<
      UdpBenchRun,
      'round' | 'server' | 'serverCpuUsPerDatagram'
    >;
    server.stdin!.end(); // the server prints its counters and exits when its stdin closes
    const usage = JSON.parse(await serverLines.next()) as {
      datagrams: number;
      cpuUs: number;
      steadyDatagrams: number;
      steadyCpuUs: number;
    };
    return {
      round,
      server: kind,
      ...result,
      serverCpuUsPerDatagram: usage.datagrams > 0 ? usage.cpuUs / usage.datagrams : Number.NaN,
      serverCpuUsPerDatagramSteady:
        usage.steadyDatagrams > 0 ? usage.steadyCpuUs / usage.steadyDatagrams : Number.NaN,
    };
  } finally {
    server.kill('SIGTERM');
  }
}

/**
 * ns per datagram of the echo server's protocol work alone (validate + turn into a reply), on a
 * frame of the benchmark's size: median of 7 blocks of 200 k frames after a warm-up block.
 */
function protocolWorkNs(payloadBytes: number): number {
  const frame = new Uint8Array(frameSize(payloadBytes));
  const fields = { kind: 'request', targetActorId: 1, requestId: 1, clientId: 1 } as const;
  const view = new FrameView();
  const block = (count: number) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
      sealFrame(frame, fields, payloadBytes);
      if (readFrameInto(frame, view) !== undefined) throw new Error('benchmark frame did not validate');
      turnIntoReply(frame, 'reply', view.payloadLength);
    }
    return Number(process.hrtime.bigint() - started) / count;
  };
  const sealOnly = () => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < 200_000; i++) sealFrame(frame, fields, payloadBytes);
    return Number(process.hrtime.bigint() - started) / 200_000;
  };
  block(200_000);
  sealOnly();
  const totals: number[] = [];
  const seals: number[] = [];
  for (let i = 0; i < 7; i++) {
    totals.push(block(200_000));
    seals.push(sealOnly());
  }
  // The loop re-seals the request each time (the client's work); take it out.
  return median(totals) - median(seals);
}

/** Runs the comparison and returns the numbers (see the file header for the method). */
export async function runUdpBench(options: UdpBenchOptions = {}): Promise<UdpBenchResult> {
  const settings = {
    durationMs: options.durationMs ?? 2000,
    warmupMs: options.warmupMs ?? 500,
    outstanding: options.outstanding ?? 64,
    payloadBytes: options.payloadBytes ?? 64,
  };
  const rounds = options.rounds ?? 5;
  const pin = options.pin !== false && canPin();
  const log = options.log ?? (() => {});
  const runs: UdpBenchRun[] = [];
  for (let round = 0; round < rounds; round++) {
    // Rotate the order so drift over the run favours no server.
    const order = KINDS.map((_, i) => KINDS[(i + round) % KINDS.length] as ServerKind);
    for (const kind of order) {
      const run = await measure(kind, round, settings, pin);
      log(
        `round ${round + 1}/${rounds} ${kind}: ${Math.round(run.throughputPerSec)} req/s, ` +
          `p50 ${run.p50Us} µs, p99 ${run.p99Us} µs, server ${run.serverCpuUsPerDatagram.toFixed(2)} CPU µs/datagram ` +
          `(${run.serverCpuUsPerDatagramSteady.toFixed(2)} after the warm-up)`,
      );
      runs.push(run);
    }
  }
  const of = (kind: ServerKind) => runs.filter((r) => r.server === kind);
  const summary = (kind: ServerKind): UdpBenchSummary => ({
    throughputPerSec: median(of(kind).map((r) => r.throughputPerSec)),
    p50Us: median(of(kind).map((r) => r.p50Us)),
    p99Us: median(of(kind).map((r) => r.p99Us)),
    serverCpuUsPerDatagram: median(of(kind).map((r) => r.serverCpuUsPerDatagram)),
    serverCpuUsPerDatagramSteady: median(of(kind).map((r) => r.serverCpuUsPerDatagramSteady)),
  });
  const ratiosOf = (kind: ServerKind) => {
    const throughput: number[] = [];
    const cpu: number[] = [];
    const steady: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const run = runs.find((r) => r.round === round && r.server === kind);
      const raw = runs.find((r) => r.round === round && r.server === 'raw');
      if (run && raw && raw.throughputPerSec > 0)
        throughput.push(run.throughputPerSec / raw.throughputPerSec);
      if (run && raw) cpu.push(run.serverCpuUsPerDatagram / raw.serverCpuUsPerDatagram);
      if (run && raw) steady.push(run.serverCpuUsPerDatagramSteady / raw.serverCpuUsPerDatagramSteady);
    }
    return { throughput, cpu, steady };
  };
  const { throughput: ratios, cpu: cpuRatios } = ratiosOf('ipipe');
  const node = ratiosOf('node');
  const nodeCore = ratiosOf('node-core');
  const method =
    `closed loop, ${settings.outstanding} outstanding, ${settings.payloadBytes} B payload, ` +
    `${rounds} rounds × ${settings.durationMs} ms measured after ${settings.warmupMs} ms warm-up per server, ` +
    `server and client in separate child processes, ` +
    (pin ? 'pinned with taskset (server CPU 1, client CPU 0)' : 'NOT pinned (no taskset or < 2 CPUs)') +
    `, node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`;
  return {
    runs,
    median: {
      node: summary('node'),
      'node-core': summary('node-core'),
      ipipe: summary('ipipe'),
      raw: summary('raw'),
    },
    nodeRatio: node.throughput.length > 0 ? median(node.throughput) : Number.NaN,
    nodeRatios: node.throughput,
    nodeCpuRatio: node.cpu.length > 0 ? median(node.cpu) : Number.NaN,
    nodeCoreRatio: nodeCore.throughput.length > 0 ? median(nodeCore.throughput) : Number.NaN,
    nodeCoreRatios: nodeCore.throughput,
    nodeCoreCpuRatio: nodeCore.cpu.length > 0 ? median(nodeCore.cpu) : Number.NaN,
    nodeSteadyCpuRatio: node.steady.length > 0 ? median(node.steady) : Number.NaN,
    nodeCoreSteadyCpuRatio: nodeCore.steady.length > 0 ? median(nodeCore.steady) : Number.NaN,
    throughputRatio: ratios.length > 0 ? median(ratios) : Number.NaN,
    throughputRatios: ratios,
    serverCpuRatio: cpuRatios.length > 0 ? median(cpuRatios) : Number.NaN,
    protocolNsPerDatagram: protocolWorkNs(settings.payloadBytes),
    method,
  };
}

function printResult(result: UdpBenchResult): void {
  const line = (name: string, s: UdpBenchSummary) =>
    `${name.padEnd(30)}${String(Math.round(s.throughputPerSec)).padStart(10)}${s.p50Us.toFixed(1).padStart(10)}` +
    `${s.p99Us.toFixed(1).padStart(10)}${s.serverCpuUsPerDatagram.toFixed(2).padStart(18)}` +
    `${s.serverCpuUsPerDatagramSteady.toFixed(2).padStart(18)}`;
  const out = [
    `method: ${result.method}`,
    '',
    `${'server (median)'.padEnd(30)}${'req/s'.padStart(10)}${'p50 µs'.padStart(10)}${'p99 µs'.padStart(10)}` +
      `${'server CPU µs/dg'.padStart(18)}${'after warm-up'.padStart(18)}`,
    line('ipipe node (echo actor)', result.median.node),
    line('ipipe node, ingress core', result.median['node-core']),
    line('ipipe echo (protocol)', result.median.ipipe),
    line('raw node:dgram echo', result.median.raw),
    '',
    `echo vs raw dgram: ${result.nodeRatio.toFixed(2)}× (the live node's echo actor; throughput, median of ` +
      `per-round ratios; rounds ${result.nodeRatios.map((r) => r.toFixed(2)).join(', ')})`,
    `server CPU per datagram, node vs raw dgram: ${result.nodeCpuRatio.toFixed(2)}× (all the node's threads)`,
    `echo vs raw dgram, ingress core: ${result.nodeCoreRatio.toFixed(2)}× (NIC core 0 owns the socket; rounds ` +
      `${result.nodeCoreRatios.map((r) => r.toFixed(2)).join(', ')})`,
    `server CPU per datagram, ingress core vs raw dgram: ${result.nodeCoreCpuRatio.toFixed(2)}× (all the node's threads)`,
    `after the warm-up (no first compilations): node ${result.nodeSteadyCpuRatio.toFixed(2)}×, ingress core ` +
      `${result.nodeCoreSteadyCpuRatio.toFixed(2)}× raw dgram's CPU per datagram`,
    `protocol echo vs raw dgram: ${result.throughputRatio.toFixed(2)}× (rounds ` +
      `${result.throughputRatios.map((r) => r.toFixed(2)).join(', ')}); server CPU per datagram ` +
      `${result.serverCpuRatio.toFixed(2)}× (placement-independent: read this one when the throughput ratio swings)`,
    `protocol work alone (validate + CRC-32C + reply re-seal, no sockets): ${result.protocolNsPerDatagram.toFixed(0)} ns/datagram`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

// ---- child roles -----------------------------------------------------------------------------

function argument(name: string): string {
  const at = process.argv.indexOf(name);
  const value = at >= 0 ? process.argv[at + 1] : undefined;
  if (value === undefined) throw new Error(`udp.bench child: missing ${name}`);
  return value;
}

interface BenchServer {
  readonly address: { readonly port: number };
  datagrams(): number;
  close(): Promise<void>;
}

const ECHO_MODULE = fileURLToPath(new URL('../examples/echo.ts', import.meta.url));

async function startServer(kind: ServerKind): Promise<BenchServer> {
  const options = { host: '127.0.0.1', receiveBufferBytes: 4 * 1024 * 1024 };
  if (kind === 'raw') return startRawEchoServer(options);
  if (kind === 'ipipe') {
    const server = await startEchoServer(options);
    return {
      address: server.address,
      datagrams: () => server.stats().datagrams,
      close: () => server.close(),
    };
  }
  const node = await LiveNode.start({
    catalog: [{ id: actorId(1), name: 'echo', module: ECHO_MODULE, exportName: 'echo' }],
    ...(kind === 'node-core' ? { ingress: 'core' as const } : {}),
    nicCores: kind === 'node-core' ? 1 : Number(process.env['IPIPE_BENCH_NIC_CORES'] ?? 1),
    hostCores: 1,
    placement: { echo: 'nic' },
    scheduler: {
      enableMigration: false,
      // The node's default unless overridden (to measure what pipelining hands-offs buys).
      ...(process.env['IPIPE_BENCH_CORE_QUEUE_DEPTH'] === undefined
        ? {}
        : { coreQueueDepth: Number(process.env['IPIPE_BENCH_CORE_QUEUE_DEPTH']) }),
    },
  });
  // IPIPE_BENCH_METRICS=1: with the admin server's metrics, as `ipipe run --metrics-port` serves.
  const admin = process.env['IPIPE_BENCH_METRICS'] === '1' ? await startAdminServer(node, 0) : undefined;
  return {
    address: node.address,
    datagrams: () => node.stats().requests,
    close: async () => {
      await admin?.close();
      await node.stop();
    },
  };
}

async function serverRole(kind: ServerKind): Promise<void> {
  const server = await startServer(kind);
  const datagrams = () => server.datagrams();
  // CPU is counted from the first datagram on, so start-up (loading tsx, compiling) is left out;
  // polling every millisecond costs the server next to nothing.
  let cpuAtFirst: NodeJS.CpuUsage | undefined;
  let datagramsAtFirst = 0;
  // And again when the client's warm-up ends (its first datagram is within a millisecond of ours).
  let cpuAtSteady: NodeJS.CpuUsage | undefined;
  let datagramsAtSteady = 0;
  let steadyTimer: NodeJS.Timeout | undefined;
  const warmupMs = Number(argument('--warmup'));
  const watch = setInterval(() => {
    if (datagrams() > 0) {
      cpuAtFirst = process.cpuUsage();
      datagramsAtFirst = datagrams();
      clearInterval(watch);
      steadyTimer = setTimeout(() => {
        cpuAtSteady = process.cpuUsage();
        datagramsAtSteady = datagrams();
      }, warmupMs);
    }
  }, 1);
  process.stdout.write(`${JSON.stringify({ port: server.address.port })}\n`);
  const stop = () => {
    clearInterval(watch);
    if (steadyTimer !== undefined) clearTimeout(steadyTimer);
    const cpu = process.cpuUsage(cpuAtFirst);
    const counted = datagrams() - datagramsAtFirst;
    const steady = cpuAtSteady === undefined ? undefined : process.cpuUsage(cpuAtSteady);
    const usage = {
      datagrams: counted,
      cpuUs: cpu.user + cpu.system,
      steadyDatagrams: steady === undefined ? 0 : datagrams() - datagramsAtSteady,
      steadyCpuUs: steady === undefined ? 0 : steady.user + steady.system,
    };
    process.stdout.write(`${JSON.stringify(usage)}\n`);
    void server.close().then(() => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.once('SIGTERM', stop);
}

async function clientRole(kind: ServerKind): Promise<void> {
  // Sized so the whole message is --size bytes, like the echo servers' payloads.
  const size = Number(argument('--size'));
  const echoPayload = echoMessageOfSize(size);
  const result = await runLoad({
    target: `127.0.0.1:${argument('--port')}`,
    actor: 1,
    mode: { kind: 'closed', outstanding: Number(argument('--outstanding')) },
    // The node's echo actor takes a message of its codec; the echo servers take any bytes.
    ...(kind === 'node' || kind === 'node-core'
      ? { makePayload: () => echoPayload }
      : { payloadBytes: Number(argument('--size')) }),
    durationMs: Number(argument('--duration')),
    warmupMs: Number(argument('--warmup')),
    seed: 1,
    timeoutMs: 1000,
    acceptReflectedRequests: kind === 'raw',
  });
  const run = {
    throughputPerSec: result.throughputPerSec,
    p50Us: result.latency?.p50Us ?? Number.NaN,
    p99Us: result.latency?.p99Us ?? Number.NaN,
    answered: result.answered,
    timeouts: result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(run)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const role = process.argv.indexOf('--role') >= 0 ? argument('--role') : 'main';
  if (role === 'server') await serverRole(argument('--kind') as ServerKind);
  else if (role === 'client') await clientRole(argument('--kind') as ServerKind);
  else {
    printResult(await runUdpBench({ log: (line) => process.stderr.write(`${line}\n`) }));
  }
}
