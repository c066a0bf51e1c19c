import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KvHistoryOp } from '../../../../src/apps/rkv/check/index.ts';
import { checkLinearizability, describeCheckResult, kvModel } from '../../../../src/apps/rkv/check/index.ts';
import { del, deleted, get, lost, ok, put, putOk, read } from './history-builders.ts';

function assertAccepted(history: KvHistoryOp[]): void {
  const result = checkLinearizability(kvModel, history);
  assert.equal(result.verdict, 'linearizable', describeCheckResult(kvModel, result));
}

test('the empty history and a sequential run are linearizable', () => {
  assertAccepted([]);
  assertAccepted([
    ok(1, get('x'), read(null), 0, 1),
    ok(1, put('x', 'a'), putOk, 2, 3),
    ok(1, get('x'), read('a'), 4, 5),
    ok(1, del('x'), deleted(true), 6, 7),
    ok(1, del('x'), deleted(false), 8, 9),
    ok(1, get('x'), read(null), 10, 11),
  ]);
});

test('reads overlapping a write may see either value, in an order the write allows', () => {
  // The later-returning read sees the old value: fine, since it overlaps the other read and
  // can be linearized before the write.
  assertAccepted([
    ok(1, put('x', 'new'), putOk, 0, 100),
    ok(2, get('x'), read('new'), 10, 50),
    ok(3, get('x'), read(null), 20, 40),
  ]);
});

test('concurrent writes may be ordered either way, as long as every reader agrees', () => {
  assertAccepted([
    ok(1, put('x', 'a'), putOk, 0, 10),
    ok(2, put('x', 'b'), putOk, 0, 10),
    ok(3, get('x'), read('a'), 11, 12),
    ok(4, get('x'), read('a'), 13, 14),
  ]);
  assertAccepted([
    ok(1, put('x', 'a'), putOk, 0, 10),
    ok(2, put('x', 'b'), putOk, 5, 15),
    ok(3, get('x'), read('b'), 6, 7),
    ok(3, get('x'), read('a'), 8, 9),
  ]);
});

test('a timed-out write may have happened, or not', () => {
  assertAccepted([lost(1, put('x', 'maybe'), 0), ok(2, get('x'), read('maybe'), 10, 20)]);
  assertAccepted([lost(1, put('x', 'maybe'), 0), ok(2, get('x'), read(null), 10, 20)]);
  // …and it may take effect long after its client gave up, between two later reads.
  assertAccepted([
    lost(1, put('x', 'late'), 0),
    ok(2, get('x'), read(null), 100, 110),
    ok(2, get('x'), read('late'), 200, 210),
  ]);
});

test('a timed-out delete and a timed-out read constrain nothing', () => {
  assertAccepted([
    ok(1, put('x', 'a'), putOk, 0, 5),
    lost(2, del('x'), 6),
    lost(3, get('x'), 7),
    ok(1, get('x'), read(null), 10, 15),
  ]);
});

test('operations touching at the same instant count as concurrent', () => {
  assertAccepted([ok(1, put('x', 'a'), putOk, 0, 10), ok(2, get('x'), read(null), 10, 20)]);
});

test('a write, its delete and a re-write interleaved with readers', () => {
  assertAccepted([
    ok(1, put('k', 'v1'), putOk, 0, 10),
    ok(2, del('k'), deleted(true), 5, 30),
    ok(3, get('k'), read('v1'), 12, 14),
    ok(1, put('k', 'v2'), putOk, 15, 40),
    ok(3, get('k'), read(null), 16, 20),
    ok(3, get('k'), read('v2'), 41, 45),
  ]);
});
