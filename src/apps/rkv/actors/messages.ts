/**
 * The messages of RKV's four actors on the simulated platform (iPipe §5 "RKV": a consensus actor
 * and a memtable actor on the NIC, an SSTable reader and a compaction actor pinned to the host).
 * One codec for all of them, as DT's actors share one: any definition narrows any ref.
 *
 *   client ─put─▶ consensus(leader) ─accept─▶ consensus(followers) ─accepted─▶ leader
 *          leader: majority ⇒ chosen ⇒ ─apply(origin)─▶ memtable ─put-ok─▶ client   (and ─commit─▶ followers)
 *   client ─get─▶ memtable(leader): hit ─value─▶ client; miss ─get─▶ sstable reader ─value─▶ client
 *   memtable full ⇒ ─flush(run)─▶ compaction: level-0 table on the modelled disk ─flushed─▶ memtable
 *
 * Keys are 16 bytes (`rkvKey`: "k" and 15 decimal digits of the key's index), so a key names its
 * index in the pre-loaded data set (see sim-disk.ts).
 *
 * Deletes: a client's `del` is its own message, but once in the log a delete travels in the same
 * fields as a put — `accept`, log entries (promise, catch-up, log-write, recover), rebuilding
 * `apply`s and snapshot items carry it as key = empty, value = the deleted key
 * (`isDeleteCommand`). Every put has a non-empty key and a no-op has both empty, so no put's bytes
 * change (the offload experiment's frames are byte-identical) and every path that moves log
 * entries moves deletes.
 *
 *   client ─del─▶ consensus(leader) … chosen as a put is …
 *          ─apply-del─▶ memtable: tombstone; k in the memtable ⇒ ─del-ok─▶ client; else ─probe─▶
 *          sstable reader ─probed─▶ memtable ─del-ok─▶ client (no flush leaves while a probe is out)
 *          followers: the same decision (memtable, else a probe), remembered, answered to nobody
 *   retry of an applied delete (at any replica that leads by then):
 *          consensus ─del-again(clientId, seq)─▶ memtable ─del-ok─▶ client (the remembered answer,
 *          or once the probe still out for it is answered)
 *
 * Conditional puts (SET NX / XX) are decided by the leader before they enter the log, which only
 * ever holds the plain put they become (or nothing): every replica then applies the same effect,
 * and the log, snapshots and rebuilds are as for puts. The leader takes a per-key lock, checks that
 * no command on the key is proposed and not yet applied, and reads the key at its applied point
 * (FIFO behind the applies, a probe of the SSTable reader on a miss); while the lock is held no
 * other write of the key is proposed, so the read and the put it becomes are atomic in log order:
 *
 *   client ─cput─▶ consensus(leader, lease; lock key) ─cond-check─▶ memtable [─cond-check─▶ sstable]
 *          ─cond-state─▶ consensus (unlock): holds ⇒ propose put(clientId, seq) … ─put-ok─▶ client
 *                                            else ─cond-ok(written false)─▶ client
 *
 * DBSIZE: a lease read, as a get; the memtable counts its own live keys and hands its keys to the
 * SSTable reader, which adds the disk's live keys the memtable does not hold (a scan of the store;
 * flushes held meanwhile, as for a delete's probe):
 *
 *   client ─dbsize─▶ consensus(leader, lease) ─dbsize─▶ memtable ─count-keys(keys)─▶ sstable reader
 *          ─counted─▶ memtable ─size─▶ client
 *
 * SCAN: one page of the live pairs with start ≤ key < end, a lease read as a get (FIFO behind the
 * applies at the leader's memtable, so at one point in the log). The memtable collects its part of
 * the range (active and frozen memtables, newest wins, tombstones kept: they hide the disk), bounded
 * by the page's limit and bytes — `next` then says where its part stopped — and hands it to the
 * SSTable reader with a flush hold (as DBSIZE); the reader merges it over the disk's range and
 * answers the client one page, at most `limit` pairs and MAX_SCAN_PAGE_BYTES, with the key the next
 * page starts at (or done). Pages of one scan are each linearizable, not one snapshot:
 *
 *   client ─scan─▶ consensus(leader, lease) ─scan─▶ memtable ─scan-range(run, next)─▶ sstable reader
 *          ─scan-page─▶ client   (and ─scanned─▶ memtable: the flush hold is released)
 */

import { field, type MessageOf, messages } from '../../../actor/index.ts';

/** Bytes of every key of the workload (the paper's 16-byte keys). */
export const RKV_KEY_BYTES = 16;
/** Longest key the wire carries. */
export const MAX_KEY_BYTES = 64;
/** Largest value the wire carries. */
export const MAX_VALUE_BYTES = 8192;
/** Largest flushed memtable run one message carries (a frozen memtable, encoded). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;
/** Longest actor name in a setup message. */
export const MAX_NAME_BYTES = 63;
/** Most replicas in a group (ballots reserve 1024 ids; the codec and bit masks keep ≤ 16). */
export const MAX_REPLICAS = 16;
/** Most pairs one SCAN page carries (`scan.limit` is clamped to it). */
export const MAX_SCAN_LIMIT = 1024;
/**
 * Most bytes of pairs one SCAN page carries (`scan.maxBytes` is clamped to it), counted as key +
 * value + SCAN_PAIR_OVERHEAD_BYTES per pair: a page and its headers fit one 65 000-byte datagram
 * of the live cluster, and a single pair of the largest key and value always fits.
 */
export const MAX_SCAN_PAGE_BYTES = 48 * 1024;
/** What one pair costs a page beyond its key and value bytes (the codec's length prefixes). */
export const SCAN_PAIR_OVERHEAD_BYTES = 8;
/** Most entries one promise reports, or one load carries. */
const MAX_LIST_ITEMS = 1 << 16;

const KEY = field.bytes({ maxBytes: MAX_KEY_BYTES });
const VALUE = field.bytes({ maxBytes: MAX_VALUE_BYTES });
const NAME = field.string({ maxBytes: MAX_NAME_BYTES });
/** Slots, ballots and counts: integers below 2^53 carried as f64. */
/** Most UTF-8 bytes of `refused.reason`. */
export const MAX_REFUSAL_REASON_BYTES = 200;
const COUNT = field.f64();
const REPLICA = field.u8();
/** A client's origin, encoded (origin-codec.ts); empty when nobody waits. */
const ORIGIN = field.bytes({ maxBytes: 512 });

/** A log entry as a promise or a catch-up carries it; `chosen`: the sender knows it chosen. */
const LOG_ENTRY = field.struct({
  slot: COUNT,
  ballot: COUNT,
  chosen: field.bool(),
  clientId: COUNT,
  seq: COUNT,
  key: KEY,
  value: VALUE,
});
const ITEM = field.struct({ key: KEY, value: VALUE });
/** A message the durable-log actor sends on once its write is synced (to: an actor name). */
const FORWARD = field.struct({ to: NAME, message: field.bytes({ maxBytes: MAX_RUN_BYTES }) });
const SESSION = field.struct({ clientId: COUNT, seq: COUNT });

/** The RKV codec: clients, replicas, the memtable path, the storage path and setup. */
export const rkvMessages = messages({
  // ---- clients ------------------------------------------------------------------------------
  /**
   * Read a key: to the consensus actor of the replica the client believes leads (a lease read,
   * forwarded to its memtable), or straight to the leader's memtable (the offload experiment).
   */
  get: { key: KEY },
  /**
   * Write a key; sent to the leader's consensus actor (committed through Multi-Paxos first).
   * `clientId` > 0 with a per-client increasing `seq` makes it exactly-once (a retry keeps both);
   * `clientId` 0: no session.
   */
  put: { clientId: COUNT, seq: COUNT, key: KEY, value: VALUE },
  /** A get's answer (from the memtable actor on a hit, the SSTable reader on a miss). */
  value: { found: field.bool(), value: VALUE },
  /** A put's answer, once the command is chosen and applied to the leader's memtable. */
  'put-ok': { slot: COUNT },
  /**
   * A request refused (a put or get at a replica that does not lead, or without a lease; a get
   * before setup). `leader`: the replica the refuser believes leads, NO_LEADER when it knows none.
   */
  refused: { reason: field.string({ maxBytes: MAX_REFUSAL_REASON_BYTES }), leader: REPLICA },

  // ---- setup (each answered with `ready`) --------------------------------------------------------
  'consensus-setup': {
    replica: REPLICA,
    leader: REPLICA,
    /** The consensus actors' instance names, by replica id. */
    replicas: field.list(NAME, { maxItems: MAX_REPLICAS }),
    memtable: NAME,
    /**
     * The leader's heartbeat period H in ns; 0: no timers at all — a fixed leader (`leader`), no
     * election, no retransmission, no lease (the offload experiment's fault-free mode).
     */
    heartbeatNs: COUNT,
    /** T: a follower that hears no leader for a time in [T, 2T) stands; the read lease's length. */
    electionTimeoutNs: COUNT,
    /** Log entries the leader keeps for a replica that does not apply them before calling it a laggard. */
    maxLogEntries: COUNT,
    /** Test-only mutations (UNSAFE_* in consensus-actor.ts) that make the protocol unsafe; 0 in use. */
    unsafe: field.u8(),
    /**
     * The replica's durable-log actor (log-actor.ts); empty: no durable log — the acceptor state
     * lives only in NIC memory and a crash is not survivable (the offload experiment's default).
     */
    log: NAME,
    /**
     * Pre-vote (with timers): a follower whose election timeout ran out first asks whether a
     * majority would promise it, changing nothing anywhere, and stands only if so — so a replica
     * that was cut off does not come back with a higher round that deposes a healthy leader.
     */
    preVote: field.bool(),
  },
  'memtable-setup': {
    /** Flush (minor compaction) once the active memtable holds this many bytes. */
    limitBytes: COUNT,
    sstable: NAME,
    compaction: NAME,
  },
  /** Pre-existing committed data loaded into the memtable before the run (every replica alike). */
  'memtable-load': { items: field.list(ITEM, { maxItems: MAX_LIST_ITEMS }), firstSequence: COUNT },
  'sstable-setup': { disk: NAME },
  'compaction-setup': { disk: NAME, memtable: NAME, level0Trigger: field.u8() },
  ready: {},
  /** The durable-log actor: which modelled log it writes, and whose consensus actor it serves. */
  'log-setup': {
    log: NAME,
    consensus: NAME,
    /** Bytes of items and sessions one `snapshot-chunk` carries (0: SNAPSHOT_CHUNK_BYTES). */
    snapshotChunkBytes: COUNT,
  },

  // ---- consensus ↔ its durable log (log-actor.ts) -------------------------------------------------
  /**
   * One synced write: raise the promise (0: unchanged), store the entries, fold the chosen prefix
   * up to truncateThrough (0: none) into the snapshot; THEN send each forward (an encoded RKV
   * message) to its actor — a promise or accepted leaves only once what it announces is durable.
   */
  'log-write': {
    promised: COUNT,
    entries: field.list(LOG_ENTRY, { maxItems: MAX_LIST_ITEMS }),
    truncateThrough: COUNT,
    forwards: field.list(FORWARD, { maxItems: MAX_LIST_ITEMS }),
  },
  /** The log to its consensus actor: the entries applied through `applied` are durable. */
  'log-synced': { applied: COUNT },
  /**
   * A (re)started consensus actor asks its log for part `part` of everything durable; answered
   * with that `recover` part (the next part is asked for once one is installed).
   */
  'log-read': { part: COUNT },
  /**
   * Part `part` of `parts` of the durable state (sim-log.ts): every part carries the promise and
   * the truncation point; the sessions, the snapshot's items, then the entries above it are cut in
   * order into parts of at most the log's chunk budget of bytes (at least one item each), so no
   * answer outgrows a NIC↔host ring frame however large the state (log-actor.ts).
   */
  recover: {
    part: COUNT,
    parts: COUNT,
    promised: COUNT,
    truncated: COUNT,
    /** 1 when nothing was ever written (the replica's first start). */
    empty: field.bool(),
    sessions: field.list(SESSION, { maxItems: MAX_LIST_ITEMS }),
    snapshot: field.list(ITEM, { maxItems: MAX_LIST_ITEMS }),
    entries: field.list(LOG_ENTRY, { maxItems: MAX_LIST_ITEMS }),
  },

  // ---- Multi-Paxos between consensus actors ---------------------------------------------------
  /** Phase 1a: the candidate holds every chosen entry ≤ fromSlot (its applied point). */
  prepare: { from: REPLICA, ballot: COUNT, fromSlot: COUNT },
  /** Phase 1b: the acceptor's entries above the prepare's fromSlot. */
  promise: {
    from: REPLICA,
    ballot: COUNT,
    entries: field.list(LOG_ENTRY, { maxItems: MAX_LIST_ITEMS }),
  },
  /** Phase 2a for one slot; piggybacks the leader's commit point. */
  accept: {
    from: REPLICA,
    ballot: COUNT,
    slot: COUNT,
    clientId: COUNT,
    seq: COUNT,
    key: KEY,
    value: VALUE,
    commitThrough: COUNT,
  },
  /** Phase 2b; `applied`: the acceptor's applied point (the leader truncates below every one). */
  accepted: { from: REPLICA, ballot: COUNT, slot: COUNT, applied: COUNT },
  /** A prepare, accept or heartbeat refused: below the promise, a sticky follower, or truncated. */
  reject: { from: REPLICA, ballot: COUNT, promised: COUNT },
  /**
   * The learn round and the heartbeat: every slot ≤ commitThrough is chosen; each replica may drop
   * its entries ≤ truncateThrough once applied. `sentNs` > 0: a heartbeat, to be acknowledged.
   */
  commit: {
    from: REPLICA,
    ballot: COUNT,
    commitThrough: COUNT,
    truncateThrough: COUNT,
    sentNs: COUNT,
  },
  /** A heartbeat's acknowledgement (the leader's lease counts these), with the applied point. */
  'heartbeat-ack': { from: REPLICA, ballot: COUNT, sentNs: COUNT, applied: COUNT },
  /** A follower missing chosen entries asks the leader for slots fromSlot..toSlot. */
  'catchup-request': { from: REPLICA, fromSlot: COUNT, toSlot: COUNT },
  /**
   * Chosen entries for a catch-up; `truncated`: the sender's truncation point (a requester below
   * it cannot be caught up from the log: it is a laggard, see consensus-actor.ts).
   */
  catchup: {
    from: REPLICA,
    truncated: COUNT,
    entries: field.list(LOG_ENTRY, { maxItems: MAX_LIST_ITEMS }),
  },
  /** The consensus actor's own timer (heartbeat, election timeout, retransmission). */
  tick: {},

  // ---- consensus → memtable -------------------------------------------------------------------
  /** One committed entry, in slot order; `origin` is the client to answer (leader only). */
  apply: { slot: COUNT, key: KEY, value: VALUE, origin: ORIGIN },

  // ---- the storage path -----------------------------------------------------------------------
  /**
   * A frozen memtable, as a sorted run (sim-disk.ts encodeRun), for the compaction actor. `slot`:
   * the last slot the memtable applied before it froze (every piece of one table carries it): the
   * disk records the largest it wrote (`SimDisk.appliedSlot`), which decides deletes' probes.
   */
  flush: {
    table: COUNT,
    entries: COUNT,
    run: field.bytes({ maxBytes: MAX_RUN_BYTES }),
    slot: COUNT,
  },
  /** The compaction actor wrote table `table`: the memtable may drop its frozen copy. */
  flushed: { table: COUNT },

  // ---- state transfer for a laggard (consensus-actor.ts "state transfer"; new variants stay last:
  // tags are positions, and the offload experiment's frames must not change) ---------------------
  /**
   * A laggard (truncated past) asks a replica for chunk `chunk` of a snapshot at `slot`; slot 0:
   * whatever snapshot the sender has now (a new transfer). Retried each tick until answered.
   */
  'snapshot-request': { from: REPLICA, slot: COUNT, chunk: COUNT },
  /**
   * The sender's consensus actor to its durable-log actor: send chunk `chunk` of the checkpoint at
   * `slot` (0: the current one) to the consensus actor `to`; the checkpoint must be at or above
   * `atLeast` (the sender's truncation point), else the log takes a newer one.
   */
  'snapshot-read': { to: NAME, sender: REPLICA, slot: COUNT, chunk: COUNT, atLeast: COUNT },
  /**
   * One chunk of the state machine at `slot` (the applied point A): items are key → value of every
   * write applied ≤ A (sim-log.ts), sessions the sessions table at A; `chunks` in all. A chunk
   * holds at most the log's chunk budget of bytes (or one item, if a single item is larger).
   */
  'snapshot-chunk': {
    from: REPLICA,
    slot: COUNT,
    chunk: COUNT,
    chunks: COUNT,
    items: field.list(ITEM, { maxItems: MAX_LIST_ITEMS }),
    sessions: field.list(SESSION, { maxItems: MAX_LIST_ITEMS }),
  },
  /**
   * The receiver's consensus actor to its durable-log actor, one per chunk received: the log stages
   * them (a snapshot file being written); with all `chunks` of `slot` staged it replaces its
   * snapshot and sessions with them, drops the entries ≤ slot and syncs — one atomic switch — THEN
   * answers `snapshot-installed`. A crash before the switch leaves the old log as it was.
   */
  'log-install': {
    slot: COUNT,
    chunk: COUNT,
    chunks: COUNT,
    items: field.list(ITEM, { maxItems: MAX_LIST_ITEMS }),
    sessions: field.list(SESSION, { maxItems: MAX_LIST_ITEMS }),
  },
  /** The log to its consensus actor: the snapshot at `slot` is durable (items and sessions: its size). */
  'snapshot-installed': { slot: COUNT, items: COUNT, sessions: COUNT },

  // ---- pre-vote (consensus-setup.preVote) ---------------------------------------------------------
  /** Would you promise `ballot` for fromSlot now? Nothing changes at the receiver. */
  'pre-vote': { from: REPLICA, ballot: COUNT, fromSlot: COUNT },
  /** The answer: `granted` if a prepare would be promised; `promised`: the receiver's promise. */
  'pre-vote-reply': { from: REPLICA, ballot: COUNT, granted: field.bool(), promised: COUNT },

  // ---- deletes (see "Deletes" in the header; last, so the tags above keep their positions) -------
  /**
   * Delete a key; sent to the leader's consensus actor, committed through Multi-Paxos like a put
   * (same exactly-once session: `clientId` > 0 with a per-client increasing `seq`, shared with
   * the client's puts). Answered `del-ok` once the tombstone is in the leader's memtable.
   */
  del: { clientId: COUNT, seq: COUNT, key: KEY },
  /**
   * A delete's answer. `existed`: DEL_ABSENT, DEL_EXISTED (whether the key held a value just
   * before the delete took effect, at its slot), or DEL_UNKNOWN: a retry of a delete that had
   * already taken effect, whose answer this replica's memtable does not hold (see `del-again`:
   * only after a restart or a snapshot install of the replica that answers).
   */
  'del-ok': { slot: COUNT, existed: field.u8() },
  /**
   * The memtable to its SSTable reader: did `key` hold a value on disk? Asked for a delete the
   * memtable could not decide; answered `probed` (the memtable holds its flushes meanwhile; `hold`:
   * the hold's freeze epoch, echoed in `probed`: storage-actors.ts "Flush holds").
   */
  probe: { slot: COUNT, clientId: COUNT, seq: COUNT, key: KEY, origin: ORIGIN, hold: COUNT },
  /**
   * The SSTable reader's answer to a probe; `origin`: the client the memtable answers (empty at a
   * follower). `existed`: DEL_ABSENT or DEL_EXISTED, or DEL_UNKNOWN when the reader could not read
   * its disk (it told the client so) or its disk holds tables from the probe's slot or later (a
   * replica restarted past a later flush: the disk may hold later writes of the key, so the memtable
   * answers its client, if any, DEL_UNKNOWN); either way the memtable remembers nothing.
   */
  probed: {
    slot: COUNT,
    clientId: COUNT,
    seq: COUNT,
    existed: field.u8(),
    origin: ORIGIN,
    hold: COUNT,
  },
  /**
   * A committed delete to the memtable (every replica, in slot order, as `apply`; rebuilds after a
   * restart or an install send `apply` with the delete's wire form instead): carries the session
   * so that every replica's memtable decides whether the key existed and remembers it for a retry
   * that reaches it after a fail-over (`clientId` 0: nothing to remember). Whether the disk can
   * decide a key the memtables do not hold is the SSTable reader's to say (`probed`).
   */
  'apply-del': { slot: COUNT, clientId: COUNT, seq: COUNT, key: KEY, origin: ORIGIN },
  /**
   * The consensus actor to its memtable: a retry of session (clientId, seq), already applied;
   * answer it `del-ok` with the answer the memtable decided when it applied it (every replica's
   * memtable keeps each client's last), once its probe is answered if it is still out; DEL_UNKNOWN
   * when it has none (this replica restarted or installed a snapshot since, or the client moved on).
   */
  'del-again': { clientId: COUNT, seq: COUNT, origin: ORIGIN },

  // ---- DBSIZE (see "DBSIZE" in the header; last, so the tags above keep their positions) ------------
  /**
   * Count the live keys: to the consensus actor of the replica the client believes leads (a lease
   * read, as `get`), forwarded to its memtable with the client's origin; answered `size`.
   */
  dbsize: {},
  /**
   * The memtable to its SSTable reader: count the disk's live keys, leaving out every key of `run`
   * (the memtables' keys, sim-disk.ts encodeRun form: the memtable decided those), and add
   * `memtableKeys` (the memtables' live keys). Answered `counted`; the memtable holds its flushes
   * meanwhile (`hold`: the hold's freeze epoch, echoed in `counted`).
   */
  'count-keys': {
    memtableKeys: COUNT,
    run: field.bytes({ maxBytes: MAX_RUN_BYTES }),
    origin: ORIGIN,
    hold: COUNT,
  },
  /** The SSTable reader's answer to `count-keys`: the live keys in all; `origin`: who waits. */
  counted: { keys: COUNT, origin: ORIGIN, hold: COUNT },
  /** DBSIZE's answer: the live keys of this replica's store at one point in its log. */
  size: { keys: COUNT },

  // ---- conditional puts (see "Conditional puts" in the header; last, as above) --------------------
  /**
   * SET NX (`condition` COND_NX: write only if the key is absent) or SET XX (COND_XX: only if it
   * is present); to the leader's consensus actor, under the client's session as a put. Answered
   * `put-ok` when it wrote, `cond-ok` with written = false when the condition did not hold.
   */
  cput: { clientId: COUNT, seq: COUNT, key: KEY, value: VALUE, condition: field.u8() },
  /**
   * The leader's consensus actor to its memtable (and on a miss, the memtable to its SSTable
   * reader, the origin travelling on): does `key` hold a value? Answered `cond-state`.
   */
  'cond-check': { key: KEY },
  /** The answer to `cond-check`, to the consensus actor that asked. */
  'cond-state': { key: KEY, exists: field.bool() },
  /**
   * A conditional put's answer when it did not write (`written` false: Redis's nil), or a retry
   * found its first attempt applied (`written` true: it wrote, under the client's session).
   */
  'cond-ok': { written: field.bool() },

  // ---- bounded bursts (consensus-actor.ts "bounded bursts"; last, as above) ---------------------
  /**
   * The consensus actor to itself: carry on with work one handler run left over to keep its
   * outputs under RKV_BURST_BYTES (applies to the memtable, log-install chunks, an install's
   * rebuild of the memtable).
   */
  resume: {},

  // ---- SCAN (see "SCAN" in the header; last, as above) --------------------------------------------
  /**
   * One page of a range scan: the live pairs with start ≤ key < end (an empty `end`: no upper
   * bound; an empty `start`: from the first key) in byte order, at most `limit` pairs (1 …
   * MAX_SCAN_LIMIT) and about `maxBytes` (clamped to MAX_SCAN_PAGE_BYTES; 0: that). To the consensus
   * actor of the replica the client believes leads (a lease read, as `get`), forwarded to its
   * memtable with the client's origin; answered `scan-page`.
   */
  scan: { start: KEY, end: KEY, limit: COUNT, maxBytes: COUNT },
  /**
   * The memtable to its SSTable reader: the memtables' entries of the range from `start` (run:
   * encodeRun form, tombstones included, newest memtable decided), complete below `next` — `cut`:
   * the memtable stopped at its bound and `next` is its first entry left out (the page may not go
   * past it); else its part reaches the scan's end. The memtable holds its flushes until
   * `scanned` (`hold`: the hold's freeze epoch, echoed there).
   */
  'scan-range': {
    start: KEY,
    end: KEY,
    limit: COUNT,
    maxBytes: COUNT,
    run: field.bytes({ maxBytes: 4 * MAX_SCAN_PAGE_BYTES }),
    cut: field.bool(),
    next: KEY,
    origin: ORIGIN,
    hold: COUNT,
  },
  /** The SSTable reader to the memtable: the page is answered, the flush hold `hold` released. */
  scanned: { hold: COUNT },
  /**
   * A SCAN page: `pairs` in key order; `done`: the range is exhausted, else the next page starts at
   * `next` (every live key of [start, next) is in `pairs`; a page may be empty and not done).
   */
  'scan-page': {
    pairs: field.list(ITEM, { maxItems: MAX_SCAN_LIMIT }),
    done: field.bool(),
    next: KEY,
  },
});

/** `cput.condition`: SET NX — write only if the key holds no value. */
export const COND_NX = 1;
/** `cput.condition`: SET XX — write only if the key holds a value. */
export const COND_XX = 2;

/** `del-ok.existed`: the key held no value when the delete took effect. */
export const DEL_ABSENT = 0;
/** `del-ok.existed`: the key held a value when the delete took effect. */
export const DEL_EXISTED = 1;
/** `del-ok.existed`: a retry of a delete that already took effect, whose answer is not at hand. */
export const DEL_UNKNOWN = 2;

/**
 * Whether a wire command (an accept, a log entry, an apply, a snapshot item) is a delete: the key
 * field is empty and the value field holds the deleted key. An empty key with an empty value is a
 * no-op, and every put has a non-empty key, so puts keep their bytes (see the header).
 */
export function isDeleteCommand(command: { readonly key: Uint8Array; readonly value: Uint8Array }): boolean {
  return command.key.length === 0 && command.value.length > 0;
}

/** The key a wire command writes or deletes (empty for a no-op). */
export function commandKey(command: { readonly key: Uint8Array; readonly value: Uint8Array }): Uint8Array {
  return command.key.length > 0 ? command.key : command.value;
}

/** A delete of `key` in the wire form (`isDeleteCommand`). */
export function deleteCommand(key: Uint8Array): { key: Uint8Array; value: Uint8Array } {
  return { key: new Uint8Array(0), value: key };
}

/** `refused.leader` when the refuser knows no leader. */
export const NO_LEADER = 255;

/** Any RKV message. */
export type RkvMessage = MessageOf<typeof rkvMessages>;
/** One variant, by type. */
export type RkvMsg<T extends RkvMessage['type']> = Extract<RkvMessage, { type: T }>;

const encoder = new TextEncoder();

/** The 16-byte key of index `index` (0 … 10^15 − 1): "k" and 15 zero-padded digits. */
export function rkvKey(index: number): Uint8Array {
  if (!(Number.isSafeInteger(index) && index >= 0 && index < 1e15)) {
    throw new RangeError(`key index must be an integer in [0, 1e15), got ${index}`);
  }
  return encoder.encode(`k${String(index).padStart(RKV_KEY_BYTES - 1, '0')}`);
}

/** The index a workload key names, or undefined for a key not of the `rkvKey` form. */
export function rkvKeyIndex(key: Uint8Array): number | undefined {
  if (key.length !== RKV_KEY_BYTES || key[0] !== 0x6b) return undefined;
  let index = 0;
  for (let i = 1; i < RKV_KEY_BYTES; i++) {
    const digit = (key[i] as number) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    index = index * 10 + digit;
  }
  return index;
}
