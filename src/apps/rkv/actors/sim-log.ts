/**
 * The durable consensus log of one RKV replica on the simulated platform: what the replica's host
 * disk keeps across a crash (iPipe §5 "RKV": the consensus actor's state is NIC memory, which a
 * crash loses; the host's disk is what survives). The log actor (log-actor.ts, pinned to the host)
 * is the only writer; the deployment keeps the object across a node's restart, as it keeps the
 * SimDisk with the SSTables.
 *
 *   promised   the highest ballot this acceptor promised (or accepted at)
 *   entries    slot → (ballot, command, chosen): the acceptor's accepted values, and the chosen
 *              entries the replica applied (written before the replica reports them applied)
 *   snapshot   the state machine at the truncation point: key → value of every applied write up to
 *              `truncated`, and the sessions table (client → last seq applied) at that point
 *
 * Truncation folds the contiguous chosen prefix up to a slot into the snapshot, in slot order and
 * with the same exactly-once rule as the consensus actor's apply (a command whose seq a session
 * already applied changes nothing), then drops those entries. So after a crash the replica's state
 * machine is exactly snapshot + the chosen entries above it, re-applied in order.
 *
 * A JS object, not actor state: the modelled disk's contents. What writing it costs a host core
 * (bytes at the disk's write rate plus an fsync) is the log actor's declared work. The log is
 * reached by the name the log actor's setup carries (`registerSimLog`), per incarnation of the
 * node: a crashed node's actors can no longer find it.
 */

const latin1 = new TextDecoder('latin1');

/** One slot as the durable log keeps it. */
export interface DurableEntry {
  readonly slot: number;
  readonly ballot: number;
  readonly chosen: boolean;
  readonly clientId: number;
  readonly seq: number;
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** What a restarted replica reads back. */
export interface DurableLogState {
  readonly promised: number;
  readonly truncated: number;
  readonly sessions: readonly { readonly clientId: number; readonly seq: number }[];
  readonly snapshot: readonly { readonly key: Uint8Array; readonly value: Uint8Array }[];
  /** Entries above `truncated`, in slot order. */
  readonly entries: readonly DurableEntry[];
}

/** The durable log of one replica (see the file header). */
export class SimLog {
  #promised = 0;
  #truncated = 0;
  readonly #entries = new Map<number, DurableEntry>();
  readonly #sessions = new Map<number, number>();
  readonly #snapshot = new Map<string, { key: Uint8Array; value: Uint8Array }>();
  #writes = 0;
  #bytesWritten = 0;

  get promised(): number {
    return this.#promised;
  }

  get truncated(): number {
    return this.#truncated;
  }

  /** Entries held above the truncation point. */
  get size(): number {
    return this.#entries.size;
  }

  /** Writes (each one synced) and their bytes so far. */
  get writes(): number {
    return this.#writes;
  }

  get bytesWritten(): number {
    return this.#bytesWritten;
  }

  /** Whether nothing was ever written (a replica's first start). */
  get empty(): boolean {
    return this.#promised === 0 && this.#truncated === 0 && this.#entries.size === 0;
  }

  /** The entry of `slot`, if held. */
  entry(slot: number): DurableEntry | undefined {
    return this.#entries.get(slot);
  }

  /**
   * One synced write: raises the promise, stores the entries (at or below the truncation point they
   * are settled and ignored). A chosen entry stays chosen: a later accept of its slot carries the
   * same command (Paxos), so only the flag could be lost, never the value.
   */
  write(promised: number, entries: readonly DurableEntry[]): void {
    let bytes = 8;
    if (promised > this.#promised) this.#promised = promised;
    for (const entry of entries) {
      if (entry.slot <= this.#truncated) continue;
      const held = this.#entries.get(entry.slot);
      const chosen = entry.chosen || (held?.chosen === true && held.ballot <= entry.ballot);
      this.#entries.set(
        entry.slot,
        chosen === entry.chosen ? copyEntry(entry) : { ...copyEntry(entry), chosen },
      );
      if (entry.ballot > this.#promised) this.#promised = entry.ballot;
      bytes += 42 + entry.key.length + entry.value.length;
    }
    this.#writes++;
    this.#bytesWritten += bytes;
  }

  /**
   * Folds the contiguous chosen prefix up to `through` into the snapshot and drops it; stops at
   * the first slot it does not hold chosen (that write has not reached the log yet). Returns the
   * new truncation point.
   */
  truncate(through: number): number {
    while (this.#truncated < through) {
      const slot = this.#truncated + 1;
      const entry = this.#entries.get(slot);
      if (entry === undefined || !entry.chosen) break;
      let duplicate = false;
      if (entry.clientId > 0) {
        const last = this.#sessions.get(entry.clientId) ?? 0;
        if (entry.seq <= last) duplicate = true;
        else this.#sessions.set(entry.clientId, entry.seq);
      }
      if (!duplicate && entry.key.length > 0) {
        this.#snapshot.set(latin1.decode(entry.key), { key: entry.key, value: entry.value });
      }
      this.#entries.delete(slot);
      this.#truncated = slot;
    }
    return this.#truncated;
  }

  /** Everything a restarted replica recovers (copies). */
  read(): DurableLogState {
    const entries = [...this.#entries.values()].sort((a, b) => a.slot - b.slot).map(copyEntry);
    return {
      promised: this.#promised,
      truncated: this.#truncated,
      sessions: [...this.#sessions].map(([clientId, seq]) => ({ clientId, seq })),
      snapshot: [...this.#snapshot.values()].map((item) => ({
        key: item.key.slice(),
        value: item.value.slice(),
      })),
      entries,
    };
  }
}

function copyEntry(entry: DurableEntry): DurableEntry {
  return {
    slot: entry.slot,
    ballot: entry.ballot,
    chosen: entry.chosen,
    clientId: entry.clientId,
    seq: entry.seq,
    key: entry.key.slice(),
    value: entry.value.slice(),
  };
}

const logs = new Map<string, SimLog>();

/** Makes `log` reachable by `name` from a log actor's setup (this thread only). */
export function registerSimLog(name: string, log: SimLog): void {
  logs.set(name, log);
}

/** Forgets a registered log (a crashed incarnation's name). */
export function unregisterSimLog(name: string): void {
  logs.delete(name);
}

/** The log registered as `name`, or undefined. */
export function simLog(name: string): SimLog | undefined {
  return logs.get(name);
}
