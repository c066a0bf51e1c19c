/**
 * The ring's word-wise CRC-32C is the same function as the DMO snapshot checksum (src/dmo/crc32c.ts)
 * at every aligned start, length and continued register — so the ring and the TCP framing (which
 * uses the byte-wise one) put the same checksum on the same message.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../../src/dmo/crc32c.ts';
import { crc32cWords } from '../../../src/platform/live/channel/crc32c-words.ts';
import { frameChecksum } from '../../../src/platform/live/channel/tcp-framing.ts';

test('crc32cWords agrees with crc32c for every aligned start, length and register (property)', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 0, maxLength: 600, size: 'max' }),
      fc.integer({ min: 0, max: 15 }),
      fc.integer({ min: 0, max: 0xffffffff }),
      (payload, startWords, register) => {
        const start = startWords * 4;
        const buffer = new ArrayBuffer((start + payload.length + 11) & ~3); // Int32Array needs whole words
        const bytes = new Uint8Array(buffer);
        bytes.set(payload, start);
        const expected = crc32c(bytes, start, start + payload.length, register);
        assert.equal(crc32cWords(new Int32Array(buffer), bytes, start, payload.length, register), expected);
      },
    ),
    { numRuns: 500 },
  );
});

test('known answer: CRC-32C("123456789") = 0xE3069283; the frame checksum continues from the length', () => {
  const digits = new TextEncoder().encode('123456789');
  const buffer = new ArrayBuffer(16);
  new Uint8Array(buffer).set(digits);
  assert.equal(crc32cWords(new Int32Array(buffer), new Uint8Array(buffer), 0, 9, 0), 0xe3069283);
  assert.equal(frameChecksum(digits), crc32c(digits, 0, 9, 9));
  assert.notEqual(frameChecksum(digits), 0xe3069283, 'seeded with the length, so a length change shows');
});
