/**
 * Fixed-size field kinds of the message codec: u8, u16, u32, i32, u64, i64, f64, bool, actorId,
 * objectId (iPipe §3 "Actors": request formats). All little-endian:
 *
 *   u8 u16 u32 i32 ........ 1 / 2 / 4 / 4 bytes
 *   u64 i64 (bigint) ...... 8 bytes
 *   f64 ................... 8 bytes, IEEE 754 (NaN and -0 survive)
 *   bool .................. 1 byte, 0 or 1 (anything else is refused on decode)
 *   actorId ............... u32, at most MAX_ACTOR_ID
 *   objectId .............. f64 holding a non-negative safe integer (ids.ts: ids are stored as
 *                           float64 in DMOs and on the wire, so no conversion happens at the edge)
 *
 * Integer fields accept -0 and write it as 0 (the bytes stay canonical).
 */

import type { ActorId, ObjectId } from '../ids.ts';
import { MAX_ACTOR_ID } from '../ids.ts';
import {
  BaseField,
  DecodeProblem,
  need,
  type ReadCursor,
  readU32At,
  show,
  U32_MAX,
  ValueProblem,
  writeU32,
} from './codec-field-base.ts';

// f64 / 64-bit integers go through one 8-byte scratch with a DataView set to little-endian, so
// the wire order is right on any host and no per-value DataView is allocated.
const scratchBytes = new Uint8Array(8);
const scratchView = new DataView(scratchBytes.buffer);

function copyScratchOut(target: Uint8Array, pos: number): void {
  for (let i = 0; i < 8; i++) target[pos + i] = scratchBytes[i]!;
}

function copyScratchIn(source: Uint8Array, pos: number): void {
  for (let i = 0; i < 8; i++) scratchBytes[i] = source[pos + i]!;
}

export class U8Field extends BaseField<number> {
  readonly kind = 'u8';
  readonly minBytes = 1;
  readonly fixedBytes = 1;
  describe(): string {
    return 'u8';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number' || (value & 0xff) !== value) {
      throw new ValueProblem(`expected an integer in [0, 255] (u8), got ${show(value)}`);
    }
    return 1;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    target[pos] = value as number;
    return pos + 1;
  }
  read(cursor: ReadCursor): number {
    need(cursor, 1, 'u8');
    return cursor.bytes[cursor.pos++]!;
  }
}

export class U16Field extends BaseField<number> {
  readonly kind = 'u16';
  readonly minBytes = 2;
  readonly fixedBytes = 2;
  describe(): string {
    return 'u16';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number' || (value & 0xffff) !== value) {
      throw new ValueProblem(`expected an integer in [0, 65535] (u16), got ${show(value)}`);
    }
    return 2;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    const v = value as number;
    target[pos] = v;
    target[pos + 1] = v >>> 8;
    return pos + 2;
  }
  read(cursor: ReadCursor): number {
    need(cursor, 2, 'u16');
    const { bytes, pos } = cursor;
    cursor.pos = pos + 2;
    return bytes[pos]! | (bytes[pos + 1]! << 8);
  }
}

export class U32Field extends BaseField<number> {
  readonly kind = 'u32';
  readonly minBytes = 4;
  readonly fixedBytes = 4;
  describe(): string {
    return 'u32';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number' || value >>> 0 !== value) {
      throw new ValueProblem(`expected an integer in [0, ${U32_MAX}] (u32), got ${show(value)}`);
    }
    return 4;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    writeU32(target, pos, value as number);
    return pos + 4;
  }
  read(cursor: ReadCursor): number {
    need(cursor, 4, 'u32');
    const value = readU32At(cursor.bytes, cursor.pos);
    cursor.pos += 4;
    return value;
  }
}

export class I32Field extends BaseField<number> {
  readonly kind = 'i32';
  readonly minBytes = 4;
  readonly fixedBytes = 4;
  describe(): string {
    return 'i32';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number' || (value | 0) !== value) {
      throw new ValueProblem(`expected an integer in [-2147483648, 2147483647] (i32), got ${show(value)}`);
    }
    return 4;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    writeU32(target, pos, value as number);
    return pos + 4;
  }
  read(cursor: ReadCursor): number {
    need(cursor, 4, 'i32');
    const value = readU32At(cursor.bytes, cursor.pos) | 0;
    cursor.pos += 4;
    return value;
  }
}

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

export class U64Field extends BaseField<bigint> {
  readonly kind = 'u64';
  readonly minBytes = 8;
  readonly fixedBytes = 8;
  describe(): string {
    return 'u64';
  }
  measure(value: unknown): number {
    if (typeof value !== 'bigint' || value < 0n || value > U64_MAX) {
      throw new ValueProblem(`expected a bigint in [0, 2^64 - 1] (u64), got ${show(value)}`);
    }
    return 8;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    scratchView.setBigUint64(0, value as bigint, true);
    copyScratchOut(target, pos);
    return pos + 8;
  }
  read(cursor: ReadCursor): bigint {
    need(cursor, 8, 'u64');
    copyScratchIn(cursor.bytes, cursor.pos);
    cursor.pos += 8;
    return scratchView.getBigUint64(0, true);
  }
}

export class I64Field extends BaseField<bigint> {
  readonly kind = 'i64';
  readonly minBytes = 8;
  readonly fixedBytes = 8;
  describe(): string {
    return 'i64';
  }
  measure(value: unknown): number {
    if (typeof value !== 'bigint' || value < I64_MIN || value > I64_MAX) {
      throw new ValueProblem(`expected a bigint in [-2^63, 2^63 - 1] (i64), got ${show(value)}`);
    }
    return 8;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    scratchView.setBigInt64(0, value as bigint, true);
    copyScratchOut(target, pos);
    return pos + 8;
  }
  read(cursor: ReadCursor): bigint {
    need(cursor, 8, 'i64');
    copyScratchIn(cursor.bytes, cursor.pos);
    cursor.pos += 8;
    return scratchView.getBigInt64(0, true);
  }
}

export class F64Field extends BaseField<number> {
  readonly kind = 'f64';
  readonly minBytes = 8;
  readonly fixedBytes = 8;
  describe(): string {
    return 'f64';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number') throw new ValueProblem(`expected a number (f64), got ${show(value)}`);
    return 8;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    scratchView.setFloat64(0, value as number, true);
    copyScratchOut(target, pos);
    return pos + 8;
  }
  read(cursor: ReadCursor): number {
    need(cursor, 8, 'f64');
    copyScratchIn(cursor.bytes, cursor.pos);
    cursor.pos += 8;
    return scratchView.getFloat64(0, true);
  }
}

export class BoolField extends BaseField<boolean> {
  readonly kind = 'bool';
  readonly minBytes = 1;
  readonly fixedBytes = 1;
  describe(): string {
    return 'bool';
  }
  measure(value: unknown): number {
    if (typeof value !== 'boolean') throw new ValueProblem(`expected a boolean, got ${show(value)}`);
    return 1;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    target[pos] = value ? 1 : 0;
    return pos + 1;
  }
  read(cursor: ReadCursor): boolean {
    need(cursor, 1, 'bool');
    const byte = cursor.bytes[cursor.pos]!;
    // Refusing 2..255 keeps one byte string per value: a corrupted flag is caught, not read as true.
    if (byte > 1)
      throw new DecodeProblem('out-of-range', cursor.pos, `bool byte must be 0 or 1, got ${byte}`);
    cursor.pos++;
    return byte === 1;
  }
}

export class ActorIdField extends BaseField<ActorId> {
  readonly kind = 'actorId';
  readonly minBytes = 4;
  readonly fixedBytes = 4;
  describe(): string {
    return 'actorId';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number' || value >>> 0 !== value || value > MAX_ACTOR_ID) {
      throw new ValueProblem(`expected an actor id, an integer in [0, ${MAX_ACTOR_ID}], got ${show(value)}`);
    }
    return 4;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    writeU32(target, pos, value as number);
    return pos + 4;
  }
  read(cursor: ReadCursor): ActorId {
    need(cursor, 4, 'actorId');
    const value = readU32At(cursor.bytes, cursor.pos);
    if (value > MAX_ACTOR_ID) {
      throw new DecodeProblem('out-of-range', cursor.pos, `actor id ${value} exceeds ${MAX_ACTOR_ID}`);
    }
    cursor.pos += 4;
    return value as ActorId;
  }
}

export class ObjectIdField extends BaseField<ObjectId> {
  readonly kind = 'objectId';
  readonly minBytes = 8;
  readonly fixedBytes = 8;
  describe(): string {
    return 'objectId';
  }
  measure(value: unknown): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw new ValueProblem(`expected an object id, a non-negative safe integer, got ${show(value)}`);
    }
    return 8;
  }
  write(target: Uint8Array, pos: number, value: unknown): number {
    // +0 turns a -0 (which passed isSafeInteger) into 0, so the bytes are canonical.
    scratchView.setFloat64(0, (value as number) + 0, true);
    copyScratchOut(target, pos);
    return pos + 8;
  }
  read(cursor: ReadCursor): ObjectId {
    need(cursor, 8, 'objectId');
    copyScratchIn(cursor.bytes, cursor.pos);
    const value = scratchView.getFloat64(0, true);
    if (!Number.isSafeInteger(value) || value < 0 || Object.is(value, -0)) {
      throw new DecodeProblem(
        'out-of-range',
        cursor.pos,
        `object id must be a non-negative safe integer, got ${value}`,
      );
    }
    cursor.pos += 8;
    return value as ObjectId;
  }
}
