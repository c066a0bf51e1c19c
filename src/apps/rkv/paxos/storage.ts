/**
 * Durability for a Paxos acceptor (Lamport, "Paxos Made Simple" §2.3: "an acceptor must remember
 * [its highest promise and its accepted proposals] even if it fails and then restarts"), plus the
 * snapshot that lets the log be truncated (paper, "The applications": RKV truncates its log after a
 * snapshot so it does not grow forever).
 *
 * The contract the replica relies on:
 *   1. `savePromise` / `saveAccepted` / `saveSnapshot` may only buffer.
 *   2. `sync()` makes everything buffered durable, in the order it was saved, before returning.
 *   3. The replica calls `sync()` at the end of every `handle` that saved anything, i.e. before the
 *      host can send the promise/accepted messages that depend on those records. A crash therefore
 *      loses only state nobody outside was told about.
 *   4. `load()` returns what a restarted replica must assume: the last durable promise, the last
 *      durable snapshot, and for each slot above it the last durable accepted (ballot, command).
 *
 * A storage may make a `sync` partially durable when the machine dies inside it (a torn write);
 * then `sync` never returns and the replica's outputs never leave. Recovery must accept any prefix
 * of the saved records, which is why records are self-contained (no record depends on a later one).
 */

import type { Ballot, LogCommand, Snapshot } from './types.ts';

/** An accepted proposal as stored. */
export interface DurableAccepted<C> {
  readonly slot: number;
  readonly ballot: Ballot;
  readonly command: LogCommand<C>;
}

/** What a replica restarts from. */
export interface PersistedState<C, R> {
  readonly promised: Ballot;
  readonly snapshot: Snapshot<R> | null;
  /** Slots above the snapshot's, ascending, one (the latest) per slot. */
  readonly accepted: readonly DurableAccepted<C>[];
}

/** A replica's durable memory. Implementations: memory (simulation, can crash), file (live). */
export interface PaxosStorage<C, R> {
  /** The durable state (call once, when the replica starts). */
  load(): PersistedState<C, R>;
  /** Buffers "promised `ballot`" (it replaces any earlier promise). */
  savePromise(ballot: Ballot): void;
  /** Buffers "accepted `command` at `ballot` for `slot`" (it replaces that slot's earlier one). */
  saveAccepted(slot: number, ballot: Ballot, command: LogCommand<C>): void;
  /** Buffers a snapshot; accepted records at or below its slot may be discarded once it is durable. */
  saveSnapshot(snapshot: Snapshot<R>): void;
  /** Makes everything buffered durable, in order. */
  sync(): void;
}
