/**
 * Runs a range of DST seeds for a test file and asserts that every one passed, that the faults
 * the runs were meant to inject really happened, and reports the time per seed. The CI's 200
 * seeds are split over two files (dst-seeds-*.test.ts) so each stays well under the suite's
 * per-file budget on a loaded 2-core machine; `npm run dst:rkv` runs thousands.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { addDstStats, type DstResult, emptyDstTotals, reproduceCommand, runDst } from './sim-cluster.ts';

export function assertSeedRangePasses(t: TestContext, firstSeed: number, count: number): void {
  const failures: string[] = [];
  const totals = { fiveReplicaRuns: 0, ...emptyDstTotals() };
  let slowestMs = 0;
  let slowestSeed = firstSeed;
  const started = performance.now();
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const seedStarted = performance.now();
    const result: DstResult = runDst({ seed });
    const ms = performance.now() - seedStarted;
    if (ms > slowestMs) {
      slowestMs = ms;
      slowestSeed = seed;
    }
    const { stats } = result;
    if (stats.replicas === 5) totals.fiveReplicaRuns++;
    addDstStats(totals, stats);
    if (!result.ok) {
      failures.push(
        `seed ${seed} [${result.check}]: ${result.failure}\n  reproduce: ${reproduceCommand({ seed })}`,
      );
    }
  }
  const elapsedMs = performance.now() - started;
  t.diagnostic(
    `seeds ${firstSeed}..${firstSeed + count - 1}: ${(elapsedMs / count).toFixed(1)} ms/seed ` +
      `(slowest: seed ${slowestSeed}, ${slowestMs.toFixed(0)} ms), ${JSON.stringify(totals)}`,
  );
  assert.deepEqual(failures, [], `failing seeds:\n${failures.join('\n')}`);

  // The runs must have been hostile, or passing proves little. These hold for any 100 seeds by a
  // wide margin (each kind of fault is drawn in most runs); they fail if a fault injector breaks.
  assert.ok(totals.fiveReplicaRuns > 0 && totals.fiveReplicaRuns < count, 'both 3- and 5-replica groups ran');
  for (const key of [
    'crashes',
    'crashesInsideSync',
    'partitions',
    'snapshotsInstalled',
    'messagesDropped',
    'messagesDuplicated',
    'messagesReordered',
  ] as const) {
    assert.ok(totals[key] >= count / 10, `${key}: ${totals[key]} over ${count} seeds is too few faults`);
  }
  assert.ok(totals.leaderChanges > count, 'leaders changed (more than once per run on average)');
  assert.ok(totals.opsAcknowledged > count * 50, 'clients got work done despite the faults');
}
