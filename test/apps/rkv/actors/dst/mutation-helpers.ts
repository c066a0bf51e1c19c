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
