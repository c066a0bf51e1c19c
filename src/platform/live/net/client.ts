/**
 * The UDP client library: sends requests to actors on a live ipipe node and matches their replies
 * (iPipe §3/§5: clients reach actors over the network; the paper's load generators pipeline many
 * outstanding requests per client).
 *
 *   const client = await IpipeClient.connect({ host: '10.0.0.2', port: 9000 });
 *   const reply = await client.call(actorId, kvMessages, kvReplies, { type: 'get', key: 'a' });
 *   await client.close();
 *
 * Requests and retries. Each request gets a fresh u32 request id. With no reply after `timeoutMs`
 * the same frame is sent again with the *same* request id (flagged RETRANSMIT), up to `retries`
 * times, so a server can recognise the copy and answer from a reply cache instead of executing
 * twice. After the last copy times out the request fails with RequestTimeoutError. Replies are
 * matched by (client id, request id); a reply that matches nothing pending (the answer to a copy
 * after the original was answered, or after the request timed out) is counted and ignored.
 *
 * Timeouts without a timer per request. Every copy's deadline is `sentAt + timeoutMs`, and copies
 * are sent in time order, so deadlines enter a FIFO already sorted. One timer is armed for the
 * FIFO's head; when it fires, expired entries are popped and entries whose request was answered
 * meanwhile (or retransmitted: their attempt number is stale) are skipped. In steady state the
 * timer fires about once per `timeoutMs`, whatever the request rate.
 *
 * Send buffers. A frame is encoded into a pooled buffer (the payload in place at offset 24 for
 * `call`, copied for `request`) and kept until the request ends, for retransmission. A buffer
 * goes back to the pool only when the request was answered after a single copy: the reply proves
 * the kernel had that copy, so nothing else still reads the buffer. A retransmitted copy may still
 * sit in libuv's send queue when an earlier copy's reply arrives, so such buffers are left to GC.
 *
 * Two ways to ask: `request`/`call` return promises; `submit` takes a RequestCompletion object
 * and allocates no closure per request (the load generator reuses one completion per slot).
 */

import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { performance } from 'node:perf_hooks';
import type { MessageCodec } from '../../../actor/codec.ts';
import { ConfigError, EncodeError } from '../../../errors.ts';
import { ClientClosedError, type NetError, RemoteError, RequestTimeoutError } from './errors.ts';
import {
  checkMaxFrameBytes,
  DEFAULT_MAX_FRAME_BYTES,
  DropCounters,
  type DropReason,
  decodeErrorBody,
  FrameView,
  HEADER_BYTES,
  markRetransmit,
  readFrameInto,
  sealFrame,
} from './wire.ts';

/** Options of `IpipeClient.connect`. */
export interface ClientOptions {
  /** Host name or IP address of the node. */
  readonly host: string;
  /** UDP port of the node. */
  readonly port: number;
  /** Wait per copy before retransmitting, in ms (default 1000). */
  readonly timeoutMs?: number;
  /** Copies sent again after the first one times out (default 2: three copies in all). */
  readonly retries?: number;
  /** Frame size limit, header included (default 1472: one datagram on a 1500-byte MTU). */
  readonly maxFrameBytes?: number;
  /** This client's id on the wire (default: random u32). */
  readonly clientId?: number;
  /**
   * Accept a reflected copy of a request as its reply. Only for measuring against a
   * protocol-less echo (a raw `node:dgram` reflector), so the client side does the same work in
   * both runs; never set it against a real node.
   */
  readonly acceptReflectedRequests?: boolean;
  /** SO_RCVBUF for the socket, in bytes (default: the OS's). Raise it for deep pipelines. */
  readonly receiveBufferBytes?: number;
  /** SO_SNDBUF for the socket, in bytes (default: the OS's). */
  readonly sendBufferBytes?: number;
}

/**
 * What `submit` calls back when a request ends: exactly one of the two methods, once. `payload`
 * is a view of the received datagram (which nothing else holds), valid for as long as it is kept.
 */
export interface RequestCompletion {
  onReply(payload: Uint8Array, requestId: number): void;
  onFailure(error: NetError, requestId: number): void;
}

/** Counters of one client, since connect. */
export interface ClientStats {
  /** Requests submitted (first copies). */
  readonly requests: number;
  /** Copies sent again after a timeout. */
  readonly retransmits: number;
  /** Requests that ended with a reply (error replies included). */
  readonly replies: number;
  /** Of those, error replies. */
  readonly errorReplies: number;
  /** Requests that ended with RequestTimeoutError. */
  readonly timeouts: number;
  /** Valid replies matching no pending request of this client (answers to extra copies, after a timeout, or for another client id). */
  readonly lateReplies: number;
  /** Requests waiting for a reply now. */
  readonly outstanding: number;
  /** Errors the socket reported (e.g. ECONNREFUSED from an ICMP port unreachable); requests go on. */
  readonly socketErrors: number;
  /** Datagrams received and dropped, by reason. */
  readonly drops: Readonly<Record<DropReason, number>>;
}

/** One request in flight. */
class Pending {
  // Numbers from the start: a field declared without a value is created `undefined`, which V8
  // types "any value" (docs/sim-speed.md, eighth pass); a u32 request id past 2^31 then reads back
  // as a heap number to check.
  readonly actorId: number = 0;
  readonly requestId: number = 0;
  readonly frame: Buffer;
  readonly frameBytes: number = 0;
  readonly completion: RequestCompletion;
  /** 0 for the first copy, then 1, 2, … per retransmission. */
  attempt = 0;
  constructor(
    actorId: number,
    requestId: number,
    frame: Buffer,
    frameBytes: number,
    completion: RequestCompletion,
  ) {
    this.actorId = actorId;
    this.requestId = requestId;
    this.frame = frame;
    this.frameBytes = frameBytes;
    this.completion = completion;
  }
}

/** Adapts a promise to RequestCompletion (the promise API's completion). */
class PromiseCompletion implements RequestCompletion {
  readonly promise: Promise<Uint8Array>;
  #resolve!: (payload: Uint8Array) => void;
  #reject!: (error: Error) => void;
  constructor() {
    this.promise = new Promise<Uint8Array>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }
  onReply(payload: Uint8Array): void {
    this.#resolve(payload);
  }
  onFailure(error: NetError): void {
    this.#reject(error);
  }
}

/** Decodes the reply with the caller's codec before resolving (`call`). */
class CallCompletion<R> implements RequestCompletion {
  readonly promise: Promise<R>;
  readonly #codec: MessageCodec<R>;
  #resolve!: (reply: R) => void;
  #reject!: (error: Error) => void;
  constructor(codec: MessageCodec<R>) {
    this.#codec = codec;
    this.promise = new Promise<R>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }
  onReply(payload: Uint8Array): void {
    const result = this.#codec.tryDecode(payload);
    if (result.ok) this.#resolve(result.message);
    else this.#reject(result.error);
  }
  onFailure(error: NetError): void {
    this.#reject(error);
  }
}

/**
 * The timeout FIFO: (deadline, request id, attempt) triples in send order, so deadlines are
 * non-decreasing from head to tail. A growable ring over typed arrays:
 *
 *   head ─▶ [d0 id0 a0][d1 id1 a1] … [dn idn an] ◀─ tail (next free slot)
 */
class DeadlineQueue {
  #deadlinesMs = new Float64Array(64);
  #requestIds = new Uint32Array(64);
  #attempts = new Uint32Array(64);
  #head = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(deadlineMs: number, requestId: number, attempt: number): void {
    if (this.#size === this.#deadlinesMs.length) this.#grow();
    const at = (this.#head + this.#size) & (this.#deadlinesMs.length - 1);
    this.#deadlinesMs[at] = deadlineMs;
    this.#requestIds[at] = requestId;
    this.#attempts[at] = attempt;
    this.#size++;
  }

  headDeadlineMs(): number {
    return this.#deadlinesMs[this.#head]!;
  }
  headRequestId(): number {
    return this.#requestIds[this.#head]!;
  }
  headAttempt(): number {
    return this.#attempts[this.#head]!;
  }

  pop(): void {
    this.#head = (this.#head + 1) & (this.#deadlinesMs.length - 1);
    this.#size--;
  }

  clear(): void {
    this.#head = 0;
    this.#size = 0;
  }

  #grow(): void {
    const capacity = this.#deadlinesMs.length;
    const deadlines = new Float64Array(capacity * 2);
    const ids = new Uint32Array(capacity * 2);
    const attempts = new Uint32Array(capacity * 2);
    for (let i = 0; i < this.#size; i++) {
      const from = (this.#head + i) & (capacity - 1);
      deadlines[i] = this.#deadlinesMs[from]!;
      ids[i] = this.#requestIds[from]!;
      attempts[i] = this.#attempts[from]!;
    }
    this.#deadlinesMs = deadlines;
    this.#requestIds = ids;
    this.#attempts = attempts;
    this.#head = 0;
  }
}

/** Most free send buffers kept for reuse (beyond that, finished buffers are left to GC). */
const MAX_POOLED_BUFFERS = 4096;

function checkNonNegativeInteger(path: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new ConfigError(path, `must be an integer in [0, ${max}], got ${value}`);
  }
}

function randomU32(): number {
  return globalThis.crypto.getRandomValues(new Uint32Array(1))[0]!;
}

/** A connected UDP client of one ipipe node. Make one with `IpipeClient.connect`. */
export class IpipeClient {
  /** This client's id on the wire. */
  // Numbers from the start, not `undefined` until the constructor runs (see Pending).
  readonly clientId: number = 0;
  /** Per-copy timeout, ms. */
  readonly timeoutMs: number = 0;
  /** Retransmissions per request. */
  readonly retries: number = 0;
  /** Frame size limit, header included. */
  readonly maxFrameBytes: number = 0;
  /** Where the client sends, as resolved at connect. */
  readonly remote: { readonly address: string; readonly port: number };

  readonly #socket: dgram.Socket;
  readonly #acceptReflected: boolean = false;
  readonly #pending = new Map<number, Pending>();
  readonly #deadlines = new DeadlineQueue();
  readonly #pool: Buffer[] = [];
  readonly #view = new FrameView();
  readonly #drops = new DropCounters();
  /** A u32, so a field created `undefined` ("any value") would allocate a heap number per request past 2^31. */
  #nextRequestId = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #requests = 0;
  #retransmits = 0;
  #replies = 0;
  #errorReplies = 0;
  #timeouts = 0;
  #lateReplies = 0;
  #socketErrors = 0;

  /** Resolves the host, opens a UDP socket connected to it, and returns the client. */
  static async connect(options: ClientOptions): Promise<IpipeClient> {
    const timeoutMs = options.timeoutMs ?? 1000;
    const retries = options.retries ?? 2;
    const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (typeof options.host !== 'string' || options.host === '') {
      throw new ConfigError('host', 'must be a host name or IP address');
    }
    checkNonNegativeInteger('port', options.port, 65_535);
    if (options.port === 0) throw new ConfigError('port', 'must be a port in [1, 65535], got 0');
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) {
      throw new ConfigError('timeoutMs', `must be a positive number of milliseconds, got ${timeoutMs}`);
    }
    checkNonNegativeInteger('retries', retries, 100);
    try {
      checkMaxFrameBytes(maxFrameBytes);
    } catch (error) {
      throw new ConfigError('maxFrameBytes', (error as Error).message);
    }
    const clientId = options.clientId ?? randomU32();
    checkNonNegativeInteger('clientId', clientId, 0xffff_ffff);

    const resolved = await lookup(options.host);
    const socket = dgram.createSocket({
      type: resolved.family === 6 ? 'udp6' : 'udp4',
      ...(options.receiveBufferBytes === undefined ? {} : { recvBufferSize: options.receiveBufferBytes }),
      ...(options.sendBufferBytes === undefined ? {} : { sendBufferSize: options.sendBufferBytes }),
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        socket.close();
        reject(error);
      };
      socket.once('error', onError);
      socket.connect(options.port, resolved.address, () => {
        socket.off('error', onError);
        resolve();
      });
    });
    return new IpipeClient(socket, {
      clientId,
      timeoutMs,
      retries,
      maxFrameBytes,
      acceptReflected: options.acceptReflectedRequests === true,
      remote: { address: resolved.address, port: options.port },
    });
  }

  private constructor(
    socket: dgram.Socket,
    settings: {
      clientId: number;
      timeoutMs: number;
      retries: number;
      maxFrameBytes: number;
      acceptReflected: boolean;
      remote: { address: string; port: number };
    },
  ) {
    this.#socket = socket;
    this.clientId = settings.clientId;
    this.timeoutMs = settings.timeoutMs;
    this.retries = settings.retries;
    this.maxFrameBytes = settings.maxFrameBytes;
    this.remote = Object.freeze(settings.remote);
    this.#acceptReflected = settings.acceptReflected;
    // A random start makes ids from a restarted client unlikely to collide with a server's
    // reply cache entries for its previous incarnation (which had another client id anyway).
    this.#nextRequestId = randomU32();
    socket.on('message', this.#onMessage);
    socket.on('error', this.#onSocketError);
  }

  /** Largest payload one request may carry. */
  get maxPayloadBytes(): number {
    return this.maxFrameBytes - HEADER_BYTES;
  }

  /** Requests waiting for a reply now. */
  get outstanding(): number {
    return this.#pending.size;
  }

  /**
   * Sends `payload` to actor `actorId`; resolves with the reply's payload, rejects with
   * RequestTimeoutError, RemoteError (the node's code and message), ClientClosedError, or
   * EncodeError when the payload exceeds `maxPayloadBytes`.
   */
  request(actorId: number, payload: Uint8Array): Promise<Uint8Array> {
    const completion = new PromiseCompletion();
    try {
      this.submit(actorId, payload, completion);
    } catch (error) {
      return Promise.reject(error);
    }
    return completion.promise;
  }

  /**
   * Typed request: encodes `message` with the target actor's `codec` straight into the send
   * buffer and decodes the reply with `replyCodec`. Rejects like `request`, plus
   * CodecEncodeError / CodecDecodeError when either side does not fit its codec.
   */
  call<M, R>(actorId: number, codec: MessageCodec<M>, replyCodec: MessageCodec<R>, message: M): Promise<R> {
    const completion = new CallCompletion(replyCodec);
    try {
      if (this.#closed) throw new ClientClosedError(`request to actor ${actorId}`);
      const frame = this.#takeBuffer();
      let payloadBytes: number;
      try {
        payloadBytes = codec.encodeInto(message, frame, HEADER_BYTES);
      } catch (error) {
        this.#returnBuffer(frame);
        throw error;
      }
      this.#start(actorId, frame, payloadBytes, completion);
    } catch (error) {
      return Promise.reject(error);
    }
    return completion.promise;
  }

  /**
   * The allocation-light form of `request`: copies `payload` into a send buffer, sends it, and
   * later calls exactly one of `completion`'s methods. Returns the request id. Throws (nothing is
   * sent) when the client is closed, `actorId` is not a u32, or the payload is too large.
   */
  submit(actorId: number, payload: Uint8Array, completion: RequestCompletion): number {
    if (this.#closed) throw new ClientClosedError(`request to actor ${actorId}`);
    if (payload.length > this.maxFrameBytes - HEADER_BYTES) {
      throw new EncodeError(
        `a ${payload.length}-byte payload exceeds the ${this.maxFrameBytes - HEADER_BYTES}-byte limit ` +
          `(maxFrameBytes ${this.maxFrameBytes} minus the ${HEADER_BYTES}-byte header)`,
      );
    }
    const frame = this.#takeBuffer();
    frame.set(payload, HEADER_BYTES);
    return this.#start(actorId, frame, payload.length, completion);
  }

  /** Counters since connect. */
  stats(): ClientStats {
    return {
      requests: this.#requests,
      retransmits: this.#retransmits,
      replies: this.#replies,
      errorReplies: this.#errorReplies,
      timeouts: this.#timeouts,
      lateReplies: this.#lateReplies,
      outstanding: this.#pending.size,
      socketErrors: this.#socketErrors,
      drops: this.#drops.snapshot(),
    };
  }

  /** Fails every pending request with ClientClosedError and closes the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#deadlines.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) {
      request.completion.onFailure(
        new ClientClosedError(`request ${request.requestId} to actor ${request.actorId}`),
        request.requestId,
      );
    }
    await new Promise<void>((resolve) => this.#socket.close(() => resolve()));
  }

  #start(actorId: number, frame: Buffer, payloadBytes: number, completion: RequestCompletion): number {
    const requestId = this.#allocateRequestId();
    let frameBytes: number;
    try {
      frameBytes = sealFrame(
        frame,
        { kind: 'request', targetActorId: actorId, requestId, clientId: this.clientId },
        payloadBytes,
        0,
        this.maxFrameBytes,
      );
    } catch (error) {
      this.#returnBuffer(frame);
      throw error;
    }
    const pending = new Pending(actorId, requestId, frame, frameBytes, completion);
    this.#pending.set(requestId, pending);
    this.#requests++;
    this.#send(pending);
    return requestId;
  }

  #allocateRequestId(): number {
    // Skip ids still pending: only possible after 2^32 requests with one never answered.
    let id = this.#nextRequestId;
    while (this.#pending.has(id)) id = (id + 1) >>> 0;
    this.#nextRequestId = (id + 1) >>> 0;
    return id;
  }

  #send(pending: Pending): void {
    this.#socket.send(pending.frame, 0, pending.frameBytes);
    this.#deadlines.push(performance.now() + this.timeoutMs, pending.requestId, pending.attempt);
    if (this.#timer === undefined) this.#armTimer();
  }

  #armTimer(): void {
    if (this.#deadlines.size === 0 || this.#closed) return;
    const delayMs = Math.max(0, this.#deadlines.headDeadlineMs() - performance.now());
    // +1: setTimeout may fire a fraction of a millisecond early relative to performance.now().
    this.#timer = setTimeout(this.#onTimer, Math.ceil(delayMs) + 1);
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    const now = performance.now();
    const queue = this.#deadlines;
    while (queue.size > 0 && queue.headDeadlineMs() <= now) {
      const requestId = queue.headRequestId();
      const attempt = queue.headAttempt();
      queue.pop();
      const pending = this.#pending.get(requestId);
      // Answered meanwhile, or this entry is for an earlier copy: nothing to do.
      if (pending === undefined || pending.attempt !== attempt) continue;
      if (pending.attempt < this.retries) {
        pending.attempt++;
        this.#retransmits++;
        markRetransmit(pending.frame, pending.frameBytes);
        this.#send(pending);
      } else {
        this.#pending.delete(requestId);
        this.#timeouts++;
        pending.completion.onFailure(
          new RequestTimeoutError(pending.actorId, requestId, pending.attempt + 1, this.timeoutMs),
          requestId,
        );
      }
    }
    if (this.#timer === undefined) this.#armTimer();
  };

  readonly #onMessage = (message: Buffer): void => {
    const view = this.#view;
    const reason = readFrameInto(message, view, this.maxFrameBytes);
    if (reason !== undefined) {
      this.#drops.add(reason);
      return;
    }
    if (
      view.kind === 'peer' ||
      view.kind === 'fragment' ||
      (view.kind === 'request' && !this.#acceptReflected)
    ) {
      this.#drops.add('unexpected-kind');
      return;
    }
    const pending = view.clientId === this.clientId ? this.#pending.get(view.requestId) : undefined;
    if (pending === undefined) {
      this.#lateReplies++;
      return;
    }
    this.#pending.delete(view.requestId);
    this.#replies++;
    if (pending.attempt === 0) this.#returnBuffer(pending.frame);
    const start = view.payloadOffset;
    const end = start + view.payloadLength;
    if (view.kind === 'error') {
      this.#errorReplies++;
      const body = decodeErrorBody(message, start, view.payloadLength);
      const error = body.ok
        ? new RemoteError(pending.actorId, pending.requestId, body.code, body.message)
        : new RemoteError(
            pending.actorId,
            pending.requestId,
            'unknown',
            `unreadable error reply (${body.problem})`,
          );
      pending.completion.onFailure(error, pending.requestId);
      return;
    }
    pending.completion.onReply(message.subarray(start, end), pending.requestId);
  };

  readonly #onSocketError = (): void => {
    // A connected UDP socket reports an ICMP port-unreachable as ECONNREFUSED on a later call.
    // The request it belongs to is unknown; its timeout and retries decide its fate.
    this.#socketErrors++;
  };

  #takeBuffer(): Buffer {
    return this.#pool.pop() ?? Buffer.allocUnsafeSlow(this.maxFrameBytes);
  }

  #returnBuffer(buffer: Buffer): void {
    if (this.#pool.length < MAX_POOLED_BUFFERS) this.#pool.push(buffer);
  }
}
