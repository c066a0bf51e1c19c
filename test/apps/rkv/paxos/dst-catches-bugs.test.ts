/**
 * Mutation checks: the DST is only worth its green runs if it goes red on a broken Paxos. Each of
 * the replica's `PaxosTestingBugs` switches breaks one rule of the protocol; for each, some seed
 * must fail —
 *   (a) with every check on (replica invariants S1–S5 and the replica's own safety assertion), and
 *   (b) judged only by what the clients saw: the linearizability checker (or the lost-write check)
 *       must reject the history on its own, with the replica-level invariants switched off.
 * The first failing seed of each is printed with its repro command, and the same seed must pass
 * with the bug switched off (so the failure is the bug's, not the seed's). No switch breaks the
 * lost-write check (C2) before linearizability, so C2 gets a test of its own on crafted histories.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KvHistoryOp } from '../../../../src/apps/rkv/check/index.ts';
import type { PaxosTestingBugs } from '../../../../src/apps/rkv/paxos/index.ts';
import { type DstCheck, findLostWrite, reproduceCommand, runDst } from './harness/sim-cluster.ts';

/** Seeds tried per bug and mode; every bug fails well inside this (first failures: seeds 1–27). */
const MAX_SEEDS = 60;

const BUGS: readonly { readonly name: keyof PaxosTestingBugs; readonly what: string }[] = [
  { name: 'commitWithoutMajority', what: 'the leader counts a slot chosen on its own accept' },
  { name: 'skipPersistence', what: 'promises and accepts are never made durable' },
  { name: 'ignorePromisedValues', what: 'a new leader fills unchosen slots with no-ops' },
];

const CLIENT_CHECKS: readonly DstCheck[] = ['linearizability', 'lost-write'];

for (const bug of BUGS) {
  for (const invariants of [true, false]) {
    const mode = invariants ? 'every check' : 'the client-history checks alone';
    test(`${bug.name} (${bug.what}) is caught by ${mode}`, (t) => {
      const bugs: PaxosTestingBugs = { [bug.name]: true };
      const options = { bugs, invariants };
      for (let seed = 1; seed <= MAX_SEEDS; seed++) {
        const result = runDst({ seed, ...options });
        if (result.ok) continue;
        if (!invariants && !CLIENT_CHECKS.includes(result.check)) continue; // e.g. liveness: not the checker
        t.diagnostic(
          `seed ${seed} fails [${result.check}]: ${result.failure.split('\n')[0]}; ` +
            `reproduce: ${reproduceCommand({ seed, ...options })}`,
        );
        if (invariants) {
          assert.ok(
            (['invariant', 'safety-error', ...CLIENT_CHECKS] as readonly DstCheck[]).includes(result.check),
            `a safety check, not a crash of the harness, must reject it (got ${result.check}: ${result.failure})`,
          );
        }
        const control = runDst({ seed, invariants });
        assert.ok(control.ok, `seed ${seed} must pass without the bug: ${control.ok ? '' : control.failure}`);
        return;
      }
      assert.fail(`no seed in 1..${MAX_SEEDS} caught ${bug.name} with ${mode}: the DST has lost its teeth`);
    });
  }
}

test('the lost-write check (C2) flags a final read that an acknowledged write should have replaced', () => {
  const reader = 1000;
  const putA: KvHistoryOp = {
    clientId: 1,
    input: { op: 'put', key: 'k', value: 'a' },
    callAt: 1,
    status: 'ok',
    output: { op: 'put' },
    returnAt: 2,
  };
  const putB: KvHistoryOp = {
    clientId: 2,
    input: { op: 'put', key: 'k', value: 'b' },
    callAt: 3,
    status: 'ok',
    output: { op: 'put' },
    returnAt: 4,
  };
  const finalRead = (value: string | null): KvHistoryOp => ({
    clientId: reader,
    input: { op: 'get', key: 'k' },
    callAt: 10,
    status: 'ok',
    output: { op: 'get', value },
    returnAt: 11,
  });
  assert.equal(findLostWrite([putA, putB, finalRead('b')], reader), null);
  assert.match(findLostWrite([putA, putB, finalRead('a')], reader) ?? '', /acknowledged write lost on k/);
  assert.match(findLostWrite([putA, finalRead(null)], reader) ?? '', /lost on k: the final read saw null/);
  // A put of "a" whose outcome is unknown may have landed after b: seeing "a" is then no loss.
  const retryA: KvHistoryOp = {
    clientId: 1,
    input: { op: 'put', key: 'k', value: 'a' },
    callAt: 5,
    status: 'unknown',
  };
  assert.equal(findLostWrite([putA, putB, retryA, finalRead('a')], reader), null);
});
