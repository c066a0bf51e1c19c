/**
 * DmoHashMap against a plain JS Map model: random operation sequences (growth, deletes, updates
 * of every size) give the same results; string helpers, copy-free reads, re-opening by root id.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DmoHashMap, DmoSkipList, restoreHeap, snapshotHeap } from '../../src/dmo/index.ts';
import { objectGeneration } from '../../src/ids.ts';
import { A, B, bytes, hex, makeDomain, throwsCode } from './helpers.ts';

// fast-check's default size ('small') caps every array at 10 elements whatever maxLength says, so
// each length below names its size: without it keys never pass 10 bytes, values never leave the
// smallest slab classes, and ten operations never fill the 16-slot table to its 3/4 load.
const keyArb = fc.oneof(
  fc.uint8Array({ minLength: 0, maxLength: 3 }), // short keys collide in prefix and length
  fc.uint8Array({ minLength: 0, maxLength: 40, size: 'max' }),
);
const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('set' as const),
      key: keyArb,
      value: fc.uint8Array({ maxLength: 60, size: 'max' }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), key: keyArb }) },
);

test('model: random set/delete/get sequences match a Map', () => {
  const numRuns = 120;
  let grownRuns = 0;
  fc.assert(
    fc.property(
      fc.array(opArb, { maxLength: 300, size: 'max' }),
      fc.nat({ max: 0xffff_ffff }),
      (ops, seed) => {
        const heap = makeDomain({ regionBytes: 256 * 1024 }).createHeap(A);
        const map = DmoHashMap.create(heap, { seed });
        const model = new Map<string, Uint8Array>();
        let peakSize = 0;
        for (const step of ops) {
          const k = hex(step.key);
          if (step.op === 'set') {
            map.set(step.key, step.value);
            model.set(k, step.value);
          } else if (step.op === 'delete') {
            assert.equal(map.delete(step.key), model.delete(k));
          } else {
            assert.deepEqual(map.get(step.key), model.get(k));
            assert.equal(map.has(step.key), model.has(k));
          }
          assert.equal(map.size, model.size);
          peakSize = Math.max(peakSize, model.size);
        }
        const entries = new Map([...map.entries()].map(([key, value]) => [hex(key), value]));
        assert.deepEqual(entries, model);
        // A default map has 16 slots and doubles before its 13th entry.
        if (peakSize > 12) grownRuns++;
      },
    ),
    { numRuns },
  );
  assert.ok(grownRuns >= numRuns / 2, `only ${grownRuns} of ${numRuns} runs grew the table`);
});

test('grows through many rehashes and keeps every entry; deletes leave no holes in probe runs', () => {
  const heap = makeDomain({ regionBytes: 4 << 20 }).createHeap(A);
  const map = DmoHashMap.create(heap);
  const n = 5000;
  for (let i = 0; i < n; i++) map.setString(`key-${i}`, `value-${i}`);
  assert.equal(map.size, n);
  for (let i = 0; i < n; i += 2) assert.equal(map.deleteString(`key-${i}`), true);
  for (let i = 0; i < n; i++) {
    assert.equal(map.getStringValue(`key-${i}`), i % 2 === 0 ? undefined : `value-${i}`);
  }
  assert.equal(map.size, n / 2);
  assert.ok(heap.stats().liveObjects > 2);
  map.clear();
  assert.equal(map.size, 0);
  assert.equal(heap.stats().liveObjects, 2, 'clear frees every entry and slab; the root and table stay');
  map.destroy();
  assert.equal(heap.stats().liveObjects, 0, 'destroy frees every object of the map');
});

test('copy-free reads: getInto and getView', () => {
  const heap = makeDomain().createHeap(A);
  const map = DmoHashMap.create(heap);
  map.set(bytes('alpha'), bytes('0123456789'));
  const target = new Uint8Array(16).fill(0xee);
  assert.equal(map.getInto(bytes('alpha'), target, 3), 10);
  assert.deepEqual([...target.subarray(3, 13)], [...bytes('0123456789')]);
  assert.equal(target[13], 0xee);
  assert.equal(
    map.getInto(bytes('alpha'), new Uint8Array(4)),
    10,
    'too small: length reported, nothing copied',
  );
  assert.equal(map.getInto(bytes('beta'), target), -1);
  assert.equal(map.getStringInto('alpha', target), 10);
  const view = map.getView(bytes('alpha'))!;
  view[0] = 0x41;
  assert.equal(map.getStringValue('alpha'), 'A123456789', 'a view writes through');
  assert.equal(map.getView(bytes('nope')), undefined);
});

test('values grow in place within their block and move when they outgrow it', () => {
  const heap = makeDomain().createHeap(A);
  const map = DmoHashMap.create(heap);
  map.set(bytes('k'), new Uint8Array(1).fill(1)); // a 32-byte slab entry (16 header + 4 key + 1)
  const objects = heap.stats().liveObjects;
  const used = heap.stats().usedBytes;
  map.set(bytes('k'), new Uint8Array(8).fill(2)); // still inside the entry's 32 bytes
  assert.equal(heap.stats().usedBytes, used, 'grew in place');
  map.set(bytes('k'), new Uint8Array(300).fill(3)); // 320 bytes: an object of its own
  assert.equal(heap.stats().liveObjects, objects + 1);
  assert.deepEqual(map.get(bytes('k')), new Uint8Array(300).fill(3));
  // The 32-byte entry it left went back to its slab's free list: the next one takes it.
  map.set(bytes('j'), new Uint8Array(3).fill(4));
  assert.equal(heap.stats().liveObjects, objects + 1, 'the old entry was reused');
  map.set(bytes('k'), new Uint8Array(0)); // shrinks in place
  assert.equal(heap.stats().liveObjects, objects + 1);
  map.delete(bytes('k'));
  assert.equal(heap.stats().liveObjects, objects, 'deleting frees an entry object');
  assert.equal(map.get(bytes('k')), undefined);
  assert.deepEqual(map.get(bytes('j')), new Uint8Array(3).fill(4));
});

test('string helpers handle non-ASCII keys and values', () => {
  const heap = makeDomain().createHeap(A);
  const map = DmoHashMap.create(heap);
  map.setString('naïve – 東京', 'ok ✓');
  assert.equal(map.getStringValue('naïve – 東京'), 'ok ✓');
  assert.ok(map.hasString('naïve – 東京'));
  assert.deepEqual(map.getString('naïve – 東京'), bytes('ok ✓'));
  assert.deepEqual(map.get(bytes('naïve – 東京')), bytes('ok ✓'), 'string keys are their UTF-8 bytes');
  assert.equal(map.getStringValue('naive'), undefined);
  const long = 'x'.repeat(5000);
  map.setString(long, long);
  assert.equal(map.getStringValue(long), long);
});

test('a shared-buffer map decodes string values', () => {
  const heap = makeDomain({ shared: true }).createHeap(A);
  const map = DmoHashMap.create(heap);
  map.setString('k', 'shared');
  assert.equal(map.getStringValue('k'), 'shared');
});

test('re-open by root id; open refuses other kinds and other actors', () => {
  const domain = makeDomain();
  const heap = domain.createHeap(A);
  const map = DmoHashMap.create(heap, { initialCapacity: 100 });
  map.setString('a', '1');
  const again = DmoHashMap.open(heap, map.rootId);
  assert.equal(again.getStringValue('a'), '1');
  again.setString('b', '2');
  assert.equal(map.getStringValue('b'), '2', 'both handles see one map');
  const list = DmoSkipList.create(heap);
  throwsCode(() => DmoHashMap.open(heap, list.rootId), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => DmoHashMap.open(heap, heap.allocate(32)), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => DmoHashMap.open(domain.createHeap(B), map.rootId), 'IPIPE_ERR_DMO_FOREIGN_OBJECT');
});

test('after a restore the cached translations are rebuilt and the map keeps working', () => {
  const heap = makeDomain({ regionBytes: 1 << 20 }).createHeap(A);
  const map = DmoHashMap.create(heap);
  // Churn first so that the restored layout (compacted) differs from the original one.
  for (let i = 0; i < 600; i++) map.setString(`tmp-${i}`, 'x'.repeat(i % 50));
  for (let i = 0; i < 600; i++) map.deleteString(`tmp-${i}`);
  for (let i = 0; i < 300; i++) map.setString(`k${i}`, `v${i}`);
  const other = makeDomain({ regionBytes: 1 << 20 });
  const restored = DmoHashMap.open(restoreHeap(other, A, snapshotHeap(heap)), map.rootId);
  for (let i = 0; i < 300; i++) assert.equal(restored.getStringValue(`k${i}`), `v${i}`);
  restored.setString('new', 'entry');
  assert.equal(restored.deleteString('k7'), true);
  assert.equal(restored.size, 300);
  assert.equal(map.getStringValue('k7'), 'v7', 'the original is untouched');
});

test('exhaustion while growing or inserting leaves the map consistent', () => {
  const heap = makeDomain({ regionBytes: 8192 }).createHeap(A);
  const map = DmoHashMap.create(heap);
  const model = new Map<string, string>();
  throwsCode(() => {
    for (let i = 0; ; i++) {
      map.setString(`key-${i}`, `value-${i}`);
      model.set(`key-${i}`, `value-${i}`);
    }
  }, 'IPIPE_ERR_DMO_REGION_EXHAUSTED');
  assert.equal(map.size, model.size);
  for (const [k, v] of model) assert.equal(map.getStringValue(k), v);
  map.deleteString('key-0');
  map.setString('again', 'fits');
  assert.equal(map.getStringValue('again'), 'fits');
});

test('16-byte keys (the unrolled lookup) match a Map model, next to keys one word or one byte apart', () => {
  // Keys that share three of their four words, and 15- and 17-byte neighbours, so that every word
  // compare and the key-length check decide some lookups; values of every length exercise each
  // branch of the word-wise copies (16-byte blocks, whole words, a byte tail).
  const wordArb = fc.constantFrom(0, 1, 0x8000_0000, 0xffff_ffff, 0x0102_0304);
  const key16Arb = fc.tuple(wordArb, wordArb, wordArb, wordArb).map(([a, b, c, d]) => {
    const key = new Uint8Array(16);
    new DataView(key.buffer).setUint32(0, a, true);
    new DataView(key.buffer).setUint32(4, b, true);
    new DataView(key.buffer).setUint32(8, c, true);
    new DataView(key.buffer).setUint32(12, d, true);
    return key;
  });
  const anyKeyArb = fc.oneof(
    { weight: 6, arbitrary: key16Arb },
    { weight: 1, arbitrary: key16Arb.map((key) => key.slice(0, 15)) },
    { weight: 1, arbitrary: key16Arb.map((key) => Uint8Array.of(...key, 7)) },
  );
  const op = fc.oneof(
    // size 'max': at the default size a value never passes 10 bytes and the 16-byte block copy
    // never runs.
    fc.record({
      op: fc.constant('set' as const),
      key: anyKeyArb,
      value: fc.uint8Array({ maxLength: 45, size: 'max' }),
    }),
    fc.record({ op: fc.constant('delete' as const), key: anyKeyArb }),
    fc.record({ op: fc.constant('get' as const), key: anyKeyArb }),
  );
  const numRuns = 200;
  let blockCopyRuns = 0;
  fc.assert(
    fc.property(fc.array(op, { maxLength: 150, size: 'max' }), (ops) => {
      let blockCopied = false;
      const map = DmoHashMap.create(makeDomain({ regionBytes: 256 * 1024 }).createHeap(A));
      const model = new Map<string, Uint8Array>();
      const out = new Uint8Array(64).fill(0xee);
      for (const step of ops) {
        const name = hex(step.key);
        if (step.op === 'set') {
          map.set(step.key, step.value);
          model.set(name, step.value);
        } else if (step.op === 'delete') {
          assert.equal(map.delete(step.key), model.delete(name));
        } else {
          const expected = model.get(name);
          assert.deepEqual(map.get(step.key), expected);
          assert.equal(map.getInto(step.key, out, 3), expected === undefined ? -1 : expected.length);
          if (expected !== undefined) {
            assert.deepEqual(out.subarray(3, 3 + expected.length), expected);
            assert.equal(out[3 + expected.length], 0xee, 'getInto wrote past the value');
            out.fill(0xee);
            if (expected.length >= 16) blockCopied = true;
          }
        }
      }
      assert.equal(map.size, model.size);
      if (blockCopied) blockCopyRuns++;
    }),
    { numRuns },
  );
  assert.ok(
    blockCopyRuns >= numRuns / 10,
    `only ${blockCopyRuns} of ${numRuns} runs read a value of 16+ bytes`,
  );
});

test('links above 2^31 (slot generations ≥ 128) resolve; a freed root is refused by its generation', () => {
  const heap = makeDomain({ regionBytes: 256 * 1024 }).createHeap(A);
  // Cycle slots 1 and 2 through 130 generations: the map's table and root then get links whose
  // top bit is set, which the map keeps as int32 internally.
  for (let round = 0; round < 130; round++) {
    const first = heap.allocate(16);
    const second = heap.allocate(16);
    heap.free(first);
    heap.free(second);
  }
  const map = DmoHashMap.create(heap);
  assert.ok(objectGeneration(map.rootId) >= 128, `root generation ${objectGeneration(map.rootId)}`);
  const key = bytes('sixteen-byte-key');
  map.set(key, bytes('value'));
  map.setString('short', 'v');
  assert.deepEqual(map.get(key), bytes('value'));
  assert.equal(DmoHashMap.open(heap, map.rootId).getStringValue('short'), 'v');
  assert.equal(map.delete(key), true);
  heap.free(map.rootId);
  throwsCode(() => map.get(key), 'IPIPE_ERR_DMO_UNKNOWN_OBJECT');
  throwsCode(() => map.set(key, bytes('x')), 'IPIPE_ERR_DMO_UNKNOWN_OBJECT');
});

test('a forged entry offset (misaligned, past its object) is refused, never trusted', () => {
  // A slot's offset is where the entry starts inside its slab or object; it is checked against
  // that object's size before any word of the entry is read. A forged one makes the operation
  // fail with DmoCollectionFormatError; the untouched slots keep working.
  const heap = makeDomain({ regionBytes: 64 * 1024 }).createHeap(A);
  const map = DmoHashMap.create(heap);
  const keys = Array.from({ length: 6 }, (_, i) => bytes(`key-number-${i}`.padEnd(16, '.')));
  for (const [i, key] of keys.entries()) map.set(key, bytes(`value-${i}`));
  const big = bytes('a key whose value is an object of its own');
  map.set(big, new Uint8Array(400).fill(9));
  const tableLocal = heap.readU32(map.rootId, 16); // root word 4: the table's link
  const tableId = [...heap.objects()].find((id) => id % 2 ** 32 === tableLocal)!;
  const forge = [
    (offset: number) => offset + 1,
    (offset: number) => offset + 2,
    (offset: number) => offset + 3,
    () => 0xffff_fff0,
    () => 8192, // aligned, inside the region's data, past the slab
  ];
  let forged = 0;
  for (let slot = 0; slot < 16; slot++) {
    if (heap.readU32(tableId, slot * 12 + 4) === 0) continue;
    const offset = heap.readU32(tableId, slot * 12 + 8);
    for (const change of forge) {
      heap.writeU32(tableId, slot * 12 + 8, change(offset));
      const probe = [...keys, big].filter((key) => {
        try {
          map.get(key);
          return false;
        } catch (error) {
          assert.equal((error as { code?: string }).code, 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
          return true;
        }
      });
      assert.ok(probe.length >= 1, `slot ${slot}: a forged offset ${change(offset)} was used`);
      forged++;
    }
    heap.writeU32(tableId, slot * 12 + 8, offset);
  }
  assert.equal(forged, (keys.length + 1) * forge.length);
  for (const [i, key] of keys.entries()) assert.deepEqual(map.get(key), bytes(`value-${i}`));
  assert.deepEqual(map.get(big), new Uint8Array(400).fill(9));
});
