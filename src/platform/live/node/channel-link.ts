/**
 * One side's end of the NIC↔host channel, as the domain controllers use it: typed messages over
 * any `MessageChannel` (shared-memory rings in one process, TCP across processes), in order,
 * never dropped — when the channel is full, messages wait in a local backlog and go out as room
 * appears (back-pressure reaches the sender as latency, not loss).
 *
 *   REQUEST  [1][actor u32][timer id u32][origin…][payload]        run this on the actor (or fire its timer)
 *   REPLY    [2][actor u32][origin…][reply]                       host → NIC: answer a client
 *   ERROR    [3][actor u32][origin…][code][message]               host → NIC: refuse a client
 *   MIGRATE  [4][actor u32]                                       NIC → host: the actor leaves the host
 *   IMAGE    [5][actor u32][total u32][offset u32][chunk]         the actor's DMO region, in pieces
 *   ADOPTED  [6][actor u32]                                       the image was adopted: let go
 *   DONE     [7][actor u32][exec ns f64]                          host → NIC: a request ran (statistics)
 *   STOP     [8][actor u32][reason]                               NIC → host: the actor is deregistered
 *   IMAGE_DMA [9][actor u32][window u32][bytes u32]               the actor's region, copied by the "DMA engine"
 *   DRAINED  [10][actor u32]                                      NIC → host: after ADOPTED, every request the NIC
 *                                                                 held for the actor has been sent on (see below)
 *
 * Per-sender order across a move to the host. While the actor migrates, the NIC buffers its
 * requests — those a host actor sent it included (they went to the NIC, where the actor was) — and
 * sends them on only once it reads ADOPTED. A host actor's message sent after the host adopted the
 * image would otherwise run ahead of its own earlier ones still in the NIC's buffer, so the host
 * holds its local senders' messages for the actor until DRAINED, which the NIC sends behind the
 * last of them (this channel is FIFO). Moving to the NIC needs no marker: the host sends its
 * senders' messages to the NIC from MIGRATE on, and the NIC queues what it buffered ahead of them.
 *
 * Moving a region. Across processes (TCP) the image travels as IMAGE chunks. In one process the
 * two domains' memories are SharedArrayBuffers the same thread can read, so the region moves the
 * way a SmartNIC moves bulk data: the ring carries a descriptor (IMAGE_DMA, naming a window the
 * sender opened on its quiescent region) and the receiver copies the image straight out of the
 * sender's memory into its own — one copy, no staging buffer, no per-chunk checksum pass (the
 * ring's CRC protects the descriptor; the bulk copy never leaves process memory).
 */

import type { Origin } from '../../../actor/envelope.ts';
import type { DmoHeap } from '../../../dmo/index.ts';
import { regionImageChunks, regionImageSize } from '../../../dmo/region-image.ts';
import type { ActorId } from '../../../ids.ts';
import type { MessageChannel } from '../channel/channel.ts';
import { FrameBuilder, FrameReader } from './core-protocol.ts';

export const LINK_REQUEST = 1;
export const LINK_REPLY = 2;
export const LINK_ERROR = 3;
export const LINK_MIGRATE = 4;
export const LINK_IMAGE = 5;
export const LINK_ADOPTED = 6;
export const LINK_DONE = 7;
export const LINK_STOP = 8;
export const LINK_IMAGE_DMA = 9;
export const LINK_DRAINED = 10;

/** Chunk size when the receiver copies a region image out of the sender's memory (a DMA burst). */
const DMA_CHUNK_BYTES = 8 << 20;

/**
 * The "DMA engine" of a node whose two domains share a process: a window is a quiescent region
 * the sender exposes until the receiver has copied it.
 */
export class InProcessDma {
  readonly #windows = new Map<number, DmoHeap>();
  #next = 1;

  open(heap: DmoHeap): number {
    const id = this.#next++;
    this.#windows.set(id, heap);
    return id;
  }

  take(id: number): DmoHeap | undefined {
    const heap = this.#windows.get(id);
    this.#windows.delete(id);
    return heap;
  }
}

/** One side's sending direction of the NIC↔host channel (`ChannelLink.sendingStats`). */
export interface LinkSendingStats {
  readonly transport: 'ring' | 'tcp';
  /** Sent and not yet taken by the peer (ring: published, unreleased; TCP: queued in this process). */
  readonly unreadBytes: number;
  /** Waiting in this side's backlog for room in the channel. */
  readonly backlogBytes: number;
  /** Where the channel starts refusing sends (ring: its size; TCP: the socket's high-water mark). */
  readonly capacityBytes: number;
}

export class ChannelLink {
  readonly #channel: MessageChannel;
  readonly #out = new FrameBuilder();
  readonly #reader = new FrameReader();
  readonly #backlog: Uint8Array[] = [];
  #draining = false;
  #unsubscribe: (() => void) | undefined;
  #onClosed: (() => void) | undefined;
  #closeReported = false;
  /** Bytes handed to the channel. */
  sentBytes = 0;
  /** Messages that failed their checksum or framing and were dropped. */
  corrupt = 0;

  readonly #dma: InProcessDma | undefined;

  /** `dma`: given when the peer runs in this process (both links share the one object). */
  constructor(channel: MessageChannel, dma?: InProcessDma) {
    this.#channel = channel;
    this.#dma = dma;
  }

  /**
   * How full this side's sending direction is, for /metrics: bytes the peer has not taken yet, bytes
   * held in the backlog for want of room (the back-pressure that replaces dropping), and where the
   * channel starts refusing. Walks the backlog, so it is for scrapes, not the request path.
   */
  sendingStats(): LinkSendingStats {
    const stats = this.#channel.stats();
    let backlogBytes = 0;
    for (const frame of this.#backlog) backlogBytes += frame.length;
    return {
      transport: this.#channel.transport,
      unreadBytes: stats.occupancyBytes,
      backlogBytes,
      capacityBytes: stats.capacityBytes,
    };
  }

  /** Largest message the channel takes (image chunks are cut to fit). */
  get maxMessageBytes(): number {
    return 'maxMessageBytes' in this.#channel
      ? (this.#channel as { maxMessageBytes: number }).maxMessageBytes
      : 1 << 20;
  }

  /** Starts delivering received messages to `handler` (called with a reader positioned after the kind). */
  listen(handler: (kind: number, actor: ActorId, reader: FrameReader) => void): void {
    const drain = () => {
      for (;;) {
        let message: Uint8Array | null;
        try {
          message = this.#channel.receive();
        } catch {
          this.corrupt++;
          continue;
        }
        if (message === null) {
          // The channel calls its readable listeners once when it closes; after `close` here no
          // listener is left, so this reports only a close by the peer (or a failed connection).
          if (this.#channel.closed && !this.#closeReported) {
            this.#closeReported = true;
            this.#onClosed?.();
          }
          return;
        }
        const reader = this.#reader.reset(message);
        const kind = reader.u8();
        const actor = reader.u32() as ActorId;
        if (!reader.ok) {
          this.corrupt++;
          continue;
        }
        handler(kind, actor, reader);
      }
    };
    this.#unsubscribe = this.#channel.onReadable(drain);
    drain();
  }

  /** True once either end closed the channel (or, over TCP, the connection failed). */
  get closed(): boolean {
    return this.#channel.closed;
  }

  /**
   * `listener` runs once, after the messages that arrived before it were delivered, when the
   * channel turns out closed while this side still listens: the peer domain went away.
   */
  onClosed(listener: () => void): void {
    this.#onClosed = listener;
  }

  request(actor: ActorId, timerId: number, origin: Origin, payload: Uint8Array): void {
    const out = this.#begin(LINK_REQUEST, actor);
    out.u32(timerId);
    out.origin(origin);
    out.bytesField(payload);
    this.#send();
  }

  reply(actor: ActorId, origin: Origin, reply: Uint8Array): void {
    const out = this.#begin(LINK_REPLY, actor);
    out.origin(origin);
    out.bytesField(reply);
    this.#send();
  }

  error(actor: ActorId, origin: Origin, code: string, message: string): void {
    const out = this.#begin(LINK_ERROR, actor);
    out.origin(origin);
    out.text(code, 1);
    out.text(message, 2);
    this.#send();
  }

  control(kind: typeof LINK_MIGRATE | typeof LINK_ADOPTED | typeof LINK_DRAINED, actor: ActorId): void {
    this.#begin(kind, actor);
    this.#send();
  }

  stop(actor: ActorId, reason: string): void {
    const out = this.#begin(LINK_STOP, actor);
    out.text(reason, 2);
    this.#send();
  }

  done(actor: ActorId, execNs: number): void {
    const out = this.#begin(LINK_DONE, actor);
    out.f64(execNs);
    this.#send();
  }

  /**
   * Sends `heap`'s region image (the actor must stay quiescent until the peer says ADOPTED): a
   * DMA descriptor in one process, else chunks cut to fit the channel, written straight from the
   * region (no whole-image buffer). Returns the image's size.
   */
  image(actor: ActorId, heap: DmoHeap): number {
    const total = regionImageSize(heap);
    if (this.#dma) {
      const out = this.#begin(LINK_IMAGE_DMA, actor);
      out.u32(this.#dma.open(heap));
      out.u32(total);
      this.#send();
      return total;
    }
    const chunkBytes = Math.max(4_096, this.maxMessageBytes - 64);
    let offset = 0;
    for (const chunk of regionImageChunks(heap, chunkBytes)) {
      const out = this.#begin(LINK_IMAGE, actor);
      out.u32(total);
      out.u32(offset);
      out.bytesField(chunk);
      this.#send();
      offset += chunk.length;
    }
    return total;
  }

  /**
   * The image bytes an IMAGE or IMAGE_DMA message delivers, in order: the chunk it carries, or
   * the sender's whole region read in DMA bursts. Undefined for a DMA window that is not open.
   */
  imageChunks(
    kind: typeof LINK_IMAGE | typeof LINK_IMAGE_DMA,
    reader: FrameReader,
  ): Iterable<Uint8Array> | undefined {
    if (kind === LINK_IMAGE) {
      reader.u32(); // total, checked by the assembler against the image header
      reader.u32(); // offset: chunks arrive in order over the FIFO channel
      return [reader.bytesField()];
    }
    const heap = this.#dma?.take(reader.u32());
    return heap ? regionImageChunks(heap, DMA_CHUNK_BYTES) : undefined;
  }

  async close(): Promise<void> {
    this.#unsubscribe?.();
    await this.#channel.close();
  }

  #begin(kind: number, actor: ActorId): FrameBuilder {
    const out = this.#out.reset();
    out.u8(kind);
    out.u32(actor);
    return out;
  }

  #send(): void {
    const frame = this.#out.frame;
    this.sentBytes += frame.length;
    if (this.#backlog.length === 0 && this.#channel.send(frame)) {
      this.#channel.flush();
      return;
    }
    // Full: keep the message (a copy: the builder is reused) and resend in order as room appears.
    this.#backlog.push(frame.slice());
    this.#channel.flush();
    void this.#drainBacklog();
  }

  async #drainBacklog(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#backlog.length > 0) {
        const next = this.#backlog[0] as Uint8Array;
        if (this.#channel.send(next)) {
          this.#backlog.shift();
          continue;
        }
        this.#channel.flush();
        const waited = await this.#channel.waitForRoom(1_000);
        if (waited === 'closed') return;
      }
      this.#channel.flush();
    } finally {
      this.#draining = false;
    }
  }
}
