/**
 * Small statistics helpers for the sampler tests: tolerances come from the sampling distribution
 * of the estimator (standard errors, chi-square quantiles), so a test with a fixed seed is both
 * deterministic and principled — a correct sampler passes with overwhelming probability over seeds,
 * and a wrong one fails by many standard errors.
 */

/** Standard-normal quantile for one-sided tail probability 1e-6 (used for every chi-square bound). */
const Z_ONE_IN_A_MILLION = 4.753;

/**
 * The chi-square value exceeded with probability about 1e-6 for `degreesOfFreedom`, by the
 * Wilson–Hilferty approximation (accurate to a few percent for df ≥ 3).
 */
export function chiSquareCritical(degreesOfFreedom: number, z = Z_ONE_IN_A_MILLION): number {
  const k = degreesOfFreedom;
  const term = 1 - 2 / (9 * k) + z * Math.sqrt(2 / (9 * k));
  return k * term ** 3;
}

/** Pearson's chi-square statistic of observed counts against expected counts. */
export function chiSquare(observed: readonly number[], expected: readonly number[]): number {
  let statistic = 0;
  for (let index = 0; index < observed.length; index++) {
    const e = expected[index]!;
    statistic += (observed[index]! - e) ** 2 / e;
  }
  return statistic;
}

/** Mean and (unbiased) variance of `count` draws from `draw`. */
export function moments(count: number, draw: () => number): { mean: number; variance: number } {
  // Welford's update: stable for large counts and large values.
  let mean = 0;
  let m2 = 0;
  for (let index = 1; index <= count; index++) {
    const x = draw();
    const delta = x - mean;
    mean += delta / index;
    m2 += delta * (x - mean);
  }
  return { mean, variance: m2 / (count - 1) };
}

/** How many standard errors every mean/proportion check allows (two-sided p ≈ 6e-7). */
export const TOLERANCE_SE = 5;
