/** The allocator's size classes: every request fits its class, and classes are tight. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { classCeil, classFloor, classSize, MAX_CLASS_COUNT } from '../../src/dmo/size-classes.ts';

test('classCeil gives the smallest class that holds the request', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 0xf000_0000 }), (sizeBytes) => {
      const index = classCeil(sizeBytes);
      assert.ok(classSize(index) >= sizeBytes);
      if (index > 0) assert.ok(classSize(index - 1) < sizeBytes);
      assert.ok(index < MAX_CLASS_COUNT);
    }),
    { numRuns: 2000 },
  );
});

test('internal fragmentation stays below 16 bytes up to 512 and below 25 % above', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1 << 30 }), (sizeBytes) => {
      const waste = classSize(classCeil(sizeBytes)) - sizeBytes;
      if (sizeBytes <= 512) assert.ok(waste < 16);
      else assert.ok(waste < sizeBytes / 4, `${sizeBytes} wastes ${waste}`);
    }),
    { numRuns: 2000 },
  );
});

test('classFloor files a block under the largest class it can serve', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1 << 26 }), (units) => {
      const blockBytes = units * 16;
      const index = classFloor(blockBytes);
      assert.ok(classSize(index) <= blockBytes);
      assert.ok(classSize(index + 1) > blockBytes);
    }),
    { numRuns: 2000 },
  );
});

test('class sizes are multiples of 16 and strictly increasing', () => {
  for (let index = 0; index < 124; index++) {
    assert.equal(classSize(index) % 16, 0);
    assert.ok(classSize(index + 1) > classSize(index));
  }
  assert.equal(classCeil(0), 0);
  assert.equal(classSize(0), 16);
  assert.equal(classSize(classCeil(513)), 640);
});
