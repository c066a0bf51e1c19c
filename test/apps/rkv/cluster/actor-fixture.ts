/**
 * The start every live RKV-actor test shares: a temporary directory holding the cluster file of
 * three durable nodes on free loopback ports (one NIC core each). Launching is the test's own step
 * (some launch twice, or later).
 */

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rkvActorClusterSpec } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import type { ClusterSpec } from '../../../../src/platform/live/cluster/cluster-file.ts';
import type { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { freeUdpPort } from '../../../platform/live/free-port.ts';

export interface ActorClusterFiles {
  readonly dir: string;
  readonly spec: ClusterSpec;
  /** The cluster file in `dir`, as LocalCluster.launch takes it. */
  readonly file: string;
}

export async function writeActorCluster(prefix: string, shards = 1): Promise<ActorClusterFiles> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const ports = [await freeUdpPort(), await freeUdpPort(), await freeUdpPort()];
  const spec = rkvActorClusterSpec(
    { nodes: ports.map((port, id) => ({ id, address: '127.0.0.1', port, nicCores: 1 })) },
    { durable: true, shards },
  );
  const file = join(dir, 'cluster.json');
  writeFileSync(file, JSON.stringify(spec));
  return { dir, spec, file };
}

/**
 * A `bytes`-long value distinct per (seed, index) — its first bytes say which — so a read that
 * returns another key's value, or another run's, shows.
 */
export function distinctValue(seed: number, index: number, bytes: number): Uint8Array {
  const value = new Uint8Array(bytes).fill(97 + ((index + seed) % 26));
  value.set(new TextEncoder().encode(`${seed}:${index}:`), 0);
  return value;
}

/** The peer and drop counters a node's admin `/stats` reports (the fields these tests read). */
export interface PeerStats {
  readonly drops: Readonly<Record<string, number>>;
  readonly peer: { readonly sent: number; readonly fragmented: number; readonly reassembled: number };
}

/** Node `node`'s `/stats` (its cluster must run with `--metrics-port`). */
export async function nodeStats(cluster: LocalCluster, node: number): Promise<PeerStats> {
  const admin = cluster.node(node)?.banner.admin;
  assert.ok(admin, `node ${node} serves /stats`);
  return (await (await fetch(new URL('/stats', admin))).json()) as PeerStats;
}

/**
 * Each node's stderr as the cluster runs (`onStderr` goes to `LocalCluster.launch`), kept whole or
 * only its last `keepChars`; `printTails` writes each node's last 3000 characters, for a failing
 * test's report (a stuck replica says why there).
 */
export class NodeStderrs {
  readonly text = new Map<number, string>();
  readonly #keepChars: number;

  constructor(keepChars = Number.POSITIVE_INFINITY) {
    this.#keepChars = keepChars;
  }

  readonly onStderr = (node: number, text: string): void => {
    const all = (this.text.get(node) ?? '') + text;
    this.text.set(node, all.length > this.#keepChars ? all.slice(-this.#keepChars) : all);
  };

  printTails(): void {
    for (const [node, text] of this.text)
      process.stderr.write(`node ${node} stderr tail:\n${text.slice(-3000)}\n`);
  }
}

/** `mark(what)` writes `<ms since this call> ms: <what>` to stderr: a long test's timeline. */
export function stopwatch(): (what: string) => void {
  const t0 = performance.now();
  return (what) => process.stderr.write(`${(performance.now() - t0).toFixed(0)} ms: ${what}\n`);
}
