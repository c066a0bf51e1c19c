/**
 * The SSTable Bloom filter: never a false negative; a false-positive rate near the documented
 * (1 − e^(−k/b))^k for several bits-per-key settings; 0 bits per key means no filter.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BloomBuilder, BloomFilter, bloomHash } from '../../../../src/apps/rkv/lsm/bloom.ts';
import { bloomFalsePositiveRate, bloomProbes } from '../../../../src/apps/rkv/lsm/index.ts';
import { hex } from './helpers.ts';

function build(keys: readonly Uint8Array[], bitsPerKey: number): BloomFilter {
  const builder = new BloomBuilder(bitsPerKey);
  for (const key of keys) builder.add(key);
  return new BloomFilter(builder.finish());
}

test('no false negatives: every added key may be contained', () => {
  let fullFilters = 0;
  fc.assert(
    fc.property(
      // size 'max': fast-check's default size stops 10 past minLength, keys at 10 bytes and
      // filters at 11 keys, where few probes land on bits another key set.
      fc.array(fc.uint8Array({ maxLength: 24, size: 'max' }), { minLength: 1, maxLength: 300, size: 'max' }),
      fc.integer({ min: 1, max: 20 }),
      (keys, bitsPerKey) => {
        if (keys.length >= 100) fullFilters++;
        const filter = build(keys, bitsPerKey);
        const hash = { h1: 0, h2: 0 };
        for (const key of keys) assert.ok(filter.mayContain(bloomHash(key, hash)), `lost ${hex(key)}`);
      },
    ),
    { numRuns: 150 },
  );
  assert.ok(fullFilters >= 50, `only ${fullFilters} of 150 filters held 100 keys or more`);
});

test('documented rates: 10 bits/key → 7 probes, ≈0.82 %', () => {
  assert.equal(bloomProbes(10), 7);
  assert.ok(Math.abs(bloomFalsePositiveRate(10) - 0.0082) < 0.0005);
  assert.equal(bloomProbes(0), 0);
  assert.equal(bloomFalsePositiveRate(0), 1);
});

test('measured false-positive rate stays within 1.5× of the formula (20k keys, 100k probes)', () => {
  const keys: Uint8Array[] = [];
  for (let i = 0; i < 20_000; i++) keys.push(new TextEncoder().encode(`user:${i.toString(36)}:present`));
  const hash = { h1: 0, h2: 0 };
  for (const bitsPerKey of [6, 10, 16]) {
    const filter = build(keys, bitsPerKey);
    let falsePositives = 0;
    const probes = 100_000;
    for (let i = 0; i < probes; i++) {
      if (filter.mayContain(bloomHash(new TextEncoder().encode(`user:${i.toString(36)}:absent`), hash)))
        falsePositives++;
    }
    const measured = falsePositives / probes;
    const expected = bloomFalsePositiveRate(bitsPerKey);
    assert.ok(
      measured <= expected * 1.5 + 0.0002,
      `${bitsPerKey} bits/key: measured ${(measured * 100).toFixed(3)} %, formula ${(expected * 100).toFixed(3)} %`,
    );
    // A filter that said "maybe" to everything would pass the bound above only at rate 1.
    assert.ok(measured < 0.1);
  }
});

test('0 bits per key builds a filter that rules nothing out', () => {
  const filter = build([new Uint8Array([1])], 0);
  assert.ok(filter.mayContain(bloomHash(new Uint8Array([2]), { h1: 0, h2: 0 })));
});
