/**
 * Property: on small random KV histories the checker's verdict equals an exhaustive search over
 * every order that respects real time (with timed-out operations free to happen anywhere after
 * their call, or never). Conditional puts (SET NX / XX) are among the operations.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { KvHistoryOp, KvInput, KvOutput } from '../../../../src/apps/rkv/check/index.ts';
import { checkLinearizability, ILLEGAL, kvModel } from '../../../../src/apps/rkv/check/index.ts';

/** Exhaustive: pick any remaining op that no remaining answered op precedes in real time. */
function bruteForce(history: readonly KvHistoryOp[]): boolean {
  const search = (remaining: readonly KvHistoryOp[], states: ReadonlyMap<string, string | null>): boolean => {
    if (remaining.every((op) => op.status === 'unknown')) return true;
    for (const [index, op] of remaining.entries()) {
      const blocked = remaining.some(
        (other) => other.status === 'ok' && other !== op && other.returnAt < op.callAt,
      );
      if (blocked) continue;
      const state = states.get(op.input.key) ?? null;
      const next = kvModel.step(state, op.input, op.status === 'ok' ? op.output : undefined);
      if (next === ILLEGAL) continue;
      const nextStates = new Map(states).set(op.input.key, next);
      if (search([...remaining.slice(0, index), ...remaining.slice(index + 1)], nextStates)) return true;
    }
    return false;
  };
  return search(history, new Map());
}

const keyArb = fc.constantFrom('x', 'y');
const valueArb = fc.constantFrom('a', 'b', 'c');
const inputArb: fc.Arbitrary<KvInput> = fc.oneof(
  keyArb.map((key) => ({ op: 'get', key }) as const),
  fc.record({ key: keyArb, value: valueArb }).map(({ key, value }) => ({ op: 'put', key, value }) as const),
  keyArb.map((key) => ({ op: 'del', key }) as const),
  fc
    .record({ key: keyArb, value: valueArb, condition: fc.constantFrom('nx' as const, 'xx' as const) })
    .map(({ key, value, condition }) => ({ op: 'cput', key, value, condition }) as const),
);

function outputFor(input: KvInput, pick: number): KvOutput {
  if (input.op === 'put') return { op: 'put' };
  if (input.op === 'del') return { op: 'del', existed: pick % 2 === 0 };
  if (input.op === 'cput') return { op: 'cput', written: pick % 2 === 0 };
  const values = [null, 'a', 'b', 'c'];
  return { op: 'get', value: values[pick % values.length] ?? null };
}

const opArb: fc.Arbitrary<KvHistoryOp> = fc
  .record({
    clientId: fc.integer({ min: 0, max: 3 }),
    input: inputArb,
    callAt: fc.integer({ min: 0, max: 20 }),
    duration: fc.integer({ min: 0, max: 12 }),
    pick: fc.nat(),
    timedOut: fc.boolean(),
  })
  .map(({ clientId, input, callAt, duration, pick, timedOut }) =>
    timedOut && pick % 4 === 0
      ? { clientId, input, callAt, status: 'unknown' as const }
      : {
          clientId,
          input,
          callAt,
          status: 'ok' as const,
          output: outputFor(input, pick),
          returnAt: callAt + duration,
        },
  );

test('the checker agrees with exhaustive search on small random histories', () => {
  let linearizable = 0;
  let rejected = 0;
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 0, maxLength: 7 }), (history) => {
      const expected = bruteForce(history);
      const result = checkLinearizability(kvModel, history);
      assert.notEqual(result.verdict, 'unknown');
      assert.equal(result.verdict === 'linearizable', expected);
      if (expected) linearizable++;
      else rejected++;
    }),
    { numRuns: 600, seed: 20240501 },
  );
  // Both verdicts are exercised, so agreement is not vacuous.
  assert.ok(linearizable > 50 && rejected > 50, `linearizable ${linearizable}, rejected ${rejected}`);
});
