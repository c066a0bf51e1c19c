/**
 * An actor's runtime state — roots, pending timers, id counters — kept inside its own DMO heap
 * (the live platform). Any worker thread of a domain that attaches the domain's memory sees the
 * same state, and a migration that moves the heap moves this with it: nothing of the actor lives
 * in one thread's JS memory.
 *
 *   directory (the heap's first object, slot 1):
 *   [magic u32][version u32][roots map id f64][timers map id f64][next timer id u32][next request id u32]
 *   roots:  DmoHashMap  name (UTF-8)     → object id (f64)
 *   timers: DmoHashMap  timer id (u32)   → [due ns f64][origin …][message, the actor's own codec]
 *
 * Concurrency: an exclusive actor runs on one core at a time, so its state needs no lock. A
 * non-exclusive actor that sets timers or roots from several cores at once must serialise those
 * calls itself (iPipe leaves an actor's concurrency control to the actor).
 */

import type { MessageCodec } from '../actor/codec.ts';
import type { PendingTimer, TimerId } from '../actor/context.ts';
import { DmoHashMap } from '../dmo/collections/hash-map.ts';
import type { DmoHeap } from '../dmo/types.ts';
import { DmoCollectionFormatError } from '../errors.ts';
import { makeObjectId, type ObjectId } from '../ids.ts';
import type { ActorStateStore } from './actor-state.ts';
import { originSize, readOrigin, writeOrigin } from './origin-codec.ts';

const MAGIC = 0x53545431; // "STT1"
const VERSION = 1;
const DIRECTORY_BYTES = 32;
const WORD = { magic: 0, version: 4, roots: 8, timers: 16, nextTimer: 24, nextRequest: 28 } as const;

/** The directory's id in a heap whose first allocation it was. */
function directoryId(heap: DmoHeap): ObjectId {
  return makeObjectId(heap.owner, 0, 1);
}

export class DmoStateStore implements ActorStateStore {
  readonly #heap: DmoHeap;
  readonly #codec: MessageCodec<unknown>;
  readonly #directory: ObjectId;
  readonly #roots: DmoHashMap;
  readonly #timers: DmoHashMap;
  readonly #timerKey = new Uint8Array(4);

  private constructor(heap: DmoHeap, codec: MessageCodec<unknown>, directory: ObjectId) {
    this.#heap = heap;
    this.#codec = codec;
    this.#directory = directory;
    this.#roots = DmoHashMap.open(heap, heap.readF64(directory, WORD.roots) as ObjectId);
    this.#timers = DmoHashMap.open(heap, heap.readF64(directory, WORD.timers) as ObjectId);
  }

  /**
   * Lays out the state in a fresh heap. Must be the heap's first allocation (before the actor's
   * init), so that every thread finds the directory at the same id without being told.
   */
  static create(heap: DmoHeap, codec: MessageCodec<unknown>): DmoStateStore {
    const directory = heap.allocate(DIRECTORY_BYTES);
    if (directory !== directoryId(heap)) {
      heap.free(directory);
      throw new DmoCollectionFormatError(
        `actor ${heap.owner}: the state directory must be the heap's first object; create the store before init`,
      );
    }
    heap.writeU32(directory, WORD.magic, MAGIC);
    heap.writeU32(directory, WORD.version, VERSION);
    heap.writeF64(directory, WORD.roots, DmoHashMap.create(heap).rootId);
    heap.writeF64(directory, WORD.timers, DmoHashMap.create(heap).rootId);
    heap.writeU32(directory, WORD.nextTimer, 1);
    heap.writeU32(directory, WORD.nextRequest, 1);
    return new DmoStateStore(heap, codec, directory);
  }

  /** Opens the state another thread (or the other side, after migration) laid out. */
  static open(heap: DmoHeap, codec: MessageCodec<unknown>): DmoStateStore {
    const directory = directoryId(heap);
    if (!heap.has(directory) || heap.readU32(directory, WORD.magic) !== MAGIC) {
      throw new DmoCollectionFormatError(`actor ${heap.owner}: no runtime state directory in this heap`);
    }
    return new DmoStateStore(heap, codec, directory);
  }

  root(name: string): ObjectId | undefined {
    const bytes = this.#roots.getString(name);
    if (!bytes) return undefined;
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true) as ObjectId;
  }

  setRoot(name: string, id: ObjectId | undefined): void {
    if (id === undefined) {
      this.#roots.deleteString(name);
      return;
    }
    const value = new Uint8Array(8);
    new DataView(value.buffer).setFloat64(0, id, true);
    this.#roots.setString(name, value);
  }

  rootEntries(): [string, ObjectId][] {
    const decoder = new TextDecoder();
    const out: [string, ObjectId][] = [];
    for (const [key, value] of this.#roots.entries()) {
      out.push([
        decoder.decode(key),
        new DataView(value.buffer, value.byteOffset, 8).getFloat64(0, true) as ObjectId,
      ]);
    }
    return out;
  }

  addTimer(timer: PendingTimer<unknown>): void {
    const messageBytes = this.#codec.sizeOf(timer.message);
    const record = new Uint8Array(8 + originSize(timer.origin) + messageBytes);
    new DataView(record.buffer).setFloat64(0, timer.dueAtNs, true);
    const at = writeOrigin(timer.origin, record, 8);
    this.#codec.encodeInto(timer.message, record, at);
    this.#timers.set(this.#key(timer.id), record);
  }

  removeTimer(id: TimerId): boolean {
    return this.#timers.delete(this.#key(id));
  }

  takeTimer(id: TimerId): PendingTimer<unknown> | undefined {
    const key = this.#key(id);
    const record = this.#timers.get(key);
    if (!record) return undefined;
    this.#timers.delete(key);
    return this.#decodeTimer(id, record);
  }

  timers(): PendingTimer<unknown>[] {
    const out: PendingTimer<unknown>[] = [];
    for (const [key, record] of this.#timers.entries()) {
      const id = new DataView(key.buffer, key.byteOffset, 4).getUint32(0, true) as TimerId;
      const timer = this.#decodeTimer(id, record);
      if (timer) out.push(timer);
    }
    return out;
  }

  clearTimers(): void {
    this.#timers.clear();
  }

  allocateTimerId(): TimerId {
    const id = this.#heap.readU32(this.#directory, WORD.nextTimer);
    this.#heap.writeU32(this.#directory, WORD.nextTimer, id + 1);
    return id as TimerId;
  }

  allocateRequestId(): number {
    const id = this.#heap.readU32(this.#directory, WORD.nextRequest);
    this.#heap.writeU32(this.#directory, WORD.nextRequest, id + 1);
    return id;
  }

  #key(id: number): Uint8Array {
    new DataView(this.#timerKey.buffer).setUint32(0, id, true);
    return this.#timerKey;
  }

  #decodeTimer(id: TimerId, record: Uint8Array): PendingTimer<unknown> | undefined {
    const dueAtNs = new DataView(record.buffer, record.byteOffset, 8).getFloat64(0, true);
    const origin = readOrigin(record, 8);
    if (!origin) return undefined;
    const decoded = this.#codec.tryDecode(record, origin.next, record.length - origin.next);
    if (!decoded.ok) return undefined;
    return { id, dueAtNs, message: decoded.message, origin: origin.origin };
  }
}
