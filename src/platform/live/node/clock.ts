/**
 * The live platform's clock: wall-clock nanoseconds as a double, comparable across threads (each
 * thread's `performance.timeOrigin` differs; origin + now does not). Timers set by an actor on a
 * core are armed by the controller on the main thread against the same clock.
 */
export function wallNs(): number {
  return (performance.timeOrigin + performance.now()) * 1e6;
}
