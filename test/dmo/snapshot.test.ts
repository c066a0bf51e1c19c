/**
 * Snapshot and restore of an actor's heap — migration phase 3 ("Gone"): ids, bytes and collection
 * contents survive a move to another domain; damaged snapshots are refused with nothing restored.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DmoHashMap,
  type DmoHeap,
  DmoLog,
  DmoNumberMap,
  DmoSkipList,
  DmoVector,
  restoreHeap,
  snapshotHeap,
  snapshotHeapInto,
  snapshotOwner,
  snapshotSize,
} from '../../src/dmo/index.ts';
import { isIpipeError } from '../../src/errors.ts';
import type { ObjectId } from '../../src/ids.ts';
import { A, B, bytes, hex, makeDomain, throwsCode } from './helpers.ts';

interface Built {
  readonly heap: DmoHeap;
  readonly freed: ObjectId[];
  readonly roots: { map: ObjectId; list: ObjectId; log: ObjectId; vector: ObjectId; counters: ObjectId };
}

// size 'max' on the arrays and the longer byte strings: fast-check's default size stops at 10
// elements whatever maxLength says, so no collection grew before its snapshot (a hash map doubles
// at 13 entries) and the log was never cut at a prefix it held. The property counts both.
const keyValue = fc.tuple(fc.uint8Array({ maxLength: 10 }), fc.uint8Array({ maxLength: 30, size: 'max' }));
const planArb = fc.record({
  raw: fc.array(fc.uint8Array({ maxLength: 200, size: 'max' }), { maxLength: 30, size: 'max' }),
  freeMask: fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
  mapEntries: fc.array(keyValue, { maxLength: 60, size: 'max' }),
  listEntries: fc.array(keyValue, { maxLength: 60, size: 'max' }),
  records: fc.array(fc.uint8Array({ maxLength: 30, size: 'max' }), { maxLength: 40, size: 'max' }),
  truncateAt: fc.nat({ max: 40 }),
  numbers: fc.array(fc.double({ noNaN: true }), { maxLength: 50, size: 'max' }),
});

type Plan = typeof planArb extends fc.Arbitrary<infer T> ? T : never;

function build(plan: Plan): Built {
  const heap = makeDomain({ regionBytes: 256 * 1024 }).createHeap(A);
  const raw = plan.raw.map((content) => {
    const id = heap.allocate(content.length);
    heap.write(id, 0, content);
    return id;
  });
  const map = DmoHashMap.create(heap);
  for (const [k, v] of plan.mapEntries) map.set(k, v);
  const list = DmoSkipList.create(heap, { seed: 3 });
  for (const [k, v] of plan.listEntries) list.set(k, v);
  const log = DmoLog.create(heap, { initialCapacity: 2 });
  for (const record of plan.records) log.append(record);
  log.truncatePrefix(plan.truncateAt);
  const vector = DmoVector.create(heap, { element: 'f64', initialCapacity: 1 });
  for (const n of plan.numbers) vector.push(n);
  const counters = DmoNumberMap.create(heap);
  for (const n of plan.numbers) counters.increment(n);
  const freed: ObjectId[] = [];
  raw.forEach((id, i) => {
    if (plan.freeMask[i]) {
      heap.free(id);
      freed.push(id);
    }
  });
  return {
    heap,
    freed,
    roots: {
      map: map.rootId,
      list: list.rootId,
      log: log.rootId,
      vector: vector.rootId,
      counters: counters.rootId,
    },
  };
}

function contents(heap: DmoHeap, roots: Built['roots']): unknown {
  return {
    map: [...DmoHashMap.open(heap, roots.map)].map(([k, v]) => [hex(k), hex(v)]).sort(),
    list: [...DmoSkipList.open(heap, roots.list)].map(([k, v]) => [hex(k), hex(v)]),
    log: [...DmoLog.open(heap, roots.log)].map(([i, r]) => [i, hex(r)]),
    vector: DmoVector.open(heap, roots.vector).toArray(),
    counters: [...DmoNumberMap.open(heap, roots.counters)].sort((x, y) => x[0] - y[0]),
  };
}

test('property: restore into another domain keeps ids, bytes, stale-id detection and collections', () => {
  const numRuns = 60;
  let grownMaps = 0;
  let cutLogs = 0; // logs that dropped a prefix and still hold records past it
  fc.assert(
    fc.property(planArb, fc.constantFrom(256 * 1024, 512 * 1024), (plan, targetRegionBytes) => {
      if (new Set(plan.mapEntries.map(([key]) => hex(key))).size > 12) grownMaps++;
      if (plan.truncateAt > 0 && plan.records.length > plan.truncateAt) cutLogs++;
      const { heap, freed, roots } = build(plan);
      const snapshot = snapshotHeap(heap);
      assert.equal(snapshot.length, snapshotSize(heap));
      assert.equal(snapshotOwner(snapshot), A);
      const target = makeDomain({ regionBytes: targetRegionBytes });
      target.createHeap(B); // the actor lands in the second region: offsets differ
      const restored = restoreHeap(target, A, snapshot);
      assert.deepEqual([...restored.objects()], [...heap.objects()]);
      for (const id of heap.objects()) {
        assert.equal(restored.sizeOf(id), heap.sizeOf(id));
        assert.deepEqual(restored.read(id, 0, heap.sizeOf(id)), heap.read(id, 0, heap.sizeOf(id)));
      }
      for (const id of freed) assert.equal(restored.has(id), false);
      assert.deepEqual(contents(restored, roots), contents(heap, roots));
      assert.equal(restored.stats().liveObjects, heap.stats().liveObjects);
      // New objects get fresh ids that collide with nothing kept.
      const live = new Set(heap.objects());
      for (let i = 0; i < 5; i++) assert.ok(!live.has(restored.allocate(8)));
    }),
    { numRuns },
  );
  assert.ok(grownMaps >= numRuns / 4, `only ${grownMaps} of ${numRuns} snapshots held a grown hash map`);
  assert.ok(cutLogs >= numRuns / 20, `only ${cutLogs} of ${numRuns} snapshots held a log cut at a prefix`);
});

test('snapshotHeapInto writes at an offset of a caller buffer and refuses one too small', () => {
  const heap = makeDomain().createHeap(A);
  const id = heap.allocate(10);
  heap.write(id, 0, bytes('0123456789'));
  const size = snapshotSize(heap);
  const buffer = new Uint8Array(size + 8).fill(0xcc);
  assert.equal(snapshotHeapInto(heap, buffer, 5), size);
  assert.equal(buffer[4], 0xcc);
  assert.equal(buffer[5 + size], 0xcc);
  assert.deepEqual(buffer.subarray(5, 5 + size), snapshotHeap(heap));
  const restored = restoreHeap(makeDomain(), A, buffer.subarray(5, 5 + size));
  assert.deepEqual(restored.read(id, 0, 10), bytes('0123456789'));
  assert.throws(
    () => snapshotHeapInto(heap, new Uint8Array(size), 1),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_DMO_INVALID_SIZE'),
  );
});

test('any flipped byte or truncation is refused and nothing is restored', () => {
  const { heap } = build({
    raw: [bytes('hello'), new Uint8Array(100).fill(3)],
    freeMask: [false, true, ...new Array<boolean>(28).fill(false)],
    mapEntries: [[bytes('k'), bytes('v')]],
    listEntries: [[bytes('a'), bytes('b')]],
    records: [bytes('r1'), bytes('r2')],
    truncateAt: 1,
    numbers: [1, 2],
  });
  const snapshot = snapshotHeap(heap);
  const target = makeDomain();
  fc.assert(
    fc.property(fc.nat({ max: snapshot.length - 1 }), fc.integer({ min: 1, max: 255 }), (position, flip) => {
      const damaged = snapshot.slice();
      damaged[position]! ^= flip;
      throwsCode(() => restoreHeap(target, A, damaged), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT');
      assert.equal(target.heapOf(A), undefined);
    }),
    { numRuns: 300 },
  );
  for (const length of [0, 10, 31, 32, snapshot.length - 1]) {
    throwsCode(() => restoreHeap(target, A, snapshot.subarray(0, length)), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT');
  }
  const padded = new Uint8Array(snapshot.length + 1);
  padded.set(snapshot);
  throwsCode(() => restoreHeap(target, A, padded), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT');
  assert.deepEqual([...target.actors()], []);
  restoreHeap(target, A, snapshot); // the undamaged bytes still restore
});

test('restore refuses the wrong actor, a region too small, and an actor that already has a heap', () => {
  const heap = makeDomain({ regionBytes: 64 * 1024 }).createHeap(A);
  for (let i = 0; i < 40; i++) heap.allocate(1000);
  const snapshot = snapshotHeap(heap);
  const target = makeDomain({ regionBytes: 16 * 1024 });
  throwsCode(() => restoreHeap(target, B, snapshot), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT');
  throwsCode(() => restoreHeap(target, A, snapshot), 'IPIPE_ERR_DMO_REGION_EXHAUSTED');
  assert.deepEqual([...target.actors()], [], 'nothing was claimed');
  const roomy = makeDomain({ regionBytes: 64 * 1024 });
  roomy.createHeap(A);
  assert.throws(
    () => restoreHeap(roomy, A, snapshot),
    (error) => isIpipeError(error, 'IPIPE_ERR_ACTOR_DUPLICATE'),
  );
});

test('migration round trip: NIC → host → NIC, releasing each side, keeps working collections', () => {
  const nic = makeDomain({ regionBytes: 64 * 1024 });
  const host = makeDomain({ regionBytes: 256 * 1024 });
  let heap = nic.createHeap(A);
  const map = DmoHashMap.create(heap);
  for (let i = 0; i < 100; i++) map.setString(`k${i}`, `v${i}`);
  for (let hop = 0; hop < 4; hop++) {
    const [from, to] = hop % 2 === 0 ? [nic, host] : [host, nic];
    const snapshot = snapshotHeap(heap);
    from.releaseHeap(A);
    heap = restoreHeap(to, A, snapshot);
    const reopened = DmoHashMap.open(heap, map.rootId);
    reopened.setString(`hop${hop}`, 'yes');
    reopened.deleteString(`k${hop}`);
  }
  const final = DmoHashMap.open(heap, map.rootId);
  assert.equal(final.size, 100);
  assert.equal(final.getStringValue('hop3'), 'yes');
  assert.equal(final.getStringValue('k50'), 'v50');
  assert.equal(final.getStringValue('k2'), undefined);
});
