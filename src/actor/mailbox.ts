/**
 * An actor's mailbox: the FIFO of messages waiting for its exec handler (iPipe §3, "Actors";
 * Algorithm 2 pops from it on DRR cores, and its length is what `Q_thresh` is compared with).
 *
 * Within one thread this is a growable ring buffer. Many producers push (FCFS cores that route
 * a DRR actor's requests, the channel, timers) and one consumer at a time pops — the scheduler
 * guarantees that an exclusive actor is never run on two cores at once, so a pop never races a
 * pop. The live platform's cross-thread variant keeps the same interface over shared memory.
 *
 *          head                     tail
 *           v                        v
 *   [ . . . a b c d e f . . . . . . ]      length = tail - head (mod capacity)
 *
 * The slot array doubles when full (unless a bound is set), so pushes are amortised O(1) and a
 * burst never loses a message; popped slots are cleared so the mailbox does not pin garbage.
 */

const INITIAL_SLOTS = 16;

export class Mailbox<T> {
  #slots: (T | undefined)[];
  #head = 0;
  #length = 0;
  // `= 0` where declared, the constructor sets the value: a field that starts `undefined` is typed
  // "any value" by V8, so its numbers are boxed and each read checks (see event-heap.ts).
  readonly #bound: number = 0;

  /** @param bound the most messages it may hold; `Infinity` (default) grows without limit. */
  constructor(bound = Number.POSITIVE_INFINITY) {
    if (!(bound > 0)) throw new RangeError(`mailbox bound must be positive, got ${bound}`);
    this.#bound = bound;
    this.#slots = new Array<T | undefined>(Math.min(INITIAL_SLOTS, bound));
  }

  get length(): number {
    return this.#length;
  }

  get bound(): number {
    return this.#bound;
  }

  isEmpty(): boolean {
    return this.#length === 0;
  }

  /** Appends a message. Returns false (and changes nothing) only when the bound is reached. */
  push(message: T): boolean {
    if (this.#length >= this.#bound) return false;
    if (this.#length === this.#slots.length) this.#grow();
    const slots = this.#slots;
    let tail = this.#head + this.#length;
    if (tail >= slots.length) tail -= slots.length;
    slots[tail] = message;
    this.#length++;
    return true;
  }

  /**
   * Puts a message back at the front, as the oldest (a request handed out but never run returns
   * ahead of those that came after it). Returns false (and changes nothing) at the bound.
   */
  unshift(message: T): boolean {
    if (this.#length >= this.#bound) return false;
    if (this.#length === this.#slots.length) this.#grow();
    this.#head = this.#head === 0 ? this.#slots.length - 1 : this.#head - 1;
    this.#slots[this.#head] = message;
    this.#length++;
    return true;
  }

  /** Removes and returns the oldest message, or undefined when empty. */
  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const slots = this.#slots;
    const message = slots[this.#head];
    slots[this.#head] = undefined;
    this.#head++;
    if (this.#head === slots.length) this.#head = 0;
    this.#length--;
    return message;
  }

  /** The oldest message without removing it. */
  peek(): T | undefined {
    return this.#length === 0 ? undefined : this.#slots[this.#head];
  }

  /** Removes every message, oldest first, handing each to `sink` (migration's buffer hand-off). */
  drainTo(sink: (message: T) => void): number {
    const count = this.#length;
    for (let i = 0; i < count; i++) sink(this.shift() as T);
    return count;
  }

  /** Oldest-first copy, for inspection and tests. */
  toArray(): T[] {
    const out: T[] = [];
    const slots = this.#slots;
    for (let i = 0; i < this.#length; i++) out.push(slots[(this.#head + i) % slots.length] as T);
    return out;
  }

  #grow(): void {
    const old = this.#slots;
    const capacity = Math.min(old.length * 2, this.#bound);
    const next = new Array<T | undefined>(capacity);
    for (let i = 0; i < this.#length; i++) next[i] = old[(this.#head + i) % old.length];
    this.#slots = next;
    this.#head = 0;
  }
}
