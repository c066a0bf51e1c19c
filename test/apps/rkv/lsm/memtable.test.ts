/**
 * The two memtables (PlainMemtable in JS memory, DmoMemtable over the DMO skip list) against a
 * sorted-map model: same get results, explicit tombstones with their sequence numbers, iteration
 * in unsigned-byte order from any key, iterators that survive writes, byte accounting that follows
 * overwrites; and a DmoMemtable re-opened by its root id (as after migration to the host).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DmoMemtable,
  type LsmEntry,
  type Memtable,
  PlainMemtable,
} from '../../../../src/apps/rkv/lsm/index.ts';
import { DmoDomain } from '../../../../src/dmo/index.ts';
import { actorId } from '../../../../src/ids.ts';
import { hex, utf8 } from './helpers.ts';

function dmoHeap(regionBytes = 1 << 20) {
  return DmoDomain.create({ regionBytes, maxActors: 2 }).createHeap(actorId(1));
}

const makers: [string, () => Memtable][] = [
  ['PlainMemtable', () => new PlainMemtable()],
  ['DmoMemtable', () => DmoMemtable.create(dmoHeap())],
];

type ModelEntry = { kind: 'put'; value: string; sequence: number } | { kind: 'tombstone'; sequence: number };

function describeEntry(entry: LsmEntry | undefined): string {
  if (entry === undefined) return 'absent';
  return entry.kind === 'put' ? `put@${entry.sequence}:${hex(entry.value)}` : `tombstone@${entry.sequence}`;
}

function describeModel(entry: ModelEntry | undefined): string {
  if (entry === undefined) return 'absent';
  return entry.kind === 'put' ? `put@${entry.sequence}:${entry.value}` : `tombstone@${entry.sequence}`;
}

const keyArb = fc.oneof(fc.uint8Array({ maxLength: 2 }), fc.uint8Array({ maxLength: 10 }));
const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('put' as const),
      key: keyArb,
      value: fc.uint8Array({ maxLength: 24, size: 'max' }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), key: keyArb }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('scan' as const), key: fc.option(keyArb, { nil: undefined }) }),
  },
);

for (const [name, make] of makers) {
  test(`${name}: random put/delete/get/scan sequences match a sorted model`, () => {
    const numRuns = 60;
    let fullRuns = 0;
    fc.assert(
      // size 'max': at fast-check's default size the array holds at most 10 operations, a
      // memtable of about five keys; the count below shows runs now reach dozens.
      fc.property(fc.array(opArb, { maxLength: 200, size: 'max' }), (ops) => {
        const memtable = make();
        const model = new Map<string, ModelEntry>();
        let sequence = 0;
        let peakEntries = 0;
        for (const step of ops) {
          const key = step.key === undefined ? '' : hex(step.key);
          if (step.op === 'put') {
            memtable.put(step.key, step.value, ++sequence);
            model.set(key, { kind: 'put', value: hex(step.value), sequence });
          } else if (step.op === 'delete') {
            memtable.delete(step.key, ++sequence);
            model.set(key, { kind: 'tombstone', sequence });
          } else if (step.op === 'get') {
            assert.equal(describeEntry(memtable.get(step.key)), describeModel(model.get(key)));
          } else {
            const from = step.key === undefined ? undefined : hex(step.key);
            const expected = [...model.entries()]
              .filter(([k]) => from === undefined || k >= from)
              .sort((a, b) => (a[0] < b[0] ? -1 : 1))
              .map(([k, e]) => `${k}=${describeModel(e)}`);
            const actual = [...memtable.entries(step.key)].map((e) => `${hex(e.key)}=${describeEntry(e)}`);
            assert.deepEqual(actual, expected);
          }
          assert.equal(memtable.entryCount, model.size);
          peakEntries = Math.max(peakEntries, model.size);
        }
        if (peakEntries >= 32) fullRuns++;
        memtable.destroy();
      }),
      { numRuns },
    );
    assert.ok(fullRuns >= numRuns / 4, `only ${fullRuns} of ${numRuns} runs held 32 keys at once`);
  });

  test(`${name}: approximateBytes follows inserts, overwrites and tombstones`, () => {
    const memtable = make();
    assert.equal(memtable.approximateBytes, 0);
    memtable.put(utf8('k'), new Uint8Array(100), 1);
    const afterInsert = memtable.approximateBytes;
    assert.ok(afterInsert >= 101);
    memtable.put(utf8('k'), new Uint8Array(10), 2);
    assert.equal(memtable.approximateBytes, afterInsert - 90);
    memtable.delete(utf8('k'), 3);
    assert.equal(memtable.approximateBytes, afterInsert - 100);
    memtable.put(utf8('k'), new Uint8Array(5), 4);
    assert.equal(memtable.approximateBytes, afterInsert - 95);
    memtable.destroy();
  });

  test(`${name}: an iterator survives writes made while it is suspended`, () => {
    const memtable = make();
    for (let i = 0; i < 40; i += 2) memtable.put(Uint8Array.of(i), Uint8Array.of(i), i + 1);
    const seen: number[] = [];
    let sequence = 100;
    for (const entry of memtable.entries()) {
      seen.push(entry.key[0]!);
      // Insert behind and ahead of the cursor, delete ahead (a tombstone is still an entry).
      if (entry.key[0] === 10) {
        memtable.put(Uint8Array.of(5), Uint8Array.of(5), ++sequence);
        memtable.put(Uint8Array.of(11), Uint8Array.of(11), ++sequence);
        memtable.delete(Uint8Array.of(20), ++sequence);
      }
    }
    for (let i = 1; i < seen.length; i++)
      assert.ok(seen[i - 1]! < seen[i]!, `not increasing: ${seen.join(',')}`);
    assert.ok(seen.includes(11), 'the key inserted ahead is seen');
    assert.ok(!seen.includes(5), 'the key inserted behind is not revisited');
    assert.ok(seen.includes(20) && seen.includes(38));
    memtable.destroy();
  });
}

test('DmoMemtable: sequences up to 2^53 − 1 and empty keys/values round-trip', () => {
  const memtable = DmoMemtable.create(dmoHeap());
  memtable.put(new Uint8Array(0), new Uint8Array(0), Number.MAX_SAFE_INTEGER);
  assert.equal(describeEntry(memtable.get(new Uint8Array(0))), `put@${Number.MAX_SAFE_INTEGER}:`);
  memtable.delete(Uint8Array.of(0), 2 ** 40 + 3);
  assert.equal(describeEntry(memtable.get(Uint8Array.of(0))), `tombstone@${2 ** 40 + 3}`);
});

test('DmoMemtable: re-opened from its root id (after migration) with contents and byte count', () => {
  const heap = dmoHeap();
  const memtable = DmoMemtable.create(heap, { seed: 7 });
  for (let i = 0; i < 200; i++) memtable.put(utf8(`key-${i}`), utf8(`value-${i}`), i + 1);
  memtable.delete(utf8('key-7'), 1000);
  const reopened = DmoMemtable.open(heap, memtable.rootId);
  assert.equal(reopened.entryCount, 200);
  assert.equal(reopened.approximateBytes, memtable.approximateBytes);
  assert.equal(describeEntry(reopened.get(utf8('key-7'))), 'tombstone@1000');
  assert.deepEqual(
    [...reopened.entries()].map((e) => hex(e.key)),
    [...memtable.entries()].map((e) => hex(e.key)),
  );
  // Opening some other object as a memtable is refused.
  const other = heap.allocate(32);
  assert.throws(() => DmoMemtable.open(heap, other), /not a DmoMemtable header/);
});

test('DmoMemtable: destroy frees every object it allocated', () => {
  const heap = dmoHeap();
  const before = heap.stats().liveObjects;
  const memtable = DmoMemtable.create(heap);
  for (let i = 0; i < 100; i++) memtable.put(utf8(`k${i}`), utf8(`v${i}`), i + 1);
  for (let i = 0; i < 50; i++) memtable.delete(utf8(`k${i}`), 200 + i);
  memtable.destroy();
  assert.equal(heap.stats().liveObjects, before);
});
