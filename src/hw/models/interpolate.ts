/**
 * Interpolation over the published size curves (Fig 2/3 intervals, Fig 6 messaging, Figs 7–10
 * DMA/RDMA): the measurements sit at powers of two, so between two measured sizes a value is
 * interpolated linearly in log(size), which keeps each doubling of size a straight segment, as the
 * plots draw them. Below the smallest measured size the first value holds (nothing gets cheaper
 * than the smallest transfer measured). Above the largest, the caller chooses: hold the last value,
 * or continue the last segment linearly in bytes (right for times that grow with bytes moved).
 */

import type { SizeCurve } from '../schema.ts';

/** What to do past the largest measured size. */
export type BeyondLast = 'hold' | 'linear-in-bytes';

/** The curve's value at `sizeBytes` (see the file comment for the rules). Never negative. */
export function interpolateLogSize(curve: SizeCurve, sizeBytes: number, beyond: BeyondLast = 'hold'): number {
  const sizes = curve.sizesBytes;
  const values = curve.values;
  const count = sizes.length;
  const firstSize = sizes[0]!;
  if (count === 1 || sizeBytes <= firstSize) return values[0]!;
  const lastSize = sizes[count - 1]!;
  if (sizeBytes >= lastSize) {
    const last = values[count - 1]!;
    if (beyond === 'hold' || sizeBytes === lastSize) return last;
    const previousSize = sizes[count - 2]!;
    const slopePerByte = (last - values[count - 2]!) / (lastSize - previousSize);
    return Math.max(0, last + slopePerByte * (sizeBytes - lastSize));
  }
  // Binary search for the segment [sizes[low], sizes[low + 1]] that holds sizeBytes.
  let low = 0;
  let high = count - 1;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (sizes[middle]! <= sizeBytes) low = middle;
    else high = middle;
  }
  const leftSize = sizes[low]!;
  const rightSize = sizes[high]!;
  const fraction = Math.log(sizeBytes / leftSize) / Math.log(rightSize / leftSize);
  const left = values[low]!;
  return Math.max(0, left + fraction * (values[high]! - left));
}

/** A curve from parallel arrays, scaling every value (e.g. µs → ns with 1000). */
export function curveOf(sizesBytes: readonly number[], values: readonly number[], scale = 1): SizeCurve {
  return { sizesBytes: [...sizesBytes], values: values.map((value) => value * scale) };
}
