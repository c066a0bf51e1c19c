/**
 * The TCP mesh between the replicas of a live RKV cluster: each replica listens on its peer port
 * and dials every other replica; a replica sends only on the connection it dialled and receives on
 * the ones it accepted, so each ordered pair has one stream (and frames from one sender arrive in
 * order). A connection that fails is dialled again every `redialMs`; while it is down, frames for
 * that peer are dropped — Paxos retransmits prepares, accepts and catch-up requests, and clients
 * retry, so a lost frame costs time, never safety.
 *
 * Frames are queued per peer during an event-loop turn and written by `flush()` as one `write`
 * (the host flushes after its group commit), so a turn's accepts to a peer cost one syscall.
 */

import net from 'node:net';
import { ClusterFrameError } from './errors.ts';
import { encodeWireMessage, FrameDecoder, type WireMessage } from './peer-wire.ts';

/** Where a peer listens. */
export interface PeerAddress {
  readonly host: string;
  readonly port: number;
}

/** Options of `PeerMesh`. */
export interface PeerMeshOptions {
  readonly me: number;
  /** Every replica's peer address, by replica id (this replica's own entry is where it listens). */
  readonly peers: readonly PeerAddress[];
  /** Called for every message received, in arrival order per sender. */
  readonly onMessage: (message: WireMessage) => void;
  /** Called when a connection is dropped for a bad frame (for logs and counters). */
  readonly onFrameError?: (error: ClusterFrameError) => void;
  readonly redialMs?: number;
  /** Frames queued for a peer whose socket holds more than this are dropped (back-pressure). */
  readonly maxQueuedBytes?: number;
}

/** Counters for INFO. */
export interface PeerMeshStats {
  readonly framesSent: number;
  readonly framesReceived: number;
  readonly framesDropped: number;
  readonly frameErrors: number;
  readonly connectedPeers: number;
}

interface Outbound {
  socket: net.Socket | null;
  connected: boolean;
  queue: Uint8Array[];
  queuedBytes: number;
  redialTimer: NodeJS.Timeout | null;
}

export class PeerMesh {
  readonly #options: PeerMeshOptions;
  readonly #server: net.Server;
  readonly #outbound: Outbound[];
  readonly #inbound = new Set<net.Socket>();
  readonly #redialMs: number;
  readonly #maxQueuedBytes: number;
  #closed = false;
  #framesSent = 0;
  #framesReceived = 0;
  #framesDropped = 0;
  #frameErrors = 0;

  constructor(options: PeerMeshOptions) {
    this.#options = options;
    this.#redialMs = options.redialMs ?? 100;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? 64 << 20;
    this.#outbound = options.peers.map(() => ({
      socket: null,
      connected: false,
      queue: [],
      queuedBytes: 0,
      redialTimer: null,
    }));
    this.#server = net.createServer({ noDelay: true }, (socket) => this.#accept(socket));
  }

  /** Listens on this replica's peer port and starts dialling the others. */
  async start(): Promise<void> {
    const own = this.#options.peers[this.#options.me];
    if (own === undefined) throw new RangeError(`no peer address for replica ${this.#options.me}`);
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(own.port, own.host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    for (let peer = 0; peer < this.#outbound.length; peer++) if (peer !== this.#options.me) this.#dial(peer);
  }

  /** Queues a message for `to` (written by the next `flush`). */
  send(to: number, message: WireMessage): void {
    if (this.#acceptsFor(to)) this.#queue(to, encodeWireMessage(message));
  }

  /**
   * Queues an already encoded frame (`encodeWireMessage`): a broadcast is encoded once and queued
   * for every peer.
   */
  sendFrame(to: number, frame: Uint8Array): void {
    if (this.#acceptsFor(to)) this.#queue(to, frame);
  }

  #acceptsFor(to: number): boolean {
    const outbound = this.#outbound[to];
    if (outbound === undefined || to === this.#options.me || this.#closed) return false;
    if (!outbound.connected || outbound.socket === null) {
      this.#framesDropped++;
      return false;
    }
    return true;
  }

  #queue(to: number, frame: Uint8Array): void {
    const outbound = this.#outbound[to]!;
    if (outbound.socket!.writableLength + outbound.queuedBytes + frame.length > this.#maxQueuedBytes) {
      this.#framesDropped++;
      return;
    }
    outbound.queue.push(frame);
    outbound.queuedBytes += frame.length;
  }

  /** Writes every queued frame: one write per peer. */
  flush(): void {
    for (const outbound of this.#outbound) {
      if (outbound.queue.length === 0) continue;
      const socket = outbound.socket;
      const frames = outbound.queue;
      const bytes = outbound.queuedBytes;
      outbound.queue = [];
      outbound.queuedBytes = 0;
      if (socket === null || !outbound.connected) {
        this.#framesDropped += frames.length;
        continue;
      }
      this.#framesSent += frames.length;
      if (frames.length === 1) socket.write(frames[0]!);
      else socket.write(Buffer.concat(frames, bytes));
    }
  }

  /** Whether the connection to `peer` is up. */
  connected(peer: number): boolean {
    return this.#outbound[peer]?.connected === true;
  }

  stats(): PeerMeshStats {
    return {
      framesSent: this.#framesSent,
      framesReceived: this.#framesReceived,
      framesDropped: this.#framesDropped,
      frameErrors: this.#frameErrors,
      connectedPeers: this.#outbound.filter((outbound) => outbound.connected).length,
    };
  }

  /** Closes the listener and every connection. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const outbound of this.#outbound) {
      if (outbound.redialTimer !== null) clearTimeout(outbound.redialTimer);
      outbound.socket?.destroy();
      outbound.socket = null;
      outbound.connected = false;
    }
    for (const socket of this.#inbound) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #dial(peer: number): void {
    if (this.#closed) return;
    const outbound = this.#outbound[peer]!;
    const address = this.#options.peers[peer]!;
    outbound.redialTimer = null;
    const socket = net.connect({ host: address.host, port: address.port, noDelay: true });
    outbound.socket = socket;
    socket.on('connect', () => {
      outbound.connected = true;
    });
    // The dialled side never reads: replies come on the connection the peer dialled to us.
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => {
      if (outbound.socket === socket) {
        outbound.socket = null;
        outbound.connected = false;
        outbound.queue = [];
        outbound.queuedBytes = 0;
        if (!this.#closed) outbound.redialTimer = setTimeout(() => this.#dial(peer), this.#redialMs);
      }
    });
  }

  #accept(socket: net.Socket): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#inbound.add(socket);
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      let messages: WireMessage[];
      try {
        messages = decoder.push(chunk);
      } catch (error) {
        this.#frameErrors++;
        if (error instanceof ClusterFrameError) this.#options.onFrameError?.(error);
        socket.destroy();
        return;
      }
      this.#framesReceived += messages.length;
      for (const message of messages) this.#options.onMessage(message);
    });
    socket.on('error', () => {});
    socket.on('close', () => this.#inbound.delete(socket));
  }
}
