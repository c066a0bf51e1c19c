/**
 * A rich message schema that uses every field kind, and fast-check arbitraries producing valid
 * messages of it. Shared by the codec tests (round-trip, decode errors, encode errors).
 */

import fc from 'fast-check';
import { field, type MessageOf, messages, utf8ByteLength } from '../../src/actor/index.ts';
import type { ActorId, ObjectId } from '../../src/ids.ts';
import { MAX_ACTOR_ID } from '../../src/ids.ts';

export const LIMITED_STRING_BYTES = 16;
export const LIMITED_BYTES = 8;
export const MAX_ENTRIES = 10;

export const rich = messages({
  empty: {},
  scalars: {
    a: field.u8(),
    b: field.u16(),
    c: field.u32(),
    d: field.i32(),
    e: field.f64(),
    f: field.u64(),
    g: field.i64(),
    h: field.bool(),
  },
  text: {
    s: field.string(),
    limited: field.string({ maxBytes: LIMITED_STRING_BYTES }),
    raw: field.bytes(),
    small: field.bytes({ maxBytes: LIMITED_BYTES }),
  },
  ids: { actor: field.actorId(), object: field.objectId() },
  nested: {
    entries: field.list(
      field.struct({
        key: field.string(),
        value: field.optional(field.bytes()),
        op: field.oneOf(['get', 'put', 'del']),
      }),
      { maxItems: MAX_ENTRIES },
    ),
    maybe: field.optional(field.u32()),
    numbers: field.list(field.f64()),
  },
});

export type RichMessage = MessageOf<typeof rich>;

// Decoded messages are plain objects; fast-check's records default to null prototypes.
const PLAIN = { noNullPrototype: true } as const;

// size 'max' on the strings and the raw bytes: fast-check's default size stops at 10 elements
// whatever maxLength says, which never reached the codec's long paths — strings over 48 UTF-16
// units (TextEncoder) and byte fields over 64 bytes (a bulk copy). codec-roundtrip asserts that
// generated messages do reach them.

/** Any well-formed string (graphemes cover multi-byte and astral characters). */
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20, size: 'max' }),
  fc.string({ maxLength: 80, size: 'max' }),
);

const scalars = fc.record(
  {
    type: fc.constant('scalars' as const),
    a: fc.integer({ min: 0, max: 255 }),
    b: fc.integer({ min: 0, max: 0xffff }),
    c: fc.integer({ min: 0, max: 0xffff_ffff }),
    d: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    e: fc.double(),
    f: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    g: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    h: fc.boolean(),
  },
  PLAIN,
);

const textMessage = fc.record(
  {
    type: fc.constant('text' as const),
    s: text,
    limited: fc
      .string({ unit: 'grapheme', maxLength: 8 })
      .filter((s) => utf8ByteLength(s) <= LIMITED_STRING_BYTES),
    raw: fc.uint8Array({ maxLength: 200, size: 'max' }),
    small: fc.uint8Array({ maxLength: LIMITED_BYTES }),
  },
  PLAIN,
);

const ids = fc.record(
  {
    type: fc.constant('ids' as const),
    actor: fc.integer({ min: 0, max: MAX_ACTOR_ID }).map((n) => n as ActorId),
    object: fc.maxSafeNat().map((n) => n as ObjectId),
  },
  PLAIN,
);

const entry = fc.record(
  {
    key: text,
    value: fc.uint8Array({ maxLength: 20 }),
    op: fc.constantFrom('get' as const, 'put' as const, 'del' as const),
  },
  { requiredKeys: ['key', 'op'], noNullPrototype: true },
);

const nested = fc.record(
  {
    type: fc.constant('nested' as const),
    entries: fc.array(entry, { maxLength: MAX_ENTRIES }),
    maybe: fc.integer({ min: 0, max: 0xffff_ffff }),
    numbers: fc.array(fc.double(), { maxLength: 12 }),
  },
  // `maybe` is sometimes absent: decode leaves absent optional fields out, so the shapes match.
  { requiredKeys: ['type', 'entries', 'numbers'], noNullPrototype: true },
);

/** Valid messages of every variant of `rich`. */
export const richMessage: fc.Arbitrary<RichMessage> = fc.oneof(
  fc.constant({ type: 'empty' as const }),
  scalars,
  textMessage,
  ids,
  nested,
);
