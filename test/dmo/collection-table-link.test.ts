/**
 * A hash map's or number map's table is found through two numbers in its root that the actor can
 * overwrite with its own checked writes: the table's link and its cached region offset. The map
 * must write only inside the table object the link names — never the region's header (whose
 * allocator words, once forged, reach other actors' regions) nor another of the actor's objects —
 * and a delete on a damaged, full table must throw rather than loop forever.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DmoHashMap, DmoNumberMap } from '../../src/dmo/index.ts';
import type { ObjectId } from '../../src/ids.ts';
import { A, B, makeDomain, throwsCode } from './helpers.ts';

const REGION_BYTES = 16 * 1024;
/** Root words (hash map and number map share them): table link 4, cached table offset 6. */
const ROOT_TABLE_LINK_BYTE = 4 * 4;
const ROOT_TABLE_OFFSET_BYTE = 6 * 4;
/** Actor A's region is the domain's first: it starts after the 64-byte domain header. */
const REGION_BASE_A = 64;

function twoActors() {
  const domain = makeDomain({ regionBytes: REGION_BYTES, maxActors: 2 });
  const heap = domain.createHeap(A);
  const other = domain.createHeap(B);
  const secret = other.allocate(256);
  other.fill(secret, 0x5a);
  const memory = new Uint8Array(domain.buffer);
  // The whole domain but the actor's own objects' data: header, its region's header and table,
  // and the other region. Compared before and after, byte for byte.
  const snapshot = () => memory.slice();
  return { domain, heap, other, secret, memory, snapshot };
}

/** Offsets of the region header's words the allocator keeps (dataTop, slotCount, class heads…). */
const HEADER_OFFSETS = [0, 4, 16, 20, 24, 48, 64];

test('a hash map whose cached table offset points into the region header refuses to write there', () => {
  for (const offset of HEADER_OFFSETS) {
    const { heap, snapshot, memory } = twoActors();
    const map = DmoHashMap.create(heap);
    map.setString('a', 'b');
    heap.writeU32(map.rootId, ROOT_TABLE_OFFSET_BYTE, offset);
    const before = snapshot();
    for (let i = 0; i < 6; i++) {
      throwsCode(() => map.set(new Uint8Array([i]), new Uint8Array([i])), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
    }
    assert.deepEqual(memory, before, `offset ${offset}: set changed memory`);
    heap.allocate(16); // the allocator's header is intact
  }
});

test('a number map whose cached table offset points into the region header refuses to write there', () => {
  for (const offset of HEADER_OFFSETS) {
    const { heap, snapshot, memory } = twoActors();
    const map = DmoNumberMap.create(heap);
    map.set(1, 2);
    heap.writeU32(map.rootId, ROOT_TABLE_OFFSET_BYTE, offset);
    const before = snapshot();
    for (let key = 0; key < 40; key++) {
      throwsCode(() => map.set(key, key), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
    }
    assert.deepEqual(memory, before, `offset ${offset}: set changed memory`);
    heap.allocate(16);
  }
});

test('a cached table offset must be the start of the table object its link names', () => {
  const { domain, heap } = twoActors();
  const map = DmoHashMap.create(heap);
  const numbers = DmoNumberMap.create(heap);
  map.setString('x', 'y');
  numbers.set(3, 4);
  // 16 bytes into their own tables: inside the region's data and inside an object of the actor's
  // own, but not where the object the link names starts.
  const table = heap.readU32(map.rootId, ROOT_TABLE_OFFSET_BYTE);
  heap.writeU32(map.rootId, ROOT_TABLE_OFFSET_BYTE, table + 16);
  throwsCode(() => map.getString('x'), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  heap.writeU32(map.rootId, ROOT_TABLE_OFFSET_BYTE, table);
  assert.equal(map.has(new TextEncoder().encode('x')), true);
  const numbersTable = heap.readU32(numbers.rootId, ROOT_TABLE_OFFSET_BYTE);
  heap.writeU32(numbers.rootId, ROOT_TABLE_OFFSET_BYTE, numbersTable + 16);
  throwsCode(() => numbers.get(3), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  heap.writeU32(numbers.rootId, ROOT_TABLE_OFFSET_BYTE, numbersTable);
  assert.equal(numbers.get(3), 4);
  // Link and offset both naming another object of the actor's, too small for `capacity` slots.
  const small = heap.allocate(16);
  const smallRow = [...domain.objectTable()].find((row) => row.objectId === small);
  assert.ok(smallRow !== undefined);
  const smallOffset = smallRow.start - REGION_BASE_A;
  for (const root of [map.rootId, numbers.rootId]) {
    heap.writeU32(root, ROOT_TABLE_LINK_BYTE, small % 2 ** 32);
    heap.writeU32(root, ROOT_TABLE_OFFSET_BYTE, smallOffset);
  }
  throwsCode(() => map.setString('z', 'w'), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => numbers.set(9, 9), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});

test('the numbermap escape: a forged table offset cannot forge object-table rows', () => {
  // The review's reproduction, reduced: tableOffset 16 makes `set` write header words 4..7
  // (dataTop, slotCount…); before the fix, a raised slotCount let a forged row in the actor's
  // own object name another region. Now `set` throws and the other region is untouched.
  const { heap, other, secret, memory, snapshot } = twoActors();
  const map = DmoNumberMap.create(heap);
  heap.writeU32(map.rootId, ROOT_TABLE_OFFSET_BYTE, 16);
  const before = snapshot();
  for (let key = 0; key < 64; key++) {
    throwsCode(() => map.set(key + 0.5, key), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  }
  assert.deepEqual(memory, before);
  assert.deepEqual(other.read(secret, 0, 4), new Uint8Array([0x5a, 0x5a, 0x5a, 0x5a]));
});

test('delete on a damaged full number map throws instead of looping forever', () => {
  const { heap } = twoActors();
  const map = DmoNumberMap.create(heap); // 16 slots: 16 pairs, then 16 state bytes
  map.set(0, 1);
  const link = heap.readU32(map.rootId, ROOT_TABLE_LINK_BYTE);
  const table = (A * 2 ** 32 + link) as ObjectId;
  heap.fill(table, 1, 256, 16); // every slot marked full
  assert.equal(map.get(0), 1);
  throwsCode(() => map.delete(0), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});

test('delete on a damaged full hash map throws instead of looping forever, changing nothing', () => {
  const { heap, memory, snapshot } = twoActors();
  const map = DmoHashMap.create(heap); // 16 slots of [hash, link, offset]
  map.set(new Uint8Array([1]), new Uint8Array([1]));
  const link = heap.readU32(map.rootId, ROOT_TABLE_LINK_BYTE);
  const table = (A * 2 ** 32 + link) as ObjectId;
  for (let i = 0; i < 16; i++) {
    if (heap.readU32(table, 12 * i + 4) === 0) heap.writeU32(table, 12 * i + 4, 0xdead);
  }
  assert.equal(map.has(new Uint8Array([1])), true);
  const before = snapshot();
  throwsCode(() => map.delete(new Uint8Array([1])), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  assert.deepEqual(memory, before, 'the failed delete released the entry or shifted slots');
});
