/**
 * Drives the RTA pipeline on each platform the same way — configure, stream, finish, read every
 * window back from the aggregator — and compares what it reports with the reference computation.
 * Not a test file: the pipeline-*.test.ts files use it.
 */

import assert from 'node:assert/strict';
import type { ActorRef } from '../../../src/actor/actor-ref.ts';
import type { AggregatorReply, ReferenceWindow, RtaWorkload } from '../../../src/apps/rta/index.ts';
import { hostOf } from '../../../src/hw/load-profile.ts';
import { LIQUIDIO_CN2350 } from '../../../src/hw/profiles.ts';
import { type ActorId, actorId } from '../../../src/ids.ts';
import { IpipeClient } from '../../../src/platform/live/net/client.ts';
import { LiveNode, type LiveNodeOptions } from '../../../src/platform/live/node/live-node.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { timingFor } from '../../../src/platform/sim/hardware-timing.ts';
import { SimNode, type SimNodeOptions } from '../../../src/platform/sim/sim-node.ts';
import type { SimTiming } from '../../../src/platform/sim/timing.ts';
import { LocalRuntime } from '../../../src/runtime/local-runtime.ts';

/** Sends one message to an instance and returns its answer. */
export type Call = (instance: string, message: unknown) => Promise<unknown>;

/** One window as the aggregator reports it. */
export interface ReportedWindow {
  readonly windowEndMs: number;
  readonly totalCount: number;
  readonly distinctKeys: number;
  readonly entries: readonly { readonly key: string; readonly count: number }[];
}

type Ranking = Extract<AggregatorReply, { type: 'ranking' }>;
type WindowList = Extract<AggregatorReply, { type: 'windowList' }>;
type Status = Extract<AggregatorReply, { type: 'status' }>;

/** Every completed window the aggregator holds, read through `windows` paging and `query`. */
export async function readReported(call: Call, workload: RtaWorkload): Promise<ReportedWindow[]> {
  const aggregator = workload.instances.aggregator;
  const ends: number[] = [];
  let after = Number.NEGATIVE_INFINITY;
  for (;;) {
    const page = (await call(aggregator, { type: 'windows', afterMs: after, limit: 128 })) as WindowList;
    ends.push(...page.windowEndsMs);
    if (!page.more || page.windowEndsMs.length === 0) break;
    after = page.windowEndsMs[page.windowEndsMs.length - 1]!;
  }
  const reported: ReportedWindow[] = [];
  for (const windowEndMs of ends) {
    const ranking = (await call(aggregator, { type: 'query', windowEndMs })) as Ranking;
    assert.equal(ranking.state, 'complete', `window ${windowEndMs} is ${ranking.state}`);
    reported.push({
      windowEndMs,
      totalCount: ranking.totalCount,
      distinctKeys: ranking.distinctKeys,
      entries: ranking.entries.map((e) => ({ key: e.key, count: e.count })),
    });
  }
  return reported;
}

/** The aggregator's status. */
export async function status(call: Call, workload: RtaWorkload): Promise<Status> {
  return (await call(workload.instances.aggregator, { type: 'status' })) as Status;
}

/**
 * Asserts the pipeline reported exactly the reference: the same windows, and per window the same
 * total count, distinct keys and top n (keys and counts, in order).
 */
export function assertMatchesReference(
  reported: readonly ReportedWindow[],
  reference: readonly ReferenceWindow[],
): void {
  assert.ok(reference.length > 0, 'the reference has windows');
  assert.deepEqual(
    reported.map((w) => w.windowEndMs),
    reference.map((w) => w.windowEndMs),
    'the same windows',
  );
  for (let i = 0; i < reference.length; i++) {
    const want = reference[i]!;
    const got = reported[i]!;
    assert.deepEqual(
      { totalCount: got.totalCount, distinctKeys: got.distinctKeys, top: got.entries },
      {
        totalCount: want.totalCount,
        distinctKeys: want.distinctKeys,
        top: want.top.map((e) => ({ key: e.key, count: e.count })),
      },
      `window ending at ${want.windowEndMs} ms`,
    );
  }
}

/** Every counter's and ranker's stats, to check nothing was late or out of order. */
export async function assertNothingLate(call: Call, workload: RtaWorkload): Promise<void> {
  for (const counter of workload.instances.counters) {
    const stats = (await call(counter, { type: 'stats' })) as { late: number; openPanes: number };
    assert.equal(stats.late, 0, `${counter}: no late tuples`);
    assert.equal(stats.openPanes, 0, `${counter}: every pane freed after the end of stream`);
  }
  for (const ranker of workload.instances.rankers) {
    const stats = (await call(ranker, { type: 'stats' })) as { lateParts: number; openWindows: number };
    assert.equal(stats.lateParts, 0, `${ranker}: no count arrived after its window was ranked`);
    assert.equal(stats.openWindows, 0, `${ranker}: every window handed on`);
  }
  const aggregator = await status(call, workload);
  assert.equal(aggregator.lateReports, 0, 'aggregator: no late rankings');
  assert.equal(
    aggregator.closedThroughMs,
    Number.POSITIVE_INFINITY,
    'aggregator: closed through the end of stream',
  );
}

// ── LocalRuntime ───────────────────────────────────────────────────────────────────────────────

/** The pipeline on a LocalRuntime; `step` hooks run between requests (e.g. a relocation). */
export class LocalRta {
  readonly runtime: LocalRuntime;
  readonly refs = new Map<string, ActorRef<unknown, unknown>>();
  #requestId = 1;

  constructor(workload: RtaWorkload, regionBytes = 4 * 1024 * 1024) {
    this.runtime = new LocalRuntime({ regionBytes, maxActors: 64 });
    for (const actor of workload.actors) {
      this.refs.set(actor.instance, this.runtime.spawn(actor.definition, actor.instance));
    }
  }

  ref(instance: string): ActorRef<unknown, unknown> {
    const ref = this.refs.get(instance);
    assert.ok(ref, `no instance ${instance}`);
    return ref;
  }

  /** Synchronous call: the request, then everything it causes at this instant. */
  callNow(instance: string, message: unknown): unknown {
    const requestId = this.#requestId++;
    this.runtime.request(this.ref(instance), message, requestId);
    this.runtime.runUntilIdle();
    const reply = this.runtime.replies.find((r) => r.requestId === requestId);
    assert.ok(reply, `${instance} answered ${JSON.stringify(message).slice(0, 80)}`);
    return reply.message;
  }

  readonly call: Call = async (instance, message) => this.callNow(instance, message);

  /** Moves the clock (in ms) so the counters' timers fire. */
  advanceMs(ms: number): void {
    this.runtime.advanceTo(this.runtime.now() + ms * 1_000_000);
  }
}

// ── SimNode ────────────────────────────────────────────────────────────────────────────────────

/** The calibrated LiquidIO CN2350 with its host: the paper's main card. */
export function liquidioTiming(): SimTiming {
  return timingFor(LIQUIDIO_CN2350, hostOf(LIQUIDIO_CN2350));
}

/** The pipeline on a simulated node. */
export class SimRta {
  readonly kernel = new EventKernel();
  readonly node: SimNode;
  readonly refs = new Map<string, ActorRef<unknown, unknown>>();

  constructor(workload: RtaWorkload, options: Partial<SimNodeOptions> = {}) {
    this.node = new SimNode({ timing: liquidioTiming(), kernel: this.kernel, maxActors: 64, ...options });
    for (const actor of workload.actors) {
      this.refs.set(actor.instance, this.node.register(actor.definition, { name: actor.instance }));
    }
  }

  ref(instance: string): ActorRef<unknown, unknown> {
    const ref = this.refs.get(instance);
    assert.ok(ref, `no instance ${instance}`);
    return ref;
  }

  /** One request, simulated until everything it causes has happened. */
  readonly call: Call = async (instance, message) => {
    let answer: unknown;
    let answered = false;
    this.node.clientSend(this.ref(instance), message, (_id, _latency, ok, reply) => {
      assert.ok(ok, `${instance} refused ${JSON.stringify(message).slice(0, 80)}: ${String(reply)}`);
      answered = true;
      answer = reply;
    });
    this.kernel.run({});
    assert.ok(answered, `${instance} answered`);
    return answer;
  };

  /**
   * Streams `requests` with `outstanding` in flight (closed loop); each `onSent` hook may act on
   * the node mid-stream (a forced migration). Runs until every answer is in.
   */
  stream(
    requests: readonly {
      readonly instance: string;
      readonly message: unknown;
      readonly packetBytes: number;
    }[],
    outstanding: number,
    onSent?: (sent: number) => void,
  ): { readonly answered: number; readonly refused: number } {
    let next = 0;
    let answered = 0;
    let refused = 0;
    const send = (): void => {
      const request = requests[next++];
      if (request === undefined) return;
      onSent?.(next);
      this.node.clientSend(
        this.ref(request.instance),
        request.message,
        (_id, latencyNs, ok) => {
          if (ok) {
            answered++;
            this.latenciesNs.push(latencyNs);
          } else refused++;
          send();
        },
        request.packetBytes,
      );
    };
    for (let i = 0; i < outstanding; i++) send();
    this.kernel.run({});
    return { answered, refused };
  }

  /** Latency of every answered `stream` request, in answer order (ns). */
  readonly latenciesNs: number[] = [];
}

// ── LiveNode ───────────────────────────────────────────────────────────────────────────────────

/** The pipeline on a live node (worker-thread cores, UDP client). */
export class LiveRta {
  readonly node: LiveNode;
  readonly client: IpipeClient;
  readonly #workload: RtaWorkload;

  private constructor(workload: RtaWorkload, node: LiveNode, client: IpipeClient) {
    this.#workload = workload;
    this.node = node;
    this.client = client;
  }

  static async start(workload: RtaWorkload, options: Partial<LiveNodeOptions> = {}): Promise<LiveRta> {
    const node = await LiveNode.start({
      catalog: workload.actors.map((actor, index) => ({
        id: actorId(index + 1),
        name: actor.instance,
        module: workload.actorsModule,
        exportName: actor.exportName,
      })),
      nicCores: 2,
      hostCores: 1,
      scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
      ...options,
    });
    try {
      const client = await IpipeClient.connect({
        host: '127.0.0.1',
        port: node.address.port,
        timeoutMs: 2_000,
        retries: 3,
      });
      return new LiveRta(workload, node, client);
    } catch (error) {
      await node.stop();
      throw error;
    }
  }

  id(instance: string): ActorId {
    return this.node.actorId(instance);
  }

  readonly call: Call = async (instance, message) => {
    const plan = this.#workload.actors.find((actor) => actor.instance === instance);
    assert.ok(plan?.definition.replies, `no instance ${instance}`);
    return this.client.call(this.id(instance), plan.definition.messages, plan.definition.replies, message);
  };

  /** Streams `requests` with `inFlight` outstanding; `onSent` may act mid-stream (it is awaited). */
  async stream(
    requests: readonly { readonly instance: string; readonly message: unknown }[],
    inFlight: number,
    onSent?: (sent: number) => Promise<void> | void,
  ): Promise<number> {
    let next = 0;
    let answered = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const index = next++;
        const request = requests[index];
        if (request === undefined) return;
        await onSent?.(index + 1);
        await this.call(request.instance, request.message);
        answered++;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return answered;
  }

  /** Waits (polling the aggregator) until every window is closed after the end of stream. */
  async settle(timeoutMs = 10_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const current = await status(this.call, this.#workload);
      if (current.closedThroughMs === Number.POSITIVE_INFINITY) return;
      assert.ok(
        performance.now() < deadline,
        `still open through ${current.closedThroughMs} ms after ${timeoutMs} ms`,
      );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    await this.client.close();
    await this.node.stop();
  }
}
