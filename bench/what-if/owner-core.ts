/**
 * WHAT-IF PROTOTYPE, not part of ipipe and not run by `npm run bench`: can a NIC core that owns the
 * UDP socket (receive, check, run, reply in one thread) reach 0.8× a bare node:dgram echo? (issue
 * 4 §5; the figures and the design are in docs/live-echo-path.md, "What if a NIC core owned the
 * socket?").
 *
 *   npx tsx bench/what-if/owner-core.ts [--kinds raw,owner,owner-sched,node] [--rounds 5]
 *       interleaved rounds against bench/udp.bench.ts's own client role (closed loop, 64
 *       outstanding, 64 B), server pinned to CPU 1 and client to CPU 0 as the bench pins them;
 *       prints each run and, per server, the medians and the per-round CPU ratio to raw.
 *   ... --open 10000
 *       the same at a fixed offered rate (open loop, Poisson arrivals, this file's client role):
 *       p50/p99 and CPU per datagram at equal load, below every server's capacity.
 *   npx tsx bench/what-if/owner-core.ts --js-cost
 *       the owner path's JavaScript alone, no sockets: ns per request.
 *
 * Servers: raw (startRawEchoServer), raw-worker (the same echo in a worker thread), owner (the
 * prototype core, owner-core-path.ts), owner-sched (the same through a HybridScheduler), owner-fd
 * (the prototype wrapping a socket the main thread bound), node (LiveNode as udp.bench starts it),
 * node-core (the same with `ingress: 'core'`: the built socket-owning core).
 * Server CPU is process.cpuUsage() (every thread) over a steady-state window: from `--warm` ms
 * after the first datagram (default 1500) until the client is done (`--duration`, default 3000).
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { echo, echoMessageOfSize } from '../../src/apps/echo/echo-actor.ts';
import { DmoDomain } from '../../src/dmo/domain.ts';
import { actorId } from '../../src/ids.ts';
import { startRawEchoServer } from '../../src/platform/live/net/echo-server.ts';
import { runLoad } from '../../src/platform/live/net/load.ts';
import { HEADER_BYTES, sealFrame } from '../../src/platform/live/net/wire.ts';
import { initialiseActor } from '../../src/platform/live/node/actor-init.ts';
import { LiveNode } from '../../src/platform/live/node/live-node.ts';
import {
  createOwnerPath,
  type OwnerCoreData,
  STAT_COMPLETIONS,
  STAT_DATAGRAMS,
  STAT_DROPS,
  STAT_DUPLICATES,
  STAT_HANDLER_NS,
  STAT_SLOTS,
} from './owner-core-path.ts';

const SELF = fileURLToPath(import.meta.url);
const UDP_BENCH = fileURLToPath(new URL('../udp.bench.ts', import.meta.url));
const PATH_MODULE = fileURLToPath(new URL('./owner-core-path.ts', import.meta.url));
const BOOTSTRAP = fileURLToPath(
  new URL('../../src/platform/live/node/core-worker-bootstrap.mjs', import.meta.url),
);
const ECHO_MODULE = fileURLToPath(new URL('../../examples/echo.ts', import.meta.url));
const CATALOG = [{ id: actorId(1), name: 'echo', module: ECHO_MODULE, exportName: 'echo' }];

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// ---- the server role ---------------------------------------------------------------------------

interface Served {
  readonly port: number;
  datagrams(): number;
  extra(): Record<string, number>;
  close(): Promise<void>;
}

function echoDomain(): DmoDomain {
  const domain = DmoDomain.create({ regionBytes: 4 << 20, maxActors: 32, shared: true });
  initialiseActor(domain, actorId(1), 'echo', echo, new Map([[actorId(1), echo]]));
  return domain;
}

async function serve(kind: string): Promise<Served> {
  if (kind === 'raw') {
    const server = await startRawEchoServer({ host: '127.0.0.1', receiveBufferBytes: 4 << 20 });
    return {
      port: server.address.port,
      datagrams: () => server.datagrams(),
      extra: () => ({}),
      close: () => server.close(),
    };
  }
  if (kind === 'node' || kind === 'node-core') {
    const node = await LiveNode.start({
      catalog: CATALOG,
      ...(kind === 'node-core' ? { ingress: 'core' as const } : {}),
      nicCores: 1,
      hostCores: 1,
      placement: { echo: 'nic' },
      scheduler: { enableMigration: false },
    });
    return {
      port: node.address.port,
      datagrams: () => node.stats().requests,
      extra: () => ({}),
      close: () => node.stop(),
    };
  }
  const modes: Record<string, OwnerCoreData['mode']> = {
    'raw-worker': 'raw',
    owner: 'full',
    'owner-fd': 'full',
    'owner-sched': 'sched',
  };
  const mode = modes[kind];
  if (mode === undefined) throw new Error(`unknown server kind ${kind}`);
  const domain = echoDomain();
  const statsBuffer = new SharedArrayBuffer(STAT_SLOTS * 8);
  const stats = new Float64Array(statsBuffer);
  let fd: number | undefined;
  if (kind === 'owner-fd') {
    // The sharing experiment: the main thread binds, the worker wraps the descriptor. Node has no
    // public way to read a dgram socket's fd; `_handle` is private (DEP0112).
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const handle = (socket as unknown as { _handle: { fd: number; recvStop(): void } })._handle;
    fd = handle.fd;
    handle.recvStop(); // else both event loops read the socket
  }
  const data: OwnerCoreData = {
    entry: PATH_MODULE,
    whatIf: 'owner-core',
    mode,
    fd,
    domainBuffer: domain.buffer as SharedArrayBuffer,
    catalog: CATALOG,
    stats: statsBuffer,
  };
  const worker = new Worker(BOOTSTRAP, { workerData: data });
  const port = await new Promise<number>((resolve) =>
    worker.once('message', (m: { port: number }) => resolve(m.port)),
  );
  // The controller's side: nothing per request, a 10 ms tick reading what its decisions would read.
  let seen = 0;
  const tick = setInterval(() => {
    seen = stats[STAT_COMPLETIONS]!;
  }, 10);
  return {
    port,
    datagrams: () => stats[STAT_DATAGRAMS]!,
    extra: () => ({
      completions: stats[STAT_COMPLETIONS]!,
      handlerUsPerRequest: stats[STAT_HANDLER_NS]! / Math.max(1, stats[STAT_COMPLETIONS]!) / 1000,
      duplicates: stats[STAT_DUPLICATES]!,
      drops: stats[STAT_DROPS]!,
      lastTickCompletions: seen,
    }),
    close: async () => {
      clearInterval(tick);
      await worker.terminate();
    },
  };
}

async function serverRole(kind: string, warmMs: number): Promise<void> {
  const served = await serve(kind);
  let cpuAt: NodeJS.CpuUsage | undefined;
  let datagramsAt = 0;
  let windowStartMs = 0;
  const watch = setInterval(() => {
    if (served.datagrams() === 0) return;
    clearInterval(watch);
    setTimeout(() => {
      cpuAt = process.cpuUsage();
      datagramsAt = served.datagrams();
      windowStartMs = performance.now();
    }, warmMs);
  }, 1);
  process.stdout.write(`${JSON.stringify({ port: served.port })}\n`);
  process.stdin.on('end', () => {
    const cpu = process.cpuUsage(cpuAt);
    const datagrams = served.datagrams() - datagramsAt;
    const windowMs = performance.now() - windowStartMs;
    process.stdout.write(
      `${JSON.stringify({ datagrams, cpuUs: cpu.user + cpu.system, windowMs, extra: served.extra() })}\n`,
    );
    void served.close().then(() => process.exit(0));
  });
  process.stdin.resume();
}

/** An open-loop client (udp.bench's client role is closed-loop only). */
async function openClientRole(
  kind: string,
  port: number,
  ratePerSec: number,
  warmMs: number,
  durationMs: number,
): Promise<void> {
  const size = 64;
  const payload = echoMessageOfSize(size);
  const result = await runLoad({
    target: `127.0.0.1:${port}`,
    actor: 1,
    mode: { kind: 'open', ratePerSec },
    ...(kind.startsWith('raw') ? { payloadBytes: size } : { makePayload: () => payload }),
    durationMs,
    warmupMs: warmMs,
    seed: 1,
    timeoutMs: 1000,
    acceptReflectedRequests: kind.startsWith('raw'),
  });
  const line = {
    throughputPerSec: result.throughputPerSec,
    p50Us: result.latency?.p50Us ?? Number.NaN,
    p99Us: result.latency?.p99Us ?? Number.NaN,
    timeouts: result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

// ---- the comparison ----------------------------------------------------------------------------

function child(args: readonly string[], cpu: number | undefined): ChildProcess {
  const node = [process.execPath, '--import', import.meta.resolve('tsx'), ...args];
  const [command, ...rest] = cpu === undefined ? node : ['taskset', '-c', String(cpu), ...node];
  return spawn(command!, rest, { stdio: ['pipe', 'pipe', 'inherit'] });
}

function lineReader(process: ChildProcess): () => Promise<string> {
  let buffered = '';
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  process.stdout!.setEncoding('utf8');
  process.stdout!.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  return () =>
    new Promise((resolve) => {
      const line = lines.shift();
      if (line !== undefined) resolve(line);
      else waiting.push(resolve);
    });
}

interface Run {
  readonly round: number;
  readonly kind: string;
  readonly throughputPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly cpuUsPerDatagram: number;
}

async function compare(
  kinds: readonly string[],
  rounds: number,
  warmMs: number,
  durationMs: number,
  openRatePerSec: number | undefined,
): Promise<void> {
  const pin = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const runs: Run[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(i + round) % kinds.length]!;
      const server = child(
        [SELF, '--role', 'server', '--kind', kind, '--warm', String(warmMs)],
        pin ? 1 : undefined,
      );
      const serverLine = lineReader(server);
      try {
        const { port } = JSON.parse(await serverLine()) as { port: number };
        const clientArgs = [
          '--port',
          String(port),
          '--duration',
          String(durationMs),
          '--warmup',
          String(warmMs),
        ];
        const clientKind = kind.startsWith('raw') ? 'raw' : 'node';
        const clientRole =
          openRatePerSec === undefined
            ? [
                UDP_BENCH,
                '--role',
                'client',
                '--kind',
                clientKind,
                ...clientArgs,
                '--outstanding',
                '64',
                '--size',
                '64',
              ]
            : [
                SELF,
                '--role',
                'open-client',
                '--kind',
                kind,
                ...clientArgs,
                '--rate',
                String(openRatePerSec),
              ];
        const client = child(clientRole, pin ? 0 : undefined);
        const load = JSON.parse(await lineReader(client)()) as {
          throughputPerSec: number;
          p50Us: number | null;
          p99Us: number | null;
          timeouts: number;
        };
        server.stdin!.end();
        const usage = JSON.parse(await serverLine()) as { datagrams: number; cpuUs: number; extra: unknown };
        const run = {
          round,
          kind,
          throughputPerSec: load.throughputPerSec,
          // No answer in the window gives no latency (JSON turns the client's NaN into null).
          p50Us: load.p50Us ?? Number.NaN,
          p99Us: load.p99Us ?? Number.NaN,
          cpuUsPerDatagram: usage.cpuUs / usage.datagrams,
        };
        runs.push(run);
        process.stderr.write(
          `round ${round + 1}/${rounds} ${kind.padEnd(12)} ${Math.round(load.throughputPerSec)} req/s, p50 ${load.p50Us?.toFixed(0)} µs, ` +
            `p99 ${load.p99Us?.toFixed(0)} µs, server ${run.cpuUsPerDatagram.toFixed(2)} CPU µs/datagram over ` +
            `${usage.datagrams} datagrams, timeouts ${load.timeouts} ${JSON.stringify(usage.extra)}\n`,
        );
      } finally {
        server.kill('SIGTERM');
      }
    }
  }
  const load =
    openRatePerSec === undefined ? 'closed loop, 64 outstanding' : `open loop at ${openRatePerSec} req/s`;
  process.stdout.write(
    `pinned: ${pin}; ${load}; ${rounds} rounds, ${warmMs} ms warm-up, ${durationMs} ms measured\n`,
  );
  for (const kind of kinds) {
    const of = runs.filter((r) => r.kind === kind);
    const ratios: number[] = [];
    for (const run of of) {
      const raw = runs.find((r) => r.round === run.round && r.kind === 'raw');
      if (raw) ratios.push(run.cpuUsPerDatagram / raw.cpuUsPerDatagram);
    }
    process.stdout.write(
      `${kind.padEnd(12)} ${String(Math.round(median(of.map((r) => r.throughputPerSec)))).padStart(7)} req/s ` +
        `p50 ${median(of.map((r) => r.p50Us)).toFixed(0)} µs p99 ${median(of.map((r) => r.p99Us)).toFixed(0)} µs ` +
        `server CPU ${median(of.map((r) => r.cpuUsPerDatagram)).toFixed(2)} µs/datagram` +
        (ratios.length > 0
          ? `, ${median(ratios).toFixed(2)}× raw (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`
          : '') +
        '\n',
    );
  }
}

// ---- the owner path's JavaScript alone ---------------------------------------------------------

function jsCost(): void {
  const domain = echoDomain();
  const size = 64; // the whole message, as the bench's client sizes it
  const message = echoMessageOfSize(size);
  const count = 1 << 14;
  const frames: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const frame = new Uint8Array(HEADER_BYTES + message.length);
    frame.set(message, HEADER_BYTES);
    frames.push(frame);
  }
  const remote = { address: '127.0.0.1', port: 40_000 };
  let nextRequestId = 1;
  for (const useScheduler of [false, true, false, true]) {
    let sent = 0;
    const path = createOwnerPath({
      domain,
      catalog: CATALOG,
      definitions: [echo],
      send: () => {
        sent++;
      },
      stats: new Float64Array(STAT_SLOTS),
      useScheduler,
    });
    // Each pass seals fresh request ids first (untimed: that is the client's work), so every
    // request is new to the dedup table, as in the bench.
    const pass = () => {
      for (const frame of frames) {
        const fields = {
          kind: 'request',
          targetActorId: 1,
          requestId: nextRequestId++ >>> 0,
          clientId: 77,
        } as const;
        sealFrame(frame, fields, message.length);
      }
      const started = process.hrtime.bigint();
      for (const frame of frames) path(frame, remote);
      return Number(process.hrtime.bigint() - started) / count;
    };
    for (let i = 0; i < 20; i++) pass();
    const passes: number[] = [];
    for (let i = 0; i < 30; i++) passes.push(pass());
    if (sent !== 50 * count) throw new Error(`expected ${50 * count} replies, sent ${sent}`);
    process.stdout.write(
      `owner path${useScheduler ? ' + scheduler' : ''}: ${median(passes).toFixed(0)} ns/request ` +
        `(median of 30 passes of ${count}; min ${Math.min(...passes).toFixed(0)})\n`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const role = option('--role', 'main');
  if (role === 'server') await serverRole(option('--kind', 'owner'), Number(option('--warm', '1500')));
  else if (role === 'open-client')
    await openClientRole(
      option('--kind', 'owner'),
      Number(option('--port', '0')),
      Number(option('--rate', '10000')),
      Number(option('--warmup', '1500')),
      Number(option('--duration', '3000')),
    );
  else if (process.argv.includes('--js-cost')) jsCost();
  else
    await compare(
      option('--kinds', 'raw,owner,owner-sched,node').split(','),
      Number(option('--rounds', '5')),
      Number(option('--warm', '1500')),
      Number(option('--duration', '3000')),
      process.argv.includes('--open') ? Number(option('--open', '10000')) : undefined,
    );
}
