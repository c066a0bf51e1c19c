/**
 * The showcase's live RKV part: a three-replica cluster of real processes (`cluster up rkv`'s
 * supervisor, a temporary data directory), the paper's workload over the Redis protocol from
 * closed-loop clients on every replica, the leader SIGKILLed mid-run, and the whole client
 * history checked for linearizability at the end — so "no acknowledged write lost, no stale read"
 * is a verdict over every operation, not a spot check.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RkvLoadResult, runRkvRespLoad } from '../apps/rkv/cluster/resp-load.ts';
import { ClusterSupervisor } from '../apps/rkv/cluster/supervisor.ts';

export interface RkvLiveShowcaseOptions {
  readonly seed: number;
  /** Closed-loop clients, dealt over the replicas. Default 9. */
  readonly clients?: number;
  /** Load time. Default 4000 ms. */
  readonly durationMs?: number;
  /** When the leader is killed, from the start of the load. Default 1500 ms. */
  readonly killAtMs?: number;
  readonly valueBytes?: number;
}

export interface RkvLiveShowcaseResult {
  readonly seed: number;
  readonly replicas: readonly {
    readonly replicaId: number;
    readonly pid: number;
    readonly respPort: number;
  }[];
  readonly electionTimeoutMs: { readonly min: number; readonly max: number };
  readonly firstLeader: number;
  readonly killedAtMs: number;
  readonly newLeader: number;
  /** From the SIGKILL until a survivor reported leading. */
  readonly electedAfterMs: number;
  readonly load: RkvLoadResult;
}

const TIMING = { heartbeatMs: 50, electionTimeoutMinMs: 400, electionTimeoutMaxMs: 800 } as const;

export async function runRkvLiveShowcase(options: RkvLiveShowcaseOptions): Promise<RkvLiveShowcaseResult> {
  const durationMs = options.durationMs ?? 4_000;
  const killAtMs = options.killAtMs ?? 1_500;
  const dataDir = mkdtempSync(join(tmpdir(), 'ipipe-showcase-rkv-'));
  let supervisor: ClusterSupervisor | null = null;
  try {
    supervisor = await ClusterSupervisor.start({
      replicas: 3,
      shards: 1,
      dataDir,
      respPort: 0,
      seed: options.seed,
      timing: TIMING,
      requestTimeoutMs: 4_000,
    });
    const running = supervisor;
    const firstLeader = await running.waitForLeader(0);
    const replicas = running.replicas().map(({ replicaId, pid, respPort }) => ({ replicaId, pid, respPort }));
    const loading = runRkvRespLoad({
      ports: replicas.map((replica) => replica.respPort),
      clients: options.clients ?? 9,
      durationMs,
      warmupMs: 0,
      valueBytes: options.valueBytes ?? 256,
      seed: options.seed,
      timeoutMs: 4_000,
    });
    const started = performance.now();
    await new Promise((wake) => setTimeout(wake, killAtMs));
    const killedAt = performance.now();
    await running.kill(firstLeader, 'SIGKILL');
    const newLeader = await running.waitForLeader(0, 20_000);
    const electedAfterMs = performance.now() - killedAt;
    const load = await loading;
    return {
      seed: options.seed,
      replicas,
      electionTimeoutMs: { min: TIMING.electionTimeoutMinMs, max: TIMING.electionTimeoutMaxMs },
      firstLeader,
      killedAtMs: killedAt - started,
      newLeader,
      electedAfterMs,
      load,
    };
  } finally {
    await supervisor?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
