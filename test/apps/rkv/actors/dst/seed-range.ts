/**
 * Runs a range of the consensus actor's DST seeds (harness.ts) for one test file: asserts
 * every seed passed (a failure prints its reproduce command), that the faults the runs were meant
 * to inject really happened (node crashes and restarts included), and reports the time per seed. The CI's 200 seeds are split over
 * twenty files of 10 (seeds-*.test.ts) so each stays well under the suite's per-file budget even
 * on a loaded machine: a run drives the whole simulated platform (four actors per replica on
 * SimNodes), ~3–8 thousand events, 150–400 ms per seed on the 2-core dev machine when it is quiet
 * and two or three times that when it is busy.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import {
  type ActorDstOptions,
  type ActorDstStats,
  emptyActorDstStats,
  reproduceActorDst,
  runActorDst,
} from './harness.ts';

type Totals = Omit<ActorDstStats, 'replicas' | 'maxLogRecords'> & {
  fiveReplicaRuns: number;
  maxLogRecords: number;
};

export function assertActorSeedsPass(
  t: TestContext,
  firstSeed: number,
  count: number,
  options: Omit<ActorDstOptions, 'seed' | 'trace'> = {},
): Totals {
  const failures: string[] = [];
  const { replicas: _replicas, ...zero } = emptyActorDstStats(0);
  const totals: Totals = { ...zero, fiveReplicaRuns: 0 };
  let slowestMs = 0;
  let slowestSeed = firstSeed;
  const started = performance.now();
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const seedStarted = performance.now();
    const result = runActorDst({ ...options, seed });
    const ms = performance.now() - seedStarted;
    if (ms > slowestMs) {
      slowestMs = ms;
      slowestSeed = seed;
    }
    const { stats } = result;
    if (stats.replicas === 5) totals.fiveReplicaRuns++;
    for (const key of Object.keys(stats) as (keyof ActorDstStats)[]) {
      if (key === 'replicas') continue;
      if (key === 'maxLogRecords') totals.maxLogRecords = Math.max(totals.maxLogRecords, stats[key]);
      else totals[key] += stats[key];
    }
    if (!result.ok) {
      failures.push(
        `seed ${seed} [${result.check}]: ${result.failure}\n  reproduce: ${reproduceActorDst({ ...options, seed })}`,
      );
    }
  }
  const elapsedMs = performance.now() - started;
  t.diagnostic(
    `seeds ${firstSeed}..${firstSeed + count - 1}: ${(elapsedMs / count).toFixed(0)} ms/seed ` +
      `(slowest: seed ${slowestSeed}, ${slowestMs.toFixed(0)} ms), ${JSON.stringify(totals)}`,
  );
  assert.deepEqual(failures, [], `failing seeds:\n${failures.join('\n')}`);
  // The runs must have been hostile, or passing proves little. These hold for any 10 seeds by a
  // wide margin (each fault is drawn in most runs); they fail if an injector or a path breaks.
  for (const key of [
    'partitions',
    'leaderIsolations',
    'framesDropped',
    'framesDuplicated',
    'caughtUp',
  ] as const) {
    assert.ok(totals[key] >= count / 5, `${key}: ${totals[key]} over ${count} seeds is too few`);
  }
  assert.ok(totals.elections > count, `elections: ${totals.elections} (more than one per run on average)`);
  assert.ok(totals.retransmits > 0, 'the leaders retransmitted accepts');
  assert.ok(totals.deletes >= count, `deletes acknowledged: ${totals.deletes} over ${count} seeds`);
  // Every replica remembers each delete's answer when it applies it: a retry after a fail-over
  // gets it, and DEL_UNKNOWN comes only from a replica restarted or installed since the call.
  assert.equal(
    totals.deletesUnknownUnexplained,
    0,
    `DEL_UNKNOWN answers without a restart or install of the answering replica since the call (of ${totals.deletesUnknown})`,
  );
  if (options.crashes !== false) {
    // Node crash and restart: every file crashes replicas (leaders among them) and each restarted
    // replica recovered from its durable log (a restart before anything was written counts 0).
    assert.ok(totals.crashes >= count, `crashes: ${totals.crashes} over ${count} seeds is too few`);
    assert.equal(totals.restarts, totals.crashes, 'every crashed replica was restarted');
    assert.ok(totals.recovered >= count / 2, `recovered: ${totals.recovered} restarts recovered a log`);
  }
  assert.ok(totals.opsAcknowledged > count * 50, 'clients got work done despite the faults');
  // Truncation keeps the logs short: every replica applied and dropped nearly everything.
  assert.ok(totals.maxLogRecords < 64, `a replica still held ${totals.maxLogRecords} log records at the end`);
  return totals;
}
