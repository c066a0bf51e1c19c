/**
 * The live half of the showcase (`npm start`): the same four Table 3 task actors the simulated
 * walkthrough runs, now on real threads — a live node (worker-thread NIC and host cores,
 * shared-memory rings, UDP) under closed-loop clients, with the flow classifier moved to the host
 * and back mid-run in the paper's four phases. Reports what was measured: per actor requests,
 * latency percentiles (hdr-histogram), where each ran, and each migration's phases and state
 * bytes; and checks that every request was answered exactly once.
 */

import * as hdr from 'hdr-histogram-js';
import type { MessageCodec } from '../actor/codec.ts';
import { flowClassifier, flowMonitor, kvCache, topRanker } from '../apps/tasks/task-actors.ts';
import { type ActorId, actorId } from '../ids.ts';
import { IpipeClient } from '../platform/live/net/client.ts';
import { type LiveMigrationRecord, LiveNode } from '../platform/live/node/live-node.ts';
import { Random } from '../random.ts';
import type { Decision } from '../sched/types.ts';

export interface LiveShowcaseOptions {
  readonly seed: number;
  /** Measured time, ms (default 1 600). */
  readonly durationMs?: number;
  /** Requests each actor's client keeps outstanding (default 4). */
  readonly outstandingPerActor?: number;
  readonly nicCores?: number;
  readonly hostCores?: number;
}

export interface LiveActorResult {
  readonly name: string;
  readonly requests: number;
  readonly throughputPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly executedOnNic: number;
  readonly executedOnHost: number;
}

export interface LiveShowcaseResult {
  readonly seed: number;
  readonly durationMs: number;
  readonly nicCores: number;
  readonly hostCores: number;
  readonly actors: readonly LiveActorResult[];
  readonly migrations: readonly LiveMigrationRecord[];
  readonly decisions: readonly Decision[];
  readonly sent: number;
  readonly answered: number;
  readonly errorReplies: number;
  readonly duplicatesAtNode: number;
}

// From a clone the sources run under tsx (.ts); from a build, dist/ holds .js.
const TASK_MODULE = new URL(
  import.meta.url.endsWith('.ts') ? '../apps/tasks/task-actors.ts' : '../apps/tasks/task-actors.js',
  import.meta.url,
).pathname;

interface Driver {
  readonly id: ActorId;
  readonly name: string;
  readonly codec: MessageCodec<unknown>;
  next(random: Random): unknown;
}

function drivers(): Driver[] {
  const key = (random: Random) => {
    const bytes = new Uint8Array(16);
    const index = random.int(0, 1023);
    bytes[0] = index & 0xff;
    bytes[1] = index >> 8;
    return bytes;
  };
  return [
    {
      id: actorId(1),
      name: kvCache.name,
      codec: kvCache.messages as MessageCodec<unknown>,
      next: (r) =>
        r.chance(0.1)
          ? { type: 'put', key: key(r), value: new Uint8Array(64).fill(r.int(0, 255)) }
          : { type: 'get', key: key(r) },
    },
    {
      id: actorId(2),
      name: flowMonitor.name,
      codec: flowMonitor.messages as MessageCodec<unknown>,
      next: (r) => ({ type: 'observe', flow: r.int(0, 4095) }),
    },
    {
      id: actorId(3),
      name: topRanker.name,
      codec: topRanker.messages as MessageCodec<unknown>,
      next: (r) =>
        r.chance(0.05) ? { type: 'rank', entries: 512, top: 10 } : { type: 'count', key: r.int(0, 2047) },
    },
    {
      id: actorId(4),
      name: flowClassifier.name,
      codec: flowClassifier.messages as MessageCodec<unknown>,
      next: (r) => ({ type: 'classify', features: Uint8Array.from({ length: 16 }, () => r.int(0, 255)) }),
    },
  ];
}

/** Runs the live session; resolves when the node has stopped. */
export async function runLiveShowcase(options: LiveShowcaseOptions): Promise<LiveShowcaseResult> {
  const durationMs = options.durationMs ?? 1_600;
  const outstanding = options.outstandingPerActor ?? 4;
  const nicCores = options.nicCores ?? 2;
  const hostCores = options.hostCores ?? 1;
  const actors = drivers();
  const node = await LiveNode.start({
    catalog: actors.map((a) => ({
      id: a.id,
      name: a.name,
      module: TASK_MODULE,
      exportName:
        a.name === 'kv-cache'
          ? 'kvCache'
          : a.name === 'flow-monitor'
            ? 'flowMonitor'
            : a.name === 'top-ranker'
              ? 'topRanker'
              : 'flowClassifier',
    })),
    nicCores,
    hostCores,
  });
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 2_000,
    retries: 3,
  });
  const root = new Random(options.seed);
  const histograms = actors.map(() =>
    hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 60_000_000_000,
      numberOfSignificantValueDigits: 3,
    }),
  );
  const counts = actors.map(() => 0);
  let sent = 0;
  let answered = 0;
  let errorReplies = 0;
  const started = performance.now();
  const endAt = started + durationMs;
  try {
    const loops = actors.flatMap((actor, index) =>
      Array.from({ length: outstanding }, async (_, lane) => {
        const random = root.fork(`${actor.name}/${lane}`);
        while (performance.now() < endAt) {
          const payload = actor.codec.encode(actor.next(random));
          const sentAt = performance.now();
          sent++;
          try {
            await client.request(actor.id, payload);
            answered++;
            counts[index] = (counts[index] as number) + 1;
            (histograms[index] as hdr.Histogram).recordValue(
              Math.max(1, Math.round((performance.now() - sentAt) * 1e6)),
            );
          } catch {
            errorReplies++;
          }
        }
      }),
    );
    // The operator's view of migration: move the classifier to the host, then back — unless the
    // scheduler has already moved it (its own decisions are reported too).
    const moveIfAt = async (from: 'nic' | 'host', to: 'nic' | 'host') => {
      if (node.domainOf(actorId(4)) === from) await node.migrate(actorId(4), to, 'showcase');
    };
    const moves = (async () => {
      await new Promise((resolve) => setTimeout(resolve, durationMs * 0.3));
      await moveIfAt('nic', 'host');
      await new Promise((resolve) => setTimeout(resolve, durationMs * 0.35));
      await moveIfAt('host', 'nic');
    })();
    await Promise.all([...loops, moves]);
    const elapsedS = (performance.now() - started) / 1000;
    const stats = node.stats();
    return {
      seed: options.seed,
      durationMs,
      nicCores,
      hostCores,
      actors: actors.map((actor, index) => {
        const h = histograms[index] as hdr.Histogram;
        const executed = stats.executed[actor.name] ?? { nic: 0, host: 0 };
        return {
          name: actor.name,
          requests: counts[index] as number,
          throughputPerSec: (counts[index] as number) / elapsedS,
          p50Us: h.getValueAtPercentile(50) / 1000,
          p99Us: h.getValueAtPercentile(99) / 1000,
          executedOnNic: executed.nic,
          executedOnHost: executed.host,
        };
      }),
      migrations: stats.migrations,
      decisions: stats.decisions,
      sent,
      answered,
      errorReplies,
      duplicatesAtNode: stats.duplicates,
    };
  } finally {
    await client.close();
    await node.stop();
    for (const h of histograms) h.destroy();
  }
}
