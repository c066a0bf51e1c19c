/**
 * RTA in the applications' offload experiment (iPipe §5: "RTA: one worker per server"; "tuples
 * per request grow with packet size"). One simulated server runs the whole pipeline — filter →
 * counters → rankers → aggregator — through RTA's experiment hook (`rtaWorkload`): its actors,
 * its configure messages in dependency order, and its endless generator-driven ingest stream,
 * packed to the packet size under test.
 *
 * Event time follows simulated time: the generator's tuple rate is set to the run's expected
 * request rate × the stream's mean tuples per request, so a window of `windowMs` covers about
 * `windowMs` of simulated traffic and the rankers' work per second is what that window length
 * implies. The experiment's default window is 10 ms sliding by 1 ms (the app's own default is
 * 10 s / 1 s): a run of tens of simulated milliseconds then closes tens of windows. Pass a config
 * to change it (`--app-config`).
 */

import type { ActorRef } from '../actor/actor-ref.ts';
import { parseRtaConfig, type RtaConfig } from '../apps/rta/config.ts';
import type { FilterMessage } from '../apps/rta/messages.ts';
import { rtaWorkload } from '../apps/rta/workload.ts';
import type { NextRequest } from '../platform/sim/traffic.ts';
import {
  type AppDeployContext,
  type AppDeployment,
  type OffloadApp,
  refByName,
  requestTraffic,
  runSetup,
} from './app-offload.ts';

/** RTA's configuration in the experiment unless the user gives one: windows scaled to runs of ms. */
export const RTA_EXPERIMENT_CONFIG = Object.freeze({
  window: Object.freeze({ windowMs: 10, slideMs: 1, latenessMs: 1, tickMs: 1 }),
});

/** Requests drawn to estimate the stream's mean tuples per request (for event-time pacing). */
const PACING_SAMPLE_REQUESTS = 256;

/** RTA's experiment settings (`--app-config` for `ipipe experiment rta`). */
export interface RtaOffloadOptions {
  /** RtaConfigInput merged onto RTA_EXPERIMENT_CONFIG (then the app's defaults). */
  readonly config?: unknown;
}

function isIngest(message: unknown): boolean {
  return (message as FilterMessage).type === 'ingest';
}

/** RTA as an OffloadApp. Throws RtaConfigError / RtaFilterPatternError for a bad config. */
export function rtaOffloadApp(options: RtaOffloadOptions = {}): OffloadApp {
  const base = parseRtaConfig(RTA_EXPERIMENT_CONFIG);
  const config: RtaConfig = parseRtaConfig(options.config ?? {}, base);
  return {
    name: 'rta',
    roles: ['worker'],
    // One request per operation and no retransmission: many in flight only queue.
    probeOutstanding: 256,
    workload: {
      filters: config.filters,
      counters: config.counters,
      rankers: config.rankers,
      topN: config.topN,
      windowMs: config.window.windowMs,
      slideMs: config.window.slideMs,
      tickMs: config.window.tickMs,
      filterPattern: config.filter.pattern,
      filterMode: config.filter.mode,
    },
    deploy(context: AppDeployContext): AppDeployment {
      const seed = Math.floor(context.random.next() * 2 ** 31);
      const sample = rtaWorkload({ config, packetBytes: context.packetBytes, seed }).stream();
      for (let i = 0; i < PACING_SAMPLE_REQUESTS; i++) sample.next();
      const tuplesPerRequest = sample.tuplesSent / PACING_SAMPLE_REQUESTS;
      const workload = rtaWorkload({
        config,
        packetBytes: context.packetBytes,
        seed,
        generator: { tuplesPerSecond: Math.max(1, context.expectedRequestsPerSec * tuplesPerRequest) },
      });
      const node = context.newNode();
      const domain = context.placement === 'host-only' ? { domain: 'host' as const } : {};
      for (const plan of workload.actors) {
        const definition =
          plan.role === 'filter' ? context.clientFacing(plan.definition, isIngest) : plan.definition;
        node.register(definition, { name: plan.instance, ...domain });
      }
      runSetup(
        node,
        workload.setup.map((send) => ({ name: send.instance, message: send.message })),
      );
      const filters = new Map<string, ActorRef<unknown, unknown>>(
        workload.instances.filters.map((name) => [name, refByName(node, name)]),
      );
      const stream = workload.stream();
      const next = (): NextRequest => {
        const request = stream.next();
        return {
          target: filters.get(request.instance) as ActorRef<unknown, unknown>,
          message: request.message,
          packetBytes: request.packetBytes,
        };
      };
      return {
        nodes: [{ role: 'worker', node }],
        start: (plan) => requestTraffic(node, next, plan),
      };
    },
  };
}
