/**
 * Group commit for a Paxos replica's file log on the live cluster. `PaxosReplica.handle` calls
 * `sync()` before it returns, and the host may send what `handle` returned only after that —
 * storage.ts, contract 3. With one fsync per `handle`, a leader serving N concurrent clients pays N
 * fsyncs per round. The replica host instead:
 *
 *   1. runs every input that arrived in one event-loop turn through `handle` (this class's
 *      `sync()` only notes that something is pending),
 *   2. holds back every message and reply those calls returned,
 *   3. calls `commit()` once — one append + fsync of everything saved in the turn — and only then
 *      sends and answers.
 *
 * So nothing leaves the process before the records it depends on are durable (the contract's
 * intent), at one fsync per turn instead of one per input.
 */

import type { FilePaxosStorage } from '../paxos/file-storage.ts';
import type { PaxosStorage, PersistedState } from '../paxos/storage.ts';
import type { Ballot, LogCommand, Snapshot } from '../paxos/types.ts';

/** A `PaxosStorage` whose `sync` is deferred to the host's `commit`. */
export class GroupCommitStorage<C, R> implements PaxosStorage<C, R> {
  readonly #inner: FilePaxosStorage<C, R>;
  #pending = false;
  /** fsyncs done (for INFO: compare with the number of inputs handled). */
  commits = 0;

  constructor(inner: FilePaxosStorage<C, R>) {
    this.#inner = inner;
  }

  get inner(): FilePaxosStorage<C, R> {
    return this.#inner;
  }

  load(): PersistedState<C, R> {
    return this.#inner.load();
  }

  // The file storage only buffers on save*, so forwarding at once keeps the records' order.
  savePromise(ballot: Ballot): void {
    this.#inner.savePromise(ballot);
  }

  saveAccepted(slot: number, ballot: Ballot, command: LogCommand<C>): void {
    this.#inner.saveAccepted(slot, ballot, command);
  }

  saveSnapshot(snapshot: Snapshot<R>): void {
    this.#inner.saveSnapshot(snapshot);
  }

  /** Called by the replica at the end of a `handle`: deferred to `commit`. */
  sync(): void {
    this.#pending = true;
  }

  /** Whether records wait for `commit`. */
  get pending(): boolean {
    return this.#pending;
  }

  /** Makes everything saved so far durable (one append + fsync). */
  commit(): void {
    if (!this.#pending) return;
    this.#pending = false;
    this.#inner.sync();
    this.commits++;
  }

  /** Closes the file; records not committed are dropped (as a crash would drop them). */
  close(): void {
    this.#inner.close();
  }
}
