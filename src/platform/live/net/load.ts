/**
 * The load generator: drives a live ipipe node (or any server speaking wire.ts) over UDP and
 * measures throughput and latency, as the paper's client machines do for its latency-vs-throughput
 * and scheduler experiments (iPipe §5).
 *
 * Two modes:
 *   open    requests arrive as a Poisson process of `ratePerSec` (exponential gaps drawn from a
 *           seeded PRNG), whether or not earlier ones were answered: the offered load is fixed.
 *           Latency is measured from each request's *intended* send time, not from when the
 *           generator got round to sending it. A generator that measures from the actual send
 *           hides every stall (a GC pause, a blocked event loop, a saturated server): the requests
 *           that should have gone out during it are sent late and look fast. That is "coordinated
 *           omission" (Gil Tene); measuring from the schedule charges the stall to the requests it
 *           delayed, as real clients would feel it. `sendLag` reports how late sends were, so a
 *           generator that cannot keep up is visible rather than silently folded into the numbers.
 *   closed  `outstanding` requests are kept in flight; each answer (or failure) sends the next.
 *           Latency is from the actual send (a closed loop has no schedule to fall behind).
 *
 * Timing: a warm-up of `warmupMs` (requests sent, not measured), then a window of `durationMs`.
 * A request is measured when its intended (open) or actual (closed) send time lies in the window;
 * after the window no new requests start and the generator waits for those in flight to end.
 * Throughput is measured answers per second of window.
 *
 * Pacing the open loop: Node's timers have 1 ms granularity, and waking from a sleep is slower
 * still on a VM (measured here: a setTimeout woke 0.7 ms late at p90 and 5 ms late at p99, however
 * early it was set). So the generator polls with setImmediate (which lets replies be received
 * between polls) whenever the next arrival is under SPIN_WITHIN_MS away, and sleeps only through
 * longer gaps, waking SLEEP_MARGIN_MS early. Above ~20 req/s it therefore keeps one core busy: give
 * the server its own core (`taskset`) when measuring on a small machine. `sendLag` shows how well
 * it kept to the schedule.
 *
 * Latencies are recorded in integer nanoseconds into an HDR histogram (3 significant digits) and
 * reported in microseconds.
 */

import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';
import { ConfigError } from '../../../errors.ts';
import { Random } from '../../../random.ts';
import { IpipeClient, type RequestCompletion } from './client.ts';
import type { NetError } from './errors.ts';
import { DEFAULT_MAX_FRAME_BYTES, type DropReason, HEADER_BYTES } from './wire.ts';

/** Open loop: poll (rather than sleep) when the next arrival is closer than this. */
const SPIN_WITHIN_MS = 50;
/** Open loop: when sleeping through a long gap, wake this much before the arrival. */
const SLEEP_MARGIN_MS = 20;

/** How requests are issued. */
export type LoadMode =
  | { readonly kind: 'open'; readonly ratePerSec: number }
  | { readonly kind: 'closed'; readonly outstanding: number };

/** Builds request `index`'s payload; `random` is the run's seeded payload stream. */
export type MakePayload = (index: number, random: Random) => Uint8Array;

/** Options of `runLoad`. */
export interface LoadOptions {
  /** `host:port` (IPv6 as `[::1]:9000`). */
  readonly target: string;
  /** Actor id every request is addressed to. */
  readonly actor: number;
  readonly mode: LoadMode;
  /** Fixed payload size in bytes (default 64); random bytes from the seed, the same every request. */
  readonly payloadBytes?: number;
  /** Or: a payload per request (exclusive with payloadBytes). */
  readonly makePayload?: MakePayload;
  /** Measured window, ms. */
  readonly durationMs: number;
  /** Unmeasured lead-in, ms (default 0). */
  readonly warmupMs?: number;
  /** Seed of arrival times and payloads. */
  readonly seed: number;
  /** Per-copy reply timeout, ms (default 1000). */
  readonly timeoutMs?: number;
  /** Retransmissions per request (default 0: a lost request is a timeout, not a slow answer). */
  readonly retries?: number;
  /** Frame size limit (default 1472). */
  readonly maxFrameBytes?: number;
  /** See ClientOptions.acceptReflectedRequests: only for a protocol-less echo baseline. */
  readonly acceptReflectedRequests?: boolean;
  /** SO_RCVBUF of the client socket (default 4 MiB, so deep pipelines are not dropped by the kernel). */
  readonly receiveBufferBytes?: number;
  /** Called now and then with the fraction of the run done (warm-up + window). */
  readonly onProgress?: (fraction: number) => void;
}

/** Latency percentiles, microseconds. */
export interface LatencySummary {
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly p999Us: number;
  readonly maxUs: number;
  readonly meanUs: number;
}

/** What a load run measured. Counts cover requests whose send time lies in the window. */
export interface LoadResult {
  readonly target: string;
  readonly actorId: number;
  readonly mode: LoadMode;
  readonly seed: number;
  /** Fixed payload size, or null when `makePayload` chose per request. */
  readonly payloadBytes: number | null;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Requests started in the window. */
  readonly sent: number;
  /** Of those, answered with a reply. */
  readonly answered: number;
  /** Of those, failed with a timeout after every retry. */
  readonly timeouts: number;
  /** Of those, failed otherwise: error code (the node's code for error replies) → count. */
  readonly errors: Readonly<Record<string, number>>;
  /** Answers per second of window. */
  readonly throughputPerSec: number;
  /** Open loop: the configured rate; closed loop: null. */
  readonly offeredRatePerSec: number | null;
  /** Requests started per second of window. */
  readonly achievedRatePerSec: number;
  /** Reply latency of answered requests (open: from intended send; closed: from send). Null if none. */
  readonly latency: LatencySummary | null;
  /** Open loop: how late sends were against the schedule (null for closed loop or no sends). */
  readonly sendLag: LatencySummary | null;
  /** The client's own counters over the whole run (warm-up included). */
  readonly client: {
    readonly retransmits: number;
    readonly lateReplies: number;
    readonly socketErrors: number;
    readonly drops: Readonly<Record<DropReason, number>>;
  };
}

/** Splits `host:port` (or `[v6]:port`); throws ConfigError naming `what` when it is not one. */
export function splitHostPort(value: string, what = 'target'): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim());
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !(Number.isInteger(port) && port >= 1 && port <= 65_535)) {
    throw new ConfigError(
      what,
      `must be host:port with a port in [1, 65535] (IPv6 as [::1]:9000), got "${value}"`,
    );
  }
  return { host, port };
}

function buildHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

function summarize(histogram: hdr.Histogram, sumNs: number): LatencySummary | null {
  const count = histogram.totalCount;
  if (count === 0) return null;
  const us = (ns: number) => Math.round(ns) / 1000;
  return {
    p50Us: us(histogram.getValueAtPercentile(50)),
    p90Us: us(histogram.getValueAtPercentile(90)),
    p99Us: us(histogram.getValueAtPercentile(99)),
    p999Us: us(histogram.getValueAtPercentile(99.9)),
    maxUs: us(histogram.maxValue),
    meanUs: Math.round(sumNs / count) / 1000,
  };
}

function validate(options: LoadOptions): void {
  if (!Number.isInteger(options.actor) || options.actor < 0 || options.actor > 0xffff_ffff) {
    throw new ConfigError('actor', `must be a u32 actor id, got ${options.actor}`);
  }
  const mode = options.mode;
  if (mode.kind === 'open') {
    if (!(Number.isFinite(mode.ratePerSec) && mode.ratePerSec > 0)) {
      throw new ConfigError('mode.ratePerSec', `must be a positive number, got ${mode.ratePerSec}`);
    }
  } else if (!(Number.isInteger(mode.outstanding) && mode.outstanding >= 1 && mode.outstanding <= 65_536)) {
    throw new ConfigError('mode.outstanding', `must be an integer in [1, 65536], got ${mode.outstanding}`);
  }
  if (!(Number.isFinite(options.durationMs) && options.durationMs > 0)) {
    throw new ConfigError(
      'durationMs',
      `must be a positive number of milliseconds, got ${options.durationMs}`,
    );
  }
  const warmupMs = options.warmupMs ?? 0;
  if (!(Number.isFinite(warmupMs) && warmupMs >= 0)) {
    throw new ConfigError('warmupMs', `must be a non-negative number of milliseconds, got ${warmupMs}`);
  }
  if (options.payloadBytes !== undefined && options.makePayload !== undefined) {
    throw new ConfigError('payloadBytes', 'give payloadBytes or makePayload, not both');
  }
  const maxPayload = (options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES) - HEADER_BYTES;
  const size = options.payloadBytes ?? 64;
  if (!(Number.isInteger(size) && size >= 0 && size <= maxPayload)) {
    throw new ConfigError('payloadBytes', `must be an integer in [0, ${maxPayload}], got ${size}`);
  }
}

/**
 * Measures one run: shared by both modes, so they count and summarize identically. A request is
 * "in window" when its reference time (intended send for open loop, send for closed) lies in
 * [windowStartMs, windowEndMs).
 */
class Tally {
  readonly latency = buildHistogram();
  readonly sendLag = buildHistogram();
  readonly errors: Record<string, number> = {};
  latencySumNs = 0;
  lagSumNs = 0;
  sent = 0;
  answered = 0;
  timeouts = 0;
  /** Requests started and not yet ended (window or not). */
  inFlight = 0;
  /** Called when inFlight reaches 0 after sending stopped. */
  onDrained: (() => void) | undefined;

  answer(referenceMs: number, counted: boolean): void {
    this.inFlight--;
    if (counted) {
      this.answered++;
      const ns = Math.max(1, Math.round((performance.now() - referenceMs) * 1e6));
      this.latency.recordValue(ns);
      this.latencySumNs += ns;
    }
    if (this.inFlight === 0) this.onDrained?.();
  }

  fail(error: NetError, counted: boolean): void {
    this.inFlight--;
    if (counted) {
      if (error.code === 'IPIPE_ERR_NET_TIMEOUT') this.timeouts++;
      else {
        const code =
          'remoteCode' in error && typeof error.remoteCode === 'string' ? error.remoteCode : error.code;
        this.errors[code] = (this.errors[code] ?? 0) + 1;
      }
    }
    if (this.inFlight === 0) this.onDrained?.();
  }

  recordLag(lagMs: number): void {
    const ns = Math.max(1, Math.round(lagMs * 1e6));
    this.sendLag.recordValue(ns);
    this.lagSumNs += ns;
  }
}

/** One open-loop request: remembers its intended send time (allocated per request). */
class OpenRequest implements RequestCompletion {
  readonly #tally: Tally;
  readonly #intendedMs: number;
  readonly #counted: boolean;
  constructor(tally: Tally, intendedMs: number, counted: boolean) {
    this.#tally = tally;
    this.#intendedMs = intendedMs;
    this.#counted = counted;
  }
  onReply(): void {
    this.#tally.answer(this.#intendedMs, this.#counted);
  }
  onFailure(error: NetError): void {
    this.#tally.fail(error, this.#counted);
  }
}

/** Payload source shared by both modes. */
class Payloads {
  readonly #fixed: Uint8Array | undefined;
  readonly #make: MakePayload | undefined;
  readonly #random: Random;
  #index = 0;
  constructor(options: LoadOptions, random: Random) {
    this.#random = random;
    this.#make = options.makePayload;
    if (this.#make === undefined) {
      const fixed = new Uint8Array(options.payloadBytes ?? 64);
      for (let i = 0; i < fixed.length; i++) fixed[i] = random.nextU32() & 0xff;
      this.#fixed = fixed;
    }
  }
  next(): Uint8Array {
    const index = this.#index++;
    return this.#fixed ?? (this.#make as MakePayload)(index, this.#random);
  }
}

/**
 * One closed-loop slot: sends, waits for the end, records, sends again while the run lasts.
 * N slots are allocated once, so the closed loop allocates no completion per request.
 */
class ClosedSlot implements RequestCompletion {
  readonly #run: ClosedRun;
  #sentAtMs = 0;
  #counted = false;
  constructor(run: ClosedRun) {
    this.#run = run;
  }
  send(): void {
    this.#sentAtMs = performance.now();
    this.#counted = this.#sentAtMs >= this.#run.windowStartMs && this.#sentAtMs < this.#run.windowEndMs;
    this.#run.submit(this);
    if (this.#counted) this.#run.tally.sent++;
  }
  onReply(): void {
    this.#run.tally.answer(this.#sentAtMs, this.#counted);
    this.#run.next(this);
  }
  onFailure(error: NetError): void {
    this.#run.tally.fail(error, this.#counted);
    this.#run.next(this);
  }
}

class ClosedRun {
  readonly tally: Tally;
  readonly windowStartMs: number;
  readonly windowEndMs: number;
  readonly #client: IpipeClient;
  readonly #actor: number;
  readonly #payloads: Payloads;
  constructor(
    client: IpipeClient,
    actor: number,
    payloads: Payloads,
    tally: Tally,
    startMs: number,
    endMs: number,
  ) {
    this.#client = client;
    this.#actor = actor;
    this.#payloads = payloads;
    this.tally = tally;
    this.windowStartMs = startMs;
    this.windowEndMs = endMs;
  }
  #stopped = false;
  submit(slot: ClosedSlot): void {
    this.tally.inFlight++;
    this.#client.submit(this.#actor, this.#payloads.next(), slot);
  }
  next(slot: ClosedSlot): void {
    if (!this.#stopped && performance.now() < this.windowEndMs) slot.send();
  }
  /**
   * No request starts after this. The window's timer can fire a fraction of a millisecond before
   * `performance.now()` reaches the window's end; without the flag an answer arriving in that gap
   * started one more request after the drain had begun, and the client closed under it.
   */
  stop(): void {
    this.#stopped = true;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs the load and resolves with what it measured. Throws ConfigError for bad options. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  validate(options);
  const { host, port } = splitHostPort(options.target);
  const warmupMs = options.warmupMs ?? 0;
  const client = await IpipeClient.connect({
    host,
    port,
    timeoutMs: options.timeoutMs ?? 1000,
    retries: options.retries ?? 0,
    maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    receiveBufferBytes: options.receiveBufferBytes ?? 4 * 1024 * 1024,
    acceptReflectedRequests: options.acceptReflectedRequests === true,
  });
  const root = new Random(options.seed);
  const payloads = new Payloads(options, root.fork('payload'));
  const tally = new Tally();
  const totalMs = warmupMs + options.durationMs;
  const startMs = performance.now();
  const windowStartMs = startMs + warmupMs;
  const windowEndMs = windowStartMs + options.durationMs;
  const progress = options.onProgress;
  const progressTimer =
    progress === undefined
      ? undefined
      : setInterval(() => progress(Math.min(1, (performance.now() - startMs) / totalMs)), 250);

  try {
    if (options.mode.kind === 'closed') {
      const run = new ClosedRun(client, options.actor, payloads, tally, windowStartMs, windowEndMs);
      for (let i = 0; i < options.mode.outstanding; i++) new ClosedSlot(run).send();
      await sleep(Math.max(0, windowEndMs - performance.now()));
      run.stop();
    } else {
      await runOpenLoop(
        client,
        options.actor,
        payloads,
        tally,
        root.fork('arrivals'),
        options.mode.ratePerSec,
        {
          startMs,
          windowStartMs,
          windowEndMs,
        },
      );
    }
    // Sending has stopped (closed slots stop re-sending once the window is over): wait for the rest.
    if (tally.inFlight > 0) await new Promise<void>((resolve) => (tally.onDrained = resolve));
  } finally {
    if (progressTimer !== undefined) clearInterval(progressTimer);
    progress?.(1);
  }
  const stats = client.stats();
  await client.close();

  const seconds = options.durationMs / 1000;
  return {
    target: options.target,
    actorId: options.actor,
    mode: options.mode,
    seed: options.seed,
    payloadBytes: options.makePayload === undefined ? (options.payloadBytes ?? 64) : null,
    warmupMs,
    durationMs: options.durationMs,
    sent: tally.sent,
    answered: tally.answered,
    timeouts: tally.timeouts,
    errors: tally.errors,
    throughputPerSec: tally.answered / seconds,
    offeredRatePerSec: options.mode.kind === 'open' ? options.mode.ratePerSec : null,
    achievedRatePerSec: tally.sent / seconds,
    latency: summarize(tally.latency, tally.latencySumNs),
    sendLag: options.mode.kind === 'open' ? summarize(tally.sendLag, tally.lagSumNs) : null,
    client: {
      retransmits: stats.retransmits,
      lateReplies: stats.lateReplies,
      socketErrors: stats.socketErrors,
      drops: stats.drops,
    },
  };
}

/**
 * The open loop's dispatcher. Arrival times are fixed up front by the seeded Poisson process
 * (gaps −ln(1 − U)/rate); each tick sends every arrival that is due, so after a stall the overdue
 * requests go out at once, stamped with the times they were due.
 */
function runOpenLoop(
  client: IpipeClient,
  actor: number,
  payloads: Payloads,
  tally: Tally,
  arrivals: Random,
  ratePerSec: number,
  window: { readonly startMs: number; readonly windowStartMs: number; readonly windowEndMs: number },
): Promise<void> {
  const meanGapMs = 1000 / ratePerSec;
  const gapMs = () => -Math.log(1 - arrivals.nextDouble()) * meanGapMs;
  let nextMs = window.startMs + gapMs();
  return new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (nextMs <= now && nextMs < window.windowEndMs) {
        const counted = nextMs >= window.windowStartMs;
        tally.inFlight++;
        client.submit(actor, payloads.next(), new OpenRequest(tally, nextMs, counted));
        if (counted) {
          tally.sent++;
          tally.recordLag(now - nextMs);
        }
        nextMs += gapMs();
      }
      if (nextMs >= window.windowEndMs) {
        resolve();
        return;
      }
      const waitMs = nextMs - performance.now();
      if (waitMs > SPIN_WITHIN_MS) setTimeout(tick, waitMs - SLEEP_MARGIN_MS);
      else setImmediate(tick);
    };
    tick();
  });
}
