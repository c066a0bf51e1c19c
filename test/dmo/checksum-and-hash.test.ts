/** CRC-32C and xxHash32 against published vectors; word-packed hashing equals byte hashing. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../src/dmo/crc32c.ts';
import {
  compareBytes,
  copyBytesToWords,
  copyWordsToBytes,
  hashBytes,
  hashWords,
  hashWords16,
  packWords,
} from '../../src/dmo/hash.ts';
import { bytes, compareKeys } from './helpers.ts';

test('CRC-32C matches the standard check value and streams across pieces', () => {
  assert.equal(crc32c(bytes('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43); // RFC 3720 B.4: 32 bytes of 0xff
  // size 'max' in this file's byte arrays: fast-check's default size stops at 10 bytes whatever
  // maxLength says, which is one 8-byte slice at most here and no xxHash32 stripe at all below.
  let longest = 0;
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 100, size: 'max' }), fc.nat(), (data, cut) => {
      longest = Math.max(longest, data.length);
      const at = data.length === 0 ? 0 : cut % data.length;
      assert.equal(crc32c(data, at, data.length, crc32c(data, 0, at)), crc32c(data));
    }),
  );
  assert.ok(longest >= 50, `the longest input was ${longest} bytes`);
});

test('xxHash32 matches reference vectors', () => {
  assert.equal(hashBytes(new Uint8Array(0), 0, 0, 0), 0x02cc5d05);
  assert.equal(hashBytes(bytes('abc'), 0, 3, 0), 0x32d153ff);
  const long = bytes('Nobody inspects the spammish repetition');
  assert.equal(hashBytes(long, 0, long.length, 0), 0xe2293b2f);
});

test('hashWords over packed words equals hashBytes over the bytes, for every length and seed', () => {
  const numRuns = 500;
  let striped = 0; // runs long enough for the 16-byte stripe loop (length ≥ 16)
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 70, size: 'max' }), fc.nat({ max: 0xffff_ffff }), (data, seed) => {
      if (data.length >= 16) striped++;
      const words = new Uint32Array(Math.ceil(data.length / 4) + 1).fill(0xdeadbeef);
      packWords(data, data.length, words);
      assert.equal(hashWords(words, data.length, seed), hashBytes(data, 0, data.length, seed));
      // The hash map keeps its seed as the int32 with the same bits: the hash must not change.
      assert.equal(hashWords(words, data.length, seed | 0), hashBytes(data, 0, data.length, seed));
    }),
    { numRuns },
  );
  assert.ok(striped >= numRuns / 2, `only ${striped} of ${numRuns} inputs reached 16 bytes`);
});

test('hashWords16 (the unrolled 16-byte case) equals hashBytes, for a seed given as u32 or as int32', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 16, maxLength: 16 }),
      fc.nat({ max: 0xffff_ffff }),
      (data, seed) => {
        const words = new Uint32Array(4);
        packWords(data, 16, words);
        const expected = hashBytes(data, 0, 16, seed);
        assert.equal(hashWords16(words[0]!, words[1]!, words[2]!, words[3]!, seed), expected);
        // The hash map keeps its seed and the key words as int32 (the same bits).
        assert.equal(
          hashWords16(words[0]! | 0, words[1]! | 0, words[2]! | 0, words[3]! | 0, seed | 0),
          expected,
        );
      },
    ),
    { numRuns: 500 },
  );
  // A reference vector: xxHash32 of the 16 ASCII bytes below under seed 0.
  const sixteen = bytes('0123456789abcdef');
  const words = new Uint32Array(4);
  packWords(sixteen, 16, words);
  assert.equal(hashWords16(words[0]!, words[1]!, words[2]!, words[3]!, 0), hashBytes(sixteen, 0, 16, 0));
});

test('copyBytesToWords / copyWordsToBytes round-trip any length and write nothing outside the range', () => {
  let longest = 0;
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 41, size: 'max' }), fc.nat({ max: 7 }), (data, targetOffset) => {
      longest = Math.max(longest, data.length);
      const u32 = new Uint32Array(16).fill(0xa5a5_a5a5);
      const u8 = new Uint8Array(u32.buffer);
      copyBytesToWords(data, data.length, u8, u32, 2);
      assert.deepEqual(u8.subarray(8, 8 + data.length), data);
      assert.ok(
        u8.subarray(0, 8).every((byte) => byte === 0xa5),
        'wrote before the range',
      );
      assert.ok(
        u8.subarray(8 + data.length).every((byte) => byte === 0xa5),
        'wrote past the range',
      );
      const target = new Uint8Array(targetOffset + data.length + 3).fill(0x5a);
      copyWordsToBytes(u32, 2, data.length, target, targetOffset);
      assert.deepEqual(target.subarray(targetOffset, targetOffset + data.length), data);
      assert.ok(
        target.subarray(0, targetOffset).every((byte) => byte === 0x5a),
        'wrote before the target range',
      );
      assert.ok(
        target.subarray(targetOffset + data.length).every((byte) => byte === 0x5a),
        'wrote past the target range',
      );
    }),
    { numRuns: 300 },
  );
  assert.ok(longest >= 32, `the longest input was ${longest} bytes`);
});

test('compareBytes orders like unsigned lexicographic comparison', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 6 }), fc.uint8Array({ maxLength: 6 }), (a, b) => {
      const memory = new Uint8Array(10 + b.length);
      memory.set(b, 10);
      assert.equal(Math.sign(compareBytes(a, memory, 10, b.length)), Math.sign(compareKeys(a, b)));
    }),
    { numRuns: 500 },
  );
});
