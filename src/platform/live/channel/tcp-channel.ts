/**
 * The NIC↔host `MessageChannel` over TCP, for a NIC domain that runs in another process or on
 * another device — e.g. a BlueField's ARM cores, where host memory cannot be shared (DESIGN.md:
 * "SharedArrayBuffer ring … or TCP when the NIC domain runs on a separate device"). It keeps the
 * properties of iPipe §3's rings that matter to the runtime:
 *   - batched sends: `send` appends a frame to a batch in this process; `flush` hands the batch to
 *     the socket in one write (a batch also goes out by itself once it reaches `batchBytes`), with
 *     Nagle off so a flushed batch leaves at once;
 *   - back-pressure, never a silent drop: once `socket.write` returns false, `send` returns false
 *     until the socket drains; on the receiving side a reader that falls behind stops reading the
 *     socket (past `receiveQueueBytes`), so TCP's window carries the pressure back to the sender;
 *   - a checksum on every message (tcp-framing.ts); a damaged or oversized frame closes the
 *     connection with a typed error and a counter, since no later byte can be trusted to be a
 *     frame boundary.
 */

import { once } from 'node:events';
import net from 'node:net';
import { ConfigError } from '../../../errors.ts';
import type { ChannelStats, ChannelWaitResult, MessageChannel } from './channel.ts';
import { ChannelMessageTooLargeError, type ChannelReceiveError } from './channel-errors.ts';
import { FRAME_HEADER_BYTES, FrameDecoder, writeFrame } from './tcp-framing.ts';

export interface TcpChannelOptions {
  /** Largest payload accepted in either direction (default 16 MiB). A bigger incoming frame closes the connection. */
  readonly maxFrameBytes?: number;
  /** A pending batch this large is written without waiting for `flush` (default 64 KiB). */
  readonly batchBytes?: number;
  /** Received bytes left unread before the socket stops reading (default 4 MiB). */
  readonly receiveQueueBytes?: number;
  /** How long `close` waits for the peer to finish before destroying the socket (default 2000 ms). */
  readonly closeTimeoutMs?: number;
}

export interface TcpAddressOptions extends TcpChannelOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** 0 picks a free port (read it from the listener). */
  readonly port: number;
}

/** A bound server socket that turns each accepted connection into a `TcpChannel`. */
export interface TcpChannelListener {
  readonly host: string;
  readonly port: number;
  /** The next accepted connection (connections that arrive before the call are queued). */
  accept(): Promise<TcpChannel>;
  /** Stops accepting connections; channels already accepted stay open. */
  close(): Promise<void>;
}

const DEFAULT_MAX_FRAME_BYTES = 16 << 20;
const DEFAULT_BATCH_BYTES = 64 << 10;
const DEFAULT_RECEIVE_QUEUE_BYTES = 4 << 20;
const DEFAULT_CLOSE_TIMEOUT_MS = 2000;

/** One end of a channel over a connected TCP socket. */
export class TcpChannel implements MessageChannel {
  readonly transport = 'tcp' as const;
  readonly #socket: net.Socket;
  readonly #maxFrameBytes: number;
  readonly #batchBytes: number;
  readonly #receiveQueueBytes: number;
  readonly #closeTimeoutMs: number;
  readonly #decoder: FrameDecoder;

  // Sending.
  #batch: Uint8Array | undefined = undefined;
  #batchLength = 0;
  #writeBlocked = false;

  // Receiving: messages (and at most one error, last) waiting for `receive`.
  #queue: (Uint8Array | ChannelReceiveError | undefined)[] = [];
  #queueHead = 0;
  #queuedBytes = 0;
  #readingPaused = false;
  #errorQueued = false;

  #closedHere = false;
  #ended = false;
  #socketClosed = false;
  #closeError: Error | undefined = undefined;
  readonly #socketClosedPromise: Promise<void>;

  readonly #readableListeners = new Set<() => void>();
  #dataWaiters: (() => void)[] = [];
  #roomWaiters: (() => void)[] = [];
  #readableScheduled = false;

  #sent = 0;
  #received = 0;
  #bytesSent = 0;
  #bytesReceived = 0;
  #fullEvents = 0;

  readonly #onMessage = (payload: Uint8Array): void => {
    this.#queue.push(payload);
    this.#queuedBytes += payload.length;
  };

  /** Wraps a connected socket (from `net.connect` or a server's 'connection'). */
  constructor(socket: net.Socket, options: TcpChannelOptions = {}) {
    this.#maxFrameBytes = positiveInteger('maxFrameBytes', options.maxFrameBytes, DEFAULT_MAX_FRAME_BYTES);
    this.#batchBytes = positiveInteger('batchBytes', options.batchBytes, DEFAULT_BATCH_BYTES);
    this.#receiveQueueBytes = positiveInteger(
      'receiveQueueBytes',
      options.receiveQueueBytes,
      DEFAULT_RECEIVE_QUEUE_BYTES,
    );
    this.#closeTimeoutMs = positiveInteger(
      'closeTimeoutMs',
      options.closeTimeoutMs,
      DEFAULT_CLOSE_TIMEOUT_MS,
    );
    this.#decoder = new FrameDecoder(this.#maxFrameBytes);
    this.#socket = socket;
    socket.setNoDelay(true);
    this.#socketClosedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (piece: Buffer) => this.#onData(piece));
    socket.on('drain', () => {
      this.#writeBlocked = false;
      this.#wake('room');
    });
    socket.on('end', () => {
      // The peer closed its side: drain what arrived, then report closed. (allowHalfOpen is off,
      // so Node ends our side too.)
      this.#ended = true;
      this.#wake('all');
    });
    socket.on('error', (error: Error) => {
      this.#closeError ??= error;
      this.#wake('all');
    });
    socket.on('close', () => {
      this.#socketClosed = true;
      this.#wake('all');
    });
  }

  /** The largest payload either end may send. */
  get maxMessageBytes(): number {
    return this.#maxFrameBytes;
  }

  get closed(): boolean {
    return this.#closedHere || this.#ended || this.#socketClosed || this.#decoder.error !== undefined;
  }

  /** Why the connection closed, when it was not a clean close: a bad frame, or a socket error. */
  get closeError(): Error | undefined {
    return this.#decoder.error ?? this.#closeError;
  }

  send(bytes: Uint8Array): boolean {
    const length = bytes.length;
    if (length > this.#maxFrameBytes) throw new ChannelMessageTooLargeError(length, this.#maxFrameBytes);
    if (this.closed) return false;
    if (this.#writeBlocked) {
      this.#fullEvents++;
      return false;
    }
    const needed = this.#batchLength + FRAME_HEADER_BYTES + length;
    if (this.#batch === undefined || this.#batch.length < needed) this.#growBatch(needed);
    this.#batchLength = writeFrame(this.#batch!, this.#batchLength, bytes);
    this.#sent++;
    this.#bytesSent += length;
    if (this.#batchLength >= this.#batchBytes) this.flush();
    return true;
  }

  flush(): void {
    if (this.#batchLength === 0 || this.#socket.destroyed || this.#socket.writableEnded) return;
    // The socket keeps the batch until the kernel takes it: hand it over and start a new one.
    const batch = this.#batch!.subarray(0, this.#batchLength);
    this.#batch = undefined;
    this.#batchLength = 0;
    if (!this.#socket.write(batch)) this.#writeBlocked = true;
  }

  receive(): Uint8Array | null {
    if (this.#queueHead === this.#queue.length) return null;
    const item = this.#queue[this.#queueHead]!;
    this.#queue[this.#queueHead++] = undefined;
    if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead);
      this.#queueHead = 0;
    }
    if (!(item instanceof Uint8Array)) throw item;
    this.#received++;
    this.#bytesReceived += item.length;
    this.#queuedBytes -= item.length;
    if (this.#readingPaused && this.#queuedBytes <= this.#receiveQueueBytes >> 1) {
      this.#readingPaused = false;
      this.#socket.resume();
    }
    return item;
  }

  waitForData(timeoutMs = Number.POSITIVE_INFINITY): Promise<ChannelWaitResult> {
    if (this.#queueHead < this.#queue.length) return Promise.resolve('ready');
    if (this.closed) return Promise.resolve('closed');
    return this.#waitOn(this.#dataWaiters, timeoutMs, () =>
      this.#queueHead < this.#queue.length ? 'ready' : this.closed ? 'closed' : undefined,
    );
  }

  waitForRoom(timeoutMs = Number.POSITIVE_INFINITY): Promise<ChannelWaitResult> {
    if (this.closed) return Promise.resolve('closed');
    if (!this.#writeBlocked) return Promise.resolve('ready');
    return this.#waitOn(this.#roomWaiters, timeoutMs, () =>
      this.closed ? 'closed' : this.#writeBlocked ? undefined : 'ready',
    );
  }

  onReadable(listener: () => void): () => void {
    this.#readableListeners.add(listener);
    if (this.#queueHead < this.#queue.length) this.#scheduleReadable();
    return () => {
      this.#readableListeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (!this.#closedHere) {
      this.flush();
      this.#closedHere = true;
      this.#socket.end();
      this.#wake('all');
    }
    if (this.#socketClosed) return;
    const timer = setTimeout(() => this.#socket.destroy(), this.#closeTimeoutMs);
    try {
      await this.#socketClosedPromise;
    } finally {
      clearTimeout(timer);
    }
  }

  stats(): ChannelStats {
    return {
      sent: this.#sent,
      received: this.#received,
      bytesSent: this.#bytesSent,
      bytesReceived: this.#bytesReceived,
      checksumFailures: this.#decoder.checksumFailures,
      framingErrors: this.#decoder.framingErrors,
      fullEvents: this.#fullEvents,
      occupancyBytes: this.#socket.writableLength + this.#batchLength,
      capacityBytes: this.#socket.writableHighWaterMark,
    };
  }

  #onData(piece: Buffer): void {
    const before = this.#queue.length;
    const error = this.#decoder.push(piece, this.#onMessage);
    if (error !== undefined && !this.#errorQueued) {
      this.#errorQueued = true;
      // The error takes its place in the stream: `receive` throws it after the frames before it.
      this.#queue.push(error);
      this.#socket.destroy();
    }
    if (!this.#readingPaused && this.#queuedBytes > this.#receiveQueueBytes) {
      this.#readingPaused = true;
      this.#socket.pause();
    }
    if (this.#queue.length > before) this.#wake('data');
  }

  #growBatch(needed: number): void {
    const grown = new Uint8Array(Math.max(needed, this.#batchBytes, (this.#batch?.length ?? 0) * 2));
    if (this.#batch !== undefined) grown.set(this.#batch.subarray(0, this.#batchLength));
    this.#batch = grown;
  }

  #waitOn(
    waiters: (() => void)[],
    timeoutMs: number,
    check: () => ChannelWaitResult | undefined,
  ): Promise<ChannelWaitResult> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = (): void => {
        const result = check();
        if (result === undefined) {
          waiters.push(waiter);
          return;
        }
        if (timer !== undefined) clearTimeout(timer);
        resolve(result);
      };
      if (timeoutMs !== Number.POSITIVE_INFINITY) {
        timer = setTimeout(
          () => {
            const index = waiters.indexOf(waiter);
            if (index >= 0) waiters.splice(index, 1);
            resolve(check() ?? 'timed-out');
          },
          Math.max(0, timeoutMs),
        );
      }
      waiters.push(waiter);
    });
  }

  #wake(what: 'data' | 'room' | 'all'): void {
    if (what !== 'room') {
      const waiters = this.#dataWaiters;
      this.#dataWaiters = [];
      for (const waiter of waiters) waiter();
      this.#scheduleReadable();
    }
    if (what !== 'data') {
      const waiters = this.#roomWaiters;
      this.#roomWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }

  /** Calls the readable listeners on the next turn; again while messages remain (level-triggered). */
  #scheduleReadable(): void {
    if (this.#readableScheduled || this.#readableListeners.size === 0) return;
    this.#readableScheduled = true;
    setImmediate(() => {
      this.#readableScheduled = false;
      for (const listener of [...this.#readableListeners]) {
        try {
          listener();
        } catch (error) {
          process.nextTick(() => {
            throw error;
          });
        }
      }
      if (this.#queueHead < this.#queue.length) this.#scheduleReadable();
    });
  }
}

/** Connects to a listening peer and resolves with the channel once connected. */
export async function connectTcpChannel(options: TcpAddressOptions): Promise<TcpChannel> {
  const socket = net.connect({ host: options.host ?? '127.0.0.1', port: options.port, noDelay: true });
  try {
    await once(socket, 'connect');
  } catch (error) {
    socket.destroy();
    throw error;
  }
  return new TcpChannel(socket, options);
}

/** Listens for peers; `accept()` resolves with a channel per connection. */
export async function listenTcpChannel(options: TcpAddressOptions): Promise<TcpChannelListener> {
  const pending: TcpChannel[] = [];
  const acceptors: ((channel: TcpChannel) => void)[] = [];
  const server = net.createServer({ noDelay: true }, (socket) => {
    const channel = new TcpChannel(socket, options);
    const acceptor = acceptors.shift();
    if (acceptor === undefined) pending.push(channel);
    else acceptor(channel);
  });
  server.listen(options.port, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') {
    server.close();
    throw new ConfigError('port', 'the server did not bind a TCP address');
  }
  return {
    host: address.address,
    port: address.port,
    accept(): Promise<TcpChannel> {
      const ready = pending.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve) => acceptors.push(resolve));
    },
    close(): Promise<void> {
      // server.close's callback waits for every accepted connection to end; the listening socket
      // itself stops accepting at once, which is all this promises.
      server.close();
      return Promise.resolve();
    },
  };
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(name, `must be a positive integer, got ${value}`);
  }
  return value;
}
