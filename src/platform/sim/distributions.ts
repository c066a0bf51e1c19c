/**
 * Samplers for the simulator's workloads and service times: exponential (and Poisson arrivals),
 * the paper's bimodal service-time mixes, uniform, deterministic, lognormal, and Zipf-distributed
 * keys (iPipe §5 drives its KV store and analytics with skewed keys; Zipf s = 0.99 is the usual
 * YCSB skew).
 *
 * A sampler holds only its parameters (and constants derived from them) and draws from the
 * `Random` passed to each `sample` call: one sampler can serve many seeded streams, and a sample
 * allocates nothing. Each sampler is O(1) per sample: exponentials by the ziggurat method, Zipf by
 * rejection-inversion (Hörmann & Derflinger 1996), which needs no table, so n = 10^7 keys costs no
 * memory.
 *
 * Samples are real numbers; the kernel schedules integer nanoseconds, so round a sampled delay
 * (`Math.round`) before scheduling it.
 */

import type { Random } from '../../random.ts';

/** Draws one number per call from a fixed distribution. */
export interface Sampler {
  sample(random: Random): number;
}

function checkPositive(what: string, value: number): void {
  if (!(value > 0 && value < Number.POSITIVE_INFINITY)) {
    throw new RangeError(`${what} must be a positive finite number, got ${value}`);
  }
}

function checkProbability(what: string, value: number): void {
  if (!(value >= 0 && value <= 1)) {
    throw new RangeError(`${what} must be a probability in [0, 1], got ${value}`);
  }
}

/*
 * Standard exponential variates by the ziggurat method (G. Marsaglia, W. W. Tsang, "The Ziggurat
 * Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000), 256 layers. About 98.9% of
 * draws cost one 32-bit random number, a table lookup, a compare and a multiply; the rest take the
 * wedge or tail path (one exp or log). Inversion (−log u) costs a logarithm on every draw: about
 * 8% of the kernel's hold benchmark when it was measured, and the sampler is in every event there.
 *
 * One draw supplies both the layer (low 8 bits) and the position in it (high 24 bits), so the two are
 * independent (Marsaglia–Tsang's original took both from the same bits, which Doornik (2005) showed
 * correlates them). The price: values inside a layer lie on a lattice of 2^24 points, a relative
 * resolution of 6·10^−8 — for a 1 µs mean, steps of 0.0005 ns, far below the 1-ns rounding of
 * every scheduled delay.
 */
const ZIGGURAT_LAYERS = 256;
const ZIGGURAT_R = 7.697117470131487; // where the tail starts
const ZIGGURAT_V = 3.949659822581572e-3; // area of each layer
const POSITION_SCALE = 2 ** 24;
const zigguratK = new Uint32Array(ZIGGURAT_LAYERS);
const zigguratW = new Float64Array(ZIGGURAT_LAYERS);
const zigguratF = new Float64Array(ZIGGURAT_LAYERS);
{
  let edge = ZIGGURAT_R;
  let previousEdge = ZIGGURAT_R;
  const baseWidth = ZIGGURAT_V / Math.exp(-edge);
  zigguratK[0] = Math.floor((edge / baseWidth) * POSITION_SCALE);
  zigguratK[1] = 0;
  zigguratW[0] = baseWidth / POSITION_SCALE;
  zigguratW[ZIGGURAT_LAYERS - 1] = edge / POSITION_SCALE;
  zigguratF[0] = 1;
  zigguratF[ZIGGURAT_LAYERS - 1] = Math.exp(-edge);
  for (let layer = ZIGGURAT_LAYERS - 2; layer >= 1; layer--) {
    edge = -Math.log(ZIGGURAT_V / edge + Math.exp(-edge));
    zigguratK[layer + 1] = Math.floor((edge / previousEdge) * POSITION_SCALE);
    previousEdge = edge;
    zigguratF[layer] = Math.exp(-edge);
    zigguratW[layer] = edge / POSITION_SCALE;
  }
}

/** A standard exponential variate (mean 1). Inline fast path; the rare rest is out of line. */
export function standardExponential(random: Random): number {
  const bits = random.nextU32();
  const layer = bits & 0xff;
  const position = bits >>> 8;
  if (position < zigguratK[layer]!) return position * zigguratW[layer]!;
  // The unary plus types the out-of-line call's result as a number. Without it the two returns
  // merge as an untyped value where this is inlined, so V8 boxed the fast path's double in a new
  // heap number on every call (an allocation per sample in the kernel bench's hold loop).
  return +standardExponentialSlow(random, layer, position);
}

function standardExponentialSlow(random: Random, firstLayer: number, firstPosition: number): number {
  let layer = firstLayer;
  let position = firstPosition;
  for (;;) {
    // The base layer's overhang is the tail beyond R: R plus a fresh exponential (memorylessness).
    if (layer === 0) return ZIGGURAT_R - Math.log(1 - random.next());
    const x = position * zigguratW[layer]!;
    // In the wedge between this layer's rectangle and the curve: accept under the curve.
    const fx = zigguratF[layer]! + random.next() * (zigguratF[layer - 1]! - zigguratF[layer]!);
    if (fx < Math.exp(-x)) return x;
    const bits = random.nextU32();
    layer = bits & 0xff;
    position = bits >>> 8;
    if (position < zigguratK[layer]!) return position * zigguratW[layer]!;
  }
}

// The samplers' numeric fields start at 0 where they are declared, then take their value in the
// constructor: a field declared without a value is `undefined` first, and V8 then types it "any
// value", so each `sample` checked for a boxed number before reading its mean (see event-heap.ts).

/** Exponential with the given mean (memoryless service times and inter-arrival gaps). */
export class ExponentialSampler implements Sampler {
  readonly mean: number = 0;

  constructor(mean: number) {
    checkPositive('exponential mean', mean);
    this.mean = mean;
  }

  sample(random: Random): number {
    return this.mean * standardExponential(random);
  }
}

/**
 * Gaps between arrivals of a Poisson process of `ratePerSecond`, in nanoseconds: exponential with
 * mean 10^9 / rate. The number of arrivals in any window of T ns is then Poisson(rate · T / 10^9).
 */
export class PoissonArrivalSampler implements Sampler {
  readonly ratePerSecond: number = 0;
  readonly meanGapNs: number = 0;

  constructor(ratePerSecond: number) {
    checkPositive('Poisson arrival rate (per second)', ratePerSecond);
    this.ratePerSecond = ratePerSecond;
    this.meanGapNs = 1e9 / ratePerSecond;
  }

  sample(random: Random): number {
    return this.meanGapNs * standardExponential(random);
  }
}

/**
 * Bimodal, two-point: exactly `a` with probability `probabilityA`, else exactly `b`. The paper's
 * "bimodal" request mixes (e.g. 90% of requests costing 1 µs and 10% costing 10 µs) in their
 * starkest form: no variance within a mode.
 */
export class BimodalPointSampler implements Sampler {
  readonly a: number = 0;
  readonly b: number = 0;
  readonly probabilityA: number = 0;
  readonly mean: number = 0;

  constructor(a: number, b: number, probabilityA: number) {
    if (!(Number.isFinite(a) && Number.isFinite(b))) throw new RangeError(`bimodal values must be finite`);
    checkProbability('bimodal probabilityA', probabilityA);
    this.a = a;
    this.b = b;
    this.probabilityA = probabilityA;
    this.mean = probabilityA * a + (1 - probabilityA) * b;
  }

  sample(random: Random): number {
    return random.next() < this.probabilityA ? this.a : this.b;
  }
}

/**
 * Bimodal, two-exponential (a hyperexponential): exponential with mean `meanA` with probability
 * `probabilityA`, else exponential with mean `meanB`. Same mode means as the two-point form, but
 * each mode has exponential spread, which is what measured service times look like.
 */
export class BimodalExponentialSampler implements Sampler {
  readonly meanA: number = 0;
  readonly meanB: number = 0;
  readonly probabilityA: number = 0;
  readonly mean: number = 0;

  constructor(meanA: number, meanB: number, probabilityA: number) {
    checkPositive('bimodal meanA', meanA);
    checkPositive('bimodal meanB', meanB);
    checkProbability('bimodal probabilityA', probabilityA);
    this.meanA = meanA;
    this.meanB = meanB;
    this.probabilityA = probabilityA;
    this.mean = probabilityA * meanA + (1 - probabilityA) * meanB;
  }

  sample(random: Random): number {
    const mean = random.next() < this.probabilityA ? this.meanA : this.meanB;
    return mean * standardExponential(random);
  }
}

/** Uniform on [lo, hi). */
export class UniformSampler implements Sampler {
  readonly lo: number = 0;
  readonly hi: number = 0;
  readonly mean: number = 0;

  constructor(lo: number, hi: number) {
    if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo <= hi)) {
      throw new RangeError(`uniform bounds must be finite with lo ≤ hi, got [${lo}, ${hi})`);
    }
    this.lo = lo;
    this.hi = hi;
    this.mean = (lo + hi) / 2;
  }

  sample(random: Random): number {
    return this.lo + (this.hi - this.lo) * random.next();
  }
}

/** Always `value` (fixed costs; it draws nothing, so it leaves the stream untouched). */
export class DeterministicSampler implements Sampler {
  readonly value: number = 0;
  readonly mean: number = 0;

  constructor(value: number) {
    if (!Number.isFinite(value)) throw new RangeError(`deterministic value must be finite, got ${value}`);
    this.value = value;
    this.mean = value;
  }

  sample(_random: Random): number {
    return this.value;
  }
}

/**
 * Lognormal: exp(N(mu, sigma²)). Heavy-ish right tail for service times. Normal deviates by
 * Box–Muller, using one of the pair (keeping the other would put per-stream state in a shared
 * sampler). `LogNormalSampler.fromMean(mean, sigma)` picks mu so the mean is `mean`.
 */
export class LogNormalSampler implements Sampler {
  readonly mu: number = 0;
  readonly sigma: number = 0;
  readonly mean: number = 0;

  constructor(mu: number, sigma: number) {
    if (!Number.isFinite(mu)) throw new RangeError(`lognormal mu must be finite, got ${mu}`);
    if (!(sigma >= 0 && sigma < Number.POSITIVE_INFINITY)) {
      throw new RangeError(`lognormal sigma must be finite and ≥ 0, got ${sigma}`);
    }
    this.mu = mu;
    this.sigma = sigma;
    this.mean = Math.exp(mu + (sigma * sigma) / 2);
  }

  static fromMean(mean: number, sigma: number): LogNormalSampler {
    checkPositive('lognormal mean', mean);
    return new LogNormalSampler(Math.log(mean) - (sigma * sigma) / 2, sigma);
  }

  sample(random: Random): number {
    const radius = Math.sqrt(-2 * Math.log(1 - random.next()));
    const normal = radius * Math.cos(2 * Math.PI * random.next());
    return Math.exp(this.mu + this.sigma * normal);
  }
}

/**
 * Zipf over [0, n): rank k + 1 has probability (k + 1)^−s / H(n, s), so 0 is the most popular.
 *
 * Rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-inversion to generate variates from
 * monotone discrete distributions", ACM TOMACS 6(3), 1996), as in Apache Commons RNG's
 * RejectionInversionZipfSampler: invert the integral of a continuous hat function h(x) = x^−s
 * that dominates the probabilities, and accept the rounded point unless it lands in the thin
 * sliver between hat and histogram. It rarely rejects (measured here: 1.001 uniform draws per
 * sample at n = 10^6..10^7, s = 0.99; 1.013 at s = 2), and each try is a few log/exp calls — about
 * 100 ns — with no table, for any n up to 2^53.
 *
 * Ranks are not scrambled: adjacent keys are adjacent in popularity. Hash the result if the model
 * needs popular keys spread over the key space (YCSB's "scrambled Zipfian").
 */
export class ZipfSampler implements Sampler {
  readonly n: number = 0;
  readonly exponent: number = 0;
  readonly #hIntegralX1: number = 0;
  readonly #hIntegralN: number = 0;
  readonly #squeeze: number = 0;

  constructor(n: number, exponent: number) {
    if (!(Number.isSafeInteger(n) && n >= 1)) throw new RangeError(`Zipf n must be an integer ≥ 1, got ${n}`);
    checkPositive('Zipf exponent s', exponent);
    this.n = n;
    this.exponent = exponent;
    this.#hIntegralX1 = this.#hIntegral(1.5) - 1;
    this.#hIntegralN = this.#hIntegral(n + 0.5);
    this.#squeeze = 2 - this.#hIntegralInverse(this.#hIntegral(2.5) - this.#h(2));
  }

  sample(random: Random): number {
    const n = this.n;
    const hIntegralN = this.#hIntegralN;
    const span = this.#hIntegralX1 - hIntegralN;
    for (;;) {
      // u is uniform on (H(n + ½), H(1.5) − 1]; invert the hat's integral there.
      // 53-bit uniforms: with 32 bits, u would be too coarse to tell tail ranks apart at n ≈ 10^9.
      const u = hIntegralN + random.nextDouble() * span;
      const x = this.#hIntegralInverse(u);
      let k = Math.floor(x + 0.5);
      if (k < 1) k = 1;
      else if (k > n) k = n;
      // Accept at once inside the squeeze, else test against the exact histogram bar.
      if (k - x <= this.#squeeze || u >= this.#hIntegral(k + 0.5) - this.#h(k)) return k - 1;
    }
  }

  /** H(x) = ((x^(1−s)) − 1) / (1 − s), written to stay accurate as s → 1 (where H → log x). */
  #hIntegral(x: number): number {
    const logX = Math.log(x);
    return expm1OverX((1 - this.exponent) * logX) * logX;
  }

  /** h(x) = x^−s. */
  #h(x: number): number {
    return Math.exp(-this.exponent * Math.log(x));
  }

  /** The inverse of H. */
  #hIntegralInverse(x: number): number {
    let t = x * (1 - this.exponent);
    if (t < -1) t = -1; // Guards rounding at the lower end; the exact value is ≥ −1.
    return Math.exp(log1pOverX(t) * x);
  }
}

/** log(1 + x) / x, with its series near 0 where the quotient loses precision. */
function log1pOverX(x: number): number {
  if (Math.abs(x) > 1e-8) return Math.log1p(x) / x;
  return 1 - x * (0.5 - x * (1 / 3 - 0.25 * x));
}

/** (e^x − 1) / x, with its series near 0. */
function expm1OverX(x: number): number {
  if (Math.abs(x) > 1e-8) return Math.expm1(x) / x;
  return 1 + x * 0.5 * (1 + (x / 3) * (1 + 0.25 * x));
}

/** A sampler described as data (configs, CLI options, stored results). */
export type DistributionSpec =
  | { readonly kind: 'exponential'; readonly mean: number }
  | { readonly kind: 'poisson-arrivals'; readonly ratePerSecond: number }
  | { readonly kind: 'bimodal-point'; readonly a: number; readonly b: number; readonly probabilityA: number }
  | {
      readonly kind: 'bimodal-exponential';
      readonly meanA: number;
      readonly meanB: number;
      readonly probabilityA: number;
    }
  | { readonly kind: 'uniform'; readonly lo: number; readonly hi: number }
  | { readonly kind: 'deterministic'; readonly value: number }
  | { readonly kind: 'lognormal'; readonly mean: number; readonly sigma: number }
  | { readonly kind: 'zipf'; readonly n: number; readonly exponent: number };

/** Builds the sampler a spec describes. Throws a RangeError for parameters out of range. */
export function createSampler(spec: DistributionSpec): Sampler {
  switch (spec.kind) {
    case 'exponential':
      return new ExponentialSampler(spec.mean);
    case 'poisson-arrivals':
      return new PoissonArrivalSampler(spec.ratePerSecond);
    case 'bimodal-point':
      return new BimodalPointSampler(spec.a, spec.b, spec.probabilityA);
    case 'bimodal-exponential':
      return new BimodalExponentialSampler(spec.meanA, spec.meanB, spec.probabilityA);
    case 'uniform':
      return new UniformSampler(spec.lo, spec.hi);
    case 'deterministic':
      return new DeterministicSampler(spec.value);
    case 'lognormal':
      return LogNormalSampler.fromMean(spec.mean, spec.sigma);
    case 'zipf':
      return new ZipfSampler(spec.n, spec.exponent);
  }
}
