/**
 * Encode (and sizeOf, and encodeInto) refuse values that do not fit their fields — wrong type,
 * out of range, over a limit, unknown variant — as a CodecEncodeError (IPIPE_ERR_CODEC_ENCODE)
 * whose path names the field, and never write a partial message.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CodecEncodeError } from '../../src/actor/index.ts';
import { EncodeError } from '../../src/errors.ts';
import { MAX_ACTOR_ID } from '../../src/ids.ts';
import { LIMITED_BYTES, MAX_ENTRIES, rich } from './codec-fixtures.ts';

const validScalars = { type: 'scalars', a: 1, b: 2, c: 3, d: -4, e: 0.5, f: 5n, g: -6n, h: true };
const validText = {
  type: 'text',
  s: 'hello',
  limited: 'ok',
  raw: new Uint8Array(3),
  small: new Uint8Array(2),
};
const validIds = { type: 'ids', actor: 3, object: 2 ** 40 };
const validNested = {
  type: 'nested',
  entries: [{ key: 'k', op: 'put', value: new Uint8Array(1) }],
  numbers: [1.5],
};

/** Every way `encode` must refuse a message, and the path it must name. */
function expectEncodeFailure(message: unknown, path: string, pattern?: RegExp): void {
  for (const attempt of [
    () => rich.encode(message as never),
    () => rich.sizeOf(message as never),
    () => rich.encodeInto(message as never, new Uint8Array(4096), 0),
  ]) {
    let caught: unknown;
    try {
      attempt();
    } catch (error) {
      caught = error;
    }
    assert.ok(
      caught instanceof CodecEncodeError,
      `expected a CodecEncodeError for ${path}, got ${String(caught)}`,
    );
    assert.ok(caught instanceof EncodeError);
    assert.equal(caught.code, 'IPIPE_ERR_CODEC_ENCODE');
    assert.equal(caught.path, path, caught.message);
    if (pattern !== undefined) assert.match(caught.message, pattern);
  }
}

describe('encode errors', () => {
  it('accepts the valid base messages the cases below corrupt', () => {
    for (const message of [validScalars, validText, validIds, validNested]) rich.encode(message as never);
  });

  const scalarCases: readonly [string, unknown, RegExp][] = [
    ['a', 256, /u8/],
    ['a', -1, /u8/],
    ['a', 1.5, /u8/],
    ['a', Number.NaN, /u8/],
    ['a', '1', /u8/],
    ['b', 65_536, /u16/],
    ['c', 2 ** 32, /u32/],
    ['c', -1, /u32/],
    ['d', 2 ** 31, /i32/],
    ['d', -(2 ** 31) - 1, /i32/],
    ['e', '0.5', /number/],
    ['e', 1n, /number/],
    ['f', -1n, /u64/],
    ['f', 2n ** 64n, /u64/],
    ['f', 5, /u64/],
    ['g', 2n ** 63n, /i64/],
    ['g', -(2n ** 63n) - 1n, /i64/],
    ['h', 1, /boolean/],
    ['h', undefined, /boolean/],
  ];
  for (const [key, value, pattern] of scalarCases) {
    it(`refuses scalars.${key} = ${typeof value === 'bigint' ? `${value}n` : String(value)}`, () => {
      expectEncodeFailure({ ...validScalars, [key]: value }, `scalars.${key}`, pattern);
    });
  }

  it('refuses non-strings, lone surrogates and over-limit strings', () => {
    expectEncodeFailure({ ...validText, s: 42 }, 'text.s', /expected a string/);
    expectEncodeFailure({ ...validText, s: 'a\uD800b' }, 'text.s', /lone UTF-16 surrogate/);
    expectEncodeFailure({ ...validText, s: '\uDC00' }, 'text.s', /lone UTF-16 surrogate/);
    expectEncodeFailure({ ...validText, s: 'end\uD83D' }, 'text.s', /lone UTF-16 surrogate/);
    // 9 characters but 18 UTF-8 bytes: the limit counts bytes, not characters.
    expectEncodeFailure(
      { ...validText, limited: 'é'.repeat(9) },
      'text.limited',
      /18 UTF-8 bytes, over its limit of 16/,
    );
  });

  it('refuses non-Uint8Array bytes and over-limit bytes', () => {
    expectEncodeFailure({ ...validText, raw: [1, 2, 3] }, 'text.raw', /Uint8Array/);
    expectEncodeFailure({ ...validText, raw: new ArrayBuffer(2) }, 'text.raw', /Uint8Array/);
    expectEncodeFailure(
      { ...validText, small: new Uint8Array(LIMITED_BYTES + 1) },
      'text.small',
      /over their limit/,
    );
  });

  it('refuses actor ids past MAX_ACTOR_ID and object ids that are not safe non-negative integers', () => {
    expectEncodeFailure({ ...validIds, actor: MAX_ACTOR_ID + 1 }, 'ids.actor', /actor id/);
    expectEncodeFailure({ ...validIds, actor: -1 }, 'ids.actor', /actor id/);
    for (const object of [-1, 1.5, 2 ** 53, Number.NaN, '7']) {
      expectEncodeFailure({ ...validIds, object }, 'ids.object', /object id/);
    }
  });

  it('names the list item and struct field that is wrong', () => {
    const entries = [
      { key: 'a', op: 'get' },
      { key: 'b', op: 'remove' },
    ];
    expectEncodeFailure({ ...validNested, entries }, 'nested.entries[1].op', /one of "get", "put", "del"/);
    expectEncodeFailure({ ...validNested, entries: [{ key: 1, op: 'get' }] }, 'nested.entries[0].key');
    expectEncodeFailure(
      { ...validNested, entries: [{ key: 'a', op: 'get', value: null }] },
      'nested.entries[0].value',
    );
    expectEncodeFailure({ ...validNested, entries: ['x'] }, 'nested.entries[0]', /expected an object/);
    expectEncodeFailure({ ...validNested, numbers: [1, 'two'] }, 'nested.numbers[1]');
  });

  it('refuses non-arrays and lists over maxItems', () => {
    expectEncodeFailure({ ...validNested, numbers: new Float64Array(2) }, 'nested.numbers', /array/);
    const entries = Array.from({ length: MAX_ENTRIES + 1 }, () => ({ key: 'k', op: 'get' }));
    expectEncodeFailure({ ...validNested, entries }, 'nested.entries', /11 items, over its limit of 10/);
  });

  it('refuses a missing required field, but accepts a missing or undefined optional one', () => {
    const { c: _omitted, ...withoutC } = validScalars;
    expectEncodeFailure(withoutC, 'scalars.c', /got undefined/);
    const withoutMaybe = { type: 'nested', entries: [], numbers: [] };
    assert.equal(rich.sizeOf(withoutMaybe as never), 1 + 4 + 1 + 4);
    assert.deepStrictEqual(
      rich.encode({ ...withoutMaybe, maybe: undefined } as never),
      rich.encode(withoutMaybe as never),
    );
  });

  it('refuses unknown types and non-objects, naming what the codec has', () => {
    expectEncodeFailure(
      { type: 'delete' },
      '',
      /unknown message type "delete"; this codec has empty, scalars/,
    );
    expectEncodeFailure({ kind: 'empty' }, '', /unknown message type undefined/);
    expectEncodeFailure({ type: 1n }, '', /unknown message type bigint/);
    expectEncodeFailure(() => {}, '', /got function/);
    expectEncodeFailure(null, '', /expected a message object/);
    expectEncodeFailure('empty', '', /expected a message object with a "type", got "empty"/);
    expectEncodeFailure({ type: 'toString' }, '', /unknown message type/);
  });

  it('encodeInto refuses a target too small and leaves it untouched', () => {
    const size = rich.sizeOf(validText as never);
    const target = new Uint8Array(size + 3).fill(0xaa);
    assert.throws(
      () => rich.encodeInto(validText as never, target, 4),
      (error: unknown) =>
        error instanceof CodecEncodeError && /needs \d+ bytes but only \d+ are free/.test(error.message),
    );
    assert.ok(target.every((b) => b === 0xaa));
    assert.equal(rich.encodeInto(validText as never, target, 3), size);
  });

  it('encodeInto refuses offsets outside the target and non-Uint8Array targets', () => {
    const target = new Uint8Array(64);
    for (const offset of [-1, 65, 1.5]) {
      assert.throws(() => rich.encodeInto({ type: 'empty' }, target, offset), CodecEncodeError);
    }
    assert.throws(() => rich.encodeInto({ type: 'empty' }, [] as never, 0), CodecEncodeError);
  });
});

// Field lists measure through code generated per list (codec-compound.ts, compileMeasure); where
// code generation from strings is disabled they fall back to a loop. Every case above must hold
// on that path too: the file runs again in a child process with code generation off.
const LOOP_CHILD = 'IPIPE_CODEC_LOOP_CHILD';
function childEnv(): NodeJS.ProcessEnv {
  // Without NODE_TEST_CONTEXT the child's runner prints its TAP report instead of streaming to ours.
  const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
  return { ...env, [LOOP_CHILD]: '1' };
}
if (process.env[LOOP_CHILD] === undefined) {
  it('gives the same sizes and errors with code generation from strings disabled', () => {
    const child = spawnSync(
      process.execPath,
      [
        '--disallow-code-generation-from-strings',
        '--import',
        'tsx',
        '--test',
        fileURLToPath(import.meta.url),
      ],
      { encoding: 'utf8', env: childEnv(), timeout: 60_000 },
    );
    assert.equal(child.status, 0, `${child.stdout}\n${child.stderr}`);
    assert.match(child.stdout, /# fail 0/);
    assert.doesNotMatch(child.stdout, /# pass 0\b/);
  });
}
