/**
 * The modelled disk behind RKV's host actors: flushed runs round-trip, lookups read level 0 newest
 * first, then level 1, then the pre-loaded base data, and a level-0 merge keeps the newest value.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rkvKey, rkvKeyIndex } from '../../../../src/apps/rkv/actors/messages.ts';
import { baseValue, decodeRun, encodeRun, SimDisk } from '../../../../src/apps/rkv/actors/sim-disk.ts';
import { ConfigError } from '../../../../src/errors.ts';
import { walkRangeInSteps } from './range-walk.ts';

const bytes = (...values: number[]) => new Uint8Array(values);

test('keys are 16 bytes and name their index; other keys name none', () => {
  assert.equal(rkvKey(0).length, 16);
  assert.equal(rkvKeyIndex(rkvKey(999_999)), 999_999);
  assert.equal(rkvKeyIndex(new TextEncoder().encode('k00000000000000x')), undefined);
  assert.equal(rkvKeyIndex(bytes(1, 2, 3)), undefined);
  assert.throws(() => rkvKey(-1), RangeError);
});

test('a run round-trips; a truncated one is refused', () => {
  const entries = [
    { key: rkvKey(1), value: bytes(1, 2, 3) },
    { key: rkvKey(2), value: new Uint8Array(0) },
    { key: rkvKey(3), value: new Uint8Array(300).fill(7) },
  ];
  const run = encodeRun(entries);
  assert.deepEqual(decodeRun(run), entries);
  assert.throws(() => decodeRun(run.subarray(0, run.length - 1)), RangeError);
});

test('lookups read level 0 newest first, then level 1, then the base data', () => {
  const disk = new SimDisk({ baseKeys: 10, valueBytes: 8 });
  assert.deepEqual(disk.lookup(rkvKey(3)), { value: baseValue(3, 8), from: 'base' });
  assert.equal(disk.lookup(rkvKey(10)).from, 'none');
  disk.writeLevel0(encodeRun([{ key: rkvKey(3), value: bytes(1) }]));
  disk.writeLevel0(
    encodeRun([
      { key: rkvKey(3), value: bytes(2) },
      { key: rkvKey(20), value: bytes(9) },
    ]),
  );
  assert.deepEqual(disk.lookup(rkvKey(3)), { value: bytes(2), from: 'level-0' });
  assert.equal(disk.compactLevel0(), 3);
  assert.equal(disk.level0Tables, 0);
  assert.deepEqual(disk.lookup(rkvKey(3)), { value: bytes(2), from: 'level-1' });
  assert.deepEqual(disk.lookup(rkvKey(20)), { value: bytes(9), from: 'level-1' });
  disk.writeLevel0(encodeRun([{ key: rkvKey(20), value: bytes(4) }]));
  assert.deepEqual(disk.lookup(rkvKey(20)), { value: bytes(4), from: 'level-0' });
  assert.equal(disk.tablesWritten, 3);
  assert.notDeepEqual(baseValue(3, 8), baseValue(4, 8));
});

test('a disk with a bad size is a ConfigError', () => {
  assert.throws(() => new SimDisk({ baseKeys: -1, valueBytes: 8 }), ConfigError);
  assert.throws(() => new SimDisk({ baseKeys: 1, valueBytes: 0.5 }), ConfigError);
});

test('tombstones round-trip in a run, hide older values, and a merge drops them at level 1 unless base data lies below', () => {
  const disk = new SimDisk({ baseKeys: 10, valueBytes: 4 });
  const run = encodeRun([
    { key: rkvKey(3), value: undefined },
    { key: rkvKey(20), value: bytes(9) },
  ]);
  assert.deepEqual(decodeRun(run), [
    { key: rkvKey(3), value: undefined },
    { key: rkvKey(20), value: bytes(9) },
  ]);
  // A run of puts has the bytes it had before tombstones existed: 4 + (1 + 16 + 4 + 1).
  assert.equal(encodeRun([{ key: rkvKey(20), value: bytes(9) }]).length, 26);
  disk.writeLevel0(run);
  disk.writeLevel0(encodeRun([{ key: rkvKey(20), value: undefined }]));
  assert.deepEqual(disk.lookup(rkvKey(3)), { value: undefined, from: 'level-0' }, 'hides the base value');
  assert.deepEqual(disk.lookup(rkvKey(20)), { value: undefined, from: 'level-0' }, 'hides the older put');
  disk.compactLevel0();
  assert.equal(disk.tombstonesDropped, 1, "key 20's tombstone: nothing below level 1 to hide");
  assert.deepEqual(disk.lookup(rkvKey(3)), { value: undefined, from: 'level-1' }, 'kept over the base data');
  assert.deepEqual(disk.lookup(rkvKey(20)), { value: undefined, from: 'none' });
  assert.deepEqual(disk.lookup(rkvKey(4)).value, baseValue(4, 4));
});

test('the disk records D, the largest slot a written run carried; a compaction keeps it', () => {
  const disk = new SimDisk({ baseKeys: 0, valueBytes: 8 });
  assert.equal(disk.appliedSlot, 0, 'an empty disk holds no slot');
  disk.writeLevel0(encodeRun([{ key: rkvKey(1), value: bytes(1) }]), 7);
  assert.equal(disk.appliedSlot, 7);
  // A restarted replica's first run may carry a lower slot than tables written before its crash.
  disk.writeLevel0(encodeRun([{ key: rkvKey(2), value: bytes(2) }]), 4);
  assert.equal(disk.appliedSlot, 7, 'never moves back');
  disk.writeLevel0(encodeRun([{ key: rkvKey(3), value: undefined }]), 12);
  disk.compactLevel0();
  assert.equal(disk.appliedSlot, 12, 'kept through a merge of level 0');
  disk.writeLevel0(encodeRun([{ key: rkvKey(4), value: bytes(4) }]));
  assert.equal(disk.appliedSlot, 12, 'a run without a slot (a pre-load) changes nothing');
});

test('a range read stops after its step budget, tombstones counted, and goes on from where it stopped', () => {
  const disk = new SimDisk({ baseKeys: 3000, valueBytes: 4 });
  // Tombstones over base keys 0 … 2499 (the base values stay below them, hidden).
  const tombstones = Array.from({ length: 2500 }, (_, i) => ({ key: rkvKey(i), value: undefined }));
  disk.writeLevel0(encodeRun(tombstones));
  const budget = 100;
  const first = disk.range(new Uint8Array(0), undefined, budget);
  const head = first.next();
  assert.equal(head.done, true, 'the first 100 entries are tombstones: no pair');
  assert.deepEqual(head.value, rkvKey(budget), 'it stopped at the first entry it did not visit');
  const { keys, reads } = walkRangeInSteps(disk, budget);
  assert.deepEqual(
    keys.map((key) => rkvKeyIndex(key)),
    Array.from({ length: 500 }, (_, i) => 2500 + i),
    'exactly the live keys',
  );
  assert.equal(reads, 30, '3000 entries visited 100 at a time');
});
