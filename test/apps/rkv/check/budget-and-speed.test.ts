/**
 * The checker is bounded (it answers "unknown" instead of hanging) and fast on the history sizes
 * the simulation produces: thousands of operations from several concurrent clients.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KvHistoryOp, KvInput, KvOutput } from '../../../../src/apps/rkv/check/index.ts';
import { checkLinearizability, kvModel } from '../../../../src/apps/rkv/check/index.ts';
import { HistoryError } from '../../../../src/apps/rkv/paxos/index.ts';
import { Random } from '../../../../src/random.ts';
import { get, ok, put, putOk, read } from './history-builders.ts';

/**
 * A linearizable history by construction: each client runs operations back to back; every
 * operation gets a hidden linearization point inside its interval, and outputs come from applying
 * the operations in the order of those points.
 */
function generateHistory(seed: number, opCount: number, clients: number, keys: number): KvHistoryOp[] {
  const random = new Random(seed);
  const pending: {
    op: Omit<KvHistoryOp, 'status' | 'output' | 'returnAt'>;
    point: number;
    returnAt: number;
  }[] = [];
  const clientTime = new Array<number>(clients).fill(0);
  for (let i = 0; i < opCount; i++) {
    const clientId = i % clients;
    const callAt = clientTime[clientId]! + random.int(0, 5);
    const returnAt = callAt + random.int(1, 40);
    clientTime[clientId] = returnAt + 1;
    const key = `k${random.int(0, keys)}`;
    const roll = random.int(0, 10);
    const input: KvInput =
      roll < 5 ? { op: 'get', key } : roll < 9 ? { op: 'put', key, value: `v${i}` } : { op: 'del', key };
    pending.push({
      op: { clientId, input, callAt },
      point: callAt + random.int(0, returnAt - callAt + 1),
      returnAt,
    });
  }
  const state = new Map<string, string>();
  const history: KvHistoryOp[] = [];
  for (const { op, returnAt } of [...pending].sort((a, b) => a.point - b.point)) {
    const input = op.input;
    if (input.op === 'scan') continue;
    let output: KvOutput;
    if (input.op === 'get') output = { op: 'get', value: state.get(input.key) ?? null };
    else if (input.op === 'put') {
      state.set(input.key, input.value);
      output = { op: 'put' };
    } else output = { op: 'del', existed: state.delete(input.key) };
    history.push({ ...op, status: 'ok', output, returnAt });
  }
  return history;
}

test('5,000 operations on one key from 8 clients check quickly', () => {
  const history = generateHistory(7, 5000, 8, 1);
  const started = performance.now();
  const result = checkLinearizability(kvModel, history);
  const elapsedMs = performance.now() - started;
  assert.equal(result.verdict, 'linearizable');
  assert.ok(elapsedMs < 5000, `took ${elapsedMs.toFixed(0)} ms`);
});

test('20,000 operations over 50 keys check quickly, and one corrupted read is caught', () => {
  const history = generateHistory(11, 20000, 16, 50);
  let started = performance.now();
  const result = checkLinearizability(kvModel, history);
  assert.equal(result.verdict, 'linearizable');
  assert.ok(performance.now() - started < 5000);

  // Corrupt one read to return a value that was never written.
  const index = history.findIndex((op) => op.input.op === 'get' && op.status === 'ok');
  const victim = history[index]!;
  assert.equal(victim.status, 'ok');
  history[index] = { ...victim, output: { op: 'get', value: 'never-written' } } as KvHistoryOp;
  started = performance.now();
  const broken = checkLinearizability(kvModel, history);
  assert.equal(broken.verdict, 'not-linearizable');
  assert.ok(performance.now() - started < 5000);
});

test('a search over its step budget answers unknown, not a verdict', () => {
  const history = generateHistory(3, 400, 8, 1);
  const result = checkLinearizability(kvModel, history, { maxStepsPerPartition: 50 });
  assert.equal(result.verdict, 'unknown');
  if (result.verdict === 'unknown') assert.match(result.reason, /exceeded 50 steps/);
});

test('a wall-clock limit also ends the search with unknown', () => {
  // Many concurrent writes of distinct values and a final read of a value none wrote: every
  // order must be tried (the memo cannot help much), so this takes long without a limit.
  const history: KvHistoryOp[] = [];
  for (let i = 0; i < 60; i++) history.push(ok(i, put('x', `v${i}`), putOk, 0, 100));
  for (let i = 0; i < 60; i++) history.push(ok(100 + i, get('x'), read(`v${(i * 7) % 60}`), 0, 100));
  history.push(ok(999, get('x'), read('none'), 200, 201));
  const started = performance.now();
  const result = checkLinearizability(kvModel, history, { timeLimitMs: 50, maxStepsPerPartition: 1e12 });
  assert.equal(result.verdict, 'unknown');
  if (result.verdict === 'unknown') assert.match(result.reason, /time limit/);
  assert.ok(performance.now() - started < 1000);
});

test('a history with a return before its call is refused with a clear error', () => {
  assert.throws(
    () => checkLinearizability(kvModel, [ok(1, get('x'), read(null), 10, 5)]),
    (error: unknown) =>
      error instanceof HistoryError && /returns \(5\) before its call \(10\)/.test(error.message),
  );
});
