/**
 * Small deterministic optimizers for the calibration scripts (fit-forwarding.ts): a bounded
 * Nelder–Mead simplex and a bounded 1-D minimizer (grid, then golden-section refinement). No
 * randomness anywhere, so a fit re-run gives the same constants to the last digit.
 */

/** A box constraint per dimension. */
export interface Bounds {
  readonly lower: readonly number[];
  readonly upper: readonly number[];
}

function clampInto(point: readonly number[], bounds: Bounds): number[] {
  return point.map((value, index) => Math.min(bounds.upper[index]!, Math.max(bounds.lower[index]!, value)));
}

/** Result of a minimization. */
export interface Minimum {
  readonly point: readonly number[];
  readonly value: number;
}

/**
 * Nelder–Mead with every trial point clamped into the box. Standard coefficients (reflection 1,
 * expansion 2, contraction ½, shrink ½); stops after `maxEvaluations` or when the simplex's values
 * agree to `tolerance`.
 */
export function nelderMead(
  objective: (point: readonly number[]) => number,
  start: readonly number[],
  bounds: Bounds,
  options: {
    readonly step?: readonly number[];
    readonly maxEvaluations?: number;
    readonly tolerance?: number;
  } = {},
): Minimum {
  const dimensions = start.length;
  const maxEvaluations = options.maxEvaluations ?? 4000;
  const tolerance = options.tolerance ?? 1e-12;
  let evaluations = 0;
  const evaluate = (point: number[]): { point: number[]; value: number } => {
    evaluations++;
    const clamped = clampInto(point, bounds);
    return { point: clamped, value: objective(clamped) };
  };
  const simplex = [evaluate([...start])];
  for (let index = 0; index < dimensions; index++) {
    const vertex = [...start];
    const range = bounds.upper[index]! - bounds.lower[index]!;
    vertex[index] = vertex[index]! + (options.step?.[index] ?? range * 0.1);
    simplex.push(evaluate(vertex));
  }
  while (evaluations < maxEvaluations) {
    simplex.sort((a, b) => a.value - b.value);
    const best = simplex[0]!;
    const worst = simplex[dimensions]!;
    if (Math.abs(worst.value - best.value) <= tolerance * (Math.abs(best.value) + tolerance)) break;
    const centroid = new Array<number>(dimensions).fill(0);
    for (let vertex = 0; vertex < dimensions; vertex++) {
      for (let index = 0; index < dimensions; index++) {
        centroid[index] = centroid[index]! + simplex[vertex]!.point[index]! / dimensions;
      }
    }
    const along = (factor: number): number[] =>
      centroid.map((value, index) => value + factor * (value - worst.point[index]!));
    const reflected = evaluate(along(1));
    const secondWorst = simplex[dimensions - 1]!;
    if (reflected.value < best.value) {
      const expanded = evaluate(along(2));
      simplex[dimensions] = expanded.value < reflected.value ? expanded : reflected;
    } else if (reflected.value < secondWorst.value) {
      simplex[dimensions] = reflected;
    } else {
      const contracted = evaluate(along(reflected.value < worst.value ? 0.5 : -0.5));
      if (contracted.value < Math.min(worst.value, reflected.value)) {
        simplex[dimensions] = contracted;
      } else {
        for (let vertex = 1; vertex <= dimensions; vertex++) {
          const shrunk = simplex[vertex]!.point.map(
            (value, index) => best.point[index]! + 0.5 * (value - best.point[index]!),
          );
          simplex[vertex] = evaluate(shrunk);
        }
      }
    }
  }
  simplex.sort((a, b) => a.value - b.value);
  return { point: simplex[0]!.point, value: simplex[0]!.value };
}

/**
 * Minimizes a function of one variable on [lower, upper]: the best of `gridPoints` evenly spaced
 * samples, then golden-section search between that sample's neighbours (robust to the flat
 * stretches that line-rate-capped objectives have).
 */
export function minimizeOnInterval(
  objective: (x: number) => number,
  lower: number,
  upper: number,
  gridPoints = 200,
): Minimum {
  if (!(upper > lower)) return { point: [lower], value: objective(lower) };
  const step = (upper - lower) / gridPoints;
  let bestIndex = 0;
  let bestValue = Number.POSITIVE_INFINITY;
  for (let index = 0; index <= gridPoints; index++) {
    const value = objective(lower + index * step);
    if (value < bestValue) {
      bestValue = value;
      bestIndex = index;
    }
  }
  let left = lower + Math.max(0, bestIndex - 1) * step;
  let right = lower + Math.min(gridPoints, bestIndex + 1) * step;
  const ratio = (Math.sqrt(5) - 1) / 2;
  let inner1 = right - ratio * (right - left);
  let inner2 = left + ratio * (right - left);
  let value1 = objective(inner1);
  let value2 = objective(inner2);
  for (let iteration = 0; iteration < 60; iteration++) {
    if (value1 <= value2) {
      right = inner2;
      inner2 = inner1;
      value2 = value1;
      inner1 = right - ratio * (right - left);
      value1 = objective(inner1);
    } else {
      left = inner1;
      inner1 = inner2;
      value1 = value2;
      inner2 = left + ratio * (right - left);
      value2 = objective(inner2);
    }
  }
  const refined = value1 <= value2 ? { x: inner1, value: value1 } : { x: inner2, value: value2 };
  const gridBest = lower + bestIndex * step;
  return refined.value <= bestValue
    ? { point: [refined.x], value: refined.value }
    : { point: [gridBest], value: bestValue };
}
