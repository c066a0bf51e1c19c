import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Origin } from '../../src/actor/envelope.ts';
import { actorId } from '../../src/ids.ts';
import { encodeOrigin, MAX_ORIGIN_DEPTH, originSize, readOrigin } from '../../src/runtime/origin-codec.ts';

const leaf: fc.Arbitrary<Origin> = fc.oneof(
  fc.constant<Origin>({ kind: 'none' }),
  fc.record(
    {
      kind: fc.constant('client' as const),
      endpoint: fc.record(
        { address: fc.string({ maxLength: 40 }), port: fc.integer({ min: 0, max: 65_535 }) },
        { noNullPrototype: true },
      ),
      requestId: fc.nat({ max: 0xffff_ffff }),
    },
    { noNullPrototype: true },
  ),
);
const origin: fc.Arbitrary<Origin> = fc.letrec<{ origin: Origin }>((tie) => ({
  origin: fc.oneof(
    { maxDepth: 6 },
    leaf,
    fc.record(
      {
        kind: fc.constant('actor' as const),
        actor: fc.integer({ min: 0, max: 2 ** 21 - 1 }).map(actorId),
        requestId: fc.nat({ max: 0xffff_ffff }),
        parent: tie('origin'),
      },
      { noNullPrototype: true },
    ),
  ),
})).origin;

test('origins round-trip through their binary form, at their stated size', () => {
  fc.assert(
    fc.property(origin, (value) => {
      const bytes = encodeOrigin(value);
      assert.equal(bytes.length, originSize(value));
      const decoded = readOrigin(bytes, 0);
      assert.deepEqual(decoded?.origin, value);
      assert.equal(decoded?.next, bytes.length);
    }),
  );
});

test('decoding hostile bytes never throws and refuses truncations', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => void readOrigin(bytes, 0)));
  const bytes = encodeOrigin({ kind: 'client', endpoint: { address: '10.0.0.1', port: 9 }, requestId: 7 });
  for (let cut = 0; cut < bytes.length; cut++) assert.equal(readOrigin(bytes.subarray(0, cut), 0), undefined);
});

test('chains deeper than the limit are refused both ways', () => {
  let deep: Origin = { kind: 'none' };
  for (let i = 0; i <= MAX_ORIGIN_DEPTH + 1; i++)
    deep = { kind: 'actor', actor: actorId(1), requestId: i, parent: deep };
  assert.throws(() => encodeOrigin(deep));
});

test('a limit inside a larger buffer is honoured like the end of the buffer (a record inside a ring)', () => {
  fc.assert(
    fc.property(origin, fc.uint8Array({ minLength: 1, maxLength: 32 }), (value, after) => {
      const encoded = encodeOrigin(value);
      const buffer = new Uint8Array(encoded.length + after.length);
      buffer.set(encoded);
      buffer.set(after, encoded.length);
      assert.deepEqual(readOrigin(buffer, 0, 0, encoded.length)?.origin, value);
      // Cut anywhere inside the origin: refused, although the bytes after the cut are still there.
      for (let cut = 0; cut < encoded.length; cut++) assert.equal(readOrigin(buffer, 0, 0, cut), undefined);
    }),
  );
});

test('an address decoded once and then seen again with other bytes is decoded again, not served from the cache', () => {
  const first = encodeOrigin({ kind: 'client', endpoint: { address: '10.0.0.1', port: 9 }, requestId: 1 });
  const second = encodeOrigin({ kind: 'client', endpoint: { address: '10.0.0.2', port: 9 }, requestId: 2 });
  const bad = first.slice();
  bad[2 + 3] = 0xff; // an invalid UTF-8 byte inside the address: refused, and the cache must not keep it
  assert.equal(readOrigin(bad, 0), undefined);
  for (const [bytes, address] of [
    [first, '10.0.0.1'],
    [second, '10.0.0.2'],
    [first, '10.0.0.1'],
  ] as const) {
    const read = readOrigin(bytes, 0)?.origin;
    assert.equal(read?.kind === 'client' ? read.endpoint.address : undefined, address);
  }
});
