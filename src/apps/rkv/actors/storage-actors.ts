/**
 * RKV's LSM side on the simulated platform (iPipe §5 "RKV": "memtable (NIC, can migrate; on minor
 * compaction its memtable object migrates to the host and the compaction actor is told), SSTable
 * reader (host, pinned, on disk), compaction (host, pinned) … memtable misses go to the SSTable
 * reader"):
 *
 *   memtable    the skip-list memtable in its DMOs (DmoMemtable): applies each committed entry
 *               the consensus actor sends, answers the waiting client of a put, serves gets; a
 *               miss goes on to the SSTable reader with the client's origin, which answers it.
 *               Full (≥ limitBytes): the active memtable is frozen (kept, still read) and a new
 *               one started; the frozen one goes to the compaction actor as one `flush` message
 *               (its bytes cross PCIe: the object's move to the host) and is dropped only when the
 *               compaction actor says `flushed`, so a get never misses a write in flight.
 *   compaction  writes the flushed run to the modelled disk as a level-0 table (sim-disk.ts) and
 *               merges level 0 into level 1 once `level0Trigger` tables are there.
 *   sstable     reads the modelled disk in LSM order (level 0 newest first, level 1, base data).
 *
 * Reads are linearizable through the leader: a put is answered only once the leader's memtable
 * holds it, every get is served by the leader's memtable (or, after a miss, by storage that the
 * frozen memtable reached before it was dropped), and only while no other replica can lead: the
 * consensus actor forwards a get only under its lease (with timers), or the leader is fixed
 * (static mode, where the offload experiment sends gets straight here). See consensus-actor.ts.
 *
 * Deletes (messages.ts "Deletes"): an applied delete is a tombstone in the skip list; a get that
 * meets it answers not-found without asking the SSTable reader, and a flush carries it to disk
 * (sim-disk.ts drops it at the last level). Whether the key existed at the delete's slot is
 * decided by EVERY replica's memtable that applies the delete under a session, the same way: it
 * holds the key (value or tombstone) ⇒ at once; else it probes its SSTable reader. The disk must
 * still be as it was before the delete when the probe reads it: the probe takes a flush hold (see
 * "Flush holds"), so the memtable holding the tombstone cannot reach the disk before the probe
 * has read it.
 * Memtable ∪ disk at slot s is the log's state at s on every replica, so every replica decides the
 * same answer; the leader's memtable also tells the waiting client. Each memtable remembers it per
 * client (`answers`), so a retry that finds the delete applied (`del-again` from the consensus
 * actor, FIFO behind the `apply-del`) gets the same answer at whichever replica leads by then — a
 * new leader after a fail-over included. A retry that arrives while this memtable's probe for it is
 * still out is queued (`waiting`) and answered with the probe's answer, never DEL_UNKNOWN.
 *
 * The disk decides a probe at slot s only when it is behind s. Each flush carries the last slot the
 * memtable applied before it froze (`appliedSlot` → `frozenSlot` in meta; every piece of one table
 * carries it), and the disk keeps D, the largest one written (sim-disk.ts; the live LsmDisk keeps
 * it in its tables, durably with them). D < s ⇒ the disk holds no write of slot s or later, and
 * every write below s it lacks is in the memtables: in order without a crash; after a restart the
 * memtables re-apply the log's snapshot (every key ever written, at its slot) and every slot above
 * it, and after an install the snapshot's items at its slot — newer than any table already there.
 * D ≥ s happens only to a replica restarted from its log re-applying slots at or below what it had
 * flushed before the crash: the disk may hold later writes of the key, so the reader answers
 * DEL_UNKNOWN and the memtable remembers nothing (and tells its client, if any, DEL_UNKNOWN).
 * DEL_UNKNOWN remains for a replica that has no answer: one whose disk was ahead of the delete's
 * slot, one that installed a snapshot (folded deletes carry no answer), a stale retry of a client
 * that has moved on, and a probe whose disk could not be read.
 *
 * DBSIZE (messages.ts "DBSIZE"): the memtable, FIFO behind the applies (so at one point in log
 * order), counts the live keys of its active and frozen memtables (the active one shadows) and
 * sends all their keys to the SSTable reader, which adds the disk's live keys outside that set — a
 * scan of the whole store, O(keys stored), on the host core. The disk must not gain a newer table
 * meanwhile (it would count writes the memtable counted again, or ones past the point), so the
 * count takes a flush hold as a probe does ("Flush holds").
 *
 * SCAN (messages.ts "SCAN"): the memtable, FIFO behind the applies, walks its active and frozen
 * memtables from the scan's start in key order (the active one shadows), tombstones included, and
 * stops at the page's bounds — `limit` live entries, or `maxBytes` of entries — naming the first
 * entry it left out (`next`): its part is complete below it. It takes a flush hold ("Flush holds")
 * and hands its part to the SSTable reader, which merges it over the disk's range below that
 * point (the memtable's entries win; its tombstones hide the disk's values), cuts the page at
 * `limit` pairs or MAX_SCAN_PAGE_BYTES, answers the client and releases the hold (`scanned`).
 * Every handler's work is bounded by the page: the memtable by its bounds, the reader by the run
 * it got plus at most `scanStepBudget(limit)` disk entries visited, tombstones included — past
 * that it ends the page where the disk's read stopped (`next`, not done, possibly no pairs), so a
 * long run of deleted keys on disk costs several bounded pages, not one unbounded one.
 *
 * Flush holds. A probe, a count and a scan page each read the memtables in one handler and the
 * disk later, in the reader's; between the two no table may reach the disk whose contents the
 * memtable part did not include, or the answer would mix two points of the log. Each takes a hold
 * tagged with the freeze epoch (`freezes`: memtables frozen so far) and carried in `probe` /
 * `count-keys` / `scan-range`, echoed in `probed` / `counted` / `scanned`. The memtable frozen as
 * freeze f sends its tables only once no hold of an epoch below f is out; holds of epoch ≥ f were
 * taken while f was already frozen, so they read all of it, and its reaching the disk cannot
 * change their answer:
 *   probe   the memtables held neither the key nor a tombstone of it (else no probe), so table f
 *           holds nothing of the key: the probe finds on disk what it would have without it;
 *   count   the reader leaves out every key the memtables held, all of table f's among them;
 *   scan    the reader reads the disk only below the memtable part's `next`, and the part holds
 *           every entry of table f below it, each winning over the disk's entry of its key.
 * A hold of epoch e < f read f while it was still active (or not at all): f then holds writes past
 * the hold's point (the probed delete's own tombstone, say), so it waits. A full active memtable is
 * frozen at once even while holds are out, so new holds take the new epoch and never delay the
 * older memtable: its flush waits for at most the holds out when it froze, each one page, probe or
 * count — the hold no longer starves flushes when scans keep arriving. The reader answers every
 * hold-carrying message, also when it cannot serve it (not set up, no disk, a read that throws:
 * the client is refused, the hold released), or the memtable would never flush again. It answers
 * the memtable with the release message (`probed` DEL_UNKNOWN, `counted`, `scanned`, each with its
 * epoch), never a bare `refused`: that names no hold, and releasing the wrong epoch's could let a
 * table reach the disk under a read still in progress.
 *
 * DMO layout: memtable  active  DmoMemtable header (the skip list)
 *                       frozen  DmoMemtable header, while a flush is in flight (else no root)
 *                       setup   DmoHashMap "setup" → encoded memtable-setup
 *                       meta    DmoNumberMap  0: tables flushed, 1: table number in flight,
 *                                             3: entries of the frozen one sent, 4: freezes
 *                                             (the freeze epoch), 5: last slot applied, 6: that
 *                                             slot when the frozen one froze (its flushes carry it)
 *                       holds   DmoNumberMap  freeze epoch → flush holds out taken at it
 *                                             (created on first use)
 *                       answers DmoNumberMap  clientId → 2·seq + (1 if the key existed, else
 *                                             0) of the client's last delete this memtable
 *                                             decided (a retry's `del-again`). One entry per
 *                                             client that ever deleted under a session, on
 *                                             every replica, in NIC memory, never dropped:
 *                                             sessions are never retired (the consensus actor's
 *                                             session table grows the same way), so a
 *                                             deployment with many short-lived client ids
 *                                             grows it without bound (16 B + map overhead each)
 *                       waiting DmoHashMap    "clientId:seq" → queued retries' origins, while that
 *                                             delete's probe is out (created on first use)
 *             sstable / compaction: setup DmoHashMap "setup" → their encoded setup message
 */

import type { ActorContext, HandlerWork } from '../../../actor/index.ts';
import { defineActor } from '../../../actor/index.ts';
import { DmoHashMap, DmoNumberMap } from '../../../dmo/index.ts';
import type { ObjectId } from '../../../ids.ts';
import { encodeOrigin, readOrigin } from '../../../runtime/origin-codec.ts';
import { compareKeys } from '../lsm/bytes.ts';
import { DmoMemtable } from '../lsm/dmo-memtable.ts';
import type { LsmEntry } from '../lsm/memtable.ts';
import { RKV_BASE_INSTRUCTIONS, rkvRef } from './consensus-actor.ts';
import {
  DEL_ABSENT,
  DEL_EXISTED,
  DEL_UNKNOWN,
  isDeleteCommand,
  MAX_REFUSAL_REASON_BYTES,
  MAX_SCAN_LIMIT,
  MAX_SCAN_PAGE_BYTES,
  NO_LEADER,
  type RkvMessage,
  type RkvMsg,
  rkvMessages,
  SCAN_PAIR_OVERHEAD_BYTES,
} from './messages.ts';
import { decodeRun, diskKeyName, encodeRun, type RunEntry, type SimDisk, simDisk } from './sim-disk.ts';

type RkvContext = ActorContext<RkvMessage, RkvMessage>;

const EMPTY = new Uint8Array(0);

/**
 * flushSent: entries of the frozen memtable handed to the compaction actor so far (its pieces);
 * freezes: memtables frozen so far, the freeze epoch a flush hold is tagged with ("Flush holds").
 * appliedSlot: the last slot applied (an `apply` or `apply-del`); frozenSlot: appliedSlot when the
 * frozen memtable froze, which its flush pieces carry (see "Deletes" in the header).
 * Key 2 counted every hold out before holds had epochs; it is no longer written.
 */
const MEMTABLE_META = {
  tablesFlushed: 0,
  tableInFlight: 1,
  flushSent: 3,
  freezes: 4,
  appliedSlot: 5,
  frozenSlot: 6,
} as const;

/**
 * Most bytes of one `flush` run (encodeRun's bytes): a frozen memtable larger than this (the active
 * one grows while a flush is in flight) goes in several pieces, one level-0 table each, the next
 * once the last is written, so no run outgrows a live node's NIC↔host ring frame (1 MiB − 8 bytes).
 */
export const MAX_FLUSH_PIECE_BYTES = 768 * 1024;

function rootOf(ctx: RkvContext, name: string): ObjectId {
  const id = ctx.root(name);
  if (id === undefined) throw new Error(`rkv actor ${ctx.name}: root "${name}" missing (init did not run)`);
  return id;
}

function loadSetup<T extends RkvMessage['type']>(ctx: RkvContext, type: T): RkvMsg<T> | undefined {
  const bytes = DmoHashMap.open(ctx.dmo, rootOf(ctx, 'setup')).getString('setup');
  if (bytes === undefined) return undefined;
  const message = rkvMessages.decode(bytes);
  return message.type === type ? (message as RkvMsg<T>) : undefined;
}

/** Stores a setup message once; answers `ready` to whoever waits. */
function saveSetup(ctx: RkvContext, message: RkvMessage): void {
  const map = DmoHashMap.open(ctx.dmo, rootOf(ctx, 'setup'));
  if (map.getString('setup') === undefined) map.setString('setup', rkvMessages.encode(message));
  if (ctx.origin.kind !== 'none') ctx.reply({ type: 'ready' });
}

function refuseBeforeSetup(ctx: RkvContext, message: RkvMessage): void {
  ctx.log.warn({ type: message.type }, 'rkv: message before setup dropped');
  if (ctx.origin.kind !== 'none')
    ctx.reply({ type: 'refused', reason: `${ctx.name} is not set up yet`, leader: NO_LEADER });
}

/**
 * The setup gate of RKV's storage and log actors: a `setupType` message is stored (once) and
 * answered `ready`; any other message gets the stored setup, or is refused while there is none.
 * Returns the setup only when `message` is to be handled now.
 */
export function gateOnSetup<T extends RkvMessage['type']>(
  ctx: RkvContext,
  message: RkvMessage,
  setupType: T,
): RkvMsg<T> | undefined {
  if (message.type === setupType) {
    saveSetup(ctx, message);
    return undefined;
  }
  const setup = loadSetup(ctx, setupType);
  if (setup === undefined) refuseBeforeSetup(ctx, message);
  return setup;
}

// ---- the memtable actor --------------------------------------------------------------------------

/**
 * Freezes a full active memtable and sends it to the compaction actor (see the header), or, while
 * a frozen one still has pieces to go and none is in flight, sends its next piece. A full memtable
 * is frozen at once even while holds are out: holds taken after the freeze read it whole and do
 * not stop its flush, so only holds already out when it froze delay it ("Flush holds").
 */
function maybeFlush(ctx: RkvContext, setup: RkvMsg<'memtable-setup'>, active: DmoMemtable): void {
  let frozen = ctx.root('frozen');
  if (frozen === undefined && active.approximateBytes < setup.limitBytes) return;
  const meta = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'meta'));
  if (frozen === undefined) {
    meta.set(MEMTABLE_META.freezes, (meta.get(MEMTABLE_META.freezes) ?? 0) + 1);
    ctx.setRoot('frozen', active.rootId);
    meta.set(MEMTABLE_META.frozenSlot, meta.get(MEMTABLE_META.appliedSlot) ?? 0);
    ctx.setRoot('active', DmoMemtable.create(ctx.dmo).rootId);
    meta.set(MEMTABLE_META.flushSent, 0);
    frozen = active.rootId;
  } else if ((meta.get(MEMTABLE_META.tableInFlight) ?? 0) !== 0) return;
  if (holdsBefore(ctx, meta.get(MEMTABLE_META.freezes) ?? 0)) return;
  sendFlushPiece(ctx, setup, meta, DmoMemtable.open(ctx.dmo, frozen));
}

/**
 * Flush holds out, by the freeze epoch they were taken at: epoch → count ("Flush holds"). Created
 * on first use: a memtable that never scans, probes or counts (the offload experiment) keeps its
 * DMO layout.
 */
function holdMap(ctx: RkvContext): DmoNumberMap {
  const root = ctx.root('holds');
  if (root !== undefined) return DmoNumberMap.open(ctx.dmo, root);
  const map = DmoNumberMap.create(ctx.dmo);
  ctx.setRoot('holds', map.rootId);
  return map;
}

/** Takes a flush hold at the current freeze epoch; returns the epoch (the message carries it). */
function takeHold(ctx: RkvContext): number {
  const epoch = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'meta')).get(MEMTABLE_META.freezes) ?? 0;
  holdMap(ctx).increment(epoch);
  return epoch;
}

/** A scan, probe or key count answered: the flush hold it took at `epoch` is released. */
function releaseHold(ctx: RkvContext, epoch: number): void {
  const holds = holdMap(ctx);
  const count = holds.get(epoch) ?? 0;
  if (count <= 0) {
    ctx.log.warn({ epoch }, 'rkv: a flush hold released twice or never taken; ignored');
    return;
  }
  if (count === 1) holds.delete(epoch);
  else holds.set(epoch, count - 1);
}

/** Whether a hold taken before freeze `epoch` (at a smaller epoch) is still out. */
function holdsBefore(ctx: RkvContext, epoch: number): boolean {
  const root = ctx.root('holds');
  if (root === undefined) return false;
  for (const [held, count] of DmoNumberMap.open(ctx.dmo, root).entries()) {
    if (held < epoch && count > 0) return true;
  }
  return false;
}

/** The frozen memtable's next piece (at most MAX_FLUSH_PIECE_BYTES of run) to the compaction actor. */
function sendFlushPiece(
  ctx: RkvContext,
  setup: RkvMsg<'memtable-setup'>,
  meta: DmoNumberMap,
  frozen: DmoMemtable,
): void {
  const from = meta.get(MEMTABLE_META.flushSent) ?? 0;
  const entries: RunEntry[] = [];
  let bytes = 4;
  let index = 0;
  for (const entry of frozen.entries()) {
    if (index++ < from) continue;
    const value = entry.kind === 'put' ? entry.value.slice() : undefined;
    const size = 5 + entry.key.length + (value?.length ?? 0);
    if (entries.length > 0 && bytes + size > MAX_FLUSH_PIECE_BYTES) break;
    entries.push({ key: entry.key.slice(), value });
    bytes += size;
  }
  const table = (meta.get(MEMTABLE_META.tablesFlushed) ?? 0) + 1;
  meta.set(MEMTABLE_META.tableInFlight, table);
  meta.set(MEMTABLE_META.tablesFlushed, table);
  meta.set(MEMTABLE_META.flushSent, from + entries.length);
  const to = rkvRef(ctx, setup.compaction);
  if (to === undefined) {
    ctx.log.error({ compaction: setup.compaction }, 'rkv: no compaction actor; the flush waits');
    return;
  }
  ctx.send(
    to,
    {
      type: 'flush',
      table,
      entries: entries.length,
      run: encodeRun(entries),
      slot: meta.get(MEMTABLE_META.frozenSlot) ?? 0,
    },
    { origin: 'none' },
  );
}

/**
 * Applies a committed delete: a tombstone at `slot`. Whether the key held a value just before is
 * decided here on every replica that applies the delete under a session (`clientId` > 0; see
 * "Deletes" in the header): from the memtable when it holds the key (a value or a tombstone), else
 * from the SSTable reader by a probe — the flush hold in maybeFlush keeps the disk at its
 * pre-delete state until the probe is answered. The answer goes to the waiting client (the
 * leader's, `origin`) and is remembered for a retry; a rebuild's delete (no session, nobody waits)
 * decides nothing.
 */
function memtableDelete(
  ctx: RkvContext,
  setup: RkvMsg<'memtable-setup'>,
  active: DmoMemtable,
  command: {
    readonly slot: number;
    readonly clientId: number;
    readonly seq: number;
    readonly key: Uint8Array;
  },
  origin: Uint8Array,
): void {
  const { slot, key } = command;
  const decides = origin.length > 0 || command.clientId > 0;
  let held: boolean | undefined;
  if (decides) {
    for (const root of [ctx.root('active'), ctx.root('frozen')]) {
      if (root === undefined) continue;
      const entry = DmoMemtable.open(ctx.dmo, root).get(key);
      if (entry === undefined) continue;
      held = entry.kind === 'put';
      break;
    }
  }
  active.delete(key, slot);
  if (!decides) return;
  if (held !== undefined) {
    decideDelete(ctx, command.clientId, command.seq, slot, held, origin);
    return;
  }
  const reader = rkvRef(ctx, setup.sstable);
  if (reader === undefined) {
    if (origin.length > 0)
      answerOrigin(ctx, origin, { type: 'refused', reason: 'no SSTable reader', leader: NO_LEADER });
    return;
  }
  const hold = takeHold(ctx);
  // A retry that comes (del-again) before the probe's answer waits for it (see `waitingRetries`).
  if (command.clientId > 0) waitingRetries(ctx).setString(waitingKey(command.clientId, command.seq), EMPTY);
  ctx.send(
    reader,
    { type: 'probe', slot, clientId: command.clientId, seq: command.seq, key, origin, hold },
    { origin: 'self' },
  );
}

/**
 * Retries of deletes whose probe is still out: "clientId:seq" → the retries' origins, each as
 * [u32 length][origin] (little-endian); an entry exists from the probe's send to its answer, so a
 * `del-again` that finds none and no remembered answer has no answer coming. Created on first use:
 * a memtable that never probes for a session (the offload experiment) keeps its DMO layout.
 */
function waitingRetries(ctx: RkvContext): DmoHashMap {
  const root = ctx.root('waiting');
  if (root !== undefined) return DmoHashMap.open(ctx.dmo, root);
  const map = DmoHashMap.create(ctx.dmo);
  ctx.setRoot('waiting', map.rootId);
  return map;
}

function waitingKey(clientId: number, seq: number): string {
  return `${clientId}:${seq}`;
}

/** Queues a retry's origin behind its delete's probe. */
function addWaiting(map: DmoHashMap, key: string, origin: Uint8Array, queued: Uint8Array): void {
  const bytes = new Uint8Array(queued.length + 4 + origin.length);
  bytes.set(queued, 0);
  new DataView(bytes.buffer).setUint32(queued.length, origin.length, true);
  bytes.set(origin, queued.length + 4);
  map.setString(key, bytes);
}

/** Answers every retry queued behind session (clientId, seq)'s probe with `existed`, and forgets them. */
function answerWaiting(ctx: RkvContext, clientId: number, seq: number, existed: number): void {
  if (clientId <= 0 || ctx.root('waiting') === undefined) return;
  const map = waitingRetries(ctx);
  const key = waitingKey(clientId, seq);
  const queued = map.getString(key);
  if (queued === undefined) return;
  map.deleteString(key);
  const view = new DataView(queued.buffer, queued.byteOffset, queued.byteLength);
  for (let at = 0; at + 4 <= queued.length; ) {
    const length = view.getUint32(at, true);
    answerOrigin(ctx, queued.subarray(at + 4, at + 4 + length), { type: 'del-ok', slot: 0, existed });
    at += 4 + length;
  }
}

/**
 * A delete decided: the client's answer remembered (`answers`: clientId → 2·seq + (1 if it
 * existed), unless a later delete of the client's is already there), the waiting client (if any)
 * answered, and any retries queued behind the probe too.
 */
function decideDelete(
  ctx: RkvContext,
  clientId: number,
  seq: number,
  slot: number,
  existed: boolean,
  origin: Uint8Array,
): void {
  const code = existed ? DEL_EXISTED : DEL_ABSENT;
  if (clientId > 0) {
    const answers = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'answers'));
    const last = answers.get(clientId);
    // Probes may be answered out of order (the reader is not exclusive): keep the newest.
    if (last === undefined || Math.floor(last / 2) <= seq) answers.set(clientId, 2 * seq + (existed ? 1 : 0));
    answerWaiting(ctx, clientId, seq, code);
  }
  if (origin.length > 0) answerOrigin(ctx, origin, { type: 'del-ok', slot, existed: code });
}

/**
 * A retry of an applied delete: the remembered answer; while this memtable's probe for it is out,
 * queued until the probe's answer; DEL_UNKNOWN when no answer is here or coming (see `del-again`).
 */
function answerAgain(ctx: RkvContext, message: RkvMsg<'del-again'>): void {
  const answer = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'answers')).get(message.clientId);
  if (answer !== undefined && Math.floor(answer / 2) === message.seq) {
    // The low bit is whether the key existed (decideDelete), not a DEL_* code.
    const existed = answer % 2 === 1 ? DEL_EXISTED : DEL_ABSENT;
    answerOrigin(ctx, message.origin, { type: 'del-ok', slot: 0, existed });
    return;
  }
  if (ctx.root('waiting') !== undefined) {
    const map = waitingRetries(ctx);
    const key = waitingKey(message.clientId, message.seq);
    const queued = map.getString(key);
    if (queued !== undefined) {
      addWaiting(map, key, message.origin, queued);
      return;
    }
  }
  answerOrigin(ctx, message.origin, { type: 'del-ok', slot: 0, existed: DEL_UNKNOWN });
}

function answerOrigin(ctx: RkvContext, origin: Uint8Array, message: RkvMessage): void {
  const decoded = readOrigin(origin, 0);
  if (decoded === undefined) ctx.log.error({ type: message.type }, 'rkv: undecodable origin');
  else ctx.replyTo(decoded.origin, message);
}

/**
 * DBSIZE at this memtable: its live keys, and every key it holds to the SSTable reader, which adds
 * the disk's other live keys (see "DBSIZE" in the header); flushes are held until `counted`.
 */
function memtableCount(ctx: RkvContext, setup: RkvMsg<'memtable-setup'>): void {
  if (ctx.origin.kind === 'none') return;
  const reader = rkvRef(ctx, setup.sstable);
  if (reader === undefined) {
    ctx.reply({ type: 'refused', reason: 'no SSTable reader', leader: NO_LEADER });
    return;
  }
  const held = new Map<string, RunEntry>();
  let memtableKeys = 0;
  for (const root of [ctx.root('active'), ctx.root('frozen')]) {
    if (root === undefined) continue;
    for (const entry of DmoMemtable.open(ctx.dmo, root).entries()) {
      const name = diskKeyName(entry.key);
      // The active memtable is newer: its entry decides a key both hold.
      if (held.has(name)) continue;
      held.set(name, { key: entry.key.slice(), value: undefined });
      if (entry.kind === 'put') memtableKeys++;
    }
  }
  ctx.send(
    reader,
    {
      type: 'count-keys',
      memtableKeys,
      // Keys only (as tombstones): the reader needs which keys the memtable decided, not values.
      run: encodeRun([...held.values()]),
      origin: encodeOrigin(ctx.origin),
      hold: takeHold(ctx),
    },
    { origin: 'self' },
  );
}

/** A scan's page limit, clamped to [1, MAX_SCAN_LIMIT] (a bad number: 1, so a page still moves on). */
export function scanLimit(limit: number): number {
  return Number.isFinite(limit) && limit >= 1 ? Math.min(Math.floor(limit), MAX_SCAN_LIMIT) : 1;
}

/** A scan's page bytes, clamped to MAX_SCAN_PAGE_BYTES (0 or a bad number: that). */
export function scanPageBytes(maxBytes: number): number {
  return Number.isFinite(maxBytes) && maxBytes > 0
    ? Math.min(maxBytes, MAX_SCAN_PAGE_BYTES)
    : MAX_SCAN_PAGE_BYTES;
}

/** Whether `key` is at or past a scan's end (an empty end: none). */
function pastEnd(key: Uint8Array, end: Uint8Array): boolean {
  return end.length > 0 && compareKeys(key, end) >= 0;
}

/**
 * SCAN at this memtable (see "SCAN" in the header): its entries of the range from `start`, both
 * memtables merged (the active one shadows), cut at the page's bounds; flushes held until
 * `scanned`.
 */
function memtableScan(ctx: RkvContext, setup: RkvMsg<'memtable-setup'>, message: RkvMsg<'scan'>): void {
  if (ctx.origin.kind === 'none') return;
  const reader = rkvRef(ctx, setup.sstable);
  if (reader === undefined) {
    ctx.reply({ type: 'refused', reason: 'no SSTable reader', leader: NO_LEADER });
    return;
  }
  const limit = scanLimit(message.limit);
  const maxBytes = scanPageBytes(message.maxBytes);
  const { start, end } = message;
  const cursors: Iterator<LsmEntry>[] = [];
  for (const root of [ctx.root('active'), ctx.root('frozen')]) {
    if (root !== undefined) cursors.push(DmoMemtable.open(ctx.dmo, root).entries(start));
  }
  const heads = cursors.map((cursor) => cursor.next());
  const entries: RunEntry[] = [];
  let live = 0;
  let bytes = 0;
  let cut = false;
  let next: Uint8Array = EMPTY;
  for (;;) {
    // The smallest key at the heads; on a tie the first cursor (the active memtable) decides.
    let pick = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i] as IteratorResult<LsmEntry>;
      if (head.done === true) continue;
      const chosen = pick < 0 ? undefined : (heads[pick] as IteratorYieldResult<LsmEntry>).value;
      if (chosen === undefined || compareKeys(head.value.key, chosen.key) < 0) pick = i;
    }
    if (pick < 0) break;
    const entry = (heads[pick] as IteratorYieldResult<LsmEntry>).value;
    if (pastEnd(entry.key, end)) break;
    const size =
      entry.key.length + (entry.kind === 'put' ? entry.value.length : 0) + SCAN_PAIR_OVERHEAD_BYTES;
    if (live >= limit || (entries.length > 0 && bytes + size > maxBytes)) {
      cut = true;
      next = entry.key.slice();
      break;
    }
    entries.push({ key: entry.key.slice(), value: entry.kind === 'put' ? entry.value.slice() : undefined });
    bytes += size;
    if (entry.kind === 'put') live++;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i] as IteratorResult<LsmEntry>;
      if (head.done !== true && compareKeys(head.value.key, entry.key) === 0)
        heads[i] = (cursors[i] as Iterator<LsmEntry>).next();
    }
  }
  for (const cursor of cursors) cursor.return?.();
  ctx.send(
    reader,
    {
      type: 'scan-range',
      start,
      end,
      limit,
      maxBytes,
      run: encodeRun(entries),
      cut,
      next,
      origin: encodeOrigin(ctx.origin),
      hold: takeHold(ctx),
    },
    { origin: 'self' },
  );
}

/**
 * A conditional put's read of its key (messages.ts "Conditional puts"), FIFO behind the applies:
 * the memtables decide a key they hold; a miss goes on to the SSTable reader, which answers the
 * consensus actor. The consensus actor's lock keeps every write of the key out of the log until
 * it has the answer, so no flush can carry a newer state of the key to the disk meanwhile.
 */
function memtableCondCheck(ctx: RkvContext, setup: RkvMsg<'memtable-setup'>, key: Uint8Array): void {
  if (ctx.origin.kind === 'none') return;
  for (const root of [ctx.root('active'), ctx.root('frozen')]) {
    if (root === undefined) continue;
    const entry = DmoMemtable.open(ctx.dmo, root).get(key);
    if (entry === undefined) continue;
    ctx.reply({ type: 'cond-state', key, exists: entry.kind === 'put' });
    return;
  }
  const reader = rkvRef(ctx, setup.sstable);
  if (reader === undefined) {
    ctx.log.error({ sstable: setup.sstable }, 'rkv: no SSTable reader; a conditional put waits');
    return;
  }
  ctx.send(reader, { type: 'cond-check', key });
}

/**
 * Records the slot of an apply: the next frozen memtable's flush carries the last one (a rebuild's
 * snapshot items come at the snapshot's slot, so a table of them says the disk is at that slot).
 */
function noteApplied(ctx: RkvContext, slot: number): void {
  const meta = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'meta'));
  if (slot > (meta.get(MEMTABLE_META.appliedSlot) ?? 0)) meta.set(MEMTABLE_META.appliedSlot, slot);
}

function memtableGet(ctx: RkvContext, setup: RkvMsg<'memtable-setup'>, key: Uint8Array): void {
  const tables = [ctx.root('active'), ctx.root('frozen')];
  for (const root of tables) {
    if (root === undefined) continue;
    const entry = DmoMemtable.open(ctx.dmo, root).get(key);
    if (entry === undefined) continue;
    if (ctx.origin.kind === 'none') return;
    ctx.reply(
      entry.kind === 'put'
        ? { type: 'value', found: true, value: entry.value }
        : { type: 'value', found: false, value: new Uint8Array(0) },
    );
    return;
  }
  // A miss: the SSTable reader answers whoever waits (the origin travels with the send).
  const reader = rkvRef(ctx, setup.sstable);
  if (reader === undefined) {
    if (ctx.origin.kind !== 'none')
      ctx.reply({ type: 'refused', reason: 'no SSTable reader', leader: NO_LEADER });
    return;
  }
  ctx.send(reader, { type: 'get', key });
}

/**
 * The memtable actor (one per replica; `any`: starts on the NIC, may migrate). Set up with
 * `memtable-setup`; `memtable-load` fills it with pre-existing data; then `apply` from the
 * consensus actor and `get` from clients.
 */
export const rkvMemtable = defineActor({
  name: 'rkv-memtable',
  messages: rkvMessages,
  replies: rkvMessages,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('active', DmoMemtable.create(ctx.dmo).rootId);
    ctx.setRoot('setup', DmoHashMap.create(ctx.dmo).rootId);
    ctx.setRoot('meta', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('answers', DmoNumberMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const setup = gateOnSetup(ctx, message, 'memtable-setup');
    if (setup === undefined) return;
    const active = DmoMemtable.open(ctx.dmo, rootOf(ctx, 'active'));
    switch (message.type) {
      case 'get':
        return memtableGet(ctx, setup, message.key);
      case 'apply': {
        if (isDeleteCommand(message)) {
          // A rebuild (restart, install): no session, nobody waits.
          noteApplied(ctx, message.slot);
          const command = { slot: message.slot, clientId: 0, seq: 0, key: message.value };
          memtableDelete(ctx, setup, active, command, message.origin);
          return maybeFlush(ctx, setup, active);
        }
        noteApplied(ctx, message.slot);
        if (message.key.length > 0) active.put(message.key, message.value, message.slot);
        if (message.origin.length > 0) {
          const decoded = readOrigin(message.origin, 0);
          if (decoded === undefined) ctx.log.error({ slot: message.slot }, 'rkv: undecodable origin');
          else ctx.replyTo(decoded.origin, { type: 'put-ok', slot: message.slot });
        }
        return maybeFlush(ctx, setup, active);
      }
      case 'memtable-load':
        message.items.forEach((item, i) => {
          active.put(item.key, item.value, message.firstSequence + i);
        });
        if (ctx.origin.kind !== 'none') ctx.reply({ type: 'ready' });
        return maybeFlush(ctx, setup, active);
      case 'apply-del':
        noteApplied(ctx, message.slot);
        memtableDelete(ctx, setup, active, message, message.origin);
        return maybeFlush(ctx, setup, active);
      case 'del-again':
        return answerAgain(ctx, message);
      case 'dbsize':
        return memtableCount(ctx, setup);
      case 'cond-check':
        return memtableCondCheck(ctx, setup, message.key);
      case 'scan':
        return memtableScan(ctx, setup, message);
      case 'scanned':
        releaseHold(ctx, message.hold);
        return maybeFlush(ctx, setup, active);
      case 'counted':
        releaseHold(ctx, message.hold);
        if (message.origin.length > 0)
          answerOrigin(ctx, message.origin, { type: 'size', keys: message.keys });
        return maybeFlush(ctx, setup, active);
      case 'probed': {
        releaseHold(ctx, message.hold);
        if (message.existed === DEL_UNKNOWN) {
          // The disk could not decide (ahead of the slot) or not be read (the client was told):
          // nothing to remember; retries queued behind the probe learn that it took effect.
          if (message.origin.length > 0)
            answerOrigin(ctx, message.origin, { type: 'del-ok', slot: message.slot, existed: DEL_UNKNOWN });
          answerWaiting(ctx, message.clientId, message.seq, DEL_UNKNOWN);
        } else {
          const existed = message.existed === DEL_EXISTED;
          decideDelete(ctx, message.clientId, message.seq, message.slot, existed, message.origin);
        }
        return maybeFlush(ctx, setup, active);
      }
      case 'flushed': {
        const meta = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'meta'));
        const frozen = ctx.root('frozen');
        if (frozen === undefined || meta.get(MEMTABLE_META.tableInFlight) !== message.table) return;
        meta.set(MEMTABLE_META.tableInFlight, 0);
        const table = DmoMemtable.open(ctx.dmo, frozen);
        // More pieces to go: the next leaves now (or once a probe is answered).
        if ((meta.get(MEMTABLE_META.flushSent) ?? 0) < table.entryCount)
          return maybeFlush(ctx, setup, active);
        table.destroy();
        ctx.setRoot('frozen', undefined);
        // Writes may have filled the new memtable while the flush was in flight.
        return maybeFlush(ctx, setup, active);
      }
      default:
        ctx.log.warn({ type: message.type }, 'rkv: not a memtable message; dropped');
    }
  },
  cost: memtableWork,
});

// ---- the SSTable reader --------------------------------------------------------------------------

/** The messages that carry a memtable's flush hold; each must be answered, or flushes stop. */
type HoldMessage = RkvMsg<'probe'> | RkvMsg<'count-keys'> | RkvMsg<'scan-range'>;

function isHoldMessage(message: RkvMessage): message is HoldMessage {
  return message.type === 'probe' || message.type === 'count-keys' || message.type === 'scan-range';
}

/**
 * Entries one scan page may visit on the disk, tombstones included: past it the page ends with a
 * continuation, so a page over a long run of deleted keys is bounded too (see "SCAN").
 */
export function scanStepBudget(limit: number): number {
  return 4 * scanLimit(limit) + 1024;
}

/**
 * A hold-carrying message the reader cannot serve (not set up, no disk, the disk threw): its client
 * (if any) is refused with `reason`, and the memtable still gets the answer that releases the hold
 * — without it the memtable's flushes would stop for good. A probe answers DEL_UNKNOWN: the delete
 * is applied, its client heard the refusal, a retry learns it took effect.
 */
function refuseHold(ctx: RkvContext, message: HoldMessage, reason: string): void {
  if (message.origin.length > 0)
    answerOrigin(ctx, message.origin, { type: 'refused', reason: fitReason(reason), leader: NO_LEADER });
  if (ctx.origin.kind === 'none') return;
  const { hold } = message;
  if (message.type === 'probe') {
    const { slot, clientId, seq } = message;
    ctx.reply({ type: 'probed', slot, clientId, seq, existed: DEL_UNKNOWN, origin: EMPTY, hold });
  } else if (message.type === 'count-keys') ctx.reply({ type: 'counted', keys: 0, origin: EMPTY, hold });
  else ctx.reply({ type: 'scanned', hold });
}

const utf8 = new TextEncoder();

/** `reason` cut to what `refused.reason` may carry (an error's message can be long). */
function fitReason(reason: string): string {
  if (utf8.encode(reason).length <= MAX_REFUSAL_REASON_BYTES) return reason;
  let chars = reason.length;
  while (chars > 0 && utf8.encode(`${reason.slice(0, chars)}…`).length > MAX_REFUSAL_REASON_BYTES) chars--;
  return `${reason.slice(0, chars)}…`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The SSTable reader (one per replica, pinned to the host): memtable misses, from the modelled disk. */
export const rkvSstableReader = defineActor({
  name: 'rkv-sstable',
  messages: rkvMessages,
  replies: rkvMessages,
  placement: 'host',
  exclusive: false,
  init(ctx) {
    ctx.setRoot('setup', DmoHashMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    if (isHoldMessage(message) && loadSetup(ctx, 'sstable-setup') === undefined) {
      ctx.log.warn({ type: message.type }, 'rkv: message before setup refused');
      refuseHold(ctx, message, `${ctx.name} is not set up yet; retry once the replica has started`);
      return;
    }
    const setup = gateOnSetup(ctx, message, 'sstable-setup');
    if (setup === undefined) return;
    const disk = simDisk(setup.disk);
    if (isHoldMessage(message)) {
      if (disk === undefined) {
        ctx.log.error({ disk: setup.disk }, 'rkv: the disk is not registered');
        refuseHold(ctx, message, `no disk ${setup.disk}`);
        return;
      }
      try {
        if (message.type === 'count-keys') readerCount(ctx, disk, message);
        else if (message.type === 'scan-range') readerScan(ctx, disk, message);
        else readerProbe(ctx, disk, message);
      } catch (error) {
        // A damaged or unreadable table (LsmCorruptTableError, LsmIoError on a live node): every
        // handler above reads before it answers, so nothing was answered yet.
        ctx.log.error({ type: message.type, error: describeError(error) }, 'rkv: the disk read failed');
        refuseHold(
          ctx,
          message,
          `${ctx.name} could not read its disk (${describeError(error)}); repair its data directory`,
        );
      }
      return;
    }
    if (message.type === 'cond-check') {
      if (disk === undefined) ctx.log.error({ disk: setup.disk }, 'rkv: the disk is not registered');
      else if (ctx.origin.kind !== 'none')
        ctx.reply({
          type: 'cond-state',
          key: message.key,
          exists: disk.lookup(message.key).value !== undefined,
        });
      return;
    }
    if (message.type !== 'get') return;
    if (disk === undefined) {
      ctx.log.error({ disk: setup.disk }, 'rkv: the disk is not registered');
      if (ctx.origin.kind !== 'none')
        ctx.reply({ type: 'refused', reason: `no disk ${setup.disk}`, leader: NO_LEADER });
      return;
    }
    if (ctx.origin.kind === 'none') return;
    let found: Uint8Array | undefined;
    try {
      found = disk.lookup(message.key).value;
    } catch (error) {
      // A damaged table: the client hears why rather than waiting for an answer that never comes.
      ctx.log.error({ type: message.type, error: describeError(error) }, 'rkv: the disk read failed');
      const reason = `${ctx.name} could not read its disk (${describeError(error)}); repair its data directory`;
      ctx.reply({ type: 'refused', reason: fitReason(reason), leader: NO_LEADER });
      return;
    }
    ctx.reply({ type: 'value', found: found !== undefined, value: found ?? new Uint8Array(0) });
  },
  cost: sstableWork,
});

/** A delete's probe: did the key hold a value on the disk (as it was before the delete)? */
function readerProbe(ctx: RkvContext, disk: SimDisk, message: RkvMsg<'probe'>): void {
  if (ctx.origin.kind === 'none') return;
  if (disk.appliedSlot >= message.slot) {
    // The disk holds writes of the delete's slot or later (a replica restarted past a later
    // flush re-applies older slots): it is not the state before the delete, so it decides
    // nothing; the memtable answers its client, if any, DEL_UNKNOWN and remembers nothing.
    const { slot, clientId, seq, origin, hold } = message;
    ctx.reply({ type: 'probed', slot, clientId, seq, existed: DEL_UNKNOWN, origin, hold });
    return;
  }
  const found = disk.lookup(message.key).value;
  ctx.reply({
    type: 'probed',
    slot: message.slot,
    clientId: message.clientId,
    seq: message.seq,
    existed: found !== undefined ? DEL_EXISTED : DEL_ABSENT,
    origin: message.origin,
    hold: message.hold,
  });
}

/** DBSIZE at the reader: the memtable's live keys plus the disk's outside the memtable's keys. */
function readerCount(ctx: RkvContext, disk: SimDisk, message: RkvMsg<'count-keys'>): void {
  if (ctx.origin.kind === 'none') return;
  const decided = new Set<string>();
  for (const entry of decodeRun(message.run)) decided.add(diskKeyName(entry.key));
  ctx.reply({
    type: 'counted',
    keys: message.memtableKeys + disk.countLiveKeys(decided),
    origin: message.origin,
    hold: message.hold,
  });
}

/**
 * SCAN at the reader: the memtable's part merged over the disk's range below where that part
 * stops (memtable entries win, its tombstones hide), cut at the page's bounds or where the disk's
 * read ran out of its step budget (`scanStepBudget`); the page to the client, `scanned` to the
 * memtable (its flush hold released). Reads everything before it answers anything.
 */
function readerScan(ctx: RkvContext, disk: SimDisk, message: RkvMsg<'scan-range'>): void {
  const memtable = decodeRun(message.run);
  const diskEnd = message.cut ? message.next : message.end.length > 0 ? message.end : undefined;
  const fromDisk = disk.range(message.start, diskEnd, scanStepBudget(message.limit));
  const pairs: { key: Uint8Array; value: Uint8Array }[] = [];
  let bytes = 0;
  let stoppedAt: Uint8Array | undefined;
  try {
    let at = 0;
    let diskHead = fromDisk.next();
    for (;;) {
      const mem = memtable[at];
      // The disk's read stopped at its budget: every disk key below `value` was read, none above.
      const diskStop = diskHead.done === true ? diskHead.value : undefined;
      if (diskStop !== undefined && (mem === undefined || compareKeys(mem.key, diskStop) >= 0)) {
        stoppedAt = diskStop;
        break;
      }
      const onDisk = diskHead.done === true ? undefined : diskHead.value;
      if (mem === undefined && onDisk === undefined) break;
      let key: Uint8Array;
      let value: Uint8Array | undefined;
      const order = mem === undefined ? 1 : onDisk === undefined ? -1 : compareKeys(mem.key, onDisk[0]);
      if (order <= 0 && mem !== undefined) {
        key = mem.key;
        value = mem.value;
        at++;
        // The memtable's entry is newer than the disk's of the same key.
        if (order === 0) diskHead = fromDisk.next();
      } else {
        const [diskKey, diskValue] = onDisk as [Uint8Array, Uint8Array];
        key = diskKey;
        value = diskValue;
        diskHead = fromDisk.next();
      }
      if (value === undefined) continue;
      const size = key.length + value.length + SCAN_PAIR_OVERHEAD_BYTES;
      if (pairs.length >= message.limit || (pairs.length > 0 && bytes + size > message.maxBytes)) {
        stoppedAt = key;
        break;
      }
      pairs.push({ key, value });
      bytes += size;
    }
  } finally {
    fromDisk.return(undefined);
  }
  const page: RkvMessage =
    stoppedAt !== undefined
      ? { type: 'scan-page', pairs, done: false, next: stoppedAt }
      : message.cut
        ? { type: 'scan-page', pairs, done: false, next: message.next }
        : { type: 'scan-page', pairs, done: true, next: EMPTY };
  answerOrigin(ctx, message.origin, page);
  if (ctx.origin.kind !== 'none') ctx.reply({ type: 'scanned', hold: message.hold });
}

// ---- the compaction actor ------------------------------------------------------------------------

/** The compaction actor (one per replica, pinned to the host): minor and level-0 compactions. */
export const rkvCompaction = defineActor({
  name: 'rkv-compaction',
  messages: rkvMessages,
  replies: rkvMessages,
  placement: 'host',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('setup', DmoHashMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const setup = gateOnSetup(ctx, message, 'compaction-setup');
    if (setup === undefined) return;
    if (message.type !== 'flush') return;
    const disk = simDisk(setup.disk);
    if (disk === undefined) {
      ctx.log.error({ disk: setup.disk }, 'rkv: the disk is not registered; the flush is lost');
      return;
    }
    disk.writeLevel0(message.run, message.slot);
    if (disk.level0Tables >= setup.level0Trigger) disk.compactLevel0();
    const memtable = rkvRef(ctx, setup.memtable);
    if (memtable !== undefined)
      ctx.send(memtable, { type: 'flushed', table: message.table }, { origin: 'none' });
  },
  cost: compactionWork,
});

// ---- declared work (docs/apps/rkv-sim.md) --------------------------------------------------------

/** A skip-list search in the DMO memtable: ~20 levels × a 16-byte compare and a link load. */
const SKIPLIST_SEARCH_INSTRUCTIONS = 1400;
/** An insert: the search, a node allocation, linking the levels, the byte count. */
const SKIPLIST_INSERT_INSTRUCTIONS = 2200;
/** Encoding an entry into a flush run, amortised over the puts (each entry is flushed once). */
const FLUSH_ENCODE_INSTRUCTIONS = 150;
/** An SSTable point read: bloom probes, index binary search, one 4 KiB block checksum + search. */
const SSTABLE_READ_INSTRUCTIONS = 3200;
/** One entry of a scan: a cursor step, a key compare against the bound, a copy into the answer. */
const SCAN_ENTRY_INSTRUCTIONS = 120;
/** Building a table entry: index, bloom bits, block append. */
const TABLE_BUILD_INSTRUCTIONS_PER_ENTRY = 400;
/** Bytes per second the modelled disk writes sequentially (a datacenter NVMe drive). */
export const DISK_WRITE_BYTES_PER_SEC = 1.5e9;
/** One fsync of a finished table. */
export const DISK_FSYNC_NS = 20_000;
const PER_BYTE_INSTRUCTIONS = 1 / 8;
/**
 * One DMO hash-map look-up or update (`answers`, `waiting`, `holds`; a "clientId:seq" key built
 * for `waiting`): hash, bucket walk, compare; the same as one of consensus-actor.ts's record ops.
 */
const HASH_OP_INSTRUCTIONS = 400;
/** Releasing a flush hold: the count read, then written or deleted (`releaseHold`). */
const RELEASE_HOLD_INSTRUCTIONS = 2 * HASH_OP_INSTRUCTIONS;

function memtableWork(message: RkvMessage): HandlerWork {
  const base = { ipc: 1.0, mpki: 4, workingSetBytes: 1024 * 1024 };
  switch (message.type) {
    case 'get':
      // Active then (rarely) frozen; a hit copies the value into the answer.
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + SKIPLIST_SEARCH_INSTRUCTIONS + 64 };
    case 'apply-del':
    case 'apply': {
      const bytes =
        message.type === 'apply' ? message.key.length + message.value.length : 2 * message.key.length;
      // A delete under a session (every replica's) or one someone waits for first looks the key
      // up in the memtables (`existed`); a miss costs the SSTable reader a probe (sstableWork).
      const lookup =
        message.type === 'apply-del' && (message.origin.length > 0 || message.clientId > 0)
          ? SKIPLIST_SEARCH_INSTRUCTIONS
          : 0;
      // Under a session, on every replica: decided here, the answer remembered (`answers` read and
      // written) and queued retries looked up (`waiting`); sent to a probe, the `waiting` entry
      // made and a flush hold taken. Three hash operations either way, about.
      const sessionWork = message.type === 'apply-del' && message.clientId > 0 ? 3 * HASH_OP_INSTRUCTIONS : 0;
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          lookup +
          sessionWork +
          SKIPLIST_INSERT_INSTRUCTIONS +
          FLUSH_ENCODE_INSTRUCTIONS +
          2 * bytes * PER_BYTE_INSTRUCTIONS,
      };
    }
    case 'cond-check':
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + SKIPLIST_SEARCH_INSTRUCTIONS };
    case 'dbsize':
      // A walk of the memtables, each key copied into the run for the reader (not known here: a
      // full memtable's worth is the bound; what the scan costs is under-declared, see the docs).
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + SKIPLIST_SEARCH_INSTRUCTIONS };
    case 'scan':
      // The seek into each memtable, then up to a page of entries walked and copied into the run
      // (declared at the page's bounds: what the range holds is not known from the message).
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          2 * SKIPLIST_SEARCH_INSTRUCTIONS +
          scanLimit(message.limit) * SCAN_ENTRY_INSTRUCTIONS +
          scanPageBytes(message.maxBytes) * PER_BYTE_INSTRUCTIONS,
      };
    case 'memtable-load':
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + message.items.length * SKIPLIST_INSERT_INSTRUCTIONS,
      };
    case 'del-again':
      // `answers` read; on a miss `waiting` read and, while a probe is out, written back.
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + 3 * HASH_OP_INSTRUCTIONS };
    case 'probed':
      // The hold released, then `answers` read and written and `waiting` read and deleted
      // (decideDelete, answerWaiting), on every replica that probed.
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + RELEASE_HOLD_INSTRUCTIONS + 4 * HASH_OP_INSTRUCTIONS,
      };
    case 'scanned':
    case 'counted':
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + RELEASE_HOLD_INSTRUCTIONS };
    default:
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS };
  }
}

function sstableWork(message: RkvMessage): HandlerWork {
  if (message.type === 'count-keys') {
    // Decoding the memtable's keys; the disk scan itself is not declared (its size is not known
    // from the message): DBSIZE is an operator's command, not part of the modelled workload.
    return {
      instructions: RKV_BASE_INSTRUCTIONS + message.run.length * PER_BYTE_INSTRUCTIONS * 8,
      ipc: 0.9,
      mpki: 12,
      workingSetBytes: 64 * 1024 * 1024,
    };
  }
  if (message.type === 'scan-range') {
    // A seek in every table (as a point read), decoding the memtable's run, then merging up to a
    // page of the disk's pairs and copying them into the answer (at the page's bounds).
    return {
      instructions:
        RKV_BASE_INSTRUCTIONS +
        SSTABLE_READ_INSTRUCTIONS +
        message.run.length * PER_BYTE_INSTRUCTIONS * 8 +
        scanStepBudget(message.limit) * SCAN_ENTRY_INSTRUCTIONS +
        message.maxBytes * PER_BYTE_INSTRUCTIONS,
      ipc: 0.9,
      mpki: 12,
      workingSetBytes: 64 * 1024 * 1024,
    };
  }
  if (message.type !== 'get' && message.type !== 'probe' && message.type !== 'cond-check')
    return { instructions: RKV_BASE_INSTRUCTIONS };
  // Cold data: index and block reads miss the caches far more than the NIC-side structures.
  return {
    instructions: RKV_BASE_INSTRUCTIONS + SSTABLE_READ_INSTRUCTIONS,
    ipc: 0.9,
    mpki: 12,
    workingSetBytes: 64 * 1024 * 1024,
  };
}

function compactionWork(message: RkvMessage): HandlerWork {
  if (message.type !== 'flush') return { instructions: RKV_BASE_INSTRUCTIONS };
  const bytes = message.run.length;
  return {
    instructions:
      RKV_BASE_INSTRUCTIONS +
      message.entries * TABLE_BUILD_INSTRUCTIONS_PER_ENTRY +
      bytes * PER_BYTE_INSTRUCTIONS,
    ipc: 1.2,
    mpki: 3,
    workingSetBytes: bytes,
    fixedNs: (bytes / DISK_WRITE_BYTES_PER_SEC) * 1e9 + DISK_FSYNC_NS,
  };
}
