/**
 * The hash index the request dedups (request-dedup.ts for the controller path, shared-request-dedup.ts
 * for NIC core 0) find a request's entry by: open addressing with linear probing over (client id,
 * request id) pairs that live in the owner's own arrays — the index holds only entry numbers, so
 * the owner decides where entries live (its heap, or shared memory a replacement core re-attaches).
 *
 *     table (2^k ≥ 2 × capacity cells, linear probing): cell → entry index, or EMPTY
 *
 * Deletion is by backward shift (Knuth, TAOCP vol. 3, 6.4 Algorithm R), so there are no tombstones
 * and a probe never runs longer than the cluster it starts in. The hash is seeded per instance, so
 * a client cannot choose request ids that all collide. Allocates nothing after construction.
 */

/** An entry's index, or NOT_FOUND. */
export const NOT_FOUND = -1;

const EMPTY = -1;

/**
 * Placeholders the fields hold until the constructor sets them: a field declared without a value
 * starts as `undefined` under our es2023 target, and V8 then types it "any value" (a check on every
 * read; docs/sim-speed.md, eighth pass).
 */
const EMPTY_UINT32 = new Uint32Array(0);
const EMPTY_INT32 = new Int32Array(0);

export class RequestPairIndex {
  readonly #clientIds: Uint32Array = EMPTY_UINT32;
  readonly #requestIds: Uint32Array = EMPTY_UINT32;
  readonly #table: Int32Array = EMPTY_INT32;
  readonly #mask: number = 0;
  /** A u32: half of all seeds are past 2^31. */
  readonly #seed: number = 0;

  /** An index over `capacity` entries whose pairs are `clientIds[e]`, `requestIds[e]`. */
  constructor(clientIds: Uint32Array, requestIds: Uint32Array, capacity: number, seed: number) {
    this.#clientIds = clientIds;
    this.#requestIds = requestIds;
    let cells = 2;
    while (cells < 2 * capacity) cells *= 2;
    this.#table = new Int32Array(cells).fill(EMPTY);
    this.#mask = cells - 1;
    this.#seed = seed >>> 0;
  }

  /** The entry holding request `requestId` of client `clientId` (both u32), or NOT_FOUND. */
  find(clientId: number, requestId: number): number {
    const table = this.#table;
    const mask = this.#mask;
    for (let cell = this.#home(clientId, requestId); ; cell = (cell + 1) & mask) {
      const entry = table[cell] as number;
      if (entry === EMPTY) return NOT_FOUND;
      if (this.#requestIds[entry] === requestId && this.#clientIds[entry] === clientId) return entry;
    }
  }

  /** Indexes `entry` by the pair its arrays hold now (not indexed already). */
  insert(entry: number): void {
    const table = this.#table;
    const mask = this.#mask;
    let cell = this.#home(this.#clientIds[entry] as number, this.#requestIds[entry] as number);
    while (table[cell] !== EMPTY) cell = (cell + 1) & mask;
    table[cell] = entry;
  }

  /** Takes `entry` out, by the pair its arrays still hold (it must be indexed). */
  remove(entry: number): void {
    const table = this.#table;
    const mask = this.#mask;
    let cell = this.#home(this.#clientIds[entry] as number, this.#requestIds[entry] as number);
    while (table[cell] !== entry) cell = (cell + 1) & mask;
    // Pull later members of the cluster into the hole when the hole lies between their home cell
    // and their cell (cyclically), so every probe still finds them.
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
}
