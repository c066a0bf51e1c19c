/**
 * The codec's core promise: what encode writes, decode reads back unchanged; sizeOf is exact;
 * encodeInto writes the same bytes into a caller's buffer; the wire form is the documented one.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { field, type MessageOf, messages } from '../../src/actor/index.ts';
import { actorId } from '../../src/ids.ts';
import { rich, richMessage } from './codec-fixtures.ts';

describe('codec round trip', () => {
  it('decode(encode(m)) equals m for arbitrary messages of every field kind', () => {
    // The codec switches paths above 48 UTF-16 units of string and 64 bytes of a bytes field
    // (codec-text.ts): count the messages that take the long ones.
    let longStrings = 0;
    let longBytes = 0;
    fc.assert(
      fc.property(richMessage, (message) => {
        assert.deepStrictEqual(rich.decode(rich.encode(message)), message);
        if (message.type === 'text') {
          if (message.s.length > 48) longStrings++;
          if (message.raw.length > 64) longBytes++;
        }
      }),
      { numRuns: 2000 },
    );
    assert.ok(longStrings >= 20, `only ${longStrings} messages had a string over 48 units`);
    assert.ok(longBytes >= 20, `only ${longBytes} messages had a bytes field over 64 bytes`);
  });

  it('sizeOf(m) equals encode(m).length', () => {
    fc.assert(
      fc.property(richMessage, (message) => {
        assert.equal(rich.sizeOf(message), rich.encode(message).length);
      }),
      { numRuns: 1000 },
    );
  });

  it('encodeInto writes the same bytes at an offset and returns their count, leaving the rest alone', () => {
    fc.assert(
      fc.property(richMessage, fc.nat({ max: 16 }), fc.nat({ max: 16 }), (message, offset, slack) => {
        const expected = rich.encode(message);
        const target = new Uint8Array(offset + expected.length + slack).fill(0xee);
        const written = rich.encodeInto(message, target, offset);
        assert.equal(written, expected.length);
        assert.deepStrictEqual(target.subarray(offset, offset + written), expected);
        assert.ok(target.subarray(0, offset).every((b) => b === 0xee));
        assert.ok(target.subarray(offset + written).every((b) => b === 0xee));
      }),
      { numRuns: 500 },
    );
  });

  it('decodes a message inside a larger buffer through offset and length', () => {
    fc.assert(
      fc.property(richMessage, richMessage, (first, second) => {
        const a = rich.encode(first);
        const b = rich.encode(second);
        const joined = new Uint8Array(a.length + b.length);
        joined.set(a, 0);
        joined.set(b, a.length);
        assert.deepStrictEqual(rich.decode(joined, 0, a.length), first);
        assert.deepStrictEqual(rich.decode(joined, a.length, b.length), second);
        assert.deepStrictEqual(rich.decode(joined, a.length), second); // length defaults to the rest
      }),
      { numRuns: 300 },
    );
  });

  it('tryDecode returns ok with the same message as decode', () => {
    fc.assert(
      fc.property(richMessage, (message) => {
        const result = rich.tryDecode(rich.encode(message));
        assert.ok(result.ok);
        assert.deepStrictEqual(result.message, message);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps NaN, -0, infinities and extreme integers exactly', () => {
    for (const e of [Number.NaN, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MIN_VALUE]) {
      const message = {
        type: 'scalars' as const,
        a: 255,
        b: 65_535,
        c: 0xffff_ffff,
        d: -(2 ** 31),
        e,
        f: 2n ** 64n - 1n,
        g: -(2n ** 63n),
        h: true,
      };
      const decoded = rich.decode(rich.encode(message));
      assert.ok(decoded.type === 'scalars');
      assert.ok(Object.is(decoded.e, e), `f64 ${e} survived`);
      assert.deepStrictEqual(decoded, message);
    }
  });

  it('keeps a leading U+FEFF, astral characters and long non-ASCII strings', () => {
    for (const s of ['\uFEFFbom', '😀 astral 𝄞', 'é'.repeat(100), `${'a'.repeat(60)}ß`, '']) {
      const message = {
        type: 'text' as const,
        s,
        limited: 'x',
        raw: new Uint8Array(),
        small: new Uint8Array(),
      };
      assert.deepStrictEqual(rich.decode(rich.encode(message)), message);
    }
  });

  it('decodes bytes fields as copies, as plain Uint8Arrays even from a Buffer', () => {
    const raw = new Uint8Array(100).map((_, i) => i);
    const encoded = rich.encode({ type: 'text', s: '', limited: '', raw, small: new Uint8Array([7]) });
    const input = Buffer.from(encoded);
    const decoded = rich.decode(input);
    assert.ok(decoded.type === 'text');
    input.fill(0); // the ring slot is reused
    assert.equal(decoded.raw[99], 99);
    assert.equal(decoded.small[0], 7);
    assert.equal(Object.getPrototypeOf(decoded.raw), Uint8Array.prototype);
  });
});

describe('wire format', () => {
  const counter = messages({
    add: { amount: field.u32() },
    get: {},
    put: { key: field.string(), value: field.bytes() },
    mixed: {
      flag: field.bool(),
      ratio: field.f64(),
      who: field.actorId(),
      note: field.optional(field.u16()),
    },
  });
  type CounterMessage = MessageOf<typeof counter>;

  const cases: readonly [string, CounterMessage, readonly number[]][] = [
    ['tag in declaration order, u32 little-endian', { type: 'add', amount: 0x0102_0304 }, [0, 4, 3, 2, 1]],
    ['an empty variant is its tag alone', { type: 'get' }, [1]],
    [
      'string and bytes carry a u32 length prefix',
      { type: 'put', key: 'ab', value: new Uint8Array([9]) },
      [2, 2, 0, 0, 0, 0x61, 0x62, 1, 0, 0, 0, 9],
    ],
    [
      'bool, f64 (IEEE, LE), actorId (u32), absent optional (0)',
      { type: 'mixed', flag: true, ratio: 1, who: actorId(7), note: undefined },
      [3, 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 7, 0, 0, 0, 0],
    ],
    [
      'present optional: 1 then the value',
      { type: 'mixed', flag: false, ratio: 0, who: actorId(0), note: 0x0201 },
      [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2],
    ],
  ];

  for (const [what, message, bytes] of cases) {
    it(what, () => {
      assert.deepStrictEqual([...counter.encode(message)], bytes);
      assert.equal(counter.sizeOf(message), bytes.length);
    });
  }

  it('tags follow declaration order and peekType reads them without decoding', () => {
    assert.deepStrictEqual(counter.variantNames, ['add', 'get', 'put', 'mixed']);
    assert.equal(counter.tagOf('put'), 2);
    assert.equal(counter.tagOf('nope'), undefined);
    assert.equal(counter.peekType(counter.encode({ type: 'get' })), 'get');
    assert.equal(counter.peekType(new Uint8Array([200])), undefined);
    assert.equal(counter.peekType(new Uint8Array(0)), undefined);
  });

  it('describes its schema', () => {
    assert.equal(
      counter.describe(),
      'add { amount: u32 } | get {} | put { key: string, value: bytes } | ' +
        'mixed { flag: bool, ratio: f64, who: actorId, note: optional(u16) }',
    );
  });
});
