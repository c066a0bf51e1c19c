/**
 * The applications' offload experiment on the live platform (`ipipe experiment rta|dt --platform
 * live`): per packet size and placement, a cluster of live node processes on this machine is
 * started (platform/live/cluster), configured, driven by the app's closed-loop clients, and
 * measured through each node's `/stats`, then stopped. Same row shape as the simulator's.
 *
 *   host-only   every actor placed on its node's host domain, migration off on every node
 *   offloaded   actors where their placement puts them (NIC), the hybrid scheduler free to move them
 *
 * `hostCores` here is what the live node can honestly measure: the nanoseconds its host cores
 * spent inside handlers, per second of the measured window (ring handling, waiting and the UDP
 * stack are not counted; on one machine "NIC" and "host" cores are both this machine's threads).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DtClusterConnection, dtClusterSpec } from '../apps/dt/live-cluster.ts';
import { fasstWorkload } from '../apps/dt/workload.ts';
import { driveRta, RtaClusterClient, rtaClusterSpec } from '../apps/rta/live-cluster.ts';
import { rtaWorkload } from '../apps/rta/workload.ts';
import { ConfigError } from '../errors.ts';
import type { ClusterSpec } from '../platform/live/cluster/cluster-file.ts';
import { freeUdpPorts } from '../platform/live/cluster/free-ports.ts';
import { LocalCluster } from '../platform/live/cluster/launch.ts';
import { Random } from '../random.ts';
import {
  APP_OFFLOAD_SCHEMA_VERSION,
  type AppOffloadResult,
  type AppOffloadRow,
  type OffloadPlacement,
} from './app-offload.ts';
import { dtValueBytes } from './app-offload-dt.ts';

export interface LiveAppOffloadOptions {
  readonly app: 'rta' | 'dt';
  readonly packetSizes: readonly number[];
  readonly placements: readonly OffloadPlacement[];
  readonly seed: number;
  /** Wall time of closed-loop load per point (RTA: the stream is sized to take about this long). */
  readonly durationMs: number;
  /** Requests (RTA) or clients (DT) in flight. */
  readonly outstanding?: number;
  readonly nicCores?: number;
  readonly hostCores?: number;
  readonly onPoint?: (done: number, total: number) => void;
}

interface NodeStats {
  readonly handlerNs: { readonly nic: number; readonly host: number };
  /** Migrations over the node's life (its `migrations` list keeps only the last 256). */
  readonly migrationsTotal: number;
  readonly executed: Readonly<Record<string, { readonly nic: number; readonly host: number }>>;
}

async function nodeStats(admin: string): Promise<NodeStats> {
  const response = await fetch(new URL('/stats', admin));
  if (!response.ok) throw new ConfigError('admin', `${admin}/stats answered ${response.status}`);
  return (await response.json()) as NodeStats;
}

/** What one driven window measured (operations answered, their latencies). */
interface Drive {
  readonly operations: number;
  readonly seconds: number;
  readonly latenciesUs: number[];
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function roleOf(app: 'rta' | 'dt', nodeId: number): string {
  return app === 'rta' ? 'worker' : nodeId === 0 ? 'coordinator' : 'participant';
}

/** One cluster: spec for the placement, started, configured, driven, measured, stopped. */
async function runPoint(
  options: LiveAppOffloadOptions,
  packetSize: number,
  placement: OffloadPlacement,
  dir: string,
): Promise<AppOffloadRow[]> {
  const nodeCount = options.app === 'rta' ? 1 : 3;
  const ports = await freeUdpPorts(nodeCount);
  const nodes = ports.map((port, id) => ({
    id,
    address: '127.0.0.1',
    port,
    nicCores: options.nicCores ?? 1,
    hostCores: options.hostCores ?? 1,
    ...(placement === 'host-only' ? { migration: false } : {}),
  }));
  const onHost = (spec: ClusterSpec): ClusterSpec =>
    placement === 'host-only'
      ? { ...spec, actors: spec.actors.map((actor) => ({ ...actor, domain: 'host' as const })) }
      : spec;
  const rta =
    options.app === 'rta'
      ? rtaWorkload({ config: { counters: 2, rankers: 1 }, packetBytes: packetSize, seed: options.seed })
      : undefined;
  const spec = onHost(
    rta !== undefined ? rtaClusterSpec(rta, { nodes }) : dtClusterSpec({ shards: nodeCount - 1, nodes }),
  );
  const file = join(dir, `cluster-${options.app}-${packetSize}-${placement}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const cluster = await LocalCluster.launch({ file, spec, extraArgs: ['--metrics-port', '0'] });
  try {
    const admins = cluster.nodes.map((node) => {
      if (node.banner.admin === null)
        throw new ConfigError('admin', `node ${node.nodeId} has no admin endpoint`);
      return { nodeId: node.nodeId, admin: node.banner.admin };
    });
    let drive: () => Promise<Drive>;
    let close: () => Promise<void>;
    if (rta !== undefined) {
      const client = await RtaClusterClient.connect(spec, rta);
      await client.configure();
      close = () => client.close();
      drive = async () => {
        // A stream of a few seconds of tweet time; its size, not the clock, ends the window.
        const tuples = rta.generator().takeUntil(Math.max(500, options.durationMs));
        const result = await driveRta(client, rta, tuples, options.outstanding ?? 8);
        if (result.mismatches.length > 0) {
          throw new ConfigError(
            'rta',
            `the live pipeline differed from the reference: ${result.mismatches[0]}`,
          );
        }
        return { operations: result.requests, seconds: result.seconds, latenciesUs: result.latenciesUs };
      };
    } else {
      const valueBytes = dtValueBytes(packetSize);
      const workload = fasstWorkload({ keys: 2_000, valueBytes });
      const connection = await DtClusterConnection.connect(spec);
      await connection.setup(
        {
          logPath: join(dir, `coordinator-${packetSize}-${placement}.log`),
          nonce: 1,
          maxValueBytes: Math.max(1024, valueBytes),
        },
        workload.initialData(),
      );
      close = () => connection.close();
      // Client ids are never reused: the coordinator takes a known id's lower sequence numbers for
      // stale duplicates.
      let nextClientId = 10;
      drive = async () => {
        const random = new Random(options.seed, `dt-live-${packetSize}-${placement}`);
        const latenciesUs: number[] = [];
        let committed = 0;
        const endAt = performance.now() + options.durationMs;
        const started = performance.now();
        const clients = Array.from({ length: options.outstanding ?? 4 }, () =>
          connection.client(nextClientId++),
        );
        await Promise.all(
          clients.map(async (client) => {
            while (performance.now() < endAt) {
              const plan = workload.next(random);
              const begun = performance.now();
              const txn = client.begin();
              const values: (Uint8Array | undefined)[] = [];
              for (const key of plan.reads)
                values.push(await withTimeout(txn.read(key), 10_000, 'a DT read'));
              const writes = plan.compute(values);
              plan.writeKeys.forEach((key, index) => {
                txn.write(key, writes[index] as Uint8Array);
              });
              const outcome = await withTimeout(txn.commit(), 10_000, 'a DT commit');
              if (outcome.outcome === 'committed') {
                committed++;
                latenciesUs.push((performance.now() - begun) * 1_000);
              }
            }
          }),
        );
        for (const client of clients) client.close();
        return { operations: committed, seconds: (performance.now() - started) / 1_000, latenciesUs };
      };
    }
    try {
      // A first window warms the cores (module loading, JIT) and lets the scheduler settle where
      // the actors run; only the second is measured. RTA's stream is finished by its first drive,
      // so its warm-up is the configure round trip alone.
      if (options.app === 'dt') await drive();
      const before = await Promise.all(admins.map((a) => nodeStats(a.admin)));
      const measured = await drive();
      const after = await Promise.all(admins.map((a) => nodeStats(a.admin)));
      const latencies = [...measured.latenciesUs].sort((a, b) => a - b);
      const avgLatencyUs =
        latencies.length === 0 ? null : latencies.reduce((sum, v) => sum + v, 0) / latencies.length;
      const throughputMops = measured.operations / measured.seconds / 1e6;
      const windowNs = measured.seconds * 1e9;
      const roles = new Map<
        string,
        { host: number; nic: number; nodes: number; migrations: number; onHost: string[] }
      >();
      admins.forEach((a, index) => {
        const role = roleOf(options.app, a.nodeId);
        const was = before[index] as NodeStats;
        const now = after[index] as NodeStats;
        const entry = roles.get(role) ?? { host: 0, nic: 0, nodes: 0, migrations: 0, onHost: [] };
        // Where each actor's requests ran during the window: mostly on the host counts as on the host.
        for (const [name, counts] of Object.entries(now.executed)) {
          const earlier = was.executed[name] ?? { nic: 0, host: 0 };
          if (counts.host - earlier.host > counts.nic - earlier.nic) entry.onHost.push(name);
        }
        entry.host += (now.handlerNs.host - was.handlerNs.host) / windowNs;
        entry.nic += (now.handlerNs.nic - was.handlerNs.nic) / windowNs;
        entry.migrations += now.migrationsTotal - was.migrationsTotal;
        entry.nodes++;
        roles.set(role, entry);
      });
      return [...roles.entries()].map(([role, r]) => {
        const hostCores = r.host / r.nodes;
        return {
          app: options.app,
          role,
          packetSize,
          placement,
          nodes: r.nodes,
          hostCores,
          nicCores: r.nic / r.nodes,
          offeredMops: throughputMops,
          throughputMops,
          perCoreMops: hostCores > 0 ? throughputMops / hostCores : null,
          avgLatencyUs,
          p99LatencyUs: latencies.length === 0 ? null : percentile(latencies, 0.99),
          capacityMops: throughputMops,
          answered: measured.operations,
          refused: 0,
          migrations: r.migrations,
          actorsOnHost: r.onHost.join(' '),
        };
      });
    } finally {
      await close();
    }
  } finally {
    await cluster.stopAll();
  }
}

/** `promise`, or a ConfigError once `ms` pass (a cluster that stopped answering ends the run). */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConfigError('live', `${what} got no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every (packet size, placement) point on live clusters; rows as the simulator's experiment. */
export async function runLiveAppOffload(options: LiveAppOffloadOptions): Promise<AppOffloadResult> {
  const dir = mkdtempSync(join(tmpdir(), `ipipe-live-${options.app}-`));
  const rows: AppOffloadRow[] = [];
  const total = options.packetSizes.length * options.placements.length;
  let done = 0;
  try {
    for (const packetSize of options.packetSizes) {
      for (const placement of options.placements) {
        rows.push(...(await runPoint(options, packetSize, placement, dir)));
        options.onPoint?.(++done, total);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    schemaVersion: APP_OFFLOAD_SCHEMA_VERSION,
    experiment: 'app-offload',
    app: options.app,
    nic: 'live',
    seed: options.seed,
    workload: {
      platform: 'live',
      closedLoop: true,
      hostCoresMeasure: 'handler ns on host cores per second',
      ...(options.app === 'dt'
        ? { transaction: 'FaSST: read 2, write 1', keys: 2_000 }
        : { stream: 'seeded tweets' }),
    },
    method: {
      loadFraction: 1,
      outstanding: options.outstanding ?? (options.app === 'rta' ? 8 : 4),
      durationNs: options.durationMs * 1e6,
      warmupNs: 0,
      probeNs: 0,
      hostPacketIo: false,
      nicCores: options.nicCores ?? 1,
      hostCoresAvailable: options.hostCores ?? 1,
    },
    results: rows,
  };
}
