/**
 * The DT roles' state in DMOs (iPipe §3 "Distributed memory objects": an actor's state is its
 * objects, so migration can move it; §5 "DT": participants keep an extensible hash table, the
 * coordinator a log object and a cache of responses). These implement the stores the protocol
 * logic is written against, so the actors run exactly the logic the simulator tests.
 *
 * Layout (every collection is re-opened from its root id after a migration):
 *
 *   participant  items   DmoHashMap  key → [flags u32, lock client u32, lock seq u32, lock epoch u32,
 *                                          version f64, lockedAtNs f64, value bytes]      (32 B + value)
 *                locks   DmoHashMap  key → ∅              the lock index the lease scan walks
 *                ended   DmoHashMap  "c:s@e" → ∅          attempts that ended here (bounded …
 *                order   DmoLog      "c:s@e"              … oldest first, for eviction)
 *                state   DmoHashMap  "tick" → u8          whether a lease timer is pending
 *
 *   coordinator  txns    DmoHashMap  "c:s" → TxnRecord    (encoded with the actor codec)
 *                clients DmoHashMap  "c" → ClientRecord   the response cache
 *                tail    DmoLog      framed commit records (log-format.ts): the NIC log object
 *                state   DmoHashMap  "meta" → CoordinatorMeta
 *
 *   logger       state   DmoHashMap  "logger" → LoggerState
 *
 * Every actor also keeps its setup message (encoded) under "setup" in its state map.
 */

import { field, type MessageCodec, messages } from '../../actor/index.ts';
import { DmoHashMap, DmoLog } from '../../dmo/index.ts';
import type { DmoHeap } from '../../dmo/types.ts';
import type { ObjectId } from '../../ids.ts';
import type { ClientRecord, CoordinatorMeta, CoordinatorStore, TxnRecord } from './coordinator-logic.ts';
import { INITIAL_COORDINATOR_META } from './coordinator-logic.ts';
import { decodeLogRecord, encodeLogRecord, type LoggedCommit } from './log-format.ts';
import type { LoggerState } from './logger-logic.ts';
import { MAX_KEY_BYTES, MAX_REASON_BYTES, MAX_TXN_ITEMS, MAX_VALUE_BYTES } from './messages.ts';
import { ENDED_MEMORY, type ParticipantItem, type ParticipantStore } from './participant-logic.ts';
import { type LockOwner, ownerKey, type StateCell, txnKey } from './types.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);

/** A StateCell stored under one key of a DMO hash map, encoded with a one-variant codec. */
export class DmoCodecCell<T extends object> implements StateCell<T> {
  readonly #map: DmoHashMap;
  readonly #key: string;
  readonly #codec: MessageCodec<T & { type: string }>;
  readonly #variant: string;
  readonly #initial: T;

  constructor(
    map: DmoHashMap,
    key: string,
    codec: MessageCodec<T & { type: string }>,
    variant: string,
    initial: T,
  ) {
    this.#map = map;
    this.#key = key;
    this.#codec = codec;
    this.#variant = variant;
    this.#initial = initial;
  }

  get(): T {
    const bytes = this.#map.getString(this.#key);
    if (!bytes) return this.#initial;
    const { type: _type, ...value } = this.#codec.decode(bytes);
    return value as unknown as T;
  }

  set(value: T): void {
    this.#map.setString(this.#key, this.#codec.encode({ ...value, type: this.#variant }));
  }
}

// ---- participant -------------------------------------------------------------------------------

const ITEM_HEADER_BYTES = 32;
const FLAG_HAS_VALUE = 1;
const FLAG_LOCKED = 2;

function encodeItem(item: ParticipantItem): Uint8Array {
  const value = item.value ?? EMPTY;
  const out = new Uint8Array(ITEM_HEADER_BYTES + value.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, (item.value ? FLAG_HAS_VALUE : 0) | (item.lock ? FLAG_LOCKED : 0), true);
  view.setUint32(4, item.lock?.client ?? 0, true);
  view.setUint32(8, item.lock?.seq ?? 0, true);
  view.setUint32(12, item.lock?.epoch ?? 0, true);
  view.setFloat64(16, item.version, true);
  view.setFloat64(24, item.lockedAtNs, true);
  out.set(value, ITEM_HEADER_BYTES);
  return out;
}

function decodeItem(bytes: Uint8Array): ParticipantItem {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = view.getUint32(0, true);
  const lock: LockOwner | undefined =
    flags & FLAG_LOCKED
      ? { client: view.getUint32(4, true), seq: view.getUint32(8, true), epoch: view.getUint32(12, true) }
      : undefined;
  return {
    value: flags & FLAG_HAS_VALUE ? bytes.slice(ITEM_HEADER_BYTES) : undefined,
    version: view.getFloat64(16, true),
    lock,
    lockedAtNs: view.getFloat64(24, true),
  };
}

/** Root ids of a participant's collections. */
export interface DmoParticipantRoots {
  readonly items: ObjectId;
  readonly locks: ObjectId;
  readonly ended: ObjectId;
  readonly order: ObjectId;
  readonly state: ObjectId;
}

/** A ParticipantStore in one actor's DMOs (layout in the header). */
export class DmoParticipantStore implements ParticipantStore {
  readonly roots: DmoParticipantRoots;
  readonly #items: DmoHashMap;
  readonly #locks: DmoHashMap;
  readonly #ended: DmoHashMap;
  readonly #order: DmoLog;
  readonly #state: DmoHashMap;

  private constructor(heap: DmoHeap, roots: DmoParticipantRoots) {
    this.roots = roots;
    this.#items = DmoHashMap.open(heap, roots.items);
    this.#locks = DmoHashMap.open(heap, roots.locks);
    this.#ended = DmoHashMap.open(heap, roots.ended);
    this.#order = DmoLog.open(heap, roots.order);
    this.#state = DmoHashMap.open(heap, roots.state);
  }

  /** New empty collections in `heap`. */
  static create(heap: DmoHeap, initialCapacity = 1024): DmoParticipantStore {
    return new DmoParticipantStore(heap, {
      items: DmoHashMap.create(heap, { initialCapacity }).rootId,
      locks: DmoHashMap.create(heap).rootId,
      ended: DmoHashMap.create(heap).rootId,
      order: DmoLog.create(heap).rootId,
      state: DmoHashMap.create(heap).rootId,
    });
  }

  /** Re-opens the collections (after a migration, or per message in the actor). */
  static open(heap: DmoHeap, roots: DmoParticipantRoots): DmoParticipantStore {
    return new DmoParticipantStore(heap, roots);
  }

  /** The map that also holds the actor's setup. */
  get stateMap(): DmoHashMap {
    return this.#state;
  }

  get size(): number {
    return this.#items.size;
  }
  get(key: string): ParticipantItem | undefined {
    const bytes = this.#items.getString(key);
    return bytes ? decodeItem(bytes) : undefined;
  }
  set(key: string, item: ParticipantItem): void {
    this.#items.setString(key, encodeItem(item));
    if (item.lock) {
      if (!this.#locks.hasString(key)) this.#locks.setString(key, EMPTY);
    } else {
      this.#locks.deleteString(key);
    }
  }
  lockedKeys(): string[] {
    return [...this.#locks.keys()].map((key) => decoder.decode(key));
  }
  /** Every row (checks and tools; walks the whole table). */
  *entries(): IterableIterator<[string, ParticipantItem]> {
    for (const [key, bytes] of this.#items.entries()) yield [decoder.decode(key), decodeItem(bytes)];
  }
  rememberEnded(owner: LockOwner): void {
    const key = ownerKey(owner);
    if (this.#ended.hasString(key)) return;
    this.#ended.setString(key, EMPTY);
    this.#order.append(encoder.encode(key));
    while (this.#order.length > ENDED_MEMORY) {
      const oldest = this.#order.read(this.#order.firstIndex);
      this.#order.truncatePrefix(this.#order.firstIndex + 1);
      if (oldest) this.#ended.delete(oldest);
    }
  }
  hasEnded(owner: LockOwner): boolean {
    return this.#ended.hasString(ownerKey(owner));
  }
  tickArmed(): boolean {
    return (this.#state.getString('tick')?.[0] ?? 0) === 1;
  }
  setTickArmed(armed: boolean): void {
    this.#state.setString('tick', Uint8Array.of(armed ? 1 : 0));
  }
}

// ---- coordinator -------------------------------------------------------------------------------

const KEY = field.string({ maxBytes: MAX_KEY_BYTES });
const recordCodecs = messages({
  txn: {
    client: field.u32(),
    seq: field.u32(),
    epoch: field.u32(),
    phase: field.oneOf(['locking', 'validating', 'logging', 'committing', 'aborting']),
    reads: field.list(field.struct({ shard: field.u16(), key: KEY, version: field.f64() }), {
      maxItems: MAX_TXN_ITEMS,
    }),
    writes: field.list(
      field.struct({ shard: field.u16(), key: KEY, value: field.bytes({ maxBytes: MAX_VALUE_BYTES }) }),
      { maxItems: MAX_TXN_ITEMS },
    ),
    lockVersions: field.list(field.f64(), { maxItems: MAX_TXN_ITEMS }),
    waiting: field.list(field.u16(), { maxItems: MAX_TXN_ITEMS }),
    reason: field.string({ maxBytes: MAX_REASON_BYTES }),
    startedAtNs: field.f64(),
    sentAtNs: field.f64(),
    recovered: field.bool(),
  },
  client: {
    client: field.u32(),
    seq: field.u32(),
    outcome: field.oneOf(['committed', 'aborted', 'invalid']),
    reason: field.string({ maxBytes: MAX_REASON_BYTES }),
    committedSeq: field.f64(),
  },
  meta: {
    status: field.oneOf(['idle', 'recovering', 'serving']),
    epoch: field.u32(),
    nonce: field.u32(),
    tickArmed: field.bool(),
    recoverSentAtNs: field.f64(),
    tailBase: field.u32(),
  },
  logger: {
    epoch: field.u32(),
    appended: field.f64(),
    synced: field.f64(),
    recoverNonce: field.u32(),
    generation: field.u32(),
  },
});

type RecordMessage = typeof recordCodecs extends MessageCodec<infer M> ? M : never;

function strip<T>(message: RecordMessage): T {
  const { type: _type, ...rest } = message;
  return rest as unknown as T;
}

/** Root ids of a coordinator's collections. */
export interface DmoCoordinatorRoots {
  readonly txns: ObjectId;
  readonly clients: ObjectId;
  readonly tail: ObjectId;
  readonly state: ObjectId;
}

/** A CoordinatorStore in one actor's DMOs (layout in the header). */
export class DmoCoordinatorStore implements CoordinatorStore {
  readonly roots: DmoCoordinatorRoots;
  readonly #txns: DmoHashMap;
  readonly #clients: DmoHashMap;
  readonly #tail: DmoLog;
  readonly #state: DmoHashMap;
  readonly #meta: DmoCodecCell<CoordinatorMeta>;

  private constructor(heap: DmoHeap, roots: DmoCoordinatorRoots) {
    this.roots = roots;
    this.#txns = DmoHashMap.open(heap, roots.txns);
    this.#clients = DmoHashMap.open(heap, roots.clients);
    this.#tail = DmoLog.open(heap, roots.tail);
    this.#state = DmoHashMap.open(heap, roots.state);
    this.#meta = new DmoCodecCell(
      this.#state,
      'meta',
      recordCodecs as unknown as MessageCodec<CoordinatorMeta & { type: string }>,
      'meta',
      INITIAL_COORDINATOR_META,
    );
  }

  static create(heap: DmoHeap): DmoCoordinatorStore {
    return new DmoCoordinatorStore(heap, {
      txns: DmoHashMap.create(heap, { initialCapacity: 256 }).rootId,
      clients: DmoHashMap.create(heap, { initialCapacity: 256 }).rootId,
      tail: DmoLog.create(heap).rootId,
      state: DmoHashMap.create(heap).rootId,
    });
  }

  static open(heap: DmoHeap, roots: DmoCoordinatorRoots): DmoCoordinatorStore {
    return new DmoCoordinatorStore(heap, roots);
  }

  /** The map that also holds the actor's setup. */
  get stateMap(): DmoHashMap {
    return this.#state;
  }

  meta(): CoordinatorMeta {
    return this.#meta.get();
  }
  setMeta(meta: CoordinatorMeta): void {
    this.#meta.set(meta);
  }
  getTxn(client: number, seq: number): TxnRecord | undefined {
    const bytes = this.#txns.getString(txnKey(client, seq));
    return bytes ? strip<TxnRecord>(recordCodecs.decode(bytes)) : undefined;
  }
  putTxn(record: TxnRecord): void {
    this.#txns.setString(txnKey(record.client, record.seq), recordCodecs.encode({ type: 'txn', ...record }));
  }
  deleteTxn(client: number, seq: number): void {
    this.#txns.deleteString(txnKey(client, seq));
  }
  txns(): TxnRecord[] {
    return [...this.#txns.values()].map((bytes) => strip<TxnRecord>(recordCodecs.decode(bytes)));
  }
  get txnCount(): number {
    return this.#txns.size;
  }
  getClient(client: number): ClientRecord | undefined {
    const bytes = this.#clients.getString(String(client));
    return bytes ? strip<ClientRecord>(recordCodecs.decode(bytes)) : undefined;
  }
  putClient(record: ClientRecord): void {
    this.#clients.setString(String(record.client), recordCodecs.encode({ type: 'client', ...record }));
  }
  clients(): ClientRecord[] {
    return [...this.#clients.values()].map((bytes) => strip<ClientRecord>(recordCodecs.decode(bytes)));
  }
  tailAppend(record: LoggedCommit): void {
    this.#tail.append(encodeLogRecord({ type: 'commit', ...record }));
  }
  tailRecords(): LoggedCommit[] {
    const out: LoggedCommit[] = [];
    for (let index = this.#tail.firstIndex; index < this.#tail.nextIndex; index++) {
      const bytes = this.#tail.read(index);
      const record = bytes ? decodeLogRecord(bytes) : undefined;
      if (record?.type === 'commit') out.push(record);
    }
    return out;
  }
  tailReset(records: readonly LoggedCommit[]): void {
    this.#tail.truncatePrefix(this.#tail.nextIndex);
    for (const record of records) this.tailAppend(record);
  }
  get tailLength(): number {
    return this.#tail.length;
  }
}

// ---- logger ------------------------------------------------------------------------------------

/** The logging actor's state cell in a DMO hash map. */
export function dmoLoggerStateCell(state: DmoHashMap, initial: LoggerState): StateCell<LoggerState> {
  return new DmoCodecCell(
    state,
    'logger',
    recordCodecs as unknown as MessageCodec<LoggerState & { type: string }>,
    'logger',
    initial,
  );
}
