/**
 * A single-producer / single-consumer ring of variable-length messages in a SharedArrayBuffer: one
 * direction of the live platform's NIC↔host channel (iPipe §3 "Host–NIC messaging": "I/O channels,
 * each two one-way ring buffers"; batched, non-blocking sends; a lazy head update — the consumer
 * tells the producer when it has consumed half the ring; a 4-byte checksum on every message).
 *
 * One thread produces, one consumes; each attaches its own `SpscRing` object to the same memory
 * (`SpscRing.create` on one side, `SpscRing.attach(memory)` on the other, after posting
 * `ring.memory`: a shared WebAssembly.Memory where the engine gives one, else the SharedArrayBuffer).
 *
 * ## Layout
 *
 *   control block (384 bytes: six 64-byte cache lines, one word each, so a store by one side never
 *   evicts a line the other side is reading in its hot loop — false sharing would cost a cache-line
 *   transfer per message):
 *
 *     line 0  [0] magic  [1] layout version  [2] capacityBytes  [3] closed     (written once / at close)
 *     line 1  [16] TAIL          published by the producer at flush        (producer writes)
 *     line 2  [32] HEAD          published lazily by the consumer          (consumer writes)
 *     line 3  [48] DATA_SEQ      doorbell the consumer sleeps on           (producer writes, when it rings)
 *     line 4  [64] HEAD_REQUEST  1 while the producer waits for room       (producer sets and clears)
 *     line 5  [80] SLEEP_EPOCH   DATA_SEQ + 1 as the consumer saw it before its last sleep (consumer writes)
 *
 *   data area (capacityBytes, a power of two): records, each starting on an 8-byte boundary
 *
 *     +------------+--------------+----------------------------+
 *     | u32 length | u32 checksum | payload, padded to 8 bytes |      a message record
 *     +------------+--------------+----------------------------+
 *     | 0xFFFFFFFF | (unused)     | … to the end of the area   |      a skip marker
 *     +------------+--------------+-------------------------------
 *
 *   The checksum (word-checksum.ts: a 33-lane xor-shift-multiply word hash that catches any damage
 *   confined to one 32-bit word) covers the payload and is seeded with the length, so a flipped bit
 *   in the length word fails the check as well. A side attached by the ring's `memory` (a shared
 *   WebAssembly.Memory) computes it with WebAssembly SIMD (word-checksum-wasm.ts: the same function,
 *   eight i32x4 accumulators, ~2× the scalar hash's speed at 1 KiB); a side attached by the bare
 *   SharedArrayBuffer, in JS.
 *
 * ## Positions
 *
 * HEAD and TAIL are free-running byte counters (int32, wrapping at 2^32); a counter's place in the
 * area is `position & (capacity − 1)`. `TAIL − HEAD` (mod 2^32) is the number of bytes in use, from
 * 0 (empty) to capacity (exactly full — no slot is sacrificed to tell full from empty).
 *
 *         publishedHead   head (consumer-local)                    publishedTail   tail (producer-local)
 *               │            │                                          │             │
 *   ... free ...│ consumed,  │ published records the consumer has not   │ written,    │ ... free ...
 *               │ not yet    │ read yet                                 │ not flushed │
 *               │ published  │                                          │             │
 *   ────────────┴────────────┴──────────────────────────────────────────┴─────────────┴─────────────
 *   The producer may write in [tail, publishedHead + capacity); the consumer may read in
 *   [head, publishedTail). These never overlap because publishedHead ≤ head and tail ≤ publishedHead + capacity.
 *
 * A record never straddles the end of the area: when it would not fit in the bytes left before the
 * end, the producer writes a skip marker there and puts the record at offset 0. Wrap-around:
 *
 *     offset 0                                                         capacity
 *     | record k+1 | record k+2 |   free ...   | record k-1 | record k | SKIP ...|
 *                               ^ tail & mask  ^ head & mask
 *
 * A message may be at most capacity/2 − 8 bytes, so its record plus the worst skip in front of it
 * (capacity/2 − 8) fits in an empty ring: an empty ring accepts every legal message, so a producer
 * that waits for the consumer to drain can always make progress.
 *
 * ## Memory ordering (why plain typed-array accesses of the records are safe)
 *
 * ECMAScript's memory model makes every Atomics operation sequentially consistent, and an
 * `Atomics.load` that reads the value of an `Atomics.store` synchronizes with it: every plain write
 * before the store happens-before every plain read after the load.
 *   - The producer writes a record with plain stores, then publishes `TAIL` with `Atomics.store`;
 *     the consumer `Atomics.load`s `TAIL` and only then reads records below it: it sees them whole.
 *   - The consumer finishes reading a record (including any zero-copy view, which is released by
 *     `consume()`) before it publishes a `HEAD` past it; the producer `Atomics.load`s `HEAD` before
 *     writing into bytes below it: it never overwrites a record still being read.
 *
 * ## Lazy head update (the paper's "consumer tells the producer when it has consumed half the ring")
 *
 * The consumer keeps its head locally and stores it to `HEAD` only when it has consumed half the
 * ring since the last publication, or when the producer asks. Safety needs only `publishedHead ≤
 * head` (the producer sees less room than there is, never more). Liveness needs the producer never
 * to wait for ever on a head the consumer keeps to itself; three rules make sure of it:
 *   1. When `tryWrite` finds no room even after re-reading `HEAD`, it sets `HEAD_REQUEST`, then
 *      publishes the producer's own pending batch (a batch that fills the ring cannot grow, and the
 *      consumer must see it to drain it). Request first: a consumer that sees the batch (it loads
 *      `TAIL` after the store) then sees the request too, so the empty poll after draining that
 *      batch publishes the head (rule 2) before the consumer does anything else — before it
 *      flushes the replies a duplex peer waits for. Batch first, a consumer scheduled between the
 *      two stores drained it, found no request and kept its head until its next sleep; the
 *      producer, refused with the ring in fact empty, learns of the room only if it waits for
 *      room (test/platform/live/ring-interleavings.test.ts replays that schedule).
 *   2. A consumer that finds the ring empty checks `HEAD_REQUEST` (one load) and publishes if asked.
 *   3. A consumer about to sleep publishes first: a sleeping consumer owes the producer nothing.
 * A producer blocked in `write`/`waitForRoom` sleeps on the `HEAD` word; every publication made
 * while `HEAD_REQUEST` is set notifies it. Only the producer clears the request, once a write fits
 * again. (A consumer that cleared it when answering would race the producer: a producer that read
 * the just-published head, found it still too small and went to sleep on it would have no one left
 * to wake it — the two-thread test caught exactly that.) Lost wake-ups are excluded by the usual
 * Dekker pairing under sequential consistency: the producer stores `HEAD_REQUEST` then loads `HEAD`
 * (h); the consumer stores `HEAD` then loads `HEAD_REQUEST`. Any publication after the producer's
 * load sees the request and notifies; `Atomics.wait(HEAD, h)` re-checks the word atomically, so a
 * publication between the load and the sleep makes the wait return at once.
 *
 * ## Doorbell (piscina's idiom: an idle thread sleeps in Atomics.wait, not on message events)
 *
 * An idle consumer reads `DATA_SEQ` (= s), stores `SLEEP_EPOCH` = s + 1 ("I sleep on s"), re-checks
 * `TAIL`, then `Atomics.wait`s on `DATA_SEQ` while it is still s. A flush stores `TAIL`, then loads
 * `SLEEP_EPOCH`; only if it names the current `DATA_SEQ` (a sleeper that nobody woke yet) does it
 * bump `DATA_SEQ` and `Atomics.notify` — so a busy consumer costs the producer a load or two per
 * batch and no notify, and a sleeping one is notified once per sleep, not once per flush while it
 * wakes up (the bump makes the epoch stale). The Dekker pairing (`SLEEP_EPOCH`/`TAIL`) rules out a
 * lost wake-up, and a wait that starts after the bump returns at once (`DATA_SEQ` ≠ s). Nobody
 * clears the epoch, so several waits of one consumer at once (an `onReadable` pump and an explicit
 * `waitForDataAsync`) cannot disarm each other; the price is one spurious notify after a sleep that
 * timed out.
 *
 * Waking a thread that sleeps on the other core costs ~25–30 µs on the 2-vCPU machines we run on;
 * spinning costs a core for as long as it lasts. `spinIterations` polls `TAIL` (a producer waiting
 * for room polls `HEAD`) that many times before sleeping, so a side that is fed again within the
 * spin never pays the wake-up. Spin where a core is dedicated to the ring (a NIC-side core); sleep
 * (spinIterations 0) where cores are shared — on an oversubscribed machine a spinner steals the very
 * timeslice the other side needs to make progress (bench/ring.bench.ts shows both).
 */

import { ConfigError } from '../../../errors.ts';
import { ChannelChecksumError, ChannelFrameError, ChannelMessageTooLargeError } from './channel-errors.ts';
import { HOST_IS_LITTLE_ENDIAN } from './crc32c-words.ts';
import { ringChecksum } from './word-checksum.ts';
import {
  allocateSharedWasmMemory,
  isSharedWasmMemory,
  type SharedWasmMemory,
  type WasmChecksum,
  wasmRingChecksum,
} from './word-checksum-wasm.ts';

/** `peek`/`readInto`: no message is waiting. */
export const RING_EMPTY = -1;
/** `peek`/`readInto`: the next record failed its checksum or framing check (see `lastError`). */
export const RING_CORRUPT = -2;
/** `readInto`: the next message is longer than the target; it stays in the ring (`peek()` gives its length). */
export const RING_TARGET_TOO_SMALL = -3;

/** Bytes before the data area. */
export const RING_CONTROL_BYTES = 384;
/** Smallest and largest data areas. */
export const RING_MIN_CAPACITY_BYTES = 64;
export const RING_MAX_CAPACITY_BYTES = 1 << 30;
/**
 * Polls of `TAIL` (or `HEAD`) before a waiting side goes to sleep; see the header. A poll costs
 * ~20 ns here, so 1000 polls ≈ 20 µs ≈ one wake-up: spinning at most as long as a sleep would cost
 * keeps the worst case within 2× of the best choice made in hindsight (the classic spin-then-block
 * argument).
 */
export const DEFAULT_SPIN_ITERATIONS = 1000;

const RECORD_HEADER_BYTES = 8;
const RING_MAGIC = 0x49505247; // 'GRPI' little-endian
// 2: records sealed with the four-lane rotate-multiply word hash; 3: with the 33-lane hash laid
// out for WebAssembly SIMD (word-checksum.ts). A record sealed by one is garbage to the other, so
// an attach across versions is refused rather than misread.
const LAYOUT_VERSION = 3;
const SKIP = -1; // 0xFFFFFFFF as an Int32

// Control words (Int32 indexes); see the layout in the header.
const W_MAGIC = 0;
const W_VERSION = 1;
const W_CAPACITY = 2;
const W_CLOSED = 3;
const W_TAIL = 16;
const W_HEAD = 32;
const W_DATA_SEQ = 48;
const W_HEAD_REQUEST = 64;
const W_SLEEP_EPOCH = 80;

/**
 * Placeholders the typed-array fields hold until the constructor sets them. Under our es2023
 * target a field declared without a value is created holding `undefined`, and V8 then types it
 * "any value": every read of a cursor or a view pays a type check. Starting each field with a value
 * of its final type (docs/sim-speed.md, eighth pass) avoids it. (Nothing was allocated: the int32
 * cursors are always small integers on Node's x64 build, which has no pointer compression.)
 */
const EMPTY_INT32 = new Int32Array(0);
const EMPTY_UINT8 = new Uint8Array(0);

const PEEK_NONE = 0;
const PEEK_MESSAGE = 1;
const PEEK_CORRUPT = 2;

/**
 * What to post to the thread that attaches the other side (`ring.memory`): the ring's shared
 * `WebAssembly.Memory` where the engine has one — that side then seals or verifies records with the
 * WebAssembly checksum too — or its SharedArrayBuffer. `attach` takes either; both sides compute the
 * same checksum either way.
 */
export type RingMemory = SharedArrayBuffer | SharedWasmMemory;

/** How a wait for data or for room ended. */
export type RingWaitResult = 'ready' | 'timed-out' | 'closed';
/** How a blocking write ended: written and flushed, or not written. */
export type RingWriteResult = 'ok' | 'timed-out' | 'closed';

export interface SpscRingOptions {
  /** Size of the data area: a power of two from 64 B to 1 GiB. Messages may be up to half of it, less 8. */
  readonly capacityBytes: number;
  /** Polls before a waiting side sleeps (default {@link DEFAULT_SPIN_ITERATIONS}; 0: sleep at once). */
  readonly spinIterations?: number;
}

export interface SpscRingAttachOptions {
  readonly spinIterations?: number;
}

/** Counters of one `SpscRing` object (the side that uses it: producer counters, consumer counters). */
export interface RingStats {
  /** Messages written (`tryWrite`/`commit`), bytes of their payloads. */
  readonly sent: number;
  readonly bytesSent: number;
  /** `tryWrite`/`tryReserve` calls that found no room (after re-reading the consumer's head). */
  readonly fullEvents: number;
  /** Flushes that published something (one `TAIL` store each). */
  readonly flushes: number;
  /** Flushes that had to wake a sleeping consumer. */
  readonly doorbells: number;
  /** Messages delivered and their payload bytes. */
  readonly received: number;
  readonly bytesReceived: number;
  /** Records dropped because their checksum did not match. */
  readonly checksumFailures: number;
  /** Record headers that could not be right (length past the tail or the end); the ring skipped to the tail. */
  readonly framingErrors: number;
  /** Bytes dropped with corrupt records. */
  readonly droppedBytes: number;
  /** Stores of `HEAD` (lazy: about two per ring's worth of traffic, plus one per producer request). */
  readonly headPublications: number;
  /** Times the consumer went to sleep in `Atomics.wait`/`waitAsync`. */
  readonly sleeps: number;
  /** Published bytes not yet released by the consumer (`TAIL − HEAD` as published). */
  readonly occupancyBytes: number;
  readonly capacityBytes: number;
}

/** A snapshot of positions for tests and diagnostics (unsigned byte counters, mod 2^32). */
export interface RingPositions {
  readonly capacityBytes: number;
  /** This object's producer tail (includes unflushed records) and the published one. */
  readonly tailBytes: number;
  readonly publishedTailBytes: number;
  /** This object's consumer head and the published one. */
  readonly headBytes: number;
  readonly publishedHeadBytes: number;
  readonly headRequested: boolean;
  /** A consumer announced a sleep that no flush has rung yet. */
  readonly doorbellArmed: boolean;
  readonly closed: boolean;
}

/** The shape of Atomics.waitAsync (in V8 since 8.7, absent from TypeScript's es2023 lib). */
type WaitAsyncResult =
  | { readonly async: false; readonly value: 'not-equal' | 'timed-out' }
  | { readonly async: true; readonly value: Promise<'ok' | 'timed-out'> };
type WaitAsync = (array: Int32Array, index: number, value: number, timeoutMs?: number) => WaitAsyncResult;
const atomicsWithWaitAsync = Atomics as typeof Atomics & { readonly waitAsync?: WaitAsync };

/** A one-way ring of messages between two threads. See the module comment for layout and ordering. */
export class SpscRing {
  readonly #buffer: SharedArrayBuffer;
  readonly #memory: RingMemory;
  /** The WebAssembly checksum over this ring's memory (absolute offsets), or undefined: the JavaScript one. */
  readonly #wasmChecksum: WasmChecksum | undefined;
  readonly #control: Int32Array = EMPTY_INT32;
  readonly #data8: Uint8Array = EMPTY_UINT8;
  readonly #data32: Int32Array = EMPTY_INT32;
  readonly #capacity: number = 0;
  readonly #mask: number = 0;
  readonly #halfCapacity: number = 0;
  readonly #maxMessage: number = 0;
  readonly #spinIterations: number = 0;

  // Producer state (meaningful only in the producing thread's object).
  #tail = 0;
  #publishedTail = 0;
  /** The last `HEAD` the producer read; ≤ the consumer's real head. */
  #cachedHead = 0;
  #reservedLength = -1;
  #reservedIndex = 0;
  #reservedSkip = 0;
  /** This producer has set HEAD_REQUEST and not yet cleared it. */
  #headRequested = false;

  // Consumer state (meaningful only in the consuming thread's object).
  #head = 0;
  #publishedHead = 0;
  /** The last `TAIL` the consumer read; ≤ the producer's real tail. */
  #cachedTail = 0;
  #peekState = PEEK_NONE;
  #peekLength = 0;
  #peekOffset = 0;
  #peekAdvance = 0;
  #lastError: ChannelChecksumError | ChannelFrameError | undefined = undefined;

  #sent = 0;
  #bytesSent = 0;
  #fullEvents = 0;
  #flushes = 0;
  #doorbells = 0;
  #received = 0;
  #bytesReceived = 0;
  #checksumFailures = 0;
  #framingErrors = 0;
  #droppedBytes = 0;
  #headPublications = 0;
  #sleeps = 0;

  private constructor(memory: RingMemory, capacityBytes: number, spinIterations: number) {
    const buffer = isSharedWasmMemory(memory) ? memory.buffer : memory;
    this.#buffer = buffer;
    this.#memory = memory;
    this.#wasmChecksum = isSharedWasmMemory(memory) ? wasmRingChecksum(memory) : undefined;
    this.#control = new Int32Array(buffer, 0, RING_CONTROL_BYTES >> 2);
    this.#data8 = new Uint8Array(buffer, RING_CONTROL_BYTES, capacityBytes);
    this.#data32 = new Int32Array(buffer, RING_CONTROL_BYTES, capacityBytes >> 2);
    this.#capacity = capacityBytes;
    this.#mask = capacityBytes - 1;
    this.#halfCapacity = capacityBytes >> 1;
    this.#maxMessage = (capacityBytes >> 1) - RECORD_HEADER_BYTES;
    this.#spinIterations = spinIterations;
    const tail = Atomics.load(this.#control, W_TAIL);
    const head = Atomics.load(this.#control, W_HEAD);
    this.#tail = tail;
    this.#publishedTail = tail;
    this.#cachedHead = head;
    this.#head = head;
    this.#publishedHead = head;
    this.#cachedTail = tail;
    this.#headRequested = Atomics.load(this.#control, W_HEAD_REQUEST) !== 0;
  }

  /** Allocates a fresh ring. Post `ring.memory` to the other thread and `SpscRing.attach` it there. */
  static create(options: SpscRingOptions): SpscRing {
    const capacityBytes = options.capacityBytes;
    if (
      !Number.isInteger(capacityBytes) ||
      capacityBytes < RING_MIN_CAPACITY_BYTES ||
      capacityBytes > RING_MAX_CAPACITY_BYTES ||
      (capacityBytes & (capacityBytes - 1)) !== 0
    ) {
      throw new ConfigError(
        'capacityBytes',
        `must be a power of two from ${RING_MIN_CAPACITY_BYTES} to ${RING_MAX_CAPACITY_BYTES}, got ${capacityBytes}`,
      );
    }
    checkHost();
    // A shared WebAssembly memory where there is one: the checksum then runs as WebAssembly SIMD
    // (word-checksum-wasm.ts), 3–6× faster than its JavaScript twin at 256 B–1 KiB. It comes in whole
    // 64 KiB pages.
    const wasmMemory = allocateSharedWasmMemory(RING_CONTROL_BYTES + capacityBytes);
    const memory = wasmMemory ?? new SharedArrayBuffer(RING_CONTROL_BYTES + capacityBytes);
    const buffer = wasmMemory === undefined ? (memory as SharedArrayBuffer) : wasmMemory.buffer;
    const control = new Int32Array(buffer, 0, RING_CONTROL_BYTES >> 2);
    control[W_VERSION] = LAYOUT_VERSION;
    control[W_CAPACITY] = capacityBytes;
    // The magic last: an attach that sees it sees a complete header (the buffer is posted after this anyway).
    Atomics.store(control, W_MAGIC, RING_MAGIC);
    return new SpscRing(memory, capacityBytes, spinOption(options.spinIterations));
  }

  /**
   * Attaches to a ring created elsewhere (in this thread or another): pass its `memory` (or its
   * `buffer`, which works too but leaves this side on the JavaScript checksum).
   */
  static attach(memory: RingMemory, options: SpscRingAttachOptions = {}): SpscRing {
    checkHost();
    const buffer = isSharedWasmMemory(memory) ? memory.buffer : memory;
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < RING_CONTROL_BYTES) {
      throw new ConfigError('buffer', 'is not a ring: pass the `memory` of a ring made by SpscRing.create');
    }
    const control = new Int32Array(buffer, 0, RING_CONTROL_BYTES >> 2);
    const capacityBytes = control[W_CAPACITY]!;
    // The buffer is exactly the control block and the data area, or that rounded up to whole
    // 64 KiB pages (a WebAssembly memory); anything else is a damaged or foreign header.
    const exactBytes = RING_CONTROL_BYTES + capacityBytes;
    if (
      Atomics.load(control, W_MAGIC) !== RING_MAGIC ||
      control[W_VERSION] !== LAYOUT_VERSION ||
      !(capacityBytes >= RING_MIN_CAPACITY_BYTES && capacityBytes <= RING_MAX_CAPACITY_BYTES) ||
      (capacityBytes & (capacityBytes - 1)) !== 0 ||
      (buffer.byteLength !== exactBytes && buffer.byteLength !== Math.ceil(exactBytes / 65_536) * 65_536)
    ) {
      throw new ConfigError(
        'buffer',
        'is not a ring of this layout version: pass the `memory` of a ring made by SpscRing.create',
      );
    }
    return new SpscRing(memory, capacityBytes, spinOption(options.spinIterations));
  }

  /** The shared memory (control block + data area) as a SharedArrayBuffer. */
  get buffer(): SharedArrayBuffer {
    return this.#buffer;
  }

  /** What to post to the other thread and `attach` there (see {@link RingMemory}). */
  get memory(): RingMemory {
    return this.#memory;
  }

  /** True when this side seals or verifies records with the WebAssembly checksum (diagnostics, benches). */
  get wasmChecksum(): boolean {
    return this.#wasmChecksum !== undefined;
  }

  get capacityBytes(): number {
    return this.#capacity;
  }

  /** The longest payload a message may have: capacity/2 − 8. */
  get maxMessageBytes(): number {
    return this.#maxMessage;
  }

  /**
   * The data area as bytes, for zero-copy access: read a message at `peekOffset` after `peek()`,
   * or write one at the offset `tryReserve` returned. Do not touch it anywhere else.
   */
  get bytes(): Uint8Array {
    return this.#data8;
  }

  /** True once either side called `close()`. */
  get closed(): boolean {
    return Atomics.load(this.#control, W_CLOSED) !== 0;
  }

  // ───────────────────────────── producer ─────────────────────────────

  /**
   * Makes room for a `length`-byte message without publishing anything and returns the offset in
   * `bytes` where its payload goes, or -1 when the ring has no room (after re-reading the
   * consumer's head; this also publishes the pending batch and asks the consumer for its head).
   * Write exactly `length` bytes there, then `commit()`. A later `tryReserve` before `commit`
   * replaces the reservation. Throws ChannelMessageTooLargeError for a message that can never fit.
   */
  tryReserve(length: number): number {
    const offset = this.#reserve(length);
    if (offset < 0) this.#onFull();
    return offset;
  }

  /** Seals the reserved message: writes its header and checksum. Visible to the consumer after `flush()`. */
  commit(): void {
    const length = this.#reservedLength;
    if (length < 0) return;
    if (this.#reservedSkip > 0) {
      this.#data32[(this.#tail & this.#mask) >> 2] = SKIP;
      this.#tail = (this.#tail + this.#reservedSkip) | 0;
    }
    const word = this.#reservedIndex >> 2;
    this.#data32[word] = length;
    this.#data32[word + 1] = this.#checksum(this.#reservedIndex + RECORD_HEADER_BYTES, length);
    this.#tail = (this.#tail + RECORD_HEADER_BYTES + ((length + 7) & ~7)) | 0;
    this.#reservedLength = -1;
    this.#sent++;
    this.#bytesSent += length;
  }

  /**
   * Copies one message into the ring without publishing it; false when there is no room (after
   * re-reading the consumer's head — the pending batch is then published and the consumer asked
   * for its head, so retrying after the consumer drains succeeds). Never drops a message.
   */
  tryWrite(bytes: Uint8Array): boolean {
    const offset = this.#reserve(bytes.length);
    if (offset < 0) {
      this.#onFull();
      return false;
    }
    this.#data8.set(bytes, offset);
    this.commit();
    return true;
  }

  /** Writes as many of `messages` as fit, in order, then flushes once. Returns how many were written. */
  writeBatch(messages: readonly Uint8Array[]): number {
    let written = 0;
    for (const message of messages) {
      if (!this.tryWrite(message)) break;
      written++;
    }
    this.flush();
    return written;
  }

  /**
   * Publishes every record written since the last flush: one `Atomics.store` of `TAIL`, plus an
   * `Atomics.notify` only if the consumer announced it is asleep.
   */
  flush(): void {
    if (this.#tail === this.#publishedTail) return;
    this.#publishedTail = this.#tail;
    Atomics.store(this.#control, W_TAIL, this.#tail);
    this.#flushes++;
    // Dekker pairing with #announceSleep: TAIL stored above, SLEEP_EPOCH loaded here.
    const epoch = Atomics.load(this.#control, W_SLEEP_EPOCH);
    if (epoch !== 0 && isArmed(epoch, Atomics.load(this.#control, W_DATA_SEQ))) this.#ringDoorbell();
  }

  /**
   * Writes and flushes one message, waiting (spin, then `Atomics.wait` on `HEAD`) up to `timeoutMs`
   * for room. For worker threads; the main thread should use `tryWrite` + `waitForRoomAsync`.
   */
  write(bytes: Uint8Array, timeoutMs = Number.POSITIVE_INFINITY): RingWriteResult {
    if (this.closed) return 'closed';
    if (this.tryWrite(bytes)) {
      this.flush();
      return 'ok';
    }
    const deadline = deadlineOf(timeoutMs);
    for (;;) {
      const waited = this.#waitForRoomUntil(bytes.length, deadline);
      if (waited !== 'ready') return waited;
      const offset = this.#reserve(bytes.length);
      if (offset >= 0) {
        this.#data8.set(bytes, offset);
        this.commit();
        this.flush();
        return 'ok';
      }
    }
  }

  /** Blocks until a `length`-byte message fits (spin, then sleep on `HEAD`), the ring closes, or the timeout. */
  waitForRoom(length: number, timeoutMs = Number.POSITIVE_INFINITY): RingWaitResult {
    return this.#waitForRoomUntil(length, deadlineOf(timeoutMs));
  }

  /** `waitForRoom` for a main-thread producer: `Atomics.waitAsync` on `HEAD`, no spinning. */
  async waitForRoomAsync(length: number, timeoutMs = Number.POSITIVE_INFINITY): Promise<RingWaitResult> {
    this.#checkLength(length);
    const deadline = deadlineOf(timeoutMs);
    this.flush();
    for (;;) {
      if (this.#hasRoom(length)) return 'ready';
      if (this.closed) return 'closed';
      this.#requestHead(); // Dekker pairing with #publishHead: REQUEST stored, then HEAD loaded.
      const head = Atomics.load(this.#control, W_HEAD);
      if (this.#hasRoom(length)) return 'ready';
      const remainingMs = deadline - performance.now();
      if (remainingMs <= 0) return 'timed-out';
      await waitAsync(this.#control, W_HEAD, head, remainingMs);
    }
  }

  // ───────────────────────────── consumer ─────────────────────────────

  /**
   * Looks at the next message without consuming it. Returns its payload length (≥ 0; the payload is
   * at `bytes[peekOffset, peekOffset + length)`, valid until `consume()`), `RING_EMPTY`, or
   * `RING_CORRUPT` (the record failed its checksum or framing check: `lastError` says how; it is
   * counted once and `consume()` drops it). Verifies the checksum once per record.
   */
  peek(): number {
    if (this.#peekState === PEEK_MESSAGE) return this.#peekLength;
    if (this.#peekState === PEEK_CORRUPT) return RING_CORRUPT;
    for (;;) {
      if (this.#head === this.#cachedTail) {
        this.#cachedTail = Atomics.load(this.#control, W_TAIL);
        if (this.#head === this.#cachedTail) {
          // Rule 2: an empty ring answers a producer's request for the head.
          if (this.#head !== this.#publishedHead && Atomics.load(this.#control, W_HEAD_REQUEST) !== 0) {
            this.#publishHead();
          }
          return RING_EMPTY;
        }
      }
      const index = this.#head & this.#mask;
      const word = index >> 2;
      const length = this.#data32[word]!;
      const available = (this.#cachedTail - this.#head) | 0;
      if (length === SKIP && available >= this.#capacity - index) {
        this.#head = (this.#head + (this.#capacity - index)) | 0;
        this.#maybePublishHead();
        continue;
      }
      const recordBytes = RECORD_HEADER_BYTES + ((length + 7) & ~7);
      if (
        length < 0 ||
        length > this.#maxMessage ||
        recordBytes > this.#capacity - index ||
        recordBytes > available
      ) {
        // The header itself is damaged: nothing after it can be framed. Drop what is published.
        this.#framingErrors++;
        this.#lastError = new ChannelFrameError(
          'ring',
          length >>> 0,
          this.#maxMessage,
          'past the published tail or the end of the ring',
        );
        this.#peekAdvance = available;
        this.#peekState = PEEK_CORRUPT;
        return RING_CORRUPT;
      }
      const stored = this.#data32[word + 1]!;
      const computed = this.#checksum(index + RECORD_HEADER_BYTES, length);
      this.#peekAdvance = recordBytes;
      if ((computed | 0) !== stored) {
        this.#checksumFailures++;
        this.#lastError = new ChannelChecksumError('ring', length, stored >>> 0, computed);
        this.#peekState = PEEK_CORRUPT;
        return RING_CORRUPT;
      }
      this.#peekLength = length;
      this.#peekOffset = index + RECORD_HEADER_BYTES;
      this.#peekState = PEEK_MESSAGE;
      return length;
    }
  }

  /** Offset in `bytes` of the payload `peek()` returned; meaningful until `consume()`. */
  get peekOffset(): number {
    return this.#peekOffset;
  }

  /** A view of the peeked payload (allocates the view object, not the bytes); valid until `consume()`. */
  peekView(): Uint8Array | null {
    const length = this.peek();
    if (length < 0) return null;
    return this.#data8.subarray(this.#peekOffset, this.#peekOffset + length);
  }

  /** Why the last `RING_CORRUPT` happened. */
  get lastError(): ChannelChecksumError | ChannelFrameError | undefined {
    return this.#lastError;
  }

  /**
   * Releases the peeked message (or drops the peeked corrupt record); peeks first if nothing is
   * peeked. Publishes the head when half the ring has been consumed since the last publication.
   */
  consume(): void {
    if (this.#peekState === PEEK_NONE && this.peek() === RING_EMPTY) return;
    const advance = this.#peekAdvance;
    if (this.#peekState === PEEK_MESSAGE) {
      this.#received++;
      this.#bytesReceived += this.#peekLength;
    } else {
      this.#droppedBytes += advance;
    }
    this.#peekState = PEEK_NONE;
    this.#head = (this.#head + advance) | 0;
    this.#maybePublishHead();
  }

  /**
   * Copies the next message into `target` and consumes it. Returns its length, `RING_EMPTY`,
   * `RING_CORRUPT` (the record was dropped; see `lastError`), or `RING_TARGET_TOO_SMALL` (nothing
   * consumed).
   */
  readInto(target: Uint8Array): number {
    const length = this.peek();
    if (length < 0) {
      if (length === RING_CORRUPT) this.consume();
      return length;
    }
    if (length > target.length) return RING_TARGET_TOO_SMALL;
    const source = this.#data8;
    const offset = this.#peekOffset;
    if (length <= 64) {
      // A loop beats set(subarray(...)) for short messages: no view object, no builtin call.
      for (let i = 0; i < length; i++) target[i] = source[offset + i]!;
    } else {
      target.set(source.subarray(offset, offset + length));
    }
    this.consume();
    return length;
  }

  /**
   * The next message as a fresh copy, or null when none is waiting. A record that fails its check
   * is dropped (and counted) and its ChannelChecksumError / ChannelFrameError thrown; the next call
   * goes on with the following message.
   */
  read(): Uint8Array | null {
    const length = this.peek();
    if (length === RING_EMPTY) return null;
    if (length === RING_CORRUPT) {
      const error = this.#lastError;
      this.consume();
      throw error;
    }
    const copy = this.#data8.slice(this.#peekOffset, this.#peekOffset + length);
    this.consume();
    return copy;
  }

  /** True when a message (or a corrupt record) is waiting. Reads `TAIL` only when the known data is used up. */
  hasData(): boolean {
    if (this.#peekState !== PEEK_NONE || this.#head !== this.#cachedTail) return true;
    this.#cachedTail = Atomics.load(this.#control, W_TAIL);
    return this.#head !== this.#cachedTail;
  }

  /**
   * Blocks until data is waiting, the ring is closed (and drained), or `timeoutMs` passes: polls
   * `TAIL` `spinIterations` times, then sleeps in `Atomics.wait` on the doorbell. For worker threads
   * (the main thread may block too, but stops its event loop meanwhile: use `waitForDataAsync`).
   */
  waitForData(timeoutMs = Number.POSITIVE_INFINITY): RingWaitResult {
    if (this.hasData()) return 'ready';
    this.#publishPendingHead(); // Rule 3.
    const control = this.#control;
    for (let spin = this.#spinIterations; spin > 0; spin--) {
      if (Atomics.load(control, W_TAIL) !== this.#head) return 'ready';
    }
    const deadline = deadlineOf(timeoutMs);
    for (;;) {
      const sequence = this.#announceSleep();
      if (sequence === undefined) return 'ready';
      if (this.closed) return 'closed';
      const remainingMs = deadline - performance.now();
      if (remainingMs <= 0) return 'timed-out';
      this.#sleeps++;
      Atomics.wait(
        control,
        W_DATA_SEQ,
        sequence,
        remainingMs === Number.POSITIVE_INFINITY ? undefined : remainingMs,
      );
    }
  }

  /**
   * `waitForData` for a consumer on the main thread: sleeps with `Atomics.waitAsync`, so the event
   * loop keeps running. It does not spin (spinning would stall the event loop it is meant to free).
   */
  async waitForDataAsync(timeoutMs = Number.POSITIVE_INFINITY): Promise<RingWaitResult> {
    if (this.hasData()) return 'ready';
    this.#publishPendingHead(); // Rule 3.
    const deadline = deadlineOf(timeoutMs);
    for (;;) {
      const sequence = this.#announceSleep();
      if (sequence === undefined) return 'ready';
      if (this.closed) return 'closed';
      const remainingMs = deadline - performance.now();
      if (remainingMs <= 0) return 'timed-out';
      this.#sleeps++;
      await waitAsync(this.#control, W_DATA_SEQ, sequence, remainingMs);
    }
  }

  // ───────────────────────────── both ─────────────────────────────

  /**
   * Marks the ring closed and wakes whoever sleeps on it. The producer's pending records are
   * flushed first (call it from the producer to keep them; a consumer's close drops nothing either).
   * The consumer still drains what was published; then waits return 'closed'.
   */
  close(): void {
    this.flush();
    Atomics.store(this.#control, W_CLOSED, 1);
    Atomics.add(this.#control, W_DATA_SEQ, 1);
    Atomics.notify(this.#control, W_DATA_SEQ);
    Atomics.notify(this.#control, W_HEAD);
  }

  stats(): RingStats {
    return {
      sent: this.#sent,
      bytesSent: this.#bytesSent,
      fullEvents: this.#fullEvents,
      flushes: this.#flushes,
      doorbells: this.#doorbells,
      received: this.#received,
      bytesReceived: this.#bytesReceived,
      checksumFailures: this.#checksumFailures,
      framingErrors: this.#framingErrors,
      droppedBytes: this.#droppedBytes,
      headPublications: this.#headPublications,
      sleeps: this.#sleeps,
      occupancyBytes: (Atomics.load(this.#control, W_TAIL) - Atomics.load(this.#control, W_HEAD)) >>> 0,
      capacityBytes: this.#capacity,
    };
  }

  /** Positions as this object and the shared words see them (tests, diagnostics). */
  positions(): RingPositions {
    const control = this.#control;
    return {
      capacityBytes: this.#capacity,
      tailBytes: this.#tail >>> 0,
      publishedTailBytes: Atomics.load(control, W_TAIL) >>> 0,
      headBytes: this.#head >>> 0,
      publishedHeadBytes: Atomics.load(control, W_HEAD) >>> 0,
      headRequested: Atomics.load(control, W_HEAD_REQUEST) !== 0,
      doorbellArmed: isArmed(Atomics.load(control, W_SLEEP_EPOCH), Atomics.load(control, W_DATA_SEQ)),
      closed: Atomics.load(control, W_CLOSED) !== 0,
    };
  }

  // ───────────────────────────── internals ─────────────────────────────

  /** The record checksum of `length` payload bytes at data-area offset `start`: one function, two compilations. */
  #checksum(start: number, length: number): number {
    const wasm = this.#wasmChecksum;
    return wasm === undefined
      ? ringChecksum(this.#data32, this.#data8, start, length)
      : wasm(RING_CONTROL_BYTES + start, length);
  }

  /** Bytes a `length`-byte message takes from `#tail`, counting a skip to the start if it needs one. */
  #bytesNeeded(length: number): number {
    const recordBytes = RECORD_HEADER_BYTES + ((length + 7) & ~7);
    const contiguous = this.#capacity - (this.#tail & this.#mask);
    return recordBytes <= contiguous ? recordBytes : contiguous + recordBytes;
  }

  /** Re-reads `HEAD` and says whether a `length`-byte message fits now. */
  #hasRoom(length: number): boolean {
    this.#cachedHead = Atomics.load(this.#control, W_HEAD);
    return ((this.#tail - this.#cachedHead) | 0) <= this.#capacity - this.#bytesNeeded(length);
  }

  /** A message that can never fit is a caller's mistake, not back-pressure: it throws. */
  #checkLength(length: number): void {
    if (!(length >= 0 && length <= this.#maxMessage)) {
      throw new ChannelMessageTooLargeError(length, this.#maxMessage);
    }
  }

  #reserve(length: number): number {
    this.#checkLength(length);
    const recordBytes = RECORD_HEADER_BYTES + ((length + 7) & ~7);
    const index = this.#tail & this.#mask;
    const contiguous = this.#capacity - index;
    const needed = recordBytes <= contiguous ? recordBytes : contiguous + recordBytes;
    // Room against the cached head first; re-read the shared HEAD only when that says no.
    if (((this.#tail - this.#cachedHead) | 0) > this.#capacity - needed) {
      this.#cachedHead = Atomics.load(this.#control, W_HEAD);
      if (((this.#tail - this.#cachedHead) | 0) > this.#capacity - needed) return -1;
    }
    if (this.#headRequested) {
      // Room again: stop asking, and the consumer goes back to publishing lazily.
      this.#headRequested = false;
      Atomics.store(this.#control, W_HEAD_REQUEST, 0);
    }
    this.#reservedLength = length;
    if (recordBytes <= contiguous) {
      this.#reservedIndex = index;
      this.#reservedSkip = 0;
    } else {
      this.#reservedIndex = 0;
      this.#reservedSkip = contiguous;
    }
    return this.#reservedIndex + RECORD_HEADER_BYTES;
  }

  /** Rule 1: ask the consumer for its head, then publish the pending batch — in that order (see the header). */
  #onFull(): void {
    this.#fullEvents++;
    this.#requestHead();
    this.flush();
  }

  /** Sets HEAD_REQUEST (once: only this producer clears it, in #reserve, when a write fits again). */
  #requestHead(): void {
    if (this.#headRequested) return;
    this.#headRequested = true;
    Atomics.store(this.#control, W_HEAD_REQUEST, 1);
  }

  #waitForRoomUntil(length: number, deadline: number): RingWaitResult {
    this.#checkLength(length);
    this.flush();
    if (this.#hasRoom(length)) return 'ready';
    const control = this.#control;
    // Ask before spinning: a consumer that has drained the ring publishes its head only when asked.
    this.#requestHead();
    for (let spin = this.#spinIterations; spin > 0; spin--) {
      if (this.#hasRoom(length)) return 'ready';
    }
    for (;;) {
      if (this.#hasRoom(length)) return 'ready';
      if (this.closed) return 'closed';
      // Dekker pairing with #publishHead: REQUEST stored (by #requestHead above; it stays set), then HEAD loaded.
      const head = Atomics.load(control, W_HEAD);
      if (this.#hasRoom(length)) return 'ready';
      const remainingMs = deadline - performance.now();
      if (remainingMs <= 0) return 'timed-out';
      Atomics.wait(control, W_HEAD, head, remainingMs === Number.POSITIVE_INFINITY ? undefined : remainingMs);
    }
  }

  #maybePublishHead(): void {
    if (((this.#head - this.#publishedHead) | 0) >= this.#halfCapacity) this.#publishHead();
  }

  #publishPendingHead(): void {
    if (this.#head !== this.#publishedHead) this.#publishHead();
  }

  #publishHead(): void {
    const control = this.#control;
    Atomics.store(control, W_HEAD, this.#head);
    this.#publishedHead = this.#head;
    this.#headPublications++;
    // Dekker pairing with the producer: HEAD stored above, REQUEST loaded here. The request stays
    // set (the producer clears it), so every publication until then wakes a waiting producer.
    if (Atomics.load(control, W_HEAD_REQUEST) !== 0) Atomics.notify(control, W_HEAD);
  }

  /** Arms the doorbell and re-checks TAIL; returns the DATA_SEQ value to sleep on, or undefined if data arrived. */
  #announceSleep(): number | undefined {
    const control = this.#control;
    const sequence = Atomics.load(control, W_DATA_SEQ);
    Atomics.store(control, W_SLEEP_EPOCH, (sequence + 1) | 0);
    // Dekker pairing with flush: SLEEP_EPOCH stored above, TAIL loaded here.
    this.#cachedTail = Atomics.load(control, W_TAIL);
    return this.#cachedTail !== this.#head ? undefined : sequence;
  }

  #ringDoorbell(): void {
    this.#doorbells++;
    Atomics.add(this.#control, W_DATA_SEQ, 1);
    Atomics.notify(this.#control, W_DATA_SEQ);
  }
}

/** A sleep epoch names the current doorbell value: a consumer sleeps on it and nobody rang since. */
function isArmed(epoch: number, sequence: number): boolean {
  return epoch !== 0 && ((epoch - 1) | 0) === sequence;
}

function spinOption(spinIterations: number | undefined): number {
  if (spinIterations === undefined) return DEFAULT_SPIN_ITERATIONS;
  if (!Number.isInteger(spinIterations) || spinIterations < 0) {
    throw new ConfigError('spinIterations', `must be a non-negative integer, got ${spinIterations}`);
  }
  return spinIterations;
}

function checkHost(): void {
  if (!HOST_IS_LITTLE_ENDIAN) {
    throw new ConfigError('platform', 'the shared ring needs a little-endian host (x64, arm64)');
  }
}

function deadlineOf(timeoutMs: number): number {
  return timeoutMs === Number.POSITIVE_INFINITY ? timeoutMs : performance.now() + Math.max(0, timeoutMs);
}

/**
 * Atomics.waitAsync, resolved when the word changes, is notified, or the timeout passes. An
 * unbounded wait holds no timer: if nothing else (a worker, a socket) keeps the process alive, no
 * producer is left to end it anyway.
 */
async function waitAsync(words: Int32Array, index: number, value: number, timeoutMs: number): Promise<void> {
  const wait = atomicsWithWaitAsync.waitAsync;
  if (wait === undefined) {
    // Not expected on Node ≥ 16; poll on a timer rather than fail.
    await new Promise((resolve) => setTimeout(resolve, Math.min(1, timeoutMs)));
    return;
  }
  if (timeoutMs === Number.POSITIVE_INFINITY) {
    const result = wait(words, index, value);
    if (result.async) await result.value;
    return;
  }
  const result = wait(words, index, value, timeoutMs);
  if (!result.async) return;
  // A pending waitAsync does not keep Node's event loop alive: without a timer of our own, a
  // process with nothing else to do would exit mid-wait instead of timing out. The timer races the
  // wait (a little later, so V8's own timeout normally wins) and is cleared when the wait ends.
  let timer: NodeJS.Timeout | undefined;
  const keepAlive = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs + 1);
  });
  await Promise.race([result.value, keepAlive]);
  clearTimeout(timer);
}
