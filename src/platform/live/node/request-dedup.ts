/**
 * The NIC's memory of recent client requests: a retransmitted request is answered from here, never
 * run twice (the at-most-once half of the live node's request handling; the client retransmits,
 * the node deduplicates). For each (client id, request id) seen: the reply once one was sent, and
 * when the request arrived (for the reply-latency metric). Bounded: once `capacity` requests are
 * remembered, each new one pushes out the oldest.
 *
 * This runs for every request and every reply, so it allocates nothing per request. Entries live
 * in typed arrays, in arrival order, in a ring (an entry's index is its ring slot, so eviction is
 * O(1) and needs no links); an open-addressing hash table over the (client id, request id) pair
 * finds them. A JavaScript Map keyed by a `${client}/${request}` string — the first version —
 * cost a string to format and hash per request and per reply, and an entry object per request
 * that lived long enough to be promoted and then marked by every major GC; a remembered reply is
 * kept as (buffer, offset, length), so a reply cut from a shared slab retains no view of its own.
 *
 *     entries (ring of `capacity` slots)   oldest                      newest
 *                                            │                           │
 *     [ … free … | c7/r1 | c7/r2 | c3/r9 | … | c7/r40 | … free … ]
 *                  ▲ head                      ▲ (head + size − 1) mod capacity
 *
 *     index: RequestPairIndex (request-pair-index.ts) over the entries' (client id, request id)
 */

import { NOT_FOUND, RequestPairIndex } from './request-pair-index.ts';

export { NOT_FOUND };

/**
 * Placeholders the typed-array fields hold until the constructor sets them: a field declared
 * without a value is created holding `undefined` under our es2023 target, and V8 then types it
 * "any value" (a map check on every read). See docs/sim-speed.md, eighth pass.
 */
const EMPTY_UINT32 = new Uint32Array(0);
const EMPTY_FLOAT64 = new Float64Array(0);
const NO_INDEX = new RequestPairIndex(EMPTY_UINT32, EMPTY_UINT32, 1, 0);

export class RequestDedup {
  readonly capacity: number = 0;
  readonly #clientIds: Uint32Array = EMPTY_UINT32;
  readonly #requestIds: Uint32Array = EMPTY_UINT32;
  /** Wall-clock ns of each entry's arrival; -1 once its first answer left (latency counted once). */
  readonly #arrivalNs: Float64Array = EMPTY_FLOAT64;
  /** The buffer holding each entry's reply frame (null: no reply yet), and where in it. */
  readonly #replyBuffers: (ArrayBufferLike | null)[];
  readonly #replyOffsets: Uint32Array = EMPTY_UINT32;
  readonly #replyLengths: Uint32Array = EMPTY_UINT32;
  readonly #index: RequestPairIndex = NO_INDEX;
  #head = 0;
  #size = 0;

  constructor(capacity: number, seed = (Math.random() * 0x1_0000_0000) >>> 0) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > 1 << 24) {
      throw new RangeError(`dedup capacity must be an integer in [1, 2^24], got ${capacity}`);
    }
    this.capacity = capacity;
    this.#clientIds = new Uint32Array(capacity);
    this.#requestIds = new Uint32Array(capacity);
    this.#arrivalNs = new Float64Array(capacity);
    this.#replyBuffers = new Array<ArrayBufferLike | null>(capacity).fill(null);
    this.#replyOffsets = new Uint32Array(capacity);
    this.#replyLengths = new Uint32Array(capacity);
    this.#index = new RequestPairIndex(this.#clientIds, this.#requestIds, capacity, seed);
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
   * Remembers a request not seen before (`find` it first) that arrived at `arrivalNs`, and
   * returns its entry; the oldest request is forgotten first when `capacity` are held.
   */
  add(clientId: number, requestId: number, arrivalNs: number): number {
    if (this.#size === this.capacity) this.#evictOldest();
    let entry = this.#head + this.#size;
    if (entry >= this.capacity) entry -= this.capacity;
    this.#clientIds[entry] = clientId;
    this.#requestIds[entry] = requestId;
    this.#arrivalNs[entry] = arrivalNs;
    this.#replyBuffers[entry] = null;
    this.#index.insert(entry);
    this.#size++;
    return entry;
  }

  /** The reply sent for `entry` (the last one, if the actor answered twice), or null. */
  reply(entry: number): Uint8Array | null {
    const buffer = this.#replyBuffers[entry];
    if (!buffer) return null;
    return new Uint8Array(buffer, this.#replyOffsets[entry], this.#replyLengths[entry]);
  }

  /** Keeps `frame` as `entry`'s reply; its bytes must not change while it is remembered. */
  setReply(entry: number, frame: Uint8Array): void {
    // The buffer and the place in it, not the view: frames cut from one slab share one buffer.
    this.#replyBuffers[entry] = frame.buffer;
    this.#replyOffsets[entry] = frame.byteOffset;
    this.#replyLengths[entry] = frame.length;
  }

  /** `entry`'s arrival time the first time it is asked for, -1 after that. */
  takeArrivalNs(entry: number): number {
    const arrivalNs = this.#arrivalNs[entry] as number;
    this.#arrivalNs[entry] = -1;
    return arrivalNs;
  }

  #evictOldest(): void {
    const entry = this.#head;
    this.#index.remove(entry);
    this.#replyBuffers[entry] = null;
    this.#head = entry + 1 === this.capacity ? 0 : entry + 1;
    this.#size--;
  }
}
