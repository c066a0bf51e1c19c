/**
 * Per-link in-order delivery for RTA's stateful stages (iPipe §3 "Actors" and "Actor migration";
 * §5 "The applications": RTA).
 *
 * Why. A ranker may only hand on a window once every counter has sent all of that window's counts,
 * and a counter says so with a `progress` message sent after those counts. That needs each
 * counter's messages to be applied in the order they were sent. The runtime keeps a mailbox in
 * order, but not a *link* across migrations: when a sender or its receiver moves between NIC and
 * host, a message sent before the move can still be crossing PCIe (or waiting in a migration
 * buffer) when one sent after it takes the new, shorter path — the simulator showed counts
 * arriving after the progress that covered them. So, as TCP does over IP, every message on a
 * counter → ranker or ranker → aggregator link carries a sequence number, and the receiver
 * applies a link's messages strictly in sequence, holding early arrivals in its DMOs until the gap
 * fills. A copy of a message already applied (seq below the next expected) is dropped and counted.
 *
 * DMO layout (each side keeps its half in its own heap, so it migrates with the actor):
 *   sender:   DmoNumberMap receiver index → next sequence number to send
 *   receiver: DmoNumberMap sender index → next sequence number to apply
 *             DmoNumberMap sender · 2^32 + seq → object holding the held message, encoded with the
 *             receiver's own codec behind a u32 length
 */

import type { MessageCodec } from '../../actor/index.ts';
import { DmoNumberMap } from '../../dmo/index.ts';
import type { DmoHeap } from '../../dmo/types.ts';
import type { ObjectId } from '../../ids.ts';

const SEQ_SPAN = 2 ** 32;

/** The sending half: hands out the next sequence number per receiver. */
export class LinkSequencer {
  readonly #next: DmoNumberMap;

  private constructor(next: DmoNumberMap) {
    this.#next = next;
  }

  static create(heap: DmoHeap): LinkSequencer {
    return new LinkSequencer(DmoNumberMap.create(heap));
  }

  static open(heap: DmoHeap, rootId: ObjectId): LinkSequencer {
    return new LinkSequencer(DmoNumberMap.open(heap, rootId));
  }

  get rootId(): ObjectId {
    return this.#next.rootId;
  }

  /** The sequence number of the next message to `receiver` (0, 1, 2, ... per receiver). */
  take(receiver: number): number {
    const seq = this.#next.get(receiver) ?? 0;
    this.#next.set(receiver, (seq + 1) % SEQ_SPAN);
    return seq;
  }
}

/** What `accept` did with one message. */
export interface AcceptOutcome {
  /** Messages applied now: this one and any held ones it released (0 when it was held or a copy). */
  readonly applied: number;
  readonly held: boolean;
  readonly duplicate: boolean;
}

/** The receiving half: applies each sender's messages in sequence order. */
export class InOrderInbox<M> {
  readonly #heap: DmoHeap;
  readonly #expected: DmoNumberMap;
  readonly #held: DmoNumberMap;
  readonly #codec: MessageCodec<M>;

  private constructor(heap: DmoHeap, expected: DmoNumberMap, held: DmoNumberMap, codec: MessageCodec<M>) {
    this.#heap = heap;
    this.#expected = expected;
    this.#held = held;
    this.#codec = codec;
  }

  /** A new inbox; keep both root ids (`expectedRootId`, `heldRootId`) to re-open it. */
  static create<M>(heap: DmoHeap, codec: MessageCodec<M>): InOrderInbox<M> {
    return new InOrderInbox(heap, DmoNumberMap.create(heap), DmoNumberMap.create(heap), codec);
  }

  static open<M>(
    heap: DmoHeap,
    expectedRootId: ObjectId,
    heldRootId: ObjectId,
    codec: MessageCodec<M>,
  ): InOrderInbox<M> {
    return new InOrderInbox(
      heap,
      DmoNumberMap.open(heap, expectedRootId),
      DmoNumberMap.open(heap, heldRootId),
      codec,
    );
  }

  get expectedRootId(): ObjectId {
    return this.#expected.rootId;
  }

  get heldRootId(): ObjectId {
    return this.#held.rootId;
  }

  /** Messages held waiting for an earlier one. */
  get heldCount(): number {
    return this.#held.size;
  }

  /**
   * Takes message `seq` from `sender`: applies it (and then every held successor) when it is the
   * next expected, holds it when it is early, drops it when it is a copy of one already applied.
   */
  accept(sender: number, seq: number, message: M, apply: (message: M) => void): AcceptOutcome {
    let expected = this.#expected.get(sender) ?? 0;
    if (seq !== expected) {
      // Distance forward from expected, modulo the sequence space: under half is early, else a copy.
      const ahead = (seq - expected + SEQ_SPAN) % SEQ_SPAN;
      if (ahead >= SEQ_SPAN / 2) return { applied: 0, held: false, duplicate: true };
      const key = sender * SEQ_SPAN + seq;
      if (this.#held.has(key)) return { applied: 0, held: false, duplicate: true };
      const bytes = this.#codec.encode(message);
      const id = this.#heap.allocate(4 + bytes.length);
      this.#heap.writeU32(id, 0, bytes.length);
      this.#heap.write(id, 4, bytes);
      this.#held.set(key, id);
      return { applied: 0, held: true, duplicate: false };
    }
    // The next expected number is stored before each apply, so a message is never applied twice.
    let applied = 0;
    let next: M | undefined = message;
    while (next !== undefined) {
      expected = (expected + 1) % SEQ_SPAN;
      this.#expected.set(sender, expected);
      apply(next);
      applied++;
      const key = sender * SEQ_SPAN + expected;
      const id = this.#held.get(key) as ObjectId | undefined;
      next = undefined;
      if (id !== undefined) {
        next = this.#codec.decode(this.#heap.bytes(id), 4, this.#heap.readU32(id, 0));
        this.#held.delete(key);
        this.#heap.free(id);
      }
    }
    return { applied, held: false, duplicate: false };
  }
}
