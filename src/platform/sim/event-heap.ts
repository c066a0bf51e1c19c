/**
 * The pending-event set of the discrete-event kernel, on typed arrays: a timing wheel for the next
 * 65,536 ns in front of a binary min-heap of *time buckets* for everything later. Both keep the
 * events of one exact time in a FIFO list, so equal timestamps fire in scheduling order, and
 * neither ever compares anything but times.
 *
 * Everything the simulator does (a core finishing a handler, a DMA completing, a frame reaching the
 * switch) is one timestamped event, so this is the simulator's innermost loop (DESIGN.md,
 * "platform/sim"). It holds no closures and allocates nothing per event: an event is a time, an
 * integer kind and two numeric arguments, written into parallel typed arrays.
 *
 *                 now          window end = now + W (W = 2^16 ns)
 *   time ───────────┼───────────────────────┼──────────────────────────────────────▶
 *                   │  wheel: one FIFO list │  heap of buckets: one FIFO list per time,
 *                   │  per nanosecond,      │  ordered by time; a bucket moves into the
 *                   │  slot = time mod W    │  wheel, whole, when the window reaches it
 *
 *   wheel heads/tails[slot] ──▶ event ─next─▶ event ─next─▶ …      (3-level bitmap of non-empty slots)
 *   heap (heapTimes, heapBuckets) ──▶ bucket (time, head, tail, creation seq) ──▶ event ─next─▶ …
 *   events, by slot: kind, argA, argB, handle tag, next
 *
 * Why a wheel. A simulator's events are mostly near: a handler schedules its follow-up hundreds of
 * nanoseconds to tens of microseconds ahead. For those, scheduling is an append to the list of
 * slot `time mod W` and taking the next event is a find-first-set over a bitmap (three `clz32`
 * lookups at most) — O(1), no sifting. A heap-only hold experiment measured ~3× the throughput of
 * the bucket heap alone at 10^3 pending events and the same at 10^5 (where buckets already absorb
 * most work); the kernel benchmark at 10^3 went from about 5 to 10 M events/s. Slot indexing is
 * unambiguous because every wheel event lies in [now, now + W): the window end moves to now + W
 * whenever the clock advances, and heap buckets that fall inside the window move into the wheel at
 * that moment — before anything else can be scheduled at their time, so they go first and FIFO
 * holds. When the wheel is empty the clock jumps straight to the heap's earliest live time. Only a
 * live event moves this clock: cancelled events are dropped without moving it, since the kernel may
 * still schedule anything at or after its own clock.
 *
 * Why time buckets in the heap. Time is integer nanoseconds, so events share times constantly
 * (fixed latencies; dense schedules). A heap ordered by (time, sequence) needs a second comparison
 * and a second array move on every sift level — 1.3–1.5× slower than comparing times alone in a
 * heap-only experiment — and a heap operation per event. Here an event whose time already has a
 * bucket is appended to it in O(1). Finding a time's bucket without a hash table: `timeMap` is
 * direct-mapped by time mod 2^16 and names the bucket last created for that residue; a push whose time
 * does not match simply opens a new bucket and takes over the entry. So one time can get several
 * buckets — in creation order, each holding events scheduled after the previous one stopped
 * receiving them. All buckets of the minimum time sit in the subtree under the root (every ancestor
 * of a time-t entry has time ≤ t, hence exactly t), so when a child of the root shares its time,
 * `#mergeTop` chains their lists in creation order before the root leaves: FIFO stays exact.
 * Invariant: a map entry never names a live bucket that is not the newest of its time.
 *
 * Binary, not 4-ary: with the child choice branch-free (see `#siftDown`) a 4-ary heap measured the
 * same within noise; the binary heap is simpler.
 *
 * Cancellation is lazy: a cancelled event stays in its list with its kind set to CANCELLED and is
 * discarded when reached. So that arming and cancelling timeouts cannot grow storage without bound,
 * everything is compacted (cancelled events unlinked, empty slots and buckets dropped, the heap
 * rebuilt in O(n)) once cancelled events outnumber live ones: O(1) amortised per cancel, and storage
 * stays within twice the live events plus a constant.
 *
 * Handles: `tag · 2^26 + slot + 1`, where the tag is the event's sequence number mod 2^27. The slot
 * finds the event in O(1); the tag tells a live event from a stale handle whose slot has since been
 * reused. A stale handle is recognised exactly unless its slot now holds an event scheduled a
 * multiple of 2^27 (134 million) schedules later. Handles are positive, so 0 (NO_EVENT) can mean
 * "no event" in callers' typed tables.
 */

/** A scheduled event's handle, for `cancel`. Plain number at run time (fits in a Float64Array). */
export type EventHandle = number & { readonly __brand: 'EventHandle' };

/** The handle that names no event: cancelling it is a no-op. Safe to store in typed tables. */
export const NO_EVENT = 0 as EventHandle;

const SLOT_FIELD = 2 ** 26;
const INVERSE_SLOT_FIELD = 2 ** -26;
const SEQ_TAG_MODULUS = 2 ** 27;
const SEQ_TAG_MASK = SEQ_TAG_MODULUS - 1;
/** At most this many events can be pending at once (the slot field of a handle is 26 bits). */
export const MAX_PENDING_EVENTS = SLOT_FIELD - 1;
const MAX_HANDLE = SEQ_TAG_MODULUS * SLOT_FIELD - 1;

/** Event kind values below zero are states, not kinds. */
const KIND_CANCELLED = -1;
const KIND_FREE = -2;
/** End of a list. */
const NONE = -1;

/**
 * The wheel spans W = 2^16 ns (65.5 µs): wide enough for the latencies the hardware models use
 * (cores, PCIe, links are ns to µs), small enough that its tables (2 × 256 KiB of list ends and an
 * 8 KiB bitmap) stay cache-friendly. Later events wait in the heap.
 */
const WHEEL_BITS = 16;
/**
 * The wheel's span in ns (and its number of slots). This module reads the private constant, never
 * the export: V8 keeps an exported binding in a cell (importers see it live), so each read of it
 * in optimized code is a load and a check for the not-yet-initialized hole, where a private
 * constant is folded into the instruction.
 */
const WHEEL_SPAN = 1 << WHEEL_BITS;
/** The wheel's span in ns (and its number of slots). */
export const WHEEL_SPAN_NS = WHEEL_SPAN;
const WHEEL_MASK = WHEEL_SPAN - 1;
const LEVEL0_WORDS = WHEEL_SPAN >>> 5; // 2048 words, one bit per slot
const LEVEL1_WORDS = WHEEL_SPAN >>> 10; // 64 words, one bit per non-zero level-0 word
const LEVEL2_WORDS = WHEEL_SPAN >>> 15; // 2 words, one bit per non-zero level-1 word
// Offsets of the wheel's tables in `#wheel`; each slot's first event is at the slot's own index
// (offset 0, written without the offset: fewer bytecodes, see `#wheel`).
const TAILS = WHEEL_SPAN;
const LEVEL0 = TAILS + WHEEL_SPAN;
const LEVEL1 = LEVEL0 + LEVEL0_WORDS;
const LEVEL2 = LEVEL1 + LEVEL1_WORDS;
const WHEEL_TABLES = LEVEL2 + LEVEL2_WORDS;

/** The time of a free bucket: no event time is negative, so a stale map entry never matches. */
const FREE_BUCKET_TIME = -1;
/**
 * Bucket 0 is never used: its time stays FREE_BUCKET_TIME, so a zeroed (new or cleared) time-map
 * entry matches no time.
 */
const SENTINEL_BUCKET = 0;
/** Size of the time map that finds a heap bucket by time (a hint table: entries may be stale). */
const TIME_MAP_SIZE = 1 << 16;
const TIME_MAP_MASK = TIME_MAP_SIZE - 1;

/** `takeNext` results other than a kind. */
export const TAKE_EMPTY = -1;
export const TAKE_LATER = -2;

/** Cancelled events tolerated before compaction is considered (small sets never compact). */
const COMPACT_MIN_CANCELLED = 64;
const DEFAULT_CAPACITY = 1024;

/**
 * Every field of `EventHeap` is initialized where it is declared, numbers with a number and tables
 * with an empty table of the same type (the constructor then sizes them). A class field declared
 * without an initializer holds `undefined` until the constructor assigns it, and V8 records the
 * field's type from the first value: `undefined`, then a number, makes a field of "any value". Its
 * numbers were then boxed — a heap number allocated by every store of a time past 2^31 ns (2.1
 * simulated seconds), twice per clock move in `takeNext` — and every read of a table re-checked
 * which kind of array it had. Starting from a value of the right kind, the field stays a small
 * integer (then an in-place double) and a table field's type is known to the optimizing compiler.
 */
const EMPTY_INT32 = new Int32Array(0);
const EMPTY_FLOAT64 = new Float64Array(0);

function grownFloat64(old: Float64Array, capacity: number, fill = 0): Float64Array {
  const next = new Float64Array(capacity);
  if (fill !== 0) next.fill(fill, old.length);
  next.set(old);
  return next;
}

function grownInt32(old: Int32Array, capacity: number): Int32Array {
  const next = new Int32Array(capacity);
  next.set(old);
  return next;
}

/** Index of the lowest set bit of a non-zero int32. */
function lowestBit(word: number): number {
  return 31 - Math.clz32(word & -word);
}

export class EventHeap {
  // Events ("slots"), indexed by slot.
  #kinds: Int32Array = EMPTY_INT32;
  #argsA: Float64Array = EMPTY_FLOAT64;
  #argsB: Float64Array = EMPTY_FLOAT64;
  /** Low 27 bits of each event's sequence number: the tag that tells its handle from stale ones. */
  #seqTags: Int32Array = EMPTY_INT32;
  /** The next event in the same wheel slot or bucket, or NONE. */
  #nextInList: Int32Array = EMPTY_INT32;
  #freeSlots: Int32Array = EMPTY_INT32;
  #freeSlotCount = 0;
  /** Slots at and above this index have never been used (so the free list needs no prefill). */
  #slotsUsed = 0;
  #capacity = 0;

  // The wheel: events in [now, windowEnd), windowEnd ≤ now + WHEEL_SPAN.
  /**
   * The wheel's tables in one array: each slot's first event at the slot's index, its last at
   * TAILS + slot, the bitmap at LEVEL0, LEVEL1, LEVEL2. One array rather than five: V8 checks a typed
   * array's map and loads its length and data pointer once per array a function touches, and
   * taking or adding an event touches four or five of these tables.
   */
  readonly #wheel = new Int32Array(WHEEL_TABLES).fill(NONE, 0, WHEEL_SPAN);
  /** The time of the last event taken (or the start): no stored event is earlier. */
  #nowNs = 0;
  /** Events before this time are in the wheel; events at or after it are in the heap. */
  #windowEndNs = 0;

  // The heap of buckets (events at or after windowEnd), by position, ordered by time alone.
  #heapTimes: Float64Array = EMPTY_FLOAT64;
  #heapBuckets: Int32Array = EMPTY_INT32;
  #size = 0;
  // Buckets, indexed by bucket.
  #bucketTimes: Float64Array = EMPTY_FLOAT64;
  #bucketHeads: Int32Array = EMPTY_INT32;
  #bucketTails: Int32Array = EMPTY_INT32;
  /** Creation order of buckets, to merge several buckets of one time in FIFO order. */
  #bucketSeqs: Float64Array = EMPTY_FLOAT64;
  #freeBuckets: Int32Array = EMPTY_INT32;
  #freeBucketCount = 0;
  #bucketsUsed = SENTINEL_BUCKET + 1;
  #nextBucketSeq = 0;
  readonly #timeMap = new Int32Array(TIME_MAP_SIZE);
  /** Scratch for `#mergeTop`. */
  #mergeScratch: Int32Array = new Int32Array(16);

  /** The next event's sequence tag (its sequence number mod 2^27, kept as a wrapping int32). */
  #nextSeqTag = 1;
  /** Cancelled events still stored (live events are the stored ones minus these). */
  #cancelled = 0;

  /**
   * The event `takeNext` returned: [timeNs, a, b]. A typed array rather than a returned object so
   * taking an event allocates nothing; read it before scheduling anything.
   */
  readonly taken = new Float64Array(3);

  /**
   * @param initialCapacity events storable before the tables first double.
   * @param startNs the clock's starting value; no event may be earlier.
   */
  constructor(initialCapacity = DEFAULT_CAPACITY, startNs = 0) {
    if (!Number.isInteger(initialCapacity) || initialCapacity < 4 || initialCapacity > MAX_PENDING_EVENTS) {
      throw new RangeError(
        `event heap capacity must be an integer in [4, ${MAX_PENDING_EVENTS}], got ${initialCapacity}`,
      );
    }
    const capacity = initialCapacity;
    this.#capacity = capacity;
    this.#kinds = new Int32Array(capacity);
    this.#argsA = new Float64Array(capacity);
    this.#argsB = new Float64Array(capacity);
    this.#seqTags = new Int32Array(capacity);
    this.#nextInList = new Int32Array(capacity);
    this.#freeSlots = new Int32Array(capacity);
    this.#heapTimes = new Float64Array(capacity);
    this.#heapBuckets = new Int32Array(capacity);
    // Buckets never outnumber stored events; one more for the sentinel.
    this.#bucketTimes = new Float64Array(capacity + 1).fill(FREE_BUCKET_TIME);
    this.#bucketHeads = new Int32Array(capacity + 1);
    this.#bucketTails = new Int32Array(capacity + 1);
    this.#bucketSeqs = new Float64Array(capacity + 1);
    this.#freeBuckets = new Int32Array(capacity + 1);
    this.#nowNs = startNs;
    this.#windowEndNs = startNs + WHEEL_SPAN;
  }

  /** Live (scheduled, not cancelled, not yet taken) events. */
  get live(): number {
    return this.entries - this.#cancelled;
  }

  /** Stored events, cancelled ones not yet discarded included (for tests of the compaction bound). */
  get entries(): number {
    // Every stored event holds a slot; every other slot is on the free list or was never used.
    return this.#slotsUsed - this.#freeSlotCount;
  }

  /**
   * Adds an event. The caller has validated `timeNs` (an integer no earlier than the last event
   * taken) and `kind` (a registered, non-negative kind).
   */
  push(timeNs: number, kind: number, a: number, b: number): EventHandle {
    let slot: number;
    if (this.#freeSlotCount > 0) {
      slot = this.#freeSlots[--this.#freeSlotCount]!;
    } else {
      if (this.#slotsUsed === this.#capacity) this.#grow();
      slot = this.#slotsUsed++;
    }
    const seqTag = this.#nextSeqTag;
    // Integer wrap-around, not `%` on a double: V8 compiles a double modulo to a libm call.
    this.#nextSeqTag = (seqTag + 1) & SEQ_TAG_MASK;
    this.#seqTags[slot] = seqTag;
    this.#kinds[slot] = kind;
    this.#argsA[slot] = a;
    this.#argsB[slot] = b;
    this.#nextInList[slot] = NONE;
    if (timeNs < this.#windowEndNs) {
      // `timeNs | 0` keeps the low 32 bits (ToInt32 is modular): enough for the residue mod W.
      const index = (timeNs | 0) & WHEEL_MASK;
      const wheel = this.#wheel;
      if (wheel[index] === NONE) {
        wheel[index] = slot;
        // The bitmap's bottom level inline; the upper levels only when this word was empty.
        const at0 = LEVEL0 + (index >>> 5);
        const before = wheel[at0]!;
        wheel[at0] = before | (1 << (index & 31));
        if (before === 0) this.#markUpper(index);
      } else {
        this.#nextInList[wheel[TAILS + index]!] = slot;
      }
      wheel[TAILS + index] = slot;
    } else {
      this.#pushLater(timeNs, slot);
    }
    return (seqTag * SLOT_FIELD + slot + 1) as EventHandle;
  }

  /**
   * `push` without the handle: returns the event's slot. A handle is past 2^31, so a call that
   * returns one and is not inlined boxes it in a heap number — an allocation per event for callers
   * that never cancel (the simulated node's per-packet events: `EventKernel.post`). The body is
   * `push`'s, repeated on purpose: `push` written as `add` plus the handle cost the kernel bench's
   * hold model 19% more instructions per event (Callgrind: 700 → 832).
   */
  add(timeNs: number, kind: number, a: number, b: number): number {
    let slot: number;
    if (this.#freeSlotCount > 0) {
      slot = this.#freeSlots[--this.#freeSlotCount]!;
    } else {
      if (this.#slotsUsed === this.#capacity) this.#grow();
      slot = this.#slotsUsed++;
    }
    const seqTag = this.#nextSeqTag;
    // Integer wrap-around, not `%` on a double: V8 compiles a double modulo to a libm call.
    this.#nextSeqTag = (seqTag + 1) & SEQ_TAG_MASK;
    this.#seqTags[slot] = seqTag;
    this.#kinds[slot] = kind;
    this.#argsA[slot] = a;
    this.#argsB[slot] = b;
    this.#nextInList[slot] = NONE;
    if (timeNs < this.#windowEndNs) {
      // `timeNs | 0` keeps the low 32 bits (ToInt32 is modular): enough for the residue mod W.
      const index = (timeNs | 0) & WHEEL_MASK;
      const wheel = this.#wheel;
      if (wheel[index] === NONE) {
        wheel[index] = slot;
        // The bitmap's bottom level inline; the upper levels only when this word was empty.
        const at0 = LEVEL0 + (index >>> 5);
        const before = wheel[at0]!;
        wheel[at0] = before | (1 << (index & 31));
        if (before === 0) this.#markUpper(index);
      } else {
        this.#nextInList[wheel[TAILS + index]!] = slot;
      }
      wheel[TAILS + index] = slot;
    } else {
      this.#pushLater(timeNs, slot);
    }
    return slot;
  }

  /**
   * Takes the next live event in (time, scheduling order) if its time is at most `limitNs`:
   * returns its kind and writes its time and arguments into `taken`. Returns TAKE_EMPTY when no
   * live event remains and TAKE_LATER when the next is after `limitNs` (then nothing is taken).
   * Cancelled events met on the way are discarded.
   */
  takeNext(limitNs: number): number {
    const wheel = this.#wheel;
    for (;;) {
      if ((wheel[LEVEL2]! | wheel[LEVEL2 + 1]!) === 0) {
        // The wheel is empty: the clock jumps to the heap's earliest live time, whose bucket (and
        // any other inside the new window) moves into the wheel.
        if (!this.#dropCancelledAtHeapFront()) return TAKE_EMPTY;
        const earliestNs = this.#heapTimes[0]!;
        if (earliestNs > limitNs) return TAKE_LATER;
        this.#nowNs = earliestNs;
        this.#advanceWindow(earliestNs + WHEEL_SPAN);
      }
      const nowNs = this.#nowNs;
      const start = (nowNs | 0) & WHEEL_MASK;
      // The first non-empty slot from `start`: this word, then the next one, inline (a simulator's
      // events are mostly tens of ns apart), then the bitmap's upper levels (a call). The lowest set
      // bit is written out (`31 − clz32(x & −x)`): called as a function it was not always inlined.
      const word = start >>> 5;
      let index: number;
      const bits = wheel[LEVEL0 + word]! & (-1 << (start & 31));
      if (bits !== 0) index = (word << 5) | (31 - Math.clz32(bits & -bits));
      else {
        const nextBits = word + 1 < LEVEL0_WORDS ? wheel[LEVEL0 + (word + 1)]! : 0;
        index =
          nextBits !== 0
            ? ((word + 1) << 5) | (31 - Math.clz32(nextBits & -nextBits))
            : this.#firstSlotAfterWordWrapping(word);
      }
      const timeNs = nowNs + ((index - start) & WHEEL_MASK);
      if (timeNs > limitNs) return TAKE_LATER;
      const slot = wheel[index]!;
      const next = this.#nextInList[slot]!;
      wheel[index] = next;
      if (next === NONE) {
        const takenWord = index >>> 5;
        const after = wheel[LEVEL0 + takenWord]! & ~(1 << (index & 31));
        wheel[LEVEL0 + takenWord] = after;
        if (after === 0) this.#clearUpper(index);
      }
      const kind = this.#kinds[slot]!;
      if (kind === KIND_CANCELLED) {
        // Discarded without moving the clock: only a live event may advance it, or the kernel
        // could later schedule before a time this set has already moved past.
        this.#discard(slot);
        continue;
      }
      this.#kinds[slot] = KIND_FREE;
      this.#freeSlots[this.#freeSlotCount++] = slot;
      if (timeNs !== nowNs) {
        this.#nowNs = timeNs;
        const endNs = timeNs + WHEEL_SPAN;
        if (this.#size > 0 && this.#heapTimes[0]! < endNs) this.#advanceWindow(endNs);
        else this.#windowEndNs = endNs;
      }
      const taken = this.taken;
      taken[0] = timeNs;
      taken[1] = this.#argsA[slot]!;
      taken[2] = this.#argsB[slot]!;
      return kind;
    }
  }

  /** Time of the next live event, or Infinity when none is pending. Discards cancelled ones met. */
  peekTimeNs(): number {
    while ((this.#wheel[LEVEL2]! | this.#wheel[LEVEL2 + 1]!) !== 0) {
      const start = (this.#nowNs | 0) & WHEEL_MASK;
      const index = this.#firstSlotFrom(start);
      const slot = this.#wheel[index]!;
      if (this.#kinds[slot] !== KIND_CANCELLED) return this.#nowNs + ((index - start) & WHEEL_MASK);
      const next = this.#nextInList[slot]!;
      this.#wheel[index] = next;
      if (next === NONE) this.#clearSlot(index);
      this.#discard(slot);
    }
    return this.#dropCancelledAtHeapFront() ? this.#heapTimes[0]! : Number.POSITIVE_INFINITY;
  }

  /**
   * Discards cancelled events at the front of the heap's earliest bucket until its first event is
   * live. Returns whether the heap holds any event.
   */
  #dropCancelledAtHeapFront(): boolean {
    while (this.#size > 0) {
      const bucket = this.#heapBuckets[0]!;
      const slot = this.#bucketHeads[bucket]!;
      if (this.#kinds[slot] !== KIND_CANCELLED) return true;
      const next = this.#nextInList[slot]!;
      this.#discard(slot);
      if (next === NONE) {
        this.#freeBucket(bucket);
        this.#removeRoot();
      } else {
        this.#bucketHeads[bucket] = next;
      }
    }
    return false;
  }

  /** The slot of the live event `handle` names, or -1 if it fired, was cancelled, or never existed. */
  liveSlotOf(handle: number): number {
    if (!(handle >= 1 && handle <= MAX_HANDLE) || Math.trunc(handle) !== handle) return -1;
    // Exact: SLOT_FIELD is a power of two, so scaling and flooring lose nothing.
    const tag = Math.floor(handle * INVERSE_SLOT_FIELD);
    const slot = handle - tag * SLOT_FIELD - 1;
    if (slot < 0 || slot >= this.#slotsUsed || this.#kinds[slot]! < 0) return -1;
    return this.#seqTags[slot] === tag ? slot : -1;
  }

  /** Kind of the event in a live slot (from `liveSlotOf`). */
  kindOf(slot: number): number {
    return this.#kinds[slot]!;
  }

  /** First argument of the event in a live slot. */
  argAOf(slot: number): number {
    return this.#argsA[slot]!;
  }

  /** Cancels the live event in `slot` (from `liveSlotOf`); it will never be taken. */
  cancelSlot(slot: number): void {
    this.#kinds[slot] = KIND_CANCELLED;
    this.#cancelled++;
    if (this.#cancelled > COMPACT_MIN_CANCELLED && 2 * this.#cancelled > this.entries) this.#compact();
  }

  /** Frees a cancelled event's slot once it has been unlinked. */
  #discard(slot: number): void {
    this.#kinds[slot] = KIND_FREE;
    this.#freeSlots[this.#freeSlotCount++] = slot;
    this.#cancelled--;
  }

  // ── The wheel's bitmap ────────────────────────────────────────────────────────────────────────

  #markSlot(index: number): void {
    const word = index >>> 5;
    const before = this.#wheel[LEVEL0 + word]!;
    this.#wheel[LEVEL0 + word] = before | (1 << (index & 31));
    if (before === 0) this.#markUpper(index);
  }

  /** Marks the level-0 word of `index` non-empty in the upper levels. */
  #markUpper(index: number): void {
    const wheel = this.#wheel;
    const at1 = LEVEL1 + (index >>> 10);
    const before1 = wheel[at1]!;
    wheel[at1] = before1 | (1 << ((index >>> 5) & 31));
    if (before1 === 0) {
      const at2 = LEVEL2 + (index >>> 15);
      wheel[at2] = wheel[at2]! | (1 << ((index >>> 10) & 31));
    }
  }

  #clearSlot(index: number): void {
    const word = index >>> 5;
    const after = this.#wheel[LEVEL0 + word]! & ~(1 << (index & 31));
    this.#wheel[LEVEL0 + word] = after;
    if (after === 0) this.#clearUpper(index);
  }

  /** Marks the (now empty) level-0 word of `index` empty in the upper levels. */
  #clearUpper(index: number): void {
    const wheel = this.#wheel;
    const at1 = LEVEL1 + (index >>> 10);
    const after1 = wheel[at1]! & ~(1 << ((index >>> 5) & 31));
    wheel[at1] = after1;
    if (after1 === 0) {
      const at2 = LEVEL2 + (index >>> 15);
      wheel[at2] = wheel[at2]! & ~(1 << ((index >>> 10) & 31));
    }
  }

  /** The first non-empty slot at or after `start`, wrapping around. The wheel must be non-empty. */
  #firstSlotFrom(start: number): number {
    // Fast path: a non-empty slot in the same 32-slot word (dense schedules).
    const word = start >>> 5;
    const bits = this.#wheel[LEVEL0 + word]! & (-1 << (start & 31));
    if (bits !== 0) return (word << 5) | lowestBit(bits);
    return this.#firstSlotAfterWordWrapping(word);
  }

  /** The first non-empty slot after level-0 word `word`, wrapping around. The wheel must be non-empty. */
  #firstSlotAfterWordWrapping(word: number): number {
    const found = this.#firstSlotAfterWord(word);
    return found >= 0 ? found : this.#firstSlotAfterWord(-1);
  }

  /** The first non-empty slot in a level-0 word after `word` (-1: from the start), or -1. */
  #firstSlotAfterWord(word: number): number {
    const wheel = this.#wheel;
    let word0 = word + 1;
    if (word0 >= LEVEL0_WORDS) return -1;
    let word1 = word0 >>> 5;
    let bits1 = wheel[LEVEL1 + word1]! & (-1 << (word0 & 31));
    if (bits1 === 0) {
      const next1 = word1 + 1;
      if (next1 >= LEVEL1_WORDS) return -1;
      let word2 = next1 >>> 5;
      let bits2 = this.#wheel[LEVEL2 + word2]! & (-1 << (next1 & 31));
      while (bits2 === 0) {
        if (++word2 >= LEVEL2_WORDS) return -1;
        bits2 = this.#wheel[LEVEL2 + word2]!;
      }
      word1 = (word2 << 5) | (31 - Math.clz32(bits2 & -bits2));
      bits1 = wheel[LEVEL1 + word1]!;
    }
    // The lowest set bit written out, as in `takeNext`: TurboFan inlines this function into
    // `takeNext` and then ran out of budget for `lowestBit`, a real call per bitmap level (events
    // more than a word of slots apart take this path on most events of an echo run).
    word0 = (word1 << 5) | (31 - Math.clz32(bits1 & -bits1));
    const bits0 = wheel[LEVEL0 + word0]!;
    return (word0 << 5) | (31 - Math.clz32(bits0 & -bits0));
  }

  /**
   * Moves the window end to `endNs` (≤ now + W): every heap bucket earlier than it moves, whole,
   * into its wheel slot. Those slots are empty — their times were at or past the old window end, so
   * nothing was ever scheduled into them — which is why the moved events keep their place ahead of
   * anything scheduled for the same time from now on.
   */
  #advanceWindow(endNs: number): void {
    while (this.#size > 0 && this.#heapTimes[0]! < endNs) {
      const timeNs = this.#heapTimes[0]!;
      if (
        (this.#size > 1 && this.#heapTimes[1] === timeNs) ||
        (this.#size > 2 && this.#heapTimes[2] === timeNs)
      ) {
        this.#mergeTop(timeNs);
      }
      const bucket = this.#heapBuckets[0]!;
      this.#removeRoot();
      const index = (timeNs | 0) & WHEEL_MASK;
      this.#wheel[index] = this.#bucketHeads[bucket]!;
      this.#wheel[TAILS + index] = this.#bucketTails[bucket]!;
      this.#markSlot(index);
      this.#freeBucket(bucket);
    }
    this.#windowEndNs = endNs;
  }

  // ── The heap of buckets ───────────────────────────────────────────────────────────────────────

  /** Appends `slot` to the newest bucket of `timeNs`, or opens a bucket for it. */
  #pushLater(timeNs: number, slot: number): void {
    const mapIndex = (timeNs | 0) & TIME_MAP_MASK;
    let bucket = this.#timeMap[mapIndex]!;
    if (this.#bucketTimes[bucket] === timeNs) {
      this.#nextInList[this.#bucketTails[bucket]!] = slot;
      this.#bucketTails[bucket] = slot;
      return;
    }
    bucket = this.#freeBucketCount > 0 ? this.#freeBuckets[--this.#freeBucketCount]! : this.#bucketsUsed++;
    this.#bucketTimes[bucket] = timeNs;
    this.#bucketHeads[bucket] = slot;
    this.#bucketTails[bucket] = slot;
    this.#bucketSeqs[bucket] = this.#nextBucketSeq++;
    this.#timeMap[mapIndex] = bucket;
    this.#siftUp(this.#size++, timeNs, bucket);
  }

  #freeBucket(bucket: number): void {
    this.#bucketTimes[bucket] = FREE_BUCKET_TIME;
    this.#freeBuckets[this.#freeBucketCount++] = bucket;
  }

  /**
   * Several buckets share the minimum time (see the header): pops them all, chains their lists in
   * creation order into the oldest, and puts that one back as the root. Rare; O(k log n).
   */
  #mergeTop(timeNs: number): void {
    let count = 0;
    while (this.#size > 0 && this.#heapTimes[0] === timeNs) {
      if (count === this.#mergeScratch.length) this.#mergeScratch = grownInt32(this.#mergeScratch, count * 2);
      this.#mergeScratch[count++] = this.#heapBuckets[0]!;
      this.#removeRoot();
    }
    const buckets = this.#mergeScratch;
    const bucketSeqs = this.#bucketSeqs;
    // Insertion sort by creation order: merges involve a handful of buckets.
    for (let next = 1; next < count; next++) {
      const bucket = buckets[next]!;
      const bucketSeq = bucketSeqs[bucket]!;
      let index = next;
      while (index > 0 && bucketSeqs[buckets[index - 1]!]! > bucketSeq) {
        buckets[index] = buckets[index - 1]!;
        index--;
      }
      buckets[index] = bucket;
    }
    const first = buckets[0]!;
    for (let index = 1; index < count; index++) {
      const bucket = buckets[index]!;
      this.#nextInList[this.#bucketTails[first]!] = this.#bucketHeads[bucket]!;
      this.#bucketTails[first] = this.#bucketTails[bucket]!;
      this.#freeBucket(bucket);
    }
    // The merged bucket holds every event of this time, so later ones may append to it. (Its
    // creation order stays the oldest, which is still right: any later bucket of this time is newer.)
    this.#timeMap[(timeNs | 0) & TIME_MAP_MASK] = first;
    this.#siftUp(this.#size++, timeNs, first);
  }

  /** Vacates position 0: the last entry takes its place and sifts down. */
  #removeRoot(): void {
    const last = --this.#size;
    if (last > 0) this.#siftDown(0, this.#heapTimes[last]!, this.#heapBuckets[last]!);
  }

  /**
   * Moves the hole at `position` down until `timeNs` fits, then writes the entry there.
   * Hole-based: each level moves one child up instead of swapping, and the entry is written once.
   */
  #siftDown(position: number, timeNs: number, bucket: number): void {
    const times = this.#heapTimes;
    const buckets = this.#heapBuckets;
    const size = this.#size;
    let hole = position;
    for (;;) {
      let child = 2 * hole + 1;
      if (child >= size) break;
      // Branch-free choice of the earlier child: V8 compiles `+(x < y)` to a flag-to-register move.
      // Which child is earlier is a coin flip, so an `if` here mispredicted on every level; this
      // form measured 1.5× faster in a heap-only hold experiment.
      if (child + 1 < size) child += +(times[child + 1]! < times[child]!);
      const childTime = times[child]!;
      if (childTime > timeNs) break;
      times[hole] = childTime;
      buckets[hole] = buckets[child]!;
      hole = child;
    }
    times[hole] = timeNs;
    buckets[hole] = bucket;
  }

  #siftUp(position: number, timeNs: number, bucket: number): void {
    const times = this.#heapTimes;
    const buckets = this.#heapBuckets;
    let hole = position;
    while (hole > 0) {
      const parent = (hole - 1) >> 1;
      const parentTime = times[parent]!;
      if (parentTime <= timeNs) break;
      times[hole] = parentTime;
      buckets[hole] = buckets[parent]!;
      hole = parent;
    }
    times[hole] = timeNs;
    buckets[hole] = bucket;
  }

  // ── Compaction and growth ─────────────────────────────────────────────────────────────────────

  /**
   * Unlinks every cancelled event from the wheel and the buckets, drops slots and buckets left
   * empty, and rebuilds the heap bottom-up (Floyd): O(stored events + wheel bitmap). The time map
   * is cleared (to the sentinel): a missing entry only costs a new bucket.
   */
  #compact(): void {
    for (let word = 0; word < LEVEL0_WORDS; word++) {
      let bits = this.#wheel[LEVEL0 + word]!;
      while (bits !== 0) {
        const bit = lowestBit(bits);
        bits &= bits - 1;
        const index = (word << 5) | bit;
        const head = this.#withoutCancelled(this.#wheel[index]!);
        this.#wheel[index] = head;
        if (head === NONE) this.#clearSlot(index);
        else this.#wheel[TAILS + index] = this.#lastOf(head);
      }
    }
    const heapTimes = this.#heapTimes;
    const heapBuckets = this.#heapBuckets;
    let kept = 0;
    for (let position = 0; position < this.#size; position++) {
      const bucket = heapBuckets[position]!;
      const head = this.#withoutCancelled(this.#bucketHeads[bucket]!);
      if (head === NONE) {
        this.#freeBucket(bucket);
        continue;
      }
      this.#bucketHeads[bucket] = head;
      this.#bucketTails[bucket] = this.#lastOf(head);
      heapTimes[kept] = heapTimes[position]!;
      heapBuckets[kept] = bucket;
      kept++;
    }
    this.#size = kept;
    for (let position = (kept - 2) >> 1; position >= 0; position--) {
      this.#siftDown(position, heapTimes[position]!, heapBuckets[position]!);
    }
    this.#timeMap.fill(SENTINEL_BUCKET);
  }

  /** Unlinks and frees the cancelled events of a list; returns its new head (or NONE). */
  #withoutCancelled(head: number): number {
    const kinds = this.#kinds;
    const nextInList = this.#nextInList;
    let newHead = NONE;
    let tail = NONE;
    for (let slot = head; slot !== NONE; ) {
      const next = nextInList[slot]!;
      if (kinds[slot] === KIND_CANCELLED) {
        this.#discard(slot);
      } else {
        if (tail === NONE) newHead = slot;
        else nextInList[tail] = slot;
        tail = slot;
      }
      slot = next;
    }
    if (tail !== NONE) nextInList[tail] = NONE;
    return newHead;
  }

  #lastOf(head: number): number {
    let slot = head;
    for (let next = this.#nextInList[slot]!; next !== NONE; next = this.#nextInList[slot]!) slot = next;
    return slot;
  }

  /** Doubles every per-event table (buckets never outnumber stored events, so one capacity serves). */
  #grow(): void {
    const capacity = Math.min(this.#capacity * 2, MAX_PENDING_EVENTS);
    if (capacity === this.#capacity) {
      throw new RangeError(
        `more than ${MAX_PENDING_EVENTS} events pending at once: the model schedules far more than ` +
          'it consumes; look for an event that reschedules itself more than once',
      );
    }
    this.#kinds = grownInt32(this.#kinds, capacity);
    this.#argsA = grownFloat64(this.#argsA, capacity);
    this.#argsB = grownFloat64(this.#argsB, capacity);
    this.#seqTags = grownInt32(this.#seqTags, capacity);
    this.#nextInList = grownInt32(this.#nextInList, capacity);
    this.#freeSlots = grownInt32(this.#freeSlots, capacity);
    this.#heapTimes = grownFloat64(this.#heapTimes, capacity);
    this.#heapBuckets = grownInt32(this.#heapBuckets, capacity);
    this.#bucketTimes = grownFloat64(this.#bucketTimes, capacity + 1, FREE_BUCKET_TIME);
    this.#bucketHeads = grownInt32(this.#bucketHeads, capacity + 1);
    this.#bucketTails = grownInt32(this.#bucketTails, capacity + 1);
    this.#bucketSeqs = grownFloat64(this.#bucketSeqs, capacity + 1);
    this.#freeBuckets = grownInt32(this.#freeBuckets, capacity + 1);
    this.#capacity = capacity;
  }
}
