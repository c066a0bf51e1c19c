/**
 * Collections treat the numbers stored in their own objects as untrusted: whatever an actor's bug
 * scribbles over its collections' internals (e.g. through a view kept past free), every operation
 * either works, or throws an ipipe error — it never reads or writes another actor's memory, never
 * throws a raw RangeError, and never loops forever.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hashWords, packWords } from '../../src/dmo/hash.ts';
import { DmoHashMap, DmoLog, DmoNumberMap, DmoSkipList, DmoVector } from '../../src/dmo/index.ts';
import { isIpipeError } from '../../src/errors.ts';
import { A, B, bytes, makeDomain, throwsCode } from './helpers.ts';

test('opening a root as the wrong collection kind fails with DmoCollectionFormatError', () => {
  const heap = makeDomain().createHeap(A);
  const roots = {
    map: DmoHashMap.create(heap).rootId,
    numbers: DmoNumberMap.create(heap).rootId,
    list: DmoSkipList.create(heap).rootId,
    log: DmoLog.create(heap).rootId,
    vector: DmoVector.create(heap, { element: 'u32' }).rootId,
    plain: heap.allocate(32),
    tiny: heap.allocate(2),
  };
  const openers = [
    (id: typeof roots.map) => DmoHashMap.open(heap, id),
    (id: typeof roots.map) => DmoNumberMap.open(heap, id),
    (id: typeof roots.map) => DmoSkipList.open(heap, id),
    (id: typeof roots.map) => DmoLog.open(heap, id),
    (id: typeof roots.map) => DmoVector.open(heap, id),
  ];
  const own = [roots.map, roots.numbers, roots.list, roots.log, roots.vector];
  openers.forEach((open, i) => {
    for (const [name, id] of Object.entries(roots)) {
      if (id === own[i]) open(id);
      else throwsCode(() => open(id), 'IPIPE_ERR_DMO_COLLECTION_FORMAT', `${i} ${name}`);
    }
  });
});

test('property: scribbled collection internals never escape the region', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat({ max: 0xffff_ffff })), { minLength: 1, maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      (scribbles, ops) => {
        const domain = makeDomain({ regionBytes: 32 * 1024 });
        const heap = domain.createHeap(A);
        const other = domain.createHeap(B);
        const secret = other.allocate(4000);
        other.fill(secret, 0x3c);
        const map = DmoHashMap.create(heap);
        const numbers = DmoNumberMap.create(heap);
        const list = DmoSkipList.create(heap, { seed: 5, maxLevel: 6 });
        const log = DmoLog.create(heap, { initialCapacity: 2 });
        const vector = DmoVector.create(heap, { element: 'f64', initialCapacity: 2 });
        for (let i = 0; i < 20; i++) {
          map.setString(`k${i}`, `v${i}`);
          numbers.set(i, i);
          list.set(bytes(`k${i}`), bytes(`v${i}`));
          log.append(bytes(`r${i}`));
          vector.push(i);
        }
        // Everything outside A's region (the domain header and the other regions) must not change.
        const memory = new Uint8Array(domain.buffer);
        const regionEnd = 64 + 32 * 1024;
        const outside = memory.slice(regionEnd);
        const domainHeader = memory.slice(0, 64);
        // Overwrite random aligned words of random objects of the actor with random values.
        const ids = [...heap.objects()];
        for (const [which, where, value] of scribbles) {
          const id = ids[which % ids.length]!;
          const size = heap.sizeOf(id);
          if (size >= 4) heap.writeU32(id, (where % Math.floor(size / 4)) * 4, value);
        }
        const operations = [
          () => map.getStringValue('k3'),
          () => map.setString('new', 'value'),
          () => map.deleteString('k4'),
          () => [...map.entries()],
          () => numbers.increment(7),
          () => numbers.delete(3),
          () => [...numbers.entries()],
          () => list.get(bytes('k5')),
          () => list.set(bytes('k55'), bytes('x')),
          () => list.delete(bytes('k6')),
          () => list.range(bytes('k1'), 10),
          () => [...list],
          () => list.last(),
          () => log.read(5),
          () => log.append(bytes('more')),
          () => log.truncatePrefix(3),
          () => [...log],
          () => vector.get(3),
          () => vector.push(1),
          () => vector.toArray(),
          () => map.clear(),
          () => list.clear(),
        ];
        for (const pick of [...ops, ...operations.keys()]) {
          try {
            operations[pick % operations.length]!();
          } catch (error) {
            if (!isIpipeError(error)) throw error;
          }
        }
        assert.ok(
          other.read(secret, 0, 4000).every((byte) => byte === 0x3c),
          "the other actor's bytes changed",
        );
        assert.deepEqual(memory.subarray(0, 64), domainHeader);
        assert.ok(
          Buffer.compare(memory.subarray(regionEnd), outside) === 0,
          'memory outside the region changed',
        );
      },
    ),
    { numRuns: 150 },
  );
});

/**
 * A forged layout that would hand the reader another actor's bytes if the collection trusted its
 * stored numbers: actor B (the accomplice) lays out a fake table or node in its own object, and
 * A's collection fields are overwritten to point there. Each collection must refuse.
 */
function forgeSetup() {
  const domain = makeDomain({ regionBytes: 16 * 1024, maxActors: 2 });
  const heap = domain.createHeap(A);
  const other = domain.createHeap(B);
  const bait = other.allocate(2048);
  other.fill(bait, 0x3c);
  const baitStart = [...domain.objectTable()].find((row) => row.objectId === bait)!.start;
  const aBase = 64; // A holds the first region
  return { heap, other, bait, baitStart, aBase };
}

test('forged hash map table offset pointing into another region is refused', () => {
  const { heap, other, bait, baitStart, aBase } = forgeSetup();
  const map = DmoHashMap.create(heap, { seed: 1 });
  map.setString('k3', 'mine');
  // A fake 16-slot table in B's object whose every slot claims a fake entry for 'k3'.
  const fakeLink = 0x0000_0001;
  const entryAt = 16 * 12;
  const words = new Uint32Array(4);
  packWords(bytes('k3'), 2, words);
  const hash = hashWords(words, 2, 1);
  for (let slot = 0; slot < 16; slot++) {
    other.writeU32(bait, slot * 12, hash);
    other.writeU32(bait, slot * 12 + 4, fakeLink);
    other.writeU32(bait, slot * 12 + 8, baitStart + entryAt - aBase);
  }
  for (const [i, value] of [fakeLink, 2, 6, 6, words[0]!].entries())
    other.writeU32(bait, entryAt + 4 * i, value);
  other.write(bait, entryAt + 20, bytes('SECRET'));
  heap.writeU32(map.rootId, 6 * 4, baitStart - aBase); // root word 6: the cached table offset
  throwsCode(() => map.getStringValue('k3'), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => map.setString('k3', 'overwrite'), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});

test('forged number map table offset pointing into another region is refused', () => {
  const { heap, other, bait, baitStart, aBase } = forgeSetup();
  const map = DmoNumberMap.create(heap);
  map.set(1, 1);
  for (let slot = 0; slot < 16; slot++) {
    other.writeF64(bait, slot * 16, 7);
    other.writeF64(bait, slot * 16 + 8, 666);
    other.writeU8(bait, 16 * 16 + slot, 1);
  }
  heap.writeU32(map.rootId, 6 * 4, baitStart - aBase);
  throwsCode(() => map.get(7), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});

test('forged vector length and capacity cannot index past its data object', () => {
  const { heap, baitStart, aBase } = forgeSetup();
  const vector = DmoVector.create(heap, { element: 'f64', initialCapacity: 4 });
  vector.push(1);
  heap.writeU32(vector.rootId, 4 * 4, 1 << 24); // length
  heap.writeU32(vector.rootId, 5 * 4, 1 << 24); // capacity
  const dataStart = aBase + 1024; // roughly where A's data starts; any index into the bait will do
  const index = Math.ceil((baitStart - dataStart) / 8);
  throwsCode(() => vector.get(index), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => vector.set(index, 0), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});

test('a forged skip-list key length cannot read past its node', () => {
  const { heap } = forgeSetup();
  const list = DmoSkipList.create(heap, { seed: 2 });
  list.set(bytes('a'), bytes('1'));
  const node = [...heap.objects()].at(-1)!; // the node is allocated after its value object
  heap.writeU32(node, 0, 1 << 20); // keyLength
  throwsCode(() => list.first(), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => [...list], 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});

test('a forged log ring cannot be walked past its object', () => {
  const { heap } = forgeSetup();
  const log = DmoLog.create(heap, { initialCapacity: 2 });
  log.append(bytes('x'));
  heap.writeU32(log.rootId, 3 * 4, 1 << 20); // capacity
  heap.writeU32(log.rootId, 2 * 4, 1 << 19); // count
  throwsCode(() => log.read(1000), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
  throwsCode(() => log.append(bytes('y')), 'IPIPE_ERR_DMO_COLLECTION_FORMAT');
});
