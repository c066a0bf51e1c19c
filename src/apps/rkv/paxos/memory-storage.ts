/**
 * In-memory `PaxosStorage` for deterministic simulation: what was synced survives a simulated
 * crash, what was only buffered does not (storage.ts, contract 1–4). A simulation can also arm a
 * crash *inside* the next `sync()`: a chosen prefix of the buffered records reaches "disk", the
 * rest is lost, and `sync` throws `PaxosSimulatedCrash` so the replica dies before its outputs
 * leave — the torn-fsync case a real disk can produce.
 *
 * The object outlives the replica that uses it: the simulator keeps it across crash/restart and
 * hands it to the replica it restarts, exactly as a disk outlives a process.
 */

import { PaxosSimulatedCrash } from './errors.ts';
import type { DurableAccepted, PaxosStorage, PersistedState } from './storage.ts';
import { type Ballot, type LogCommand, NO_BALLOT, type Snapshot } from './types.ts';

type PendingRecord<C, R> =
  | { readonly kind: 'promise'; readonly ballot: Ballot }
  | { readonly kind: 'accepted'; readonly entry: DurableAccepted<C> }
  | { readonly kind: 'snapshot'; readonly snapshot: Snapshot<R> };

export class MemoryPaxosStorage<C, R> implements PaxosStorage<C, R> {
  #promised: Ballot = NO_BALLOT;
  #snapshot: Snapshot<R> | null = null;
  /** Durable accepted proposals by slot (only slots above the durable snapshot). */
  readonly #accepted = new Map<number, DurableAccepted<C>>();
  #pending: PendingRecord<C, R>[] = [];
  /** When set, the next sync keeps this many pending records and then "crashes". */
  #crashOnSyncKeeping: number | null = null;
  #syncs = 0;

  load(): PersistedState<C, R> {
    const accepted = [...this.#accepted.values()].sort((a, b) => a.slot - b.slot);
    return { promised: this.#promised, snapshot: this.#snapshot, accepted };
  }

  savePromise(ballot: Ballot): void {
    this.#pending.push({ kind: 'promise', ballot });
  }

  saveAccepted(slot: number, ballot: Ballot, command: LogCommand<C>): void {
    this.#pending.push({ kind: 'accepted', entry: { slot, ballot, command } });
  }

  saveSnapshot(snapshot: Snapshot<R>): void {
    this.#pending.push({ kind: 'snapshot', snapshot });
  }

  sync(): void {
    const pending = this.#pending;
    this.#pending = [];
    const keep = this.#crashOnSyncKeeping;
    if (keep !== null) {
      this.#crashOnSyncKeeping = null;
      const surviving = Math.min(keep, pending.length);
      for (let i = 0; i < surviving; i++) this.#make(pending[i]!);
      throw new PaxosSimulatedCrash(surviving, pending.length - surviving);
    }
    for (const record of pending) this.#make(record);
    this.#syncs++;
  }

  #make(record: PendingRecord<C, R>): void {
    if (record.kind === 'promise') this.#promised = record.ballot;
    else if (record.kind === 'accepted') {
      const slotFloor = this.#snapshot?.lastIncludedSlot ?? 0;
      if (record.entry.slot > slotFloor) this.#accepted.set(record.entry.slot, record.entry);
    } else {
      const snapshot = record.snapshot;
      if (snapshot.lastIncludedSlot <= (this.#snapshot?.lastIncludedSlot ?? 0)) return;
      this.#snapshot = snapshot;
      for (const slot of [...this.#accepted.keys()]) {
        if (slot <= snapshot.lastIncludedSlot) this.#accepted.delete(slot);
      }
    }
  }

  /** Simulated crash between handles: buffered (never synced) records are lost. */
  crash(): void {
    this.#pending = [];
    this.#crashOnSyncKeeping = null;
  }

  /**
   * Arms a crash inside the next `sync()`: `keepRecords` of its buffered records become durable,
   * the rest are lost, and `sync` throws `PaxosSimulatedCrash`.
   */
  armCrashOnSync(keepRecords: number): void {
    this.#crashOnSyncKeeping = keepRecords;
  }

  /** Cancels a crash armed by `armCrashOnSync` that has not fired yet. */
  disarmCrash(): void {
    this.#crashOnSyncKeeping = null;
  }

  /** The durable promise (for invariant checks: it never decreases). */
  get durablePromised(): Ballot {
    return this.#promised;
  }

  get durableSnapshotSlot(): number {
    return this.#snapshot?.lastIncludedSlot ?? 0;
  }

  get durableAcceptedCount(): number {
    return this.#accepted.size;
  }

  get syncCount(): number {
    return this.#syncs;
  }
}
