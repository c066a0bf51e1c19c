/**
 * Reads a whole disk through `range` reads of at most `budget` entries each, as the SSTable reader
 * does for a scan page: each read either ends (no resume key) or stops at the key it did not visit,
 * which must lie past where it started. Shared by SimDisk's and LsmDisk's step-budget tests.
 */
import assert from 'node:assert/strict';
import type { SimDisk } from '../../../../src/apps/rkv/actors/sim-disk.ts';

export function walkRangeInSteps(disk: SimDisk, budget: number): { keys: Uint8Array[]; reads: number } {
  const keys: Uint8Array[] = [];
  let from: Uint8Array = new Uint8Array(0);
  let reads = 0;
  for (;;) {
    reads++;
    const range = disk.range(from, undefined, budget);
    let step = range.next();
    for (; step.done !== true; step = range.next()) keys.push(step.value[0]);
    if (step.value === undefined) return { keys, reads };
    assert.ok(Buffer.compare(step.value, from) > 0, 'each read moves on');
    from = step.value;
  }
}
