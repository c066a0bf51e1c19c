/**
 * The RESP2 server front of the replicated KV store (issue 5, §2): a `node:net` server that
 * redis-cli, redis-benchmark and client libraries (ioredis, node-redis) talk to unchanged, in
 * front of any `KvBackend` — the RKV cluster, or the in-memory backend for tests and benchmarks.
 *
 *     const server = await startRespServer({ port: 6379, backend: new MemoryKvBackend() });
 *     server.address;   // { host, port, family }
 *     server.stats();   // counters, protocol errors by reason
 *     await server.close();  // graceful: stop accepting, answer what was asked, close
 *
 * One process, one event loop, like Redis's main thread: connections share nothing but the
 * backend and the counters. Replies of every connection are flushed once per event-loop turn
 * (a `setImmediate` after the turn's reads and backend completions), which turns a pipeline read in
 * one chunk into one write.
 */

import net from 'node:net';
import type { KvBackend } from './backend.ts';
import { type ConnectionHost, RespConnection } from './connection.ts';
import { RespListenError } from './errors.ts';
import type { InfoServerView } from './info.ts';
import { type RespLimits, type RespLimitsInput, resolveRespLimits } from './limits.ts';
import { RespCounters, type RespServerStats } from './stats.ts';

/** Options of `startRespServer`. */
export interface RespServerOptions {
  /** TCP port; 0 picks a free one (read it back from `address`). */
  readonly port: number;
  /** Address to bind (default `127.0.0.1`, as Redis binds loopback by default). */
  readonly host?: string;
  /** The store behind the front. */
  readonly backend: KvBackend;
  /** Overrides of `DEFAULT_RESP_LIMITS`. */
  readonly limits?: RespLimitsInput;
}

/** Where the server listens. */
export interface RespServerAddress {
  readonly host: string;
  readonly port: number;
  readonly family: string;
}

/** Options of `close`. */
export interface RespCloseOptions {
  /** After this long, connections still open are destroyed (default 5000 ms). */
  readonly timeoutMs?: number;
}

/** A running RESP server. */
export interface RespServerHandle {
  readonly address: RespServerAddress;
  /** The resolved limits in force. */
  readonly limits: RespLimits;
  /** A snapshot of the counters. */
  stats(): RespServerStats;
  /**
   * Graceful close: stop accepting; each connection takes no more commands, gets the replies to
   * those already taken, and is closed; resolves once every socket is closed (or destroyed at the
   * timeout). Calling it again returns the same promise.
   */
  close(options?: RespCloseOptions): Promise<void>;
}

/** The error reply Redis sends a client past `maxclients`, then closes. */
const TOO_MANY_CLIENTS = '-ERR max number of clients reached\r\n';

class RespServer implements ConnectionHost, RespServerHandle, InfoServerView {
  readonly backend: KvBackend;
  readonly limits: RespLimits;
  readonly counters = new RespCounters();
  readonly startedAtMs = Date.now();
  readonly #server: net.Server;
  readonly #connections = new Set<RespConnection>();
  #nextConnectionId = 1;
  #flushList: RespConnection[] = [];
  #flushScheduled = false;
  #closing: Promise<void> | undefined;
  /** Resolves `#closing`; set while a close is under way. */
  #finishClose: (() => void) | undefined;
  #listenerClosed = false;
  #address: RespServerAddress = { host: '', port: 0, family: '' };

  constructor(backend: KvBackend, limits: RespLimits) {
    this.backend = backend;
    this.limits = limits;
    // allowHalfOpen: a client may send its commands and shut its side; it still gets its replies.
    this.#server = net.createServer({ allowHalfOpen: true, noDelay: true }, this.#onConnection);
    // Accept errors (EMFILE…) must not crash the process; the listener keeps going.
    this.#server.on('error', () => {
      this.counters.socketErrors++;
    });
  }

  get view(): InfoServerView {
    return this;
  }

  get address(): RespServerAddress {
    return this.#address;
  }

  get host(): string {
    return this.#address.host;
  }

  get port(): number {
    return this.#address.port;
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(new RespListenError(host, port, error));
      this.#server.once('error', onError);
      this.#server.listen(port, host, () => {
        this.#server.off('error', onError);
        const bound = this.#server.address() as net.AddressInfo;
        this.#address = Object.freeze({ host: bound.address, port: bound.port, family: bound.family });
        resolve();
      });
    });
  }

  stats(): RespServerStats {
    return this.counters.snapshot();
  }

  requestFlush(connection: RespConnection): void {
    this.#flushList.push(connection);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(this.#flushAll);
    }
  }

  closed(connection: RespConnection): void {
    this.#connections.delete(connection);
    this.counters.connectionsOpen--;
    this.#maybeFinishClose();
  }

  close(options: RespCloseOptions = {}): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    const timeoutMs = options.timeoutMs ?? 5000;
    this.#closing = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        for (const connection of this.#connections) connection.destroy();
      }, timeoutMs);
      this.#finishClose = () => {
        clearTimeout(timer);
        resolve();
      };
      // net.Server's callback runs once the listener is closed and its socket count is zero,
      // which can come before the sockets' own 'close' handlers (our bookkeeping) have run:
      // resolve only when both are done, so stats() after close() shows no open connection.
      this.#server.close(() => {
        this.#listenerClosed = true;
        this.#maybeFinishClose();
      });
      for (const connection of this.#connections) connection.shutdown();
    });
    return this.#closing;
  }

  #maybeFinishClose(): void {
    if (this.#finishClose === undefined || !this.#listenerClosed || this.#connections.size > 0) return;
    const finish = this.#finishClose;
    this.#finishClose = undefined;
    finish();
  }

  readonly #flushAll = (): void => {
    this.#flushScheduled = false;
    const list = this.#flushList;
    this.#flushList = [];
    for (const connection of list) connection.flush();
  };

  readonly #onConnection = (socket: net.Socket): void => {
    this.counters.connectionsAccepted++;
    if (this.#closing !== undefined) {
      socket.destroy();
      return;
    }
    if (this.#connections.size >= this.limits.maxConnections) {
      this.counters.connectionsRejected++;
      socket.on('error', () => {
        this.counters.socketErrors++;
      });
      socket.end(TOO_MANY_CLIENTS);
      return;
    }
    this.counters.connectionsOpen++;
    this.#connections.add(new RespConnection(this.#nextConnectionId++, socket, this));
  };
}

/**
 * Starts a RESP2 server in front of `backend`. Rejects with `RespLimitsError` for bad limits and
 * `RespListenError` when the address cannot be bound.
 */
export async function startRespServer(options: RespServerOptions): Promise<RespServerHandle> {
  const limits = resolveRespLimits(options.limits);
  const server = new RespServer(options.backend, limits);
  await server.listen(options.port, options.host ?? '127.0.0.1');
  return server;
}
