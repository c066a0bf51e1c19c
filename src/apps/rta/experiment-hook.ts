/**
 * The experiment hook: RTA's actors on a simulated node, for one packet size, and the client
 * requests that drive them (iPipe §5: "RTA: one worker per server", "tuples per request grow with
 * packet size"; the host-core, latency–throughput and migration experiments run RTA this way).
 *
 * An experiment builds its own EventKernel and SimNode (the NIC profile, scheduler settings, how
 * many cores), then:
 *
 *   const rta = registerRtaOnSimNode(node, { packetBytes: 512, seed });   // registers the actors
 *   rta.configure((failure) => { ... start the load ... });                 // configure chain
 *   kernel.run({});                                                         // or run with untilNs
 *   const stream = rta.stream();                                            // endless requests
 *   rta.send(stream.next(), sink, { atNs });                                // open or closed loop
 *   rta.finish(() => rta.readResults((windows) => ...));                    // close every window
 *
 * Everything here is callback-driven, like SimNode itself: nothing runs the kernel behind the
 * caller's back, so the hook composes with the experiment's own traffic sources and `untilNs`.
 * (For a node that is otherwise idle, `configureNow` runs the kernel until configured.)
 *
 * Only types come from the simulator: the hook calls methods on the node it is given, so the app
 * keeps its one-way dependency on the platform.
 */

import type { ActorRef } from '../../actor/actor-ref.ts';
import type { AnyActorDefinition } from '../../actor/define-actor.ts';
import type { ActorId } from '../../ids.ts';
import type { ClientSendOptions, ReplySink, SimNode } from '../../platform/sim/sim-node.ts';
import type { Domain } from '../../sched/types.ts';
import { RtaConfigError } from './errors.ts';
import type { AggregatorReply } from './messages.ts';
import type { ReferenceWindow } from './reference.ts';
import type { RtaTuple } from './tuple.ts';
import {
  type RtaActorPlan,
  type RtaRequest,
  type RtaRequestStream,
  type RtaRole,
  type RtaSend,
  type RtaWorkload,
  type RtaWorkloadOptions,
  rtaWorkload,
} from './workload.ts';

/** Options of `registerRtaOnSimNode`: the workload's, plus where the actors start. */
export interface RtaSimOptions extends RtaWorkloadOptions {
  /**
   * Where the actors start: one side for all, or per role (default: all on the NIC). The
   * host-only baseline registers everything on the host and runs the node with migration off.
   */
  readonly domain?: Domain | Partial<Readonly<Record<RtaRole, Domain>>>;
  /**
   * The definition to register for each planned actor (default `plan.definition`): an experiment
   * may wrap one, e.g. to mark which of the filter's messages are client-facing.
   */
  readonly definitionFor?: (plan: RtaActorPlan) => AnyActorDefinition;
}

/** One completed window as the aggregating ranker reports it. */
export interface RtaReportedWindow {
  readonly windowEndMs: number;
  readonly totalCount: number;
  readonly distinctKeys: number;
  readonly entries: readonly { readonly key: string; readonly count: number }[];
}

/** Called once a chain of messages is answered; `failure` says which one was refused. */
export type RtaDone = (failure?: string) => void;

/** RTA registered on one SimNode. */
export interface RtaOnSimNode {
  readonly workload: RtaWorkload;
  readonly node: SimNode;
  /** Instance name → actor id, for the rows of decisions and migrations. */
  readonly actorIds: ReadonlyMap<string, ActorId>;
  /** The typed handle of an instance (throws RtaConfigError for an unknown name). */
  ref(instance: string): ActorRef<unknown, unknown>;
  /** Sends the configure messages in order, each after the previous one is answered. */
  configure(done?: RtaDone): void;
  /**
   * `configure`, then runs the kernel until the node is idle. Only for a node with nothing else
   * scheduled (before the experiment's load starts). Throws RtaConfigError if a configure failed.
   */
  configureNow(): void;
  /** Sends one client request in a frame of its packet size; returns the request id. */
  send(request: RtaRequest, sink: ReplySink, options?: ClientSendOptions): number;
  /** An endless request stream from the seeded generator, packed to the packet size. */
  stream(): RtaRequestStream;
  /** `tuples` as requests, packed to the packet size, round-robin over the filters. */
  requests: RtaWorkload['requests'];
  /** The end-of-stream advances: every remaining window closes; `done` when all are answered. */
  finish(done?: RtaDone): void;
  /** Sends any one message to an instance; `answer` gets the reply (undefined when refused). */
  call(instance: string, message: unknown, answer: (reply: unknown) => void): void;
  /** Reads every completed window back from the aggregating ranker (paging `windows`, then `query`). */
  readResults(done: (windows: RtaReportedWindow[]) => void): void;
}

function domainFor(role: RtaRole, domain: RtaSimOptions['domain']): Domain {
  if (domain === undefined) return 'nic';
  if (typeof domain === 'string') return domain;
  return domain[role] ?? 'nic';
}

/**
 * Registers RTA's actors (`workload.actors`, in order) on `node` and returns the handle the
 * experiment drives. Throws RtaConfigError / RtaFilterPatternError for a bad configuration, before
 * anything is registered.
 */
export function registerRtaOnSimNode(node: SimNode, options: RtaSimOptions = {}): RtaOnSimNode {
  const workload = rtaWorkload(options);
  const refs = new Map<string, ActorRef<unknown, unknown>>();
  const actorIds = new Map<string, ActorId>();
  for (const actor of workload.actors) {
    const definition = options.definitionFor?.(actor) ?? actor.definition;
    const ref = node.register(definition, {
      name: actor.instance,
      domain: domainFor(actor.role, options.domain),
    }) as ActorRef<unknown, unknown>;
    refs.set(actor.instance, ref);
    actorIds.set(actor.instance, ref.id);
  }

  const ref = (instance: string): ActorRef<unknown, unknown> => {
    const found = refs.get(instance);
    if (found === undefined) {
      throw new RtaConfigError('instance', `"${instance}" is not one of ${[...refs.keys()].join(', ')}`);
    }
    return found;
  };

  const call = (instance: string, message: unknown, answer: (reply: unknown) => void): void => {
    node.clientSend(ref(instance), message, (_id, _latencyNs, ok, reply) => answer(ok ? reply : undefined));
  };

  /** Sends `sends` one after another; stops at the first refusal. */
  const chain = (sends: readonly RtaSend[], done: RtaDone | undefined): void => {
    let index = 0;
    const next = (): void => {
      const send = sends[index++];
      if (send === undefined) {
        done?.();
        return;
      }
      call(send.instance, send.message, (reply) => {
        if (reply === undefined) done?.(`${send.instance} refused its ${send.message.type} message`);
        else next();
      });
    };
    next();
  };

  const readResults = (done: (windows: RtaReportedWindow[]) => void): void => {
    const aggregator = workload.instances.aggregator;
    const ends: number[] = [];
    const windows: RtaReportedWindow[] = [];
    const query = (index: number): void => {
      const windowEndMs = ends[index];
      if (windowEndMs === undefined) {
        done(windows);
        return;
      }
      call(aggregator, { type: 'query', windowEndMs }, (reply) => {
        const ranking = reply as Extract<AggregatorReply, { type: 'ranking' }> | undefined;
        if (ranking !== undefined && ranking.state === 'complete') {
          windows.push({
            windowEndMs,
            totalCount: ranking.totalCount,
            distinctKeys: ranking.distinctKeys,
            entries: ranking.entries.map((e) => ({ key: e.key, count: e.count })),
          });
        }
        query(index + 1);
      });
    };
    const page = (afterMs: number): void => {
      call(aggregator, { type: 'windows', afterMs, limit: 128 }, (reply) => {
        const list = reply as Extract<AggregatorReply, { type: 'windowList' }> | undefined;
        const got = list?.windowEndsMs ?? [];
        ends.push(...got);
        if (list?.more === true && got.length > 0) page(got[got.length - 1]!);
        else query(0);
      });
    };
    page(Number.NEGATIVE_INFINITY);
  };

  return Object.freeze({
    workload,
    node,
    actorIds,
    ref,
    configure: (done?: RtaDone) => chain(workload.setup, done),
    configureNow(): void {
      let outcome: { failure: string | undefined } | undefined;
      chain(workload.setup, (failure) => {
        outcome = { failure };
      });
      node.kernel.run({});
      if (outcome === undefined || outcome.failure !== undefined) {
        throw new RtaConfigError(
          'setup',
          `${outcome?.failure ?? 'the configure messages were not all answered'}; register RTA on a node ` +
            'with room for its actors and nothing else scheduled, or use configure(done) instead',
        );
      }
    },
    send: (request: RtaRequest, sink: ReplySink, sendOptions?: ClientSendOptions) =>
      node.clientSend(ref(request.instance), request.message, sink, request.packetBytes, sendOptions),
    stream: () => workload.stream(),
    requests: (tuples: readonly RtaTuple[]) => workload.requests(tuples),
    finish: (done?: RtaDone) => chain(workload.finish, done),
    call,
    readResults,
  });
}

/**
 * Where `reported` differs from `reference` (per window: the window set, total count, distinct
 * keys, the top n in order), as readable lines; empty when they agree. For an experiment's own
 * correctness check ("counts stay right") without node:assert.
 */
export function compareWithReference(
  reported: readonly RtaReportedWindow[],
  reference: readonly ReferenceWindow[],
): string[] {
  const problems: string[] = [];
  const byEnd = new Map(reported.map((w) => [w.windowEndMs, w]));
  for (const want of reference) {
    const got = byEnd.get(want.windowEndMs);
    byEnd.delete(want.windowEndMs);
    if (got === undefined) {
      problems.push(`window ending at ${want.windowEndMs} ms: missing`);
      continue;
    }
    if (got.totalCount !== want.totalCount || got.distinctKeys !== want.distinctKeys) {
      problems.push(
        `window ending at ${want.windowEndMs} ms: ${got.totalCount} tuples over ${got.distinctKeys} keys, ` +
          `expected ${want.totalCount} over ${want.distinctKeys}`,
      );
    }
    const gotTop = got.entries.map((e) => `${e.key}:${e.count}`).join(' ');
    const wantTop = want.top.map((e) => `${e.key}:${e.count}`).join(' ');
    if (gotTop !== wantTop) {
      problems.push(`window ending at ${want.windowEndMs} ms: top [${gotTop}], expected [${wantTop}]`);
    }
  }
  for (const extra of byEnd.keys()) problems.push(`window ending at ${extra} ms: reported but not expected`);
  return problems;
}
