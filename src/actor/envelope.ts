/**
 * A message in flight and where it came from (iPipe §3 "Actors": actors communicate by async
 * messages). In the paper's RKV the consensus actor hands a committed write to the memtable actor
 * and the memtable actor answers the client directly, so a message must remember its *origin* —
 * the party waiting for an answer — across any number of actor hops.
 *
 * Origins are plain data (no callbacks, no sockets), so an envelope can sit in a mailbox, cross the
 * PCIe ring, wait in migration's buffer and be forwarded with a rewritten target, unchanged.
 *
 * Propagation rule, applied by every runtime through `originForSend`:
 *
 *   client ──req #7──▶ A ──send (inherit)──▶ B ──reply──▶ client (#7)     the default
 *   client ──req #7──▶ A ──send (self)────▶ B ──reply──▶ A, whose handler sees origin = client #7
 *                                                         again, so A can reply to the client
 *   timer / init ──▶ A ──send (inherit)──▶ B             origin none: B cannot reply
 */

import type { ActorId } from '../ids.ts';

/** A network address and port: where a client is answered, or where an actor can be reached. */
export interface NetworkEndpoint {
  /** IP address (live) or a simulated host name (sim). */
  readonly address: string;
  readonly port: number;
}

/** No one waits for an answer (timer deliveries, sends made during init, `origin: 'none'`). */
export interface NoOrigin {
  readonly kind: 'none';
}

/** An external client waits; `reply` sends a datagram to `endpoint` carrying `requestId`. */
export interface ClientOrigin {
  readonly kind: 'client';
  readonly endpoint: NetworkEndpoint;
  /** The client's own request id, echoed in the reply so it can match answers to requests. */
  readonly requestId: number;
}

/**
 * An actor waits (it sent with `origin: 'self'`); `reply` delivers the answer to that actor as an
 * ordinary message, and while it handles that message its origin is `parent` — the origin it had
 * when it asked — so a request/response between actors does not lose the client behind it.
 */
export interface ActorOrigin {
  readonly kind: 'actor';
  readonly actor: ActorId;
  /** Allocated by the asking actor's runtime; lets the runtime trace a reply to its request. */
  readonly requestId: number;
  readonly parent: Origin;
}

/** Who is waiting for an answer to a message. Narrow on `kind`. */
export type Origin = NoOrigin | ClientOrigin | ActorOrigin;

/** The shared "no origin" value (frozen; compare by `kind`, not identity). */
export const NO_ORIGIN: NoOrigin = Object.freeze({ kind: 'none' });

/** How a send chooses the origin of the message it sends (see the header diagram). */
export type SendOriginMode = 'inherit' | 'self' | 'none';

/**
 * The origin of a message an actor sends: the current message's origin (`inherit`, the default,
 * allocation-free), the sender itself (`self`, with `requestId` from the sender's runtime), or none.
 */
export function originForSend(
  current: Origin,
  mode: SendOriginMode,
  sender: ActorId,
  requestId: number,
): Origin {
  switch (mode) {
    case 'inherit':
      return current;
    case 'none':
      return NO_ORIGIN;
    case 'self':
      return Object.freeze({ kind: 'actor', actor: sender, requestId, parent: current });
  }
}

/** The origin a reply is handled under when it reaches the actor that asked: what it had when it asked. */
export function originOfReply(answered: ActorOrigin): Origin {
  return answered.parent;
}

/**
 * One message in flight: what the runtime and the scheduler carry between a receive and an
 * exec. `payload` is the encoded message (bytes) on rings and wires, or the decoded message when
 * the sim hands it over within one process; `sizeBytes` is its encoded size either way, because
 * that is what the channel and the cost model charge for.
 *
 * Readonly here; a runtime that pools envelopes on its hot path may implement it with a mutable class.
 */
export interface Envelope<P = Uint8Array> {
  /** The actor that will handle it. Rewritten by migration's phase 4 when it is forwarded. */
  readonly target: ActorId;
  readonly origin: Origin;
  /** Encoded size of the message in bytes. */
  readonly sizeBytes: number;
  /** When it entered its current queue, ns on the platform clock (queueing delay = exec start − this). */
  readonly enqueuedAtNs: number;
  readonly payload: P;
}
