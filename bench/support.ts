/**
 * Small pieces several benchmarks share: a seeded xorshift32 (cheap enough not to show in what is
 * timed), the median of a sample, and a byte-wise key order for the sorted-array baselines.
 */

/** xorshift32: a benchmark's source of randomness, seeded (0 is taken as 1). */
export function xorshift32(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

/** The median (the mean of the middle two for an even count); the input is not reordered. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Lexicographic byte order, a shorter key first on a common prefix. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    const difference = a[i]! - b[i]!;
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}
