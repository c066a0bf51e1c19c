/**
 * The live platform's clock: wall-clock nanoseconds as a double, comparable across threads (each
 * thread's `performance.timeOrigin` differs; origin + now does not). Timers set by an actor on a
 * core are armed by the controller on the main thread against the same clock.
 *
 * Read several times per request, so it is kept cheap: `performance` comes from node:perf_hooks
 * (the global `performance` is a lazy accessor, a function call per use), and the thread's time
 * origin — fixed for its life, but a native call to read — is read once.
 */

import { performance } from 'node:perf_hooks';

const TIME_ORIGIN_MS = performance.timeOrigin;

/** Now, in wall-clock ns. */
export function wallNs(): number {
  return (TIME_ORIGIN_MS + performance.now()) * 1e6;
}

/** This thread's monotonic clock (`performance.now()`), ms. */
export function nowMs(): number {
  return performance.now();
}

/** The wall-clock ns of an instant read from `nowMs()` in this thread. */
export function wallNsAt(monotonicMs: number): number {
  return (TIME_ORIGIN_MS + monotonicMs) * 1e6;
}

/**
 * Calls `fire` at wall-clock `dueAtNs` (at once if that has passed): an actor's timer, armed on
 * whichever thread delivers it. Unref'd: a pending timer does not keep a stopping node alive.
 */
export function runAtWallNs(dueAtNs: number, fire: () => void): void {
  setTimeout(fire, Math.max(0, (dueAtNs - wallNs()) / 1e6)).unref();
}
