/**
 * DmoDomain: one side's memory carved into equal per-actor regions, its object table, and
 * attaching a second view (another thread's) to the same buffer.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DmoDomain, DmoHashMap } from '../../src/dmo/index.ts';
import { isIpipeError } from '../../src/errors.ts';
import { actorId } from '../../src/ids.ts';
import { A, B, bytes, makeDomain, throwsCode } from './helpers.ts';

test('regions are equal-sized, one per actor, and reusable after release', () => {
  const domain = makeDomain({ maxActors: 2, regionBytes: 4096 });
  assert.equal(domain.buffer.byteLength, 64 + 2 * 4096);
  const a = domain.createHeap(A);
  domain.createHeap(B);
  assert.equal(a.stats().regionBytes, 4096);
  assert.deepEqual([...domain.actors()], [A, B]);
  throwsCode(() => domain.createHeap(A), 'IPIPE_ERR_ACTOR_DUPLICATE');
  throwsCode(() => domain.createHeap(actorId(3)), 'IPIPE_ERR_DMO_DOMAIN_FULL');
  assert.equal(domain.heapOf(A), a);
  assert.equal(domain.releaseHeap(A), true);
  assert.equal(domain.releaseHeap(A), false);
  assert.equal(domain.heapOf(A), undefined);
  const c = domain.createHeap(actorId(3));
  assert.equal(c.stats().liveObjects, 0);
  assert.deepEqual([...domain.actors()], [actorId(3), B]);
});

test('the object table lists every live object as (id, actor, start, size) inside its region', () => {
  const domain = makeDomain({ regionBytes: 4096 });
  const a = domain.createHeap(A);
  const b = domain.createHeap(B);
  const ids = [a.allocate(10), a.allocate(300), b.allocate(1)];
  a.free(a.allocate(5));
  const rows = [...domain.objectTable()];
  assert.deepEqual(
    rows.map((row) => [row.objectId, row.actorId, row.sizeBytes]),
    [
      [ids[0], A, 10],
      [ids[1], A, 300],
      [ids[2], B, 1],
    ],
  );
  for (const row of rows) {
    const regionIndex = row.actorId === A ? 0 : 1;
    assert.ok(
      row.start >= 64 + regionIndex * 4096 && row.start + row.sizeBytes <= 64 + (regionIndex + 1) * 4096,
    );
  }
  // `start` really is where the bytes are.
  a.writeU32(ids[1]!, 0, 0xcafe_f00d);
  const view = new DataView(domain.buffer, rows[1]!.start, 4);
  assert.equal(view.getUint32(0, true), 0xcafe_f00d);
});

test('options are validated with ConfigError', () => {
  for (const options of [
    { regionBytes: 1000, maxActors: 1 },
    { regionBytes: 4100, maxActors: 1 },
    { regionBytes: 4096, maxActors: 0 },
    { regionBytes: 4096, maxActors: 1.5 },
    { regionBytes: 2 ** 31, maxActors: 4 },
  ]) {
    throwsCode(() => DmoDomain.create(options), 'IPIPE_ERR_CONFIG_INVALID', JSON.stringify(options));
  }
});

test('attach: a second domain over the same SharedArrayBuffer sees the same heaps and objects', () => {
  const first = makeDomain({ shared: true });
  assert.ok(first.buffer instanceof SharedArrayBuffer);
  const a = first.createHeap(A);
  const id = a.allocate(16);
  a.writeF64(id, 8, 2.5);
  const map = DmoHashMap.create(a);
  map.set(bytes('k'), bytes('v'));

  const second = DmoDomain.attach(first.buffer);
  assert.equal(second.regionBytes, first.regionBytes);
  const seen = second.heapOf(A);
  assert.ok(seen !== undefined);
  assert.equal(seen.readF64(id, 8), 2.5);
  assert.deepEqual([...second.objectTable()], [...first.objectTable()]);
  assert.deepEqual(DmoHashMap.open(seen, map.rootId).get(bytes('k')), bytes('v'));

  // Changes flow both ways: allocation metadata lives in the buffer, not in either JS object.
  const fromSecond = seen.allocate(8);
  seen.writeU32(fromSecond, 0, 99);
  assert.equal(a.readU32(fromSecond, 0), 99);
  assert.equal(a.stats().liveObjects, seen.stats().liveObjects);
  const b = second.createHeap(B);
  b.allocate(4);
  assert.deepEqual([...first.actors()], [A, B]);
  assert.throws(
    () => first.createHeap(B),
    (error) => isIpipeError(error, 'IPIPE_ERR_ACTOR_DUPLICATE'),
  );
  second.releaseHeap(A);
  assert.equal(first.heapOf(A), undefined, 'a release on one view is seen by the other');
  throwsCode(() => a.readF64(id, 8), 'IPIPE_ERR_DMO_UNKNOWN_OBJECT');
});

test('attach refuses buffers that are not a DMO domain', () => {
  throwsCode(() => DmoDomain.attach(new SharedArrayBuffer(1024)), 'IPIPE_ERR_CONFIG_INVALID');
  throwsCode(() => DmoDomain.attach(new ArrayBuffer(10)), 'IPIPE_ERR_CONFIG_INVALID');
  const domain = makeDomain();
  const truncated = domain.buffer.slice(0, domain.buffer.byteLength - 16);
  throwsCode(() => DmoDomain.attach(truncated), 'IPIPE_ERR_CONFIG_INVALID');
  // A shared domain's bytes copied into a plain ArrayBuffer: a header that says "shared", in memory
  // no other thread can see — attaching it would give a second, diverging domain.
  const sharedDomain = makeDomain({ shared: true });
  const copy = new ArrayBuffer(sharedDomain.buffer.byteLength);
  new Uint8Array(copy).set(new Uint8Array(sharedDomain.buffer));
  assert.throws(
    () => DmoDomain.attach(copy),
    (error: unknown) =>
      isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID') && /plain ArrayBuffer/.test(error.message),
  );
});

test('attach refuses the buffer of a domain created without shared: true (it takes no locks)', () => {
  const domain = makeDomain({ maxActors: 2 });
  assert.equal(domain.shared, false);
  domain.createHeap(A);
  assert.throws(
    () => DmoDomain.attach(domain.buffer),
    (error: unknown) =>
      isIpipeError(error) && error.code === 'IPIPE_ERR_CONFIG_INVALID' && /shared: true/.test(error.message),
  );
  assert.ok(DmoDomain.attach(makeDomain({ shared: true }).buffer).shared);
});

test('a domain is not counted as V8 external memory, shared or not (its pages are touched lazily)', () => {
  // V8 starts a mark-compact each time counted external memory grows 64 MiB; a simulated node's
  // two 64 MiB domains used to set one off per node (docs/sim-speed.md, sixth pass).
  const bytes = 64 * 1024 * 1024;
  for (const shared of [false, true]) {
    const before = process.memoryUsage().external;
    const domain = DmoDomain.create({ regionBytes: bytes / 16, maxActors: 16, shared });
    const grown = process.memoryUsage().external - before;
    assert.ok(grown < bytes / 4, `shared ${shared}: external memory grew ${grown} bytes`);
    const heap = domain.createHeap(A);
    heap.writeF64(heap.allocate(8), 0, 1.5);
  }
});

test('an exclusive heap in a shared domain records the flag in the buffer, for every attached view', () => {
  const domain = makeDomain({ shared: true, maxActors: 2 });
  const exclusive = domain.createHeap(A, { exclusive: true });
  domain.createHeap(B);
  const words = new Uint32Array(domain.buffer);
  const flagsWord = 20; // REGION_WORD.flags
  assert.equal(words[(64 >>> 2) + flagsWord], 1);
  assert.equal(words[((64 + 64 * 1024) >>> 2) + flagsWord], 0);
  const id = exclusive.allocate(8);
  const attached = DmoDomain.attach(domain.buffer).heapOf(A)!;
  attached.writeU8(id, 0, 5);
  attached.free(attached.allocate(100));
  assert.equal(exclusive.readU8(id, 0), 5);
  assert.equal(exclusive.stats().liveObjects, 1);
});
