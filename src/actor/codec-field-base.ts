/**
 * The contract every field kind of the message codec implements, and the plumbing they share
 * (iPipe §3 "Actors": porting an app means "define request formats"; those formats cross rings and
 * wires as bytes).
 *
 * A field validates, sizes, writes and reads one value. Encoding takes two passes so it is exact
 * and allocation-free: `measure` validates a value and returns its size (the simulator charges
 * time by size, and encode allocates exactly that), then `write` copies it out without checking
 * again. Apps never call these: they build fields with `field.*` (codec-fields.ts) and hand them
 * to `messages()` (codec.ts).
 *
 * Failures inside a field are thrown as `ValueProblem` / `DecodeProblem` — plain classes, not
 * Errors, so no stack is captured per failure — and each enclosing list/struct prepends its part
 * of the path on the way out. The codec boundary turns them into the public CodecEncodeError /
 * CodecDecodeError; they never escape this area.
 */

import { type DecodeFailureReason, MessageSchemaError } from './codec-errors.ts';

export type { DecodeFailureReason } from './codec-errors.ts';

/** Every field kind; `describe()` gives the full spelling with its limits. */
export type FieldKind =
  | 'u8'
  | 'u16'
  | 'u32'
  | 'i32'
  | 'u64'
  | 'i64'
  | 'f64'
  | 'bool'
  | 'string'
  | 'bytes'
  | 'actorId'
  | 'objectId'
  | 'list'
  | 'optional'
  | 'struct'
  | 'oneOf';

/** Where a decode is in its input. One per codec call; fields advance `pos` and never pass `end`. */
export interface ReadCursor {
  bytes: Uint8Array;
  pos: number;
  end: number;
}

/** An encode-side failure on its way to the codec boundary (becomes an EncodeError there). */
export class ValueProblem {
  /** Path parts from the outermost container inwards, e.g. ['entries', '[3]', 'key']. */
  readonly path: string[] = [];
  readonly detail: string;
  constructor(detail: string) {
    this.detail = detail;
  }
}

/** A decode-side failure on its way to the codec boundary (becomes a CodecDecodeError there). */
export class DecodeProblem {
  readonly path: string[] = [];
  readonly reason: DecodeFailureReason;
  /** Byte offset in the input where the problem was found. */
  readonly offset: number;
  readonly detail: string;
  constructor(reason: DecodeFailureReason, offset: number, detail: string) {
    this.reason = reason;
    this.offset = offset;
    this.detail = detail;
  }
}

// A phantom key: carries the field's value type for inference, never present at run time.
declare const fieldValueType: unique symbol;

/**
 * One field of a message: its kind, its wire size bounds, and the three operations the codec
 * composes. `T` is the TypeScript type of the value (what `MessageOf` puts in the message type).
 */
export interface Field<T> {
  readonly [fieldValueType]?: T;
  readonly kind: FieldKind;
  /** Fewest bytes any value of this field takes (used to refuse absurd list counts early). */
  readonly minBytes: number;
  /** The size of every value when it is fixed (numbers, bools, ids), otherwise undefined. */
  readonly fixedBytes: number | undefined;
  /** The kind with its limits, e.g. `string(maxBytes=64)`, for error messages and docs. */
  describe(): string;
  /** Validates `value` and returns its encoded size. Throws ValueProblem. */
  measure(value: unknown): number;
  /** Writes a value `measure` accepted at `pos`; returns the position after it. */
  write(target: Uint8Array, pos: number, value: unknown): number;
  /** Reads one value at `cursor.pos`, advancing it. Throws DecodeProblem. */
  read(cursor: ReadCursor): T;
}

/** A field that may be absent: in a message it becomes an optional property. */
export interface OptionalField<T> extends Field<T | undefined> {
  readonly kind: 'optional';
}

/** The value type a field carries. */
export type FieldValue<F> = F extends Field<infer T> ? T : never;

/** The fields of one message variant (or of a struct), in declaration order. */
export type FieldSpec = { readonly [name: string]: Field<unknown> };

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type OptionalKeys<S extends FieldSpec> = {
  [K in keyof S & string]: S[K] extends OptionalField<unknown> ? K : never;
}[keyof S & string];
type RequiredKeys<S extends FieldSpec> = Exclude<keyof S & string, OptionalKeys<S>>;

/**
 * The object type a field spec describes: required properties for ordinary fields, optional ones
 * (`?: T | undefined`, so both an absent key and an explicit undefined encode as "absent") for
 * `field.optional(...)`.
 */
export type StructValue<S extends FieldSpec> = Simplify<
  { -readonly [K in RequiredKeys<S>]: FieldValue<S[K]> } & {
    -readonly [K in OptionalKeys<S>]?: FieldValue<S[K]>;
  }
>;

// ---------------------------------------------------------------------------------------------
// Shared helpers

// Only fields built here are accepted by messages(): a look-alike object could break the
// invariants measure/write rely on (write trusts what measure checked).
const createdFields = new WeakSet<object>();

/** True when `value` was built by one of the `field.*` constructors. */
export function isField(value: unknown): value is Field<unknown> {
  return typeof value === 'object' && value !== null && createdFields.has(value);
}

/** Largest u32; also the "no limit" value of maxBytes / maxItems. */
export const U32_MAX = 0xffff_ffff;

/** Throws `truncated` unless `count` more bytes are left. */
export function need(cursor: ReadCursor, count: number, what: string): void {
  const left = cursor.end - cursor.pos;
  if (left < count) {
    throw new DecodeProblem('truncated', cursor.pos, `${what} needs ${count} bytes, ${left} left`);
  }
}

/** Writes a u32 little-endian. */
export function writeU32(target: Uint8Array, pos: number, value: number): void {
  // Uint8Array stores modulo 256, so no masking is needed.
  target[pos] = value;
  target[pos + 1] = value >>> 8;
  target[pos + 2] = value >>> 16;
  target[pos + 3] = value >>> 24;
}

/** Reads a u32 little-endian. */
export function readU32At(bytes: Uint8Array, pos: number): number {
  return (bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16) | (bytes[pos + 3]! << 24)) >>> 0;
}

/** A short description of a value for error messages (never a function's source, never a 1 MB string). */
export function show(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 40 ? `a ${value.length}-char string` : JSON.stringify(value);
  }
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function'; // not its source text
  return String(value);
}

/** Validates a maxBytes / maxItems limit at schema time. */
export function checkLimit(what: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0 || value > U32_MAX) {
    throw new MessageSchemaError(`${what} must be an integer in [0, ${U32_MAX}], got ${value}`);
  }
  return value;
}

/** Registers every field it constructs so `isField` can recognise it. */
export abstract class BaseField<T> implements Field<T> {
  declare readonly [fieldValueType]?: T;
  abstract readonly kind: FieldKind;
  abstract readonly minBytes: number;
  abstract readonly fixedBytes: number | undefined;
  constructor() {
    createdFields.add(this);
  }
  abstract describe(): string;
  abstract measure(value: unknown): number;
  abstract write(target: Uint8Array, pos: number, value: unknown): number;
  abstract read(cursor: ReadCursor): T;
}
