/** CRC-32C and xxHash32 against published vectors; word-packed hashing equals byte hashing. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../src/dmo/crc32c.ts';
import { compareBytes, hashBytes, hashWords, packWords } from '../../src/dmo/hash.ts';
import { bytes, compareKeys } from './helpers.ts';

test('CRC-32C matches the standard check value and streams across pieces', () => {
  assert.equal(crc32c(bytes('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43); // RFC 3720 B.4: 32 bytes of 0xff
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(), (data, cut) => {
      const at = data.length === 0 ? 0 : cut % data.length;
      assert.equal(crc32c(data, at, data.length, crc32c(data, 0, at)), crc32c(data));
    }),
  );
});

test('xxHash32 matches reference vectors', () => {
  assert.equal(hashBytes(new Uint8Array(0), 0, 0, 0), 0x02cc5d05);
  assert.equal(hashBytes(bytes('abc'), 0, 3, 0), 0x32d153ff);
  const long = bytes('Nobody inspects the spammish repetition');
  assert.equal(hashBytes(long, 0, long.length, 0), 0xe2293b2f);
});

test('hashWords over packed words equals hashBytes over the bytes, for every length and seed', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 70 }), fc.nat({ max: 0xffff_ffff }), (data, seed) => {
      const words = new Uint32Array(Math.ceil(data.length / 4) + 1).fill(0xdeadbeef);
      packWords(data, data.length, words);
      assert.equal(hashWords(words, data.length, seed), hashBytes(data, 0, data.length, seed));
    }),
    { numRuns: 500 },
  );
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
