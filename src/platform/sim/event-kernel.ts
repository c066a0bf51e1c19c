/**
 * The discrete-event kernel of the simulated platform: a virtual clock and the loop that fires
 * events in time order (DESIGN.md, "platform/sim": "virtual nanoseconds from a discrete-event
 * kernel"). Every hardware model — NIC cores, traffic manager, PCIe/DMA, links, switch — advances
 * only by scheduling events here, so a run is a deterministic function of its inputs and seed.
 *
 * Time is an integer number of nanoseconds held in a double. Doubles are exact for integers up to
 * 2^53 − 1 ns ≈ 104.2 days of simulated time; past that, adding 1 ns could round away and two
 * events could silently swap order, so the kernel refuses such times instead (MAX_TIME_NS). It
 * equally refuses a time before `now()`, a fractional time and NaN: the clock never runs backwards
 * and never takes a value it cannot represent exactly.
 *
 * The hot path carries no closures: a model registers a handler per event kind once, at setup
 * (`registerKind`), and schedules `(kind, timeNs, a, b)` with two numbers — typically indices into
 * its own typed tables (core 3, request slot 812). The loop dispatches `handlers[kind](kernel, a, b)`.
 * Equal timestamps fire in the order they were scheduled (FIFO), so the order of a run never
 * depends on the event set's internals (event-heap.ts: a timing wheel for the next 65 µs in front
 * of a heap of per-time buckets). `at`/`after` take a closure for cold paths (setup, tests, rare
 * timers); they ride on a reserved kind and cost the typed path nothing.
 */

import { SimKindError, SimTimeError } from '../../errors.ts';
import {
  type EventHandle,
  EventHeap,
  MAX_PENDING_EVENTS,
  NO_EVENT,
  TAKE_EMPTY,
  TAKE_LATER,
} from './event-heap.ts';

/** `#fire`'s other stop codes, beside the heap's TAKE_EMPTY and TAKE_LATER. */
const STOP_MAX_EVENTS = -3;
const STOP_REQUESTED = -4;

export { type EventHandle, MAX_PENDING_EVENTS, NO_EVENT };

/** The last exactly representable integer nanosecond (2^53 − 1 ns ≈ 104.2 simulated days). */
export const MAX_TIME_NS = Number.MAX_SAFE_INTEGER;
/**
 * MAX_TIME_NS for this module's own checks: the export lives in a cell (importers see a live
 * binding), so each read of it on the scheduling path was a load and a check for the hole, where a
 * private constant is folded into the comparison.
 */
const LAST_TIME_NS = Number.MAX_SAFE_INTEGER;

/** Handles one kind of event. `a` and `b` are the numbers it was scheduled with. */
export type EventHandler = (kernel: EventKernel, a: number, b: number) => void;

/** An integer naming a registered handler; returned by `registerKind`. */
export type EventKind = number & { readonly __brand: 'EventKind' };

/** Options of `run`. */
export interface RunOptions {
  /** Fire events with time ≤ untilNs, then set the clock to untilNs. Default: until none is left. */
  readonly untilNs?: number;
  /** Return after firing this many events. Default: no limit. */
  readonly maxEvents?: number;
  /** Called with the clock and the events fired so far, at most once per `progressEveryEvents`. */
  readonly onProgress?: (nowNs: number, eventsProcessed: number) => void;
  /** Events between `onProgress` calls. Default 1,048,576 (a few times a second at full speed). */
  readonly progressEveryEvents?: number;
}

/** Why `run` returned. */
export type RunStopReason =
  /** No live event was left (and the clock moved to `untilNs` when one was given). */
  | 'idle'
  /** The next event is after `untilNs`; the clock is now `untilNs`. */
  | 'until'
  /** `maxEvents` events were fired. */
  | 'maxEvents'
  /** A handler (or progress callback) called `stop()`. */
  | 'stopped';

/** What `run` did. */
export interface RunResult {
  readonly reason: RunStopReason;
  /** Events fired by this call. */
  readonly eventsFired: number;
  /** The clock when it returned. */
  readonly nowNs: number;
}

/** Options of the kernel. */
export interface EventKernelOptions {
  /** Pending-event capacity to start with; it doubles as needed. Default 1024. */
  readonly initialCapacity?: number;
  /** The clock's starting value. Default 0. */
  readonly startNs?: number;
}

const DEFAULT_PROGRESS_EVERY_EVENTS = 1 << 20;
/** Kind 0 is reserved for the closure path (`at`/`after`); registered kinds start at 1. */
const CLOSURE_KIND = 0;

/**
 * Errors of the simulated clock. A RangeError for now; the error registry should gain
 * `IPIPE_ERR_SIM_INVALID_TIME` (a time in the past, fractional, NaN or past MAX_TIME_NS) and
 * `IPIPE_ERR_SIM_INVALID_KIND` (an unregistered event kind), and these helpers then construct it.
 */
function invalidTime(what: string, value: number, nowNs: number): SimTimeError {
  let problem: string;
  if (Number.isNaN(value)) problem = 'is NaN';
  else if (value < nowNs)
    problem = `is in the past: the simulated clock is at ${nowNs} ns and never runs backwards`;
  else if (value > LAST_TIME_NS)
    problem = `is past ${LAST_TIME_NS} ns (2^53 − 1), the last exactly representable time`;
  else
    problem = 'is not a whole number of nanoseconds; round sampled times (e.g. Math.round) before scheduling';
  return new SimTimeError(`${what} ${value} ${problem}`);
}

function invalidDelay(value: number, nowNs: number): SimTimeError {
  let problem: string;
  if (Number.isNaN(value)) problem = 'is NaN';
  else if (value < 0) problem = 'is negative: the simulated clock never runs backwards';
  else if (nowNs + value > LAST_TIME_NS) {
    problem = `would take the clock (now ${nowNs} ns) past ${LAST_TIME_NS} ns, the last exactly representable time`;
  } else problem = 'is not a whole number of nanoseconds; round sampled delays (e.g. Math.round) first';
  return new SimTimeError(`delay ${value} ns ${problem}`);
}

function invalidKind(kind: number, registered: number): SimKindError {
  return new SimKindError(
    `event kind ${kind} is not registered (kinds 1..${registered - 1} are): use the value registerKind returned`,
  );
}

export class EventKernel {
  readonly #heap: EventHeap;
  /** The handler for each kind; index 0 runs closures. A dense array, so a kind is one index load. */
  readonly #handlers: EventHandler[] = [];
  readonly #kindNames: string[] = [];
  /**
   * Initialized here, not only in the constructor: a field declared without a value holds
   * `undefined` first, and V8 then types it "any value" — each store of a time past 2^31 ns (2.1
   * simulated seconds) allocated a heap number, once per event in `#fire` (see event-heap.ts).
   */
  #nowNs = 0;
  #eventsProcessed = 0;
  #running = false;
  #stopRequested = false;
  /** Closures of `at`/`after`, by the index carried in argument `a`; freed indices are reused. */
  readonly #closures: ((() => void) | undefined)[] = [];
  readonly #freeClosures: number[] = [];

  constructor(options: EventKernelOptions = {}) {
    const startNs = options.startNs ?? 0;
    if (!(Number.isInteger(startNs) && startNs >= 0 && startNs <= LAST_TIME_NS)) {
      throw invalidTime('startNs', startNs, 0);
    }
    this.#nowNs = startNs;
    this.#heap = new EventHeap(options.initialCapacity, startNs);
    this.#handlers.push((_kernel, index) => this.#runClosure(index));
    this.#kindNames.push('closure');
  }

  /**
   * Registers the handler of one kind of event and returns the kind to schedule it with. Register
   * at setup: handlers are kept for the kernel's life (there are a handful per hardware model).
   */
  registerKind(handler: EventHandler, name = `kind${this.#handlers.length}`): EventKind {
    if (typeof handler !== 'function') throw new TypeError('registerKind needs a handler function');
    this.#handlers.push(handler);
    this.#kindNames.push(name);
    return (this.#handlers.length - 1) as EventKind;
  }

  /** The name a kind was registered with (for traces and error messages). */
  kindName(kind: number): string | undefined {
    return this.#kindNames[kind];
  }

  /** The simulated clock, in integer nanoseconds. */
  now(): number {
    return this.#nowNs;
  }

  /** Live events (scheduled, neither fired nor cancelled). */
  get pending(): number {
    return this.#heap.live;
  }

  /** Events fired since the kernel was made (cancelled events are not counted). */
  get eventsProcessed(): number {
    return this.#eventsProcessed;
  }

  /** Whether `run` or `step` is executing (a handler is on the stack). */
  get running(): boolean {
    return this.#running;
  }

  /** Time of the next live event, or Infinity when none is pending. */
  nextEventTimeNs(): number {
    return this.#heap.peekTimeNs();
  }

  /**
   * Schedules `kind` to fire at `atNs` with arguments `a`, `b`. Throws a RangeError for a time
   * before `now()`, a non-integer time or a time past MAX_TIME_NS, and for an unregistered kind.
   */
  schedule(kind: EventKind, atNs: number, a: number, b: number): EventHandle {
    const nowNs = this.#nowNs;
    // One comparison chain rejects NaN, the past and the unrepresentable; trunc rejects fractions.
    if (!(atNs >= nowNs && atNs <= LAST_TIME_NS) || Math.trunc(atNs) !== atNs) {
      throw invalidTime('event time', atNs, nowNs);
    }
    if (!(kind > CLOSURE_KIND && kind < this.#handlers.length) || (kind | 0) !== kind) {
      throw invalidKind(kind, this.#handlers.length);
    }
    return this.#heap.push(atNs, kind, a, b);
  }

  /** Schedules `kind` to fire `delayNs` (a non-negative integer) after `now()`. */
  scheduleAfter(kind: EventKind, delayNs: number, a: number, b: number): EventHandle {
    const atNs = this.#nowNs + delayNs;
    if (!(delayNs >= 0 && atNs <= LAST_TIME_NS) || Math.trunc(delayNs) !== delayNs) {
      throw invalidDelay(delayNs, this.#nowNs);
    }
    if (!(kind > CLOSURE_KIND && kind < this.#handlers.length) || (kind | 0) !== kind) {
      throw invalidKind(kind, this.#handlers.length);
    }
    return this.#heap.push(atNs, kind, a, b);
  }

  /**
   * `schedule` for an event that will never be cancelled: the same checks and the same order, no
   * handle. The simulated node's per-packet events go through here — returning a handle from a
   * call that is not inlined boxes it (a handle is past 2^31), an allocation per event.
   */
  post(kind: EventKind, atNs: number, a: number, b: number): void {
    const nowNs = this.#nowNs;
    if (!(atNs >= nowNs && atNs <= LAST_TIME_NS) || Math.trunc(atNs) !== atNs) {
      throw invalidTime('event time', atNs, nowNs);
    }
    if (!(kind > CLOSURE_KIND && kind < this.#handlers.length) || (kind | 0) !== kind) {
      throw invalidKind(kind, this.#handlers.length);
    }
    this.#heap.add(atNs, kind, a, b);
  }

  /** `scheduleAfter` without a handle (see `post`). */
  postAfter(kind: EventKind, delayNs: number, a: number, b: number): void {
    const atNs = this.#nowNs + delayNs;
    if (!(delayNs >= 0 && atNs <= LAST_TIME_NS) || Math.trunc(delayNs) !== delayNs) {
      throw invalidDelay(delayNs, this.#nowNs);
    }
    if (!(kind > CLOSURE_KIND && kind < this.#handlers.length) || (kind | 0) !== kind) {
      throw invalidKind(kind, this.#handlers.length);
    }
    this.#heap.add(atNs, kind, a, b);
  }

  /** Cold path: runs `fn` at `atNs`. Same time rules as `schedule`. */
  at(atNs: number, fn: () => void): EventHandle {
    if (!(atNs >= this.#nowNs && atNs <= LAST_TIME_NS) || Math.trunc(atNs) !== atNs) {
      throw invalidTime('event time', atNs, this.#nowNs);
    }
    if (typeof fn !== 'function') throw new TypeError('at() needs a function');
    const index = this.#freeClosures.pop() ?? this.#closures.length;
    this.#closures[index] = fn;
    return this.#heap.push(atNs, CLOSURE_KIND, index, 0);
  }

  /** Cold path: runs `fn` `delayNs` (a non-negative integer) after `now()`. */
  after(delayNs: number, fn: () => void): EventHandle {
    const atNs = this.#nowNs + delayNs;
    if (!(delayNs >= 0 && atNs <= LAST_TIME_NS) || Math.trunc(delayNs) !== delayNs) {
      throw invalidDelay(delayNs, this.#nowNs);
    }
    return this.at(atNs, fn);
  }

  /**
   * Cancels a pending event. Returns true if it was pending (it will now never fire), false if it
   * already fired, was already cancelled, or `handle` is NO_EVENT. Safe to call from a handler.
   */
  cancel(handle: EventHandle): boolean {
    const heap = this.#heap;
    const slot = heap.liveSlotOf(handle);
    if (slot < 0) return false;
    if (heap.kindOf(slot) === CLOSURE_KIND) this.#releaseClosure(heap.argAOf(slot));
    heap.cancelSlot(slot);
    return true;
  }

  /**
   * Asks the `run` in progress to return after the event being handled. Outside a run it does
   * nothing (a later run is not affected).
   */
  stop(): void {
    if (this.#running) this.#stopRequested = true;
  }

  /**
   * Fires the next live event, if there is one: advances the clock to its time and calls its
   * handler. Returns false (and leaves the clock alone) when nothing is pending.
   */
  step(): boolean {
    return this.run({ maxEvents: 1 }).eventsFired === 1;
  }

  /**
   * Fires events in (time, scheduling order) until none is left, the next is after `untilNs`,
   * `maxEvents` have fired, or `stop()` is called. An exception from a handler propagates out; the
   * event that threw counts as fired and the kernel stays usable.
   */
  run(options: RunOptions = {}): RunResult {
    if (this.#running) {
      throw new Error('EventKernel.run/step called from inside a handler: schedule an event instead');
    }
    const untilNs = options.untilNs ?? LAST_TIME_NS;
    if (!(untilNs >= this.#nowNs && untilNs <= LAST_TIME_NS) || Math.trunc(untilNs) !== untilNs) {
      throw invalidTime('untilNs', untilNs, this.#nowNs);
    }
    const maxEvents = options.maxEvents ?? Number.POSITIVE_INFINITY;
    if (!(maxEvents >= 0)) throw new RangeError(`maxEvents must be non-negative, got ${maxEvents}`);
    const onProgress = options.onProgress;
    const progressEvery = options.progressEveryEvents ?? DEFAULT_PROGRESS_EVERY_EVENTS;
    if (!(Number.isInteger(progressEvery) && progressEvery >= 1)) {
      throw new RangeError(`progressEveryEvents must be a positive integer, got ${progressEvery}`);
    }

    const firedBefore = this.#eventsProcessed;
    let stop: number;
    this.#running = true;
    this.#stopRequested = false;
    try {
      stop = this.#fire(untilNs, maxEvents, onProgress, progressEvery);
    } finally {
      this.#running = false;
      this.#stopRequested = false;
    }
    const fired = this.#eventsProcessed - firedBefore;
    const reason: RunStopReason =
      stop === TAKE_EMPTY
        ? 'idle'
        : stop === TAKE_LATER
          ? 'until'
          : stop === STOP_REQUESTED
            ? 'stopped'
            : 'maxEvents';
    // Running "until T" with nothing left before T means the clock reads T afterwards.
    if ((reason === 'until' || reason === 'idle') && options.untilNs !== undefined) this.#nowNs = untilNs;
    return { reason, eventsFired: fired, nowNs: this.#nowNs };
  }

  /**
   * The event loop of `run`, alone in a function whose every exit is a `return` of a number. V8
   * optimizes a long loop while it runs (on-stack replacement) from the feedback gathered so far;
   * code after the loop that had not run yet has none, and reaching it threw the optimized code
   * away — at the end of every `run`, so the next one started unoptimized (measured: the echo bench's
   * later runs spent a third of their events in the unoptimized loop). A `return` needs no feedback.
   */
  #fire(
    untilNs: number,
    maxEvents: number,
    onProgress: RunOptions['onProgress'],
    progressEvery: number,
  ): number {
    const heap = this.#heap;
    const handlers = this.#handlers;
    const taken = heap.taken;
    let progressCountdown = progressEvery;
    for (let fired = 0; fired < maxEvents; fired++) {
      const kind = heap.takeNext(untilNs);
      if (kind < 0) return kind;
      this.#nowNs = taken[0]!;
      this.#eventsProcessed++;
      handlers[kind]!(this, taken[1]!, taken[2]!);
      if (onProgress !== undefined && --progressCountdown === 0) {
        progressCountdown = progressEvery;
        onProgress(this.#nowNs, this.#eventsProcessed);
      }
      // `=== true`, not truthiness: V8 compiled the bare test of this field as a generic ToBoolean
      // (false, '', an undetectable object, a number, a BigInt…) on every event.
      if (this.#stopRequested === true) return STOP_REQUESTED;
    }
    return STOP_MAX_EVENTS;
  }

  #runClosure(index: number): void {
    const fn = this.#closures[index];
    this.#releaseClosure(index);
    fn?.();
  }

  #releaseClosure(index: number): void {
    this.#closures[index] = undefined;
    this.#freeClosures.push(index);
  }
}
