/**
 * `field.*`: the constructors apps use to declare the fields of a message schema (iPipe §3
 * "Actors": porting an app means "define request formats").
 *
 *   messages({ put: { key: field.string({ maxBytes: 64 }), value: field.bytes() } })
 *
 * The wire form of each kind is documented beside its implementation: codec-scalars.ts (numbers,
 * bools, ids), codec-text.ts (string, bytes), codec-compound.ts (list, optional, oneOf, struct).
 * Scalar kinds return one shared immutable descriptor; the others build one per call.
 */

import type { ActorId, ObjectId } from '../ids.ts';
import { ListField, OneOfField, OptionalFieldImpl, StructField } from './codec-compound.ts';
import { MessageSchemaError } from './codec-errors.ts';
import type { Field, FieldSpec, OptionalField, StructValue } from './codec-field-base.ts';
import { show } from './codec-field-base.ts';
import {
  ActorIdField,
  BoolField,
  F64Field,
  I32Field,
  I64Field,
  ObjectIdField,
  U8Field,
  U16Field,
  U32Field,
  U64Field,
} from './codec-scalars.ts';
import { BytesField, StringField } from './codec-text.ts';

const U8 = Object.freeze(new U8Field());
const U16 = Object.freeze(new U16Field());
const U32 = Object.freeze(new U32Field());
const I32 = Object.freeze(new I32Field());
const U64 = Object.freeze(new U64Field());
const I64 = Object.freeze(new I64Field());
const F64 = Object.freeze(new F64Field());
const BOOL = Object.freeze(new BoolField());
const ACTOR_ID = Object.freeze(new ActorIdField());
const OBJECT_ID = Object.freeze(new ObjectIdField());

/** Limits of a string or bytes field. */
export interface LengthLimit {
  /** Most bytes a value may take (UTF-8 bytes for strings), refused on encode and on decode. */
  readonly maxBytes?: number;
}

/** Limit of a list field. */
export interface ListLimit {
  /** Most items the list may hold, refused on encode and on decode. */
  readonly maxItems?: number;
}

/** Reads the one option a limit object may have; a misspelt key is refused, not ignored. */
function limitOption(limit: unknown, kind: string, key: string): number | undefined {
  if (limit === undefined) return undefined;
  if (typeof limit !== 'object' || limit === null) {
    throw new MessageSchemaError(`${kind}(options): options must be an object like { ${key}: 64 }`);
  }
  for (const other of Object.keys(limit)) {
    if (other !== key)
      throw new MessageSchemaError(`${kind}(options): unknown option "${other}"; the only one is "${key}"`);
  }
  const value: unknown = (limit as Record<string, unknown>)[key];
  if (value !== undefined && typeof value !== 'number') {
    throw new MessageSchemaError(`${kind} ${key} must be a number, got ${show(value)}`);
  }
  return value;
}

/**
 * Builds field descriptors; re-exported as `field` by codec.ts. Bad limits or arguments throw
 * MessageSchemaError when the schema is defined, not when a message is sent.
 */
export const field = Object.freeze({
  u8: (): Field<number> => U8,
  u16: (): Field<number> => U16,
  u32: (): Field<number> => U32,
  i32: (): Field<number> => I32,
  u64: (): Field<bigint> => U64,
  i64: (): Field<bigint> => I64,
  f64: (): Field<number> => F64,
  bool: (): Field<boolean> => BOOL,
  string: (limit?: LengthLimit): Field<string> => new StringField(limitOption(limit, 'string', 'maxBytes')),
  bytes: (limit?: LengthLimit): Field<Uint8Array> => new BytesField(limitOption(limit, 'bytes', 'maxBytes')),
  actorId: (): Field<ActorId> => ACTOR_ID,
  objectId: (): Field<ObjectId> => OBJECT_ID,
  list: <T>(of: Field<T>, limit?: ListLimit): Field<readonly T[]> =>
    new ListField(of, limitOption(limit, 'list', 'maxItems')),
  optional: <T>(of: Field<T>): OptionalField<T> => new OptionalFieldImpl(of),
  struct: <const S extends FieldSpec>(fields: S): Field<StructValue<S>> => new StructField(fields),
  oneOf: <const V extends readonly [string, ...string[]]>(values: V): Field<V[number]> =>
    new OneOfField<V[number]>(values),
});
