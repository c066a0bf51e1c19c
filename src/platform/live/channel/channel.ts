/**
 * The NIC↔host message channel as one interface, and its shared-memory implementation: a duplex
 * channel is "a pair of one-way rings" (iPipe §3 "Host–NIC messaging"; DESIGN.md, the Platform's
 * `channel(nic, host)`), one NIC→host and one host→NIC, each an `SpscRing`.
 *
 * The same interface is implemented over TCP (tcp-channel.ts) for a NIC domain in another process
 * or on another device (a DPU's ARM cores). The runtime talks only to `MessageChannel`; a test suite
 * (test/platform/live/channel-contract.ts) holds both transports to the same contract:
 *   - `send` queues a message and returns false — never drops — when the peer has no room;
 *   - nothing queued is visible to the peer before `flush` (batched sends: one doorbell per batch);
 *   - `receive` yields messages in order, each exactly once, and never a damaged one: a message
 *     that fails its checksum is counted and surfaces as a thrown ChannelChecksumError at its place
 *     in the stream;
 *   - after `close`, the peer drains what was flushed and then sees the channel closed.
 */

import { ConfigError } from '../../../errors.ts';
import { type RingMemory, SpscRing } from './ring.ts';

/** How a wait ended: something to do (`ready`), nothing within the time, or the channel is shut. */
export type ChannelWaitResult = 'ready' | 'timed-out' | 'closed';

/** Counters of one endpoint: what it sent, what it received. */
export interface ChannelStats {
  readonly sent: number;
  readonly received: number;
  /** Payload bytes (frame headers not counted). */
  readonly bytesSent: number;
  readonly bytesReceived: number;
  /** Received messages dropped because their CRC-32C failed. */
  readonly checksumFailures: number;
  /** Received frame headers that could not be right (oversized, past the end). */
  readonly framingErrors: number;
  /** `send` calls refused for want of room. */
  readonly fullEvents: number;
  /** Bytes sent but not yet taken by the peer (ring: published and unreleased; TCP: queued in this process). */
  readonly occupancyBytes: number;
  /** Where back-pressure starts (ring: the send ring's size; TCP: the socket's high-water mark). */
  readonly capacityBytes: number;
}

/** One end of a duplex message channel between the NIC domain and the host domain. */
export interface MessageChannel {
  readonly transport: 'ring' | 'tcp';
  /**
   * Queues one message (copied; the caller may reuse `bytes`). False when the peer has no room now
   * (wait with `waitForRoom`, then send again) or the channel is closed. Throws
   * ChannelMessageTooLargeError for a message over the channel's maximum. Room can come back
   * without any message: a ring's consumer publishes its head lazily, and a peer with nothing to
   * reply frees room silently — so a request/response loop that was refused waits for data only
   * while replies are outstanding, else for room (test/platform/live/fixtures/echo-client.ts).
   */
  send(bytes: Uint8Array): boolean;
  /** Makes every queued message visible to the peer: one doorbell / one socket write per batch. */
  flush(): void;
  /**
   * The next message, or null when none is waiting. Throws ChannelChecksumError (or
   * ChannelFrameError) once, at its place in the stream, for a message that arrived damaged; it was
   * dropped and counted.
   */
  receive(): Uint8Array | null;
  /** Resolves when a message may be waiting, the channel closed and drained, or the time passed. */
  waitForData(timeoutMs?: number): Promise<ChannelWaitResult>;
  /** After `send` returned false: resolves when that message would fit, the channel closed, or the time passed. */
  waitForRoom(timeoutMs?: number): Promise<ChannelWaitResult>;
  /**
   * Calls `listener` whenever messages may be waiting (level-triggered: again, after a turn of the
   * event loop, while some remain) and once when the channel closes. Returns an unsubscribe function.
   */
  onReadable(listener: () => void): () => void;
  /** True after either end closed (or, over TCP, the connection failed); received messages can still be drained. */
  readonly closed: boolean;
  /** Flushes, shuts both directions, and resolves once the transport is released. */
  close(): Promise<void>;
  stats(): ChannelStats;
}

/**
 * What to post to the thread that will hold the other end: each ring's shared memory (a
 * `WebAssembly.Memory`, so that end checks records with the WebAssembly checksum too, or a
 * SharedArrayBuffer; ring.ts, `RingMemory`).
 */
export interface SharedChannelDescriptor {
  readonly sendBuffer: RingMemory;
  readonly receiveBuffer: RingMemory;
}

export interface SharedChannelOptions {
  /** Size of each ring's data area (a power of two; messages up to half of it, less 8). */
  readonly capacityBytes: number;
  /** Polls before a blocking wait sleeps (see ring.ts); the async waits never spin. */
  readonly spinIterations?: number;
}

/** How often an idle `onReadable` pump re-checks that it still has listeners. */
const PUMP_SLICE_MS = 250;

/**
 * One end of a shared-memory channel: sends on one ring, receives on the other. For the hot path,
 * use `sendRing`/`receiveRing` directly (tryReserve/commit, peek/consume: no copies, no allocation).
 */
export class SharedChannelEndpoint implements MessageChannel {
  readonly transport = 'ring' as const;
  readonly #sendRing: SpscRing;
  readonly #receiveRing: SpscRing;
  #closedHere = false;
  /** Length of the last message `send` refused; what `waitForRoom` waits for. */
  #refusedLength = 0;
  readonly #listeners = new Set<() => void>();
  #pumping = false;

  private constructor(sendRing: SpscRing, receiveRing: SpscRing) {
    this.#sendRing = sendRing;
    this.#receiveRing = receiveRing;
  }

  /** Builds an endpoint from two rings (the send ring's producer side, the receive ring's consumer side). */
  static fromRings(sendRing: SpscRing, receiveRing: SpscRing): SharedChannelEndpoint {
    if (sendRing.buffer === receiveRing.buffer) {
      throw new ConfigError('receiveRing', 'must be a different ring from sendRing (one ring per direction)');
    }
    return new SharedChannelEndpoint(sendRing, receiveRing);
  }

  /** Re-attaches an endpoint in another thread from the descriptor the creating thread posted. */
  static attach(
    descriptor: SharedChannelDescriptor,
    options: { readonly spinIterations?: number } = {},
  ): SharedChannelEndpoint {
    return SharedChannelEndpoint.fromRings(
      SpscRing.attach(descriptor.sendBuffer, options),
      SpscRing.attach(descriptor.receiveBuffer, options),
    );
  }

  /** Post this to the worker that will use this end; `attach` it there (and stop using this object here). */
  get descriptor(): SharedChannelDescriptor {
    return { sendBuffer: this.#sendRing.memory, receiveBuffer: this.#receiveRing.memory };
  }

  get sendRing(): SpscRing {
    return this.#sendRing;
  }

  get receiveRing(): SpscRing {
    return this.#receiveRing;
  }

  /** The largest message `send` takes. */
  get maxMessageBytes(): number {
    return this.#sendRing.maxMessageBytes;
  }

  get closed(): boolean {
    return this.#closedHere || this.#sendRing.closed || this.#receiveRing.closed;
  }

  send(bytes: Uint8Array): boolean {
    // The peer's close is a flag in the ring (one load: a plain read on x86 and arm64).
    if (this.#closedHere || this.#sendRing.closed) return false;
    if (this.#sendRing.tryWrite(bytes)) return true;
    this.#refusedLength = bytes.length;
    return false;
  }

  flush(): void {
    this.#sendRing.flush();
  }

  receive(): Uint8Array | null {
    return this.#receiveRing.read();
  }

  waitForData(timeoutMs?: number): Promise<ChannelWaitResult> {
    return this.#receiveRing.waitForDataAsync(timeoutMs);
  }

  /** Blocking `waitForData` for a worker thread's scheduler loop (spins, then `Atomics.wait`). */
  waitForDataSync(timeoutMs?: number): ChannelWaitResult {
    return this.#receiveRing.waitForData(timeoutMs);
  }

  async waitForRoom(timeoutMs?: number): Promise<ChannelWaitResult> {
    if (this.#closedHere) return 'closed';
    return this.#sendRing.waitForRoomAsync(this.#refusedLength, timeoutMs);
  }

  onReadable(listener: () => void): () => void {
    this.#listeners.add(listener);
    if (!this.#pumping) void this.#pump();
    return () => {
      this.#listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (this.#closedHere) return;
    this.#closedHere = true;
    this.#sendRing.close(); // flushes first: the peer still gets everything sent before close
    this.#receiveRing.close();
  }

  stats(): ChannelStats {
    const sending = this.#sendRing.stats();
    const receiving = this.#receiveRing.stats();
    return {
      sent: sending.sent,
      received: receiving.received,
      bytesSent: sending.bytesSent,
      bytesReceived: receiving.bytesReceived,
      checksumFailures: receiving.checksumFailures,
      framingErrors: receiving.framingErrors,
      fullEvents: sending.fullEvents,
      occupancyBytes: sending.occupancyBytes,
      capacityBytes: sending.capacityBytes,
    };
  }

  /**
   * Runs while someone listens: sleeps with `Atomics.waitAsync` on the receive ring's doorbell (in
   * slices, so an abandoned subscription ends the loop), calls the listeners while data remains —
   * yielding a turn of the event loop between rounds so a listener that does not drain cannot
   * starve the process — and once more when the channel closes.
   */
  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      while (this.#listeners.size > 0) {
        const result = await this.#receiveRing.waitForDataAsync(PUMP_SLICE_MS);
        if (result === 'timed-out') continue;
        for (const listener of [...this.#listeners]) callListener(listener);
        if (result === 'closed') break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.#pumping = false;
    }
  }
}

/** Both ends of a fresh shared-memory channel. `nic` sends on the NIC→host ring; `host` on the other. */
export interface SharedChannelPair {
  readonly nic: SharedChannelEndpoint;
  readonly host: SharedChannelEndpoint;
}

/**
 * Creates the two rings of a duplex channel and an endpoint on each side. To run one side in a
 * worker, post its `descriptor` and `SharedChannelEndpoint.attach` it there.
 */
export function createSharedChannelPair(options: SharedChannelOptions): SharedChannelPair {
  const ringOptions =
    options.spinIterations === undefined
      ? { capacityBytes: options.capacityBytes }
      : { capacityBytes: options.capacityBytes, spinIterations: options.spinIterations };
  const nicToHost = SpscRing.create(ringOptions);
  const hostToNic = SpscRing.create(ringOptions);
  const attachOptions =
    options.spinIterations === undefined ? {} : { spinIterations: options.spinIterations };
  return {
    nic: SharedChannelEndpoint.fromRings(nicToHost, SpscRing.attach(hostToNic.memory, attachOptions)),
    host: SharedChannelEndpoint.fromRings(hostToNic, SpscRing.attach(nicToHost.memory, attachOptions)),
  };
}

/** A listener's exception is reported like one thrown from an event handler, without stopping the pump. */
function callListener(listener: () => void): void {
  try {
    listener();
  } catch (error) {
    process.nextTick(() => {
      throw error;
    });
  }
}
