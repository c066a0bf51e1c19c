/**
 * RKV's consensus actor on the simulated platform (iPipe §5 "RKV": "consensus (NIC, can
 * migrate)"; "the consensus actor sends one message to the memtable actor at commit"): Multi-Paxos
 * with a distinguished leader, one instance per replica, every bit of its state in its DMOs.
 *
 *   setup: the leader (setup.leader) takes ballot b = makeBallot(1, leader) and runs phase 1 once:
 *          prepare(b) ─▶ acceptors: b ≥ promised ⇒ promise(b, accepted unapplied entries)
 *          majority of promises ⇒ re-propose every reported value above the commit point at b
 *                                 (the highest ballot's per slot), fill holes with no-ops
 *   common case, per client put (phase 2 only):
 *          leader: slot s = next; record (b, put, the client's origin); accept(b, s) ─▶ followers
 *          follower: b ≥ promised ⇒ record (b, put); accepted(b, s) ─▶ leader
 *          leader: majority ⇒ s chosen; apply the contiguous chosen prefix: one `apply` per entry
 *                  to the memtable actor, carrying the client's origin (the memtable answers the
 *                  client once the write is in it); commit(b, commitThrough) ─▶ followers
 *          follower: on commit (or an accept's piggybacked commit point) apply its records ≤ it
 *                    that it accepted at the commit's ballot, in slot order
 *
 * Invariants: an acceptor never accepts below its promise (P1); a slot is chosen only by a
 * majority of accepted at one ballot, and applied in slot order exactly once per replica; an
 * entry is deleted from the log when applied (the memtable then holds the write).
 *
 * What this actor leaves out, and why (docs/apps/rkv-sim.md): no leader election after setup
 * (no failure detector, no heartbeats), no retransmission (the experiment's fabric neither drops
 * nor duplicates), no exactly-once sessions (clients here never retry), no snapshots. The full
 * protocol with all of that is `PaxosReplica` (src/apps/rkv/paxos), tested by the DST; it keeps its
 * state in JS objects, which cannot migrate, so this actor runs the common case over DMO records.
 *
 * DMO layout (roots; re-opened on every message, so a migrated actor finds everything again):
 *
 *   meta   DmoNumberMap   promised, ballot, prepared, promise mask, next slot, commit point,
 *                         commit ballot, applied point (META below)
 *   setup  DmoHashMap     "setup" → the encoded consensus-setup message
 *   log    DmoHashMap     slot (decimal) → [ballot f64][acks u32][chosen u8][key length u8]
 *                         [value length u32][key][value][origin bytes …]
 */

import type { ActorContext, ActorRef, HandlerWork } from '../../../actor/index.ts';
import { defineActor, narrowRef } from '../../../actor/index.ts';
import { DmoHashMap, DmoNumberMap } from '../../../dmo/index.ts';
import type { ObjectId } from '../../../ids.ts';
import { encodeOrigin } from '../../../runtime/origin-codec.ts';
import { makeBallot, replicaId } from '../paxos/types.ts';
import { type RkvMessage, type RkvMsg, rkvMessages } from './messages.ts';

type RkvContext = ActorContext<RkvMessage, RkvMessage>;

const META = {
  promised: 0,
  ballot: 1,
  prepared: 2,
  promiseMask: 3,
  nextSlot: 4,
  commit: 5,
  commitBallot: 6,
  applied: 7,
} as const;

const RECORD_HEADER_BYTES = 18;
const EMPTY = new Uint8Array(0);

/** One log slot as the actor keeps it. */
interface SlotRecord {
  ballot: number;
  acks: number;
  chosen: boolean;
  readonly key: Uint8Array;
  readonly value: Uint8Array;
  readonly origin: Uint8Array;
}

function encodeRecord(record: SlotRecord): Uint8Array {
  const out = new Uint8Array(
    RECORD_HEADER_BYTES + record.key.length + record.value.length + record.origin.length,
  );
  const view = new DataView(out.buffer);
  view.setFloat64(0, record.ballot, true);
  view.setUint32(8, record.acks, true);
  out[12] = record.chosen ? 1 : 0;
  out[13] = record.key.length;
  view.setUint32(14, record.value.length, true);
  out.set(record.key, RECORD_HEADER_BYTES);
  out.set(record.value, RECORD_HEADER_BYTES + record.key.length);
  out.set(record.origin, RECORD_HEADER_BYTES + record.key.length + record.value.length);
  return out;
}

function decodeRecord(bytes: Uint8Array): SlotRecord {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const keyBytes = bytes[13] as number;
  const valueBytes = view.getUint32(14, true);
  const keyAt = RECORD_HEADER_BYTES;
  const valueAt = keyAt + keyBytes;
  const originAt = valueAt + valueBytes;
  return {
    ballot: view.getFloat64(0, true),
    acks: view.getUint32(8, true),
    chosen: bytes[12] === 1,
    key: bytes.slice(keyAt, valueAt),
    value: bytes.slice(valueAt, originAt),
    origin: bytes.slice(originAt),
  };
}

function popcount(mask: number): number {
  let count = 0;
  for (let m = mask >>> 0; m !== 0; m &= m - 1) count++;
  return count;
}

/** The actor's state, re-opened from its DMO roots for one message. */
class ConsensusState {
  readonly meta: DmoNumberMap;
  readonly log: DmoHashMap;
  readonly setup: RkvMsg<'consensus-setup'>;

  constructor(meta: DmoNumberMap, log: DmoHashMap, setup: RkvMsg<'consensus-setup'>) {
    this.meta = meta;
    this.log = log;
    this.setup = setup;
  }

  num(key: number): number {
    return this.meta.get(key) ?? 0;
  }

  set(key: number, value: number): void {
    this.meta.set(key, value);
  }

  record(slot: number): SlotRecord | undefined {
    const bytes = this.log.getString(String(slot));
    return bytes === undefined ? undefined : decodeRecord(bytes);
  }

  store(slot: number, record: SlotRecord): void {
    this.log.setString(String(slot), encodeRecord(record));
  }

  drop(slot: number): void {
    this.log.deleteString(String(slot));
  }

  get majority(): number {
    return Math.floor(this.setup.replicas.length / 2) + 1;
  }

  get isLeader(): boolean {
    return this.setup.replica === this.setup.leader;
  }
}

function rootOf(ctx: RkvContext, name: string): ObjectId {
  const id = ctx.root(name);
  if (id === undefined) throw new Error(`rkv actor ${ctx.name}: root "${name}" missing (init did not run)`);
  return id;
}

/** An RKV actor's ref by instance name (all RKV actors share the codec). */
export function rkvRef(ctx: RkvContext, name: string): ActorRef<RkvMessage, RkvMessage> | undefined {
  return narrowRef(ctx.lookup(name), rkvConsensus);
}

function sendTo(ctx: RkvContext, name: string, message: RkvMessage): void {
  const ref = rkvRef(ctx, name);
  if (ref === undefined) {
    ctx.log.warn({ to: name, type: message.type }, 'rkv: no such actor; message dropped');
    return;
  }
  ctx.send(ref, message, { origin: 'none' });
}

function toPeer(ctx: RkvContext, state: ConsensusState, replica: number, message: RkvMessage): void {
  const name = state.setup.replicas[replica];
  if (name !== undefined) sendTo(ctx, name, message);
}

function toFollowers(ctx: RkvContext, state: ConsensusState, message: RkvMessage): void {
  state.setup.replicas.forEach((_name, replica) => {
    if (replica !== state.setup.replica) toPeer(ctx, state, replica, message);
  });
}

/** Leader: proposes `record` for `slot` at its ballot (it accepts it itself first). */
function propose(ctx: RkvContext, state: ConsensusState, slot: number, record: SlotRecord): void {
  const ballot = state.num(META.ballot);
  record.ballot = ballot;
  record.acks = 1 << state.setup.replica;
  record.chosen = state.majority <= 1;
  state.store(slot, record);
  toFollowers(ctx, state, {
    type: 'accept',
    from: state.setup.replica,
    ballot,
    slot,
    key: record.key,
    value: record.value,
    commitThrough: state.num(META.commit),
  });
}

/** Applies, in slot order, every entry ≤ the commit point that this replica holds as chosen. */
function applyReady(ctx: RkvContext, state: ConsensusState): void {
  const commit = state.num(META.commit);
  const commitBallot = state.num(META.commitBallot);
  let applied = state.num(META.applied);
  while (applied < commit) {
    const slot = applied + 1;
    const record = state.record(slot);
    // A follower applies only what it accepted at the commit's ballot (that leader's proposal);
    // the leader applies what it counted chosen. Anything else waits (no catch-up here).
    if (record === undefined) break;
    if (!(record.chosen || record.ballot === commitBallot)) break;
    sendTo(ctx, state.setup.memtable, {
      type: 'apply',
      slot,
      key: record.key,
      value: record.value,
      origin: record.origin,
    });
    state.drop(slot);
    applied = slot;
  }
  state.set(META.applied, applied);
}

function onPut(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'put'>): void {
  if (!state.isLeader || state.num(META.prepared) !== 1) {
    if (ctx.origin.kind !== 'none') {
      ctx.reply({
        type: 'refused',
        reason: state.isLeader
          ? 'the leader is still in phase 1; retry'
          : `not the leader; send puts to replica ${state.setup.leader}`,
      });
    }
    return;
  }
  const slot = state.num(META.nextSlot);
  state.set(META.nextSlot, slot + 1);
  propose(ctx, state, slot, {
    ballot: 0,
    acks: 0,
    chosen: false,
    key: message.key,
    value: message.value,
    origin: ctx.origin.kind === 'none' ? EMPTY : encodeOrigin(ctx.origin),
  });
  if (state.majority <= 1) advanceChosen(ctx, state);
}

/** Leader: moves the commit point over the chosen prefix, applies it, tells the followers. */
function advanceChosen(ctx: RkvContext, state: ConsensusState): void {
  let commit = state.num(META.commit);
  const before = commit;
  for (;;) {
    const record = state.record(commit + 1);
    if (record === undefined || !record.chosen) break;
    commit++;
  }
  if (commit === before) return;
  const ballot = state.num(META.ballot);
  state.set(META.commit, commit);
  state.set(META.commitBallot, ballot);
  applyReady(ctx, state);
  toFollowers(ctx, state, { type: 'commit', from: state.setup.replica, ballot, commitThrough: commit });
}

function onAccepted(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'accepted'>): void {
  if (!state.isLeader || message.ballot !== state.num(META.ballot)) return;
  const record = state.record(message.slot);
  if (record === undefined || record.chosen || record.ballot !== message.ballot) return;
  record.acks |= 1 << message.from;
  record.chosen = popcount(record.acks) >= state.majority;
  state.store(message.slot, record);
  if (record.chosen) advanceChosen(ctx, state);
}

/** Acceptor side of phase 2, and the piggybacked commit point. */
function onAccept(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'accept'>): void {
  const promised = state.num(META.promised);
  if (message.ballot < promised) {
    toPeer(ctx, state, message.from, {
      type: 'reject',
      from: state.setup.replica,
      ballot: message.ballot,
      promised,
    });
    return;
  }
  if (message.ballot > promised) state.set(META.promised, message.ballot);
  if (message.slot > state.num(META.applied)) {
    state.store(message.slot, {
      ballot: message.ballot,
      acks: 0,
      chosen: false,
      key: message.key,
      value: message.value,
      origin: EMPTY,
    });
  }
  toPeer(ctx, state, message.from, {
    type: 'accepted',
    from: state.setup.replica,
    ballot: message.ballot,
    slot: message.slot,
  });
  learn(ctx, state, message.ballot, message.commitThrough);
}

/** Follower: a leader at `ballot` says every slot ≤ `commitThrough` is chosen. */
function learn(ctx: RkvContext, state: ConsensusState, ballot: number, commitThrough: number): void {
  if (state.isLeader) return;
  if (commitThrough > state.num(META.commit) || ballot > state.num(META.commitBallot)) {
    state.set(META.commit, Math.max(commitThrough, state.num(META.commit)));
    state.set(META.commitBallot, Math.max(ballot, state.num(META.commitBallot)));
  }
  applyReady(ctx, state);
}

function onPrepare(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'prepare'>): void {
  const promised = state.num(META.promised);
  if (message.ballot < promised) {
    toPeer(ctx, state, message.from, {
      type: 'reject',
      from: state.setup.replica,
      ballot: message.ballot,
      promised,
    });
    return;
  }
  state.set(META.promised, message.ballot);
  const entries: RkvMsg<'promise'>['entries'][number][] = [];
  const applied = state.num(META.applied);
  // Records are keyed by slot, not listed: walk up from the applied point and stop after a run of
  // 1024 empty slots (more than any leader keeps in flight here: one accept per put).
  for (let slot = applied + 1, misses = 0; misses < 1024; slot++) {
    const record = state.record(slot);
    if (record === undefined) {
      misses++;
      continue;
    }
    misses = 0;
    entries.push({ slot, ballot: record.ballot, key: record.key, value: record.value });
  }
  toPeer(ctx, state, message.from, {
    type: 'promise',
    from: state.setup.replica,
    ballot: message.ballot,
    entries,
  });
}

function onPromise(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'promise'>): void {
  const ballot = state.num(META.ballot);
  if (!state.isLeader || message.ballot !== ballot || state.num(META.prepared) === 1) return;
  // P2c: per slot above the commit point, keep the value accepted at the highest ballot.
  for (const entry of message.entries) {
    if (entry.slot <= state.num(META.commit)) continue;
    const mine = state.record(entry.slot);
    if (mine === undefined || mine.ballot < entry.ballot) {
      state.store(entry.slot, {
        ballot: entry.ballot,
        acks: 0,
        chosen: false,
        key: entry.key,
        value: entry.value,
        origin: mine?.origin ?? EMPTY,
      });
    }
    if (entry.slot >= state.num(META.nextSlot)) state.set(META.nextSlot, entry.slot + 1);
  }
  const mask = state.num(META.promiseMask) | (1 << message.from);
  state.set(META.promiseMask, mask);
  if (popcount(mask) < state.majority) return;
  state.set(META.prepared, 1);
  ctx.log.info({ ballot }, 'rkv: phase 1 done; leading');
  // Re-propose everything reported above the commit point at our ballot; holes become no-ops.
  const next = state.num(META.nextSlot);
  for (let slot = state.num(META.commit) + 1; slot < next; slot++) {
    const record = state.record(slot) ?? {
      ballot: 0,
      acks: 0,
      chosen: false,
      key: EMPTY,
      value: EMPTY,
      origin: EMPTY,
    };
    propose(ctx, state, slot, record);
  }
}

function onSetup(
  ctx: RkvContext,
  meta: DmoNumberMap,
  setupMap: DmoHashMap,
  message: RkvMsg<'consensus-setup'>,
): void {
  if (setupMap.getString('setup') === undefined) {
    const group = message.replicas.length;
    if (message.replica >= group || message.leader >= group) {
      if (ctx.origin.kind !== 'none') {
        ctx.reply({
          type: 'refused',
          reason: `replica ${message.replica} and leader ${message.leader} must both be below the group size ${group}`,
        });
      }
      return;
    }
    setupMap.setString('setup', rkvMessages.encode(message));
    meta.set(META.nextSlot, 1);
    if (message.replica === message.leader) {
      const ballot = makeBallot(1, replicaId(message.leader));
      meta.set(META.ballot, ballot);
      meta.set(META.promised, ballot);
      meta.set(META.promiseMask, 1 << message.replica);
      const state = new ConsensusState(meta, DmoHashMap.open(ctx.dmo, rootOf(ctx, 'log')), message);
      if (state.majority <= 1) meta.set(META.prepared, 1);
      else toFollowers(ctx, state, { type: 'prepare', from: message.replica, ballot });
    }
  }
  if (ctx.origin.kind !== 'none') ctx.reply({ type: 'ready' });
}

/**
 * The consensus actor (one per replica; `any`: starts on the NIC, may migrate). Set up with
 * `consensus-setup`; the leader then runs phase 1 and serves `put`s.
 */
export const rkvConsensus = defineActor({
  name: 'rkv-consensus',
  messages: rkvMessages,
  replies: rkvMessages,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('meta', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('setup', DmoHashMap.create(ctx.dmo).rootId);
    ctx.setRoot('log', DmoHashMap.create(ctx.dmo, { initialCapacity: 256 }).rootId);
  },
  exec(ctx, message) {
    const meta = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'meta'));
    const setupMap = DmoHashMap.open(ctx.dmo, rootOf(ctx, 'setup'));
    if (message.type === 'consensus-setup') return onSetup(ctx, meta, setupMap, message);
    const bytes = setupMap.getString('setup');
    if (bytes === undefined) {
      ctx.log.warn({ type: message.type }, 'rkv: message before setup dropped');
      if (message.type === 'put' && ctx.origin.kind !== 'none') {
        ctx.reply({ type: 'refused', reason: 'the consensus actor is not set up yet' });
      }
      return;
    }
    const setup = rkvMessages.decode(bytes) as RkvMsg<'consensus-setup'>;
    const state = new ConsensusState(meta, DmoHashMap.open(ctx.dmo, rootOf(ctx, 'log')), setup);
    switch (message.type) {
      case 'put':
        return onPut(ctx, state, message);
      case 'accept':
        return onAccept(ctx, state, message);
      case 'accepted':
        return onAccepted(ctx, state, message);
      case 'commit':
        return learn(ctx, state, message.ballot, message.commitThrough);
      case 'prepare':
        return onPrepare(ctx, state, message);
      case 'promise':
        return onPromise(ctx, state, message);
      case 'reject':
        ctx.log.error(
          { ballot: message.ballot, promised: message.promised, from: message.from },
          'rkv: a replica promised a higher ballot; this deployment runs no new election',
        );
        return;
      default:
        ctx.log.warn({ type: message.type }, 'rkv: not a consensus message; dropped');
    }
  },
  cost: consensusWork,
});

// ---- declared work (the simulator's cost model; docs/apps/rkv-sim.md) ---------------------------

/** Decoding, dispatch and re-opening the DMO roots, for any message. */
export const RKV_BASE_INSTRUCTIONS = 600;
/** One DMO hash-map operation on a log record (hash, probe, copy the header). */
const LOG_RECORD_INSTRUCTIONS = 400;
/** Building and encoding one outgoing message. */
const SEND_INSTRUCTIONS = 250;
/** Copying or encoding payload bytes: 8 bytes per instruction. */
const PER_BYTE_INSTRUCTIONS = 1 / 8;

function consensusWork(message: RkvMessage): HandlerWork {
  const base = { ipc: 1.2, mpki: 2, workingSetBytes: 64 * 1024 };
  switch (message.type) {
    case 'put': {
      // Record the slot (2 map ops: read next slot, store), one accept per follower (2).
      const bytes = message.key.length + message.value.length;
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          2 * LOG_RECORD_INSTRUCTIONS +
          2 * SEND_INSTRUCTIONS +
          3 * bytes * PER_BYTE_INSTRUCTIONS,
      };
    }
    case 'accept': {
      const bytes = message.key.length + message.value.length;
      // Store the record, answer; the piggybacked commit usually applies one entry (read,
      // delete, one apply message carrying the value).
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          3 * LOG_RECORD_INSTRUCTIONS +
          2 * SEND_INSTRUCTIONS +
          3 * bytes * PER_BYTE_INSTRUCTIONS,
      };
    }
    case 'accepted':
      // Update the record; when chosen, apply it (read, delete, one apply) and send the commits.
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + 4 * LOG_RECORD_INSTRUCTIONS + 3 * SEND_INSTRUCTIONS,
      };
    case 'commit':
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + 2 * LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS,
      };
    case 'promise':
    case 'prepare': {
      const entries = message.type === 'promise' ? message.entries.length : 1;
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + entries * (LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS),
      };
    }
    default:
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS };
  }
}
