/**
 * Compound field kinds of the message codec — list, optional, oneOf, struct — and `FieldList`,
 * the flattened fields of a struct or of one message variant (iPipe §3 "Actors": request formats).
 *
 *   list(of) ....... u32 item count, then the items
 *   optional(of) ... u8 presence (0 absent, 1 present), then the value when present
 *   oneOf([...]) ... u8 index into the declared values
 *   struct({...}) .. the fields in declaration order, no header
 *
 * Each container catches its children's problems and prepends its part of the path
 * (`entries[3].key`), so an error names the exact value at fault.
 */

import { MessageSchemaError } from './codec-errors.ts';
import {
  BaseField,
  checkLimit,
  DecodeProblem,
  type Field,
  type FieldSpec,
  isField,
  need,
  type OptionalField,
  type ReadCursor,
  readU32At,
  type StructValue,
  show,
  U32_MAX,
  ValueProblem,
  writeU32,
} from './codec-field-base.ts';

export class ListField<T> extends BaseField<readonly T[]> {
  readonly kind = 'list';
  readonly minBytes = 4;
  readonly fixedBytes = undefined;
  readonly of: Field<T>;
  readonly maxItems: number;
  constructor(of: Field<T>, maxItems: number | undefined) {
    super();
    if (!isField(of)) throw new MessageSchemaError('list(of) needs a field built with field.*');
    this.of = of;
    this.maxItems = checkLimit('list maxItems', maxItems) ?? U32_MAX;
  }
  describe(): string {
    const limit = this.maxItems === U32_MAX ? '' : `, maxItems=${this.maxItems}`;
    return `list(${this.of.describe()}${limit})`;
  }
  measure(value: unknown): number {
    if (!Array.isArray(value)) throw new ValueProblem(`expected an array, got ${show(value)}`);
    const count = value.length;
    if (count > this.maxItems) {
      throw new ValueProblem(`list has ${count} items, over its limit of ${this.maxItems}`);
    }
    const of = this.of;
    if (of.fixedBytes !== undefined) {
      // Fixed-size items: validate each, but the size is a product.
      for (let i = 0; i < count; i++) measureItem(of, value, i);
      return 4 + count * of.fixedBytes;
    }
    let size = 4;
    for (let i = 0; i < count; i++) size += measureItem(of, value, i);
    return size;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    const items = value as readonly unknown[];
    const count = items.length;
    writeU32(target, pos, count);
    pos += 4;
    const of = this.of;
    for (let i = 0; i < count; i++) pos = of.write(target, pos, items[i]);
    return pos;
  }
  read(cursor: ReadCursor): readonly T[] {
    need(cursor, 4, 'list count');
    const start = cursor.pos;
    const count = readU32At(cursor.bytes, start);
    if (count > this.maxItems) {
      throw new DecodeProblem(
        'too-long',
        start,
        `list of ${count} items is over its limit of ${this.maxItems}`,
      );
    }
    cursor.pos += 4;
    const of = this.of;
    // Every item takes at least minBytes (≥ 1: empty structs are refused), so a hostile count
    // is refused here instead of allocating a huge array.
    need(cursor, count * of.minBytes, `list of ${count} items`);
    const out = new Array<T>(count);
    for (let i = 0; i < count; i++) {
      try {
        out[i] = of.read(cursor);
      } catch (problem) {
        if (problem instanceof DecodeProblem) problem.path.unshift(`[${i}]`);
        throw problem;
      }
    }
    return out;
  }
}

function measureItem(of: Field<unknown>, items: readonly unknown[], index: number): number {
  try {
    return of.measure(items[index]);
  } catch (problem) {
    if (problem instanceof ValueProblem) problem.path.unshift(`[${index}]`);
    throw problem;
  }
}

export class OptionalFieldImpl<T> extends BaseField<T | undefined> implements OptionalField<T> {
  readonly kind = 'optional';
  readonly minBytes = 1;
  readonly fixedBytes = undefined;
  readonly of: Field<T>;
  constructor(of: Field<T>) {
    super();
    if (!isField(of)) throw new MessageSchemaError('optional(of) needs a field built with field.*');
    // optional(optional(x)) could not tell "absent" from "present but absent" in a message.
    if (of.kind === 'optional')
      throw new MessageSchemaError('optional(optional(...)) is ambiguous; use one optional');
    this.of = of;
  }
  describe(): string {
    return `optional(${this.of.describe()})`;
  }
  measure(value: unknown): number {
    return value === undefined ? 1 : 1 + this.of.measure(value);
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    if (value === undefined) {
      target[pos] = 0;
      return pos + 1;
    }
    target[pos] = 1;
    return this.of.write(target, pos + 1, value);
  }
  read(cursor: ReadCursor): T | undefined {
    need(cursor, 1, 'optional presence byte');
    const flag = cursor.bytes[cursor.pos]!;
    if (flag > 1) {
      throw new DecodeProblem(
        'out-of-range',
        cursor.pos,
        `optional presence byte must be 0 or 1, got ${flag}`,
      );
    }
    cursor.pos++;
    return flag === 0 ? undefined : this.of.read(cursor);
  }
}

export class OneOfField<V extends string> extends BaseField<V> {
  readonly kind = 'oneOf';
  readonly minBytes = 1;
  readonly fixedBytes = 1;
  readonly values: readonly V[];
  readonly #indexOf: ReadonlyMap<string, number>;
  constructor(values: readonly V[]) {
    super();
    if (!Array.isArray(values) || values.length === 0 || values.length > 256) {
      throw new MessageSchemaError('oneOf(values) needs an array of 1 to 256 strings');
    }
    const indexOf = new Map<string, number>();
    values.forEach((value, index) => {
      if (typeof value !== 'string') throw new MessageSchemaError(`oneOf value ${index} is not a string`);
      if (indexOf.has(value))
        throw new MessageSchemaError(`oneOf value ${JSON.stringify(value)} appears twice`);
      indexOf.set(value, index);
    });
    this.values = Object.freeze([...values]);
    this.#indexOf = indexOf;
  }
  describe(): string {
    return `oneOf(${this.values.map((v) => JSON.stringify(v)).join('|')})`;
  }
  measure(value: unknown): number {
    if (typeof value !== 'string' || !this.#indexOf.has(value)) {
      throw new ValueProblem(
        `expected one of ${this.values.map((v) => JSON.stringify(v)).join(', ')}, got ${show(value)}`,
      );
    }
    return 1;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    target[pos] = this.#indexOf.get(value as string)!;
    return pos + 1;
  }
  read(cursor: ReadCursor): V {
    need(cursor, 1, 'oneOf index');
    const index = cursor.bytes[cursor.pos]!;
    const value = this.values[index];
    if (value === undefined) {
      throw new DecodeProblem(
        'out-of-range',
        cursor.pos,
        `oneOf index ${index} ≥ ${this.values.length} values`,
      );
    }
    cursor.pos++;
    return value;
  }
}

/** Names that must not become keys of a decoded object (they would rewrite its prototype). */
const FORBIDDEN_NAMES = new Set(['__proto__']);

/**
 * The fields of a struct or of one message variant, flattened into parallel arrays once, so the
 * per-message loops index arrays instead of walking an object's keys.
 */
export class FieldList {
  readonly names: readonly string[];
  readonly fields: readonly Field<unknown>[];
  readonly #optional: readonly boolean[];
  readonly #measureFields: (value: Readonly<Record<string, unknown>>) => number;
  /** Sum of the fields' sizes when every one is fixed, else undefined. */
  readonly fixedBytes: number | undefined;
  readonly minBytes: number;

  constructor(spec: unknown, context: string, reserved: ReadonlySet<string>) {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      throw new MessageSchemaError(`${context}: expected an object of fields, got ${show(spec)}`);
    }
    const names: string[] = [];
    const fields: Field<unknown>[] = [];
    let fixedBytes: number | undefined = 0;
    let minBytes = 0;
    for (const [name, candidate] of Object.entries(spec)) {
      if (FORBIDDEN_NAMES.has(name) || reserved.has(name)) {
        throw new MessageSchemaError(`${context}: "${name}" cannot be a field name`);
      }
      if (!isField(candidate)) {
        throw new MessageSchemaError(
          `${context}: field "${name}" is not a field; build it with field.u32(), field.string(), ...`,
        );
      }
      names.push(name);
      fields.push(candidate);
      minBytes += candidate.minBytes;
      fixedBytes =
        fixedBytes === undefined || candidate.fixedBytes === undefined
          ? undefined
          : fixedBytes + candidate.fixedBytes;
    }
    this.names = Object.freeze(names);
    this.fields = Object.freeze(fields);
    this.#measureFields = compileMeasure(this.names, this.fields) ?? ((value) => this.#measureLoop(value));
    this.#optional = Object.freeze(fields.map((f) => f.kind === 'optional'));
    this.fixedBytes = fixedBytes;
    this.minBytes = minBytes;
  }

  get length(): number {
    return this.names.length;
  }

  /** Validates every field of `value` and returns their total size. */
  measure(value: Readonly<Record<string, unknown>>): number {
    const size = this.#measureFields(value);
    return this.fixedBytes ?? size;
  }

  #measureLoop(value: Readonly<Record<string, unknown>>): number {
    const { names, fields } = this;
    let size = 0;
    let i = 0;
    try {
      for (; i < names.length; i++) size += fields[i]!.measure(value[names[i]!]);
    } catch (problem) {
      if (problem instanceof ValueProblem) problem.path.unshift(names[i]!);
      throw problem;
    }
    return size;
  }

  write(target: Uint8Array, pos: number, value: Readonly<Record<string, unknown>>): number {
    const { names, fields } = this;
    for (let i = 0; i < names.length; i++) pos = fields[i]!.write(target, pos, value[names[i]!]);
    return pos;
  }

  /** Reads every field into `out` (absent optional fields are left out, not set to undefined). */
  readInto(cursor: ReadCursor, out: Record<string, unknown>): void {
    const { names, fields } = this;
    const optional = this.#optional;
    let i = 0;
    try {
      for (; i < names.length; i++) {
        const value = fields[i]!.read(cursor);
        if (value !== undefined || !optional[i]) out[names[i]!] = value;
      }
    } catch (problem) {
      if (problem instanceof DecodeProblem) problem.path.unshift(names[i]!);
      throw problem;
    }
  }
}

/**
 * `FieldList.measure` for one list as straight-line code: a load of each field by its constant name
 * and a call to that field's own `measure`. The loop over `names` does the same work, but its one
 * keyed load and one call site serve every message type of every actor, so V8 sees them
 * megamorphic (a hash probe per field and calls it cannot inline: an eighth of a simulated echo
 * packet's instructions, measured with Cachegrind); here each list has its own sites, each seeing
 * one name and one field class. Names enter the source only as JSON string literals. Returns
 * undefined where code generation from strings is disabled (`--disallow-code-generation-from-strings`):
 * then the loop serves.
 */
function compileMeasure(
  names: readonly string[],
  fields: readonly Field<unknown>[],
): ((value: Readonly<Record<string, unknown>>) => number) | undefined {
  const params = fields.map((_, i) => `f${i}`);
  const steps = names.map(
    (name, i) => `    at = ${i};\n    size += f${i}.measure(value[${JSON.stringify(name)}]);`,
  );
  // Strict, like every module function: a sloppy callee makes each call check and convert its
  // receiver (CallFunction_ReceiverIsAny did, twice per simulated echo packet).
  const body = `return function measureFields(value) {
  'use strict';
  let size = 0;
  let at = 0;
  try {
${steps.join('\n')}
  } catch (problem) {
    if (problem instanceof ValueProblem) problem.path.unshift(names[at]);
    throw problem;
  }
  return size;
};`;
  try {
    const build = new Function('ValueProblem', 'names', ...params, body) as (
      ...args: unknown[]
    ) => (value: Readonly<Record<string, unknown>>) => number;
    return build(ValueProblem, names, ...fields);
  } catch (problem) {
    if (problem instanceof EvalError) return undefined;
    throw problem;
  }
}

const NO_RESERVED_NAMES: ReadonlySet<string> = new Set();

export class StructField<S extends FieldSpec> extends BaseField<StructValue<S>> {
  readonly kind = 'struct';
  readonly minBytes: number;
  readonly fixedBytes: number | undefined;
  readonly #list: FieldList;
  constructor(spec: S) {
    super();
    this.#list = new FieldList(spec, 'struct', NO_RESERVED_NAMES);
    // An empty struct takes no bytes, which would let list(struct({})) claim 4 billion items
    // in 4 bytes; it carries nothing anyway.
    if (this.#list.length === 0)
      throw new MessageSchemaError('struct({}) has no fields; a struct needs at least one');
    this.minBytes = this.#list.minBytes;
    this.fixedBytes = this.#list.fixedBytes;
  }
  describe(): string {
    const list = this.#list;
    return `struct({ ${list.names.map((n, i) => `${n}: ${list.fields[i]!.describe()}`).join(', ')} })`;
  }
  measure(value: unknown): number {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) {
      throw new ValueProblem(`expected an object, got ${show(value)}`);
    }
    return this.#list.measure(value as Readonly<Record<string, unknown>>);
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    return this.#list.write(target, pos, value as Readonly<Record<string, unknown>>);
  }
  read(cursor: ReadCursor): StructValue<S> {
    const out: Record<string, unknown> = {};
    this.#list.readInto(cursor, out);
    return out as StructValue<S>; // readInto filled exactly the keys StructValue<S> describes
  }
}
