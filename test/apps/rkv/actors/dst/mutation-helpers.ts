/**
 * The DST's checks can fail: with a test-only mutation switched on in the setup message
 * (consensus-actor.ts UNSAFE_*), runs of the same harness on the CI's first seeds must be
 * rejected, by the linearizability checker or the lost-write check (both judge only what clients
 * saw). Shared by mutation-*.test.ts.
 */
import assert from 'node:assert/strict';
import { reproduceActorDst, runActorDst } from './harness.ts';

/** Runs seeds first..first+count−1 with `unsafe`; returns the failing ones, each asserted client-caught. */
export function failingSeeds(unsafe: number, first: number, count: number): string[] {
  const failed: string[] = [];
  for (let seed = first; seed < first + count; seed++) {
    const result = runActorDst({ seed, unsafe });
    if (!result.ok) {
      assert.ok(
        result.check === 'linearizability' || result.check === 'lost-write',
        `seed ${seed}: the mutation should be caught by a client-side check, got ${result.check}: ` +
          `${result.failure}\n  reproduce: ${reproduceActorDst({ seed, unsafe })}`,
      );
      failed.push(`${seed} (${result.check})`);
    }
  }
  return failed;
}

/**
 * Like `failingSeeds`, for mutations that may also stall a run (a replica that forgot its log can
 * leave the group without a leader it agrees on): returns every failing seed with its check; the
 * caller asserts that a client-side check caught at least one.
 */
export function failingSeedsAnyCheck(
  unsafe: number,
  first: number,
  count: number,
  options: { readonly laggards?: boolean } = {},
): { readonly seed: number; readonly check: string }[] {
  const failed: { seed: number; check: string }[] = [];
  for (let seed = first; seed < first + count; seed++) {
    const result = runActorDst({ seed, unsafe, ...options });
    if (!result.ok) {
      assert.notEqual(
        result.check,
        'exception',
        `seed ${seed}: ${result.failure}\n  reproduce: ${reproduceActorDst({ seed, unsafe, ...options })}`,
      );
      failed.push({ seed, check: result.check });
    }
  }
  return failed;
}
