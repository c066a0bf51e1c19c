import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TimerId } from '../../src/actor/context.ts';
import { field, messages } from '../../src/actor/index.ts';
import { DmoDomain } from '../../src/dmo/domain.ts';
import { restoreHeap, snapshotHeap } from '../../src/dmo/snapshot.ts';
import { actorId, type ObjectId } from '../../src/ids.ts';
import { DmoStateStore } from '../../src/runtime/dmo-state-store.ts';

const codec = messages({ tick: { n: field.u32() }, note: { text: field.string() } });

test('roots, timers and counters live in the heap: another view of the same memory sees them', () => {
  const domain = DmoDomain.create({ regionBytes: 256 * 1024, maxActors: 2, shared: true });
  const heap = domain.createHeap(actorId(3));
  const store = DmoStateStore.create(heap, codec);
  const object = heap.allocate(16);
  store.setRoot('table', object);
  const timerId = store.allocateTimerId();
  store.addTimer({
    id: timerId,
    dueAtNs: 123_456,
    message: { type: 'note', text: 'héllo' },
    origin: { kind: 'client', endpoint: { address: '127.0.0.1', port: 4000 }, requestId: 9 },
  });
  assert.equal(store.allocateRequestId(), 1);

  const other = DmoDomain.attach(domain.buffer).heapOf(actorId(3));
  assert.ok(other);
  const seen = DmoStateStore.open(other, codec);
  assert.equal(seen.root('table'), object);
  assert.deepEqual(seen.rootEntries(), [['table', object]]);
  assert.equal(seen.timers().length, 1);
  assert.equal(seen.allocateRequestId(), 2, 'the counter is shared, not per view');
  const fired = seen.takeTimer(timerId);
  assert.deepEqual(fired?.message, { type: 'note', text: 'héllo' });
  assert.equal(fired?.dueAtNs, 123_456);
  assert.equal(store.takeTimer(timerId), undefined, 'taken once, for every view');
  store.setRoot('table', undefined);
  assert.equal(seen.root('table'), undefined);
});

test('the state moves with a heap snapshot, ids preserved', () => {
  const nic = DmoDomain.create({ regionBytes: 256 * 1024, maxActors: 2 });
  const host = DmoDomain.create({ regionBytes: 256 * 1024, maxActors: 2 });
  const heap = nic.createHeap(actorId(5));
  const store = DmoStateStore.create(heap, codec);
  const object = heap.allocate(8);
  store.setRoot('x', object);
  store.addTimer({
    id: store.allocateTimerId(),
    dueAtNs: 5,
    message: { type: 'tick', n: 1 },
    origin: { kind: 'none' },
  });
  const moved = restoreHeap(host, actorId(5), snapshotHeap(heap));
  const there = DmoStateStore.open(moved, codec);
  assert.equal(there.root('x'), object);
  assert.deepEqual(
    there.timers().map((t) => [t.id, t.message]),
    [[1 as TimerId, { type: 'tick', n: 1 }]],
  );
  assert.equal(there.allocateTimerId(), 2);
});

test("the store must be the heap's first allocation, and open refuses a heap without one", () => {
  const domain = DmoDomain.create({ regionBytes: 64 * 1024, maxActors: 2 });
  const heap = domain.createHeap(actorId(1));
  assert.throws(() => DmoStateStore.open(heap, codec), /no runtime state directory/);
  heap.allocate(8) as ObjectId;
  assert.throws(() => DmoStateStore.create(heap, codec), /first object/);
});
