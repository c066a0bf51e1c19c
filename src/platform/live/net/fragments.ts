/**
 * Peer messages bigger than one datagram (iPipe §3: actors on different nodes talk through
 * `ctx.send`; our nodes carry those messages as UDP `PEER` frames). A node caps a datagram at its
 * `maxFrameBytes`, but some actor messages are legitimately bigger — a Paxos promise reports every
 * accepted entry above the candidate's applied point, and with 8 KiB values a handful of them is
 * already more than the 65 000-byte datagram RKV's nodes use. Such a message is cut by the sending
 * node into fragments (`fragmentMessage`: PEER|FRAGMENT frames, wire.ts "Fragments") and rebuilt by
 * the receiving node (`Reassembler`) before it enters the scheduler, so actors never see them.
 *
 *   sender: message (origin + bytes) ─▶ count = ⌈total / piece⌉ frames, piece i = [i·c, (i+1)·c)
 *   receiver: frame ─▶ CRC (wire.ts) ─▶ header checks ─▶ partial (peer, message id) ─▶ all pieces?
 *             ─▶ message CRC ─▶ the message, exactly as sent — or nothing
 *
 * Loss: a lost fragment loses the whole message (its partial expires), as a lost datagram loses a
 * small message; the protocols above already retransmit. Duplicates and reordering are harmless:
 * a piece already held is ignored, and a piece's place follows from its index. A wrong message is
 * never delivered: every datagram is checksummed (wire.ts), every fragment must agree with the
 * partial it joins on count, length, message CRC, target and client (else both are dropped), and
 * the rebuilt message must match the CRC-32C the sender computed over the whole of it — which
 * also covers a message id reused by a restarted sender.
 *
 * Memory is bounded: a partial reserves its whole message on its first fragment, and the bytes
 * reserved are capped per sending peer and in total; a new message that would pass a cap evicts the
 * oldest partials (of that peer, then of anyone) first — a partial that lost a fragment would
 * otherwise hold its room until it expires, and new messages are the ones a protocol is waiting
 * for. A message larger than a cap on its own, or than `maxMessageBytes`, is refused. Partials
 * expire `expireMs` after their first fragment. Each peer's last FINISHED_MEMORY message ids
 * (rebuilt or given up) are remembered, so late fragments of them are dropped at once rather than
 * starting a partial that could only expire. Every fragment discarded is counted by reason
 * (`onDrop`), for the node's drop counters (/metrics).
 */

import { crc32c } from '../../../dmo/crc32c.ts';
import { ConfigError, EncodeError } from '../../../errors.ts';
import { HEADER_BYTES, readU16, readU32, sealFrame, writeU16, writeU32 } from './wire.ts';

/** Bytes of the fragment header at the start of a fragment's payload (wire.ts "Fragments"). */
export const FRAGMENT_HEADER_BYTES = 12;
/** Most fragments one message may be cut into (the header's u16 count). */
export const MAX_FRAGMENTS = 0xffff;
/** Message ids of each peer remembered as finished (rebuilt or given up). */
const FINISHED_MEMORY = 64;

/**
 * Why a fragment was discarded. Stable words (the node's drop counters print them); each counts
 * fragments (datagrams), like every other drop reason.
 *   fragment-malformed     a header that cannot be right: index ≥ count, count or length 0, a piece
 *                          of the wrong length for its index
 *   fragment-too-large     the message is above the largest message or a memory cap on its own
 *   fragment-mismatch      disagrees with the partial message of the same id (count, length,
 *                          message CRC, target, client): the fragment and the partial are dropped
 *   fragment-duplicate     this piece of the message is already held
 *   fragment-late          a fragment of a message already rebuilt or given up
 *   fragment-evicted       the pieces of a partial message pushed out to make room for a newer one
 *   fragment-expired       the pieces of a partial message that did not complete within expireMs
 *   fragment-bad-checksum  every piece arrived but the rebuilt message fails its CRC
 */
export type FragmentDropReason =
  | 'fragment-malformed'
  | 'fragment-too-large'
  | 'fragment-mismatch'
  | 'fragment-duplicate'
  | 'fragment-late'
  | 'fragment-evicted'
  | 'fragment-expired'
  | 'fragment-bad-checksum';

export const FRAGMENT_DROP_REASONS: readonly FragmentDropReason[] = Object.freeze([
  'fragment-malformed',
  'fragment-too-large',
  'fragment-mismatch',
  'fragment-duplicate',
  'fragment-late',
  'fragment-evicted',
  'fragment-expired',
  'fragment-bad-checksum',
]);

/** The header fields every fragment of one message repeats. */
export interface FragmentedMessageFields {
  readonly targetActorId: number;
  readonly clientId: number;
  /** Unique per sending node for as long as a partial may live (a u32). */
  readonly messageId: number;
}

/** Most message bytes one fragment carries under `maxFrameBytes`. */
export function maxPieceBytes(maxFrameBytes: number): number {
  return maxFrameBytes - HEADER_BYTES - FRAGMENT_HEADER_BYTES;
}

/** Fragments `totalBytes` of message take under `maxFrameBytes`. */
export function fragmentCount(totalBytes: number, maxFrameBytes: number): number {
  return Math.ceil(totalBytes / maxPieceBytes(maxFrameBytes));
}

/**
 * Cuts `message` (a peer payload: origin, then the message's bytes) into sealed PEER|FRAGMENT
 * frames of at most `maxFrameBytes` each, in index order. The pieces are as even as the count
 * allows (c = ⌈total / count⌉), so the receiver can check each piece's length from its index.
 * Throws EncodeError for an empty message, one that needs more than MAX_FRAGMENTS fragments, or a
 * `maxFrameBytes` with no room for a piece.
 */
export function fragmentMessage(
  fields: FragmentedMessageFields,
  message: Uint8Array,
  maxFrameBytes: number,
): Uint8Array[] {
  const total = message.length;
  const room = maxPieceBytes(maxFrameBytes);
  if (total === 0 || room < 1) {
    throw new EncodeError(
      `cannot fragment a ${total}-byte message into ${maxFrameBytes}-byte frames (${room} bytes of room each)`,
    );
  }
  const count = Math.ceil(total / room);
  if (count > MAX_FRAGMENTS) {
    throw new EncodeError(
      `a ${total}-byte message needs ${count} fragments of ${maxFrameBytes}-byte frames, more than ${MAX_FRAGMENTS}`,
    );
  }
  const chunk = Math.ceil(total / count);
  const crc = crc32c(message);
  const frames: Uint8Array[] = [];
  for (let index = 0; index < count; index++) {
    const start = index * chunk;
    const piece = message.subarray(start, Math.min(total, start + chunk));
    const payloadLength = FRAGMENT_HEADER_BYTES + piece.length;
    const frame = new Uint8Array(HEADER_BYTES + payloadLength);
    writeU16(frame, HEADER_BYTES, index);
    writeU16(frame, HEADER_BYTES + 2, count);
    writeU32(frame, HEADER_BYTES + 4, total);
    writeU32(frame, HEADER_BYTES + 8, crc);
    frame.set(piece, HEADER_BYTES + FRAGMENT_HEADER_BYTES);
    sealFrame(
      frame,
      {
        kind: 'fragment',
        targetActorId: fields.targetActorId,
        requestId: fields.messageId,
        clientId: fields.clientId,
      },
      payloadLength,
      0,
      maxFrameBytes,
    );
    frames.push(frame);
  }
  return frames;
}

/** The reassembler's limits. */
export interface ReassemblyLimits {
  /** Largest message rebuilt (bytes); bigger ones are refused at their first fragment. */
  readonly maxMessageBytes: number;
  /** Bytes all partial messages of one sending peer may reserve together. */
  readonly maxBytesPerPeer: number;
  /** Bytes all partial messages may reserve together. */
  readonly maxBytesTotal: number;
  /** A partial message is given up this long after its first fragment arrived (ms). */
  readonly expireMs: number;
}

/** A message rebuilt from its fragments. `message` is a fresh buffer the caller owns. */
export interface ReassembledMessage {
  readonly targetActorId: number;
  readonly clientId: number;
  readonly message: Uint8Array;
}

interface PartialMessage {
  readonly key: string;
  readonly peer: string;
  readonly messageId: number;
  readonly targetActorId: number;
  readonly clientId: number;
  readonly count: number;
  readonly total: number;
  readonly crc: number;
  readonly chunk: number;
  readonly bytes: Uint8Array;
  /** 1 at each index already held. */
  readonly held: Uint8Array;
  pieces: number;
  readonly firstMs: number;
}

/** A peer's most recently finished message ids (a small ring; linear search is cheap at 64). */
interface FinishedIds {
  readonly ids: Float64Array;
  next: number;
}

/**
 * Rebuilds fragmented peer messages (see the file header). One per node; `peer` names the sending
 * node (its endpoint key). The caller checks the datagram's CRC and that it comes from a known
 * peer first (readFrameInto, the node's peer list), so a peer key is never made up by a stranger.
 */
export class Reassembler {
  readonly #limits: ReassemblyLimits;
  readonly #onDrop: (reason: FragmentDropReason, fragments: number) => void;
  /** In arrival order of their first fragment: the first is the oldest. */
  readonly #partials = new Map<string, PartialMessage>();
  readonly #bytesByPeer = new Map<string, number>();
  readonly #finished = new Map<string, FinishedIds>();
  #bytesHeld = 0;
  /** Messages rebuilt and handed out (a counter). */
  messagesRebuilt = 0;

  constructor(limits: ReassemblyLimits, onDrop: (reason: FragmentDropReason, fragments: number) => void) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isFinite(value) || value <= 0)
        throw new ConfigError(
          `reassembly.${name}`,
          `must be a positive number, got ${value}: a node derives these limits from its ringBytes and its peers; check those options (or the limits given to the Reassembler)`,
        );
    }
    this.#limits = limits;
    this.#onDrop = onDrop;
  }

  /** Bytes reserved by partial messages, of all peers. */
  get bytesHeld(): number {
    return this.#bytesHeld;
  }

  /** Bytes reserved by `peer`'s partial messages. */
  bytesHeldBy(peer: string): number {
    return this.#bytesByPeer.get(peer) ?? 0;
  }

  /** Partial messages held. */
  get partialMessages(): number {
    return this.#partials.size;
  }

  /**
   * Takes one fragment from `peer`: `payload` is the frame's payload (fragment header, piece).
   * Returns the whole message when this fragment completes it, else undefined (held, or discarded
   * and counted). Never throws for any payload bytes.
   */
  accept(
    peer: string,
    targetActorId: number,
    clientId: number,
    messageId: number,
    payload: Uint8Array,
    nowMs: number,
  ): ReassembledMessage | undefined {
    if (payload.length < FRAGMENT_HEADER_BYTES) return this.#drop('fragment-malformed', 1);
    const index = readU16(payload, 0);
    const count = readU16(payload, 2);
    const total = readU32(payload, 4);
    const crc = readU32(payload, 8);
    if (count === 0 || total === 0 || index >= count) return this.#drop('fragment-malformed', 1);
    const chunk = Math.ceil(total / count);
    // The sender never makes an empty piece: with c = ⌈total / count⌉, the last starts below total.
    if ((count - 1) * chunk >= total) return this.#drop('fragment-malformed', 1);
    const pieceBytes = payload.length - FRAGMENT_HEADER_BYTES;
    if (pieceBytes !== Math.min(chunk, total - index * chunk)) return this.#drop('fragment-malformed', 1);
    const limits = this.#limits;
    if (total > limits.maxMessageBytes || total > limits.maxBytesPerPeer || total > limits.maxBytesTotal)
      return this.#drop('fragment-too-large', 1);
    if (this.#isFinished(peer, messageId)) return this.#drop('fragment-late', 1);
    const key = `${peer}#${messageId}`;
    let partial = this.#partials.get(key);
    if (partial === undefined) {
      this.#makeRoom(peer, total);
      partial = {
        key,
        peer,
        messageId,
        targetActorId,
        clientId,
        count,
        total,
        crc,
        chunk,
        bytes: new Uint8Array(total),
        held: new Uint8Array(count),
        pieces: 0,
        firstMs: nowMs,
      };
      this.#partials.set(key, partial);
      this.#bytesByPeer.set(peer, this.bytesHeldBy(peer) + total);
      this.#bytesHeld += total;
    } else if (
      partial.count !== count ||
      partial.total !== total ||
      partial.crc !== crc ||
      partial.targetActorId !== targetActorId ||
      partial.clientId !== clientId
    ) {
      this.#giveUp(partial, 'fragment-mismatch');
      return this.#drop('fragment-mismatch', 1);
    }
    if (partial.held[index] === 1) return this.#drop('fragment-duplicate', 1);
    partial.bytes.set(payload.subarray(FRAGMENT_HEADER_BYTES), index * chunk);
    partial.held[index] = 1;
    partial.pieces++;
    if (partial.pieces < count) return undefined;
    this.#release(partial);
    if (crc32c(partial.bytes) !== crc) return this.#drop('fragment-bad-checksum', count);
    this.messagesRebuilt++;
    return { targetActorId, clientId, message: partial.bytes };
  }

  /** Gives up the partial messages whose first fragment arrived `expireMs` or more before `nowMs`. */
  expire(nowMs: number): void {
    if (this.#partials.size === 0) return;
    const cutoff = nowMs - this.#limits.expireMs;
    for (const partial of this.#partials.values()) {
      // Arrival order: the first one not yet due means none after it is.
      if (partial.firstMs > cutoff) return;
      this.#giveUp(partial, 'fragment-expired');
    }
  }

  /** Evicts the oldest partials until `total` more bytes fit `peer`'s cap and the overall cap. */
  #makeRoom(peer: string, total: number): void {
    const limits = this.#limits;
    if (this.bytesHeldBy(peer) + total > limits.maxBytesPerPeer) {
      for (const partial of this.#partials.values()) {
        if (this.bytesHeldBy(peer) + total <= limits.maxBytesPerPeer) break;
        if (partial.peer === peer) this.#giveUp(partial, 'fragment-evicted');
      }
    }
    for (const partial of this.#partials.values()) {
      if (this.#bytesHeld + total <= limits.maxBytesTotal) break;
      this.#giveUp(partial, 'fragment-evicted');
    }
  }

  #giveUp(partial: PartialMessage, reason: FragmentDropReason): void {
    this.#release(partial);
    this.#onDrop(reason, partial.pieces);
  }

  /** Forgets a partial (rebuilt or given up) and remembers its id as finished. */
  #release(partial: PartialMessage): void {
    this.#partials.delete(partial.key);
    const left = this.bytesHeldBy(partial.peer) - partial.total;
    if (left > 0) this.#bytesByPeer.set(partial.peer, left);
    else this.#bytesByPeer.delete(partial.peer);
    this.#bytesHeld -= partial.total;
    let finished = this.#finished.get(partial.peer);
    if (finished === undefined) {
      finished = { ids: new Float64Array(FINISHED_MEMORY).fill(-1), next: 0 };
      this.#finished.set(partial.peer, finished);
    }
    finished.ids[finished.next] = partial.messageId;
    finished.next = (finished.next + 1) % FINISHED_MEMORY;
  }

  #isFinished(peer: string, messageId: number): boolean {
    const finished = this.#finished.get(peer);
    return finished?.ids.includes(messageId) === true;
  }

  #drop(reason: FragmentDropReason, fragments: number): undefined {
    this.#onDrop(reason, fragments);
    return undefined;
  }
}
