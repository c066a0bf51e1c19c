/**
 * What the runtime costs a request, measured on this machine: the echo actor served by a live
 * node — once with the default ingress (the controller thread owns the socket, a NIC core runs the
 * actor) and once with `ingress: 'core'` (NIC core 0 owns the socket and runs the actor inline) —
 * against a bare `node:dgram` echo server that only sends each datagram back. Same client (a
 * process of its own, echo-cost-client.ts), same payload, closed loop, the servers measured in
 * turn, round after round; each round's throughput ratio to the bare server is its own measurement
 * and the result is their median (the machine's speed drifts between rounds, not within one).
 * The showcase's short version of bench/udp.bench.ts, which also counts CPU per datagram.
 */

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { echoMessageOfSize } from '../apps/echo/echo-actor.ts';
import { actorId } from '../ids.ts';
import { startRawEchoServer } from '../platform/live/net/echo-server.ts';
import { LiveNode } from '../platform/live/node/live-node.ts';
import type { EchoCostClientSpec, EchoCostRun, EchoCostTarget } from './echo-cost-client.ts';

export type EchoServerKind = 'raw' | 'node' | 'node-core';

export interface EchoCostOptions {
  readonly seed: number;
  /** Measured rounds; each measures every server once (default 3). */
  readonly rounds?: number;
  /** Measured window per server per round, ms (default 400). */
  readonly durationMs?: number;
  /** Unmeasured lead-in per server per round, ms (default 150). */
  readonly warmupMs?: number;
  /** Requests the client keeps outstanding (default 64, as the reference figures). */
  readonly outstanding?: number;
  /** Whole message size in bytes (default 64). */
  readonly messageBytes?: number;
}

export interface EchoServerCost {
  readonly kind: EchoServerKind;
  /** Medians over rounds. */
  readonly throughputPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  /** Median over rounds of this server's throughput ÷ the bare server's in the same round. */
  readonly ratioToRaw: number;
  readonly roundThroughputs: readonly number[];
  readonly timeouts: number;
}

export interface EchoCostResult {
  readonly seed: number;
  readonly rounds: number;
  readonly durationMs: number;
  readonly outstanding: number;
  readonly messageBytes: number;
  readonly servers: readonly EchoServerCost[];
}

const ECHO_MODULE = fileURLToPath(
  new URL(
    import.meta.url.endsWith('.ts') ? '../apps/echo/echo-actor.ts' : '../apps/echo/echo-actor.js',
    import.meta.url,
  ),
);
const CLIENT_MODULE = fileURLToPath(
  new URL(
    import.meta.url.endsWith('.ts') ? './echo-cost-client.ts' : './echo-cost-client.js',
    import.meta.url,
  ),
);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function startNode(ingress: 'controller' | 'core'): Promise<LiveNode> {
  return LiveNode.start({
    catalog: [{ id: actorId(1), name: 'echo', module: ECHO_MODULE, exportName: 'echo' }],
    ingress,
    nicCores: 1,
    hostCores: 1,
    placement: { echo: 'nic' },
    scheduler: { enableMigration: false },
  });
}

/** Runs the client process to the end; resolves with its runs. */
function runClient(spec: EchoCostClientSpec): Promise<EchoCostRun[]> {
  // From a clone the client runs under tsx, as this module does; from a build it is JavaScript.
  const loader = CLIENT_MODULE.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  const child = spawn(process.execPath, [...loader, CLIENT_MODULE, JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) {
        reject(
          new Error(
            `the echo-cost client exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`,
          ),
        );
        return;
      }
      resolve(
        stdout
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as EchoCostRun),
      );
    });
  });
}

/** Starts the three servers, measures them from a client process, stops them. */
export async function runEchoCost(options: EchoCostOptions): Promise<EchoCostResult> {
  const rounds = options.rounds ?? 3;
  const durationMs = options.durationMs ?? 400;
  const warmupMs = options.warmupMs ?? 150;
  const outstanding = options.outstanding ?? 64;
  const messageBytes = options.messageBytes ?? 64;
  // The bare server gets the same bytes as the nodes (it never looks at them).
  const payload = echoMessageOfSize(messageBytes);
  const payloadHex = Buffer.from(payload).toString('hex');
  const raw = await startRawEchoServer({ host: '127.0.0.1', receiveBufferBytes: 4 * 1024 * 1024 });
  const nodes: LiveNode[] = [];
  try {
    const node = await startNode('controller');
    nodes.push(node);
    const nodeCore = await startNode('core');
    nodes.push(nodeCore);
    const targets: EchoCostTarget[] = [
      { kind: 'raw', port: raw.address.port, payloadHex, reflected: true },
      { kind: 'node', port: node.address.port, payloadHex, reflected: false },
      { kind: 'node-core', port: nodeCore.address.port, payloadHex, reflected: false },
    ];
    const runs = await runClient({ targets, rounds, durationMs, warmupMs, outstanding, seed: options.seed });
    const rawByRound = new Map(
      runs.filter((r) => r.kind === 'raw').map((r) => [r.round, r.throughputPerSec]),
    );
    const servers = (['raw', 'node', 'node-core'] as const).map((kind): EchoServerCost => {
      const mine = runs.filter((r) => r.kind === kind);
      return {
        kind,
        throughputPerSec: median(mine.map((r) => r.throughputPerSec)),
        p50Us: median(mine.map((r) => r.p50Us)),
        p99Us: median(mine.map((r) => r.p99Us)),
        ratioToRaw: median(mine.map((r) => r.throughputPerSec / (rawByRound.get(r.round) ?? Number.NaN))),
        roundThroughputs: mine.map((r) => r.throughputPerSec),
        timeouts: mine.reduce((sum, r) => sum + r.timeouts, 0),
      };
    });
    return { seed: options.seed, rounds, durationMs, outstanding, messageBytes, servers };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await raw.close();
  }
}
