/**
 * `DmoDomain`: one side's DMO memory — the NIC's or the host's (iPipe §3, "Distributed memory
 * objects": at start-up each registered actor gets its own equal-sized region, and each side keeps
 * an object table of (object id, actor id, start, size)).
 *
 * A domain is a single buffer carved into `maxActors` regions of `regionBytes` each (layout.ts
 * draws it). Every byte of state, including each region's allocator and object-table rows, lives
 * in the buffer, so `DmoDomain.attach(buffer)` on another worker thread sees the same heaps (when
 * the domain was created `shared`). The JS object only caches heap handles.
 *
 * The buffer is a SharedArrayBuffer even when the domain is not shared, because of how V8 paces
 * its collector. A domain reserves every region up front (64 MiB for a simulated node's side) but
 * touches only the pages its actors use, and the OS commits only those. V8, though, counts a plain
 * ArrayBuffer's whole length as external memory the moment it is made, and starts a mark-compact
 * whenever that count has grown by 64 MiB since the last one: every simulated node made one, and
 * its marking ran beside the node's first ~150 ms, each pointer store taking the write barrier's
 * slow path meanwhile (docs/sim-speed.md, sixth pass: ~650 instructions per simulated packet of
 * the echo bench's 20 ms runs). A SharedArrayBuffer is not counted, so a dead domain's memory is
 * returned at the next major collection that happens anyway. A resizable ArrayBuffer, grown as
 * regions are claimed, would also escape the count, but every typed-array access on one runs
 * slower (measured: a checked `readF64` 18 → 50 ns, allocate+free 165 → 540 ns). Whether other
 * threads may attach — and so whether allocation takes locks — is the domain's `shared` option,
 * recorded in the header (DOMAIN_FLAG_PRIVATE), not the buffer's type.
 *
 * Region hand-out and release take a futex lock in the domain header when the buffer is shared,
 * so two threads creating heaps at once cannot claim the same region.
 *
 * A region can also be handed out in two steps, for adopting a migrated region image
 * (region-image.ts): `reserveRegion` marks a free region RESERVED_OWNER_TAG (no actor's, not free),
 * the image's bytes are copied in without the lock, and `publishRegion` installs the header and
 * the owner tag — or `cancelReservation` frees it again. Those three are internal to src/dmo.
 */

import { ConfigError, DmoDomainFullError, DuplicateActorError } from '../errors.ts';
import { type ActorId, actorId as checkedActorId } from '../ids.ts';
import { lockWord, unlockWord } from './futex-lock.ts';
import { RegionHeap, regionOf } from './heap.ts';
import {
  DOMAIN_FLAG_PRIVATE,
  DOMAIN_HEADER_BYTES,
  DOMAIN_LAYOUT_VERSION,
  DOMAIN_MAGIC,
  DOMAIN_WORD,
  isHeldOwnerTag,
  MAX_DOMAIN_BYTES,
  MIN_REGION_BYTES,
  nextIncarnation,
  ownerTag,
  REGION_FLAG_EXCLUSIVE,
  REGION_MAGIC,
  REGION_WORD,
  RESERVED_OWNER_TAG,
  tagActor,
} from './layout.ts';
import { createDomainMemory, type DomainBuffer, type DomainMemory } from './memory.ts';
import { Region } from './region.ts';
import type { DmoHeap, ObjectTableRow } from './types.ts';

/** How a domain is carved. */
export interface DmoDomainOptions {
  /** Bytes of every actor's region: a multiple of 16, at least 1024. */
  readonly regionBytes: number;
  /** Regions in the domain: the most actors that can hold heaps on this side at once. */
  readonly maxActors: number;
  /**
   * Worker threads may attach to the domain (`DmoDomain.attach`), so region hand-out and the
   * allocator of non-exclusive heaps take futex locks (default false: one view, no locks).
   */
  readonly shared?: boolean;
}

/** How one actor's heap is set up. */
export interface DmoHeapOptions {
  /**
   * The actor holds the exec lock (never runs on two threads at once), so in a shared domain its
   * allocate/free skip the futex lock. Default false: a non-exclusive actor may run on several
   * worker threads, and its allocator metadata must be protected.
   */
  readonly exclusive?: boolean;
}

let reserveRegionOf: (domain: DmoDomain, actor: ActorId) => number;
let publishRegionOf: (domain: DmoDomain, base: number, actor: ActorId, header: Uint32Array) => DmoHeap;
let cancelReservationOf: (domain: DmoDomain, base: number) => void;
let memoryOfDomain: (domain: DmoDomain) => DomainMemory;

/** One side's DMO memory (NIC or host): equal per-actor regions in one buffer. */
export class DmoDomain {
  /** The memory itself; hand it to a worker and call `DmoDomain.attach` there. */
  readonly buffer: DomainBuffer;
  readonly regionBytes: number;
  readonly maxActors: number;
  readonly shared: boolean;
  readonly #memory: DomainMemory;
  readonly #heaps = new Map<ActorId, RegionHeap>();

  static {
    reserveRegionOf = (domain, actor) => domain.#reserve(actor);
    publishRegionOf = (domain, base, actor, header) => domain.#publish(base, actor, header);
    cancelReservationOf = (domain, base) => domain.#cancelReservation(base);
    memoryOfDomain = (domain) => domain.#memory;
  }

  private constructor(memory: DomainMemory) {
    this.#memory = memory;
    this.buffer = memory.buffer;
    this.shared = memory.shared;
    this.regionBytes = memory.u32[DOMAIN_WORD.regionBytes]!;
    this.maxActors = memory.u32[DOMAIN_WORD.maxActors]!;
  }

  /** Bytes a domain with these options occupies (header plus regions). */
  static bytesFor(options: DmoDomainOptions): number {
    validateOptions(options);
    return DOMAIN_HEADER_BYTES + options.regionBytes * options.maxActors;
  }

  /** A new, empty domain. Throws ConfigError for unusable sizes. */
  static create(options: DmoDomainOptions): DmoDomain {
    const totalBytes = DmoDomain.bytesFor(options);
    const shared = options.shared === true;
    if (shared && typeof SharedArrayBuffer === 'undefined') {
      throw new ConfigError(
        'shared',
        'needs SharedArrayBuffer, which this JavaScript runtime does not provide',
      );
    }
    // See the header: not counted by V8's external-memory pacing, whether shared or not.
    const buffer =
      typeof SharedArrayBuffer === 'undefined'
        ? new ArrayBuffer(totalBytes)
        : new SharedArrayBuffer(totalBytes);
    const memory = createDomainMemory(buffer, shared);
    memory.u32[DOMAIN_WORD.magic] = DOMAIN_MAGIC;
    memory.u32[DOMAIN_WORD.version] = DOMAIN_LAYOUT_VERSION;
    memory.u32[DOMAIN_WORD.regionBytes] = options.regionBytes;
    memory.u32[DOMAIN_WORD.maxActors] = options.maxActors;
    memory.u32[DOMAIN_WORD.flags] = shared ? 0 : DOMAIN_FLAG_PRIVATE;
    return new DmoDomain(memory);
  }

  /**
   * A second view of a shared domain's buffer (typically received by a worker thread). It sees
   * every heap already created there, and they see its changes. Throws ConfigError for a buffer
   * that is not a shared DMO domain: a domain created without `shared` takes no locks, so a second
   * view could corrupt its allocator.
   */
  static attach(buffer: DomainBuffer): DmoDomain {
    if (typeof SharedArrayBuffer === 'undefined' || !(buffer instanceof SharedArrayBuffer)) {
      throw new ConfigError(
        'buffer',
        'is a plain ArrayBuffer, which no second view can share: attach the `buffer` of a domain ' +
          'created with DmoDomain.create({ ..., shared: true })',
      );
    }
    if (buffer.byteLength < DOMAIN_HEADER_BYTES || buffer.byteLength % 8 !== 0) {
      throw new ConfigError('buffer', `${buffer.byteLength} bytes cannot hold a DMO domain`);
    }
    const memory = createDomainMemory(buffer, true);
    const u32 = memory.u32;
    if (u32[DOMAIN_WORD.magic] !== DOMAIN_MAGIC) {
      throw new ConfigError('buffer', 'not a DMO domain (bad magic): attach the buffer of a DmoDomain');
    }
    if (u32[DOMAIN_WORD.version] !== DOMAIN_LAYOUT_VERSION) {
      throw new ConfigError(
        'buffer',
        `DMO domain layout version ${u32[DOMAIN_WORD.version]} is not supported`,
      );
    }
    const regionBytes = u32[DOMAIN_WORD.regionBytes]!;
    const maxActors = u32[DOMAIN_WORD.maxActors]!;
    validateOptions({ regionBytes, maxActors });
    if (buffer.byteLength !== DOMAIN_HEADER_BYTES + regionBytes * maxActors) {
      throw new ConfigError('buffer', `buffer length ${buffer.byteLength} does not match its domain header`);
    }
    if ((u32[DOMAIN_WORD.flags]! & DOMAIN_FLAG_PRIVATE) !== 0) {
      throw new ConfigError(
        'buffer',
        'this DMO domain was created without shared: true, so its allocator takes no locks and no ' +
          'second view may attach to it; create it with DmoDomain.create({ ..., shared: true }) to ' +
          'hand it to worker threads',
      );
    }
    return new DmoDomain(memory);
  }

  /** Claims a free region for `actor` and returns its empty heap. */
  createHeap(actor: ActorId, options: DmoHeapOptions = {}): DmoHeap {
    checkedActorId(actor);
    this.#lock();
    try {
      if (this.#findRegion(actor) >= 0) throw new DuplicateActorError(`a DMO heap of actor ${actor}`);
      const index = this.#freeRegionFor(actor);
      if (index < 0) throw new DmoDomainFullError(this.maxActors);
      const flags = options.exclusive === true ? REGION_FLAG_EXCLUSIVE : 0;
      const base = this.#regionBase(index);
      const heap = new RegionHeap(Region.initialise(this.#memory, base, this.regionBytes, actor, flags));
      this.#heaps.set(actor, heap);
      return heap;
    } finally {
      this.#unlock();
    }
  }

  /** The heap of `actor` in this domain, or undefined (also when another thread released it). */
  heapOf(actor: ActorId): DmoHeap | undefined {
    const cached = this.#heaps.get(actor);
    if (cached !== undefined) {
      if (regionOf(cached).isCurrent()) return cached;
      this.#heaps.delete(actor);
    }
    const index = this.#findRegion(actor);
    if (index < 0) return undefined;
    const heap = new RegionHeap(new Region(this.#memory, this.#regionBase(index), actor));
    this.#heaps.set(actor, heap);
    return heap;
  }

  /**
   * Frees `actor`'s region for reuse (migration's last step on the old side, or actor deletion).
   * False when the actor has no heap here.
   *
   * Every id of the heap, every heap handle and every collection over it stops resolving at once:
   * they all check the region's owner tag. A view from `bytes()` or `DmoHashMap.getView` does NOT
   * stop: it is a plain typed array over the domain's buffer, and JavaScript cannot revoke one.
   * Whoever still holds such a view reads and writes the region's memory afterwards, whoever owns
   * it then. The region is therefore handed to another actor only when no region that is free
   * and never used (or last used by that actor) remains; see #freeRegionFor. That narrows a
   * stale view's reach for a buggy actor, but views are not an isolation boundary at all: a
   * view's `.buffer` is the whole domain. docs/dmo-isolation.md weighs the trade-off.
   */
  releaseHeap(actor: ActorId): boolean {
    this.#lock();
    try {
      const index = this.#findRegion(actor);
      this.#heaps.delete(actor);
      if (index < 0) return false;
      new Region(this.#memory, this.#regionBase(index), actor).markReleased();
      return true;
    } finally {
      this.#unlock();
    }
  }

  /** Actors holding a heap in this domain, in region order. */
  *actors(): IterableIterator<ActorId> {
    const u32 = this.#memory.u32;
    for (let index = 0; index < this.maxActors; index++) {
      const tag = u32[(this.#regionBase(index) >>> 2) + REGION_WORD.ownerTag]!;
      if (isHeldOwnerTag(tag)) yield tagActor(tag) as ActorId;
    }
  }

  /** The side's object table, as the paper's rows, region by region and slot by slot. */
  *objectTable(): IterableIterator<ObjectTableRow> {
    for (const actor of this.actors()) {
      const heap = this.heapOf(actor);
      if (heap !== undefined) yield* regionOf(heap).tableRows();
    }
  }

  #regionBase(index: number): number {
    return DOMAIN_HEADER_BYTES + index * this.regionBytes;
  }

  /**
   * The free region to hand `actor` (the caller holds the domain lock), or −1 when none is free.
   * A released region still holds its last owner's bytes, and any `bytes()` / `getView()` view
   * that owner kept still reaches them (a typed array cannot be revoked; see releaseHeap). So the
   * actor's own last region comes first, then a region never handed out, and another actor's
   * released region only when nothing else is free — a domain full of released regions still
   * takes new actors, as before.
   */
  #freeRegionFor(actor: ActorId): number {
    const u32 = this.#memory.u32;
    let neverUsed = -1;
    let released = -1;
    for (let index = 0; index < this.maxActors; index++) {
      const header = this.#regionBase(index) >>> 2;
      if (u32[header + REGION_WORD.ownerTag] !== 0) continue;
      if (u32[header + REGION_WORD.magic] !== REGION_MAGIC) {
        if (neverUsed < 0) neverUsed = index;
      } else if (u32[header + REGION_WORD.lastOwner] === actor) {
        return index;
      } else if (released < 0) {
        released = index;
      }
    }
    return neverUsed >= 0 ? neverUsed : released;
  }

  /** Region index owned by `actor`, or −1. */
  #findRegion(actor: ActorId): number {
    const u32 = this.#memory.u32;
    for (let index = 0; index < this.maxActors; index++) {
      const header = this.#regionBase(index) >>> 2;
      const tag = u32[header + REGION_WORD.ownerTag]!;
      if (
        isHeldOwnerTag(tag) &&
        tagActor(tag) === actor &&
        u32[header + REGION_WORD.magic] === REGION_MAGIC
      ) {
        return index;
      }
    }
    return -1;
  }

  /** Marks a free region reserved for `actor`'s adoption; returns its base. See reserveRegion. */
  #reserve(actor: ActorId): number {
    checkedActorId(actor);
    this.#lock();
    try {
      if (this.#findRegion(actor) >= 0) throw new DuplicateActorError(`a DMO heap of actor ${actor}`);
      const index = this.#freeRegionFor(actor);
      if (index < 0) throw new DmoDomainFullError(this.maxActors);
      const base = this.#regionBase(index);
      Atomics.store(this.#memory.u32, (base >>> 2) + REGION_WORD.ownerTag, RESERVED_OWNER_TAG);
      return base;
    } finally {
      this.#unlock();
    }
  }

  /** Installs an adopted region's header and owner; see publishRegion. */
  #publish(base: number, actor: ActorId, header: Uint32Array): DmoHeap {
    this.#lock();
    try {
      // Another adoption of the same actor may have published since the reservation.
      if (this.#findRegion(actor) >= 0) {
        this.#releaseReserved(base);
        throw new DuplicateActorError(`a DMO heap of actor ${actor}`);
      }
      const u32 = this.#memory.u32;
      const headerWord = base >>> 2;
      // The region's header is still the previous owner's (adoption copies only data and rows
      // before this point): continue its incarnations, so that the previous owner's handles — or
      // this actor's own from an earlier stay in this region — never resolve here again.
      const previous =
        u32[headerWord + REGION_WORD.magic] === REGION_MAGIC ? u32[headerWord + REGION_WORD.incarnation]! : 0;
      const incarnation = nextIncarnation(previous);
      // Every header word but the owner tag, which must stay RESERVED until the header is whole:
      // another thread's heapOf reads the tag without the domain lock.
      u32.set(header.subarray(0, REGION_WORD.ownerTag), headerWord);
      u32.set(header.subarray(REGION_WORD.ownerTag + 1), headerWord + REGION_WORD.ownerTag + 1);
      u32[headerWord + REGION_WORD.lock] = 0;
      u32[headerWord + REGION_WORD.incarnation] = incarnation;
      u32[headerWord + REGION_WORD.regionBytes] = this.regionBytes;
      u32[headerWord + REGION_WORD.lastOwner] = actor;
      Atomics.store(u32, headerWord + REGION_WORD.ownerTag, ownerTag(actor, incarnation));
      const heap = new RegionHeap(new Region(this.#memory, base, actor));
      this.#heaps.set(actor, heap);
      return heap;
    } finally {
      this.#unlock();
    }
  }

  #cancelReservation(base: number): void {
    this.#lock();
    try {
      this.#releaseReserved(base);
    } finally {
      this.#unlock();
    }
  }

  #releaseReserved(base: number): void {
    const u32 = this.#memory.u32;
    const tagWord = (base >>> 2) + REGION_WORD.ownerTag;
    if (u32[tagWord] === RESERVED_OWNER_TAG) Atomics.store(u32, tagWord, 0);
  }

  #lock(): void {
    if (this.shared) lockWord(this.#memory.i32, DOMAIN_WORD.lock);
  }

  #unlock(): void {
    if (this.shared) unlockWord(this.#memory.i32, DOMAIN_WORD.lock);
  }
}

function validateOptions(options: DmoDomainOptions): void {
  const { regionBytes, maxActors } = options;
  if (!Number.isInteger(regionBytes) || regionBytes < MIN_REGION_BYTES || regionBytes % 16 !== 0) {
    throw new ConfigError(
      'regionBytes',
      `must be a multiple of 16 and at least ${MIN_REGION_BYTES}, got ${regionBytes}`,
    );
  }
  if (!Number.isInteger(maxActors) || maxActors < 1) {
    throw new ConfigError('maxActors', `must be a positive integer, got ${maxActors}`);
  }
  if (DOMAIN_HEADER_BYTES + regionBytes * maxActors > MAX_DOMAIN_BYTES) {
    throw new ConfigError(
      'regionBytes',
      `${maxActors} regions of ${regionBytes} bytes exceed the 4 GiB a domain can address`,
    );
  }
}

// ---- two-step region hand-out, internal to src/dmo (region-image.ts) -------------------------

/**
 * Claims a free region of `domain` for an adoption of `actor`'s image: it is marked reserved (no
 * createHeap or other reservation takes it; no heapOf finds it) but its header is left alone.
 * Returns the region's absolute base. Throws DuplicateActorError if the actor already has a heap
 * here, DmoDomainFullError if no region is free.
 */
export function reserveRegion(domain: DmoDomain, actor: ActorId): number {
  return reserveRegionOf(domain, actor);
}

/**
 * Finishes an adoption: writes `header` (the region header's words, already fixed up for this
 * domain except for incarnation, lock and owner) into the reserved region at `base`, then
 * publishes the owner tag. Throws DuplicateActorError (and frees the reservation) if the actor got
 * a heap here meanwhile.
 */
export function publishRegion(domain: DmoDomain, base: number, actor: ActorId, header: Uint32Array): DmoHeap {
  return publishRegionOf(domain, base, actor, header);
}

/** Frees a region `reserveRegion` returned (an adoption that failed or was abandoned). */
export function cancelReservation(domain: DmoDomain, base: number): void {
  cancelReservationOf(domain, base);
}

/** The typed views over `domain`'s buffer. */
export function domainMemory(domain: DmoDomain): DomainMemory {
  return memoryOfDomain(domain);
}
