/**
 * DmoLog (the Paxos / coordinator log) against an array model: append, read, prefix and suffix
 * truncation with absolute indices, ring growth, iteration.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DmoLog, restoreHeap, snapshotHeap } from '../../src/dmo/index.ts';
import { A, bytes, makeDomain, throwsCode } from './helpers.ts';

const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ op: fc.constant('append' as const), record: fc.uint8Array({ maxLength: 40 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('prefix' as const), at: fc.integer({ min: -3, max: 80 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('suffix' as const), at: fc.integer({ min: -3, max: 80 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('read' as const), at: fc.integer({ min: -3, max: 80 }) }),
  },
);

test('model: random append/truncate/read sequences match an array with absolute indices', () => {
  const numRuns = 150;
  let wrappedGrowthRuns = 0;
  fc.assert(
    fc.property(
      // size 'max': at fast-check's default size the array holds at most 10 operations, so the
      // indices (up to 80) mostly miss and the ring rarely grows after its head has moved.
      fc.array(opArb, { maxLength: 200, size: 'max' }),
      fc.integer({ min: 1, max: 8 }),
      (ops, initialCapacity) => {
        const heap = makeDomain({ regionBytes: 128 * 1024 }).createHeap(A);
        const log = DmoLog.create(heap, { initialCapacity });
        let first = 0;
        let records: Uint8Array[] = [];
        let grewAfterPrefixTruncation = false;
        for (const step of ops) {
          if (step.op === 'append') {
            assert.equal(log.append(step.record), first + records.length);
            records.push(step.record);
          } else if (step.op === 'prefix') {
            const drop = Math.min(records.length, Math.max(0, step.at - first));
            assert.equal(log.truncatePrefix(step.at), drop);
            records = records.slice(drop);
            first += drop;
          } else if (step.op === 'suffix') {
            const keep = Math.min(records.length, Math.max(0, step.at - first));
            assert.equal(log.truncateSuffix(step.at), records.length - keep);
            records = records.slice(0, keep);
          } else {
            const i = step.at - first;
            assert.deepEqual(log.read(step.at), i >= 0 && i < records.length ? records[i] : undefined);
            assert.equal(log.recordLength(step.at), i >= 0 && i < records.length ? records[i]!.length : -1);
          }
          assert.equal(log.length, records.length);
          assert.equal(log.firstIndex, first);
          assert.equal(log.nextIndex, first + records.length);
          // Its head has moved off slot 0 and it holds more than it started with: it grew (at
          // least once) with the ring's contents not starting at slot 0.
          if (first > 0 && records.length > initialCapacity) grewAfterPrefixTruncation = true;
        }
        assert.deepEqual(
          [...log.entries()],
          records.map((record, i) => [first + i, record]),
        );
        if (grewAfterPrefixTruncation) wrappedGrowthRuns++;
      },
    ),
    { numRuns },
  );
  assert.ok(
    wrappedGrowthRuns >= numRuns / 4,
    `only ${wrappedGrowthRuns} of ${numRuns} runs grew past the initial capacity after a prefix truncation`,
  );
});

test('truncated records are freed; readInto copies without allocating', () => {
  const heap = makeDomain().createHeap(A);
  const log = DmoLog.create(heap, { firstIndex: 100 });
  for (let i = 0; i < 50; i++) log.append(bytes(`entry ${i}`));
  const live = heap.stats().liveObjects;
  assert.equal(log.truncatePrefix(140), 40);
  assert.equal(heap.stats().liveObjects, live - 40);
  assert.equal(log.firstIndex, 140);
  const target = new Uint8Array(16);
  assert.equal(log.readInto(145, target, 2), 8);
  assert.deepEqual(target.subarray(2, 10), bytes('entry 45'));
  assert.equal(log.readInto(139, target), -1);
  assert.equal(log.read(145.5), undefined);
  log.destroy();
  assert.equal(heap.stats().liveObjects, 0);
  throwsCode(() => DmoLog.create(heap, { firstIndex: -1 }), 'IPIPE_ERR_DMO_INVALID_SIZE');
});

test('a restored log keeps its indices and records', () => {
  const heap = makeDomain().createHeap(A);
  const log = DmoLog.create(heap);
  for (let i = 0; i < 30; i++) log.append(bytes(`r${i}`));
  log.truncatePrefix(12);
  const restored = DmoLog.open(restoreHeap(makeDomain(), A, snapshotHeap(heap)), log.rootId);
  assert.equal(restored.firstIndex, 12);
  assert.deepEqual(restored.read(29), bytes('r29'));
  assert.equal(restored.append(bytes('next')), 30);
});
