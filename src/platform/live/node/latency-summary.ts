/**
 * The per-actor request latency behind `ipipe_request_latency_seconds` (issue 4 §3), recorded on the
 * request path for a fraction of what prom-client's own Summary costs.
 *
 * prom-client's Summary keeps a sliding window by pushing every observation into each of its age
 * buckets' t-digests: with the window this metric had (60 s in 5 buckets) that was ~4 µs per
 * request here (`npm run bench -- metrics`: 4 076 ns), about a fifth of everything the live node
 * spends on an echo request. This records each value once, into the newest of five HdrHistograms
 * (201 ns in the same run), and
 * does the merging when Prometheus scrapes: the quantiles cover the last 48–60 s (the four full
 * buckets plus the one filling), `_sum` and `_count` all requests since the start, as a Prometheus
 * summary's do. The text is prom-client's, from the same registry: the class is a Summary whose
 * `get()` reads the histograms instead of t-digests (and whose `reset`/`remove` act on them;
 * values go in through `record`, by actor id — the inherited `observe` is not used).
 */

import * as hdr from 'hdr-histogram-js';
import client from 'prom-client';
import type { ActorId } from '../../../ids.ts';

/** Age buckets of the window and its length, as the Summary this replaces had. */
const AGE_BUCKETS = 5;
const WINDOW_SECONDS = 60;
/** Nanoseconds; a slower request is counted at the limit rather than thrown on. */
const HIGHEST_TRACKABLE_NS = 60e9;
const PERCENTILES = [0.5, 0.9, 0.99, 0.999] as const;

function histogram(): hdr.Histogram {
  // Two significant digits: quantiles within 1% of the recorded value; 15 KiB per histogram
  // (five per actor, plus one reused to merge them at a scrape).
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_TRACKABLE_NS,
    numberOfSignificantValueDigits: 2,
  });
}

class ActorLatency {
  readonly buckets: hdr.Histogram[] = Array.from({ length: AGE_BUCKETS }, histogram);
  newest = 0;
  count = 0;
  sumSeconds = 0;

  record(seconds: number): void {
    const ns = Math.round(seconds * 1e9);
    (this.buckets[this.newest] as hdr.Histogram).recordValue(Math.max(1, Math.min(ns, HIGHEST_TRACKABLE_NS)));
    this.count++;
    this.sumSeconds += seconds;
  }

  /** The oldest bucket is emptied and becomes the newest. */
  rotate(): void {
    this.newest = (this.newest + 1) % AGE_BUCKETS;
    (this.buckets[this.newest] as hdr.Histogram).reset();
  }
}

type Sample = Awaited<ReturnType<client.Summary<'actor' | 'quantile'>['get']>>;

/**
 * `ipipe_request_latency_seconds{actor, quantile}` plus `_sum` and `_count`, registered in
 * `registry`. `record` is what the node calls per reply; `nameOf` turns an actor id into its label
 * at scrape time; `close` stops the window's clock.
 */
export class ActorLatencySummary extends client.Summary<'actor' | 'quantile'> {
  readonly #actors = new Map<ActorId, ActorLatency>();
  /** Where a scrape merges an actor's age buckets (one, reset per actor). */
  readonly #window = histogram();
  readonly #nameOf: (actor: ActorId) => string;
  readonly #rotation: NodeJS.Timeout;

  constructor(registry: client.Registry, nameOf: (actor: ActorId) => string) {
    super({
      name: 'ipipe_request_latency_seconds',
      help: 'Time from a request reaching the NIC to its reply leaving it, by actor (quantiles over the last minute).',
      labelNames: ['actor'],
      percentiles: [...PERCENTILES],
      registers: [registry],
    });
    this.#nameOf = nameOf;
    this.#rotation = setInterval(() => this.rotate(), (WINDOW_SECONDS / AGE_BUCKETS) * 1000);
    this.#rotation.unref();
  }

  record(actor: ActorId, seconds: number): void {
    let latency = this.#actors.get(actor);
    if (latency === undefined) {
      latency = new ActorLatency();
      this.#actors.set(actor, latency);
    }
    latency.record(seconds);
  }

  /** Moves the window on by one age bucket (the clock does this every window / 5). */
  rotate(): void {
    for (const actor of this.#actors.values()) actor.rotate();
  }

  /** Forgets everything recorded (prom-client's `registry.resetMetrics()` calls this). */
  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    if (#actors in this) this.#actors.clear();
  }

  /** Drops the series of the actor labelled `actorName` (and any other label value given). */
  override remove(
    ...labels: Array<string | number | Partial<Record<'actor' | 'quantile', string | number>>>
  ): void {
    const first = labels[0];
    const name = typeof first === 'object' ? first.actor : first;
    for (const id of this.#actors.keys()) if (this.#nameOf(id) === String(name)) this.#actors.delete(id);
  }

  close(): void {
    clearInterval(this.#rotation);
  }

  override async get(): Promise<Sample> {
    // The base gives the metric's name, help, type and aggregator; nothing is observed into it.
    const base = await super.get();
    const values: Sample['values'] = [];
    for (const [id, latency] of this.#actors) {
      const actor = this.#nameOf(id);
      const window = this.#window;
      window.reset();
      for (const bucket of latency.buckets) window.add(bucket);
      for (const quantile of PERCENTILES) {
        const value = window.totalCount === 0 ? 0 : window.getValueAtPercentile(quantile * 100) / 1e9;
        values.push({ labels: { quantile, actor }, value });
      }
      values.push({ metricName: `${base.name}_sum`, labels: { actor }, value: latency.sumSeconds });
      values.push({ metricName: `${base.name}_count`, labels: { actor }, value: latency.count });
    }
    return { ...base, values };
  }
}
