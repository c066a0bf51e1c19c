/**
 * Shared vocabulary of the DT protocol logic (iPipe §5 "DT", FaSST §4's transaction protocol):
 * who can be addressed, who owns a lock, what a state machine asks its host to do, and the shard
 * map that places a key on a participant.
 *
 * The protocol roles are pure state machines: `handle(message, nowNs)` returns `DtOutput`s and
 * touches nothing but its own store (and, for the logger, its log storage). Two hosts run them —
 * the actors (actors.ts), which turn outputs into `ctx.send` / `ctx.reply` / `ctx.setTimer`, and
 * the deterministic simulator (dst/), which delivers them over a faulty simulated network — so a
 * protocol bug shows up in either the same way.
 */

import type { DtMessage } from './messages.ts';

/** A party of the protocol, as the logic names it (hosts map these to actors or simulated nodes). */
export type Address =
  | { readonly kind: 'coordinator' }
  | { readonly kind: 'logger' }
  | { readonly kind: 'participant'; readonly shard: number }
  | { readonly kind: 'client'; readonly client: number };

/** The coordinator's address (one shared frozen value). */
export const COORDINATOR: Address = Object.freeze({ kind: 'coordinator' });
/** The logging actor's address. */
export const LOGGER: Address = Object.freeze({ kind: 'logger' });
/** A participant's address. */
export function participantAddress(shard: number): Address {
  return { kind: 'participant', shard };
}
/** A client's address. */
export function clientAddress(client: number): Address {
  return { kind: 'client', client };
}
/** A stable text form of an address ("participant/2"), for maps and logs. */
export function addressKey(address: Address): string {
  switch (address.kind) {
    case 'coordinator':
    case 'logger':
      return address.kind;
    case 'participant':
      return `participant/${address.shard}`;
    case 'client':
      return `client/${address.client}`;
  }
}

/** A transaction's identity: the client that runs it and the client's sequence number. */
export interface TxnId {
  readonly client: number;
  readonly seq: number;
}

/**
 * Who holds a lock: a transaction *attempt*. The epoch is the coordinator incarnation that ran the
 * attempt; a retried request after a coordinator restart is a new attempt with a new epoch.
 */
export interface LockOwner extends TxnId {
  readonly epoch: number;
}

/** "client:seq", the key of a transaction in maps. */
export function txnKey(client: number, seq: number): string {
  return `${client}:${seq}`;
}
/** "client:seq@epoch", the key of an attempt. */
export function ownerKey(owner: LockOwner): string {
  return `${owner.client}:${owner.seq}@${owner.epoch}`;
}
/** True when two owners are the same attempt. */
export function sameOwner(a: LockOwner, b: LockOwner): boolean {
  return a.client === b.client && a.seq === b.seq && a.epoch === b.epoch;
}

/** Something a protocol state machine asks its host to do. */
export type DtOutput =
  | {
      readonly kind: 'send';
      readonly to: Address;
      readonly message: DtMessage;
      /**
       * True when this answers the message being handled. An actor host then uses `ctx.reply`,
       * which reaches whoever asked (and carries the client's origin back along a request chain);
       * false is a new request, sent with `origin: 'self'` so its answer comes back here.
       */
      readonly answer: boolean;
    }
  | {
      readonly kind: 'timer';
      readonly delayNs: number;
      readonly message: DtMessage;
      /** Deliver under the current message's origin (group commit answers its appenders later). */
      readonly keepOrigin: boolean;
    }
  | { readonly kind: 'event'; readonly event: DtEvent };

/** What the protocol reports for observers (tests, the simulator's history, metrics). */
export type DtEvent =
  | {
      /** The coordinator passed the commit point: the record is durable, commits go out. */
      readonly kind: 'committed';
      readonly owner: LockOwner;
      readonly writes: readonly LoggedWrite[];
      readonly recovered: boolean;
    }
  | { readonly kind: 'aborted'; readonly owner: LockOwner; readonly reason: string }
  | {
      /** A commit finished: every participant acknowledged; the client is (or can be) answered. */
      readonly kind: 'finished';
      readonly owner: LockOwner;
    }
  | {
      readonly kind: 'checkpoint';
      readonly epoch: number;
      readonly finished: number;
      readonly keptInTail: number;
    }
  | {
      readonly kind: 'recovered';
      readonly epoch: number;
      readonly pending: number;
      readonly clients: number;
    }
  | { readonly kind: 'ignored'; readonly role: string; readonly type: string; readonly why: string };

/** One write as the coordinator log records it: where, what, and the version it installs. */
export interface LoggedWrite {
  readonly shard: number;
  readonly key: string;
  readonly value: Uint8Array;
  readonly version: number;
}

/** Places keys on shards; the client, the coordinator and the participants must agree on it. */
export interface ShardMap {
  readonly shardCount: number;
  shardOf(key: string): number;
}

/**
 * The default shard map: FNV-1a over the key's UTF-16 code units, modulo the shard count. Fixed by
 * the key alone, so every party computes the same placement without coordination.
 */
export function hashShardMap(shardCount: number): ShardMap {
  if (!(Number.isInteger(shardCount) && shardCount >= 1 && shardCount <= 65_535)) {
    throw new RangeError(`shardCount must be an integer in [1, 65535], got ${shardCount}`);
  }
  return Object.freeze({
    shardCount,
    shardOf(key: string): number {
      let hash = 0x811c9dc5;
      for (let i = 0; i < key.length; i++) {
        hash ^= key.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193);
      }
      return (hash >>> 0) % shardCount;
    },
  });
}

/** The outcome of a transaction as its client sees it. Narrow on `outcome`. */
export type TxnOutcome =
  | { readonly outcome: 'committed' }
  | { readonly outcome: 'aborted'; readonly reason: string }
  | { readonly outcome: 'invalid'; readonly reason: string };

/**
 * One small value a protocol role keeps between messages (its epoch, counters, flags). The logic
 * reads it, computes a new value and sets it — never mutating in place — so the same logic runs over
 * a plain variable (`MemoryCell`, the simulator) or over a DMO (the actors), where only what is set
 * survives the handler.
 */
export interface StateCell<T> {
  get(): T;
  set(value: T): void;
}

/** A StateCell held in a JS variable. */
export class MemoryCell<T> implements StateCell<T> {
  #value: T;
  constructor(initial: T) {
    this.#value = initial;
  }
  get(): T {
    return this.#value;
  }
  set(value: T): void {
    this.#value = value;
  }
}
