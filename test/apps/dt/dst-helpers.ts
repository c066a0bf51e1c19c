/**
 * Shared driver of the DT deterministic-simulation tests: runs a range of seeds and fails with
 * every failing seed's violations and the command that reproduces it (STYLE.md: a failing seed is
 * reproduced exactly).
 */

import assert from 'node:assert/strict';
import {
  type DtSimulationOptions,
  type DtSimulationResult,
  type DtSimulationStats,
  reproduceCommand,
  runDtSimulation,
} from '../../../src/apps/dt/dst/simulation.ts';

/** Sums of the counters that show the faults really happened. */
export interface SeedTotals {
  seeds: number;
  committed: number;
  clientAborted: number;
  dropped: number;
  duplicated: number;
  coordinatorCrashes: number;
  serverCrashes: number;
  participantCrashes: number;
  checkpoints: number;
  recoveredPending: number;
  quiescentPoints: number;
}

const COUNTED = [
  'committed',
  'clientAborted',
  'dropped',
  'duplicated',
  'coordinatorCrashes',
  'serverCrashes',
  'participantCrashes',
  'checkpoints',
  'recoveredPending',
  'quiescentPoints',
] as const satisfies readonly (keyof DtSimulationStats)[];

/** Runs seeds `first .. first + count - 1` with `options`; asserts every one passed. */
export function runSeeds(
  first: number,
  count: number,
  options: Omit<DtSimulationOptions, 'seed'>,
): SeedTotals {
  const totals: SeedTotals = {
    seeds: 0,
    committed: 0,
    clientAborted: 0,
    dropped: 0,
    duplicated: 0,
    coordinatorCrashes: 0,
    serverCrashes: 0,
    participantCrashes: 0,
    checkpoints: 0,
    recoveredPending: 0,
    quiescentPoints: 0,
  };
  const failures: string[] = [];
  for (let seed = first; seed < first + count; seed++) {
    const result: DtSimulationResult = runDtSimulation({ ...options, seed });
    totals.seeds++;
    for (const key of COUNTED) totals[key] += result.stats[key];
    if (!result.ok) {
      failures.push(
        `seed ${seed}: ${result.violations.join(' | ')}\n  reproduce: ${reproduceCommand({ ...options, seed })}`,
      );
    }
  }
  assert.deepEqual(failures, [], `${failures.length} failing seed(s):\n${failures.join('\n')}`);
  return totals;
}
