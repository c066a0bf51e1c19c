/**
 * Property: on small random KV histories the checker's verdict equals an exhaustive search over
 * every order that respects real time (with timed-out operations free to happen anywhere after
 * their call, or never). Conditional puts (SET NX / XX) are among the operations; a second property
 * adds scan pages, which join the keys they read into one part (kv-model.ts): the exhaustive
 * search runs on the whole map, unpartitioned, so a partition that split what a scan read would
 * disagree with it.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { KvHistoryOp, KvInput, KvOutput, KvState } from '../../../../src/apps/rkv/check/index.ts';
import { checkLinearizability, ILLEGAL, kvModel } from '../../../../src/apps/rkv/check/index.ts';

/** Exhaustive: pick any remaining op that no remaining answered op precedes in real time. */
function bruteForce(history: readonly KvHistoryOp[]): boolean {
  const search = (remaining: readonly KvHistoryOp[], state: KvState): boolean => {
    if (remaining.every((op) => op.status === 'unknown')) return true;
    for (const [index, op] of remaining.entries()) {
      const blocked = remaining.some(
        (other) => other.status === 'ok' && other !== op && other.returnAt < op.callAt,
      );
      if (blocked) continue;
      const next = kvModel.step(state, op.input, op.status === 'ok' ? op.output : undefined);
      if (next === ILLEGAL) continue;
      if (search([...remaining.slice(0, index), ...remaining.slice(index + 1)], next)) return true;
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
  if (input.op === 'scan') {
    // Plausible pages more often than not: none, or one or two of the values the puts write.
    const values = ['a', 'b', 'c'];
    const pairs: (readonly [string, string])[] = [];
    if (pick % 3 !== 0 && input.start <= 'x' && (input.end === null || input.end > 'x'))
      pairs.push(['x', values[pick % 3] as string]);
    if (pick % 5 === 4 && input.start <= 'y' && (input.end === null || input.end > 'y'))
      pairs.push(['y', values[(pick >> 2) % 3] as string]);
    return { op: 'scan', pairs: pairs.slice(0, input.limit), next: pick % 7 === 0 ? 'y' : null };
  }
  if (input.op === 'put') return { op: 'put' };
  if (input.op === 'del') return { op: 'del', existed: pick % 2 === 0 };
  if (input.op === 'cput') return { op: 'cput', written: pick % 2 === 0 };
  const values = [null, 'a', 'b', 'c'];
  return { op: 'get', value: values[pick % values.length] ?? null };
}

const scanArb: fc.Arbitrary<KvInput> = fc
  .record({
    start: fc.constantFrom('', 'x', 'y', 'z'),
    end: fc.constantFrom(null, 'y', 'z'),
    limit: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ start, end, limit }) => ({ op: 'scan', start, end, limit }) as const);

const opArb = (inputs: fc.Arbitrary<KvInput>): fc.Arbitrary<KvHistoryOp> =>
  fc
    .record({
      clientId: fc.integer({ min: 0, max: 3 }),
      input: inputs,
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
    fc.property(fc.array(opArb(inputArb), { minLength: 0, maxLength: 7 }), (history) => {
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

/**
 * The history with every answered scan's page replaced by what a sequential run in call order
 * (writes as drawn, answered or not) would have answered: mostly-linearizable histories with
 * non-empty pages, which random pages rarely are.
 */
function withReplayedScans(history: readonly KvHistoryOp[]): KvHistoryOp[] {
  const state = new Map<string, string>();
  const order = [...history.keys()].sort((a, b) => history[a]!.callAt - history[b]!.callAt || a - b);
  const out = [...history];
  for (const index of order) {
    const op = history[index]!;
    const input = op.input;
    if (input.op === 'put') state.set(input.key, input.value);
    else if (input.op === 'del') state.delete(input.key);
    else if (input.op === 'scan' && op.status === 'ok') {
      const live = [...state]
        .filter(([key]) => key >= input.start && (input.end === null || key < input.end))
        .sort(([a], [b]) => (a < b ? -1 : 1));
      const pairs = live.slice(0, input.limit);
      const next = live.length > input.limit ? (live[input.limit] as [string, string])[0] : null;
      out[index] = { ...op, output: { op: 'scan', pairs, next } };
    }
  }
  return out;
}

test('with scan pages, the checker agrees with exhaustive search over the whole map', () => {
  let linearizable = 0;
  let rejected = 0;
  let scansWithPairs = 0;
  fc.assert(
    fc.property(
      fc.array(opArb(fc.oneof(inputArb, scanArb, scanArb)), { minLength: 0, maxLength: 7 }),
      fc.boolean(),
      (drawn, replay) => {
        const history = replay ? withReplayedScans(drawn) : drawn;
        const expected = bruteForce(history);
        const result = checkLinearizability(kvModel, history);
        assert.notEqual(result.verdict, 'unknown');
        assert.equal(result.verdict === 'linearizable', expected);
        if (expected) {
          linearizable++;
          if (
            history.some((op) => op.status === 'ok' && op.output.op === 'scan' && op.output.pairs.length > 0)
          )
            scansWithPairs++;
        } else rejected++;
      },
    ),
    { numRuns: 800, seed: 20261122 },
  );
  assert.ok(linearizable > 50 && rejected > 50, `linearizable ${linearizable}, rejected ${rejected}`);
  assert.ok(scansWithPairs > 20, `linearizable histories with a non-empty scan page: ${scansWithPairs}`);
});
