/**
 * Schemas: `messages()` infers the exact message union (checked at compile time), and refuses a
 * schema that cannot work — when it is defined, with a MessageSchemaError that says what to fix.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Field,
  field,
  isField,
  isMessageCodec,
  MAX_VARIANTS,
  type MessageOf,
  MessageSchemaError,
  messages,
} from '../../src/actor/index.ts';
import { isIpipeError } from '../../src/errors.ts';
import type { ActorId, ObjectId } from '../../src/ids.ts';

// ---- compile-time checks (tsc fails if inference drifts) ---------------------------------------

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): T | undefined {
  return undefined;
}

const counterMessages = messages({
  add: { amount: field.u32() },
  get: {},
  put: { key: field.string(), value: field.bytes() },
});
type CounterMessage = MessageOf<typeof counterMessages>;
expectType<
  Equal<
    CounterMessage,
    { type: 'add'; amount: number } | { type: 'get' } | { type: 'put'; key: string; value: Uint8Array }
  >
>();

const kinds = messages({
  all: {
    big: field.u64(),
    signed: field.i64(),
    flag: field.bool(),
    actor: field.actorId(),
    object: field.objectId(),
    list: field.list(field.u8()),
    maybe: field.optional(field.string()),
    pair: field.struct({ left: field.i32(), right: field.optional(field.f64()) }),
    op: field.oneOf(['get', 'put']),
  },
});
expectType<
  Equal<
    MessageOf<typeof kinds>,
    {
      type: 'all';
      big: bigint;
      signed: bigint;
      flag: boolean;
      actor: ActorId;
      object: ObjectId;
      list: readonly number[];
      maybe?: string | undefined;
      pair: { left: number; right?: number | undefined };
      op: 'get' | 'put';
    }
  >
>();

// Never called: these lines only have to (fail to) type-check.
export function wrongMessagesDoNotTypeCheck(): void {
  // @ts-expect-error — a message of an unknown variant does not type-check
  counterMessages.encode({ type: 'remove' });
  // @ts-expect-error — a field of the wrong type does not type-check
  counterMessages.encode({ type: 'add', amount: 'one' });
  // @ts-expect-error — a missing required field does not type-check
  counterMessages.encode({ type: 'put', key: 'k' });
}

// ---- run-time checks ---------------------------------------------------------------------------

function expectSchemaError(build: () => unknown, pattern: RegExp): void {
  assert.throws(build, (error: unknown) => {
    assert.ok(error instanceof MessageSchemaError, `expected MessageSchemaError, got ${String(error)}`);
    assert.ok(isIpipeError(error, 'IPIPE_ERR_CODEC_INVALID_SCHEMA'));
    assert.match(error.message, pattern);
    return true;
  });
}

describe('message schemas', () => {
  it('builds codecs and fields that their guards recognise', () => {
    assert.ok(isMessageCodec(counterMessages));
    assert.ok(!isMessageCodec({ encode() {}, decode() {} }));
    assert.ok(isField(field.u32()));
    assert.ok(!isField({ kind: 'u32', measure: () => 4 }));
    assert.ok(Object.isFrozen(counterMessages));
    assert.ok(Object.isFrozen(field));
  });

  it('refuses a schema that is not an object or has no variants', () => {
    expectSchemaError(() => messages(null as never), /needs an object of variants/);
    expectSchemaError(() => messages([] as never), /needs an object of variants/);
    expectSchemaError(() => messages({}), /at least one variant/);
  });

  it(`allows ${MAX_VARIANTS} variants and refuses ${MAX_VARIANTS + 1}`, () => {
    const spec = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`v${i}`, {}]));
    const largest = messages(spec(MAX_VARIANTS));
    assert.equal(largest.tagOf(`v${MAX_VARIANTS - 1}`), 254);
    expectSchemaError(() => messages(spec(MAX_VARIANTS + 1)), /at most 255 variants/);
  });

  it('refuses reserved and dangerous names', () => {
    expectSchemaError(() => messages({ get: { type: field.u8() } }), /"type" cannot be a field name/);
    expectSchemaError(
      () => messages({ get: { ['__proto__']: field.u8() } }),
      /"__proto__" cannot be a field name/,
    );
    expectSchemaError(() => messages({ ['__proto__']: {} }), /cannot be a variant name/);
    expectSchemaError(() => messages({ '': {} }), /cannot be a variant name/);
    // "type" is only reserved at the top level: a struct may use it.
    const ok = messages({ wrap: { inner: field.struct({ type: field.u8() }) } });
    assert.deepStrictEqual(ok.decode(ok.encode({ type: 'wrap', inner: { type: 3 } })), {
      type: 'wrap',
      inner: { type: 3 },
    });
  });

  it('refuses fields that are not built by field.*', () => {
    expectSchemaError(() => messages({ get: { n: 5 as never } }), /field "n" is not a field/);
    expectSchemaError(() => messages({ get: { n: { kind: 'u8' } as never } }), /field "n" is not a field/);
    expectSchemaError(() => messages({ get: 'u8' as never }), /variant "get": expected an object of fields/);
    expectSchemaError(() => field.list({} as Field<number>), /list\(of\) needs a field/);
    expectSchemaError(() => field.optional(42 as never), /optional\(of\) needs a field/);
  });

  it('refuses bad limits and misspelt options', () => {
    for (const maxBytes of [-1, 1.5, 2 ** 32, Number.NaN]) {
      expectSchemaError(() => field.string({ maxBytes }), /string maxBytes must be an integer/);
      expectSchemaError(() => field.bytes({ maxBytes }), /bytes maxBytes must be an integer/);
    }
    expectSchemaError(() => field.list(field.u8(), { maxItems: -1 }), /list maxItems must be an integer/);
    expectSchemaError(() => field.string({ maxLength: 4 } as never), /unknown option "maxLength"/);
    expectSchemaError(() => field.bytes('64' as never), /options must be an object/);
    expectSchemaError(() => field.string({ maxBytes: '64' } as never), /must be a number/);
  });

  it('refuses ambiguous or empty compound fields', () => {
    expectSchemaError(() => field.optional(field.optional(field.u8())), /ambiguous/);
    expectSchemaError(() => field.struct({}), /at least one/);
    expectSchemaError(() => field.oneOf([] as never), /1 to 256 strings/);
    expectSchemaError(() => field.oneOf(['a', 'a']), /appears twice/);
    expectSchemaError(() => field.oneOf(['a', 1] as never), /not a string/);
  });

  it('describes fields with their limits', () => {
    assert.equal(field.string({ maxBytes: 64 }).describe(), 'string(maxBytes=64)');
    assert.equal(field.list(field.bytes(), { maxItems: 3 }).describe(), 'list(bytes, maxItems=3)');
    assert.equal(
      field.struct({ a: field.u8(), b: field.oneOf(['x']) }).describe(),
      'struct({ a: u8, b: oneOf("x") })',
    );
    assert.equal(field.u64().fixedBytes, 8);
    assert.equal(field.struct({ a: field.u8(), b: field.f64() }).fixedBytes, 9);
    assert.equal(field.struct({ a: field.u8(), b: field.string() }).fixedBytes, undefined);
  });
});
