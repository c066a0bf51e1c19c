/**
 * DmoSkipList (the memtable's ordered map) against a sorted-array model: random operations give
 * the same results, iteration is in unsigned lexicographic order, range scans, first/last, level
 * generation is seeded and deterministic, iterators survive concurrent deletes.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DmoSkipList } from '../../src/dmo/index.ts';
import { A, bytes, compareKeys, hex, makeDomain, throwsCode } from './helpers.ts';

const keyArb = fc.oneof(fc.uint8Array({ maxLength: 3 }), fc.uint8Array({ maxLength: 12 }));
const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('set' as const),
      key: keyArb,
      value: fc.uint8Array({ maxLength: 20, size: 'max' }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), key: keyArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('range' as const),
      key: keyArb,
      limit: fc.integer({ min: 0, max: 8 }),
    }),
  },
);

function sortedModel(model: Map<string, [Uint8Array, Uint8Array]>): [Uint8Array, Uint8Array][] {
  return [...model.values()].sort((x, y) => compareKeys(x[0], y[0]));
}

test('model: random set/delete/get/range sequences match a sorted map', () => {
  const numRuns = 100;
  let tallRuns = 0;
  let cutRanges = 0;
  fc.assert(
    // size 'max': at fast-check's default size the array holds at most 10 operations, a list of
    // about five keys that rarely has a node above level 1 (p = 1/4) and whose range scans are
    // seldom cut by their limit.
    fc.property(
      fc.array(opArb, { maxLength: 250, size: 'max' }),
      fc.integer({ min: 1, max: 2 ** 31 }),
      (ops, seed) => {
        let peakSize = 0;
        const heap = makeDomain({ regionBytes: 256 * 1024 }).createHeap(A);
        const list = DmoSkipList.create(heap, { seed, maxLevel: 8 });
        const model = new Map<string, [Uint8Array, Uint8Array]>();
        for (const step of ops) {
          const k = hex(step.key);
          if (step.op === 'set') {
            list.set(step.key, step.value);
            model.set(k, [step.key, step.value]);
          } else if (step.op === 'delete') {
            assert.equal(list.delete(step.key), model.delete(k));
          } else if (step.op === 'get') {
            assert.deepEqual(list.get(step.key), model.get(k)?.[1]);
            assert.equal(list.has(step.key), model.has(k));
          } else {
            const expected = sortedModel(model).filter(([key]) => compareKeys(key, step.key) >= 0);
            if (expected.length > step.limit) cutRanges++;
            assert.deepEqual(list.range(step.key, step.limit), expected.slice(0, step.limit));
          }
          assert.equal(list.size, model.size);
          peakSize = Math.max(peakSize, model.size);
        }
        // With p = 1/4 per level, 32 keys make a few nodes of level 3 likely.
        if (peakSize >= 32) tallRuns++;
        const all = sortedModel(model);
        assert.deepEqual([...list], all);
        assert.deepEqual(list.first(), all[0]);
        assert.deepEqual(list.last(), all.at(-1));
      },
    ),
    { numRuns },
  );
  assert.ok(tallRuns >= numRuns / 4, `only ${tallRuns} of ${numRuns} runs held 32 keys at once`);
  assert.ok(cutRanges > 0, 'no range scan was cut short by its limit');
});

test('keys order by unsigned bytes, shorter prefix first', () => {
  const list = DmoSkipList.create(makeDomain().createHeap(A));
  for (const key of [[0xff], [0x01, 0x00], [0x01], [], [0x80], [0x01, 0xff]])
    list.set(Uint8Array.from(key), new Uint8Array(0));
  assert.deepEqual(
    [...list.keys()].map((key) => [...key]),
    [[], [0x01], [0x01, 0x00], [0x01, 0xff], [0x80], [0xff]],
  );
});

test('level generation is seeded: same seed, same shape; a caller random source is used when given', () => {
  const shape = (seed: number) => {
    const heap = makeDomain().createHeap(A);
    const list = DmoSkipList.create(heap, { seed });
    for (let i = 0; i < 200; i++) list.set(bytes(`k${i}`), bytes('v'));
    return heap.stats().usedBytes;
  };
  assert.equal(shape(42), shape(42));
  assert.notEqual(shape(42), shape(43), 'another seed gives other node levels (and sizes)');
  let calls = 0;
  const heap = makeDomain().createHeap(A);
  const flat = DmoSkipList.create(heap, {
    random: () => {
      calls++;
      return 0.9; // never promote: every node has level 1
    },
  });
  for (let i = 0; i < 50; i++) flat.set(bytes(`k${i}`), bytes('v'));
  assert.equal(calls, 50);
  assert.equal(flat.size, 50);
  assert.deepEqual(flat.get(bytes('k25')), bytes('v'));
});

test('an iterator continues correctly when entries are deleted or added under it', () => {
  const list = DmoSkipList.create(makeDomain().createHeap(A), { seed: 7 });
  for (let i = 0; i < 20; i++) list.set(bytes(`k${String(i).padStart(2, '0')}`), bytes(`${i}`));
  const seen: string[] = [];
  for (const [key] of list) {
    const text = new TextDecoder().decode(key);
    seen.push(text);
    if (text === 'k05') {
      list.delete(bytes('k05')); // the node we are on
      list.delete(bytes('k06')); // and the next one
      list.set(bytes('k055'), bytes('new'));
    }
  }
  assert.deepEqual(seen, [
    ...Array.from({ length: 6 }, (_, i) => `k0${i}`),
    'k055',
    ...Array.from({ length: 13 }, (_, i) => `k${String(i + 7).padStart(2, '0')}`),
  ]);
});

test('values are replaced in place or reallocated; clear and destroy free everything', () => {
  const heap = makeDomain().createHeap(A);
  const list = DmoSkipList.create(heap);
  list.set(bytes('a'), bytes('12345'));
  list.set(bytes('a'), bytes('abcde'));
  list.set(bytes('a'), bytes('a much longer value'));
  assert.deepEqual(list.get(bytes('a')), bytes('a much longer value'));
  const target = new Uint8Array(32);
  assert.equal(list.getInto(bytes('a'), target, 1), 19);
  assert.deepEqual(target.subarray(1, 20), bytes('a much longer value'));
  assert.equal(list.getInto(bytes('zz'), target), -1);
  assert.equal(list.range(undefined, 0).length, 0);
  list.set(bytes('b'), bytes('2'));
  list.clear();
  assert.equal(list.size, 0);
  assert.equal(list.first(), undefined);
  assert.equal(list.last(), undefined);
  list.set(bytes('c'), bytes('3'));
  assert.deepEqual(list.last(), [bytes('c'), bytes('3')]);
  list.destroy();
  assert.equal(heap.stats().liveObjects, 0);
});

test('re-open continues the stored generator; bad options are refused', () => {
  const heap = makeDomain().createHeap(A);
  const list = DmoSkipList.create(heap, { seed: 9 });
  list.set(bytes('x'), bytes('1'));
  const again = DmoSkipList.open(heap, list.rootId);
  again.set(bytes('y'), bytes('2'));
  assert.deepEqual([...list.keys()], [bytes('x'), bytes('y')]);
  for (const maxLevel of [0, 18, 2.5])
    throwsCode(() => DmoSkipList.create(heap, { maxLevel }), 'IPIPE_ERR_DMO_INVALID_SIZE');
});
