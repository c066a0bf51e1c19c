/** DmoNumberMap against a Map<number, number> model, including Map's SameValueZero keys. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DmoHashMap, DmoNumberMap, restoreHeap, snapshotHeap } from '../../src/dmo/index.ts';
import { A, makeDomain, throwsCode } from './helpers.ts';

const keyArb = fc.oneof(
  fc.integer({ min: -20, max: 20 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, -(2 ** 31), 0.1, 2 ** 53),
);
const opArb = fc.oneof(
  fc.record({ op: fc.constant('set' as const), key: keyArb, value: fc.double() }),
  fc.record({ op: fc.constant('increment' as const), key: keyArb, delta: fc.integer({ min: -5, max: 5 }) }),
  fc.record({ op: fc.constant('delete' as const), key: keyArb }),
  fc.record({ op: fc.constant('get' as const), key: keyArb }),
);

test('model: random set/increment/delete/get sequences match a Map', () => {
  const numRuns = 120;
  let grownRuns = 0;
  fc.assert(
    // size 'max': at fast-check's default size an array holds at most 10 operations, too few to
    // fill the 16-slot table to the 3/4 load at which it grows.
    fc.property(fc.array(opArb, { maxLength: 400, size: 'max' }), (ops) => {
      const heap = makeDomain({ regionBytes: 256 * 1024 }).createHeap(A);
      const map = DmoNumberMap.create(heap);
      const model = new Map<number, number>();
      let peakSize = 0;
      for (const step of ops) {
        if (step.op === 'set') {
          map.set(step.key, step.value);
          model.set(step.key, step.value);
        } else if (step.op === 'increment') {
          const next = (model.get(step.key) ?? 0) + step.delta;
          model.set(step.key, next);
          assert.ok(Object.is(map.increment(step.key, step.delta), next));
        } else if (step.op === 'delete') {
          assert.equal(map.delete(step.key), model.delete(step.key));
        } else {
          assert.ok(Object.is(map.get(step.key), model.get(step.key)));
          assert.equal(map.has(step.key), model.has(step.key));
        }
        assert.equal(map.size, model.size);
        peakSize = Math.max(peakSize, model.size);
      }
      // A default map has 16 slots and doubles before its 13th entry.
      if (peakSize > 12) grownRuns++;
      const rank = (key: number) => (Number.isNaN(key) ? Number.POSITIVE_INFINITY : key);
      const sorted = (entries: Iterable<[number, number]>) =>
        [...entries].sort((x, y) =>
          Number.isNaN(x[0]) !== Number.isNaN(y[0])
            ? Number.isNaN(x[0])
              ? 1
              : -1
            : rank(x[0]) - rank(y[0]) || 0,
        );
      assert.deepEqual(sorted(map.entries()), sorted(model.entries()));
    }),
    { numRuns },
  );
  assert.ok(grownRuns >= numRuns / 2, `only ${grownRuns} of ${numRuns} runs grew the table`);
});

test('-0 and +0 are one key (reported as +0); NaN is a key', () => {
  const map = DmoNumberMap.create(makeDomain().createHeap(A));
  map.set(-0, 1);
  assert.equal(map.get(0), 1);
  map.set(Number.NaN, 2);
  assert.equal(map.get(Number.NaN), 2);
  assert.deepEqual(
    [...map.keys()].map((k) => Object.is(k, -0)),
    [false, false],
  );
  assert.equal(map.size, 2);
});

test('counters: many keys through several growths, clear and destroy', () => {
  const heap = makeDomain({ regionBytes: 1 << 20 }).createHeap(A);
  const map = DmoNumberMap.create(heap);
  for (let i = 0; i < 20_000; i++) map.increment(i % 3000);
  assert.equal(map.size, 3000);
  for (let k = 0; k < 3000; k++) assert.equal(map.get(k), k < 20_000 % 3000 ? 7 : 6);
  map.clear();
  assert.equal(map.size, 0);
  assert.equal(map.get(5), undefined);
  map.destroy();
  assert.equal(heap.stats().liveObjects, 0);
});

test('survives a restore (table offset re-translated) and refuses the wrong kind', () => {
  const heap = makeDomain({ regionBytes: 1 << 20 }).createHeap(A);
  const spacer = DmoHashMap.create(heap);
  spacer.setString('pad', 'x'.repeat(500));
  const map = DmoNumberMap.create(heap);
  for (let i = 0; i < 1000; i++) map.set(i * 1.5, i);
  spacer.destroy();
  const restoredHeap = restoreHeap(makeDomain({ regionBytes: 1 << 20 }), A, snapshotHeap(heap));
  const restored = DmoNumberMap.open(restoredHeap, map.rootId);
  for (let i = 0; i < 1000; i++) assert.equal(restored.get(i * 1.5), i);
  restored.set(-1, -1);
  assert.equal(restored.size, 1001);
  throwsCode(() => DmoHashMap.open(restoredHeap, map.rootId), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});
