/**
 * The DMO API as the rest of ipipe sees it (iPipe §3, "Distributed memory objects", Table 4's
 * dmo_malloc / dmo_free / dmo_memset / dmo_memcpy / dmo_memmove in TypeScript's idiom).
 *
 * An actor reaches its state only through a `DmoHeap`: its own region, its own rows of the
 * object table, and object ids — never pointers. Every call checks that the id is live, belongs to
 * this heap's actor, and that the byte range lies inside the object, so an actor can neither read
 * another actor's state nor scribble outside its own objects.
 */

import type { ActorId, ObjectId } from '../ids.ts';

export interface DmoHeapStats {
  /** Bytes of the actor's region, fixed at registration (iPipe gives every actor an equal region). */
  readonly regionBytes: number;
  /** Bytes held by live objects, rounded up to the allocator's block sizes. */
  readonly usedBytes: number;
  /** Bytes still allocatable in total (may be fragmented). */
  readonly freeBytes: number;
  readonly liveObjects: number;
}

/** One row of a side's object table: (object id, actor id, start, size), as in the paper. */
export interface ObjectTableRow {
  readonly objectId: ObjectId;
  readonly actorId: ActorId;
  /** Byte offset of the object's first byte within the side's memory. */
  readonly start: number;
  readonly sizeBytes: number;
}

export interface DmoHeap {
  readonly owner: ActorId;

  /** dmo_malloc: a new zero-filled object of `sizeBytes` bytes. Throws DmoRegionExhaustedError. */
  allocate(sizeBytes: number): ObjectId;
  /** dmo_free: the id (and any copy of it) stops resolving; its bytes return to the region. */
  free(id: ObjectId): void;
  /** Size in bytes the object was allocated with. */
  sizeOf(id: ObjectId): number;
  /** True when `id` names a live object of this heap (never throws). */
  has(id: ObjectId): boolean;

  /** dmo_memset over [offset, offset + length) of one object. */
  fill(id: ObjectId, byte: number, offset?: number, length?: number): void;
  /** dmo_memcpy between two objects of this heap (ranges must not overlap when dst === src). */
  copy(dst: ObjectId, dstOffset: number, src: ObjectId, srcOffset: number, length: number): void;
  /** dmo_memmove: like copy, overlap allowed. */
  move(dst: ObjectId, dstOffset: number, src: ObjectId, srcOffset: number, length: number): void;

  /** Copies bytes out of an object into a fresh array. */
  read(id: ObjectId, offset: number, length: number): Uint8Array;
  /** Copies `bytes` into the object at `offset`. */
  write(id: ObjectId, offset: number, bytes: Uint8Array): void;
  /**
   * A view of the object's bytes (writes through), for trusted fast paths. Its indices cover only
   * the object, but it is a plain typed array over the domain's buffer: nothing checks it after it
   * is made, so it keeps reaching that memory after the object is freed or the heap released (to
   * whoever holds it then), and its `.buffer` is the whole domain. Use read/write or the number
   * accessors where the code is not trusted; see docs/dmo-isolation.md.
   */
  bytes(id: ObjectId): Uint8Array;

  readU8(id: ObjectId, offset: number): number;
  writeU8(id: ObjectId, offset: number, value: number): void;
  readU32(id: ObjectId, offset: number): number;
  writeU32(id: ObjectId, offset: number, value: number): void;
  readI32(id: ObjectId, offset: number): number;
  writeI32(id: ObjectId, offset: number, value: number): void;
  readF64(id: ObjectId, offset: number): number;
  writeF64(id: ObjectId, offset: number, value: number): void;

  /** Live object ids of this actor, in slot order. */
  objects(): IterableIterator<ObjectId>;
  stats(): DmoHeapStats;
}
