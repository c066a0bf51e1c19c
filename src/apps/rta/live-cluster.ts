/**
 * RTA on a cluster of live nodes (issue 6: "live via `ipipe cluster up rta` and `ipipe load`"):
 * which node hosts which worker, how the pipeline is configured over the wire, and a driver that
 * streams the seeded tuples, ends the stream, reads every window back from the aggregator and
 * compares it with the reference computation.
 *
 *   node 0: filters + aggregator         node 1 … n−1: counters and rankers, dealt round-robin
 *   clients ──UDP──▶ filters ──PEER──▶ counters ──PEER──▶ rankers ──PEER──▶ aggregator
 *
 * With one node everything runs on it. The actors address each other by instance name (the
 * topology table), so which node a worker lives on is only a line of the cluster file.
 */

import type { AnyActorDefinition } from '../../actor/define-actor.ts';
import { ConfigError } from '../../errors.ts';
import { type ClusterSpec, parseClusterSpec } from '../../platform/live/cluster/cluster-file.ts';
import { connectToNodes } from '../../platform/live/cluster/node-clients.ts';
import type { IpipeClient } from '../../platform/live/net/client.ts';
import { compareWithReference, type RtaReportedWindow } from './experiment-hook.ts';
import type { AggregatorReply } from './messages.ts';
import type { RtaTuple } from './tuple.ts';
import type { RtaWorkload } from './workload.ts';

export interface RtaClusterLayout {
  readonly nodes: readonly {
    readonly id: number;
    readonly address: string;
    readonly port: number;
    readonly nicCores?: number;
    readonly hostCores?: number;
  }[];
}

/** The cluster file for `workload` over `layout.nodes` (ids 1, 2, … in the workload's actor order). */
export function rtaClusterSpec(workload: RtaWorkload, layout: RtaClusterLayout): ClusterSpec {
  if (layout.nodes.length === 0) throw new ConfigError('nodes', 'an RTA cluster needs at least one node');
  const first = layout.nodes[0]?.id as number;
  const workers = layout.nodes.length > 1 ? layout.nodes.slice(1) : layout.nodes;
  let dealt = 0;
  const actors = workload.actors.map((actor) => {
    const node =
      actor.role === 'filter' || actor.role === 'aggregator'
        ? first
        : (workers[dealt++ % workers.length]?.id as number);
    return { name: actor.instance, module: workload.actorsModule, exportName: actor.exportName, node };
  });
  return parseClusterSpec({ schemaVersion: 1, nodes: layout.nodes, actors });
}

/** Talks to each RTA instance through the node that hosts it (one UDP client per node). */
export class RtaClusterClient {
  readonly #spec: ClusterSpec;
  readonly #workload: RtaWorkload;
  readonly #clients: Map<number, IpipeClient>;

  private constructor(spec: ClusterSpec, workload: RtaWorkload, clients: Map<number, IpipeClient>) {
    this.#spec = spec;
    this.#workload = workload;
    this.#clients = clients;
  }

  static async connect(
    spec: ClusterSpec,
    workload: RtaWorkload,
    options: { readonly timeoutMs?: number; readonly retries?: number } = {},
  ): Promise<RtaClusterClient> {
    const clients = await connectToNodes(spec, {
      timeoutMs: options.timeoutMs ?? 2_000,
      retries: options.retries ?? 3,
    });
    return new RtaClusterClient(spec, workload, clients);
  }

  /** Sends `message` to `instance` and resolves with its answer. */
  async call(instance: string, message: unknown): Promise<unknown> {
    const entry = this.#spec.actors.find((actor) => actor.name === instance);
    const plan = this.#workload.actors.find((actor) => actor.instance === instance);
    if (entry === undefined || plan === undefined) {
      throw new ConfigError('instance', `no RTA instance "${instance}" in this cluster`);
    }
    const definition: AnyActorDefinition = plan.definition;
    const client = this.#clients.get(entry.node) as IpipeClient;
    const replies = definition.replies;
    if (replies === undefined) throw new ConfigError('instance', `${instance} does not answer`);
    return client.call(entry.id as number, definition.messages, replies, message);
  }

  /** Configures every worker (filters learn the counters, counters the rankers, …), in order. */
  async configure(): Promise<void> {
    for (const send of this.#workload.setup) await this.call(send.instance, send.message);
  }

  /** Ends the stream at every filter, so every window closes. */
  async finish(): Promise<void> {
    for (const send of this.#workload.finish) await this.call(send.instance, send.message);
  }

  /**
   * Waits until the aggregator has closed every window (after `finish`, the counters close theirs
   * on their timers and the rankings travel on); false if `timeoutMs` passed first.
   */
  async settle(timeoutMs = 10_000): Promise<boolean> {
    type Status = Extract<AggregatorReply, { type: 'status' }>;
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const status = (await this.call(this.#workload.instances.aggregator, { type: 'status' })) as Status;
      if (status.closedThroughMs === Number.POSITIVE_INFINITY) return true;
      if (performance.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Every complete window the aggregator holds, in order. */
  async windows(): Promise<RtaReportedWindow[]> {
    const aggregator = this.#workload.instances.aggregator;
    type WindowList = Extract<AggregatorReply, { type: 'windowList' }>;
    type Ranking = Extract<AggregatorReply, { type: 'ranking' }>;
    const ends: number[] = [];
    let after = Number.NEGATIVE_INFINITY;
    for (;;) {
      const page = (await this.call(aggregator, {
        type: 'windows',
        afterMs: after,
        limit: 128,
      })) as WindowList;
      ends.push(...page.windowEndsMs);
      if (!page.more || page.windowEndsMs.length === 0) break;
      after = page.windowEndsMs[page.windowEndsMs.length - 1] as number;
    }
    const reported: RtaReportedWindow[] = [];
    for (const windowEndMs of ends) {
      const ranking = (await this.call(aggregator, { type: 'query', windowEndMs })) as Ranking;
      if (ranking.state !== 'complete') continue;
      reported.push({
        windowEndMs,
        totalCount: ranking.totalCount,
        distinctKeys: ranking.distinctKeys,
        entries: ranking.entries.map((e) => ({ key: e.key, count: e.count })),
      });
    }
    return reported;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
  }
}

/** What one drive of the pipeline measured. */
export interface RtaDriveResult {
  readonly requests: number;
  readonly tuples: number;
  readonly seconds: number;
  readonly requestsPerSec: number;
  readonly tuplesPerSec: number;
  readonly latencyUs: {
    readonly avg: number;
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly windows: number;
  /** Where the windows differ from the reference computation (empty: they are equal). */
  readonly mismatches: readonly string[];
  /** Every request's latency, sorted (µs). */
  readonly latenciesUs: number[];
}

/**
 * Streams `tuples` as ingest requests with `inFlight` outstanding, ends the stream, reads every
 * window back and compares with the reference. The pipeline must be configured first.
 */
export async function driveRta(
  client: RtaClusterClient,
  workload: RtaWorkload,
  tuples: readonly RtaTuple[],
  inFlight = 8,
): Promise<RtaDriveResult> {
  const requests = workload.requests(tuples);
  const latenciesUs: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (;;) {
      const request = requests[next++];
      if (request === undefined) return;
      const sent = performance.now();
      await client.call(request.instance, request.message);
      latenciesUs.push((performance.now() - sent) * 1_000);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, inFlight) }, worker));
  const seconds = (performance.now() - started) / 1_000;
  await client.finish();
  const settled = await client.settle();
  const reported = await client.windows();
  const mismatches = compareWithReference(reported, workload.reference(tuples));
  if (!settled)
    mismatches.unshift('the aggregator did not close every window within 10 s of the end of stream');
  latenciesUs.sort((a, b) => a - b);
  const pick = (q: number) =>
    latenciesUs[Math.min(latenciesUs.length - 1, Math.floor(q * latenciesUs.length))] ?? 0;
  const sum = latenciesUs.reduce((a, b) => a + b, 0);
  return {
    requests: requests.length,
    tuples: tuples.length,
    seconds,
    requestsPerSec: requests.length / seconds,
    tuplesPerSec: tuples.length / seconds,
    latencyUs: {
      avg: latenciesUs.length === 0 ? 0 : sum / latenciesUs.length,
      p50: pick(0.5),
      p99: pick(0.99),
      max: latenciesUs[latenciesUs.length - 1] ?? 0,
    },
    windows: reported.length,
    mismatches,
    latenciesUs,
  };
}
