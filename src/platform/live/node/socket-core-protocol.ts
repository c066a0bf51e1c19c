/**
 * What the controller and a socket-owning NIC core (`ingress: 'core'`, socket-core.ts) say to
 * each other, and the counters block the core keeps for the controller to read
 * (docs/live-echo-path.md, "A NIC core that owns the socket"). The core receives, checks, runs and
 * answers client requests itself — iPipe's NIC core 0 pulling from its traffic manager (§4.2) —
 * so nothing crosses threads per request; these rings carry only what the core cannot do alone:
 * the host side, the scheduler's decisions and migration.
 *
 *   work (controller → core):
 *     IN_REPLY     [20][actor u32][kind u8: 0 reply, 1 error][client id u32][origin…][len u32][body]
 *                  a host actor's answer (client id 0: the core looks it up by endpoint): the core
 *                  frames it, caches it for dedup, sends it from the node's port (a client's socket
 *                  is connected: only that port may answer)
 *     IN_ARRIVE    [21][actor u32][timer id u32][message id f64][origin…][len u32][message]  a
 *                  message for an actor here (from the host, or an init output); timer id ≠ 0 fires
 *                  that timer; message id ≥ 1 (0 for a timer) names it in the message ledger below
 *     IN_HOST_DONE [22][actor u32][exec ns f64]   a host execution, for the scheduler's pull check
 *     IN_PREPARE   [23][actor u32][to u8][seq u32]  migration phase 1: buffer the actor's requests
 *                  (seq ≥ 1 numbers the controller's request; the answer echoes it)
 *     IN_MOVED     [24][actor u32][to u8]         the state moved: hand over or run the buffer
 *     IN_DEREGISTER[25][actor u32][reason, u16 text]
 *     IN_STOPPING  [26]                           refuse new requests (IPIPE_ERR_NODE_STOPPED)
 *     IN_CLOSE     [27]                           close the socket and end the thread
 *   result (core → controller), one record each:
 *     OUT_FORWARD  [10][actor u32][timer id u32][client id u32][origin…][len u32][message]  for a
 *                  host actor (client id: the request's client, 0 if none; its IN_REPLY carries it)
 *     OUT_DECISION [11][decision, u16 JSON text]  a scheduler decision (rare: JSON is fine)
 *     OUT_PREPARED [12][actor u32][to u8][seq u32]  the scheduler buffers the actor now; nothing
 *                                                 of it runs here (handlers run to completion inline);
 *                                                 seq: the IN_PREPARE's, 0 for the core's own decision
 *     OUT_REFUSED  [13][actor u32][seq u32][reason, u16 text]  a prepare that cannot start (seq as
 *                                                 OUT_PREPARED's: a refusal fails only its own migration)
 *     OUT_MOVED    [14][actor u32][to u8][buffered u32]  IN_MOVED done (buffer forwarded or queued)
 *     OUT_LATENCY  [15][actor u32][seconds f64]   a reply's latency, only while metrics are on
 *
 * Ordering is what migration relies on: the controller passes OUT_FORWARDs to the host channel in
 * ring order, and OUT_PREPARED follows every forward of the actor made before it, so a
 * LINK_MIGRATE sent on OUT_PREPARED reaches the host behind all of them (the channel is FIFO).
 */

import { DROP_REASONS } from '../net/wire.ts';

/** Work ring kinds (controller → core); distinct from core-protocol.ts's WORK_* values. */
export const IN_REPLY = 20;
export const IN_ARRIVE = 21;
export const IN_HOST_DONE = 22;
export const IN_PREPARE = 23;
export const IN_MOVED = 24;
export const IN_DEREGISTER = 25;
export const IN_STOPPING = 26;
export const IN_CLOSE = 27;

/** Result ring kinds (core → controller). */
export const OUT_FORWARD = 10;
export const OUT_DECISION = 11;
export const OUT_PREPARED = 12;
export const OUT_REFUSED = 13;
export const OUT_MOVED = 14;
export const OUT_LATENCY = 15;

/**
 * The message ledger: an Int32Array over a SharedArrayBuffer of MESSAGE_LEDGER_SLOTS pairs, which
 * the controller creates and every core (a replacement too) attaches. The controller numbers each
 * message it sends a core (IN_ARRIVE, timers aside: a replacement re-arms those from the heap;
 * `nextMessageId`, wrapping at 2^32) and keeps a copy until the ledger says the core settled it;
 * message `id` has the pair at `ledgerAt(id)`: [the id, 0 or the forward's number]. The core marks
 * it (`markSettled`) when the message's handler starts (before: a handler the watchdog kills is
 * never run again), when it is dropped or refused, and when it is forwarded to the host (the k-th
 * OUT_FORWARD: k), so that a replacement gets, once, what the killed core took and never settled —
 * messages queued in its scheduler or buffered for a migration, and forwards the controller never
 * read. The id is stored with `Atomics.store` after the forward number, and read with
 * `Atomics.load` before it, so a reader that sees the id sees its forward number.
 */
export const MESSAGE_LEDGER_SLOTS = 65_536;

/** Bytes of the ledger's SharedArrayBuffer. */
export const MESSAGE_LEDGER_BYTES = 2 * MESSAGE_LEDGER_SLOTS * Int32Array.BYTES_PER_ELEMENT;

/** Where message `id`'s pair starts in the ledger. */
export function ledgerAt(id: number): number {
  return 2 * (id & (MESSAGE_LEDGER_SLOTS - 1));
}

/** The id after `last`: 1 … 2^32 − 1, then 1 again (0 means "not numbered"). */
export function nextMessageId(last: number): number {
  const next = (last + 1) >>> 0;
  return next === 0 ? 1 : next;
}

/**
 * `a − b` for message ids and forward numbers, which wrap at 2^32: > 0 when `a` came after `b`
 * (meaningful while they are within 2^31 of each other).
 */
export function sequenceDelta(a: number, b: number): number {
  return (a - b) | 0;
}

/**
 * The core's mark: message `id` is done with here (`forwardNumber` 0: run or refused; else the
 * number of its OUT_FORWARD). A slot a newer message already owns is left alone: the controller let
 * this one's copy go when it numbered that one (its window is MESSAGE_LEDGER_SLOTS), and writing
 * over the newer mark would make that message look unsettled — a replacement would run it again.
 */
export function markSettled(ledger: Int32Array, id: number, forwardNumber: number): void {
  const at = ledgerAt(id);
  const owner = Atomics.load(ledger, at);
  if (owner !== 0 && sequenceDelta(owner, id) > 0) return;
  // A forward number that wraps to 0 would read as "run": 1 only makes the controller wait longer.
  ledger[at + 1] = forwardNumber === 0 ? 0 : forwardNumber | 0 || 1;
  Atomics.store(ledger, at, id | 0);
}

/**
 * The controller's reading: whether message `id` was run, refused, or forwarded in a record it
 * read (`forwardsRead`: how many it read from the core that forwarded it).
 */
export function isSettled(ledger: Int32Array, id: number, forwardsRead: number): boolean {
  const at = ledgerAt(id);
  if (Atomics.load(ledger, at) !== (id | 0)) return false;
  const forwardNumber = ledger[at + 1] as number;
  return forwardNumber === 0 || sequenceDelta(forwardNumber, forwardsRead) <= 0;
}

/** Domains on the wire of these rings. */
export const TO_NIC = 0;
export const TO_HOST = 1;

/**
 * The counters block: a Float64Array over a SharedArrayBuffer, written by the core only (plain
 * stores: each slot has one writer, the controller reads whatever value is there — a count that
 * lags by a request is fine for stats) except METRICS_ON, which only the controller writes.
 */
export const SLOT_REQUESTS = 0;
export const SLOT_REPLIES = 1;
export const SLOT_ERROR_REPLIES = 2;
export const SLOT_DUPLICATES = 3;
export const SLOT_HANDLER_NS = 4;
/** Requests the core's scheduler holds (queued, buffered), refreshed by its management tick. */
export const SLOT_HELD = 5;
/** Wall-clock ms when the running handler started; 0 between handlers (the watchdog reads it). */
export const SLOT_RUNNING_SINCE_MS = 6;
/** The running handler's actor, and the client request it serves (0s when not a client's). */
export const SLOT_RUNNING_ACTOR = 7;
export const SLOT_RUNNING_REQUEST = 8;
export const SLOT_RUNNING_CLIENT = 9;
/** IPv4 address (as a u32) and port the running request came from. */
export const SLOT_RUNNING_ADDRESS = 10;
export const SLOT_RUNNING_PORT = 11;
/** 1 while the controller records reply latencies (OUT_LATENCY); the core only reads it. */
export const SLOT_METRICS_ON = 12;
/** NIC cores in the DRR role (0 or 1: core 0 is the only one), refreshed by the management tick. */
export const SLOT_DRR_CORES = 13;
/**
 * Work items the core has taken from its ring, counted after each took effect (the controller
 * zeroes it before a replacement core starts): what a killed core never read is re-posted.
 */
export const SLOT_WORK_CONSUMED = 14;
/**
 * A seqlock over the RUNNING_* slots (which are plain Float64 stores): odd while the core writes
 * them at a handler's start, even otherwise, +2 at each handler's end. The watchdog reads it before
 * and after reading them and acts only on an even, unchanged value; after killing the thread it
 * deregisters the actor only if the value is still the one it read (the same handler ran on).
 */
export const SLOT_RUNNING_GENERATION = 15;
/** Requests the core wrote to the controller as OUT_FORWARD (for the host), ever. */
export const SLOT_FORWARDS = 16;
/** First slot of the drop counters, one per SOCKET_CORE_DROP_REASONS entry. */
export const SLOT_DROPS = 17;

/**
 * Reasons the core drops a datagram or request for, each a counter slot. A receiver's reasons
 * (net/wire.ts: the wire's, and a frame going the wrong way) and the node's own (the same names
 * NicController counts, so /stats and /metrics read alike); a reason not in the list is counted as
 * `other` rather than lost.
 */
export const SOCKET_CORE_DROP_REASONS = Object.freeze([
  ...DROP_REASONS,
  'peer-unknown',
  'unknown-actor',
  'deregistered',
  'ingress-full',
  'handler-failed',
  'decode',
  'socket-closed',
  'stopping',
  'reply-expired',
  'other',
] as const);

export type SocketCoreDropReason = (typeof SOCKET_CORE_DROP_REASONS)[number];

/** First slot of the per-actor executed counters (one per catalog entry, in catalog order). */
export const SLOT_EXECUTED = SLOT_DROPS + SOCKET_CORE_DROP_REASONS.length;

/** Slots the block needs for a catalog of `actors` entries. */
export function socketCoreSlots(actors: number): number {
  return SLOT_EXECUTED + actors;
}

/** The slot index of `reason` (`other` for one not listed). */
export function dropSlot(reason: string): number {
  const at = (SOCKET_CORE_DROP_REASONS as readonly string[]).indexOf(reason);
  return SLOT_DROPS + (at >= 0 ? at : SOCKET_CORE_DROP_REASONS.length - 1);
}

/** An IPv4 literal as a u32 (0 for anything else), so it fits a counters slot. */
export function ipv4ToU32(address: string): number {
  let value = 0;
  let part = 0;
  let parts = 0;
  let digits = 0;
  for (let i = 0; i <= address.length; i++) {
    const code = i < address.length ? address.charCodeAt(i) : 46;
    if (code === 46) {
      if (digits === 0 || part > 255) return 0;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else if (code >= 48 && code <= 57) {
      part = part * 10 + (code - 48);
      digits++;
    } else return 0;
  }
  return parts === 4 ? value : 0;
}

/** The dotted form of a u32 from `ipv4ToU32`. */
export function u32ToIpv4(value: number): string {
  return `${(value >>> 24) & 255}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}
