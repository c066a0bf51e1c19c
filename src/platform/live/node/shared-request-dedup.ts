/**
 * The request dedup of NIC core 0 when it owns the socket (`ingress: 'core'`), kept in
 * SharedArrayBuffers the controller creates, so that it outlives the core: when the watchdog
 * replaces core 0, the replacement attaches the same memory and a retransmission of a request the
 * dead core answered is answered from here, byte for byte, never run twice (at-most-once across a
 * replacement; request-dedup.ts is the controller path's twin, kept in one thread's heap).
 *
 * What is shared is what must survive; the hash index over it is private to each core and rebuilt
 * when a core attaches (a linear pass over the slots), so a core killed in the middle of a probe
 * or a backward-shift deletion leaves nothing half-done that the next one reads:
 *
 *     entries (ring of `capacity` slots, next written at NEXT_SLOT; the oldest is evicted by reuse)
 *       valid:     Int32   1: the fields below are one request's; 0: free, or being written
 *       clientId:  Uint32
 *       requestId: Uint32
 *       arrivalNs: Float64 wall-clock arrival; -1 once its latency was counted
 *       phase:     Float64 QUEUED (-1) · STARTED (0): its handler began on this NIC · k ≥ 1: it was
 *                          the k-th request the core forwarded to the host (counters' FORWARDS)
 *       replyAt:   Float64 NO_REPLY (-1), or the reply's absolute position in the arena
 *
 *     replies (an arena of `replyBytes`, written as a ring; ARENA_END: bytes claimed so far, ever)
 *       … | len (u32) pad | frame bytes … | len pad | frame … |      (records 8-byte aligned)
 *           ▲ replyAt % replyBytes
 *
 * Every shared field is written by one thread at a time: the core that serves (the controller
 * never writes here; a spare attaches only after the old core's thread has ended — the
 * controller awaits `worker.terminate()`, whose exit joins the thread, before it activates the
 * spare with a postMessage — so everything the dead core stored is visible to it). A thread can be
 * terminated between any two statements but never inside one typed-array store, so each store
 * below is a commit point, and the order of stores keeps these invariants at every one of them:
 *
 *   1. valid[s] = 1 only while s's identity, arrival, phase and replyAt all belong to one request.
 *      `add` clears valid first, then claims the slot (NEXT_SLOT), writes the fields, sets it last;
 *      a slot found with valid 0 is skipped (its request never reached a handler: `add` returns
 *      before the request is queued).
 *   2. replyAt[s] = p only once the reply's length word and every byte of its sealed frame are in
 *      the arena at p (the reply is cut by `replyFrame`, filled and sealed by the caller, and
 *      published by `setReply` in one store — only then sent on the wire).
 *   3. ARENA_END grows before any byte of a new record is written, so a reply whose bytes a later
 *      lap may have overwritten (replyAt < ARENA_END − replyBytes) reads as expired, never as the
 *      wrong bytes.
 *
 * And on attach (the replacement, `forwardsRead`: how many forwards the controller had read when
 * the old core died), an entry with no reply is kept only if its request really went somewhere:
 * its handler started here (STARTED: never run again — its client hears nothing more unless the
 * watchdog answers it), or the controller read its forward (k ≤ forwardsRead: the host runs it
 * and its reply comes back through the new core). A request still queued in the dead core, or
 * forwarded in a record the controller never read, never ran: its entry is dropped, so the
 * client's retransmission runs it (exactly once).
 *
 * Costs per request as RequestDedup's: a probe, a handful of typed-array stores, no allocation
 * (the reply view `replyFrame` returns is the one a slab cut returned before). Bounded twice:
 * `capacity` requests, and a reply is remembered while fewer than `replyBytes` of newer replies
 * were cut after it (a retransmission of a request whose reply expired is a duplicate with
 * nothing to send: `replyExpired` tells, the core counts it; the request still never runs again).
 */

import { NOT_FOUND, RequestPairIndex } from './request-pair-index.ts';

export { NOT_FOUND };

/** `phase` of a request queued in the core (nothing of it ran). */
export const PHASE_QUEUED = -1;
/** `phase` of a request whose handler began on the NIC. */
export const PHASE_STARTED = 0;

const NO_REPLY = -1;
/** Bytes before each reply frame in the arena: its length (u32), padded to keep frames 8-aligned. */
const RECORD_HEADER_BYTES = 8;

// The control words at the start of the entries buffer (Float64 indices).
const NEXT_SLOT = 0;
const ARENA_END = 1;
const CONTROL_BYTES = 16;

/** The shared memory of one node's dedup: made by the controller, attached by each core. */
export interface SharedDedupMemory {
  readonly capacity: number;
  readonly entries: SharedArrayBuffer;
  readonly replies: SharedArrayBuffer;
}

export class SharedRequestDedup {
  readonly capacity: number;
  readonly replyBytes: number;
  readonly #control: Float64Array;
  readonly #valid: Int32Array;
  readonly #clientIds: Uint32Array;
  readonly #requestIds: Uint32Array;
  readonly #arrivalNs: Float64Array;
  readonly #phase: Float64Array;
  readonly #replyAt: Float64Array;
  readonly #arena: Uint8Array;
  readonly #arenaWords: Uint32Array;
  /** Private: (client id, request id) → slot (rebuilt on attach; see the header). */
  readonly #index: RequestPairIndex;
  #size = 0;
  /**
   * Private mirrors of the control words, so the hot path does integer arithmetic only (a `%` on
   * an ARENA_END read back as a double is a call to fmod: it cost ~50 ns a request here). Each is
   * stored to its shared word where the invariants say; they are read back only on attach.
   */
  #nextSlot = 0;
  /** ARENA_END = #lapStart + #lapUsed, with #lapUsed in [0, replyBytes]. */
  #lapStart = 0;
  #lapUsed = 0;

  /** Memory for `capacity` requests and `replyBytes` of remembered replies. */
  static createMemory(capacity: number, replyBytes: number): SharedDedupMemory {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > 1 << 24) {
      throw new RangeError(`dedup capacity must be an integer in [1, 2^24], got ${capacity}`);
    }
    if (!Number.isInteger(replyBytes) || replyBytes < 64 || replyBytes % 8 !== 0) {
      throw new RangeError(`dedup reply bytes must be a multiple of 8, at least 64, got ${replyBytes}`);
    }
    return {
      capacity,
      entries: new SharedArrayBuffer(CONTROL_BYTES + capacity * 36),
      replies: new SharedArrayBuffer(replyBytes),
    };
  }

  /**
   * Attaches `memory` (fresh, or left by a core that ended at any point) and rebuilds the index.
   * `forwardsRead`: forwards the controller had read from the previous core (see the header).
   */
  static attach(
    memory: SharedDedupMemory,
    forwardsRead = 0,
    seed = (Math.random() * 0x1_0000_0000) >>> 0,
  ): SharedRequestDedup {
    return new SharedRequestDedup(memory, forwardsRead, seed);
  }

  private constructor(memory: SharedDedupMemory, forwardsRead: number, seed: number) {
    const capacity = memory.capacity;
    this.capacity = capacity;
    const entries = memory.entries;
    let at = 0;
    this.#control = new Float64Array(entries, at, 2);
    at += CONTROL_BYTES;
    this.#arrivalNs = new Float64Array(entries, at, capacity);
    at += 8 * capacity;
    this.#phase = new Float64Array(entries, at, capacity);
    at += 8 * capacity;
    this.#replyAt = new Float64Array(entries, at, capacity);
    at += 8 * capacity;
    this.#clientIds = new Uint32Array(entries, at, capacity);
    at += 4 * capacity;
    this.#requestIds = new Uint32Array(entries, at, capacity);
    at += 4 * capacity;
    this.#valid = new Int32Array(entries, at, capacity);
    this.replyBytes = memory.replies.byteLength;
    this.#arena = new Uint8Array(memory.replies);
    this.#arenaWords = new Uint32Array(memory.replies);
    this.#index = new RequestPairIndex(this.#clientIds, this.#requestIds, capacity, seed);
    this.#rebuild(forwardsRead);
  }

  /** Requests remembered now. */
  get size(): number {
    return this.#size;
  }

  /** The entry of request `requestId` of client `clientId` (both u32), or NOT_FOUND. */
  find(clientId: number, requestId: number): number {
    return this.#index.find(clientId, requestId);
  }

  /**
   * Remembers a request not seen before (`find` it first), QUEUED, that arrived at `arrivalNs`,
   * and returns its entry; the oldest is forgotten first when `capacity` are held.
   */
  add(clientId: number, requestId: number, arrivalNs: number): number {
    const slot = this.#nextSlot;
    const valid = this.#valid;
    if (valid[slot] === 1) {
      this.#index.remove(slot);
      this.#size--;
    }
    // Invariant 1: the slot stops being an entry before any of its fields changes.
    valid[slot] = 0;
    this.#nextSlot = slot + 1 === this.capacity ? 0 : slot + 1;
    this.#control[NEXT_SLOT] = this.#nextSlot;
    this.#clientIds[slot] = clientId;
    this.#requestIds[slot] = requestId;
    this.#arrivalNs[slot] = arrivalNs;
    this.#phase[slot] = PHASE_QUEUED;
    this.#replyAt[slot] = NO_REPLY;
    valid[slot] = 1;
    this.#index.insert(slot);
    this.#size++;
    return slot;
  }

  /**
   * Notes where the request of `entry` went: PHASE_STARTED, or the number of its forward. Ignored
   * if the entry now holds another request (evicted while queued).
   */
  setPhase(entry: number, clientId: number, requestId: number, phase: number): void {
    if (
      this.#requestIds[entry] === requestId &&
      this.#clientIds[entry] === clientId &&
      this.#valid[entry] === 1
    )
      this.#phase[entry] = phase;
  }

  /** `entry`'s phase (PHASE_QUEUED, PHASE_STARTED, or its forward's number). */
  phaseOf(entry: number): number {
    return this.#phase[entry] as number;
  }

  /**
   * `size` bytes in the arena for a reply frame: fill and seal it, then `setReply`. Its bytes stay
   * until `replyBytes` of later replies were cut (then `reply` says it expired).
   */
  replyFrame(size: number): Uint8Array {
    const need = (RECORD_HEADER_BYTES + size + 7) & ~7;
    const arenaBytes = this.replyBytes;
    if (need > arenaBytes >> 2) {
      throw new RangeError(
        `a ${size}-byte reply does not fit a quarter of the ${arenaBytes}-byte dedup arena`,
      );
    }
    let offset = this.#lapUsed;
    if (offset + need > arenaBytes) {
      this.#lapStart += arenaBytes; // records never wrap: start the next lap
      offset = 0;
    }
    this.#lapUsed = offset + need;
    // Invariant 3: claimed before a byte is written.
    this.#control[ARENA_END] = this.#lapStart + this.#lapUsed;
    this.#arenaWords[offset >> 2] = size;
    return this.#arena.subarray(offset + RECORD_HEADER_BYTES, offset + RECORD_HEADER_BYTES + size);
  }

  /** Publishes `frame` (cut by `replyFrame`, filled and sealed) as `entry`'s reply: one store. */
  setReply(entry: number, frame: Uint8Array): void {
    if (frame.buffer !== this.#arena.buffer) throw new RangeError('the reply was not cut by replyFrame');
    const offset = frame.byteOffset - RECORD_HEADER_BYTES;
    // The absolute position of the most recent record at `offset`: this lap's, or the one before
    // when the arena has started a new lap since it was cut.
    const at = offset < this.#lapUsed ? this.#lapStart + offset : this.#lapStart - this.replyBytes + offset;
    // Invariant 2: the frame's bytes are all written (the caller sealed it); this store commits.
    this.#replyAt[entry] = at;
  }

  /** The reply sent for `entry` (the last one, if the actor answered twice), or null. */
  reply(entry: number): Uint8Array | null {
    const at = this.#replyAt[entry] as number;
    if (at < 0 || this.#expired(at)) return null;
    const offset = at % this.replyBytes;
    const length = this.#arenaWords[offset >> 2] as number;
    return new Uint8Array(this.#arena.buffer, offset + RECORD_HEADER_BYTES, length);
  }

  /** Whether `entry` was answered but its reply's bytes were overwritten since (too old to resend). */
  replyExpired(entry: number): boolean {
    const at = this.#replyAt[entry] as number;
    return at >= 0 && this.#expired(at);
  }

  /** `entry`'s arrival time the first time it is asked for, -1 after that. */
  takeArrivalNs(entry: number): number {
    const arrivalNs = this.#arrivalNs[entry] as number;
    this.#arrivalNs[entry] = -1;
    return arrivalNs;
  }

  #expired(at: number): boolean {
    return at < (this.#control[ARENA_END] as number) - this.replyBytes;
  }

  /** The index from the shared slots, oldest first; drops entries whose request never ran. */
  #rebuild(forwardsRead: number): void {
    const capacity = this.capacity;
    const valid = this.#valid;
    let next = this.#control[NEXT_SLOT] as number;
    if (!(Number.isInteger(next) && next >= 0 && next < capacity)) next = 0;
    this.#nextSlot = next;
    this.#control[NEXT_SLOT] = next;
    const end = this.#control[ARENA_END] as number;
    this.#lapUsed = end % this.replyBytes;
    this.#lapStart = end - this.#lapUsed;
    for (let i = 0; i < capacity; i++) {
      let slot = next + i;
      if (slot >= capacity) slot -= capacity;
      if (valid[slot] !== 1) continue;
      const phase = this.#phase[slot] as number;
      const answered = (this.#replyAt[slot] as number) >= 0;
      if (!answered && (phase === PHASE_QUEUED || phase > forwardsRead)) {
        valid[slot] = 0;
        continue;
      }
      // Never two slots for one request (cannot happen while `find` precedes `add`; kept so an
      // index never holds two): the newer wins.
      const older = this.find(this.#clientIds[slot] as number, this.#requestIds[slot] as number);
      if (older !== NOT_FOUND) {
        this.#index.remove(older);
        valid[older] = 0;
        this.#size--;
      }
      this.#index.insert(slot);
      this.#size++;
    }
  }
}
