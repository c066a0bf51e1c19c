/**
 * A DT participant's logic: one shard of the store (iPipe §5 "DT": participants on the NIC keep
 * an extensible hash table; FaSST §4.2's primaries). Each key holds a value, a version and an
 * optional lock owner.
 *
 * Messages and what they do (the paper's steps):
 *
 *   read      execution: value + version + "locked?" straight back to the client
 *   lock      (1) lock every requested key for the attempt, or none: if any is locked by another
 *             attempt, answer "locked" (the coordinator aborts). Answers each key's version.
 *   validate  (2) every read-only key still has the version the client read and is not locked
 *   commit    (4) for each key this attempt locked: install the value at the coordinator-assigned
 *             version (lock-time version + 1), unlock; acknowledge
 *   abort     release every key the attempt locked; acknowledge
 *
 * Invariants:
 * - **Only the owner's commit or abort releases a lock.** A participant never releases a lock on
 *   its own: once it answered "locked" the coordinator may have reached the commit point, and a
 *   released key could be overwritten before the commit arrives (a lost update).
 * - **Commit is idempotent and never regresses a key.** A commit installs a write only while the
 *   key is still locked by that attempt *and* its version is the one the lock saw (version + 1 =
 *   the write's version). A duplicate commit finds the key unlocked and does nothing; a stale lock
 *   (a delayed duplicate `lock` that arrived after the commit) is merely released.
 * - **Lock lease (no lock held forever).** A lock older than `leaseNs` makes the participant ask
 *   the coordinator (`status-query`) — again every lease while it lasts. The coordinator answers
 *   with the decision (`commit` with this shard's writes, or `abort`), `status-pending` while the
 *   attempt is at its commit point or the coordinator is recovering, or — for an attempt it does not
 *   know (an older incarnation's unlogged attempt, or a finished one) — `abort`, which is safe
 *   because a logged attempt is always known after recovery (see coordinator-logic.ts). So a lock
 *   lives until its coordinator is reachable and recovered, and no longer; the price of safety is
 *   that it waits for a coordinator that is down (2PC's blocking, documented, not hidden).
 * - Attempts that ended here are remembered (bounded); a late `lock` for one is refused, so
 *   reordered retransmissions rarely leave stale locks for the lease to clean up.
 *
 * Durability model: the store (values, versions, locks) is the participant's persistent state —
 * in the simulator it survives a participant crash, like NIC DRAM across an actor restart; what a
 * crash loses is timers and messages in flight. `start()` re-arms the lease timer afterwards.
 */

import type { DtMsg, ParticipantInput } from './messages.ts';
import {
  COORDINATOR,
  clientAddress,
  type DtOutput,
  type LockOwner,
  ownerKey,
  type ShardMap,
  sameOwner,
} from './types.ts';
import { keyProblem } from './validation.ts';

/** One key's row in the participant's hash table. */
export interface ParticipantItem {
  /** Undefined while the key has never been written (a lock can exist on a missing key). */
  readonly value: Uint8Array | undefined;
  /** 0 for a key never written or as loaded; each commit installs the next version. */
  readonly version: number;
  readonly lock: LockOwner | undefined;
  /** When the lock was taken, or when its owner was last asked about (the lease restarts). */
  readonly lockedAtNs: number;
}

/** The participant's table (DMO-backed in the actor, a Map in the simulator). */
export interface ParticipantStore {
  get(key: string): ParticipantItem | undefined;
  /** Stores a row; keeps the index of locked keys in step. */
  set(key: string, item: ParticipantItem): void;
  /** Keys locked now (the lease scan walks these, not the whole table). */
  lockedKeys(): string[];
  /** Remembers that an attempt ended here (bounded: the oldest are forgotten). */
  rememberEnded(owner: LockOwner): void;
  hasEnded(owner: LockOwner): boolean;
  /** Whether a lease timer is pending. */
  tickArmed(): boolean;
  setTickArmed(armed: boolean): void;
  readonly size: number;
}

/** How many ended attempts a store remembers. */
export const ENDED_MEMORY = 4096;

/** A ParticipantStore in JS memory. */
export class MemoryParticipantStore implements ParticipantStore {
  readonly #items = new Map<string, ParticipantItem>();
  readonly #locked = new Set<string>();
  readonly #ended = new Set<string>();
  #tickArmed = false;

  get size(): number {
    return this.#items.size;
  }
  get(key: string): ParticipantItem | undefined {
    return this.#items.get(key);
  }
  set(key: string, item: ParticipantItem): void {
    this.#items.set(key, item);
    if (item.lock) this.#locked.add(key);
    else this.#locked.delete(key);
  }
  lockedKeys(): string[] {
    return [...this.#locked];
  }
  rememberEnded(owner: LockOwner): void {
    const key = ownerKey(owner);
    if (this.#ended.has(key)) return;
    this.#ended.add(key);
    if (this.#ended.size > ENDED_MEMORY) {
      const oldest = this.#ended.values().next().value;
      if (oldest !== undefined) this.#ended.delete(oldest);
    }
  }
  hasEnded(owner: LockOwner): boolean {
    return this.#ended.has(ownerKey(owner));
  }
  tickArmed(): boolean {
    return this.#tickArmed;
  }
  setTickArmed(armed: boolean): void {
    this.#tickArmed = armed;
  }
  /** Every row (tests and the simulator's invariant checks). */
  entries(): IterableIterator<[string, ParticipantItem]> {
    return this.#items.entries();
  }
}

/** A participant's configuration. */
export interface ParticipantConfig {
  readonly shard: number;
  readonly shards: ShardMap;
  /** How long a lock may stand before the participant asks its coordinator about it. */
  readonly leaseNs: number;
}

const EMPTY = new Uint8Array(0);

/** The participant's state machine. */
export class ParticipantLogic {
  readonly #store: ParticipantStore;
  readonly #config: ParticipantConfig;

  constructor(store: ParticipantStore, config: ParticipantConfig) {
    this.#store = store;
    this.#config = config;
  }

  /** After a (re)start: timers were lost, so re-arm the lease scan if any lock stands. */
  start(_nowNs: number): DtOutput[] {
    this.#store.setTickArmed(false);
    const out: DtOutput[] = [];
    this.#ensureTick(out);
    return out;
  }

  handle(message: ParticipantInput, nowNs: number): DtOutput[] {
    const out: DtOutput[] = [];
    switch (message.type) {
      case 'read':
        this.#read(message, out);
        break;
      case 'lock':
        this.#lock(message, nowNs, out);
        break;
      case 'validate':
        this.#validate(message, out);
        break;
      case 'commit':
        this.#commit(message, out);
        break;
      case 'abort':
        this.#abort(message, out);
        break;
      case 'status-pending':
        this.#touch(message, nowNs);
        break;
      case 'participant-tick':
        this.#leaseScan(nowNs, out);
        break;
      case 'participant-load':
        this.#load(message);
        break;
    }
    return out;
  }

  /** True when `key` belongs here and is well-formed. */
  #owns(key: string, shard: number): boolean {
    return (
      shard === this.#config.shard &&
      keyProblem(key) === undefined &&
      this.#config.shards.shardOf(key) === this.#config.shard
    );
  }

  #read(message: DtMsg<'read'>, out: DtOutput[]): void {
    const base = {
      type: 'read-reply',
      client: message.client,
      seq: message.seq,
      shard: message.shard,
      key: message.key,
    } as const;
    const to = clientAddress(message.client);
    if (!this.#owns(message.key, message.shard)) {
      out.push({
        kind: 'send',
        to,
        message: { ...base, status: 'wrong-shard', found: false, value: EMPTY, version: 0, locked: false },
        answer: true,
      });
      return;
    }
    const item = this.#store.get(message.key);
    out.push({
      kind: 'send',
      to,
      message: {
        ...base,
        status: 'ok',
        found: item?.value !== undefined,
        value: item?.value ?? EMPTY,
        version: item?.version ?? 0,
        locked: item?.lock !== undefined,
      },
      answer: true,
    });
  }

  #lock(message: DtMsg<'lock'>, nowNs: number, out: DtOutput[]): void {
    const owner: LockOwner = { client: message.client, seq: message.seq, epoch: message.epoch };
    const reply = (ok: boolean, reason: string, versions: number[]): void => {
      out.push({
        kind: 'send',
        to: COORDINATOR,
        message: { type: 'lock-reply', ...owner, shard: message.shard, ok, reason, versions },
        answer: true,
      });
    };
    for (const key of message.keys) {
      if (!this.#owns(key, message.shard)) {
        reply(false, `wrong-shard: ${key}`, []);
        return;
      }
    }
    if (this.#store.hasEnded(owner)) {
      reply(false, 'ended', []);
      return;
    }
    // All or nothing: check every key before locking any.
    for (const key of message.keys) {
      const lock = this.#store.get(key)?.lock;
      if (lock !== undefined && !sameOwner(lock, owner)) {
        reply(false, 'locked', []);
        return;
      }
    }
    const versions: number[] = [];
    for (const key of message.keys) {
      const item = this.#store.get(key) ?? { value: undefined, version: 0, lock: undefined, lockedAtNs: 0 };
      // A duplicate lock request from the same attempt keeps the original lock time.
      if (item.lock === undefined) this.#store.set(key, { ...item, lock: owner, lockedAtNs: nowNs });
      versions.push(item.version);
    }
    reply(true, '', versions);
    this.#ensureTick(out);
  }

  #validate(message: DtMsg<'validate'>, out: DtOutput[]): void {
    const owner: LockOwner = { client: message.client, seq: message.seq, epoch: message.epoch };
    let reason = '';
    for (let i = 0; i < message.keys.length && reason === ''; i++) {
      const key = message.keys[i]!;
      if (!this.#owns(key, message.shard)) {
        reason = `wrong-shard: ${key}`;
        break;
      }
      const item = this.#store.get(key);
      if (item?.lock !== undefined && !sameOwner(item.lock, owner)) reason = 'read-locked';
      else if ((item?.version ?? 0) !== message.versions[i]) reason = 'version-changed';
    }
    if (message.versions.length !== message.keys.length) reason = 'malformed-validate';
    out.push({
      kind: 'send',
      to: COORDINATOR,
      message: { type: 'validate-reply', ...owner, shard: message.shard, ok: reason === '', reason },
      answer: true,
    });
  }

  #commit(message: DtMsg<'commit'>, out: DtOutput[]): void {
    const owner: LockOwner = { client: message.client, seq: message.seq, epoch: message.epoch };
    for (const write of message.writes) {
      const item = this.#store.get(write.key);
      if (item?.lock === undefined || !sameOwner(item.lock, owner)) continue; // applied already
      if (item.version + 1 === write.version) {
        this.#store.set(write.key, {
          value: write.value,
          version: write.version,
          lock: undefined,
          lockedAtNs: 0,
        });
      } else {
        // A stale lock taken by a late duplicate request after this commit was applied.
        this.#store.set(write.key, { ...item, lock: undefined, lockedAtNs: 0 });
      }
    }
    this.#releaseAll(owner); // keys locked but not written (none in a well-formed attempt)
    this.#store.rememberEnded(owner);
    out.push({
      kind: 'send',
      to: COORDINATOR,
      message: { type: 'commit-ack', ...owner, shard: message.shard },
      answer: true,
    });
  }

  #abort(message: DtMsg<'abort'>, out: DtOutput[]): void {
    const owner: LockOwner = { client: message.client, seq: message.seq, epoch: message.epoch };
    this.#releaseAll(owner);
    this.#store.rememberEnded(owner);
    out.push({
      kind: 'send',
      to: COORDINATOR,
      message: { type: 'abort-ack', ...owner, shard: message.shard },
      answer: true,
    });
  }

  #releaseAll(owner: LockOwner): void {
    for (const key of this.#store.lockedKeys()) {
      const item = this.#store.get(key);
      if (item?.lock !== undefined && sameOwner(item.lock, owner)) {
        this.#store.set(key, { ...item, lock: undefined, lockedAtNs: 0 });
      }
    }
  }

  #touch(message: DtMsg<'status-pending'>, nowNs: number): void {
    const owner: LockOwner = { client: message.client, seq: message.seq, epoch: message.epoch };
    for (const key of this.#store.lockedKeys()) {
      const item = this.#store.get(key);
      if (item?.lock !== undefined && sameOwner(item.lock, owner))
        this.#store.set(key, { ...item, lockedAtNs: nowNs });
    }
  }

  #leaseScan(nowNs: number, out: DtOutput[]): void {
    this.#store.setTickArmed(false);
    const asked = new Set<string>();
    for (const key of this.#store.lockedKeys()) {
      const item = this.#store.get(key);
      if (item?.lock === undefined || nowNs - item.lockedAtNs < this.#config.leaseNs) continue;
      const owner = item.lock;
      const id = ownerKey(owner);
      if (!asked.has(id)) {
        asked.add(id);
        out.push({
          kind: 'send',
          to: COORDINATOR,
          message: { type: 'status-query', ...owner, shard: this.#config.shard },
          answer: false,
        });
      }
      // The lease restarts: ask again only if another lease passes without a decision.
      this.#store.set(key, { ...item, lockedAtNs: nowNs });
    }
    this.#ensureTick(out);
  }

  #load(message: DtMsg<'participant-load'>): void {
    for (const { key, value } of message.items) {
      if (!this.#owns(key, this.#config.shard)) continue;
      const item = this.#store.get(key);
      if (item?.lock !== undefined) continue;
      this.#store.set(key, { value, version: item?.version ?? 0, lock: undefined, lockedAtNs: 0 });
    }
  }

  #ensureTick(out: DtOutput[]): void {
    if (this.#store.tickArmed() || this.#store.lockedKeys().length === 0) return;
    this.#store.setTickArmed(true);
    out.push({
      kind: 'timer',
      delayNs: Math.max(1, Math.round(this.#config.leaseNs / 2)),
      message: { type: 'participant-tick' },
      keepOrigin: false,
    });
  }
}
