/**
 * SimLog (sim-log.ts), the durable consensus log a replica's host keeps across a crash: the promise
 * only rises, a chosen entry stays chosen, truncation folds the contiguous chosen prefix into the
 * snapshot with the exactly-once rule of apply and stops at the first slot it does not hold chosen.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DurableEntry, SimLog } from '../../../../src/apps/rkv/actors/sim-log.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function entry(
  slot: number,
  ballot: number,
  chosen: boolean,
  key: string,
  value: string,
  seq = slot,
): DurableEntry {
  return { slot, ballot, chosen, clientId: 1, seq, key: encoder.encode(key), value: encoder.encode(value) };
}

test('the promise only rises; an accepted ballot raises it too', () => {
  const log = new SimLog();
  assert.equal(log.empty, true);
  log.write(5, []);
  log.write(3, []);
  assert.equal(log.promised, 5);
  log.write(0, [entry(1, 9, false, 'a', '1')]);
  assert.equal(log.promised, 9);
  assert.equal(log.empty, false);
});

test('a chosen entry stays chosen when its slot is accepted again', () => {
  const log = new SimLog();
  log.write(0, [entry(1, 4, true, 'a', '1')]);
  log.write(0, [entry(1, 6, false, 'a', '1')]);
  assert.equal(log.entry(1)?.chosen, true);
  assert.equal(log.entry(1)?.ballot, 6);
});

test('truncation folds the chosen prefix into the snapshot and stops at a gap', () => {
  const log = new SimLog();
  log.write(2, [entry(1, 2, true, 'a', 'x'), entry(2, 2, true, 'b', 'y'), entry(3, 2, true, 'a', 'z')]);
  log.write(0, [entry(5, 2, true, 'c', 'w')]);
  assert.equal(log.truncate(10), 3, 'slot 4 is missing: the fold stops before it');
  const state = log.read();
  assert.equal(state.truncated, 3);
  assert.deepEqual(
    state.snapshot.map((item) => `${decoder.decode(item.key)}=${decoder.decode(item.value)}`).sort(),
    ['a=z', 'b=y'],
  );
  assert.deepEqual(state.sessions, [{ clientId: 1, seq: 3 }]);
  assert.deepEqual(
    state.entries.map((e) => e.slot),
    [5],
  );
  log.write(0, [entry(2, 3, true, 'b', 'late')]);
  assert.equal(log.entry(2), undefined, 'a write at or below the truncation point is ignored');
});

test('the fold skips a command its session already applied, as apply does', () => {
  const log = new SimLog();
  log.write(1, [entry(1, 1, true, 'a', 'first', 7), entry(2, 1, true, 'a', 'retry', 7)]);
  log.truncate(2);
  const state = log.read();
  assert.equal(decoder.decode(state.snapshot[0]?.value), 'first');
  assert.equal(log.truncate(5), 2, 'nothing above 2 is held');
});

test('an entry not known chosen is never folded', () => {
  const log = new SimLog();
  log.write(1, [entry(1, 1, false, 'a', '1')]);
  assert.equal(log.truncate(1), 0);
  assert.equal(log.read().entries.length, 1);
});
