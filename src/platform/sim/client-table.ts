/**
 * The simulated node's table of client requests awaiting their answer (sim-node.ts): request id →
 * (send time, sink, passive). It sits on the per-packet path — one insert when a client sends, one
 * lookup and one removal when the answer leaves the NIC — where a `Map` of small objects cost an
 * object and a hash-map entry per packet (about 7% of a 256 B echo run in a CPU profile, plus the
 * garbage). Here the entries live in parallel arrays, so a request allocates nothing.
 *
 * Open addressing with linear probing, keyed by the request id itself (`id mod capacity`): ids are
 * handed out in sequence, so the requests in flight at once fall into distinct slots and a probe
 * almost always ends at its first slot. The table doubles at half load. Removal shifts the rest of
 * a probe run back (Knuth's Algorithm R), so there are no tombstones and lookups never slow down
 * with churn; while no entry is displaced from its home slot (the usual case) there is nothing to
 * shift, and removal is a store. Nothing iterates the table, so its layout can never change what a run computes.
 *
 *   slot:     0       1      2       3      …    (home slot: id & mask)
 *   states   ACTIVE  FREE   ACTIVE  PASSIVE  …
 *   ids      17      -      2       3
 *   sentAtNs, sinks: the entry's, in the same slot
 */

/** What a client sees of one request: called when its answer (or refusal) reaches it. */
export type ReplySink = (
  requestId: number,
  latencyNs: number,
  ok: boolean,
  reply: unknown,
  sentAtNs: number,
) => void;

const INITIAL_CAPACITY = 256;
const FREE = 0;
const ACTIVE = 1;
const PASSIVE = 2;

// Fields start with a value of their final kind (an empty table, 0), not `undefined`: V8 types a
// field by its first value, and `undefined` then a number or table makes it "any value" — boxed
// numbers, a type check per read (see event-heap.ts).
const EMPTY_FLOAT64 = new Float64Array(0);
const EMPTY_UINT8 = new Uint8Array(0);

export class ClientTable {
  #ids: Float64Array = EMPTY_FLOAT64;
  #sentAtNs: Float64Array = EMPTY_FLOAT64;
  /** Per slot: FREE, or the entry's mode (ACTIVE, PASSIVE). */
  #states: Uint8Array = EMPTY_UINT8;
  #sinks: (ReplySink | undefined)[];
  #mask: number = 0;
  #size = 0;
  /** Entries not in their home slot. While there are none, a removal moves nothing. */
  #displaced = 0;

  constructor(initialCapacity = INITIAL_CAPACITY) {
    let capacity = 16;
    while (capacity < initialCapacity) capacity *= 2;
    this.#ids = new Float64Array(capacity);
    this.#sentAtNs = new Float64Array(capacity);
    this.#states = new Uint8Array(capacity);
    this.#sinks = new Array<ReplySink | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
  }

  /** Requests awaiting an answer. */
  get size(): number {
    return this.#size;
  }

  /** Records a request; `requestId` must not be in the table already (ids are never reused). */
  add(requestId: number, sentAtNs: number, sink: ReplySink, passive: boolean): void {
    if (2 * (this.#size + 1) > this.#sinks.length) this.#grow();
    this.#insert(requestId, sentAtNs, sink, passive ? PASSIVE : ACTIVE);
    this.#size++;
  }

  /** The slot holding `requestId`, or -1. Valid until the next `add` or `remove`. */
  find(requestId: number): number {
    const ids = this.#ids;
    const states = this.#states;
    const mask = this.#mask;
    for (let slot = hashOf(requestId) & mask; ; slot = (slot + 1) & mask) {
      if (states[slot] === FREE) return -1;
      if (ids[slot] === requestId) return slot;
    }
  }

  sentAtNsOf(slot: number): number {
    return this.#sentAtNs[slot] as number;
  }

  sinkOf(slot: number): ReplySink {
    return this.#sinks[slot] as ReplySink;
  }

  passiveOf(slot: number): boolean {
    return this.#states[slot] === PASSIVE;
  }

  /** Removes the request in `slot` (from `find`). */
  remove(slot: number): void {
    const ids = this.#ids;
    const states = this.#states;
    const sinks = this.#sinks;
    const mask = this.#mask;
    let hole = slot;
    if ((hashOf(ids[slot] as number) & mask) !== slot) this.#displaced--;
    // Algorithm R: walk the rest of the run; an entry whose home slot is not cyclically in
    // (hole, index] would be unreachable past the hole, so it moves into the hole. Only displaced
    // entries can be unreachable, and sequential ids leave none (each sits in its home slot), so
    // the walk — as long as the whole run of requests in flight — is skipped while there are none.
    for (
      let index = (hole + 1) & mask;
      this.#displaced > 0 && states[index] !== FREE;
      index = (index + 1) & mask
    ) {
      const home = hashOf(ids[index] as number) & mask;
      const reachable = hole <= index ? hole < home && home <= index : hole < home || home <= index;
      if (reachable) continue;
      ids[hole] = ids[index] as number;
      this.#sentAtNs[hole] = this.#sentAtNs[index] as number;
      states[hole] = states[index] as number;
      sinks[hole] = sinks[index];
      if (home === hole) this.#displaced--;
      hole = index;
    }
    states[hole] = FREE;
    sinks[hole] = undefined; // let the sink be collected
    this.#size--;
  }

  #insert(requestId: number, sentAtNs: number, sink: ReplySink | undefined, state: number): void {
    const states = this.#states;
    const mask = this.#mask;
    let slot = hashOf(requestId) & mask;
    if (states[slot] !== FREE) {
      this.#displaced++;
      do slot = (slot + 1) & mask;
      while (states[slot] !== FREE);
    }
    this.#ids[slot] = requestId;
    this.#sentAtNs[slot] = sentAtNs;
    states[slot] = state;
    this.#sinks[slot] = sink;
  }

  #grow(): void {
    const ids = this.#ids;
    const sentAtNs = this.#sentAtNs;
    const states = this.#states;
    const sinks = this.#sinks;
    const capacity = sinks.length * 2;
    this.#ids = new Float64Array(capacity);
    this.#sentAtNs = new Float64Array(capacity);
    this.#states = new Uint8Array(capacity);
    this.#sinks = new Array<ReplySink | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
    this.#displaced = 0;
    for (let slot = 0; slot < sinks.length; slot++) {
      const state = states[slot] as number;
      if (state !== FREE) this.#insert(ids[slot] as number, sentAtNs[slot] as number, sinks[slot], state);
    }
  }
}

/** Home slot of an id before masking: its low 32 bits (ids are integers; any number hashes). */
function hashOf(requestId: number): number {
  return requestId | 0;
}
