/**
 * The showcase's live RKV part: the simulator's RKV actors on three live node processes (one
 * replica each: consensus and memtable on the node's NIC cores, SSTable reader, compaction and the
 * durable log on its host core; src/apps/rkv/cluster/actor-cluster.ts), the paper's workload over
 * the Redis protocol through a RESP front, the leader's node SIGKILLed mid-run and started again
 * on its files, and the whole client history checked for linearizability at the end — so "no
 * acknowledged write lost, no stale read" is a verdict over every operation, not a spot check.
 * A few of the paper's writes are DELs (tombstones through Multi-Paxos), so their answers — did
 * the key hold a value? — are checked too.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../apps/rkv/cluster/actor-backend.ts';
import {
  type RkvActorClient,
  RkvActorConnection,
  rkvActorClusterSpec,
} from '../apps/rkv/cluster/actor-cluster.ts';
import { type RkvLoadResult, runRkvRespLoad } from '../apps/rkv/cluster/resp-load.ts';
import { compareKeyBytes } from '../apps/rkv/cluster/scan-merge.ts';
import { type RespServerHandle, startRespServer } from '../apps/rkv/resp/server.ts';
import { freeUdpPorts } from '../platform/live/cluster/free-ports.ts';
import { LocalCluster } from '../platform/live/cluster/launch.ts';

export interface RkvLiveShowcaseOptions {
  readonly seed: number;
  /** Closed-loop RESP clients. Default 8. */
  readonly clients?: number;
  /** Load time. Default 5000 ms. */
  readonly durationMs?: number;
  /** When the leader's node is killed, from the start of the load. Default 1500 ms. */
  readonly killAtMs?: number;
  readonly valueBytes?: number;
  /** Fraction of DELs, taken from the paper's 5% of writes. Default 0.02. */
  readonly deleteFraction?: number;
}

export interface RkvLiveShowcaseResult {
  readonly seed: number;
  /** Each node: its process and where its actors run. */
  readonly replicas: readonly {
    readonly replicaId: number;
    readonly pid: number;
    readonly actors: readonly { readonly name: string; readonly domain: string }[];
  }[];
  readonly electionTimeoutMs: { readonly min: number; readonly max: number };
  readonly firstLeader: number;
  readonly killedAtMs: number;
  readonly newLeader: number;
  /** From the SIGKILL until a put committed through a survivor. */
  readonly electedAfterMs: number;
  /** From the SIGKILL until the killed node ran again, set up from its files. */
  readonly rejoinedAfterMs: number;
  readonly load: RkvLoadResult;
  /**
   * After the load, the whole store read back through SCAN (the wire client's pages, every key once
   * and in byte order, checked here) beside DBSIZE, both at the leader of the moment.
   */
  readonly scan: {
    readonly keys: number;
    readonly pages: number;
    readonly pageLimit: number;
    readonly inOrder: boolean;
    readonly dbsize: number;
  };
}

const ELECTION_TIMEOUT_MS = 400;

export async function runRkvLiveShowcase(options: RkvLiveShowcaseOptions): Promise<RkvLiveShowcaseResult> {
  const durationMs = options.durationMs ?? 5_000;
  const killAtMs = options.killAtMs ?? 1_500;
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-showcase-rkv-'));
  const ports = await freeUdpPorts(3);
  const spec = rkvActorClusterSpec(
    { nodes: ports.map((port, id) => ({ id, address: '127.0.0.1', port, nicCores: 1 })) },
    { durable: true },
  );
  const file = join(dir, 'cluster.json');
  writeFileSync(file, JSON.stringify(spec));
  let cluster: LocalCluster | undefined;
  let connection: RkvActorConnection | undefined;
  let front: RespServerHandle | undefined;
  try {
    cluster = await LocalCluster.launch({ file, spec });
    const nodes = cluster;
    connection = await RkvActorConnection.connect(spec);
    await connection.setup({
      heartbeatMs: ELECTION_TIMEOUT_MS / 10,
      electionTimeoutMs: ELECTION_TIMEOUT_MS,
      leader: options.seed % 3,
      dataDir: join(dir, 'data'),
    });
    front = await startRespServer({
      port: 0,
      backend: new ActorKvBackend(connection, { firstClientId: 1 }),
      limits: ACTOR_RESP_LIMITS,
    });
    const probe = connection.client(10_000);
    const probeKey = new TextEncoder().encode('showcase-probe..');
    await probe.put(probeKey, new TextEncoder().encode('0'));
    const firstLeader = probe.leader;
    const replicas = nodes.nodes.map((node) => ({
      replicaId: node.nodeId,
      pid: node.pid,
      actors: node.banner.actors.map((actor) => ({ name: actor.name, domain: actor.domain })),
    }));
    const loading = runRkvRespLoad({
      ports: [front.address.port],
      clients: options.clients ?? 8,
      durationMs,
      warmupMs: 0,
      valueBytes: options.valueBytes ?? 256,
      deleteFraction: options.deleteFraction ?? 0.02,
      seed: options.seed,
      timeoutMs: 8_000,
    });
    const started = performance.now();
    await new Promise((wake) => setTimeout(wake, killAtMs));
    const killedAt = performance.now();
    await nodes.kill(firstLeader);
    await probe.put(probeKey, new TextEncoder().encode('1'), 20_000);
    const electedAfterMs = performance.now() - killedAt;
    await nodes.start(firstLeader);
    await connection.restartReplica(firstLeader);
    const rejoinedAfterMs = performance.now() - killedAt;
    const load = await loading;
    const scan = await scanStore(connection.client(10_000));
    return {
      seed: options.seed,
      replicas,
      electionTimeoutMs: { min: ELECTION_TIMEOUT_MS, max: 2 * ELECTION_TIMEOUT_MS },
      firstLeader,
      killedAtMs: killedAt - started,
      newLeader: probe.leader,
      electedAfterMs,
      rejoinedAfterMs,
      load,
      scan,
    };
  } finally {
    await front?.close({ timeoutMs: 500 });
    await connection?.close();
    await cluster?.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

const SCAN_PAGE_LIMIT = 16;

/** Reads every live key through SCAN pages and checks each comes once, in byte order; then DBSIZE. */
async function scanStore(client: RkvActorClient): Promise<RkvLiveShowcaseResult['scan']> {
  let keys = 0;
  let pages = 0;
  let inOrder = true;
  let previous: Uint8Array | undefined;
  let from: Uint8Array | null = new Uint8Array(0);
  while (from !== null) {
    const page = await client.scan(from, undefined, { limit: SCAN_PAGE_LIMIT, giveUpMs: 20_000 });
    pages++;
    for (const pair of page.pairs) {
      if (previous !== undefined && compareKeyBytes(previous, pair.key) >= 0) inOrder = false;
      previous = pair.key;
      keys++;
    }
    from = page.next;
  }
  return { keys, pages, pageLimit: SCAN_PAGE_LIMIT, inOrder, dbsize: await client.dbsize(0, 20_000) };
}
