/**
 * Parsing and validating option values shared by commands. Each parser throws a UsageError that
 * names the option and the accepted form, which main.ts turns into exit code 2.
 */

import { UsageError } from '../errors.ts';

/** A seed: a non-negative integer that fits the simulator's 53-bit seeds. */
export function parseSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seed)) {
    throw new UsageError(`--seed must be a non-negative integer below 2^53, got "${value}"`);
  }
  return seed;
}
