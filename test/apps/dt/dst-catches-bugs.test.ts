/**
 * The simulation is only worth its green seeds if it turns red on a broken protocol. Each test
 * wraps the real coordinator in a known bug and requires the seeded runs to report a violation
 * (and the reproduce command to name the seed).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoordinatorLogic } from '../../../src/apps/dt/coordinator-logic.ts';
import {
  type CoordinatorFactory,
  type DtSimulationOptions,
  reproduceCommand,
  runDtSimulation,
} from '../../../src/apps/dt/dst/simulation.ts';
import type { CoordinatorInput } from '../../../src/apps/dt/messages.ts';

function firstFailure(
  options: Omit<DtSimulationOptions, 'seed'>,
  seeds: number,
): { seed: number; violations: readonly string[] } | undefined {
  for (let seed = 1; seed <= seeds; seed++) {
    const result = runDtSimulation({ ...options, seed });
    if (!result.ok) return { seed, violations: result.violations };
  }
  return undefined;
}

test('a coordinator that skips OCC checks (drops the read set) is caught: lost updates', () => {
  // Without the read set, neither the lock-time version check nor validation runs.
  const noReads: CoordinatorFactory = (store, config) => {
    const inner = new CoordinatorLogic(store, config);
    return {
      start: (nonce, nowNs) => inner.start(nonce, nowNs),
      handle: (message: CoordinatorInput, nowNs) =>
        inner.handle(message.type === 'commit-request' ? { ...message, reads: [] } : message, nowNs),
    };
  };
  const failure = firstFailure(
    { workload: 'bank', coordinatorFactory: noReads, faults: { maxCrashesPerPhase: 0 } },
    10,
  );
  assert.ok(failure, 'no seed caught a coordinator without OCC checks');
  const text = failure.violations.join('\n');
  assert.match(text, /lost update|cycle|total balance/);
  assert.match(
    reproduceCommand({ seed: failure.seed, workload: 'bank' }),
    new RegExp(`--seed ${failure.seed} `),
  );
});

test('a coordinator that ignores failed validation is caught: a serializability cycle (write skew)', () => {
  const ignoreValidation: CoordinatorFactory = (store, config) => {
    const inner = new CoordinatorLogic(store, config);
    return {
      start: (nonce, nowNs) => inner.start(nonce, nowNs),
      handle: (message: CoordinatorInput, nowNs) =>
        inner.handle(
          message.type === 'validate-reply' ? { ...message, ok: true, reason: '' } : message,
          nowNs,
        ),
    };
  };
  const failure = firstFailure(
    { workload: 'fasst', keys: 5, coordinatorFactory: ignoreValidation, faults: { maxCrashesPerPhase: 0 } },
    10,
  );
  assert.ok(failure, 'no seed caught a coordinator that ignores validation');
  assert.match(failure.violations.join('\n'), /cycle/);
});

test('a coordinator that commits before the log is durable is caught once the server crashes', () => {
  // It treats its own append as durable at once: a server crash can then lose the record of a
  // commit that participants (some of them) already applied and the client was told about.
  const eager: CoordinatorFactory = (store, config) => {
    const inner = new CoordinatorLogic(store, config);
    const withEagerDurability = (outputs: ReturnType<CoordinatorLogic['handle']>, nowNs: number) => {
      const out = [...outputs];
      for (const output of outputs) {
        if (output.kind === 'send' && output.message.type === 'log-append') {
          const { client, seq, epoch } = output.message;
          out.push(...inner.handle({ type: 'log-durable', client, seq, epoch }, nowNs));
        }
      }
      return out;
    };
    return {
      start: (nonce, nowNs) => inner.start(nonce, nowNs),
      handle: (message: CoordinatorInput, nowNs) => withEagerDurability(inner.handle(message, nowNs), nowNs),
    };
  };
  const failure = firstFailure(
    { workload: 'bank', coordinatorFactory: eager, faults: { maxCrashesPerPhase: 8 }, phases: 4 },
    60,
  );
  assert.ok(failure, 'no seed caught commits acknowledged before fsync');
  assert.match(failure.violations.join('\n'), /committed|lost|version|balance/);
  // Without crashes the same bug is invisible: it is the crash model that exposes it.
  assert.equal(
    firstFailure({ workload: 'bank', coordinatorFactory: eager, faults: { maxCrashesPerPhase: 0 } }, 5),
    undefined,
  );
});
