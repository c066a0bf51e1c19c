/**
 * The ring's word checksum (src/platform/live/channel/word-checksum.ts): any damage confined to
 * one 32-bit word of a record — any bit pattern, including in a 1–3 byte tail — and any change of
 * the length are always caught; it is deterministic and independent of the bytes outside the record.
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
      fc.uint8Array({ minLength: 1, maxLength: 300 }),
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
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 2, maxLength: 200 }),
      fc.uint8Array({ minLength: 4, maxLength: 4 }),
      (payload, junk) => {
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
});

test('deterministic, and the empty record has a fixed value', () => {
  const a = record(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), 0);
  assert.equal(ringChecksum(a.words, a.bytes, 0, 9), ringChecksum(a.words, a.bytes, 0, 9));
  const empty = record(new Uint8Array(0), 0);
  assert.equal(ringChecksum(empty.words, empty.bytes, 0, 0), ringChecksum(a.words, a.bytes, 0, 0));
});
