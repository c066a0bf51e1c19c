/**
 * The DmoHeap accessors (iPipe Table 4's dmo_memset / dmo_memcpy / dmo_memmove, plus typed
 * reads and writes): values round-trip little-endian, memmove handles overlap, views are bounded.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { A, makeDomain, throwsCode } from './helpers.ts';

test('typed accessors round-trip and are little-endian at any offset', () => {
  const heap = makeDomain().createHeap(A);
  const id = heap.allocate(32);
  heap.writeU32(id, 1, 0x11223344);
  assert.deepEqual([...heap.read(id, 1, 4)], [0x44, 0x33, 0x22, 0x11]);
  assert.equal(heap.readU32(id, 1), 0x11223344);
  heap.writeI32(id, 8, -2);
  assert.equal(heap.readI32(id, 8), -2);
  assert.equal(heap.readU32(id, 8), 0xffff_fffe);
  heap.writeF64(id, 13, Math.PI);
  assert.equal(heap.readF64(id, 13), Math.PI);
  heap.writeF64(id, 24, -0);
  assert.ok(Object.is(heap.readF64(id, 24), -0));
  heap.writeU8(id, 31, 0x1ff);
  assert.equal(heap.readU8(id, 31), 0xff, 'u8 stores keep the low byte');
  heap.writeU32(id, 0, 2 ** 32 + 5);
  assert.equal(heap.readU32(id, 0), 5, 'u32 stores wrap like DataView');
});

test('property: f64 and u32 written at random offsets read back exactly', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 56 }),
      fc.double(),
      fc.nat({ max: 0xffff_ffff }),
      (offset, f, u) => {
        const heap = makeDomain().createHeap(A);
        const id = heap.allocate(64);
        heap.writeF64(id, offset, f);
        assert.ok(Object.is(heap.readF64(id, offset), f));
        heap.writeU32(id, 64 - 4 - (offset % 60), u);
        assert.equal(heap.readU32(id, 64 - 4 - (offset % 60)), u);
      },
    ),
    { numRuns: 200 },
  );
});

test('fill defaults to the rest of the object and rejects non-byte values', () => {
  const heap = makeDomain().createHeap(A);
  const id = heap.allocate(10);
  heap.fill(id, 7, 4);
  assert.deepEqual([...heap.read(id, 0, 10)], [0, 0, 0, 0, 7, 7, 7, 7, 7, 7]);
  heap.fill(id, 1, 2, 3);
  assert.deepEqual([...heap.read(id, 0, 10)], [0, 0, 1, 1, 1, 7, 7, 7, 7, 7]);
  for (const bad of [256, -1, 1.5, Number.NaN])
    throwsCode(() => heap.fill(id, bad), 'IPIPE_ERR_DMO_INVALID_SIZE');
});

test('copy between objects and move within one object (overlap in both directions)', () => {
  const heap = makeDomain().createHeap(A);
  const a = heap.allocate(8);
  const b = heap.allocate(8);
  heap.write(a, 0, Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8));
  heap.copy(b, 2, a, 0, 6);
  assert.deepEqual([...heap.read(b, 0, 8)], [0, 0, 1, 2, 3, 4, 5, 6]);
  heap.move(a, 2, a, 0, 6);
  assert.deepEqual([...heap.read(a, 0, 8)], [1, 2, 1, 2, 3, 4, 5, 6]);
  heap.move(a, 0, a, 2, 6);
  assert.deepEqual([...heap.read(a, 0, 8)], [1, 2, 3, 4, 5, 6, 5, 6]);
  heap.copy(a, 8, b, 0, 0);
  assert.deepEqual(
    [...heap.read(a, 0, 8)],
    [1, 2, 3, 4, 5, 6, 5, 6],
    'a zero-length copy at the end is allowed',
  );
});

test('read returns a copy; bytes returns a bounded view that writes through', () => {
  const heap = makeDomain().createHeap(A);
  const id = heap.allocate(5);
  const copy = heap.read(id, 0, 5);
  copy[0] = 9;
  assert.equal(heap.readU8(id, 0), 0);
  const view = heap.bytes(id);
  assert.equal(view.length, 5);
  view[4] = 42;
  assert.equal(heap.readU8(id, 4), 42);
  assert.equal(view[5], undefined, 'the view ends with the object');
});

test('write accepts a view of another object of the same heap', () => {
  const heap = makeDomain().createHeap(A);
  const a = heap.allocate(4);
  const b = heap.allocate(4);
  heap.write(a, 0, Uint8Array.of(1, 2, 3, 4));
  heap.write(b, 0, heap.bytes(a));
  assert.deepEqual([...heap.read(b, 0, 4)], [1, 2, 3, 4]);
});
