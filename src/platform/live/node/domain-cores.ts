/**
 * The cores of one live domain (NIC or host): worker threads, each with a work ring (controller →
 * core) and a result ring (core → controller) over SharedArrayBuffers, plus the watchdog of
 * iPipe §4.4: a core busy on one request longer than the limit is stopped (its thread
 * terminated) and replaced, and the controller is told which request it was running so the
 * actor can be deregistered and its requests answered with an error.
 *
 * The controller runs on the main thread. It learns of results through `Atomics.waitAsync` on
 * each result ring (no polling, no postMessage), and sends work with a batched ring write.
 */

import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { RING_CORRUPT, RING_EMPTY, SpscRing } from '../channel/ring.ts';
import type { CatalogEntry } from './actor-catalog.ts';
import { FrameBuilder, FrameReader, WORK_FORGET, WORK_STOP } from './core-protocol.ts';
import type { CoreWorkerData } from './core-worker.ts';
import type { LiveRequest } from './live-request.ts';

export interface DomainCoresOptions {
  readonly domain: 'nic' | 'host';
  readonly cores: number;
  readonly domainBuffer: SharedArrayBuffer;
  readonly catalog: readonly CatalogEntry[];
  /** Bytes of each work and result ring. */
  readonly ringBytes?: number;
  /**
   * Busy-wait iterations before a core sleeps (0: sleep at once; the wake-up then costs ~25–50 µs).
   * Default: 2000 when every thread of the process (the controller and every core of every
   * domain in it) has a CPU of its own, else 0 — see `spinsByDefault`.
   */
  readonly spinIterations?: number;
  /**
   * How long the controller polls a busy core's result ring before sleeping (µs; 0: never poll;
   * default 50 when `spinsByDefault`, else 0). See `#spinForResults`.
   */
  readonly resultSpinUs?: number;
  /** A request running longer than this stops its core (ms). */
  readonly watchdogMs: number;
  /** Called for every result a core publishes (the reader is positioned at its start). */
  readonly onResult: (core: number, reader: FrameReader) => void;
  /** The watchdog stopped `core` while it ran the work tagged `tag`; a fresh core is starting. */
  readonly onWatchdog: (core: number, tag: number, busyMs: number) => void;
  /** A replacement core is ready to take work. */
  readonly onCoreReady?: (core: number) => void;
}

/** One core's rings as `DomainCores.ringStats` reports them. */
export interface CoreRingStats {
  readonly core: number;
  readonly workBytes: number;
  readonly resultBytes: number;
  readonly workItems: number;
  readonly workFlushes: number;
  readonly workDoorbells: number;
  readonly results: number;
  readonly resultSleeps: number;
}

/** One core's rings as CoreRingStats (a DomainCores core, or the socket-owning NIC core 0). */
export function coreRingStats(core: number, work: SpscRing, results: SpscRing): CoreRingStats {
  const sent = work.stats();
  const received = results.stats();
  return {
    core,
    workBytes: sent.occupancyBytes,
    resultBytes: received.occupancyBytes,
    workItems: sent.sent,
    workFlushes: sent.flushes,
    workDoorbells: sent.doorbells,
    results: received.received,
    resultSleeps: received.sleeps,
  };
}

interface CoreSlot {
  readonly core: number;
  worker: Worker;
  work: SpscRing;
  results: SpscRing;
  /** Tags of the requests handed to the core, in the order it runs them (the head runs). */
  readonly tags: number[];
  /** When the head request started: its hand-off, or the previous result. */
  busySinceMs: number;
  generation: number;
  /** Work written but not yet published (see `send`). */
  flushPending: boolean;
  /** False while a replacement thread starts: the core takes no work. */
  ready: boolean;
  exited: Promise<void>;
  /**
   * Control items (forget) the work ring had no room for, in order. Work waits behind them
   * (`sendRequest` refuses while any is left), so a core never runs work sent after a forget
   * against the instance that forget dropped.
   */
  readonly controls: Uint8Array[];
}

const WORKER_BOOTSTRAP = fileURLToPath(new URL('./core-worker-bootstrap.mjs', import.meta.url));
// From a clone the sources run under tsx (.ts); from a build, dist/ holds .js.
const WORKER_ENTRY = new URL(
  import.meta.url.endsWith('.ts') ? './core-worker.ts' : './core-worker.js',
  import.meta.url,
).href;

/** Core threads of every DomainCores started in this process (a NIC and a host domain may share one). */
let coreThreadsInProcess = 0;

/**
 * Spinning pays only when the spinning thread has a CPU of its own: with fewer CPUs than threads
 * (this process's controller plus its cores), a spinning core takes the CPU that the controller
 * (or another core) needs to produce its next work, and the whole node slows down. Measured on a
 * 2-vCPU VM with the node pinned to one CPU: 13 k echo requests/s spinning, ~100 CPU µs per
 * request, most of it in the cores' polls. `os.availableParallelism` honours CPU affinity (taskset).
 */
export function spinsByDefault(): boolean {
  return availableParallelism() >= coreThreadsInProcess + 1;
}

export class DomainCores {
  readonly domain: 'nic' | 'host';
  readonly #options: DomainCoresOptions;
  readonly #slots: CoreSlot[] = [];
  readonly #reader = new FrameReader();
  readonly #control = new FrameBuilder();
  #watchdogTimer: NodeJS.Timeout | undefined;
  #counted = false;
  #stopping = false;
  /** Cores replaced after a watchdog expiry. */
  replacedCores = 0;

  constructor(options: DomainCoresOptions) {
    this.domain = options.domain;
    this.#options = options;
  }

  get count(): number {
    return this.#slots.length;
  }

  async start(): Promise<void> {
    coreThreadsInProcess += this.#options.cores;
    this.#counted = true;
    const started: Promise<void>[] = [];
    for (let core = 0; core < this.#options.cores; core++) started.push(this.#spawn(core));
    await Promise.all(started);
    const checkEveryMs = Math.max(1, Math.min(50, this.#options.watchdogMs / 4));
    this.#watchdogTimer = setInterval(() => this.#checkWatchdog(), checkEveryMs);
    this.#watchdogTimer.unref();
  }

  isBusy(core: number): boolean {
    return (this.#slots[core]?.tags.length ?? 0) > 0;
  }

  /** True when `core` is idle and not being replaced. */
  isAvailable(core: number): boolean {
    const slot = this.#slots[core];
    return slot?.ready === true && slot.tags.length === 0;
  }

  /** How long `core`'s current request has run (ms; 0 when idle), at `nowMs` (performance.now()). */
  headRunningMs(core: number, nowMs = performance.now()): number {
    const slot = this.#slots[core];
    return slot && slot.tags.length > 0 ? nowMs - slot.busySinceMs : 0;
  }

  /** True when `core` takes work (it is not being replaced); it may still be running some. */
  isReady(core: number): boolean {
    return this.#slots[core]?.ready === true;
  }

  /**
   * Hands `request` (as work of tag `tag`) to `core`, behind whatever it already holds: its work
   * item is written straight into the core's ring, with no staging copy. False when the core
   * cannot take it now (it is being replaced, or its ring is full: the caller keeps the request
   * queued) — back-pressure, never a drop. `nowMs`: a performance.now() reading the caller just
   * took, if it has one.
   */
  sendRequest(core: number, tag: number, request: LiveRequest, nowMs?: number): boolean {
    const slot = this.#slots[core];
    if (!slot?.ready) return false;
    if (slot.controls.length > 0 && !this.#sendControls(slot)) return false;
    const at = slot.work.tryReserve(request.workSize());
    if (at < 0) return false;
    request.writeWork(slot.work.bytes, at);
    slot.work.commit();
    this.#handedOver(slot, tag, nowMs);
    return true;
  }

  #handedOver(slot: CoreSlot, tag: number, nowMs: number | undefined): void {
    if (slot.tags.push(tag) === 1) slot.busySinceMs = nowMs ?? performance.now();
    // Publish once per event-loop turn, not per request: the datagrams of one poll phase then
    // reach a sleeping core with one doorbell (a futex wake, the costliest step of a hand-off).
    if (!slot.flushPending) {
      slot.flushPending = true;
      this.#unflushed.push(slot);
      if (this.#flushScheduled === undefined) this.#flushScheduled = setImmediate(this.#flushAll);
    }
  }

  readonly #unflushed: CoreSlot[] = [];
  #flushScheduled: NodeJS.Immediate | undefined;
  readonly #flushAll = (): void => {
    this.#flushScheduled = undefined;
    for (const slot of this.#unflushed) {
      slot.flushPending = false;
      slot.work.flush();
    }
    this.#unflushed.length = 0;
  };

  /** The head request of `core` is done (its result arrived); the next one, if any, starts. */
  release(core: number, nowMs = performance.now()): void {
    const slot = this.#slots[core];
    if (!slot) return;
    slot.tags.shift();
    slot.busySinceMs = nowMs;
  }

  /**
   * Tells every core to drop its cached instance of `actor` (it moved, or its heap was replaced).
   * Never blocks: a core whose work ring has no room gets the item when room appears (as its
   * results come back, or on a 1 ms retry). Blocking here — the main thread in `Atomics.wait` for
   * room — could deadlock: a core that waits for room in its full result ring stops consuming
   * work, and only this thread, now asleep, drains results.
   */
  forget(actor: number): void {
    const frame = this.#control.reset();
    frame.u8(WORK_FORGET);
    frame.u32(actor);
    for (const slot of this.#slots) {
      if (slot.controls.length === 0 && slot.work.tryWrite(frame.frame)) slot.work.flush();
      else {
        slot.controls.push(frame.frame.slice());
        this.#armControlRetry();
      }
    }
  }

  /** Writes `slot`'s held control items while its ring has room; true when none is left. */
  #sendControls(slot: CoreSlot): boolean {
    const controls = slot.controls;
    let sent = 0;
    while (sent < controls.length && slot.work.tryWrite(controls[sent] as Uint8Array)) sent++;
    if (sent > 0) {
      controls.splice(0, sent);
      slot.work.flush();
    }
    return controls.length === 0;
  }

  #controlRetry: NodeJS.Timeout | undefined;

  #armControlRetry(): void {
    if (this.#controlRetry !== undefined || this.#stopping) return;
    this.#controlRetry = setTimeout(() => {
      this.#controlRetry = undefined;
      let left = false;
      for (const slot of this.#slots) if (!this.#sendControls(slot)) left = true;
      if (left) this.#armControlRetry();
    }, 1);
    this.#controlRetry.unref();
  }

  /** Control items held back by a full ring, all cores (for tests and stats). */
  heldControls(): number {
    let held = 0;
    for (const slot of this.#slots) held += slot.controls.length;
    return held;
  }

  /**
   * Each core's rings: bytes waiting, and how often a hand-off cost a wake-up — work items handed
   * over, work flushes, doorbells rung to wake the core, results taken and times the controller
   * slept waiting for them (each such sleep ended with a doorbell from the core). Counts are of
   * the current thread of each core (a replaced core starts again from zero).
   */
  ringStats(): CoreRingStats[] {
    return this.#slots.map((slot, core) => coreRingStats(core, slot.work, slot.results));
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#controlRetry) clearTimeout(this.#controlRetry);
    if (this.#counted) coreThreadsInProcess -= this.#options.cores;
    this.#counted = false;
    if (this.#watchdogTimer) clearInterval(this.#watchdogTimer);
    const stop = new FrameBuilder();
    stop.u8(WORK_STOP);
    for (const slot of this.#slots) {
      slot.work.tryWrite(stop.frame);
      slot.work.flush();
    }
    await Promise.race([
      Promise.all(this.#slots.map((slot) => slot.exited)),
      new Promise((resolve) => setTimeout(resolve, 2_000).unref()),
    ]);
    await Promise.all(this.#slots.map((slot) => slot.worker.terminate()));
    for (const slot of this.#slots) {
      slot.work.close();
      slot.results.close();
    }
  }

  async #spawn(core: number): Promise<void> {
    const ringBytes = this.#options.ringBytes ?? 1 << 20;
    const spinIterations = this.#options.spinIterations ?? (spinsByDefault() ? 2_000 : 0);
    const work = SpscRing.create({ capacityBytes: ringBytes, spinIterations });
    const results = SpscRing.create({ capacityBytes: ringBytes, spinIterations });
    const data: CoreWorkerData = {
      entry: WORKER_ENTRY,
      domainBuffer: this.#options.domainBuffer,
      workRing: work.memory,
      resultRing: results.memory,
      catalog: this.#options.catalog,
      core,
      spinIterations,
    };
    const worker = new Worker(WORKER_BOOTSTRAP, {
      workerData: data,
      name: `ipipe-${this.domain}-core-${core}`,
    });
    const previous = this.#slots[core];
    const slot: CoreSlot = {
      core,
      worker,
      work,
      results,
      tags: [],
      flushPending: false,
      busySinceMs: 0,
      generation: (previous?.generation ?? -1) + 1,
      ready: false,
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
      controls: [],
    };
    this.#slots[core] = slot;
    worker.on('error', (error) => {
      process.stderr.write(`ipipe: ${this.domain} core ${core} failed: ${error.message}\n`);
    });
    // 'online' comes before the worker has imported the actor modules; wait for its 'ready'.
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(new Error(`${this.domain} core ${core} exited with ${code} while starting`)),
      );
    });
    slot.ready = true;
    void this.#pump(core, slot);
  }

  /** Drains `slot`'s result ring whenever it has data, until the slot is replaced or stopped. */
  async #pump(core: number, slot: CoreSlot): Promise<void> {
    for (;;) {
      if (this.#slots[core] !== slot) return;
      let length = slot.results.peek();
      if (length === RING_EMPTY && slot.tags.length > 0 && this.#spinForResults(slot)) {
        length = slot.results.peek();
      }
      if (length === RING_EMPTY) {
        // No timeout: a timed wait costs a timer and a promise race per sleep, and nothing needs
        // one — stopping or replacing the core closes the ring, which wakes this wait ('closed').
        const waited = await slot.results.waitForDataAsync();
        if (waited === 'closed') return;
        continue;
      }
      if (length === RING_CORRUPT) {
        slot.results.consume();
        continue;
      }
      this.#deliver(core, slot, length);
      if (slot.controls.length > 0) this.#sendControls(slot);
    }
  }

  #deliver(core: number, slot: CoreSlot, length: number): void {
    const reader = this.#reader;
    const at = slot.results.peekOffset;
    reader.resetWindow(slot.results.bytes, at, at + length);
    try {
      this.#options.onResult(core, reader);
    } finally {
      slot.results.consume();
    }
  }

  /** Hands over every result `slot` has published (before its thread is stopped). */
  #drainPublished(core: number, slot: CoreSlot): void {
    for (;;) {
      const length = slot.results.peek();
      if (length === RING_EMPTY) return;
      if (length === RING_CORRUPT) slot.results.consume();
      else this.#deliver(core, slot, length);
    }
  }

  /**
   * A core is running a request and its result is not in yet: poll every result ring for a short
   * while before sleeping in `waitAsync`. Results of short handlers arrive within microseconds, and
   * each one handled here — the next request sent straight back to the still-spinning core — saves
   * an event-loop turn and a futex wake on both sides, which otherwise dominate a request's cost.
   * True when `slot` has data.
   */
  #spinForResults(slot: CoreSlot): boolean {
    const budgetMs = (this.#options.resultSpinUs ?? (spinsByDefault() ? 50 : 0)) / 1000;
    if (budgetMs <= 0) return false;
    const deadline = performance.now() + budgetMs;
    for (let spin = 0; ; spin++) {
      if (slot.results.hasData()) return true;
      if (slot.tags.length === 0 || this.#slots[slot.core] !== slot) return false;
      if ((spin & 63) === 63 && performance.now() > deadline) return false;
    }
  }

  #checkWatchdog(): void {
    const now = performance.now();
    for (let core = 0; core < this.#slots.length; core++) {
      const slot = this.#slots[core] as CoreSlot;
      if (slot.tags.length === 0 || now - slot.busySinceMs <= this.#options.watchdogMs) continue;
      // Results published since the last pump are not the runaway's: hand them over first.
      this.#drainPublished(core, slot);
      if (slot.tags.length === 0 || this.#slots[core] !== slot) continue;
      const busyMs = performance.now() - slot.busySinceMs;
      if (busyMs <= this.#options.watchdogMs) continue;
      const tag = slot.tags[0] as number;
      slot.tags.length = 0;
      slot.ready = false;
      this.replacedCores++;
      // The handler cannot be interrupted in its thread: stop the thread, start a fresh core. The
      // controller hears of it at once (the actor is stopped now); the core serves again when ready.
      void slot.worker.terminate();
      slot.work.close();
      slot.results.close();
      this.#options.onWatchdog(core, tag, busyMs);
      void this.#spawn(core).then(() => this.#options.onCoreReady?.(core));
    }
  }
}
