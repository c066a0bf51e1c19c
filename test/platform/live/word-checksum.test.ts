/**
 * The ring's word checksum (src/platform/live/channel/word-checksum.ts): any damage confined to
 * one 32-bit word of a record — any bit pattern, including in a 1–3 byte tail — and any change of
 * the length are always caught; it is deterministic and independent of the bytes outside the record;
 * the unrolled loops compute exactly the hash the header of word-checksum.ts defines (a one-word-at-a-
 * time reference below); two flips of the same bit in two words of one lane — which a multiply
 * alone would let cancel — are caught, and so is the same damage in two lanes of an all-equal record
 * (which equal lane seeds XORed without their rotations would let cancel).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ringChecksum } from '../../../src/platform/live/channel/word-checksum.ts';

function record(bytes: Uint8Array, offsetWords: number) {
  const memory = new Int32Array(offsetWords + Math.ceil(bytes.length / 4) + 2);
  const view = new Uint8Array(memory.buffer);
  view.set(bytes, offsetWords * 4);
  return { words: memory, bytes: view, start: offsetWords * 4 };
}

test('damage confined to one word is always caught (property)', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 1, maxLength: 300, size: 'max' }),
      fc.nat(),
      fc.integer({ min: 1, max: 0xffff_ffff }),
      fc.nat({ max: 3 }),
      (payload, wordPick, mask, offsetWords) => {
        const a = record(payload, offsetWords);
        const before = ringChecksum(a.words, a.bytes, a.start, payload.length);
        const wordsInRecord = Math.ceil(payload.length / 4);
        const word = wordPick % wordsInRecord;
        // Flip bits only inside the record (a tail word has fewer than 4 record bytes).
        const recordBytesInWord = Math.min(4, payload.length - word * 4);
        const usable = recordBytesInWord === 4 ? mask : mask & (2 ** (8 * recordBytesInWord) - 1);
        fc.pre(usable !== 0);
        const b = record(payload, offsetWords);
        const at = offsetWords + word;
        b.words[at] = ((b.words[at] as number) ^ usable) | 0;
        assert.notEqual(ringChecksum(b.words, b.bytes, b.start, payload.length), before);
      },
    ),
    { numRuns: 3_000 },
  );
});

test('a different length never checks out, and bytes past the record do not matter', () => {
  let blockRuns = 0; // records of 128+ bytes: all eight accumulators and the 128-byte block loop
  fc.assert(
    fc.property(
      // size 'max': the default size stops 10 bytes past minLength, and below 16 bytes the
      // checksum uses none of its accumulators.
      fc.uint8Array({ minLength: 2, maxLength: 200, size: 'max' }),
      fc.uint8Array({ minLength: 4, maxLength: 4 }),
      (payload, junk) => {
        if (payload.length >= 128) blockRuns++;
        const a = record(payload, 1);
        const sealed = ringChecksum(a.words, a.bytes, a.start, payload.length);
        assert.notEqual(ringChecksum(a.words, a.bytes, a.start, payload.length - 1), sealed);
        // Padding bytes after the record (the ring pads records to 8 bytes) are not sealed.
        a.bytes.set(
          junk.subarray(0, Math.min(4, a.bytes.length - a.start - payload.length)),
          a.start + payload.length,
        );
        assert.equal(ringChecksum(a.words, a.bytes, a.start, payload.length), sealed);
      },
    ),
    { numRuns: 1_000 },
  );
  assert.ok(blockRuns >= 100, `only ${blockRuns} of 1000 records reached 128 bytes`);
});

test('deterministic, and the empty record has a fixed value', () => {
  const a = record(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), 0);
  assert.equal(ringChecksum(a.words, a.bytes, 0, 9), ringChecksum(a.words, a.bytes, 0, 9));
  const empty = record(new Uint8Array(0), 0);
  assert.equal(ringChecksum(empty.words, empty.bytes, 0, 0), ringChecksum(a.words, a.bytes, 0, 0));
});

/**
 * The hash as word-checksum.ts's header defines it, one word at a time, written from the header
 * alone (its own constants, seeds and rotations): which lane each word goes to, the step, the roots,
 * the finish.
 */
function referenceChecksum(payload: Uint8Array): number {
  const K1 = 0x9e3779b1 | 0;
  const K2 = 0x85ebca77 | 0;
  const K3 = 0xc2b2ae3d | 0;
  const K4 = 0x27d4eb2f | 0;
  const fmix = (h: number): number => {
    let x = Math.imul(h ^ (h >>> 16), K2);
    x = Math.imul(x ^ (x >>> 13), K3);
    return x ^ (x >>> 16);
  };
  const multipliers = [K1, K2, K3, K4];
  const lanes = Array.from({ length: 32 }, (_, lane) => fmix(Math.imul(lane + 1, K1) ^ K3));
  const step = (h: number, word: number, multiplier: number): number => {
    const x = h ^ word;
    return Math.imul(x ^ (x >>> 15), multiplier);
  };
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const length = payload.length;
  // Which lane word i goes to: 128-byte blocks, then a 64-, a 32- and a 16-byte part, each word j
  // of a block or part to lane j; the words after the last whole 16 bytes to the scalar lane.
  const laneOf: number[] = [];
  for (let block = 0; block < length >> 7; block++) for (let j = 0; j < 32; j++) laneOf.push(j);
  for (const partBytes of [64, 32, 16]) {
    if ((length & partBytes) !== 0) for (let j = 0; j < partBytes / 4; j++) laneOf.push(j);
  }
  let scalar = Math.imul(length ^ K4, K2);
  for (let i = 0; i < length >> 2; i++) {
    const word = view.getInt32(i * 4, true);
    const lane = laneOf[i];
    if (lane === undefined) scalar = step(scalar, word, K2);
    else lanes[lane] = step(lanes[lane]!, word, multipliers[lane & 3]!);
  }
  if ((length & 3) !== 0) {
    let tail = 0;
    for (let at = length & ~3, shift = 0; at < length; at++, shift += 8) tail |= payload[at]! << shift;
    scalar = step(scalar, tail, K2);
  }
  const rotateLeft = (x: number, bits: number): number => (x << bits) | (x >>> (32 - bits));
  let h = fmix(scalar);
  for (let p = 0; p < 4; p++) {
    let root = 0;
    for (let accumulator = 0; accumulator < 8; accumulator++) {
      root ^= rotateLeft(lanes[accumulator * 4 + p]!, 3 * accumulator);
    }
    h ^= fmix(root);
  }
  h = Math.imul(h ^ (h >>> 16), K1);
  return (h ^ (h >>> 15)) | 0;
}

test('the unrolled loops compute the reference hash at every length 0..400 and at random lengths (seeded)', () => {
  const seed = 0x5eed_0c5;
  console.log(`word-checksum reference: fast-check seed ${seed}`);
  for (let length = 0; length <= 400; length++) {
    const payload = new Uint8Array(length);
    for (let i = 0; i < length; i++) payload[i] = (i * 131 + length * 7 + 3) & 0xff;
    const a = record(payload, length & 3);
    assert.equal(
      ringChecksum(a.words, a.bytes, a.start, length),
      referenceChecksum(payload),
      `length ${length}`,
    );
  }
  fc.assert(
    fc.property(
      // size 'max': by default fast-check keeps arrays to a few bytes, never reaching the unrolled loop.
      fc.uint8Array({ minLength: 0, maxLength: 4096, size: 'max' }),
      fc.nat({ max: 3 }),
      (payload, offsetWords) => {
        const a = record(payload, offsetWords);
        assert.equal(ringChecksum(a.words, a.bytes, a.start, payload.length), referenceChecksum(payload));
      },
    ),
    { numRuns: 300, seed },
  );
});

test('the same bit flipped in two words of one lane is caught (the xor-shift keeps it from cancelling)', () => {
  // Without the xor-shift a difference only moves towards the high bits: bit 31 flipped in words i
  // and i + 32 (same lane, next block) would cancel exactly. Every bit position, several lanes
  // (both halves of the accumulators), several distances — all multiples of 32 words: the same lane.
  const payload = new Uint8Array(1024);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 29 + 11) & 0xff;
  const sealed = (() => {
    const a = record(payload, 0);
    return ringChecksum(a.words, a.bytes, a.start, payload.length);
  })();
  let checked = 0;
  for (let bit = 0; bit < 32; bit++) {
    for (const first of [0, 1, 2, 3, 17, 31, 37, 100, 123]) {
      for (const distance of [32, 64, 96, 128]) {
        const second = first + distance;
        const b = record(payload, 0);
        b.words[first] = ((b.words[first] as number) ^ (1 << bit)) | 0;
        b.words[second] = ((b.words[second] as number) ^ (1 << bit)) | 0;
        assert.notEqual(
          ringChecksum(b.words, b.bytes, b.start, payload.length),
          sealed,
          `bit ${bit} in words ${first} and ${second}`,
        );
        checked++;
      }
    }
  }
  assert.equal(checked, 32 * 9 * 4);
});

test('the same damage in two lanes of a uniform record is caught (distinct seeds, distinct rotations)', () => {
  // All-zero and all-ones records: were the lanes seeded alike and XORed into their root unrotated,
  // words j and k in the same position of two accumulators would hold equal states, take equal
  // damage, and cancel. Either guard alone (distinct seeds; a rotation per accumulator) is enough.
  for (const fill of [0x00, 0xff]) {
    const payload = new Uint8Array(1024).fill(fill);
    const sealed = (() => {
      const a = record(payload, 0);
      return ringChecksum(a.words, a.bytes, a.start, payload.length);
    })();
    for (let bit = 0; bit < 32; bit++) {
      for (const [first, second] of [
        [0, 4],
        [1, 29],
        [2, 18],
        [3, 35],
        [0, 16],
      ] as const) {
        const b = record(payload, 0);
        b.words[first] = ((b.words[first] as number) ^ (1 << bit)) | 0;
        b.words[second] = ((b.words[second] as number) ^ (1 << bit)) | 0;
        assert.notEqual(
          ringChecksum(b.words, b.bytes, b.start, payload.length),
          sealed,
          `fill ${fill}, bit ${bit} in words ${first} and ${second}`,
        );
      }
    }
  }
});

/** `ringChecksum` of bytes 0..36: a change of the hash must come with a new ring LAYOUT_VERSION. */
const PINNED_SEAL_37 = 0x6063605a;

test('a sealed record has a fixed value (ring layout version 3: change it only with LAYOUT_VERSION)', () => {
  const payload = new Uint8Array(37);
  for (let i = 0; i < payload.length; i++) payload[i] = i;
  const a = record(payload, 0);
  assert.equal(ringChecksum(a.words, a.bytes, 0, 37) >>> 0, PINNED_SEAL_37);
});
