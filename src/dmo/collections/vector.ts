/**
 * `DmoVector`: a growable array of fixed-size elements in DMOs (iPipe §3 "Distributed memory
 * objects"; e.g. the ranker's top-n array of §5's real-time analytics, or a Paxos acceptor's
 * per-slot ballots).
 *
 * Objects and links (local ids: generation·2^24 + slot, owner implied; 0 = none):
 *
 *   root  (32 B)  [magic, version, element kind, elementBytes, length, capacity, data link, –]
 *   data  (capacity × elementBytes B)  elements back to back; grows ×2 by reallocation
 *
 * Element kinds: 'u32', 'i32', 'f64' (numbers, read and written through the number methods) or
 * 'bytes' with a fixed `elementBytes` (through the byte methods). Numbers are little-endian; data
 * objects start 16-byte aligned, so u32 and f64 elements are read with aligned typed-array loads.
 * An index outside [0, length) throws DmoOutOfBoundsError, like any access outside an object.
 */

import { DmoCollectionFormatError, DmoInvalidSizeError, DmoOutOfBoundsError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import { regionOf } from '../heap.ts';
import type { Region } from '../region.ts';
import type { DmoHeap } from '../types.ts';
import { checkRoot, initRoot } from './collection-header.ts';

const ROOT_BYTES = 32;
const ROOT = { kind: 2, elementBytes: 3, length: 4, capacity: 5, data: 6 } as const;
const DEFAULT_CAPACITY = 8;

/** Element kinds and their stored codes. */
const KIND_CODES = { u32: 1, i32: 2, f64: 3, bytes: 4 } as const;

/** What a vector holds. */
export type DmoVectorElement = 'u32' | 'i32' | 'f64' | 'bytes';

/** How a vector starts. */
export interface DmoVectorOptions {
  readonly element: DmoVectorElement;
  /** Bytes per element; required for 'bytes' (≥ 1), implied for the number kinds. */
  readonly elementBytes?: number;
  /** Elements of room to start with (default 8). */
  readonly initialCapacity?: number;
}

/** A vector of fixed-size elements stored in one actor's DMOs; re-open it by `rootId`. */
export class DmoVector {
  /** The root object's id: keep it to re-open the vector. */
  readonly rootId: ObjectId;
  readonly element: DmoVectorElement;
  readonly elementBytes: number;
  readonly #region: Region;
  readonly #rootLocal: number;
  readonly #kindCode: number;

  private constructor(region: Region, rootId: ObjectId) {
    this.#region = region;
    this.rootId = rootId;
    this.#rootLocal = region.localOf(rootId);
    const root = region.startOf(rootId) >>> 2;
    this.#kindCode = region.u32[root + ROOT.kind]!;
    this.elementBytes = region.u32[root + ROOT.elementBytes]!;
    const element = (Object.keys(KIND_CODES) as DmoVectorElement[]).find(
      (k) => KIND_CODES[k] === this.#kindCode,
    );
    if (element === undefined) {
      throw new DmoCollectionFormatError(`DmoVector ${rootId} has unknown element kind ${this.#kindCode}`);
    }
    this.element = element;
    const impliedBytes = element === 'f64' ? 8 : element === 'bytes' ? this.elementBytes : 4;
    if (this.elementBytes < 1 || this.elementBytes !== impliedBytes) {
      throw new DmoCollectionFormatError(
        `DmoVector ${rootId} has elementBytes ${this.elementBytes} for ${element}`,
      );
    }
  }

  /** A new empty vector in `heap`. */
  static create(heap: DmoHeap, options: DmoVectorOptions): DmoVector {
    const region = regionOf(heap);
    const elementBytes =
      options.element === 'bytes' ? (options.elementBytes ?? 0) : options.element === 'f64' ? 8 : 4;
    if (!Number.isInteger(elementBytes) || elementBytes < 1 || elementBytes > 2 ** 24) {
      throw new DmoInvalidSizeError('vector elementBytes', elementBytes);
    }
    if (
      options.element !== 'bytes' &&
      options.elementBytes !== undefined &&
      options.elementBytes !== elementBytes
    ) {
      throw new DmoInvalidSizeError(`elementBytes of a ${options.element} vector`, options.elementBytes);
    }
    const capacity = options.initialCapacity ?? DEFAULT_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new DmoInvalidSizeError('vector initial capacity', capacity);
    }
    const dataId = region.allocate(capacity * elementBytes);
    let rootId: ObjectId;
    try {
      rootId = region.allocate(ROOT_BYTES);
    } catch (error) {
      region.free(dataId);
      throw error;
    }
    const root = initRoot(region, rootId, 'vector');
    region.u32[root + ROOT.kind] = KIND_CODES[options.element];
    region.u32[root + ROOT.elementBytes] = elementBytes;
    region.u32[root + ROOT.capacity] = capacity;
    region.u32[root + ROOT.data] = region.localOf(dataId);
    return new DmoVector(region, rootId);
  }

  /** Re-opens the vector whose root is `rootId`. */
  static open(heap: DmoHeap, rootId: ObjectId): DmoVector {
    const region = regionOf(heap);
    checkRoot(region, rootId, 'vector', ROOT_BYTES);
    return new DmoVector(region, rootId);
  }

  get length(): number {
    return this.#region.u32[this.#rootWord() + ROOT.length]!;
  }

  get capacity(): number {
    return this.#region.u32[this.#rootWord() + ROOT.capacity]!;
  }

  /** Element `index` of a number vector. */
  get(index: number): number {
    const at = this.#elementStart(index, true);
    const region = this.#region;
    switch (this.#kindCode) {
      case KIND_CODES.f64:
        return region.f64[at >>> 3]!;
      case KIND_CODES.u32:
        return region.u32[at >>> 2]!;
      default:
        return region.view.getInt32(at, true);
    }
  }

  /** Overwrites element `index` of a number vector (stored as the vector's kind converts it). */
  set(index: number, value: number): void {
    const at = this.#elementStart(index, true);
    this.#storeNumber(at, value);
  }

  /** Appends a number; returns the new length. */
  push(value: number): number {
    this.#numberKind();
    const index = this.#reserveOne();
    this.#storeNumber(this.#elementStart(index, true), value);
    return index + 1;
  }

  /** Removes and returns the last number, or undefined when empty. */
  pop(): number | undefined {
    this.#numberKind();
    const length = this.length;
    if (length === 0) return undefined;
    const value = this.get(length - 1);
    this.#region.u32[this.#rootWord() + ROOT.length] = length - 1;
    return value;
  }

  /** A copy of element `index` of a bytes vector. */
  getBytes(index: number): Uint8Array {
    const at = this.#elementStart(index, false);
    return this.#region.u8.slice(at, at + this.elementBytes);
  }

  /** Copies element `index` of a bytes vector into `target` at `targetOffset` (must fit). */
  getBytesInto(index: number, target: Uint8Array, targetOffset = 0): void {
    const at = this.#elementStart(index, false);
    if (targetOffset >>> 0 !== targetOffset || targetOffset + this.elementBytes > target.length) {
      throw new DmoInvalidSizeError('room in the target for one element', target.length - targetOffset);
    }
    target.set(this.#region.u8.subarray(at, at + this.elementBytes), targetOffset);
  }

  /** Overwrites element `index` of a bytes vector; `bytes` must be exactly elementBytes long. */
  setBytes(index: number, bytes: Uint8Array): void {
    this.#checkElementLength(bytes);
    this.#region.u8.set(bytes, this.#elementStart(index, false));
  }

  /** Appends an element to a bytes vector; returns the new length. */
  pushBytes(bytes: Uint8Array): number {
    this.#bytesKind();
    this.#checkElementLength(bytes);
    const index = this.#reserveOne();
    this.#region.u8.set(bytes, this.#elementStart(index, false));
    return index + 1;
  }

  /** Removes and returns the last element of a bytes vector, or undefined when empty. */
  popBytes(): Uint8Array | undefined {
    this.#bytesKind();
    const length = this.length;
    if (length === 0) return undefined;
    const value = this.getBytes(length - 1);
    this.#region.u32[this.#rootWord() + ROOT.length] = length - 1;
    return value;
  }

  /** Makes room for at least `capacity` elements (one reallocation). */
  reserve(capacity: number): void {
    if (!Number.isInteger(capacity) || capacity < 0)
      throw new DmoInvalidSizeError('vector capacity', capacity);
    if (capacity > this.capacity) this.#resize(capacity);
  }

  /** Sets the length to `length` ≤ the current one (shrinking never frees). */
  truncate(length: number): void {
    const current = this.length;
    if (length >>> 0 !== length || length > current) {
      throw new DmoInvalidSizeError(`vector length (≤ ${current})`, length);
    }
    this.#region.u32[this.#rootWord() + ROOT.length] = length;
  }

  clear(): void {
    this.truncate(0);
  }

  /** The elements of a number vector as a plain array (a copy). */
  toArray(): number[] {
    const out: number[] = [];
    const length = this.length;
    for (let i = 0; i < length; i++) out.push(this.get(i));
    return out;
  }

  /** Frees the vector's objects; it must not be used afterwards. */
  destroy(): void {
    const region = this.#region;
    region.free(region.idOf(region.u32[this.#rootWord() + ROOT.data]!));
    region.free(this.rootId);
  }

  #rootWord(): number {
    return this.#region.startOfLocal(this.#rootLocal) >>> 2;
  }

  /** Start of the data object, after checking that the stored capacity and length fit it. */
  #dataStart(root: number): number {
    const region = this.#region;
    const u32 = region.u32;
    const link = u32[root + ROOT.data]!;
    const row = region.lookupLinked(link);
    if (row < 0) region.failLookup(region.idOf(link));
    const capacity = u32[root + ROOT.capacity]!;
    if (capacity * this.elementBytes > region.rowSize(row) || u32[root + ROOT.length]! > capacity) {
      throw new DmoCollectionFormatError(
        `DmoVector ${this.rootId} is damaged: its data does not fit its object`,
      );
    }
    return region.rowStart(row);
  }

  /** Absolute byte start of element `index`; checks the index and the kind of access. */
  #elementStart(index: number, numeric: boolean): number {
    if (numeric) this.#numberKind();
    else this.#bytesKind();
    const region = this.#region;
    const root = this.#rootWord();
    const length = region.u32[root + ROOT.length]!;
    const dataLink = region.u32[root + ROOT.data]!;
    if (index >>> 0 !== index || index >= length) {
      throw new DmoOutOfBoundsError(
        region.idOf(dataLink),
        index * this.elementBytes,
        this.elementBytes,
        length * this.elementBytes,
      );
    }
    return this.#dataStart(root) + index * this.elementBytes;
  }

  #storeNumber(at: number, value: number): void {
    const region = this.#region;
    switch (this.#kindCode) {
      case KIND_CODES.f64:
        region.f64[at >>> 3] = value;
        return;
      case KIND_CODES.u32:
        region.u32[at >>> 2] = value;
        return;
      default:
        region.view.setInt32(at, value, true);
    }
  }

  /** Grows if full, bumps the length, and returns the new element's index. */
  #reserveOne(): number {
    const u32 = this.#region.u32;
    let root = this.#rootWord();
    const length = u32[root + ROOT.length]!;
    if (length === u32[root + ROOT.capacity]) {
      this.#resize(Math.max(1, length * 2));
      root = this.#rootWord();
    }
    u32[root + ROOT.length] = length + 1;
    return length;
  }

  /** Moves the elements to a new data object of `capacity` elements. */
  #resize(capacity: number): void {
    const region = this.#region;
    const u32 = region.u32;
    const root = this.#rootWord();
    const newId = region.allocate(capacity * this.elementBytes);
    const oldLink = u32[root + ROOT.data]!;
    const oldStart = this.#dataStart(root);
    const bytes = u32[root + ROOT.length]! * this.elementBytes;
    region.u8.copyWithin(region.startOf(newId), oldStart, oldStart + bytes);
    u32[root + ROOT.capacity] = capacity;
    u32[root + ROOT.data] = region.localOf(newId);
    region.free(region.idOf(oldLink));
  }

  #checkElementLength(bytes: Uint8Array): void {
    if (bytes.length !== this.elementBytes) {
      throw new DmoInvalidSizeError(`element length (must be ${this.elementBytes})`, bytes.length);
    }
  }

  #numberKind(): void {
    if (this.#kindCode === KIND_CODES.bytes) {
      throw new DmoCollectionFormatError(
        'this DmoVector holds byte elements: use getBytes/setBytes/pushBytes',
      );
    }
  }

  #bytesKind(): void {
    if (this.#kindCode !== KIND_CODES.bytes) {
      throw new DmoCollectionFormatError(`this DmoVector holds ${this.element} numbers: use get/set/push`);
    }
  }
}
