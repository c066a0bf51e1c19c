/**
 * Message codecs: an actor's message types as a tagged union with a binary form (iPipe §3
 * "Actors" — porting an app means "define request formats"; "Host–NIC messaging" — messages
 * cross DMA rings and the network as bytes).
 *
 *   const counterMessages = messages({
 *     add: { amount: field.u32() },
 *     get: {},
 *     put: { key: field.string({ maxBytes: 64 }), value: field.bytes() },
 *   });
 *   type CounterMessage = MessageOf<typeof counterMessages>;
 *   //   { type: 'add'; amount: number } | { type: 'get' } | { type: 'put'; key: string; value: Uint8Array }
 *
 * Wire form of one message:
 *
 *   +-----+---------+---------+-----+
 *   | tag | field 1 | field 2 | ... |     tag: u8, the variant's position in the schema (0-based)
 *   +-----+---------+---------+-----+     fields: in declaration order, little-endian (codec-fields.ts)
 *
 * There is no length or checksum here: the frame around a message (ring slot, datagram, the
 * runtime's checksummed header) says where it ends, and `decode` insists the message fills
 * exactly that span, so a length mismatch shows up as `truncated` or `trailing-bytes`.
 * At most 255 variants: tag 255 stays free for a future escape (e.g. a wider tag).
 *
 * Everything per-variant (field arrays, fixed sizes) is built once in `messages()`; encode,
 * sizeOf and decode then loop over arrays with no closures created per message.
 */

import { FieldList } from './codec-compound.ts';
import { CodecDecodeError, CodecEncodeError, MessageSchemaError } from './codec-errors.ts';
import {
  DecodeProblem,
  type FieldSpec,
  type ReadCursor,
  type StructValue,
  ValueProblem,
} from './codec-field-base.ts';

/** Most variants one codec may have (tags 0..254; 255 is reserved). */
export const MAX_VARIANTS = 255;

/** A schema: variant name → its fields. */
export type MessageSchema = { readonly [variant: string]: FieldSpec };

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The tagged union a schema describes: one `{ type: name, ...fields }` object type per variant. */
export type MessageUnion<S extends MessageSchema> = {
  [K in keyof S & string]: Simplify<{ type: K } & StructValue<S[K]>>;
}[keyof S & string];

/** The outcome of `tryDecode`: narrow on `ok` before reading. */
export type DecodeResult<M> =
  | { readonly ok: true; readonly message: M }
  | { readonly ok: false; readonly error: CodecDecodeError };

/**
 * Encodes and decodes the messages of one schema. `M` is the message union; build one with
 * `messages({...})` and name its type with `MessageOf<typeof codec>`.
 */
export interface MessageCodec<M> {
  /** Variant names in tag order. */
  readonly variantNames: readonly string[];
  /** The tag of a variant, or undefined when the codec has no such variant. */
  tagOf(type: string): number | undefined;
  /** The variant name of the message at `offset` without decoding it (undefined for an unknown tag or no byte). */
  peekType(bytes: Uint8Array, offset?: number): string | undefined;
  /**
   * Exact encoded size in bytes, without encoding. Validates like `encode` (throws the same
   * CodecEncodeError), so a simulated run refuses what a live run would.
   */
  sizeOf(message: M): number;
  /**
   * A new array holding exactly the encoded message. Throws CodecEncodeError. Allocates: on hot
   * paths write into a preallocated ring slot or datagram buffer with `encodeInto` instead (V8
   * allocates typed arrays over 64 bytes off-heap, measured at ~1 µs each on Node 20).
   */
  encode(message: M): Uint8Array;
  /**
   * Writes the message into `target` at `offset`; returns the bytes written. Throws
   * CodecEncodeError, leaving `target` untouched, when the message is invalid or does not fit.
   */
  encodeInto(message: M, target: Uint8Array, offset?: number): number;
  /**
   * Decodes one message that fills exactly `length` bytes from `offset` (default: to the end).
   * Throws CodecDecodeError with a `reason`. `bytes` fields are copies, never views of the input.
   */
  decode(bytes: Uint8Array, offset?: number, length?: number): M;
  /** `decode` for hot paths: never throws for bad input, reports why in the result. */
  tryDecode(bytes: Uint8Array, offset?: number, length?: number): DecodeResult<M>;
  /** The schema in words, e.g. `add { amount: u32 } | get {} | ...`. */
  describe(): string;
}

/** The message union of a codec: `MessageOf<typeof counterMessages>`. */
export type MessageOf<C> = C extends MessageCodec<infer M> ? M : never;

// Only codecs built by messages() are accepted where a codec is due (defineActor checks this).
const createdCodecs = new WeakSet<object>();

/** True when `value` is a codec built by `messages()`. */
export function isMessageCodec(value: unknown): value is MessageCodec<unknown> {
  return typeof value === 'object' && value !== null && createdCodecs.has(value);
}

const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['type']);

class Variant {
  readonly name: string;
  readonly tag: number;
  readonly fields: FieldList;
  /** 1 (tag) + the fields, when every field is fixed-size. */
  readonly fixedBytes: number | undefined;
  constructor(name: string, tag: number, fields: FieldList) {
    this.name = name;
    this.tag = tag;
    this.fields = fields;
    this.fixedBytes = fields.fixedBytes === undefined ? undefined : 1 + fields.fixedBytes;
  }
}

function joinPath(parts: readonly string[]): string {
  let path = '';
  for (const part of parts) path += part.startsWith('[') || path === '' ? part : `.${part}`;
  return path;
}

// One cursor for every decode: decoding runs no user code, so a decode can never start inside
// another, and sharing it saves an allocation per message. `bytes` is cleared after each call
// so the cursor does not keep a ring or datagram buffer alive.
const EMPTY = new Uint8Array(0);
const cursor: ReadCursor = { bytes: EMPTY, pos: 0, end: 0 };

class Codec<M> implements MessageCodec<M> {
  readonly variantNames: readonly string[];
  readonly #byTag: readonly Variant[];
  readonly #byName: ReadonlyMap<string, Variant>;
  /**
   * The variant the last message named (private fields stay writable in the frozen codec). A
   * string from the start, never undefined: V8 records what `type === #lastType` has compared, and
   * one comparison with undefined made it the generic equality builtin on every later message.
   */
  #lastType = '';
  #lastVariant: Variant | undefined;

  constructor(variants: readonly Variant[]) {
    this.#byTag = variants;
    this.#byName = new Map(variants.map((v) => [v.name, v]));
    this.variantNames = Object.freeze(variants.map((v) => v.name));
    createdCodecs.add(this);
    Object.freeze(this);
  }

  tagOf(type: string): number | undefined {
    return this.#byName.get(type)?.tag;
  }

  peekType(bytes: Uint8Array, offset = 0): string | undefined {
    const tag = bytes[offset];
    return tag === undefined ? undefined : this.#byTag[tag]?.name;
  }

  sizeOf(message: M): number {
    return this.#measure(this.#variantOf(message), message);
  }

  encode(message: M): Uint8Array {
    const variant = this.#variantOf(message);
    const size = this.#measure(variant, message);
    const out = new Uint8Array(size);
    this.#write(variant, message, out, 0, size);
    return out;
  }

  encodeInto(message: M, target: Uint8Array, offset = 0): number {
    if (!(target instanceof Uint8Array)) throw new CodecEncodeError('', 'target must be a Uint8Array');
    if (!Number.isInteger(offset) || offset < 0 || offset > target.length) {
      throw new CodecEncodeError('', `offset ${offset} is outside the ${target.length}-byte target`);
    }
    const variant = this.#variantOf(message);
    const size = this.#measure(variant, message);
    if (size > target.length - offset) {
      throw new CodecEncodeError(
        '',
        `a "${variant.name}" message needs ${size} bytes but only ${target.length - offset} are free at offset ${offset}`,
      );
    }
    this.#write(variant, message, target, offset, size);
    return size;
  }

  decode(bytes: Uint8Array, offset = 0, length?: number): M {
    try {
      return this.#read(bytes, offset, length);
    } catch (problem) {
      throw problem instanceof DecodeProblem ? toDecodeError(problem) : problem;
    } finally {
      cursor.bytes = EMPTY;
    }
  }

  tryDecode(bytes: Uint8Array, offset = 0, length?: number): DecodeResult<M> {
    try {
      return { ok: true, message: this.#read(bytes, offset, length) };
    } catch (problem) {
      if (problem instanceof DecodeProblem) return { ok: false, error: toDecodeError(problem) };
      throw problem; // a bug in the codec itself, not bad input
    } finally {
      cursor.bytes = EMPTY;
    }
  }

  describe(): string {
    return this.#byTag
      .map((v) => {
        const { names, fields } = v.fields;
        if (names.length === 0) return `${v.name} {}`;
        return `${v.name} { ${names.map((n, i) => `${n}: ${fields[i]!.describe()}`).join(', ')} }`;
      })
      .join(' | ');
  }

  #variantOf(message: unknown): Variant {
    if (typeof message !== 'object' || message === null) {
      const got = typeof message === 'string' ? JSON.stringify(message) : typeof message;
      throw new CodecEncodeError('', `expected a message object with a "type", got ${got}`);
    }
    const type: unknown = (message as { readonly type?: unknown }).type;
    // Most codecs see one type at a time (an echo, a stream of puts): a string compare, not a probe.
    if (type === this.#lastType && this.#lastVariant !== undefined) return this.#lastVariant;
    const variant = typeof type === 'string' ? this.#byName.get(type) : undefined;
    if (variant === undefined) {
      throw new CodecEncodeError(
        '',
        `unknown message type ${typeof type === 'string' ? JSON.stringify(type) : typeof type}; ` +
          `this codec has ${this.variantNames.join(', ')}`,
      );
    }
    this.#lastType = type as string;
    this.#lastVariant = variant;
    return variant;
  }

  #measure(variant: Variant, message: unknown): number {
    try {
      return 1 + variant.fields.measure(message as Readonly<Record<string, unknown>>);
    } catch (problem) {
      if (problem instanceof ValueProblem) {
        throw new CodecEncodeError(joinPath([variant.name, ...problem.path]), problem.detail);
      }
      throw problem;
    }
  }

  #write(variant: Variant, message: unknown, target: Uint8Array, offset: number, size: number): void {
    target[offset] = variant.tag;
    const end = variant.fields.write(target, offset + 1, message as Readonly<Record<string, unknown>>);
    // Only a message whose getters answer differently between the two passes gets here; the
    // bytes would be wrong, so say so instead of sending them.
    if (end !== offset + size) {
      throw new CodecEncodeError(
        variant.name,
        `message changed while being encoded (${end - offset} ≠ ${size} bytes)`,
      );
    }
  }

  #read(bytes: Uint8Array, offset: number, length: number | undefined): M {
    if (!(bytes instanceof Uint8Array))
      throw new DecodeProblem('out-of-range', 0, 'input must be a Uint8Array');
    if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
      throw new DecodeProblem(
        'out-of-range',
        0,
        `offset ${offset} is outside the ${bytes.length}-byte input`,
      );
    }
    let end = bytes.length;
    if (length !== undefined) {
      if (!Number.isInteger(length) || length < 0) {
        throw new DecodeProblem(
          'out-of-range',
          offset,
          `length must be a non-negative integer, got ${length}`,
        );
      }
      end = offset + length;
      if (end > bytes.length) {
        throw new DecodeProblem(
          'truncated',
          bytes.length,
          `a ${length}-byte message at offset ${offset} runs past the ${bytes.length}-byte input`,
        );
      }
    }
    if (end <= offset)
      throw new DecodeProblem('truncated', offset, 'no bytes: a message needs at least its 1-byte tag');
    const tag = bytes[offset]!;
    const variant = this.#byTag[tag];
    if (variant === undefined) {
      throw new DecodeProblem(
        'unknown-tag',
        offset,
        `unknown tag ${tag}; this codec has tags 0..${this.#byTag.length - 1} (${this.variantNames.join(', ')})`,
      );
    }
    cursor.bytes = bytes;
    cursor.pos = offset + 1;
    cursor.end = end;
    const out: Record<string, unknown> = { type: variant.name };
    try {
      variant.fields.readInto(cursor, out);
    } catch (problem) {
      if (problem instanceof DecodeProblem) problem.path.unshift(variant.name);
      throw problem;
    }
    if (cursor.pos !== end) {
      throw new DecodeProblem(
        'trailing-bytes',
        cursor.pos,
        `${end - cursor.pos} bytes left after a complete "${variant.name}" message`,
      );
    }
    return out as M; // readInto filled exactly the fields the variant declares
  }
}

function toDecodeError(problem: DecodeProblem): CodecDecodeError {
  return new CodecDecodeError(problem.reason, problem.offset, joinPath(problem.path), problem.detail);
}

/**
 * Builds the codec of a tagged union from its schema: variant name → fields (built with `field.*`).
 * Variants get tags in declaration order, so reordering a schema changes its wire form; append new
 * variants at the end to stay compatible. Throws MessageSchemaError for a schema that cannot work.
 */
export function messages<const S extends MessageSchema>(schema: S): MessageCodec<MessageUnion<S>> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new MessageSchemaError(
      'messages(schema) needs an object of variants, e.g. { get: {}, put: { ... } }',
    );
  }
  const entries = Object.entries(schema);
  if (entries.length === 0) throw new MessageSchemaError('a schema needs at least one variant');
  if (entries.length > MAX_VARIANTS) {
    throw new MessageSchemaError(
      `a schema may have at most ${MAX_VARIANTS} variants (u8 tag), got ${entries.length}`,
    );
  }
  const variants = entries.map(([name, spec], tag) => {
    if (name === '' || name === '__proto__') {
      throw new MessageSchemaError(`${JSON.stringify(name)} cannot be a variant name`);
    }
    return new Variant(name, tag, new FieldList(spec, `variant "${name}"`, RESERVED_FIELD_NAMES));
  });
  return new Codec<MessageUnion<S>>(variants);
}
