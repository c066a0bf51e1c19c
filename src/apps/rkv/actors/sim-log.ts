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
 *              `truncated` (a deleted key → a tombstone item, key ∅ and value = the key, which is
 *              never dropped: see `fold`), and the sessions table (client → last seq applied)
 *
 * Truncation folds the contiguous chosen prefix up to a slot into the snapshot, in slot order and
 * with the same exactly-once rule as the consensus actor's apply (a command whose seq a session
 * already applied changes nothing), then drops those entries. So after a crash the replica's state
 * machine is exactly snapshot + the chosen entries above it, re-applied in order.
 *
 * State transfer (consensus-actor.ts, "state transfer"): the log is also where a laggard's snapshot
 * comes from and goes to. A sender's log takes a *checkpoint* — the snapshot folded forward over
 * its contiguous chosen prefix, frozen and cut into chunks (a hard-linked copy on the disk, as
 * RocksDB's checkpoints are) — and serves its chunks. It keeps the last MAX_CHECKPOINTS of them: a
 * receiver that names the one it is fetching keeps being served that one even after the sender's
 * truncation passed it and a newer checkpoint was taken (a busy group would otherwise replace the
 * checkpoint faster than a large snapshot crosses, and the receiver would start over for ever). A receiver's
 * log stages the chunks it is given (a snapshot file being written) and, once it holds all of
 * them, switches to them in one step: snapshot, sessions and truncation point replaced, entries
 * at or below the point dropped. A crash before the switch leaves the old log as it was.
 *
 * A JS object, not actor state: the modelled disk's contents. What writing it costs a host core
 * (bytes at the disk's write rate plus an fsync) is the log actor's declared work. The log is
 * reached by the name the log actor's setup carries (`registerSimLog`), per incarnation of the
 * node: a crashed node's actors can no longer find it.
 */

import { commandKey } from './messages.ts';

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

/** A key → value item of a snapshot. */
export interface SnapshotItem {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** A session of a snapshot: the last seq applied for a client. */
export interface SnapshotSession {
  readonly clientId: number;
  readonly seq: number;
}

/** One chunk of a checkpoint, as `snapshot-chunk` carries it. */
export interface SnapshotChunk {
  readonly items: readonly SnapshotItem[];
  readonly sessions: readonly SnapshotSession[];
}

/** A frozen snapshot at `slot`, cut into chunks (see the file header). */
export interface Checkpoint {
  readonly slot: number;
  readonly chunks: readonly SnapshotChunk[];
  /** Items and sessions in all the chunks. */
  readonly items: number;
  readonly sessions: number;
}

/** Bytes an item takes in a chunk's budget (key, value, their two lengths). */
export function snapshotItemBytes(item: SnapshotItem): number {
  return 8 + item.key.length + item.value.length;
}
/** Bytes a session takes in a chunk's budget. */
export const SNAPSHOT_SESSION_BYTES = 16;
/**
 * Checkpoints a sender's log keeps (the newest ones): receivers fetching older ones at once are
 * rare (one laggard episode per replica), and each is a copy of the whole state.
 */
export const MAX_CHECKPOINTS = 4;

/** The durable log of one replica (see the file header). */
export class SimLog {
  #promised = 0;
  #truncated = 0;
  readonly #entries = new Map<number, DurableEntry>();
  #sessions = new Map<number, number>();
  #snapshot = new Map<string, SnapshotItem>();
  #writes = 0;
  #bytesWritten = 0;
  /** The checkpoints kept, oldest first (at most MAX_CHECKPOINTS; slots increasing). */
  readonly #checkpointsHeld: Checkpoint[] = [];
  #checkpoints = 0;
  /** A receiver's staged chunks (slot, chunk → chunk) until all of them are there. */
  #staging: { slot: number; chunks: number; readonly got: Map<number, SnapshotChunk> } | undefined;
  #installs = 0;

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

  /** Checkpoints taken for senders so far, and snapshots installed from a sender. */
  get checkpoints(): number {
    return this.#checkpoints;
  }

  get installs(): number {
    return this.#installs;
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
      fold(entry, this.#sessions, this.#snapshot);
      this.#entries.delete(slot);
      this.#truncated = slot;
    }
    return this.#truncated;
  }

  /** Slots of the checkpoints kept, oldest first. */
  get checkpointSlots(): readonly number[] {
    return this.#checkpointsHeld.map((held) => held.slot);
  }

  /**
   * A sender's checkpoint (see the file header). A receiver that names one (`slot` ≠ 0) kept here
   * gets that one, wherever the truncation point is now: it was a state at its slot when taken,
   * and the receiver may hold part of it already. Otherwise (slot 0, or one no longer kept) the
   * newest one when it is at or above `atLeast`; else a new one — the snapshot folded over the
   * contiguous chosen prefix above the truncation point, cut into chunks of at most `chunkBytes`
   * (or one larger item), the oldest kept one dropped past MAX_CHECKPOINTS. The log itself is not
   * changed. Undefined when the log holds no state at or above `atLeast`.
   */
  checkpoint(slot: number, atLeast: number, chunkBytes: number): Checkpoint | undefined {
    if (slot !== 0) {
      const named = this.#checkpointsHeld.find((held) => held.slot === slot);
      if (named !== undefined) return named;
    }
    const held = this.#checkpointsHeld.at(-1);
    if (held !== undefined && held.slot >= atLeast) return held;
    const sessions = new Map(this.#sessions);
    const snapshot = new Map(this.#snapshot);
    let at = this.#truncated;
    for (let entry = this.#entries.get(at + 1); entry?.chosen === true; entry = this.#entries.get(at + 1)) {
      fold(entry, sessions, snapshot);
      at++;
    }
    if (at < atLeast || at === 0) return undefined;
    const chunks: SnapshotChunk[] = [];
    let items: SnapshotItem[] = [];
    let sessionList: SnapshotSession[] = [];
    let bytes = 0;
    const close = (): void => {
      chunks.push({ items, sessions: sessionList });
      items = [];
      sessionList = [];
      bytes = 0;
    };
    for (const item of snapshot.values()) {
      const size = snapshotItemBytes(item);
      if (bytes > 0 && bytes + size > chunkBytes) close();
      items.push({ key: item.key.slice(), value: item.value.slice() });
      bytes += size;
    }
    for (const [clientId, seq] of sessions) {
      if (bytes > 0 && bytes + SNAPSHOT_SESSION_BYTES > chunkBytes) close();
      sessionList.push({ clientId, seq });
      bytes += SNAPSHOT_SESSION_BYTES;
    }
    if (bytes > 0 || chunks.length === 0) close();
    const taken: Checkpoint = { slot: at, chunks, items: snapshot.size, sessions: sessions.size };
    this.#checkpointsHeld.push(taken);
    if (this.#checkpointsHeld.length > MAX_CHECKPOINTS) this.#checkpointsHeld.shift();
    this.#checkpoints++;
    return taken;
  }

  /**
   * A receiver's chunk `chunk` of `chunks` of the snapshot at `slot` (see the file header): staged;
   * a chunk of another slot starts the staging over. When every chunk is staged, switches to the
   * snapshot in one step and returns its size. A snapshot at or below the truncation point is
   * not staged: the log already holds a state at least that recent, so the last chunk answers as
   * if installed (the log's current size) — the receiver must not wait for a switch that never
   * comes (it could, e.g., after a restart that ignored its log: UNSAFE_RECOVER_WITHOUT_LOG).
   */
  stage(
    slot: number,
    chunk: number,
    chunks: number,
    content: SnapshotChunk,
  ): { readonly items: number; readonly sessions: number } | undefined {
    if (slot <= this.#truncated) {
      return chunk === chunks - 1 ? { items: this.#snapshot.size, sessions: this.#sessions.size } : undefined;
    }
    // Chunk 0 opens a new snapshot file: the receiver sends them in order, once (a crashed
    // incarnation's unfinished file is never mixed into a later one).
    if (chunk === 0 || this.#staging?.slot !== slot || this.#staging.chunks !== chunks) {
      this.#staging = { slot, chunks, got: new Map() };
    }
    const staging = this.#staging;
    let bytes = 8;
    for (const item of content.items) bytes += snapshotItemBytes(item);
    bytes += content.sessions.length * SNAPSHOT_SESSION_BYTES;
    this.#writes++;
    this.#bytesWritten += bytes;
    if (!staging.got.has(chunk)) {
      staging.got.set(chunk, {
        items: content.items.map((item) => ({ key: item.key.slice(), value: item.value.slice() })),
        sessions: content.sessions.map((session) => ({ ...session })),
      });
    }
    if (staging.got.size < chunks) return undefined;
    // The switch: one synced write of the manifest, as it were.
    const snapshot = new Map<string, SnapshotItem>();
    const sessions = new Map<number, number>();
    for (let c = 0; c < chunks; c++) {
      const part = staging.got.get(c);
      if (part === undefined) return undefined;
      for (const item of part.items) snapshot.set(latin1.decode(commandKey(item)), item);
      for (const session of part.sessions) sessions.set(session.clientId, session.seq);
    }
    this.#snapshot = snapshot;
    this.#sessions = sessions;
    this.#truncated = slot;
    for (const held of [...this.#entries.keys()]) if (held <= slot) this.#entries.delete(held);
    this.#staging = undefined;
    this.#installs++;
    return { items: snapshot.size, sessions: sessions.size };
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

/**
 * Applies one chosen entry to a snapshot with the consensus actor's exactly-once rule: a command
 * whose seq its session already applied changes nothing.
 */
function fold(entry: DurableEntry, sessions: Map<number, number>, snapshot: Map<string, SnapshotItem>): void {
  if (entry.clientId > 0) {
    const last = sessions.get(entry.clientId) ?? 0;
    if (entry.seq <= last) return;
    sessions.set(entry.clientId, entry.seq);
  }
  // A delete stays in the snapshot as a tombstone item (the wire form, messages.ts "Deletes"): a
  // replica that installs or recovers the snapshot may hold the key's old value in its SSTables
  // (or its base data), and only the tombstone hides it.
  const key = commandKey(entry);
  if (key.length > 0) snapshot.set(latin1.decode(key), { key: entry.key, value: entry.value });
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
