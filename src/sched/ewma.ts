/**
 * Exponentially weighted mean and deviation of a latency stream (iPipe §4.2, "Bookkeeping":
 * µ, σ by EWMA; the tail estimate is µ + 3σ).
 *
 * The variance uses the incremental EWMA form (Finch, "Incremental calculation of weighted mean
 * and variance", 2009): with weight w and deviation d = x − µ,
 *     µ ← µ + w·d,     v ← (1 − w)·(v + w·d²).
 * It is exact for the exponentially weighted population variance, needs no history, and costs a
 * handful of flops — this runs once per request on every core.
 *
 * Until 1/w samples have arrived the weight is 1/n instead (a plain running mean): a small w
 * started from the first sample stays biased toward it for hundreds of samples, and an actor's
 * load would be misjudged right when the scheduler first needs it (seen in the Q_thresh test: a
 * 32 µs-mean actor estimated at 11 µs after 30 requests, then pulled back onto an overloaded NIC).
 */

export class Ewma {
  // `= 0` where declared, the constructor sets the value: a field that starts `undefined` is typed
  // "any value" by V8, so its numbers are boxed and each read checks (see event-heap.ts).
  #weight: number = 0;
  #warmupSamples: number = 0;
  #mean = 0;
  #variance = 0;
  #samples = 0;

  constructor(weight: number) {
    if (!(weight > 0 && weight <= 1)) throw new RangeError(`EWMA weight must be in (0, 1], got ${weight}`);
    this.#weight = weight;
    this.#warmupSamples = Math.ceil(1 / weight) - 1;
  }

  /** Adds a sample (the first sets µ directly; see the warm-up note above). */
  add(value: number): void {
    if (this.#samples === 0) {
      this.#mean = value;
      this.#variance = 0;
    } else {
      const w = this.#samples >= this.#warmupSamples ? this.#weight : 1 / (this.#samples + 1);
      const deviation = value - this.#mean;
      const increment = w * deviation;
      this.#mean += increment;
      this.#variance = (1 - w) * (this.#variance + deviation * increment);
    }
    this.#samples++;
  }

  /**
   * Moves the estimate toward `value` with weight `weight` (in (0, 1]) as one more reading, in the
   * same incremental form as `add`, without counting a sample. The scheduler uses it for what a
   * stretch of time says when too few samples arrived in it (see `HybridScheduler`'s time bound).
   * Does nothing before the first sample: there is no estimate to keep current yet.
   */
  observe(value: number, weight: number): void {
    if (this.#samples === 0) return;
    // The mean moves; the variance only decays. A reading is a window's summary (a mean of its
    // completions, the oldest wait, or 0 for an idle NIC), not one request's latency: its distance
    // from µ says nothing of dispersion, and counted as a sample an idle NIC's 0s against a high µ
    // doubled the µ+3σ tail within 1.3 ms (a spurious downgrade at the next completion).
    this.#mean += weight * (value - this.#mean);
    this.#variance *= 1 - weight;
  }

  /**
   * The weight that the estimate as it stood after `fromSamples` samples still has in the present
   * one, counting only the samples added since (1 when none; 0 from before the first sample, which
   * sets µ outright). Exact through the warm-up: there the n-th sample's weight is 1/n, so the
   * product of (1 − 1/(n+1)) over samples a..b−1 telescopes to a/b.
   */
  retainedSince(fromSamples: number): number {
    const to = this.#samples;
    let from = fromSamples;
    if (from >= to) return 1;
    if (from <= 0) return 0;
    let retained = 1;
    if (from < this.#warmupSamples) {
      const end = Math.min(to, this.#warmupSamples);
      retained = from / end;
      from = end;
    }
    if (to > from) retained *= (1 - this.#weight) ** (to - from);
    return retained;
  }

  get mean(): number {
    return this.#mean;
  }

  get stdDev(): number {
    return Math.sqrt(this.#variance);
  }

  /** µ + 3σ: the paper's tail-latency estimate (also an actor's "dispersion"). */
  get tail(): number {
    return this.#mean + 3 * Math.sqrt(this.#variance);
  }

  /**
   * µ + 3σ > `limit`, without the square root (the scheduler asks this on every completion;
   * the root was 5% of its time). Squaring both sides is exact in the reals for σ ≥ 0.
   */
  tailExceeds(limit: number): boolean {
    const slack = limit - this.#mean;
    return slack < 0 || 9 * this.#variance > slack * slack;
  }

  /** µ + 3σ < `limit`, without the square root (see `tailExceeds`). */
  tailBelow(limit: number): boolean {
    const slack = limit - this.#mean;
    return slack > 0 && 9 * this.#variance < slack * slack;
  }

  get samples(): number {
    return this.#samples;
  }

  reset(): void {
    this.#mean = 0;
    this.#variance = 0;
    this.#samples = 0;
  }
}

/**
 * A rate or utilisation measured per fixed window and smoothed across windows. The owner adds to
 * the current window's accumulator and calls `roll` when a window ends; empty windows count
 * (as zero), so a rate decays when traffic stops.
 */
export class WindowedEwma {
  #weight: number = 0;
  #value = 0;
  #accumulator = 0;
  #windows = 0;

  constructor(weight: number) {
    if (!(weight > 0 && weight <= 1)) throw new RangeError(`EWMA weight must be in (0, 1], got ${weight}`);
    this.#weight = weight;
  }

  /** Adds to the open window (a request count, busy nanoseconds, bytes...). */
  accumulate(amount: number): void {
    this.#accumulator += amount;
  }

  /**
   * Closes `windows` windows (≥ 1): the first holds the accumulator, the rest were empty.
   * `normalise` turns the accumulator into the smoothed quantity (e.g. count → per-second rate).
   */
  roll(windows: number, normalise: number): void {
    const first = this.#accumulator * normalise;
    this.#accumulator = 0;
    const w = this.#weight;
    this.#value = this.#windows === 0 ? first : this.#value + w * (first - this.#value);
    // Each further empty window decays the estimate toward zero by (1 − w).
    if (windows > 1) this.#value *= (1 - w) ** (windows - 1);
    this.#windows += windows;
  }

  get value(): number {
    return this.#value;
  }

  get pending(): number {
    return this.#accumulator;
  }

  /** Overrides the smoothed value (used when an actor moves and its history should carry over). */
  set(value: number): void {
    this.#value = value;
  }
}
