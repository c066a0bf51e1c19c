/**
 * Region images — migration phase 3 ("Gone") as a copy of the actor's used region bytes: adopting
 * an image in another domain keeps ids, bytes, free lists, collections and statistics; chunked
 * transfer equals one-shot; damaged images are refused with no region claimed.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { regionOf } from '../../src/dmo/heap.ts';
import {
  adoptRegionImage,
  DmoDomain,
  DmoHashMap,
  type DmoHeap,
  DmoLog,
  DmoNumberMap,
  DmoSkipList,
  DmoVector,
  ImageAssembler,
  REGION_IMAGE_HEADER_BYTES,
  readRegionImageHeader,
  regionImageChunks,
  regionImageSize,
  writeRegionImage,
} from '../../src/dmo/index.ts';
import { REGION_WORD } from '../../src/dmo/layout.ts';
import type { ErrorCode } from '../../src/errors.ts';
import { actorId, type ObjectId } from '../../src/ids.ts';
import { A, B, bytes, hex, makeDomain, throwsCode } from './helpers.ts';

const REGION_BYTES = 256 * 1024;

interface Roots {
  readonly map: ObjectId;
  readonly list: ObjectId;
  readonly log: ObjectId;
  readonly vector: ObjectId;
  readonly counters: ObjectId;
}

interface Built {
  readonly heap: DmoHeap;
  readonly live: ObjectId[];
  /** Raw objects still live (not collection parts). */
  readonly raw: ObjectId[];
  readonly freed: ObjectId[];
  readonly roots: Roots;
}

// size 'max' on the arrays and the longer byte strings: fast-check's default size stops at 10
// elements whatever maxLength says, so collections never grew (a hash map doubles at 13 entries)
// and raw objects never passed 10 bytes. The property counts images of grown maps.
const keyValue = fc.tuple(fc.uint8Array({ maxLength: 10 }), fc.uint8Array({ maxLength: 40, size: 'max' }));
const planArb = fc.record({
  raw: fc.array(fc.uint8Array({ maxLength: 300, size: 'max' }), { maxLength: 30, size: 'max' }),
  freeMask: fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
  /** Allocate-and-free rounds that push slot generations forward (and wrap some past 255). */
  churn: fc.nat({ max: 300 }),
  mapEntries: fc.array(keyValue, { maxLength: 60, size: 'max' }),
  mapDeletes: fc.nat({ max: 30 }),
  listEntries: fc.array(keyValue, { maxLength: 60, size: 'max' }),
  listDeletes: fc.nat({ max: 30 }),
  records: fc.array(fc.uint8Array({ maxLength: 30, size: 'max' }), { maxLength: 40, size: 'max' }),
  truncateAt: fc.nat({ max: 40 }),
  numbers: fc.array(fc.double({ noNaN: true }), { maxLength: 50, size: 'max' }),
});

/** Whether the plan's hash map held more than 12 keys at once: its 16-slot table then doubled. */
function mapGrew(plan: Plan): boolean {
  return new Set(plan.mapEntries.map(([key]) => hex(key))).size > 12;
}

type Plan = typeof planArb extends fc.Arbitrary<infer T> ? T : never;

/** A heap with every collection kind, freed raw objects and recycled slots. */
function build(plan: Plan, heap: DmoHeap): Built {
  const raw = plan.raw.map((content) => {
    const id = heap.allocate(content.length);
    heap.write(id, 0, content);
    return id;
  });
  for (let i = 0; i < plan.churn; i++) heap.free(heap.allocate(i % 64));
  const map = DmoHashMap.create(heap);
  for (const [k, v] of plan.mapEntries) map.set(k, v);
  for (const [k] of plan.mapEntries.slice(0, plan.mapDeletes)) map.delete(k);
  const list = DmoSkipList.create(heap, { seed: 3 });
  for (const [k, v] of plan.listEntries) list.set(k, v);
  for (const [k] of plan.listEntries.slice(0, plan.listDeletes)) list.delete(k);
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
    live: [...heap.objects()],
    raw: raw.filter((id) => heap.has(id)),
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

function contents(heap: DmoHeap, roots: Roots): unknown {
  return {
    map: [...DmoHashMap.open(heap, roots.map)].map(([k, v]) => [hex(k), hex(v)]).sort(),
    list: [...DmoSkipList.open(heap, roots.list)].map(([k, v]) => [hex(k), hex(v)]),
    log: [...DmoLog.open(heap, roots.log)].map(([i, r]) => [i, hex(r)]),
    vector: DmoVector.open(heap, roots.vector).toArray(),
    counters: [...DmoNumberMap.open(heap, roots.counters)].sort((x, y) => x[0] - y[0]),
  };
}

function imageOf(heap: DmoHeap, checksum: 'crc32c' | 'none' = 'none'): Uint8Array {
  const image = new Uint8Array(regionImageSize(heap));
  assert.equal(writeRegionImage(heap, image, 0, { checksum }), image.length);
  return image;
}

/** Asserts that `adopted` is `source` moved: ids, bytes, stats, stale ids, collections. */
function assertSameHeap(adopted: DmoHeap, built: Built, expectedContents: unknown): void {
  const { heap: source, live, freed, roots } = built;
  assert.deepEqual([...adopted.objects()], live);
  for (const id of live) {
    assert.equal(adopted.sizeOf(id), source.sizeOf(id));
    assert.deepEqual(adopted.bytes(id), source.bytes(id));
  }
  for (const id of freed) {
    assert.equal(adopted.has(id), false);
    throwsCode(() => adopted.read(id, 0, 0), 'IPIPE_ERR_DMO_UNKNOWN_OBJECT');
  }
  assert.deepEqual(adopted.stats(), source.stats());
  assert.deepEqual(contents(adopted, roots), expectedContents);
}

/** Asserts that nothing of `domain` is claimed: no actors, and every region can still be created. */
function assertNothingClaimed(domain: DmoDomain): void {
  assert.deepEqual([...domain.actors()], []);
  const probes = Array.from({ length: domain.maxActors }, (_, i) => actorId(100 + i));
  for (const probe of probes) domain.createHeap(probe);
  for (const probe of probes) domain.releaseHeap(probe);
}

/** Splits `image` at random places and pushes the pieces through an assembler. */
function adoptInPieces(domain: DmoDomain, image: Uint8Array, cuts: readonly number[]): DmoHeap {
  const assembler = new ImageAssembler(domain, A);
  const points = [...new Set(cuts.map((cut) => cut % (image.length + 1)))].sort((x, y) => x - y);
  let from = 0;
  for (const point of [...points, image.length]) {
    assembler.push(image.subarray(from, point));
    from = point;
  }
  assert.equal(assembler.receivedBytes, image.length);
  assert.equal(assembler.expectedBytes, image.length);
  return assembler.finish();
}

test('property: an adopted image keeps ids, bytes, stats, stale ids and collections, in any domain view', () => {
  const numRuns = 40;
  let grownMaps = 0;
  fc.assert(
    fc.property(
      planArb,
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.integer({ min: 1, max: 5000 }),
      (plan, cuts, chunkBytes) => {
        if (mapGrew(plan)) grownMaps++;
        const built = build(plan, makeDomain({ regionBytes: REGION_BYTES }).createHeap(A));
        const expected = contents(built.heap, built.roots);
        const image = imageOf(built.heap);
        assert.equal(readRegionImageHeader(image).owner, A);

        // A plain domain whose first region is taken: the image lands at another base.
        const plain = makeDomain({ regionBytes: REGION_BYTES });
        plain.createHeap(B);
        const adopted = adoptRegionImage(plain, A, image);
        assertSameHeap(adopted, built, expected);
        assert.equal(plain.heapOf(A), adopted);

        // A shared domain, adopted through a second view of its buffer and read through the first.
        const shared = makeDomain({ regionBytes: REGION_BYTES, shared: true });
        const view = DmoDomain.attach(shared.buffer);
        adoptRegionImage(view, A, image, { exclusive: true });
        const seen = shared.heapOf(A);
        assert.ok(seen !== undefined);
        assertSameHeap(seen, built, expected);

        // Chunked transfers — random cuts, and the source's own chunk views — land byte-identical
        // to the one-shot adoption (same region index and incarnation in fresh domains).
        const oneShot = imageOf(adoptRegionImage(makeDomain({ regionBytes: REGION_BYTES }), A, image));
        const pieces = adoptInPieces(makeDomain({ regionBytes: REGION_BYTES }), image, cuts);
        assert.deepEqual(imageOf(pieces), oneShot);
        const streamed = new ImageAssembler(makeDomain({ regionBytes: REGION_BYTES }), A);
        for (const chunk of regionImageChunks(built.heap, chunkBytes)) {
          assert.ok(chunk.length >= 1 && chunk.length <= chunkBytes);
          streamed.push(chunk);
        }
        assert.deepEqual(imageOf(streamed.finish()), oneShot);

        // The adopted heap keeps working: new objects collide with no kept id, old bytes stay.
        const kept = new Set<number>([...built.live, ...built.freed]);
        for (let i = 0; i < 20; i++) {
          const id = adopted.allocate((i * 37) % 700);
          assert.ok(!kept.has(id), `fresh id ${id} collides with a kept one`);
          adopted.fill(id, 0xee);
          kept.add(id);
        }
        // (Collection roots are left out: their first use rewrote the cached layout epoch.)
        for (const id of built.raw) assert.deepEqual(adopted.bytes(id), built.heap.bytes(id));
        const map = DmoHashMap.open(adopted, built.roots.map);
        map.setString('after', 'adoption');
        assert.equal(map.getStringValue('after'), 'adoption');
        DmoLog.open(adopted, built.roots.log).append(bytes('more'));
        DmoSkipList.open(adopted, built.roots.list).set(bytes('zz'), bytes('top'));
      },
    ),
    { numRuns },
  );
  assert.ok(grownMaps >= numRuns / 4, `only ${grownMaps} of ${numRuns} images held a grown hash map`);
});

test('the image holds the used prefix and the rows, not the whole region', () => {
  const heap = makeDomain({ regionBytes: 1024 * 1024 }).createHeap(A);
  const ids = [heap.allocate(1000), heap.allocate(10), heap.allocate(5000)];
  heap.free(ids[1]!);
  const region = regionOf(heap);
  const size = regionImageSize(heap);
  assert.equal(size, REGION_IMAGE_HEADER_BYTES + region.dataTop() + region.slotCount * 16);
  assert.ok(size < 8 * 1024, `${size} bytes for ~6 KB of objects in a 1 MiB region`);
  const info = readRegionImageHeader(imageOf(heap));
  assert.deepEqual(info, {
    owner: A,
    imageBytes: size,
    sourceRegionBytes: 1024 * 1024,
    footprintBytes: size - REGION_IMAGE_HEADER_BYTES,
    slotCount: 3,
    checksummed: false,
  });
});

test('writeRegionImage writes at an offset, touches nothing else, and refuses a target too small', () => {
  const heap = makeDomain().createHeap(A);
  const id = heap.allocate(10);
  heap.write(id, 0, bytes('0123456789'));
  const size = regionImageSize(heap);
  const staging = new Uint8Array(new SharedArrayBuffer(size + 9)).fill(0xcc);
  assert.equal(writeRegionImage(heap, staging, 5), size);
  assert.equal(staging[4], 0xcc);
  assert.equal(staging[5 + size], 0xcc);
  assert.deepEqual(staging.slice(5, 5 + size), imageOf(heap));
  // An image at an unaligned offset of a shared buffer adopts like any other.
  assert.deepEqual(
    adoptRegionImage(makeDomain(), A, staging.subarray(5, 5 + size)).read(id, 0, 10),
    bytes('0123456789'),
  );
  const small = new Uint8Array(size).fill(0xcc);
  throwsCode(() => writeRegionImage(heap, small, 1), 'IPIPE_ERR_DMO_INVALID_SIZE');
  assert.ok(
    small.every((byte) => byte === 0xcc),
    'nothing written',
  );
  throwsCode(() => regionImageChunks(heap, 0), 'IPIPE_ERR_DMO_INVALID_SIZE');
  throwsCode(() => regionImageChunks(heap, 1.5), 'IPIPE_ERR_DMO_INVALID_SIZE');
});

test('chunks are views of the source memory that concatenate to the image', () => {
  const domain = makeDomain({ shared: true });
  const heap = domain.createHeap(A);
  for (let i = 0; i < 50; i++) heap.fill(heap.allocate(100 + i), i);
  for (const checksum of ['none', 'crc32c'] as const) {
    const image = imageOf(heap, checksum);
    const chunks = [...regionImageChunks(heap, 1000, { checksum })];
    const joined = new Uint8Array(image.length);
    let at = 0;
    for (const chunk of chunks) {
      joined.set(chunk, at);
      at += chunk.length;
    }
    assert.equal(at, image.length);
    assert.deepEqual(joined, image);
    assert.ok(chunks.length <= Math.ceil(image.length / 1000) + 2);
    assert.ok(
      chunks.slice(1).every((chunk) => chunk.buffer === domain.buffer),
      'no copies',
    );
  }
});

test('a released heap has no image', () => {
  const domain = makeDomain();
  const heap = domain.createHeap(A);
  domain.releaseHeap(A);
  throwsCode(() => regionImageSize(heap), 'IPIPE_ERR_ACTOR_DEREGISTERED');
  throwsCode(() => writeRegionImage(heap, new Uint8Array(1 << 16), 0), 'IPIPE_ERR_ACTOR_DEREGISTERED');
});

// ---- damaged images -----------------------------------------------------------------------------

/** Little-endian u32 at a byte offset of an image. */
function setU32(image: Uint8Array, at: number, value: number): void {
  new DataView(image.buffer, image.byteOffset).setUint32(at, value >>> 0, true);
}
function getU32(image: Uint8Array, at: number): number {
  return new DataView(image.buffer, image.byteOffset).getUint32(at, true);
}
/** Byte offset in the image of region header word `word`. */
const headerAt = (word: number) => REGION_IMAGE_HEADER_BYTES + 4 * word;
/** Byte offset in the image of word `word` of slot `slot`'s row (rows sit at the image's end). */
const rowAt = (image: Uint8Array, slot: number, word: number) => image.length - 16 * slot + 4 * word;

/** A heap with live and freed rows and a non-empty free list: slots 1, 3 live; 2, 4 free. */
function damageFixture(): { heap: DmoHeap; image: Uint8Array } {
  const heap = makeDomain().createHeap(A);
  const ids = [heap.allocate(100), heap.allocate(200), heap.allocate(300), heap.allocate(400)];
  heap.fill(ids[0]!, 7);
  heap.fill(ids[2]!, 9);
  heap.free(ids[1]!);
  heap.free(ids[3]!);
  return { heap, image: imageOf(heap, 'crc32c') };
}

const damages: ReadonlyArray<readonly [string, (image: Uint8Array) => void]> = [
  ['bad magic', (image) => setU32(image, 0, 0x12345678)],
  ['unknown version', (image) => setU32(image, 4, 2)],
  ['owner not an actor id', (image) => setU32(image, 8, 2 ** 31)],
  ['unknown flags', (image) => setU32(image, 12, 6)],
  ['image length field', (image) => setU32(image, 20, getU32(image, 20) + 16)],
  ['data top beyond the region', (image) => setU32(image, 32, 2 ** 30)],
  ['region header magic', (image) => setU32(image, headerAt(REGION_WORD.magic), 0)],
  ['region header owner tag', (image) => setU32(image, headerAt(REGION_WORD.ownerTag), 0)],
  ['region header disagrees on data top', (image) => setU32(image, headerAt(REGION_WORD.dataTop), 64)],
  ['live count', (image) => setU32(image, headerAt(REGION_WORD.liveObjects), 3)],
  ['used bytes', (image) => setU32(image, headerAt(REGION_WORD.usedBytes), 16)],
  ['free-slot head outside the table', (image) => setU32(image, headerAt(REGION_WORD.freeSlotHead), 99)],
  [
    'class list head outside the data',
    (image) => {
      // Every class head that is set: push it past the data top.
      for (let c = 0; c < 60; c++) {
        const at = headerAt(REGION_WORD.classHeads + c);
        if (getU32(image, at) !== 0) setU32(image, at, 60_000);
      }
    },
  ],
  [
    'class bitmap disagrees with the heads',
    (image) => setU32(image, headerAt(REGION_WORD.bitmap), getU32(image, headerAt(REGION_WORD.bitmap)) ^ 1),
  ],
  ['row pointing outside the region', (image) => setU32(image, rowAt(image, 1, 0), 2 ** 20)],
  ['row past the data top', (image) => setU32(image, rowAt(image, 3, 0), getU32(image, 32) - 16)],
  ['row size above its block', (image) => setU32(image, rowAt(image, 1, 1), 4096)],
  ['row with unknown flag bits', (image) => setU32(image, rowAt(image, 1, 3), 0x300)],
  ['free row with a size', (image) => setU32(image, rowAt(image, 2, 1), 8)],
  ['free-slot queue cycle', (image) => setU32(image, rowAt(image, 4, 0), 2)],
  ['free-slot queue through a live row', (image) => setU32(image, rowAt(image, 2, 0), 1)],
];

test('damaged headers and tables are refused, one-shot or chunked, with no region claimed', () => {
  const { image } = damageFixture();
  assert.equal(getU32(image, rowAt(image, 2, 0)), 4, 'fixture: free-slot queue is 2 → 4');
  for (const [name, damage] of damages) {
    const damaged = image.slice();
    damage(damaged);
    const target = makeDomain({ maxActors: 2 });
    throwsCode(() => adoptRegionImage(target, A, damaged), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT', name);
    assertNothingClaimed(target);
    throwsCode(
      () => adoptInPieces(target, damaged, [3, 64, 300, damaged.length - 5]),
      'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
      name,
    );
    assertNothingClaimed(target);
  }
  // The undamaged image still adopts into the same domain.
  adoptRegionImage(makeDomain({ maxActors: 2 }), A, image);
});

test('truncated and padded images are refused with no region claimed', () => {
  const { image } = damageFixture();
  const target = makeDomain({ maxActors: 1 });
  for (const length of [0, 10, 63, 64, 65, 400, image.length - 1]) {
    throwsCode(
      () => adoptRegionImage(target, A, image.subarray(0, length)),
      'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
    );
    const assembler = new ImageAssembler(target, A);
    assembler.push(image.subarray(0, length));
    throwsCode(() => assembler.finish(), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT', `${length} bytes`);
    assertNothingClaimed(target);
  }
  const padded = new Uint8Array(image.length + 1);
  padded.set(image);
  throwsCode(() => adoptRegionImage(target, A, padded), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT');
  const assembler = new ImageAssembler(target, A);
  assembler.push(image);
  throwsCode(() => assembler.push(new Uint8Array(1)), 'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT');
  assertNothingClaimed(target);
  assert.throws(() => assembler.finish(), /already failed/);
});

test('accept: partial until the last byte, then adopted; a damaged image fails with no region claimed', () => {
  const { image } = damageFixture();
  const target = makeDomain({ maxActors: 1 });
  const assembler = new ImageAssembler(target, A);
  const half = image.length >> 1;
  assert.deepEqual(assembler.accept([image.subarray(0, 10), image.subarray(10, half)]), { kind: 'partial' });
  assert.equal(target.heapOf(A), undefined);
  const done = assembler.accept([image.subarray(half)]);
  assert.equal(done.kind, 'adopted');
  assert.equal(target.heapOf(A), done.kind === 'adopted' ? done.heap : undefined);
  // Byte for byte what a one-shot adoption in a fresh domain makes (the same incarnation).
  const oneShot = imageOf(adoptRegionImage(makeDomain({ maxActors: 1 }), A, image));
  assert.deepEqual(imageOf(target.heapOf(A) as DmoHeap), oneShot);

  const damaged = image.slice();
  damaged[image.length - 1]! ^= 0xff;
  const fresh = makeDomain({ maxActors: 1 });
  const failing = new ImageAssembler(fresh, A, { verify: 'crc32c' });
  assert.equal(failing.accept([damaged.subarray(0, half)]).kind, 'partial');
  const failed = failing.accept([damaged.subarray(half)]);
  assert.equal(failed.kind, 'failed');
  assert.equal(
    failed.kind === 'failed' ? (failed.error as { code?: string }).code : '',
    'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
  );
  assertNothingClaimed(fresh);
});

test("verify: 'crc32c' catches any flipped byte; without it only structure is checked", () => {
  const { heap, image } = damageFixture();
  const live = [...heap.objects()];
  const dataAt =
    REGION_IMAGE_HEADER_BYTES +
    regionOf(heap).rowStart(regionOf(heap).lookup(live[0]!)) -
    regionOf(heap).base;
  const flippedData = image.slice();
  flippedData[dataAt + 5]! ^= 0x40;
  const target = makeDomain({ maxActors: 1 });
  throwsCode(
    () => adoptRegionImage(target, A, flippedData, { verify: 'crc32c' }),
    'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
  );
  assertNothingClaimed(target);
  // The default path does not read object bytes: the flip arrives as is (the transport's job).
  const unverified = adoptRegionImage(target, A, flippedData);
  assert.equal(unverified.readU8(live[0]!, 5), 7 ^ 0x40);
  target.releaseHeap(A);

  fc.assert(
    fc.property(fc.nat({ max: image.length - 1 }), fc.integer({ min: 1, max: 255 }), (position, flip) => {
      const damaged = image.slice();
      damaged[position]! ^= flip;
      throwsCode(
        () => adoptRegionImage(target, A, damaged, { verify: 'crc32c' }),
        'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
      );
      assert.deepEqual([...target.actors()], []);
    }),
    { numRuns: 300 },
  );
  // An image written without a checksum cannot be verified.
  throwsCode(
    () => adoptRegionImage(target, A, imageOf(heap), { verify: 'crc32c' }),
    'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
  );
  // Verified adoption of an intact image, one-shot and streamed.
  assert.deepEqual([...adoptRegionImage(target, A, image, { verify: 'crc32c' }).objects()], live);
  target.releaseHeap(A);
  const streamed = new ImageAssembler(target, A, { verify: 'crc32c' });
  for (const chunk of regionImageChunks(heap, 64, { checksum: 'crc32c' })) streamed.push(chunk);
  assert.deepEqual([...streamed.finish().objects()], live);
});

// ---- the target domain ---------------------------------------------------------------------------

function refusedWithCode(code: ErrorCode, target: DmoDomain, image: Uint8Array, actor = A): void {
  const before = [...target.actors()];
  throwsCode(() => adoptRegionImage(target, actor, image), code);
  assert.deepEqual([...target.actors()], before, 'nothing claimed');
}

test('a full domain, a duplicate actor, the wrong actor, a small region or another geometry are refused', () => {
  const { image } = damageFixture();
  const full = makeDomain({ maxActors: 2 });
  full.createHeap(B);
  full.createHeap(actorId(3));
  refusedWithCode('IPIPE_ERR_DMO_DOMAIN_FULL', full, image);
  const taken = makeDomain();
  taken.createHeap(A);
  refusedWithCode('IPIPE_ERR_ACTOR_DUPLICATE', taken, image);
  refusedWithCode('IPIPE_ERR_DMO_CORRUPT_SNAPSHOT', makeDomain(), image, B);
  refusedWithCode('IPIPE_ERR_CONFIG_INVALID', makeDomain({ regionBytes: 256 * 1024 }), image);

  // 60 KiB regions share 64 KiB regions' header layout, so only the fit decides.
  const big = makeDomain({ regionBytes: 64 * 1024 }).createHeap(A);
  for (let i = 0; i < 62; i++) big.allocate(1000);
  const bigImage = imageOf(big);
  refusedWithCode('IPIPE_ERR_DMO_REGION_EXHAUSTED', makeDomain({ regionBytes: 60 * 1024 }), bigImage);
  const smallImage = damageFixture().image;
  const smaller = adoptRegionImage(makeDomain({ regionBytes: 60 * 1024 }), A, smallImage);
  assert.equal(smaller.stats().regionBytes, 60 * 1024);
  assert.equal(smaller.stats().liveObjects, 2);
  smaller.allocate(50_000); // the rows moved to the new region's end: the gap between is usable
});

test('adoption continues the target region incarnations: old handles never resolve there', () => {
  const nic = makeDomain({ maxActors: 1 });
  const host = makeDomain({ maxActors: 1 });
  // Actor B used the host's only region and left; A's image lands in that region.
  const leftover = host.createHeap(B);
  const leftoverId = leftover.allocate(16);
  host.releaseHeap(B);

  let heap = nic.createHeap(A);
  const firstNicHeap = heap;
  const map = DmoHashMap.create(heap);
  for (let i = 0; i < 200; i++) map.setString(`k${i}`, `v${i}`);
  const epoch = regionOf(heap).layoutEpoch();
  for (let hop = 0; hop < 4; hop++) {
    const [from, to] = hop % 2 === 0 ? [nic, host] : [host, nic];
    const image = imageOf(heap);
    from.releaseHeap(A);
    heap = adoptRegionImage(to, A, image);
    assert.equal(regionOf(heap).layoutEpoch(), epoch + hop + 1, 'cached offsets are invalidated');
    const reopened = DmoHashMap.open(heap, map.rootId);
    reopened.setString(`hop${hop}`, 'yes');
    reopened.deleteString(`k${hop}`);
  }
  assert.equal(leftover.has(leftoverId), false);
  throwsCode(() => leftover.allocate(8), 'IPIPE_ERR_ACTOR_DEREGISTERED');
  // A is back in the NIC region it started in, in a later incarnation: the first handle is dead.
  assert.equal(firstNicHeap.has(map.rootId), false);
  throwsCode(() => firstNicHeap.readU32(map.rootId, 0), 'IPIPE_ERR_DMO_UNKNOWN_OBJECT');
  const final = DmoHashMap.open(heap, map.rootId);
  assert.equal(final.size, 200);
  assert.equal(final.getStringValue('hop3'), 'yes');
  assert.equal(final.getStringValue('k2'), undefined);
  assert.equal(final.getStringValue('k150'), 'v150');
});

test('an assembler in flight reserves its region invisibly; abort and failure give it back', () => {
  const { image } = damageFixture();
  const domain = makeDomain({ maxActors: 2, shared: true });
  const other = DmoDomain.attach(domain.buffer);
  const assembler = new ImageAssembler(domain, A, { exclusive: true });
  assert.equal(assembler.expectedBytes, undefined);
  assembler.push(image.subarray(0, 100));
  assert.equal(assembler.expectedBytes, image.length);
  assert.deepEqual([...other.actors()], []);
  assert.equal(other.heapOf(A), undefined);
  other.createHeap(B); // takes the other region
  throwsCode(() => other.createHeap(actorId(3)), 'IPIPE_ERR_DMO_DOMAIN_FULL');
  throwsCode(() => new ImageAssembler(other, A).push(image), 'IPIPE_ERR_DMO_DOMAIN_FULL');
  assembler.abort();
  assembler.abort();
  assert.throws(() => assembler.push(image), /already failed/);
  other.createHeap(actorId(3)); // the region is free again
  other.releaseHeap(actorId(3));
});

test('two transfers of one actor: the second to finish is refused and frees its region', () => {
  const { heap, image } = damageFixture();
  const domain = makeDomain({ maxActors: 3, shared: true });
  const other = DmoDomain.attach(domain.buffer);
  const first = new ImageAssembler(domain, A, { exclusive: true });
  const second = new ImageAssembler(other, A);
  first.push(image.subarray(0, 64));
  second.push(image.subarray(0, 200));
  first.push(image.subarray(64));
  second.push(image.subarray(200));
  const adopted = first.finish();
  throwsCode(() => second.finish(), 'IPIPE_ERR_ACTOR_DUPLICATE');
  assert.throws(() => first.finish(), /already finished/);
  assert.deepEqual([...adopted.objects()], [...heap.objects()]);
  assert.deepEqual([...other.actors()], [A]);
  assert.equal(other.heapOf(A)?.stats().liveObjects, 2);
  other.createHeap(B);
  other.createHeap(actorId(3)); // the second transfer's region is free again
  const words = new Uint32Array(domain.buffer);
  assert.equal(words[(64 >>> 2) + REGION_WORD.flags], 1, 'flags come from the adoption options');
  assert.equal(words[(64 >>> 2) + REGION_WORD.lock], 0);
});
