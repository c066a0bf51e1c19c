/**
 * SimLog (sim-log.ts), the durable consensus log a replica's host keeps across a crash: the promise
 * only rises, a chosen entry stays chosen, truncation folds the contiguous chosen prefix into the
 * snapshot with the exactly-once rule of apply and stops at the first slot it does not hold chosen;
 * a sender's checkpoint folds further without changing the log and respects the chunk budget, and
 * one a receiver names is still served after the truncation passed it (MAX_CHECKPOINTS kept); a
 * receiver's staged snapshot switches in only once every chunk is there, and one at or below its
 * truncation point is answered as installed instead of never.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DurableEntry, MAX_CHECKPOINTS, SimLog } from '../../../../src/apps/rkv/actors/sim-log.ts';

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

/** Every item of a checkpoint, as key → value strings, and its sessions. */
function contents(
  chunks: readonly {
    items: readonly { key: Uint8Array; value: Uint8Array }[];
    sessions: readonly { clientId: number; seq: number }[];
  }[],
): {
  items: Record<string, string>;
  sessions: Record<number, number>;
} {
  const items: Record<string, string> = {};
  const sessions: Record<number, number> = {};
  for (const chunk of chunks) {
    for (const item of chunk.items) items[decoder.decode(item.key)] = decoder.decode(item.value);
    for (const session of chunk.sessions) sessions[session.clientId] = session.seq;
  }
  return { items, sessions };
}

test('a checkpoint folds the chosen prefix past the truncation point without changing the log', () => {
  const log = new SimLog();
  log.write(0, [
    entry(1, 1, true, 'a', '1'),
    entry(2, 1, true, 'b', '2'),
    entry(3, 1, true, 'a', '3'),
    entry(4, 1, false, 'c', '4'),
  ]);
  log.truncate(1);
  const checkpoint = log.checkpoint(0, 1, 1 << 16);
  assert.ok(checkpoint !== undefined);
  assert.equal(checkpoint.slot, 3, 'through the last chosen slot, not the unchosen 4');
  assert.deepEqual(contents(checkpoint.chunks), { items: { a: '3', b: '2' }, sessions: { 1: 3 } });
  assert.equal(log.truncated, 1, 'the log is not truncated by a checkpoint');
  assert.ok(log.entry(2) !== undefined);
  assert.equal(log.checkpoint(0, 1, 1 << 16), checkpoint, 'the same checkpoint is reused');
  assert.equal(log.checkpoint(3, 3, 1 << 16), checkpoint);
  assert.equal(log.checkpoint(0, 4, 1 << 16), undefined, 'nothing at or above slot 4 yet');
  assert.equal(log.checkpoints, 1);
});

test('checkpoint chunks hold at most the budget, or one larger item', () => {
  const log = new SimLog();
  const entries: DurableEntry[] = [];
  for (let slot = 1; slot <= 9; slot++)
    entries.push(entry(slot, 1, true, `k${slot}`, 'v'.repeat(slot === 5 ? 100 : 4)));
  log.write(0, entries);
  const checkpoint = log.checkpoint(0, 0, 40);
  assert.ok(checkpoint !== undefined);
  for (const chunk of checkpoint.chunks) {
    const bytes =
      chunk.items.reduce((sum, item) => sum + 8 + item.key.length + item.value.length, 0) +
      16 * chunk.sessions.length;
    assert.ok(
      bytes <= 40 || chunk.items.length === 1,
      `a chunk of ${bytes} bytes with ${chunk.items.length} items`,
    );
  }
  assert.ok(checkpoint.chunks.length >= 5);
  assert.equal(Object.keys(contents(checkpoint.chunks).items).length, 9);
});

test('a staged snapshot switches in only with every chunk; chunk 0 starts a new one', () => {
  const sender = new SimLog();
  sender.write(0, [entry(1, 1, true, 'a', '1'), entry(2, 1, true, 'b', '2'), entry(3, 1, true, 'c', '3')]);
  const checkpoint = sender.checkpoint(0, 0, 20);
  assert.ok(checkpoint !== undefined && checkpoint.chunks.length >= 3);
  const receiver = new SimLog();
  receiver.write(7, [entry(1, 1, true, 'a', '1'), entry(5, 7, false, 'z', '9')]);
  const n = checkpoint.chunks.length;
  const chunk = (i: number) => checkpoint.chunks[i] as (typeof checkpoint.chunks)[number];
  assert.equal(receiver.stage(3, 0, n, chunk(0)), undefined);
  assert.equal(receiver.stage(3, 1, n, chunk(1)), undefined);
  assert.equal(receiver.truncated, 0, 'nothing switched before the last chunk');
  // A new file (chunk 0 again) forgets what was staged: the last chunk alone does not complete it.
  assert.equal(receiver.stage(3, 0, n, chunk(0)), undefined);
  for (let i = 2; i < n; i++) assert.equal(receiver.stage(3, i, n, chunk(i)), undefined);
  assert.deepEqual(receiver.stage(3, 1, n, chunk(1)), { items: 3, sessions: 1 });
  assert.equal(receiver.truncated, 3);
  assert.equal(receiver.installs, 1);
  const state = receiver.read();
  assert.deepEqual(
    contents([{ items: state.snapshot, sessions: state.sessions }]),
    contents(checkpoint.chunks),
  );
  assert.deepEqual(
    state.entries.map((e) => e.slot),
    [5],
    'entries above the snapshot stay (an acceptor keeps what it accepted)',
  );
  assert.equal(receiver.promised, 7);
});

test('a checkpoint a receiver names is still served after the truncation passed it; MAX_CHECKPOINTS are kept', () => {
  const log = new SimLog();
  log.write(0, [entry(1, 1, true, 'a', '1'), entry(2, 1, true, 'b', '2')]);
  const first = log.checkpoint(0, 0, 1 << 16);
  assert.ok(first !== undefined && first.slot === 2);
  // The group goes on: the log truncates past slot 2, and a new receiver gets a newer checkpoint.
  log.write(0, [entry(3, 1, true, 'a', '3'), entry(4, 1, true, 'c', '4')]);
  log.truncate(4);
  const newer = log.checkpoint(0, 4, 1 << 16);
  assert.ok(newer !== undefined && newer.slot === 4);
  // The receiver fetching slot 2 names it: it keeps getting that one (else it would start over).
  assert.equal(log.checkpoint(2, 4, 1 << 16), first, 'the named checkpoint, though below atLeast');
  assert.deepEqual(contents(first.chunks), { items: { a: '1', b: '2' }, sessions: { 1: 2 } });
  assert.equal(log.checkpoint(0, 4, 1 << 16), newer, 'slot 0: the newest');
  // Bounded: after MAX_CHECKPOINTS newer ones the oldest is gone; naming it gets the newest.
  for (let slot = 5; slot < 5 + MAX_CHECKPOINTS; slot++) {
    log.write(0, [entry(slot, 1, true, 'd', String(slot))]);
    log.truncate(slot);
    assert.equal(log.checkpoint(0, slot, 1 << 16)?.slot, slot);
  }
  assert.equal(log.checkpointSlots.length, MAX_CHECKPOINTS);
  assert.ok(!log.checkpointSlots.includes(2), `slot 2 dropped (kept: ${log.checkpointSlots.join(',')})`);
  assert.equal(log.checkpoint(2, 0, 1 << 16)?.slot, 4 + MAX_CHECKPOINTS, 'no longer kept: the newest');
});

test('a snapshot at or below the truncation point is answered as installed by its last chunk', () => {
  const log = new SimLog();
  log.write(0, [entry(1, 1, true, 'a', '1'), entry(2, 1, true, 'b', '2'), entry(3, 1, true, 'c', '3')]);
  log.truncate(3);
  const chunk = { items: [{ key: encoder.encode('z'), value: encoder.encode('9') }], sessions: [] };
  assert.equal(log.stage(2, 0, 2, chunk), undefined, 'not the last chunk: no answer yet');
  // The receiver must not wait for a switch that never comes: the log holds a newer state already.
  assert.deepEqual(log.stage(2, 1, 2, chunk), { items: 3, sessions: 1 });
  assert.equal(log.truncated, 3, 'nothing switched');
  assert.equal(log.installs, 0);
  assert.deepEqual(
    contents([{ items: log.read().snapshot, sessions: log.read().sessions }]).items,
    { a: '1', b: '2', c: '3' },
    'the snapshot is untouched',
  );
});

test('a delete folds into the snapshot as a tombstone item, which checkpoints ship and a stage keys by its key', () => {
  const del = (slot: number, key: string): DurableEntry => ({
    slot,
    ballot: 2,
    chosen: true,
    clientId: 1,
    seq: slot,
    key: new Uint8Array(0),
    value: encoder.encode(key),
  });
  const log = new SimLog();
  log.write(2, [entry(1, 2, true, 'a', 'x'), entry(2, 2, true, 'b', 'y'), del(3, 'a'), del(4, 'c')]);
  assert.equal(log.truncate(4), 4);
  const show = (items: readonly { key: Uint8Array; value: Uint8Array }[]) =>
    items
      .map((item) =>
        item.key.length === 0
          ? `-${decoder.decode(item.value)}`
          : `${decoder.decode(item.key)}=${decoder.decode(item.value)}`,
      )
      .sort();
  // The tombstones stay: a replica that recovers or installs this may hold a and c in its SSTables.
  assert.deepEqual(show(log.read().snapshot), ['-a', '-c', 'b=y']);
  const checkpoint = log.checkpoint(0, 0, 1 << 20);
  assert.ok(checkpoint !== undefined);
  assert.deepEqual(show(checkpoint.chunks.flatMap((chunk) => chunk.items)), ['-a', '-c', 'b=y']);
  // A receiver: a tombstone of b over its own b=old, keyed by b (not by the empty key field).
  const receiver = new SimLog();
  receiver.write(1, [entry(1, 1, true, 'b', 'old')]);
  receiver.truncate(1);
  const items = [
    { key: new Uint8Array(0), value: encoder.encode('b') },
    { key: new Uint8Array(0), value: encoder.encode('d') },
    { key: encoder.encode('e'), value: encoder.encode('1') },
  ];
  assert.deepEqual(receiver.stage(9, 0, 1, { items, sessions: [] }), { items: 3, sessions: 0 });
  assert.deepEqual(show(receiver.read().snapshot), ['-b', '-d', 'e=1']);
});
