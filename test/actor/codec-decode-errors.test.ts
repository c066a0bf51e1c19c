/**
 * Decode refuses bad bytes with a precise, stable reason: truncated, unknown-tag, trailing-bytes,
 * too-long, invalid-utf8, out-of-range — always as a CodecDecodeError (IPIPE_ERR_CODEC_DECODE),
 * and tryDecode never throws whatever the bytes are.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CodecDecodeError,
  type DecodeFailureReason,
  field,
  type MessageCodec,
  messages,
} from '../../src/actor/index.ts';
import { DecodeError } from '../../src/errors.ts';
import { MAX_ACTOR_ID } from '../../src/ids.ts';
import { LIMITED_BYTES, LIMITED_STRING_BYTES, MAX_ENTRIES, rich, richMessage } from './codec-fixtures.ts';

function u32(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24];
}

function f64(value: number): number[] {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, value, true);
  return [...bytes];
}

function expectDecodeFailure(
  bytes: Uint8Array | readonly number[],
  reason: DecodeFailureReason,
  path?: string,
  codec: MessageCodec<unknown> = rich,
): CodecDecodeError {
  const input = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
  let caught: unknown;
  try {
    codec.decode(input);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof CodecDecodeError, `expected a CodecDecodeError, got ${String(caught)}`);
  assert.ok(caught instanceof DecodeError);
  assert.equal(caught.code, 'IPIPE_ERR_CODEC_DECODE');
  assert.equal(caught.reason, reason, caught.message);
  if (path !== undefined) assert.equal(caught.path, path);
  // tryDecode reports the same failure without throwing.
  const result = codec.tryDecode(input);
  assert.ok(!result.ok);
  assert.equal(result.error.reason, reason);
  return caught;
}

const TAG = {
  empty: rich.tagOf('empty')!,
  scalars: rich.tagOf('scalars')!,
  text: rich.tagOf('text')!,
  ids: rich.tagOf('ids')!,
  nested: rich.tagOf('nested')!,
};

describe('decode errors', () => {
  it('refuses every strict prefix of a valid message as truncated', () => {
    fc.assert(
      fc.property(richMessage, (message) => {
        const bytes = rich.encode(message);
        for (let cut = 0; cut < bytes.length; cut++) {
          expectDecodeFailure(bytes.subarray(0, cut), 'truncated');
          // The same through a window on the full buffer.
          const windowed = rich.tryDecode(bytes, 0, cut);
          assert.ok(!windowed.ok && windowed.error.reason === 'truncated');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses extra bytes after a complete message as trailing-bytes', () => {
    fc.assert(
      fc.property(richMessage, fc.uint8Array({ minLength: 1, maxLength: 8 }), (message, extra) => {
        const bytes = rich.encode(message);
        const padded = new Uint8Array(bytes.length + extra.length);
        padded.set(bytes);
        padded.set(extra, bytes.length);
        const error = expectDecodeFailure(padded, 'trailing-bytes', '');
        assert.equal(error.offset, bytes.length);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses every tag past the last variant as unknown-tag, naming the tag', () => {
    for (let tag = rich.variantNames.length; tag <= 255; tag++) {
      const error = expectDecodeFailure([tag], 'unknown-tag', '');
      assert.match(error.message, new RegExp(`unknown tag ${tag}\\b`));
    }
  });

  it('refuses an empty input and windows that run past the buffer as truncated', () => {
    expectDecodeFailure([], 'truncated');
    const bytes = rich.encode({ type: 'empty' });
    const result = rich.tryDecode(bytes, 0, 2);
    assert.ok(!result.ok && result.error.reason === 'truncated');
  });

  it('refuses a bad offset or length as out-of-range', () => {
    const bytes = rich.encode({ type: 'empty' });
    for (const [offset, length] of [
      [-1, undefined],
      [5, undefined],
      [0.5, undefined],
      [0, -1],
      [0, 0.5],
    ] as const) {
      const result = rich.tryDecode(bytes, offset, length);
      assert.ok(!result.ok && result.error.reason === 'out-of-range', `${offset}/${length}`);
    }
  });

  const invalidUtf8: readonly (readonly number[])[] = [
    [0xc3, 0x28], // a lead byte followed by ASCII
    [0xc0, 0x80], // an overlong NUL
    [0xed, 0xa0, 0x80], // a UTF-16 surrogate encoded in UTF-8 (CESU)
    [0xf8, 0x88, 0x80, 0x80, 0x80], // a five-byte form
    [0xff],
    [0x61, 0x62, 0xe2, 0x82], // valid start, truncated sequence at the end
  ];

  it('refuses invalid UTF-8 in short and long strings as invalid-utf8', () => {
    for (const bad of invalidUtf8) {
      for (const prefix of [[], Array<number>(60).fill(0x61)]) {
        const content = [...prefix, ...bad];
        // text variant: s (unlimited) comes first.
        const bytes = [TAG.text, ...u32(content.length), ...content, ...u32(0), ...u32(0), ...u32(0)];
        const error = expectDecodeFailure(bytes, 'invalid-utf8', 'text.s');
        assert.equal(error.offset, 5);
      }
    }
  });

  it('refuses a string over its maxBytes as too-long before reading it', () => {
    const over = LIMITED_STRING_BYTES + 1;
    const bytes = [
      TAG.text,
      ...u32(0),
      ...u32(over),
      ...Array<number>(over).fill(0x61),
      ...u32(0),
      ...u32(0),
    ];
    expectDecodeFailure(bytes, 'too-long', 'text.limited');
  });

  it('refuses bytes over their maxBytes as too-long', () => {
    const over = LIMITED_BYTES + 1;
    const bytes = [TAG.text, ...u32(0), ...u32(0), ...u32(0), ...u32(over), ...Array<number>(over).fill(1)];
    expectDecodeFailure(bytes, 'too-long', 'text.small');
  });

  it('refuses a list over its maxItems as too-long', () => {
    const bytes = [TAG.nested, ...u32(MAX_ENTRIES + 1)];
    expectDecodeFailure(bytes, 'too-long', 'nested.entries');
  });

  it('refuses a huge list count as truncated without allocating it', () => {
    const numbersOnly = messages({ n: { numbers: field.list(field.f64()) } });
    const started = performance.now();
    expectDecodeFailure([0, ...u32(0xffff_ffff)], 'truncated', 'n.numbers', numbersOnly);
    assert.ok(performance.now() - started < 50, 'refused before allocating 4 billion slots');
  });

  it('names the failing list item and struct field in the path', () => {
    const good = rich.encode({
      type: 'nested',
      entries: [
        { key: 'a', op: 'get' },
        { key: 'b', op: 'put' },
      ],
      numbers: [],
    });
    // Layout: tag, count(4), [key len(4) 'a' value-flag op] [key len(4) 'b' value-flag op] ...
    const corrupt = Uint8Array.from(good);
    const secondOp = 1 + 4 + (4 + 1 + 1 + 1) + (4 + 1 + 1);
    corrupt[secondOp] = 7; // no such oneOf value
    const error = expectDecodeFailure(corrupt, 'out-of-range', 'nested.entries[1].op');
    assert.equal(error.offset, secondOp);
    const badFlag = Uint8Array.from(good);
    badFlag[secondOp - 1] = 2; // optional presence byte must be 0 or 1
    expectDecodeFailure(badFlag, 'out-of-range', 'nested.entries[1].value');
  });

  it('refuses out-of-range bools, actor ids and object ids', () => {
    const scalars = [TAG.scalars, 0, 0, 0, ...u32(0), ...u32(0), ...f64(0), ...Array<number>(16).fill(0)];
    expectDecodeFailure([...scalars, 2], 'out-of-range', 'scalars.h');
    expectDecodeFailure([TAG.ids, ...u32(MAX_ACTOR_ID + 1), ...f64(1)], 'out-of-range', 'ids.actor');
    for (const object of [-1, 1.5, Number.NaN, 2 ** 53, -0, Number.POSITIVE_INFINITY]) {
      expectDecodeFailure([TAG.ids, ...u32(1), ...f64(object)], 'out-of-range', 'ids.object');
    }
  });

  it('tryDecode never throws on arbitrary bytes and agrees with decode', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const result = rich.tryDecode(bytes);
        if (result.ok) {
          assert.deepStrictEqual(rich.decode(bytes), result.message);
        } else {
          assert.throws(() => rich.decode(bytes), CodecDecodeError);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('tryDecode never throws on valid messages with random corruption', () => {
    fc.assert(
      fc.property(richMessage, fc.nat(), fc.integer({ min: 0, max: 255 }), (message, where, value) => {
        const bytes = rich.encode(message);
        bytes[where % bytes.length] = value;
        const result = rich.tryDecode(bytes);
        // Whatever decodes is a valid message: it re-encodes and decodes to the same value. (Not
        // necessarily to the same bytes: a corrupted NaN payload may be canonicalised.)
        if (result.ok) assert.deepStrictEqual(rich.decode(rich.encode(result.message)), result.message);
      }),
      { numRuns: 3000 },
    );
  });
});
