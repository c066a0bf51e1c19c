/**
 * RTA as a workload the experiments and the cluster commands can run (iPipe §5: "RTA: one worker
 * per server", "tuples per request grow with packet size"; issue 6, section 4).
 *
 * `rtaWorkload(options)` describes, without touching any platform:
 *   actors    which definition to register under which instance name (and, for a live node's
 *             catalog, the module path and export name), in registration order;
 *   setup     the configure message for every instance, in dependency order (aggregator, rankers,
 *             counters, filters: each resolves its next stage's names when configured);
 *   requests  a finite tuple list as ingest requests packed to the packet size, round-robin over
 *             the filters (each filter's share stays in event-time order);
 *   stream    an endless generator-driven request source for load runs;
 *   finish    the end-of-stream `advance` (watermark +∞) for every filter, which closes every
 *             remaining window;
 *   reference the expected per-window counts and top n (reference.ts).
 * A host places and registers the actors, sends `setup` (awaiting each answer), then requests,
 * then `finish`, and reads results from the aggregator (`query`, `windows`, `status`).
 */

import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ActorDefinition, AnyActorDefinition } from '../../actor/define-actor.ts';
import { rtaAggregator, rtaCounter, rtaFilter, rtaRanker } from './actors.ts';
import { parseRtaConfig, type RtaConfig, type RtaInstanceNames, rtaInstanceNames } from './config.ts';
import { RtaConfigError } from './errors.ts';
import { TweetGenerator, type TweetGeneratorOptions } from './generator.ts';
import type { AggregatorMessage, CounterMessage, FilterMessage, RankerMessage } from './messages.ts';
import { type ReferenceWindow, referenceRta } from './reference.ts';
import {
  INGEST_HEADER_BYTES,
  MAX_TUPLES_PER_REQUEST,
  packTuples,
  REQUEST_OVERHEAD_BYTES,
  type RtaTuple,
  requestFrameBytes,
  tupleWireBytes,
} from './tuple.ts';

/** The path of actors.ts (or actors.js in a build): what a live node's catalog imports. */
export const RTA_ACTORS_MODULE: string = fileURLToPath(
  new URL(`./actors${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/**
 * A definition as the registries take it. `ActorDefinition<M, R>` is not assignable to
 * `ActorDefinition<unknown, unknown>` (its handlers take M, a contravariant position), so the one
 * widening cast lives here; the runtime decodes with the definition's own codec, which keeps the
 * messages an actor receives typed as M.
 */
function widen<M, R>(definition: ActorDefinition<M, R>): AnyActorDefinition {
  return definition as unknown as AnyActorDefinition;
}

/** The paper's packet sizes for RTA's host-core experiment. */
export const RTA_PACKET_SIZES = [64, 256, 512, 1024] as const;

export type RtaRole = 'filter' | 'counter' | 'ranker' | 'aggregator';

/** One actor to register. */
export interface RtaActorPlan {
  readonly instance: string;
  readonly role: RtaRole;
  /** Its export in RTA_ACTORS_MODULE. */
  readonly exportName: 'rtaFilter' | 'rtaCounter' | 'rtaRanker' | 'rtaAggregator';
  readonly definition: AnyActorDefinition;
}

/** A message for one instance, typed by the role it goes to. */
export type RtaSend =
  | { readonly role: 'filter'; readonly instance: string; readonly message: FilterMessage }
  | { readonly role: 'counter'; readonly instance: string; readonly message: CounterMessage }
  | { readonly role: 'ranker'; readonly instance: string; readonly message: RankerMessage }
  | { readonly role: 'aggregator'; readonly instance: string; readonly message: AggregatorMessage };

/** A client request: an ingest for one filter, and the frame size it travels in. */
export interface RtaRequest {
  readonly role: 'filter';
  readonly instance: string;
  readonly message: FilterMessage;
  /** Bytes of the request frame on the wire (≥ the packet size asked for, when one tuple is larger). */
  readonly packetBytes: number;
  /** Tuples in this request. */
  readonly tuples: number;
}

/** An endless source of ingest requests from the seeded generator. */
export interface RtaRequestStream {
  next(): RtaRequest;
  /** Tuples handed out so far. */
  readonly tuplesSent: number;
}

export interface RtaWorkloadOptions {
  /** Any part of RtaConfig; the rest from DEFAULT_RTA_CONFIG. Validated (bad pattern → RtaFilterPatternError). */
  readonly config?: unknown;
  /** Request frame size: 64, 256, 512 or 1024 in the paper (any ≥ 64; default 1024). */
  readonly packetBytes?: number;
  /** Seed of the tuple generator (default 1). */
  readonly seed?: number;
  /** Generator options besides the seed. */
  readonly generator?: Omit<TweetGeneratorOptions, 'seed'>;
}

export interface RtaWorkload {
  readonly name: 'rta';
  /** The role every server plays in the experiment's rows (the paper: one worker per server). */
  readonly role: 'worker';
  readonly config: RtaConfig;
  readonly packetBytes: number;
  readonly seed: number;
  readonly instances: RtaInstanceNames;
  /** Absolute path of the module exporting the four definitions. */
  readonly actorsModule: string;
  /** Registration order: aggregator, rankers, counters, filters. */
  readonly actors: readonly RtaActorPlan[];
  /** Configure messages, in the order to send them (await each answer). */
  readonly setup: readonly RtaSend[];
  /** `tuples` (sorted by event time, stably) as ingest requests, round-robin over the filters. */
  requests(tuples: readonly RtaTuple[]): RtaRequest[];
  /** An endless request stream from the seeded generator. */
  stream(): RtaRequestStream;
  /** The end-of-stream advance for every filter. */
  readonly finish: readonly RtaSend[];
  /** What the aggregator must report for `tuples`. */
  reference(tuples: readonly RtaTuple[]): ReferenceWindow[];
  /** A fresh generator with this workload's seed and options. */
  generator(): TweetGenerator;
}

/** Builds RTA's workload description; throws RtaConfigError / RtaFilterPatternError on bad input. */
export function rtaWorkload(options: RtaWorkloadOptions = {}): RtaWorkload {
  const config = parseRtaConfig(options.config ?? {});
  const packetBytes = options.packetBytes ?? 1024;
  if (!(Number.isInteger(packetBytes) && packetBytes >= 64 && packetBytes <= 9000)) {
    throw new RtaConfigError('packetBytes', `must be an integer in [64, 9000], got ${packetBytes}`);
  }
  const seed = options.seed ?? 1;
  const generatorOptions: TweetGeneratorOptions = { ...options.generator, seed };
  new TweetGenerator(generatorOptions); // validate now, not when the first request is drawn
  const instances = rtaInstanceNames(config);
  const actors: RtaActorPlan[] = [
    {
      instance: instances.aggregator,
      role: 'aggregator',
      exportName: 'rtaAggregator',
      definition: widen(rtaAggregator),
    },
    ...instances.rankers.map((instance) => ({
      instance,
      role: 'ranker' as const,
      exportName: 'rtaRanker' as const,
      definition: widen(rtaRanker),
    })),
    ...instances.counters.map((instance) => ({
      instance,
      role: 'counter' as const,
      exportName: 'rtaCounter' as const,
      definition: widen(rtaCounter),
    })),
    ...instances.filters.map((instance) => ({
      instance,
      role: 'filter' as const,
      exportName: 'rtaFilter' as const,
      definition: widen(rtaFilter),
    })),
  ];
  const setup: RtaSend[] = [
    {
      role: 'aggregator',
      instance: instances.aggregator,
      message: {
        type: 'configure',
        rankers: config.rankers,
        topN: config.topN,
        retainWindows: config.retainWindows,
      },
    },
    ...instances.rankers.map(
      (instance, index): RtaSend => ({
        role: 'ranker',
        instance,
        message: {
          type: 'configure',
          index,
          counters: config.counters,
          topN: config.topN,
          aggregator: instances.aggregator,
        },
      }),
    ),
    ...instances.counters.map(
      (instance, index): RtaSend => ({
        role: 'counter',
        instance,
        message: {
          type: 'configure',
          index,
          filters: config.filters,
          windowMs: config.window.windowMs,
          slideMs: config.window.slideMs,
          latenessMs: config.window.latenessMs,
          tickMs: config.window.tickMs,
          rankers: instances.rankers,
        },
      }),
    ),
    ...instances.filters.map(
      (instance, index): RtaSend => ({
        role: 'filter',
        instance,
        message: {
          type: 'configure',
          index,
          pattern: config.filter.pattern,
          flags: config.filter.flags,
          mode: config.filter.mode,
          counters: instances.counters,
        },
      }),
    ),
  ];
  const finish: RtaSend[] = instances.filters.map((instance) => ({
    role: 'filter',
    instance,
    message: { type: 'advance', watermarkMs: Number.POSITIVE_INFINITY },
  }));

  const toRequest = (batch: RtaTuple[], sequence: number): RtaRequest => ({
    role: 'filter',
    instance: instances.filters[sequence % instances.filters.length]!,
    message: { type: 'ingest', tuples: batch },
    packetBytes: Math.max(packetBytes, requestFrameBytes(batch)),
    tuples: batch.length,
  });

  return Object.freeze({
    name: 'rta' as const,
    role: 'worker' as const,
    config,
    packetBytes,
    seed,
    instances,
    actorsModule: RTA_ACTORS_MODULE,
    actors: Object.freeze(actors),
    setup: Object.freeze(setup),
    finish: Object.freeze(finish),
    requests(tuples: readonly RtaTuple[]): RtaRequest[] {
      const ordered = [...tuples].sort((a, b) => a.timestampMs - b.timestampMs);
      return packTuples(ordered, packetBytes).map(toRequest);
    },
    stream(): RtaRequestStream {
      const generator = new TweetGenerator(generatorOptions);
      let sequence = 0;
      let tuplesSent = 0;
      // One tuple of look-ahead: a request is closed by the first tuple that would overflow it
      // (the same rule as packTuples, applied incrementally).
      const budget = packetBytes - REQUEST_OVERHEAD_BYTES - INGEST_HEADER_BYTES;
      let carried: RtaTuple | undefined;
      return {
        next(): RtaRequest {
          const batch: RtaTuple[] = [];
          let used = 0;
          for (;;) {
            const tuple = carried ?? generator.next();
            carried = undefined;
            const bytes = tupleWireBytes(tuple);
            if (batch.length > 0 && (used + bytes > budget || batch.length >= MAX_TUPLES_PER_REQUEST)) {
              carried = tuple;
              break;
            }
            batch.push(tuple);
            used += bytes;
          }
          tuplesSent += batch.length;
          return toRequest(batch, sequence++);
        },
        get tuplesSent() {
          return tuplesSent;
        },
      };
    },
    reference(tuples: readonly RtaTuple[]): ReferenceWindow[] {
      return referenceRta(tuples, config);
    },
    generator(): TweetGenerator {
      return new TweetGenerator(generatorOptions);
    },
  });
}
