import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KvHistoryOp } from '../../../../src/apps/rkv/check/index.ts';
import { checkLinearizability, describeCheckResult, kvModel } from '../../../../src/apps/rkv/check/index.ts';
import { compareKeyStrings } from '../../../../src/apps/rkv/check/kv-model.ts';
import { del, deleted, get, lost, ok, put, putOk, read } from './history-builders.ts';

function assertRejected(history: KvHistoryOp[], partition?: string): void {
  const result = checkLinearizability(kvModel, history);
  assert.equal(result.verdict, 'not-linearizable', describeCheckResult(kvModel, result));
  if (result.verdict === 'not-linearizable' && partition !== undefined)
    assert.equal(result.partition, partition);
}

test('a stale read after an acknowledged write is rejected', () => {
  assertRejected([
    ok(1, put('x', 'a'), putOk, 0, 10),
    ok(1, put('x', 'b'), putOk, 20, 30),
    ok(2, get('x'), read('a'), 40, 50),
  ]);
});

test('a lost write (acknowledged, then never visible) is rejected', () => {
  assertRejected([ok(1, put('x', 'a'), putOk, 0, 10), ok(2, get('x'), read(null), 20, 30)]);
});

test('a read-your-own-write violation is rejected', () => {
  assertRejected([
    ok(1, put('x', 'old'), putOk, 0, 5),
    ok(2, put('x', 'mine'), putOk, 10, 20),
    ok(2, get('x'), read('old'), 21, 25),
  ]);
});

test('concurrent writes observed in two different orders by sequential reads are rejected', () => {
  // put a and put b overlap each other, but reads after both finished flip a → b → a.
  assertRejected([
    ok(1, put('x', 'a'), putOk, 0, 10),
    ok(2, put('x', 'b'), putOk, 0, 10),
    ok(3, get('x'), read('a'), 11, 12),
    ok(3, get('x'), read('b'), 13, 14),
    ok(3, get('x'), read('a'), 15, 16),
  ]);
});

test('a new-old inversion between two non-overlapping reads during one write is rejected', () => {
  // Once a read returned the new value, a read that starts after it cannot see the old one.
  assertRejected([
    ok(1, put('x', 'new'), putOk, 0, 100),
    ok(2, get('x'), read('new'), 10, 20),
    ok(3, get('x'), read(null), 30, 40),
  ]);
});

test('a read of a value nobody wrote, or from the future, is rejected', () => {
  assertRejected([ok(1, get('x'), read('ghost'), 0, 1)]);
  assertRejected([ok(1, get('x'), read('later'), 0, 5), ok(2, put('x', 'later'), putOk, 10, 20)]);
});

test('a delete reporting the wrong existence is rejected', () => {
  assertRejected([ok(1, put('x', 'a'), putOk, 0, 5), ok(1, del('x'), deleted(false), 10, 15)]);
  assertRejected([ok(1, del('x'), deleted(true), 0, 5)]);
  assertRejected([
    ok(1, put('x', 'a'), putOk, 0, 5),
    ok(1, del('x'), deleted(true), 10, 15),
    ok(2, get('x'), read('a'), 20, 25),
  ]);
});

test('a timed-out write may show up, but cannot vanish once a later read saw it', () => {
  assertRejected([
    lost(1, put('x', 'maybe'), 0),
    ok(2, get('x'), read('maybe'), 10, 20),
    ok(3, get('x'), read(null), 30, 40),
  ]);
});

test('the failing partition is named and the others do not mask it', () => {
  assertRejected(
    [
      ok(1, put('a', '1'), putOk, 0, 10),
      ok(2, get('a'), read('1'), 20, 30),
      ok(1, put('b', '1'), putOk, 0, 10),
      ok(2, get('b'), read(null), 20, 30),
    ],
    'key "b"',
  );
});

test('the counterexample description names the operations', () => {
  const result = checkLinearizability(kvModel, [
    ok(1, put('x', 'a'), putOk, 0, 10),
    ok(2, get('x'), read(null), 20, 30),
  ]);
  const text = describeCheckResult(kvModel, result);
  assert.match(text, /not linearizable: partition key "x"/);
  assert.match(text, /client 2 \[20, 30\] get\(x\) → null/);
});

const scan = (start: string, end: string | null, limit = 10) => ({ op: 'scan', start, end, limit }) as const;
const page = (pairs: [string, string][], next: string | null = null) =>
  ({ op: 'scan', pairs, next }) as const;

test('a scan page missing a key written before it is rejected', () => {
  assertRejected([
    ok(1, put('x', 'a'), putOk, 0, 5),
    ok(1, put('y', 'b'), putOk, 10, 15),
    ok(2, scan('a', null), page([['y', 'b']]), 20, 25),
  ]);
});

test('two scans that each see one of two concurrent writes, not the other, are rejected', () => {
  // Per key each is fine (x: scan 2, put x, scan 1; y: scan 1, put y, scan 2), but no one order of
  // the four holds both: the scans join x and y into one part, and there it fails.
  assertRejected(
    [
      ok(1, put('x', 'a'), putOk, 0, 10),
      ok(2, put('y', 'b'), putOk, 0, 10),
      ok(3, scan('a', 'z'), page([['x', 'a']]), 1, 9),
      ok(4, scan('a', 'z'), page([['y', 'b']]), 1, 9),
    ],
    'keys "x", "y"',
  );
});

test('a scan page out of key order, over its limit, or with a key outside the range it covers is rejected', () => {
  const writes = [ok(1, put('x', 'a'), putOk, 0, 5), ok(1, put('y', 'b'), putOk, 6, 8)];
  assertRejected([
    ...writes,
    ok(
      2,
      scan('a', null),
      page([
        ['y', 'b'],
        ['x', 'a'],
      ]),
      10,
      11,
    ),
  ]);
  assertRejected([
    ...writes,
    ok(
      2,
      scan('a', null, 1),
      page([
        ['x', 'a'],
        ['y', 'b'],
      ]),
      10,
      11,
    ),
  ]);
  // The page says it covers [a, y): y is not in it.
  assertRejected([
    ...writes,
    ok(
      2,
      scan('a', null),
      page(
        [
          ['x', 'a'],
          ['y', 'b'],
        ],
        'y',
      ),
      10,
      11,
    ),
  ]);
});

test('a scan page whose next does not move past its start is rejected (its client would loop)', () => {
  const writes = [ok(1, put('x', 'a'), putOk, 0, 5)];
  // Empty, not done, next = start: nothing is wrong with what it holds, only that it goes nowhere.
  assertRejected([...writes, ok(2, scan('x', null), page([], 'x'), 10, 11)]);
  assertRejected([...writes, ok(2, scan('y', null), page([], 'b'), 10, 11)]);
  // The same page one key further on is fine: [x, xa) holds x.
  const moved = checkLinearizability(kvModel, [
    ...writes,
    ok(2, scan('x', null), page([['x', 'a']], 'xa'), 10, 11),
  ]);
  assert.equal(moved.verdict, 'linearizable', describeCheckResult(kvModel, moved));
});

test('keys compare as UTF-8 bytes: U+FFFD sorts below U+1F600 (as JS strings it sorts above)', () => {
  const low = '\ufffd';
  const high = '\u{1f600}';
  assert.ok(high < low, 'JS string order is UTF-16 order');
  assert.ok(compareKeyStrings(low, high) < 0 && compareKeyStrings(high, low) > 0);
  assert.equal(compareKeyStrings(high, high), 0);
  assert.ok(compareKeyStrings('a', 'ab') < 0);
  const writes = [ok(1, put(low, 'a'), putOk, 0, 5), ok(1, put(high, 'b'), putOk, 6, 8)];
  const inByteOrder = checkLinearizability(kvModel, [
    ...writes,
    ok(
      2,
      scan('', null),
      page([
        [low, 'a'],
        [high, 'b'],
      ]),
      10,
      11,
    ),
  ]);
  assert.equal(inByteOrder.verdict, 'linearizable', describeCheckResult(kvModel, inByteOrder));
  // A page up to U+1F600 covers U+FFFD: leaving it out is wrong.
  assertRejected([...writes, ok(2, scan('', null), page([], high), 10, 11)]);
});

test('a linearizable history with scan pages is accepted (the rejections above are not the checker refusing scans)', () => {
  const result = checkLinearizability(kvModel, [
    ok(1, put('x', 'a'), putOk, 0, 10),
    ok(2, put('y', 'b'), putOk, 0, 10),
    ok(3, scan('a', 'z'), page([['x', 'a']]), 1, 9),
    ok(
      4,
      scan('a', 'z'),
      page([
        ['x', 'a'],
        ['y', 'b'],
      ]),
      1,
      9,
    ),
    ok(3, scan('a', 'z', 1), page([['x', 'a']], 'y'), 11, 12),
    ok(3, scan('y', 'z', 1), page([['y', 'b']]), 13, 14),
  ]);
  assert.equal(result.verdict, 'linearizable', describeCheckResult(kvModel, result));
});
