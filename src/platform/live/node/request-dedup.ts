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
 *     table (2^k ≥ 2 × capacity cells, linear probing): cell → entry index, or EMPTY
 *
 * Deletion from the table is by backward shift (Knuth, TAOCP vol. 3, 6.4 Algorithm R), so there are
 * no tombstones and a probe never runs longer than the cluster it starts in. The hash is seeded per
 * instance, so a client cannot choose request ids that all collide.
 */

const EMPTY = -1;

/** An entry's index, or NOT_FOUND. */
export const NOT_FOUND = -1;

/**
 * Placeholders the typed-array fields hold until the constructor sets them: a field declared
 * without a value is created holding `undefined` under our es2023 target, and V8 then types it
 * "any value" (a map check on every read). See docs/sim-speed.md, eighth pass.
 */
const EMPTY_UINT32 = new Uint32Array(0);
const EMPTY_INT32 = new Int32Array(0);
const EMPTY_FLOAT64 = new Float64Array(0);

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
  readonly #table: Int32Array = EMPTY_INT32;
  readonly #mask: number = 0;
  /** A u32: half of all seeds are past 2^31, which a field typed "any value" holds as a heap number. */
  readonly #seed: number = 0;
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
    let cells = 2;
    while (cells < 2 * capacity) cells *= 2;
    this.#table = new Int32Array(cells).fill(EMPTY);
    this.#mask = cells - 1;
    this.#seed = seed >>> 0;
  }

  /** Requests remembered now. */
  get size(): number {
    return this.#size;
  }

  /** The entry of request `requestId` of client `clientId` (both u32), or NOT_FOUND. */
  find(clientId: number, requestId: number): number {
    const table = this.#table;
    const mask = this.#mask;
    for (let cell = this.#home(clientId, requestId); ; cell = (cell + 1) & mask) {
      const entry = table[cell] as number;
      if (entry === EMPTY) return NOT_FOUND;
      if (this.#requestIds[entry] === requestId && this.#clientIds[entry] === clientId) return entry;
    }
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
    const table = this.#table;
    const mask = this.#mask;
    let cell = this.#home(clientId, requestId);
    while (table[cell] !== EMPTY) cell = (cell + 1) & mask;
    table[cell] = entry;
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

  #home(clientId: number, requestId: number): number {
    // murmur3's 32-bit finaliser over the seeded pair: every input bit reaches every output bit.
    let h = Math.imul(requestId ^ this.#seed, 0xcc9e2d51);
    h = Math.imul((h << 15) | (h >>> 17), 0x1b873593) ^ clientId;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h & this.#mask;
  }

  #evictOldest(): void {
    const entry = this.#head;
    const table = this.#table;
    const mask = this.#mask;
    let cell = this.#home(this.#clientIds[entry] as number, this.#requestIds[entry] as number);
    while (table[cell] !== entry) cell = (cell + 1) & mask;
    // Backward-shift deletion: pull later members of the cluster into the hole when the hole lies
    // between their home cell and their cell (cyclically), so every probe still finds them.
    let hole = cell;
    for (let next = (hole + 1) & mask; table[next] !== EMPTY; next = (next + 1) & mask) {
      const moved = table[next] as number;
      const home = this.#home(this.#clientIds[moved] as number, this.#requestIds[moved] as number);
      // `moved` may fill the hole unless its home lies cyclically in (hole, next].
      const homeInRange = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (!homeInRange) {
        table[hole] = moved;
        hole = next;
      }
    }
    table[hole] = EMPTY;
    this.#replyBuffers[entry] = null;
    this.#head = entry + 1 === this.capacity ? 0 : entry + 1;
    this.#size--;
  }
}
