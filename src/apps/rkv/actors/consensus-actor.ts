/**
 * RKV's consensus actor on the simulated platform (iPipe §5 "RKV": "consensus (NIC, can
 * migrate)"; "the consensus actor sends one message to the memtable actor at commit"): Multi-Paxos
 * with a distinguished leader, one instance per replica, every bit of its state in its DMOs
 * (re-opened on every message, nothing in JS variables between messages: that is what lets it
 * migrate between NIC and host mid-run, pending timers included).
 *
 *   roles: follower → candidate → leader; anyone who sees a higher ballot steps down to follower.
 *   election (phase 1): a follower that hears no leader for a timeout in [T, 2T) (deterministic
 *          per replica and election count) stands with b = makeBallot(maxRound + 1, me):
 *          prepare(b, fromSlot = its applied point) ─▶ acceptors: b ≥ promised, not sticky, fromSlot
 *          ≥ their truncation point ⇒ promise(b, their entries above fromSlot, chosen ones flagged)
 *          majority ⇒ leader: per slot the chosen or highest-ballot value, holes become no-ops,
 *          every slot not known chosen re-proposed at b (chosen ones are applied as they are, and
 *          followers lacking them catch up); with nothing to re-propose a no-op is proposed (a slot
 *          of its own ballot: reads wait until it is applied). Candidates retry prepare on each tick and
 *          stand again, one round higher, after another timeout.
 *   common case, per client put (phase 2 only):
 *          leader: slot s = next; record (b, put, the client's origin); accept(b, s) ─▶ followers
 *          follower: b ≥ promised ⇒ record (b, put); accepted(b, s, applied) ─▶ leader
 *          leader: majority ⇒ s chosen; apply the contiguous chosen prefix: one `apply` per entry
 *                  to the memtable actor, carrying the client's origin (the memtable answers the
 *                  client once the write is in it); commit(b, commitThrough) ─▶ followers
 *          follower: on commit (or an accept's piggybacked commit point) marks its records ≤ it
 *                    accepted at that ballot chosen and applies the chosen prefix in slot order;
 *                    a gap (a lost accept) is filled by catch-up: catchup-request ─▶ leader
 *                    ─▶ catchup(chosen entries).
 *   heartbeat (every H, the leader's tick): commit(b, commit point, truncation point, sentNs) ─▶
 *          followers ─▶ heartbeat-ack(sentNs, applied); the same tick retransmits the accepts of
 *          unchosen slots to the replicas that have not acknowledged them.
 *   exactly-once: a put carries (clientId, seq); at APPLY time, on every replica, the sessions
 *          table (client → last seq applied) skips a command already applied (its waiting client
 *          is still answered, FIFO behind the real write); the leader answers a put whose seq is
 *          already applied at once.
 *   deletes: a `del` is proposed like a put, as the command (key ∅, value = the key; messages.ts
 *          "Deletes"), under the same session; applied, it is a tombstone in the memtable, which
 *          answers `del-ok` with whether the key existed. A duplicate delete (skipped at apply, or
 *          answered by the leader at once) goes to the memtable as `del-again`: the sessions table
 *          keeps seqs, every replica's memtable each client's last delete answer, decided when it
 *          applied the delete (storage-actors.ts), so a retry after a fail-over gets it too — on a
 *          replica restarted from its log as well: its SSTable reader decides a key its memtables
 *          do not hold only when its disk holds nothing from the delete's slot or later (the disk
 *          records the last slot it holds, storage-actors.ts "Deletes"); a disk that is ahead (the
 *          slot re-applied after a restart past a later flush) decides nothing: DEL_UNKNOWN.
 *   lease reads: a `get` at the leader is served only while its lease holds — a majority
 *          (itself included) acknowledged a heartbeat it sent at t, lease until t + T — and once
 *          it applied a slot of its own ballot; then it goes to the memtable with the client's
 *          origin, FIFO behind the applies. Sound because a follower that heard the leader within
 *          T refuses to promise (stickiness) and the simulator's clock is exact and shared (a real
 *          deployment needs a bound on clock drift). Otherwise `refused` with a leader hint.
 *   truncation: applied entries stay until every replica reports (accepted / heartbeat-ack) that
 *          it applied them — then the memtables hold the writes everywhere (their flush makes them
 *          durable: "truncation after a snapshot") — and the leader announces the truncation point.
 *          A replica that stays behind by more than maxLogEntries — or reported nothing under this
 *          leader for maxLogEntries commits (dead) — is marked a laggard and the log is truncated
 *          past it anyway, unless it is fetching a snapshot from this leader (the hold, below);
 *          told by a catch-up answer, it stops taking part
 *          (non-voting, never stands) until a state transfer brings it back.
 *   state transfer (with a durable log, which holds the snapshot; the section "state transfer"
 *          below has the diagram): the laggard fetches, chunk by chunk, a checkpoint of a peer's
 *          log at A ≥ the peer's truncation point (key → value of every write applied ≤ A, the
 *          sessions at A), stages the chunks, has its own log switch to them in one synced step,
 *          and only then installs them (memtable, sessions, applied = commit = truncation = A) and
 *          votes again, catching up from A + 1. A crash before the switch recovers the old laggard.
 *          Counted: `transfers`, `transferChunksStaged`, `transferRestarts`, `snapshotsServed`,
 *          `snapshotRequests` (inspectConsensus).
 *   pre-vote (setup.preVote): a timed-out follower or candidate first asks pre-vote(b one round
 *          up) ─▶ peers: granted iff a prepare would be promised (onPrepare's rules), nothing
 *          changes ─▶ a majority ⇒ it stands. A replica cut off never gets one, never raises its
 *          round, and rejoins as a follower of the leader it hears: it deposes no healthy leader.
 *   static mode (heartbeatNs = 0, the offload experiment): no timers, so no heartbeat, election,
 *          retransmission or lease; the setup leader runs phase 1 once and leads for good, and
 *          reads are served by it without a lease (no one else can be elected).
 *   durable log (setup.log names the replica's log actor, log-actor.ts, pinned to the host; the
 *          DST's deployments have one, the offload experiment does not): NIC memory is lost in a
 *          crash, so the acceptor state is synced to the host's disk before anything announces it.
 *          Each handler collects what it must make durable — a raised promise, accepted entries,
 *          the entries it applied (marked chosen), the truncation point in steps of 32 — with the
 *          messages that announce it (promise, accepted, and log-synced(applied) to itself), and
 *          ends with ONE log-write carrying both; the log actor writes, fsyncs, then sends those
 *          messages on.
 *          So nothing waits in the actor between messages (it stays migratable), and:
 *            a promise leaves only once promised ≥ b is durable; an accepted only once its entry is;
 *            a leader's own accept and a candidate's own promise count only when they come back
 *            from its log (acks and promiseMask start empty);
 *            a ballot is durable before any message carries it: prepares (and their retries) are
 *            forwards of the stand's log-write, so a restarted proposer recovers a promise ≥ every
 *            ballot it sent and stands above it (no ballot is used by two incarnations);
 *            a heartbeat that raises the promise is acknowledged once the promise is durable, and
 *            a replica restarted from a non-empty log refuses prepares for a lease period (it may
 *            have acknowledged a lease that still runs: onRecover);
 *            an applied point reaches the leader only once the applied entries are durable (an
 *            accepted carries it through the log; a heartbeat-ack, sent directly, reports the
 *            point log-synced confirmed), and the leader counts only its own durable applied point,
 *            so its truncation point (every voting replica applied it) is durable everywhere.
 *          Truncation folds the chosen prefix into the log's snapshot (the writes and the sessions
 *          as of that slot, sim-log.ts) before dropping it. A restarted node runs every actor from
 *          init; the consensus actor asks its log (log-read) and stays out of the protocol until
 *          `recover` arrives: promise (≥ every accepted ballot), sessions, truncation point and the
 *          entries above it; it rebuilds the memtable (the snapshot's writes, then the chosen prefix
 *          in slot order) and follows; the rest it learns by catch-up. First start: an empty log.
 *
 * Invariants: an acceptor never accepts below its promise (P1); a leader proposes one value per
 * slot per ballot; a slot is chosen only by a majority of accepted at one ballot (unless the
 * UNSAFE_CHOSEN_WITHOUT_MAJORITY test mutation is set); a replica applies slots in order, each
 * once; an acceptor never promises for a fromSlot below its truncation point (it could not report
 * what it deleted), so a laggard cannot be elected; a replica claims a snapshot's point (applied,
 * reports, votes) only once its durable log holds the whole snapshot.
 *
 * Tested by test/apps/rkv/actors/: election.test.ts (step by step) and the DST (dst/harness.ts,
 * 200 CI seeds with drops, duplicates, jitter, partitions and node crash/restart, some with forced
 * NIC↔host migrations, 20 with forced laggards and crashes mid-transfer; a linearizable client
 * history and no lost write required; the UNSAFE_* mutations must be caught), crash-safety.test.ts
 * (restart scenarios step by step: leases, ballots, UNSAFE_ANNOUNCE_BEFORE_SYNC),
 * state-transfer.test.ts (a laggard brought back, then needed for a majority; a crash
 * mid-transfer and in the install window; duplicate chunks; UNSAFE_INSTALL_PARTIAL_SNAPSHOT and
 * UNSAFE_INSTALL_WITHOUT_SESSIONS), transfer-under-load.test.ts (a many-chunk transfer while the
 * group commits every 20 µs; a leader elected after a replica died still truncates).
 *
 * What this actor leaves out: state transfer without a durable log (no snapshot exists), torn or
 * partial log writes (a write is durable whole or, when the node crashed first, not at all), and a
 * crash of the durable log itself.
 *
 * DMO layout (roots; re-opened on every message, so a migrated actor finds everything again):
 *
 *   meta     DmoNumberMap  META below; per replica r: its applied point (PEER_APPLIED + r), the
 *                          send time of its last acknowledged heartbeat (PEER_HEARTBEAT + r)
 *   setup    DmoHashMap    "setup" → the encoded consensus-setup message
 *   log      DmoHashMap    slot (decimal) → [ballot f64][acks u32][chosen u8][key length u8]
 *                          [value length u32][clientId f64][seq f64][key][value][origin bytes …]
 *   sessions DmoNumberMap  clientId → the last seq applied
 *   transfer DmoHashMap    a laggard's staged snapshot chunks: chunk (decimal) → the encoded
 *                          snapshot-chunk message (created on a first transfer only)
 *
 * The durable log (sim-log.ts, the host's disk): promised, slot → (ballot, command, chosen), and
 * a snapshot (writes and sessions) at its truncation point.
 */

import type { ActorContext, ActorRef, HandlerWork } from '../../../actor/index.ts';
import { defineActor, narrowRef } from '../../../actor/index.ts';
import { DmoHashMap, DmoNumberMap } from '../../../dmo/index.ts';
import type { ObjectId } from '../../../ids.ts';
import { encodeOrigin, readOrigin } from '../../../runtime/origin-codec.ts';
import { type Ballot, ballotRound, makeBallot, replicaId } from '../paxos/types.ts';
import {
  COND_NX,
  commandKey,
  deleteCommand,
  isDeleteCommand,
  NO_LEADER,
  type RkvMessage,
  type RkvMsg,
  rkvMessages,
} from './messages.ts';

type RkvContext = ActorContext<RkvMessage, RkvMessage>;

/** Test-only mutation: the leader counts a slot chosen as soon as it proposes it. */
export const UNSAFE_CHOSEN_WITHOUT_MAJORITY = 1;
/** Test-only mutation: no stickiness, and the leader serves reads without a lease. */
export const UNSAFE_NO_LEASE = 2;
/** Test-only mutation (durable log): a restarted replica ignores what its durable log holds. */
export const UNSAFE_RECOVER_WITHOUT_LOG = 4;
/**
 * Test-only mutation (durable log): promises, accepteds, prepares and log-synced leave at once
 * instead of after the log write is durable (the write still happens). A crash inside the ~20 µs
 * window between the two then loses what was already announced.
 */
export const UNSAFE_ANNOUNCE_BEFORE_SYNC = 8;
/**
 * Test-only mutation (state transfer): a laggard installs the snapshot as soon as its first chunk
 * arrives, as if that chunk were all of it — it then believes it holds the state at the snapshot's
 * point while it misses every write the other chunks carry.
 */
export const UNSAFE_INSTALL_PARTIAL_SNAPSHOT = 16;
/**
 * Test-only mutation (state transfer): the install skips the sessions table (the memtable and the
 * durable log get the writes, the sessions stay as the laggard had them), so a command a session
 * already applied can take effect again on the former laggard.
 */
export const UNSAFE_INSTALL_WITHOUT_SESSIONS = 32;

/** Default `maxLogEntries`. */
export const DEFAULT_MAX_LOG_ENTRIES = 4096;

const META = {
  role: 0,
  promised: 1,
  ballot: 2,
  maxRound: 3,
  /** When this replica last heard from a leader at a ballot ≥ its promise (stickiness). */
  heardNs: 4,
  leaderHint: 5,
  promiseMask: 6,
  nextSlot: 7,
  commit: 8,
  applied: 9,
  truncated: 10,
  leaseUntil: 11,
  /** The last slot the leader proposed in its phase 1 (reads wait until it is applied). */
  readySlot: 12,
  /** A candidate: when it stood. A follower: when its election timeout started counting. */
  waitFromNs: 13,
  commitBallot: 14,
  commitAtBallot: 15,
  /** Highest slot ever stored. */
  top: 16,
  /** 1: this replica was truncated past (a laggard; see the header). */
  laggard: 17,
  laggardMask: 18,
  laggards: 19,
  lastHeartbeatNs: 20,
  catchupAskedNs: 21,
  elections: 22,
  fromSlot: 23,
  /** 1 once this replica is set up (the setup message is stored too). */
  started: 24,
  /** Counters (inspectConsensus): duplicates skipped at apply, accepts retransmitted, catch-up entries stored. */
  duplicatesSkipped: 25,
  retransmits: 26,
  caughtUp: 27,
  /** Puts the leader answered from the sessions table (a retry of an applied command). */
  answeredFromSession: 28,
  /** Leader: bit r set once replica r reported its applied point under this ballot. */
  reportedMask: 29,
  /** 1 from a setup with a durable log until the log's `recover` is installed. */
  recovering: 30,
  /** The truncation point last sent to the durable log. */
  logTruncated: 31,
  /** Restarts recovered from a non-empty durable log (a counter). */
  recovered: 32,
  /** The applied point the durable log confirmed (log-synced): what a heartbeat-ack reports. */
  durableApplied: 33,
  /** The applied point the last log-synced request asked to confirm. */
  syncAskedApplied: 34,
  /** `recover` answers that arrived after the first was installed (the recovering tick re-asks). */
  duplicateRecovers: 35,
  /** State transfer (a laggard): NO_TRANSFER, FETCHING chunks, or INSTALLING (waiting for its log). */
  transferState: 36,
  /** The snapshot's slot (its applied point A) being fetched; 0: none chosen yet. */
  transferSlot: 37,
  /** Chunks of that snapshot in all, and how many are staged. */
  transferChunks: 38,
  transferReceived: 39,
  /** When the laggard last asked for a chunk, and when a chunk last arrived (a stall switches sender). */
  transferAskedNs: 40,
  transferProgressNs: 41,
  /** The replica the laggard fetches from. */
  transferFrom: 42,
  /** Counters: snapshots installed; chunks staged; snapshot requests this replica served. */
  transfers: 43,
  transferChunksStaged: 44,
  snapshotsServed: 45,
  /** Pre-vote: the ballot this replica asks about (0: none running), and who granted it. */
  preVoteBallot: 46,
  preVoteMask: 47,
  /** Pre-vote rounds started (a counter). */
  preVotes: 48,
  /** A laggard: staged chunks thrown away because another snapshot arrived or the sender stalled (a counter). */
  transferRestarts: 49,
  /**
   * Leader: where its commit point started — its applied point and the chosen prefix above it (a
   * replica silent for maxLogEntries commits past it is a laggard).
   */
  leadFrom: 50,
  /** Snapshot chunk requests this replica was sent, every one (a counter; snapshotsServed counts transfers). */
  snapshotRequests: 51,
  /** Recovering: the next `recover` part to install; parts installed (a counter). */
  recoverPart: 52,
  recoverParts: 53,
  /** 1 while a `resume` this actor sent itself is on its way (one at a time). */
  resumeAsked: 54,
  /** Installing: staged chunks handed to the log so far (log-install), of transferChunks. */
  installSent: 55,
  /** After an install: the next staged chunk whose items go to the memtable, of rebuildChunks. */
  rebuildNext: 56,
  rebuildChunks: 57,
  /** Handler runs that stopped at RKV_BURST_BYTES and left the rest to a `resume` (a counter). */
  resumes: 58,
  /** Catch-up answers that brought at least one new entry (a counter; CATCHUP_BYTES cuts them). */
  catchupAnswers: 59,
} as const;
const PEER_APPLIED = 100;
const PEER_HEARTBEAT = 200;
/** Leader: when replica r last asked it for a snapshot chunk (or, right after, for a catch-up). */
const PEER_TRANSFER_NS = 300;

const FOLLOWER = 0;
const CANDIDATE = 1;
const LEADER = 2;

const NO_TRANSFER = 0;
const FETCHING = 1;
const INSTALLING = 2;
/** A transfer whose sender sent nothing for this many heartbeat periods starts over elsewhere. */
const TRANSFER_STALL_PERIODS = 4;

/** Unchosen slots the leader retransmits per tick; chosen entries one catch-up answer carries. */
const RETRANSMIT_SLOTS = 64;
/**
 * Bytes of accepts one heartbeat run retransmits at most (besides its first slot's, which always
 * go). Its outputs cross a live node's ring as one result frame of at most 1 MiB (see "bounded
 * bursts"): 64 slots of 8 KiB values to two followers are ~1.06 MB, and the run failed whole, every
 * tick. With the paper's values (≤ 1 KiB) 64 slots to two followers take ~140 KB: it never binds.
 */
export const RETRANSMIT_BYTES = 256 * 1024;
/** An accept's bytes beyond its key and value (tag, ballot, slot, session, lengths, envelope). */
export const ACCEPT_BYTES = 64;
const CATCHUP_ENTRIES = 64;
/**
 * Bytes of entries one catch-up answer carries at most (its first entry always goes, whatever its
 * size, so a follower always progresses). 64 entries of 8 KiB values are ~525 KB, and a live node
 * sends peer messages as datagrams of 65 000 bytes: an answer under this budget, plus its header,
 * origin and one more entry of at most ~8.3 KB, stays within one datagram (no fragments, and no
 * message lost for one lost fragment). The follower asks again from where the answer stopped. With
 * the paper's values (≤ 1 KiB) the budget never binds before 64 entries of 256 B (~19 KB).
 */
export const CATCHUP_BYTES = 32 * 1024;
/** Bytes a log entry takes in a catch-up answer besides its key and value (messages.ts LOG_ENTRY). */
const CATCHUP_ENTRY_FIELD_BYTES = 41;
/** Static mode has no tick: a follower re-asks for a catch-up at most this often. */
const STATIC_CATCHUP_GAP_NS = 100_000;

/** The durable log is told of truncation in steps of this many slots (each fold costs an fsync). */
const LOG_TRUNCATE_STEP = 32;

const RECORD_HEADER_BYTES = 42;
const EMPTY = new Uint8Array(0);

/** One log slot as the actor keeps it. */
interface SlotRecord {
  ballot: number;
  acks: number;
  chosen: boolean;
  /** When the leader last sent its accept (retransmission waits a heartbeat period). */
  sentNs: number;
  readonly clientId: number;
  readonly seq: number;
  readonly key: Uint8Array;
  readonly value: Uint8Array;
  readonly origin: Uint8Array;
}

/** A client command as the log carries it (put messages, promise and catch-up entries, recovery). */
interface Command {
  readonly clientId: number;
  readonly seq: number;
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

const NO_COMMAND: Command = { clientId: 0, seq: 0, key: EMPTY, value: EMPTY };

/** A slot holding `command` at `ballot`, not yet sent nor acknowledged by anyone. */
function slotRecord(
  ballot: number,
  chosen: boolean,
  command: Command,
  origin: Uint8Array = EMPTY,
): SlotRecord {
  return {
    ballot,
    acks: 0,
    chosen,
    sentNs: 0,
    clientId: command.clientId,
    seq: command.seq,
    key: command.key,
    value: command.value,
    origin,
  };
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
  view.setFloat64(18, record.clientId, true);
  view.setFloat64(26, record.seq, true);
  view.setFloat64(34, record.sentNs, true);
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
    clientId: view.getFloat64(18, true),
    seq: view.getFloat64(26, true),
    sentNs: view.getFloat64(34, true),
    key: bytes.slice(keyAt, valueAt),
    value: bytes.slice(valueAt, originAt),
    origin: bytes.slice(originAt),
  };
}

function noOp(): SlotRecord {
  return slotRecord(0, false, NO_COMMAND);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether two log entries carry the same command (client, seq, key and value). */
function sameCommand(
  a: { clientId: number; seq: number; key: Uint8Array; value: Uint8Array },
  b: { clientId: number; seq: number; key: Uint8Array; value: Uint8Array },
): boolean {
  return (
    a.clientId === b.clientId && a.seq === b.seq && sameBytes(a.key, b.key) && sameBytes(a.value, b.value)
  );
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
  readonly sessions: DmoNumberMap;
  readonly setup: RkvMsg<'consensus-setup'>;
  readonly me: number;
  /**
   * What this message's handling must make durable, and the messages to send once it is: one
   * `log-write` at the end of the handler (flushLog). Lives for one message only.
   */
  readonly pending: {
    promised: number;
    truncateThrough: number;
    readonly entries: LogEntry[];
    readonly forwards: { readonly to: string; readonly message: RkvMessage }[];
  } = { promised: 0, truncateThrough: 0, entries: [], forwards: [] };

  constructor(meta: DmoNumberMap, log: DmoHashMap, sessions: DmoNumberMap, setup: RkvMsg<'consensus-setup'>) {
    this.meta = meta;
    this.log = log;
    this.sessions = sessions;
    this.setup = setup;
    this.me = setup.replica;
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
    if (slot > this.num(META.top)) this.set(META.top, slot);
  }

  drop(slot: number): void {
    this.log.deleteString(String(slot));
  }

  get majority(): number {
    return Math.floor(this.setup.replicas.length / 2) + 1;
  }

  get role(): number {
    return this.num(META.role);
  }

  get timed(): boolean {
    return this.setup.heartbeatNs > 0;
  }

  get leaseNs(): number {
    return this.setup.electionTimeoutNs;
  }

  unsafe(flag: number): boolean {
    return (this.setup.unsafe & flag) !== 0;
  }

  get maxLog(): number {
    return this.setup.maxLogEntries > 0 ? this.setup.maxLogEntries : DEFAULT_MAX_LOG_ENTRIES;
  }

  isLaggardPeer(replica: number): boolean {
    return (this.num(META.laggardMask) & (1 << replica)) !== 0;
  }

  /** Whether this replica syncs its acceptor state through a durable log (log-actor.ts). */
  get durable(): boolean {
    return this.setup.log.length > 0;
  }

  /** Consensus actor name of `replica`. */
  nameOf(replica: number): string {
    return this.setup.replicas[replica] ?? '';
  }
}

type LogEntry = RkvMsg<'log-write'>['entries'][number];

function toEntry(slot: number, record: SlotRecord): LogEntry {
  return {
    slot,
    ballot: record.ballot,
    chosen: record.chosen,
    clientId: record.clientId,
    seq: record.seq,
    key: record.key,
    value: record.value,
  };
}

/**
 * Makes `promised` (0: unchanged) and `entries` durable, THEN sends `forwards`: they travel inside
 * the handler's one write (flushLog) and the log actor sends them once it is synced
 * (log-actor.ts). Without a durable log the forwards leave at once.
 */
function sync(
  ctx: RkvContext,
  state: ConsensusState,
  promised: number,
  entries: LogEntry[],
  forwards: { readonly to: string; readonly message: RkvMessage }[],
): void {
  if (!state.durable) {
    for (const item of forwards) sendTo(ctx, item.to, item.message);
    return;
  }
  const pending = state.pending;
  if (promised > pending.promised) pending.promised = promised;
  pending.entries.push(...entries);
  if (state.unsafe(UNSAFE_ANNOUNCE_BEFORE_SYNC)) {
    for (const item of forwards) sendTo(ctx, item.to, item.message);
    return;
  }
  pending.forwards.push(...forwards);
}

/** Tells the durable log of the truncation point, in steps (see LOG_TRUNCATE_STEP). */
function syncTruncation(state: ConsensusState): void {
  if (!state.durable) return;
  const truncated = state.num(META.truncated);
  if (truncated - state.num(META.logTruncated) < LOG_TRUNCATE_STEP) return;
  state.set(META.logTruncated, truncated);
  state.pending.truncateThrough = truncated;
}

/** Sends what the handler left pending as one `log-write` (see `sync`). */
function flushLog(ctx: RkvContext, state: ConsensusState): void {
  const pending = state.pending;
  const applied = state.num(META.applied);
  if (pending.entries.length > 0 && applied > state.num(META.syncAskedApplied)) {
    // Have the log confirm the applied point once it is durable: heartbeat-acks report only that.
    state.set(META.syncAskedApplied, applied);
    pending.forwards.push({ to: state.nameOf(state.me), message: { type: 'log-synced', applied } });
  }
  if (
    pending.promised === 0 &&
    pending.truncateThrough === 0 &&
    pending.entries.length === 0 &&
    pending.forwards.length === 0
  ) {
    return;
  }
  sendTo(ctx, state.setup.log, {
    type: 'log-write',
    promised: pending.promised,
    entries: pending.entries,
    truncateThrough: pending.truncateThrough,
    forwards: pending.forwards.map((item) => ({ to: item.to, message: rkvMessages.encode(item.message) })),
  });
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
    if (replica !== state.me) toPeer(ctx, state, replica, message);
  });
}

function refuse(ctx: RkvContext, state: ConsensusState | undefined, reason: string): void {
  if (ctx.origin.kind === 'none') return;
  const hint = state === undefined ? NO_LEADER : state.num(META.leaderHint);
  ctx.reply({ type: 'refused', reason, leader: hint });
}

// ---- roles and ballots ---------------------------------------------------------------------------

/** Notes a ballot seen anywhere; a higher one than ours makes a candidate or leader step down. */
function observe(ctx: RkvContext, state: ConsensusState, ballot: number): void {
  noteRound(state, ballot);
  if (state.role !== FOLLOWER && ballot > state.num(META.ballot)) {
    ctx.log.info({ ballot: state.num(META.ballot), seen: ballot }, 'rkv: a higher ballot; stepping down');
    state.set(META.role, FOLLOWER);
    state.set(META.leaseUntil, 0);
    state.set(META.waitFromNs, ctx.now());
    // Grants gathered before stepping down must not add up with later ones into a stand.
    state.set(META.preVoteBallot, 0);
  }
}

/** Notes a ballot's round (the next election stands above it) without changing role. */
function noteRound(state: ConsensusState, ballot: number): void {
  const round = ballotRound(ballot as Ballot);
  if (round > state.num(META.maxRound)) state.set(META.maxRound, round);
}

/** A follower's or candidate's election timeout, in [T, 2T), a deterministic function of replica and count. */
function electionTimeout(state: ConsensusState): number {
  const t = state.setup.electionTimeoutNs;
  const mix = Math.imul(state.me + 1, 0x9e3779b1) ^ Math.imul(state.num(META.elections) + 7, 0x85ebca6b);
  const spread = ((mix ^ (mix >>> 15)) >>> 0) % Math.max(1, t);
  return t + spread;
}

/** Stands for election: phase 1 at a ballot one round above anything seen. */
function stand(ctx: RkvContext, state: ConsensusState, round?: number): void {
  const next =
    round ?? Math.max(state.num(META.maxRound), ballotRound(state.num(META.promised) as Ballot)) + 1;
  const ballot = makeBallot(next, replicaId(state.me));
  state.set(META.maxRound, next);
  state.set(META.role, CANDIDATE);
  // A pre-vote still running is over: a late grant must not make it stand a second time.
  state.set(META.preVoteBallot, 0);
  state.set(META.ballot, ballot);
  state.set(META.promised, ballot);
  // With a durable log, its own promise counts once it is durable: it comes back from the log.
  state.set(META.promiseMask, state.durable ? 0 : 1 << state.me);
  state.set(META.fromSlot, state.num(META.applied));
  state.set(META.waitFromNs, ctx.now());
  state.set(META.elections, state.num(META.elections) + 1);
  state.set(META.leaseUntil, 0);
  state.set(META.leaderHint, NO_LEADER);
  ctx.log.info({ ballot, fromSlot: state.num(META.applied) }, 'rkv: standing for election');
  const prepare: RkvMessage = { type: 'prepare', from: state.me, ballot, fromSlot: state.num(META.applied) };
  if (state.durable) {
    // The ballot is durable before any message carries it: the prepares (and its own promise)
    // leave from the log actor once promised = ballot is synced. Sent directly, a crash before the
    // sync would let a restarted proposer recover an older promise and use this ballot again —
    // for another value, with late promises and accepteds of the old incarnation counted for it.
    const forwards = [
      {
        to: state.nameOf(state.me),
        message: { type: 'promise', from: state.me, ballot, entries: [] } as RkvMessage,
      },
    ];
    for (let replica = 0; replica < state.setup.replicas.length; replica++) {
      if (replica !== state.me) forwards.push({ to: state.nameOf(replica), message: prepare });
    }
    sync(ctx, state, ballot, [], forwards);
    return;
  }
  if (popcount(1 << state.me) >= state.majority) {
    lead(ctx, state);
    return;
  }
  toFollowers(ctx, state, prepare);
}

/**
 * An election timeout ran out. With pre-vote (setup.preVote), first ask whether a majority would
 * promise a ballot one round up — nothing changes at the peers, nor here but the question — and
 * stand only once a majority says yes (onPreVoteReply). A replica cut off from the group never
 * hears a majority, so it never raises its round, and when it rejoins, the leader's next
 * heartbeat (a ballot at or above its promise) makes it a follower again: it deposes no one.
 * The next timeout asks again, one round higher if a refusal reported a higher promise.
 */
function standOrPreVote(ctx: RkvContext, state: ConsensusState): void {
  // Its memtable still lacks some of an install's items: a leader would serve reads from it.
  if (rebuilding(state)) return;
  if (!state.setup.preVote) {
    stand(ctx, state);
    return;
  }
  const round = Math.max(state.num(META.maxRound), ballotRound(state.num(META.promised) as Ballot)) + 1;
  const ballot = makeBallot(round, replicaId(state.me));
  state.set(META.preVoteBallot, ballot);
  state.set(META.preVoteMask, 1 << state.me);
  state.set(META.preVotes, state.num(META.preVotes) + 1);
  state.set(META.waitFromNs, ctx.now());
  if (popcount(1 << state.me) >= state.majority) {
    stand(ctx, state);
    return;
  }
  toFollowers(ctx, state, { type: 'pre-vote', from: state.me, ballot, fromSlot: state.num(META.applied) });
}

/**
 * Leader stickiness: a replica that heard a leader within the lease refuses to promise anyone
 * else (what makes the leader's lease reads sound). Prepares and pre-votes ask the same question.
 */
function isSticky(ctx: RkvContext, state: ConsensusState): boolean {
  return (
    state.timed &&
    !state.unsafe(UNSAFE_NO_LEASE) &&
    state.role !== CANDIDATE &&
    ctx.now() - state.num(META.heardNs) < state.leaseNs &&
    state.num(META.heardNs) > 0
  );
}

/** Would this replica promise the pre-vote's ballot now (onPrepare's rules)? It changes nothing. */
function onPreVote(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'pre-vote'>): void {
  const promised = state.num(META.promised);
  const sticky = isSticky(ctx, state);
  const granted =
    state.num(META.laggard) !== 1 &&
    message.ballot > promised &&
    !sticky &&
    message.fromSlot >= state.num(META.truncated);
  toPeer(ctx, state, message.from, {
    type: 'pre-vote-reply',
    from: state.me,
    ballot: message.ballot,
    granted,
    promised,
  });
}

/** The pre-voter: a majority of grants (itself included) ⇒ stand for real. */
function onPreVoteReply(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'pre-vote-reply'>): void {
  if (message.ballot !== state.num(META.preVoteBallot) || state.role === LEADER) return;
  if (!message.granted) {
    // A higher promise out there: the next pre-vote asks above it.
    noteRound(state, message.promised);
    return;
  }
  const mask = state.num(META.preVoteMask) | (1 << message.from);
  state.set(META.preVoteMask, mask);
  if (popcount(mask) < state.majority) return;
  state.set(META.preVoteBallot, 0);
  stand(ctx, state);
}

/** A candidate with a majority of promises: re-propose what is not known chosen above fromSlot. */
function lead(ctx: RkvContext, state: ConsensusState): void {
  const ballot = state.num(META.ballot);
  state.set(META.role, LEADER);
  state.set(META.leaderHint, state.me);
  state.set(META.leaseUntil, 0);
  state.set(META.preVoteBallot, 0);
  const from = state.num(META.applied);
  // This leader's commit point covers only what it holds chosen; it grows again below.
  state.set(META.commit, from);
  // Silence is counted from the chosen prefix this leader starts with: those slots become its
  // commit point at once (they are not proposed again, see below), before any follower could
  // report under this ballot, and must not make a healthy follower look silent for maxLogEntries.
  let chosenPrefix = from;
  while (state.record(chosenPrefix + 1)?.chosen === true) chosenPrefix++;
  state.set(META.leadFrom, chosenPrefix);
  for (let r = 0; r < state.setup.replicas.length; r++) {
    state.set(PEER_APPLIED + r, 0);
    state.set(PEER_HEARTBEAT + r, 0);
    state.set(PEER_TRANSFER_NS + r, 0);
  }
  state.set(META.laggardMask, 0);
  // Applied points restart at 0 with this ballot: nobody is judged a laggard (nor truncated past)
  // before it has reported one under this leader — or stayed silent for maxLogEntries commits
  // (a dead replica never reports: see truncate).
  state.set(META.reportedMask, 0);
  const top = state.num(META.top);
  if (state.num(META.nextSlot) <= top) state.set(META.nextSlot, top + 1);
  const next = state.num(META.nextSlot);
  ctx.log.info({ ballot, from, next }, 'rkv: phase 1 done; leading');
  // Slots known chosen (a promise flagged them, or this replica learned them) are not proposed
  // again: their value is settled, they are applied in bounded bursts below, and followers that
  // lack them learn them by catch-up (a commit at this ballot marks only what was accepted at it).
  // Re-proposing them too sent, in ONE handler run, an accept per follower and a log entry for
  // every one: after a burst of 8 KiB writes that passed the live ring's 1 MiB result frame, the
  // run failed whole, and the applies it carried were lost (a write acknowledged, then read absent).
  let proposed = 0;
  for (let slot = from + 1; slot < next; slot++) {
    const record = state.record(slot);
    if (record?.chosen === true) continue;
    propose(ctx, state, slot, record ?? noOp());
    proposed++;
  }
  if (proposed === 0) {
    // Nothing to re-propose: a no-op gives this ballot a slot of its own before reads are served.
    state.set(META.nextSlot, next + 1);
    propose(ctx, state, next, noOp());
  }
  state.set(META.readySlot, state.num(META.nextSlot) - 1);
  advanceChosen(ctx, state);
  if (state.timed) heartbeat(ctx, state);
}

// ---- phase 2 and learning ------------------------------------------------------------------------

/** Leader: proposes `record` for `slot` at its ballot (it accepts it itself first). */
function propose(ctx: RkvContext, state: ConsensusState, slot: number, record: SlotRecord): void {
  const ballot = state.num(META.ballot);
  record.ballot = ballot;
  // With a durable log the leader's own accept counts once it is durable (it comes back from the log).
  record.acks = state.durable ? 0 : 1 << state.me;
  record.sentNs = ctx.now();
  record.chosen =
    record.chosen || (!state.durable && state.majority <= 1) || state.unsafe(UNSAFE_CHOSEN_WITHOUT_MAJORITY);
  state.store(slot, record);
  if (state.durable) {
    const accepted: RkvMessage = {
      type: 'accepted',
      from: state.me,
      ballot,
      slot,
      applied: state.num(META.applied),
    };
    sync(ctx, state, ballot, [toEntry(slot, record)], [{ to: state.nameOf(state.me), message: accepted }]);
  }
  sendAccept(ctx, state, slot, record, -1);
}

/** Sends the accept of `slot` to one follower (`to`), or to every voting follower (−1). */
function sendAccept(
  ctx: RkvContext,
  state: ConsensusState,
  slot: number,
  record: SlotRecord,
  to: number,
): void {
  const message: RkvMessage = {
    type: 'accept',
    from: state.me,
    ballot: record.ballot,
    slot,
    clientId: record.clientId,
    seq: record.seq,
    key: record.key,
    value: record.value,
    commitThrough: state.num(META.commit),
  };
  if (to >= 0) {
    toPeer(ctx, state, to, message);
    return;
  }
  state.setup.replicas.forEach((_name, replica) => {
    if (replica !== state.me && !state.isLaggardPeer(replica)) toPeer(ctx, state, replica, message);
  });
}

/**
 * Applies, in slot order, every entry ≤ the commit point that this replica holds as chosen; the
 * sessions table makes a client's command take effect once (see the header).
 */
// ---- bounded bursts -------------------------------------------------------------------------------
//
// On a live node a handler run's outputs cross the NIC↔host ring as ONE result frame (at most
// 1 MiB − 8 bytes; src/platform/live/node/core-worker.ts): a run that sends more fails whole. So
// no run here sends more than RKV_BURST_BYTES of applies or log-install chunks: the applies of a
// long chosen prefix (a restart, a catch-up), the chunks of a staged snapshot to the log, and an
// install's items to the memtable go in slices, and a run that stops early sends the actor a
// `resume`, whose run carries on (progress lives in META: applied, installSent, rebuildNext).
// Until an install's items are all in the memtable (rebuildNext < rebuildChunks) nothing else is
// applied and the replica does not stand, so no write is overtaken by an older snapshot item and
// no lease read sees a half-rebuilt memtable. In the paper's workload no run comes near the bound:
// the simulator's outputs are unchanged.

/** Most bytes of applies (and log-install chunks) one handler run sends; the rest waits for `resume`. */
export const RKV_BURST_BYTES = 256 * 1024;
/** An apply's bytes beyond its key, value and origin (tag, slot, lengths, the send's envelope). */
const APPLY_BYTES = 64;

function commandBytes(command: { readonly key: Uint8Array; readonly value: Uint8Array }): number {
  return command.key.length + command.value.length;
}

function rebuilding(state: ConsensusState): boolean {
  return state.num(META.rebuildNext) < state.num(META.rebuildChunks);
}

/** Sends this actor a `resume` unless one is already on its way. */
function askResume(ctx: RkvContext, state: ConsensusState): void {
  state.set(META.resumes, state.num(META.resumes) + 1);
  if (state.num(META.resumeAsked) === 1) return;
  const me = state.setup.replicas[state.me];
  if (me === undefined) return;
  state.set(META.resumeAsked, 1);
  sendTo(ctx, me, { type: 'resume' });
}

/** A `resume`: the install's chunks to the log, its items to the memtable, then chosen entries. */
function onResume(ctx: RkvContext, state: ConsensusState): void {
  state.set(META.resumeAsked, 0);
  if (state.num(META.transferState) === INSTALLING) sendInstalls(ctx, state);
  if (rebuilding(state)) rebuildStep(ctx, state);
  else applyReady(ctx, state);
}

function applyReady(ctx: RkvContext, state: ConsensusState, write = true, budget = RKV_BURST_BYTES): void {
  // An install's items go to the memtable first (rebuildStep): a later write must overwrite them.
  if (rebuilding(state)) return;
  const commit = state.num(META.commit);
  let applied = state.num(META.applied);
  let spent = 0;
  // Applied entries are written chosen to the durable log (in order before any later report of the
  // applied point): the log's truncation folds only what it holds chosen, and a restart re-applies it.
  const written: LogEntry[] = [];
  while (applied < commit) {
    const slot = applied + 1;
    const record = state.record(slot);
    if (record === undefined || !record.chosen) break;
    // An apply, and the same entry in the log write: a run stops at the budget (at least one).
    const bytes =
      (write && state.durable ? 2 : 1) * (APPLY_BYTES + commandBytes(record) + record.origin.length);
    if (spent > 0 && spent + bytes > budget) {
      askResume(ctx, state);
      break;
    }
    spent += bytes;
    if (write && state.durable) written.push(toEntry(slot, record));
    let duplicate = false;
    if (record.clientId > 0) {
      const last = state.sessions.get(record.clientId) ?? 0;
      if (record.seq <= last) {
        duplicate = true;
        state.set(META.duplicatesSkipped, state.num(META.duplicatesSkipped) + 1);
      } else state.sessions.set(record.clientId, record.seq);
    }
    if (isDeleteCommand(record)) {
      // A duplicate took effect at an earlier slot: its answer is the memtable's to give.
      if (duplicate) {
        if (record.origin.length > 0) {
          sendTo(ctx, state.setup.memtable, {
            type: 'del-again',
            clientId: record.clientId,
            seq: record.seq,
            origin: record.origin,
          });
        }
      } else {
        sendTo(ctx, state.setup.memtable, {
          type: 'apply-del',
          slot,
          clientId: record.clientId,
          seq: record.seq,
          key: record.value,
          origin: record.origin,
        });
      }
    } else if ((!duplicate && record.key.length + record.value.length > 0) || record.origin.length > 0) {
      sendTo(ctx, state.setup.memtable, {
        type: 'apply',
        slot,
        key: duplicate ? EMPTY : record.key,
        value: duplicate ? EMPTY : record.value,
        origin: record.origin,
      });
    }
    applied = slot;
  }
  state.set(META.applied, applied);
  if (written.length > 0) sync(ctx, state, 0, written, []);
}

/**
 * Whether this client command already took effect here (its session has seen its seq): a retry,
 * answered without a new slot. Counted for inspectConsensus.
 */
function answeredFromSession(state: ConsensusState, command: { clientId: number; seq: number }): boolean {
  if (command.clientId <= 0 || (state.sessions.get(command.clientId) ?? 0) < command.seq) return false;
  state.set(META.answeredFromSession, state.num(META.answeredFromSession) + 1);
  return true;
}

/** Leader: proposes `command` in the next free slot (`origin`: who waits for it, encoded). */
function proposeNext(
  ctx: RkvContext,
  state: ConsensusState,
  command: Parameters<typeof slotRecord>[2],
  origin: Uint8Array,
): void {
  const slot = state.num(META.nextSlot);
  state.set(META.nextSlot, slot + 1);
  propose(ctx, state, slot, slotRecord(0, false, command, origin));
  advanceChosen(ctx, state);
}

/** Why a write must go elsewhere (undefined at the leader), naming where: the client follows it. */
function notLeaderRefusal(state: ConsensusState, writes: string): string | undefined {
  if (state.role === LEADER) return undefined;
  if (state.role === CANDIDATE) return 'an election is running; retry';
  const hint = state.num(META.leaderHint);
  return hint === NO_LEADER
    ? 'not the leader, and no leader is known; retry'
    : `not the leader; send ${writes} to replica ${hint}`;
}

function onPut(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'put'>): void {
  if (message.key.length === 0) {
    // An empty key is how the log spells a delete or a no-op (messages.ts, "Deletes").
    refuse(ctx, state, 'a put needs a non-empty key');
    return;
  }
  const notLeader = notLeaderRefusal(state, 'puts');
  if (notLeader !== undefined) {
    refuse(ctx, state, notLeader);
    return;
  }
  if (answeredFromSession(state, message)) {
    // Already applied here (a retry of a command that took effect): answer it as done.
    if (ctx.origin.kind !== 'none') ctx.reply({ type: 'put-ok', slot: 0 });
    return;
  }
  if (lockedByCput(ctx, message.key)) {
    refuse(ctx, state, 'a conditional put of this key is being decided; retry');
    return;
  }
  proposeNext(ctx, state, message, ctx.origin.kind === 'none' ? EMPTY : encodeOrigin(ctx.origin));
}

/**
 * A client's delete: proposed as the command (key ∅, value = the key) under the client's session,
 * exactly as a put is; the memtable answers `del-ok` once the tombstone is applied.
 */
function onDel(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'del'>): void {
  if (message.key.length === 0) {
    refuse(ctx, state, 'a delete needs a non-empty key');
    return;
  }
  const notLeader = notLeaderRefusal(state, 'deletes');
  if (notLeader !== undefined) {
    refuse(ctx, state, notLeader);
    return;
  }
  if (answeredFromSession(state, message)) {
    if (ctx.origin.kind !== 'none') {
      // FIFO behind the apply-del of the first attempt: the memtable answers as it did then.
      sendTo(ctx, state.setup.memtable, {
        type: 'del-again',
        clientId: message.clientId,
        seq: message.seq,
        origin: encodeOrigin(ctx.origin),
      });
    }
    return;
  }
  if (lockedByCput(ctx, message.key)) {
    refuse(ctx, state, 'a conditional put of this key is being decided; retry');
    return;
  }
  const command = { clientId: message.clientId, seq: message.seq, ...deleteCommand(message.key) };
  proposeNext(ctx, state, command, ctx.origin.kind === 'none' ? EMPTY : encodeOrigin(ctx.origin));
}

/** Leader: moves the commit point over the chosen prefix, applies it, tells the followers. */
function advanceChosen(ctx: RkvContext, state: ConsensusState): void {
  if (state.role !== LEADER) return;
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
  applyReady(ctx, state);
  truncate(ctx, state);
  toFollowers(ctx, state, {
    type: 'commit',
    from: state.me,
    ballot,
    commitThrough: commit,
    truncateThrough: state.num(META.truncated),
    sentNs: 0,
  });
}

function onAccepted(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'accepted'>): void {
  if (state.role !== LEADER || message.ballot !== state.num(META.ballot)) return;
  notePeerApplied(state, message.from, message.applied);
  const record = state.record(message.slot);
  if (record === undefined || record.chosen || record.ballot !== message.ballot) return;
  record.acks |= 1 << message.from;
  record.chosen = popcount(record.acks) >= state.majority;
  state.store(message.slot, record);
  if (record.chosen) advanceChosen(ctx, state);
}

function notePeerApplied(state: ConsensusState, replica: number, applied: number): void {
  const reported = state.num(META.reportedMask);
  if ((reported & (1 << replica)) === 0) state.set(META.reportedMask, reported | (1 << replica));
  if (applied > state.num(PEER_APPLIED + replica)) state.set(PEER_APPLIED + replica, applied);
}

/** Acceptor side of phase 2, and the piggybacked commit point. */
function onAccept(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'accept'>): void {
  if (state.num(META.laggard) === 1) return;
  const promised = state.num(META.promised);
  if (message.ballot < promised) {
    toPeer(ctx, state, message.from, {
      type: 'reject',
      from: state.me,
      ballot: message.ballot,
      promised,
    });
    return;
  }
  observe(ctx, state, message.ballot);
  if (message.ballot > promised) state.set(META.promised, message.ballot);
  hearLeader(ctx, state, message.from);
  const written: LogEntry[] = [];
  if (message.slot > state.num(META.applied)) {
    const mine = state.record(message.slot);
    // A chosen entry stays as it is (any later proposal for its slot carries the same value).
    if (mine === undefined || !mine.chosen) {
      const chosen =
        message.ballot === state.num(META.commitBallot) && message.slot <= state.num(META.commitAtBallot);
      const record = slotRecord(message.ballot, chosen, message);
      state.store(message.slot, record);
      if (state.durable) written.push(toEntry(message.slot, record));
    }
  }
  learn(ctx, state, message.from, message.ballot, message.commitThrough, -1);
  // The accepted leaves once the entry (and a raised promise) is durable.
  const accepted: RkvMessage = {
    type: 'accepted',
    from: state.me,
    ballot: message.ballot,
    slot: message.slot,
    applied: state.num(META.applied),
  };
  sync(ctx, state, message.ballot > promised ? message.ballot : 0, written, [
    { to: state.nameOf(message.from), message: accepted },
  ]);
}

/** A message from the leader at a ballot ≥ our promise: it is alive (stickiness, timeout). */
function hearLeader(ctx: RkvContext, state: ConsensusState, leader: number): void {
  if (state.role !== FOLLOWER) return;
  state.set(META.preVoteBallot, 0);
  const now = ctx.now();
  state.set(META.heardNs, now);
  state.set(META.waitFromNs, now);
  state.set(META.leaderHint, leader);
}

/**
 * A replica learns that the leader at `ballot` holds every slot ≤ `commitThrough` chosen: its
 * records of that ballot up there are the chosen values. Applies the chosen prefix, drops what
 * the leader says every replica applied, and asks for a catch-up when a gap remains.
 */
function learn(
  ctx: RkvContext,
  state: ConsensusState,
  from: number,
  ballot: number,
  commitThrough: number,
  truncateThrough: number,
): void {
  if (state.role === LEADER || state.num(META.laggard) === 1) return;
  const applied = state.num(META.applied);
  const markUntil = Math.min(commitThrough, state.num(META.top));
  for (let slot = applied + 1; slot <= markUntil; slot++) {
    const record = state.record(slot);
    if (record !== undefined && !record.chosen && record.ballot === ballot) {
      record.chosen = true;
      state.store(slot, record);
    }
  }
  const commitBallot = state.num(META.commitBallot);
  if (ballot > commitBallot || (ballot === commitBallot && commitThrough > state.num(META.commitAtBallot))) {
    state.set(META.commitBallot, ballot);
    state.set(META.commitAtBallot, commitThrough);
  }
  if (commitThrough > state.num(META.commit)) state.set(META.commit, commitThrough);
  applyReady(ctx, state);
  if (truncateThrough >= 0) {
    const until = Math.min(truncateThrough, state.num(META.applied));
    for (let slot = state.num(META.truncated) + 1; slot <= until; slot++) state.drop(slot);
    if (until > state.num(META.truncated)) state.set(META.truncated, until);
    syncTruncation(state);
  }
  maybeCatchUp(ctx, state, from);
}

function maybeCatchUp(ctx: RkvContext, state: ConsensusState, leader: number): void {
  const applied = state.num(META.applied);
  const commit = state.num(META.commit);
  if (commit <= applied) return;
  const now = ctx.now();
  const gap = state.timed ? state.setup.heartbeatNs : STATIC_CATCHUP_GAP_NS;
  const asked = state.num(META.catchupAskedNs);
  if (asked > 0 && now - asked < gap) return;
  state.set(META.catchupAskedNs, now);
  toPeer(ctx, state, leader, {
    type: 'catchup-request',
    from: state.me,
    fromSlot: applied + 1,
    toSlot: Math.min(commit, applied + CATCHUP_ENTRIES),
  });
}

function onCatchupRequest(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'catchup-request'>): void {
  const truncated = state.num(META.truncated);
  // A former laggard catching up from its snapshot's point: the hold lasts while it asks.
  if (state.role === LEADER && inTransferGrace(state, message.from, ctx.now())) {
    state.set(PEER_TRANSFER_NS + message.from, ctx.now());
  }
  const entries: RkvMsg<'catchup'>['entries'][number][] = [];
  if (message.fromSlot > truncated) {
    const until = Math.min(message.toSlot, state.num(META.commit), message.fromSlot + CATCHUP_ENTRIES - 1);
    let bytes = 0;
    for (let slot = message.fromSlot; slot <= until; slot++) {
      const record = state.record(slot);
      if (record === undefined || !record.chosen) break;
      const size = CATCHUP_ENTRY_FIELD_BYTES + record.key.length + record.value.length;
      if (entries.length > 0 && bytes + size > CATCHUP_BYTES) break;
      bytes += size;
      entries.push({
        slot,
        ballot: record.ballot,
        chosen: true,
        clientId: record.clientId,
        seq: record.seq,
        key: record.key,
        value: record.value,
      });
    }
  }
  toPeer(ctx, state, message.from, { type: 'catchup', from: state.me, truncated, entries });
}

function onCatchup(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'catchup'>): void {
  if (state.num(META.laggard) === 1) return;
  const applied = state.num(META.applied);
  if (message.truncated > applied) {
    // The log we need is gone everywhere: only a state transfer can bring this replica back. It
    // stops voting until it has installed one (see "state transfer" below).
    state.set(META.laggard, 1);
    state.set(META.role, FOLLOWER);
    ctx.log.warn(
      { applied, truncated: message.truncated, durable: state.durable },
      state.durable
        ? 'rkv: truncated past this replica; it stops voting and asks for a state transfer'
        : 'rkv: truncated past this replica; without a durable log there is no snapshot to transfer: it stops voting',
    );
    if (state.durable) startTransfer(ctx, state, message.from);
    return;
  }
  let fresh = 0;
  for (const entry of message.entries) {
    if (entry.slot <= applied) continue;
    fresh++;
    state.store(entry.slot, slotRecord(entry.ballot, true, entry));
  }
  if (fresh > 0) {
    state.set(META.caughtUp, state.num(META.caughtUp) + fresh);
    state.set(META.catchupAnswers, state.num(META.catchupAnswers) + 1);
  }
  state.set(META.catchupAskedNs, 0);
  applyReady(ctx, state);
  if (state.role !== LEADER) maybeCatchUp(ctx, state, message.from);
}

/** Leader: drops entries every voting replica applied; past maxLogEntries, gives up on laggards. */
function truncate(ctx: RkvContext, state: ConsensusState): void {
  const commit = state.num(META.commit);
  const pointOf = (): number => {
    // With a durable log, only what is durably applied here too (a restart recovers at least that).
    let point = state.num(state.durable ? META.durableApplied : META.applied);
    for (let r = 0; r < state.setup.replicas.length; r++) {
      if (r !== state.me && !state.isLaggardPeer(r)) point = Math.min(point, state.num(PEER_APPLIED + r));
    }
    return point;
  };
  let point = pointOf();
  if (commit - point > state.maxLog) {
    const reported = state.num(META.reportedMask);
    // Silent since this leader started (dead, or cut off) for more than maxLogEntries commits: a
    // laggard too, or a leader elected after a replica died would never truncate again.
    const silentTooLong = commit - state.num(META.leadFrom) > state.maxLog;
    const now = ctx.now();
    for (let r = 0; r < state.setup.replicas.length; r++) {
      if (r === state.me || state.isLaggardPeer(r)) continue;
      // A replica fetching a snapshot from this leader (or catching up right after installing
      // it) keeps the truncation held while it asks: marked again, the leader would truncate
      // past the snapshot it is fetching and it would start over, for ever in a busy group.
      if (inTransferGrace(state, r, now)) continue;
      const behind =
        (reported & (1 << r)) === 0 ? silentTooLong : state.num(PEER_APPLIED + r) < commit - state.maxLog;
      if (behind) {
        state.set(META.laggardMask, state.num(META.laggardMask) | (1 << r));
        state.set(META.laggards, state.num(META.laggards) + 1);
        ctx.log.warn(
          { replica: r, applied: state.num(PEER_APPLIED + r), reported: (reported & (1 << r)) !== 0, commit },
          'rkv: a replica is too far behind; truncating past it (it needs a state transfer)',
        );
      }
    }
    point = pointOf();
  }
  const truncated = state.num(META.truncated);
  for (let slot = truncated + 1; slot <= point; slot++) state.drop(slot);
  if (point > truncated) state.set(META.truncated, point);
  syncTruncation(state);
}

/**
 * Whether the leader still holds its truncation for `replica`: it asked for a snapshot chunk (or,
 * right after installing, for a catch-up) within TRANSFER_STALL_PERIODS election timeouts. Not
 * heartbeat periods: the laggard goes quiet while its own log stages the chunks (it re-asks each
 * H meanwhile) and then while it installs them (one handler, an apply per item: ~200 µs for 300
 * items in the tests), and a hold that ran out in between would send it back to chunk 0.
 */
function inTransferGrace(state: ConsensusState, replica: number, now: number): boolean {
  const asked = state.num(PEER_TRANSFER_NS + replica);
  const graceNs =
    TRANSFER_STALL_PERIODS * (state.timed ? state.setup.electionTimeoutNs : STATIC_CATCHUP_GAP_NS);
  return asked > 0 && now - asked < graceNs;
}

// ---- state transfer (a laggard) ------------------------------------------------------------------
//
//   laggard L (told by a catch-up answer that it was truncated past; stops voting)
//     ─snapshot-request(slot 0, chunk 0)─▶ S (the leader, or whoever answered the catch-up)
//   S ─snapshot-read(to L, atLeast = its truncation point)─▶ S's durable log: checkpoint at A (its
//     snapshot folded over its chosen prefix, frozen, in chunks; sim-log.ts) ─snapshot-chunk(A, i, n)─▶ L
//   L stages chunk i in its `transfer` DMO and, when chunk i was new, asks for the next missing
//     one (stop-and-wait; a duplicate asks for nothing; its tick re-asks after H, and after
//     TRANSFER_STALL_PERIODS × H without a chunk starts over at the leader or the next replica).
//     A request names the snapshot being staged (slot A), and S's log keeps serving it; a chunk
//     of another snapshot (S no longer keeps A) starts the staging over (transferRestarts).
//   all n staged ⇒ ─log-install(chunk i of n)─▶ L's log: stages them; with all n, ONE switch:
//     snapshot and sessions replaced, truncation point A, entries ≤ A dropped, synced
//     ─snapshot-installed(A)─▶ L: memtable brought to S's contents at A (an apply per item),
//     sessions replaced, applied = commit = truncation = A; L votes again and catches up from A+1.
//
// What is shipped: the snapshot holds key → value of every write applied ≤ A since the first slot
// (the durable log folds the whole chosen prefix, never only a recent part). The base data set
// (SimDisk) and a memtable-load are identical on every replica and never written but through the
// log, so they are not shipped. L applied a prefix of the same chosen log (a < A), so every key L's
// memtable and SSTables hold a write for is a key of the snapshot: overwriting the snapshot's keys
// brings L's store to exactly S's contents at A — no deletes needed (the workload makes none).
//
// Crash safety: until the log's switch, the receiver's durable state is the old one (staged
// chunks are NIC memory or an unfinished snapshot file), so a crash mid-transfer recovers the old
// laggard, which asks again; after it, recovery rebuilds the memtable from the new snapshot. The
// replica never reports or votes on a point it does not durably hold.
//
// The leader, asked by a laggard, stops treating it as one (accepts go to it again) and holds its
// truncation at the current point for it, so that the snapshot (at or above that point) is still
// enough to catch up from when it lands. The hold lasts while the laggard keeps asking: a replica
// that asked for a chunk (or, installing, re-asked for the last one; or, installed, asked for a
// catch-up) within TRANSFER_STALL_PERIODS election timeouts is not marked again however far
// behind it is (inTransferGrace) — else, in a group committing faster than the snapshot crosses,
// the leader would truncate past the snapshot, take a newer one, and the laggard would start over
// for ever. So the leader's log grows by what commits during one transfer. A laggard that stops
// asking (stalled, crashed) is marked again after the grace. The sender's log also keeps serving
// the checkpoint a laggard names (sim-log.ts keeps the last MAX_CHECKPOINTS): a transfer from a
// follower, whose truncation the leader drives, completes too — though its point may then be
// truncated past already, and the replica is a laggard again (counted: transferRestarts when
// staged chunks are thrown away).

function transferStaging(ctx: RkvContext): DmoHashMap {
  const id = ctx.root('transfer');
  if (id !== undefined) return DmoHashMap.open(ctx.dmo, id);
  // Created on a first transfer only: a group that never has a laggard keeps its heap as it was.
  const map = DmoHashMap.create(ctx.dmo);
  ctx.setRoot('transfer', map.rootId);
  return map;
}

/** L: staged chunks were thrown away (counted: a transfer that restarts for ever shows here). */
function countRestart(state: ConsensusState): void {
  state.set(META.transferRestarts, state.num(META.transferRestarts) + 1);
}

/** L: it was truncated past; fetch a snapshot, first from `from` (who said so). */
function startTransfer(ctx: RkvContext, state: ConsensusState, from: number): void {
  if (state.num(META.transferState) === FETCHING && state.num(META.transferReceived) > 0) countRestart(state);
  transferStaging(ctx).clear();
  state.set(META.transferState, FETCHING);
  state.set(META.transferSlot, 0);
  state.set(META.transferChunks, 0);
  state.set(META.transferReceived, 0);
  state.set(META.transferFrom, from);
  state.set(META.transferProgressNs, ctx.now());
  askChunk(ctx, state);
}

/** L: asks its sender for the first chunk not staged yet (chunk 0 of a new snapshot when none is). */
function askChunk(ctx: RkvContext, state: ConsensusState): void {
  state.set(META.transferAskedNs, ctx.now());
  const slot = state.num(META.transferSlot);
  let chunk = 0;
  if (slot > 0) {
    const staging = transferStaging(ctx);
    while (chunk < state.num(META.transferChunks) && staging.hasString(String(chunk))) chunk++;
  }
  toPeer(ctx, state, state.num(META.transferFrom), { type: 'snapshot-request', from: state.me, slot, chunk });
}

/** L's tick: re-asks after a heartbeat period; after a stall, starts over with another sender. */
function retryTransfer(ctx: RkvContext, state: ConsensusState): void {
  const now = ctx.now();
  if (state.num(META.transferState) === INSTALLING) {
    // Its own log answers (never lost), but staging many chunks takes a while: ask the sender for
    // the last chunk again each period (the answer is ignored) so that a leader sending it keeps
    // holding its truncation (inTransferGrace) until this replica can catch up from the snapshot.
    if (now - state.num(META.transferAskedNs) >= state.setup.heartbeatNs) {
      state.set(META.transferAskedNs, now);
      toPeer(ctx, state, state.num(META.transferFrom), {
        type: 'snapshot-request',
        from: state.me,
        slot: state.num(META.transferSlot),
        chunk: Math.max(0, state.num(META.transferChunks) - 1),
      });
    }
    return;
  }
  if (state.num(META.transferState) === NO_TRANSFER) {
    startTransfer(ctx, state, nextSender(state, state.num(META.transferFrom)));
    return;
  }
  if (now - state.num(META.transferProgressNs) >= TRANSFER_STALL_PERIODS * state.setup.heartbeatNs) {
    ctx.log.info({ from: state.num(META.transferFrom) }, 'rkv: state transfer stalled; starting over');
    startTransfer(ctx, state, nextSender(state, state.num(META.transferFrom)));
    return;
  }
  if (now - state.num(META.transferAskedNs) >= state.setup.heartbeatNs) askChunk(ctx, state);
}

/** The leader it heard of, unless that is `previous` (or itself): else the next replica after `previous`. */
function nextSender(state: ConsensusState, previous: number): number {
  const hint = state.num(META.leaderHint);
  if (hint !== NO_LEADER && hint !== state.me && hint !== previous) return hint;
  const group = state.setup.replicas.length;
  let next = (previous + 1) % group;
  if (next === state.me) next = (next + 1) % group;
  return next;
}

/** S: a laggard asks for a chunk; its durable log sends it (the log holds the snapshot). */
function onSnapshotRequest(
  ctx: RkvContext,
  state: ConsensusState,
  message: RkvMsg<'snapshot-request'>,
): void {
  if (!state.durable || message.from === state.me) return;
  state.set(META.snapshotRequests, state.num(META.snapshotRequests) + 1);
  if (state.role === LEADER) state.set(PEER_TRANSFER_NS + message.from, ctx.now());
  if (state.role === LEADER && state.isLaggardPeer(message.from)) {
    const bit = 1 << message.from;
    state.set(META.laggardMask, state.num(META.laggardMask) & ~bit);
    state.set(META.reportedMask, state.num(META.reportedMask) | bit);
    const held = state.num(META.truncated);
    if (held > state.num(PEER_APPLIED + message.from)) state.set(PEER_APPLIED + message.from, held);
    ctx.log.info(
      { replica: message.from, truncated: held },
      'rkv: a laggard asks for a snapshot; truncation waits for it',
    );
  }
  if (message.slot === 0 && message.chunk === 0)
    state.set(META.snapshotsServed, state.num(META.snapshotsServed) + 1);
  sendTo(ctx, state.setup.log, {
    type: 'snapshot-read',
    to: state.nameOf(message.from),
    sender: state.me,
    slot: message.slot,
    chunk: message.chunk,
    atLeast: state.num(META.truncated),
  });
}

/** L: stages a chunk; with all of them (see the section's comment) hands them to its log. */
function onSnapshotChunk(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'snapshot-chunk'>): void {
  if (state.num(META.laggard) !== 1 || state.num(META.transferState) !== FETCHING) return;
  if (rebuilding(state)) return; // the staging still holds the last install's items
  if (message.from !== state.num(META.transferFrom) || message.chunk >= message.chunks) return;
  if (message.slot <= state.num(META.applied)) return; // no use: the stall check moves on
  const staging = transferStaging(ctx);
  if (message.slot !== state.num(META.transferSlot) || message.chunks !== state.num(META.transferChunks)) {
    // A new snapshot (the first, or the sender no longer keeps the one named): stage it from scratch.
    if (state.num(META.transferReceived) > 0) countRestart(state);
    staging.clear();
    state.set(META.transferSlot, message.slot);
    state.set(META.transferChunks, message.chunks);
    state.set(META.transferReceived, 0);
  }
  const key = String(message.chunk);
  // A duplicate or late chunk changes nothing and asks for nothing: each answer to one ask asks
  // once more, so a duplicate answered would start a second request stream beside the first.
  if (staging.hasString(key)) return;
  state.set(META.transferProgressNs, ctx.now());
  staging.setString(key, rkvMessages.encode(message));
  state.set(META.transferReceived, state.num(META.transferReceived) + 1);
  state.set(META.transferChunksStaged, state.num(META.transferChunksStaged) + 1);
  const complete =
    state.num(META.transferReceived) >= message.chunks || state.unsafe(UNSAFE_INSTALL_PARTIAL_SNAPSHOT);
  if (!complete) {
    askChunk(ctx, state);
    return;
  }
  // Every chunk staged (or, mutated, whatever is): the log switches to them in one step, then
  // answers snapshot-installed; only then does this replica believe it holds state at the slot.
  state.set(META.transferState, INSTALLING);
  state.set(META.installSent, 0);
  sendInstalls(ctx, state);
}

/** The chunk numbers staged for the snapshot being fetched, in order. */
function stagedIndexes(
  ctx: RkvContext,
  state: ConsensusState,
  chunks = state.num(META.transferChunks),
): number[] {
  const staging = transferStaging(ctx);
  const staged: number[] = [];
  for (let chunk = 0; chunk < chunks; chunk++) if (staging.hasString(String(chunk))) staged.push(chunk);
  return staged;
}

/**
 * L, installing: hands its log the staged chunks not handed yet (log-install i of n, n the staged
 * ones), at most RKV_BURST_BYTES of them per run ("bounded bursts"); the log switches on the last.
 */
function sendInstalls(ctx: RkvContext, state: ConsensusState): void {
  const staging = transferStaging(ctx);
  const staged = stagedIndexes(ctx, state);
  let sent = state.num(META.installSent);
  let spent = 0;
  while (sent < staged.length) {
    const bytes = staging.getString(String(staged[sent]));
    if (bytes === undefined) break;
    if (spent > 0 && spent + bytes.length > RKV_BURST_BYTES) {
      askResume(ctx, state);
      break;
    }
    spent += bytes.length;
    const part = rkvMessages.decode(bytes) as RkvMsg<'snapshot-chunk'>;
    sendTo(ctx, state.setup.log, {
      type: 'log-install',
      slot: state.num(META.transferSlot),
      chunk: sent,
      chunks: staged.length,
      items: part.items,
      sessions: state.unsafe(UNSAFE_INSTALL_WITHOUT_SESSIONS) ? [] : part.sessions,
    });
    sent++;
  }
  state.set(META.installSent, sent);
}

/**
 * After an install: the staged chunks' items to the memtable (an apply each, overwriting every key
 * the snapshot has), at most RKV_BURST_BYTES per run; with the last, the staging is dropped and
 * the chosen entries above the snapshot are applied.
 */
function rebuildStep(ctx: RkvContext, state: ConsensusState): void {
  const staging = transferStaging(ctx);
  const slot = state.num(META.applied);
  const chunks = state.num(META.rebuildChunks);
  let next = state.num(META.rebuildNext);
  let spent = 0;
  for (; next < chunks; next++) {
    const bytes = staging.getString(String(next));
    if (bytes === undefined) continue;
    if (spent > 0 && spent + bytes.length > RKV_BURST_BYTES) {
      askResume(ctx, state);
      break;
    }
    const part = rkvMessages.decode(bytes) as RkvMsg<'snapshot-chunk'>;
    for (const item of part.items) {
      sendTo(ctx, state.setup.memtable, {
        type: 'apply',
        slot,
        key: item.key,
        value: item.value,
        origin: EMPTY,
      });
      spent += APPLY_BYTES + commandBytes(item);
    }
  }
  state.set(META.rebuildNext, next);
  if (next < chunks) return;
  state.set(META.rebuildNext, 0);
  state.set(META.rebuildChunks, 0);
  staging.clear();
  applyReady(ctx, state);
  const leader = state.num(META.leaderHint);
  if (leader !== NO_LEADER && leader !== state.me) maybeCatchUp(ctx, state, leader);
}

/** The staged chunks of the snapshot being fetched, in chunk order (missing ones left out). */
function stagedChunks(ctx: RkvContext, state: ConsensusState): RkvMsg<'snapshot-chunk'>[] {
  const staging = transferStaging(ctx);
  const parts: RkvMsg<'snapshot-chunk'>[] = [];
  for (let chunk = 0; chunk < state.num(META.transferChunks); chunk++) {
    const bytes = staging.getString(String(chunk));
    if (bytes !== undefined) parts.push(rkvMessages.decode(bytes) as RkvMsg<'snapshot-chunk'>);
  }
  return parts;
}

/**
 * L: its durable log holds the snapshot at `slot`: install it — the memtable brought to the
 * sender's contents (an apply per item overwrites every key the snapshot has; see the section's
 * comment), the sessions replaced, the log records ≤ slot dropped, applied = commit = truncation =
 * slot; it votes again and catches up from slot + 1.
 */
function onSnapshotInstalled(
  ctx: RkvContext,
  state: ConsensusState,
  message: RkvMsg<'snapshot-installed'>,
): void {
  const slot = message.slot;
  if (state.num(META.transferState) !== INSTALLING || slot !== state.num(META.transferSlot)) return;
  const parts = stagedChunks(ctx, state);
  if (!state.unsafe(UNSAFE_INSTALL_WITHOUT_SESSIONS)) {
    state.sessions.clear();
    for (const part of parts)
      for (const session of part.sessions) state.sessions.set(session.clientId, session.seq);
  }
  // The items go to the memtable in slices (rebuildStep), before anything chosen above the slot.
  state.set(META.rebuildChunks, state.num(META.transferChunks));
  state.set(META.rebuildNext, 0);
  const top = state.num(META.top);
  for (let held = state.num(META.truncated) + 1; held <= Math.min(slot, top); held++) state.drop(held);
  state.set(META.truncated, slot);
  state.set(META.logTruncated, slot);
  state.set(META.applied, slot);
  if (slot > state.num(META.commit)) state.set(META.commit, slot);
  state.set(META.durableApplied, slot);
  state.set(META.syncAskedApplied, slot);
  if (slot > top) state.set(META.top, slot);
  if (state.num(META.nextSlot) <= slot) state.set(META.nextSlot, slot + 1);
  state.set(META.laggard, 0);
  state.set(META.transferState, NO_TRANSFER);
  state.set(META.transferSlot, 0);
  state.set(META.transferChunks, 0);
  state.set(META.transferReceived, 0);
  state.set(META.transfers, state.num(META.transfers) + 1);
  state.set(META.catchupAskedNs, 0);
  state.set(META.role, FOLLOWER);
  state.set(META.waitFromNs, ctx.now());
  ctx.log.info(
    { slot, items: message.items, sessions: message.sessions },
    'rkv: snapshot installed; voting again',
  );
  rebuildStep(ctx, state);
}

// ---- the heartbeat, leases and reads -------------------------------------------------------------

/** Leader tick: heartbeat (commit point, truncation point), retransmit unacknowledged accepts. */
function heartbeat(ctx: RkvContext, state: ConsensusState): void {
  const now = ctx.now();
  state.set(META.heardNs, now);
  state.set(META.lastHeartbeatNs, now);
  toFollowers(ctx, state, {
    type: 'commit',
    from: state.me,
    ballot: state.num(META.ballot),
    commitThrough: state.num(META.commit),
    truncateThrough: state.num(META.truncated),
    sentNs: now,
  });
  const next = state.num(META.nextSlot);
  const from = state.num(META.commit) + 1;
  // Oldest first, within RETRANSMIT_BYTES: a slot that does not fit keeps its sentNs and goes
  // first next tick (the first slot always goes, so the oldest hole is always retried).
  let bytes = 0;
  for (let slot = from; slot < next && slot < from + RETRANSMIT_SLOTS; slot++) {
    const record = state.record(slot);
    if (record === undefined || record.chosen || now - record.sentNs < state.setup.heartbeatNs) continue;
    const to: number[] = [];
    for (let r = 0; r < state.setup.replicas.length; r++) {
      if (r === state.me || state.isLaggardPeer(r) || (record.acks & (1 << r)) !== 0) continue;
      to.push(r);
    }
    const size = to.length * (ACCEPT_BYTES + commandBytes(record));
    if (bytes > 0 && bytes + size > RETRANSMIT_BYTES) break;
    bytes += size;
    record.sentNs = now;
    state.store(slot, record);
    for (const r of to) {
      sendAccept(ctx, state, slot, record, r);
      state.set(META.retransmits, state.num(META.retransmits) + 1);
    }
  }
}

function onCommit(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'commit'>): void {
  const promised = state.num(META.promised);
  observe(ctx, state, message.ballot);
  if (message.ballot >= promised) {
    state.set(META.promised, message.ballot);
    hearLeader(ctx, state, message.from);
  } else if (message.sentNs > 0) {
    // A deposed leader's heartbeat: tell it, so it steps down.
    toPeer(ctx, state, message.from, { type: 'reject', from: state.me, ballot: message.ballot, promised });
    return;
  }
  learn(ctx, state, message.from, message.ballot, message.commitThrough, message.truncateThrough);
  if (message.sentNs > 0 && state.num(META.laggard) !== 1) {
    // With a durable log it reports the applied point its log confirmed durable (log-synced).
    const ack: RkvMessage = {
      type: 'heartbeat-ack',
      from: state.me,
      ballot: message.ballot,
      sentNs: message.sentNs,
      applied: state.num(state.durable ? META.durableApplied : META.applied),
    };
    // An ack that raised the promise leaves once the promise is durable: a restart then finds a
    // non-empty log and keeps refusing prepares for the lease this ack extends (onRecover).
    // One exception: a laggard raises its promise here in memory only (it acks nothing, so
    // nothing is synced), and after its install the first ack at that ballot goes out directly,
    // its promise not yet durable. Still safe: what the ack vouches for is the lease, and an
    // installed log is never empty (it holds the snapshot), so a restart refuses prepares for a
    // lease period all the same; an accept at that ballot makes the promise durable with its entry.
    if (message.ballot > promised)
      sync(ctx, state, message.ballot, [], [{ to: state.nameOf(message.from), message: ack }]);
    else toPeer(ctx, state, message.from, ack);
  }
}

function onHeartbeatAck(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'heartbeat-ack'>): void {
  if (state.role !== LEADER || message.ballot !== state.num(META.ballot)) return;
  notePeerApplied(state, message.from, message.applied);
  if (message.sentNs > state.num(PEER_HEARTBEAT + message.from)) {
    state.set(PEER_HEARTBEAT + message.from, message.sentNs);
  }
  // The lease starts at the send time of the newest heartbeat a majority (self included) acknowledged.
  const times: number[] = [state.num(META.lastHeartbeatNs)];
  for (let r = 0; r < state.setup.replicas.length; r++) {
    if (r !== state.me) times.push(state.num(PEER_HEARTBEAT + r));
  }
  times.sort((a, b) => b - a);
  const start = times[state.majority - 1] ?? 0;
  if (start > 0 && start + state.leaseNs > state.num(META.leaseUntil)) {
    state.set(META.leaseUntil, start + state.leaseNs);
  }
  truncate(ctx, state);
}

/** Why this replica may not serve a linearizable read now (undefined: it may; see the header). */
function leaseReadRefusal(ctx: RkvContext, state: ConsensusState): string | undefined {
  if (state.role !== LEADER) {
    const hint = state.num(META.leaderHint);
    return hint === NO_LEADER
      ? 'not the leader, and no leader is known; retry'
      : `not the leader; read at replica ${hint}`;
  }
  const applied = state.num(META.applied);
  if (applied < state.num(META.readySlot) || applied < state.num(META.commit)) {
    return 'the new leader has not applied its first slot yet; retry';
  }
  if (state.timed && !state.unsafe(UNSAFE_NO_LEASE) && ctx.now() >= state.num(META.leaseUntil)) {
    return 'the leader holds no lease (no majority heard it within T); retry';
  }
  return undefined;
}

/**
 * A conditional put (SET NX / XX; messages.ts "Conditional puts") at the leader: decided here,
 * before the log, so the log holds only the plain put it becomes. The leader locks the key
 * (`conds`: key → the waiting command), refuses while a command on the key is proposed but not
 * applied (its effect would not be in the read), and reads the key at its applied point through
 * the memtable; `cond-state` finishes it. While the key is locked no write of it is proposed, so
 * no command lands between the read and the put. A retry whose seq the sessions table holds wrote
 * (only a write takes a seq), and is answered so.
 */
function onCput(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'cput'>): void {
  if (message.key.length === 0) {
    refuse(ctx, state, 'a conditional put needs a non-empty key');
    return;
  }
  const refusal = leaseReadRefusal(ctx, state);
  if (refusal !== undefined) {
    refuse(ctx, state, refusal);
    return;
  }
  if (answeredFromSession(state, message)) {
    if (ctx.origin.kind !== 'none') ctx.reply({ type: 'cond-ok', written: true });
    return;
  }
  const conds = condsOf(ctx);
  if (conds.get(message.key) !== undefined || proposedOn(state, message.key)) {
    refuse(ctx, state, 'another write of this key is being decided or committed; retry');
    return;
  }
  const memtable = rkvRef(ctx, state.setup.memtable);
  if (memtable === undefined) {
    refuse(ctx, state, 'no memtable actor');
    return;
  }
  const origin = ctx.origin.kind === 'none' ? EMPTY : encodeOrigin(ctx.origin);
  conds.set(message.key, encodePendingCput(state.num(META.ballot), origin, message));
  // The answer comes back here (`cond-state`), not to the client.
  ctx.send(memtable, { type: 'cond-check', key: message.key }, { origin: 'self' });
}

/** Whether a slot above the applied point (proposed, not yet applied) writes or deletes `key`. */
function proposedOn(state: ConsensusState, key: Uint8Array): boolean {
  const next = state.num(META.nextSlot);
  for (let slot = state.num(META.applied) + 1; slot < next; slot++) {
    const record = state.record(slot);
    if (record !== undefined && sameBytes(commandKey(record), key)) return true;
  }
  return false;
}

/**
 * Whether a conditional put holds `key` locked (its read is out): a put or delete of the key must
 * not be proposed now, or it could land between the read and the put the condition decides. No
 * map until the first conditional put, so the offload experiment's puts look nothing up.
 */
function lockedByCput(ctx: RkvContext, key: Uint8Array): boolean {
  const root = ctx.root('conds');
  return root !== undefined && DmoHashMap.open(ctx.dmo, root).get(key) !== undefined;
}

/** The conditional puts waiting for their key's state: created on first use (no cost otherwise). */
function condsOf(ctx: RkvContext): DmoHashMap {
  const root = ctx.root('conds');
  if (root !== undefined) return DmoHashMap.open(ctx.dmo, root);
  const map = DmoHashMap.create(ctx.dmo);
  ctx.setRoot('conds', map.rootId);
  return map;
}

/** [ballot f64][origin bytes u32][origin][the cput, encoded] (little-endian). */
function encodePendingCput(ballot: number, origin: Uint8Array, message: RkvMsg<'cput'>): Uint8Array {
  const command = rkvMessages.encode(message);
  const out = new Uint8Array(12 + origin.length + command.length);
  const view = new DataView(out.buffer);
  view.setFloat64(0, ballot, true);
  view.setUint32(8, origin.length, true);
  out.set(origin, 12);
  out.set(command, 12 + origin.length);
  return out;
}

function decodePendingCput(bytes: Uint8Array): {
  readonly ballot: number;
  readonly origin: Uint8Array;
  readonly command: RkvMsg<'cput'>;
} {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const originBytes = view.getUint32(8, true);
  const command = rkvMessages.decode(bytes.subarray(12 + originBytes)) as RkvMsg<'cput'>;
  return { ballot: view.getFloat64(0, true), origin: bytes.slice(12, 12 + originBytes), command };
}

/**
 * The key's state for a waiting conditional put: unlock; still the leader of the same ballot and
 * under its lease ⇒ the condition decides — a put proposed under the client's session (the
 * memtable answers `put-ok` once it is applied), or `cond-ok` written false. Else the client is
 * refused and retries (nothing was proposed).
 */
function onCondState(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'cond-state'>): void {
  const conds = condsOf(ctx);
  const bytes = conds.get(message.key);
  if (bytes === undefined) return;
  conds.delete(message.key);
  const { ballot, origin, command } = decodePendingCput(bytes);
  const answer = (reply: RkvMessage) => {
    const decoded = origin.length > 0 ? readOrigin(origin, 0) : undefined;
    if (decoded !== undefined) ctx.replyTo(decoded.origin, reply);
  };
  const refusal =
    ballot === state.num(META.ballot) ? leaseReadRefusal(ctx, state) : 'leadership changed; retry';
  if (refusal !== undefined) {
    answer({ type: 'refused', reason: refusal, leader: state.num(META.leaderHint) });
    return;
  }
  const holds = command.condition === COND_NX ? !message.exists : message.exists;
  if (!holds) {
    answer({ type: 'cond-ok', written: false });
    return;
  }
  const put = { clientId: command.clientId, seq: command.seq, key: command.key, value: command.value };
  proposeNext(ctx, state, put, origin);
}

/**
 * A client's read at this replica (`get`, `dbsize`, a `scan` page): served by the leader under its lease — sent
 * on to the memtable with the client's origin, FIFO behind the applies — else refused.
 */
function onRead(
  ctx: RkvContext,
  state: ConsensusState,
  message: RkvMsg<'get'> | RkvMsg<'dbsize'> | RkvMsg<'scan'>,
): void {
  const refusal = leaseReadRefusal(ctx, state);
  if (refusal !== undefined) {
    refuse(ctx, state, refusal);
    return;
  }
  const memtable = rkvRef(ctx, state.setup.memtable);
  if (memtable === undefined) {
    refuse(ctx, state, 'no memtable actor');
    return;
  }
  // The client's origin travels with it: the memtable (or the SSTable reader) answers.
  ctx.send(memtable, message);
}

// ---- phase 1 ------------------------------------------------------------------------------------

function onPrepare(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'prepare'>): void {
  if (state.num(META.laggard) === 1) return;
  const promised = state.num(META.promised);
  const sticky = isSticky(ctx, state);
  if (message.ballot < promised || sticky || message.fromSlot < state.num(META.truncated)) {
    // A sticky leader refuses and keeps leading: a replica that was cut off and comes back with a
    // higher round must not depose a leader a majority still hears (liveness; safety does not
    // depend on stepping down, acceptors' promises do).
    if (sticky) noteRound(state, message.ballot);
    else observe(ctx, state, message.ballot);
    toPeer(ctx, state, message.from, { type: 'reject', from: state.me, ballot: message.ballot, promised });
    return;
  }
  observe(ctx, state, message.ballot);
  state.set(META.promised, message.ballot);
  const entries: RkvMsg<'promise'>['entries'][number][] = [];
  const top = state.num(META.top);
  for (let slot = Math.max(message.fromSlot, state.num(META.truncated)) + 1; slot <= top; slot++) {
    const record = state.record(slot);
    if (record === undefined) continue;
    entries.push({
      slot,
      ballot: record.ballot,
      chosen: record.chosen,
      clientId: record.clientId,
      seq: record.seq,
      key: record.key,
      value: record.value,
    });
  }
  // The promise leaves once it is durable.
  const promise: RkvMessage = { type: 'promise', from: state.me, ballot: message.ballot, entries };
  sync(ctx, state, message.ballot, [], [{ to: state.nameOf(message.from), message: promise }]);
}

function onPromise(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'promise'>): void {
  const ballot = state.num(META.ballot);
  if (state.role !== CANDIDATE || message.ballot !== ballot) return;
  const mask = state.num(META.promiseMask);
  if ((mask & (1 << message.from)) !== 0) return;
  // P2c: per slot above fromSlot, keep a chosen value, else the one accepted at the highest ballot.
  // Slots this candidate applied and truncated while it campaigned are settled: storing them again
  // would leave records nobody truncates.
  const from = Math.max(state.num(META.fromSlot), state.num(META.truncated));
  for (const entry of message.entries) {
    if (entry.slot <= from) continue;
    const mine = state.record(entry.slot);
    if (mine?.chosen === true) continue;
    if (mine === undefined || entry.chosen || mine.ballot < entry.ballot) {
      // A client waits on this replica's record only if the adopted command is the same one.
      const origin = mine !== undefined && sameCommand(mine, entry) ? mine.origin : EMPTY;
      state.store(entry.slot, slotRecord(entry.ballot, entry.chosen, entry, origin));
    }
  }
  state.set(META.promiseMask, mask | (1 << message.from));
  if (popcount(mask | (1 << message.from)) >= state.majority) lead(ctx, state);
}

function onReject(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'reject'>): void {
  observe(ctx, state, message.promised);
  if (message.promised > state.num(META.promised)) state.set(META.promised, message.promised);
}

/** The timer: the leader's heartbeat, a candidate's retry, a follower's election timeout. */
function onTick(ctx: RkvContext, state: ConsensusState): void {
  if (!state.timed) return;
  ctx.setTimer(state.setup.heartbeatNs, { type: 'tick' });
  // Work a run left to a `resume` still undone a period later (the resume lost or slow): do it
  // here; progress is in meta, so a resume that arrives after all does only what is left.
  if (state.num(META.resumeAsked) === 1) onResume(ctx, state);
  if (state.num(META.laggard) === 1) {
    if (state.durable) retryTransfer(ctx, state);
    return;
  }
  const now = ctx.now();
  switch (state.role) {
    case LEADER:
      heartbeat(ctx, state);
      return;
    case CANDIDATE: {
      if (now - state.num(META.waitFromNs) >= electionTimeout(state)) {
        standOrPreVote(ctx, state);
        return;
      }
      const mask = state.num(META.promiseMask);
      const ballot = state.num(META.ballot);
      // With a durable log the retries also go through it: behind the stand's write (the log
      // handles writes in order), so they never leave before the ballot is durable.
      const retries: { to: string; message: RkvMessage }[] = [];
      state.setup.replicas.forEach((_name, r) => {
        if ((mask & (1 << r)) === 0) {
          retries.push({
            to: state.nameOf(r),
            message: { type: 'prepare', from: state.me, ballot, fromSlot: state.num(META.fromSlot) },
          });
        }
      });
      sync(ctx, state, 0, [], retries);
      return;
    }
    default:
      if (now - state.num(META.waitFromNs) >= electionTimeout(state)) {
        standOrPreVote(ctx, state);
        return;
      }
      if (state.num(META.leaderHint) !== NO_LEADER) maybeCatchUp(ctx, state, state.num(META.leaderHint));
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
      refuse(
        ctx,
        undefined,
        `replica ${message.replica} and leader ${message.leader} must both be below the group size ${group}`,
      );
      return;
    }
    if (message.heartbeatNs > 0 && !(message.electionTimeoutNs > message.heartbeatNs)) {
      refuse(
        ctx,
        undefined,
        `the election timeout (${message.electionTimeoutNs} ns) must exceed the heartbeat period (${message.heartbeatNs} ns)`,
      );
      return;
    }
    setupMap.setString('setup', rkvMessages.encode(message));
    meta.set(META.nextSlot, 1);
    meta.set(META.leaderHint, NO_LEADER);
    meta.set(META.waitFromNs, ctx.now());
    meta.set(META.started, 1);
    const state = openState(ctx, meta, message);
    if (message.heartbeatNs > 0) ctx.setTimer(message.heartbeatNs, { type: 'tick' });
    if (state.durable) {
      // Start from what the durable log holds (nothing on a first start): see onRecover.
      meta.set(META.recovering, 1);
      sendTo(ctx, message.log, { type: 'log-read', part: 0 });
    } else if (message.replica === message.leader) stand(ctx, state, 1);
  }
  if (ctx.origin.kind !== 'none') ctx.reply({ type: 'ready' });
}

/**
 * Before its durable log answered, a (re)started replica takes no part: it knows neither its
 * promise nor what it accepted. Its tick asks the log again (the first ask may have reached the
 * log actor before its setup).
 */
function whileRecovering(ctx: RkvContext, state: ConsensusState, message: RkvMessage): void {
  switch (message.type) {
    case 'recover':
      onRecover(ctx, state, message);
      return;
    case 'tick':
      if (state.timed) ctx.setTimer(state.setup.heartbeatNs, { type: 'tick' });
      sendTo(ctx, state.setup.log, { type: 'log-read', part: state.num(META.recoverPart) });
      return;
    case 'put':
    case 'get':
    case 'del':
    case 'dbsize':
    case 'cput':
    case 'scan':
      refuse(ctx, state, 'the replica is recovering its durable log; retry');
      return;
    default:
  }
}

/**
 * Installs the durable state after a (re)start, one `recover` part at a time (log-actor.ts cuts
 * it so no answer outgrows a ring frame): the promise (at least every accepted ballot), the
 * sessions and the truncation point of the log's snapshot, the entries above it; rebuilds the
 * memtable — each part's snapshot items as the part arrives, then, with the last part, the chosen
 * prefix above it re-applied in slot order (in slices: "bounded bursts"; what the memtable held is
 * lost with the NIC's memory); then follows. The replica stays `recovering` until the last part:
 * a crash before it loses only NIC memory and starts over from part 0. On a first start (an empty
 * log) the setup leader stands, as without a log.
 */
function onRecover(ctx: RkvContext, state: ConsensusState, message: RkvMsg<'recover'>): void {
  const part = state.num(META.recoverPart);
  // A repeated answer (the tick re-asks) or one of another read: the part asked for comes again.
  if (message.part !== part || message.part >= message.parts) return;
  const amnesia = state.unsafe(UNSAFE_RECOVER_WITHOUT_LOG);
  const truncated = amnesia ? 0 : message.truncated;
  if (part === 0) {
    state.set(META.truncated, truncated);
    state.set(META.logTruncated, truncated);
    state.set(META.applied, truncated);
    state.set(META.commit, truncated);
    state.set(META.top, truncated);
  } else if (truncated !== state.num(META.truncated)) {
    ctx.log.warn({ part, truncated }, 'rkv: a recover part of another log state; ignored');
    return;
  }
  const entries = amnesia ? [] : message.entries;
  let promised = amnesia ? 0 : message.promised;
  for (const entry of entries) promised = Math.max(promised, entry.ballot);
  if (promised > state.num(META.promised)) state.set(META.promised, promised);
  noteRound(state, promised);
  if (!amnesia) for (const session of message.sessions) state.sessions.set(session.clientId, session.seq);
  let top = state.num(META.top);
  for (const entry of entries) {
    state.store(entry.slot, slotRecord(entry.ballot, entry.chosen, entry));
    top = Math.max(top, entry.slot);
  }
  state.set(META.top, top);
  state.set(META.nextSlot, top + 1);
  let spent = 0;
  if (!amnesia) {
    for (const item of message.snapshot) {
      sendTo(ctx, state.setup.memtable, {
        type: 'apply',
        slot: truncated,
        key: item.key,
        value: item.value,
        origin: EMPTY,
      });
      spent += APPLY_BYTES + commandBytes(item);
    }
  }
  state.set(META.recoverParts, state.num(META.recoverParts) + 1);
  if (part + 1 < message.parts) {
    state.set(META.recoverPart, part + 1);
    sendTo(ctx, state.setup.log, { type: 'log-read', part: part + 1 });
    return;
  }
  state.set(META.recoverPart, 0);
  let commit = truncated;
  while (state.record(commit + 1)?.chosen === true) commit++;
  state.set(META.commit, commit);
  applyReady(ctx, state, false, Math.max(1, RKV_BURST_BYTES - spent));
  // All of it came from the log: durable (a `resume` applies the rest and writes it again).
  state.set(META.durableApplied, state.num(META.applied));
  state.set(META.syncAskedApplied, state.num(META.applied));
  state.set(META.recovering, 0);
  state.set(META.role, FOLLOWER);
  state.set(META.leaderHint, NO_LEADER);
  state.set(META.waitFromNs, ctx.now());
  if (!message.empty) {
    // The previous incarnation may have acknowledged a heartbeat whose lease still runs (a leader
    // serves reads on it because its followers refuse prepares until heardNs + T): refuse for a
    // whole lease period from now, as if the leader had just been heard. (An empty log never
    // acknowledged one: a heartbeat that raises the promise is acknowledged only once the promise
    // is durable, see onCommit.)
    if (!state.unsafe(UNSAFE_RECOVER_WITHOUT_LOG)) state.set(META.heardNs, ctx.now());
    state.set(META.recovered, state.num(META.recovered) + 1);
    ctx.log.info(
      {
        promised: state.num(META.promised),
        truncated,
        applied: state.num(META.applied),
        top,
        parts: message.parts,
      },
      'rkv: recovered',
    );
  } else if (state.me === state.setup.leader) {
    // Above every durable promise and accepted ballot (all 0 on a first start: round 1), never a
    // fixed round: a restarted proposer must not reuse a ballot of an earlier incarnation.
    stand(ctx, state);
  }
}

function openState(ctx: RkvContext, meta: DmoNumberMap, setup: RkvMsg<'consensus-setup'>): ConsensusState {
  return new ConsensusState(
    meta,
    DmoHashMap.open(ctx.dmo, rootOf(ctx, 'log')),
    DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'sessions')),
    setup,
  );
}

/** What a consensus actor reports about itself (tests and the DST read it through `inspectConsensus`). */
export interface ConsensusView {
  readonly role: 'follower' | 'candidate' | 'leader';
  readonly ballot: number;
  readonly promised: number;
  readonly commit: number;
  readonly applied: number;
  readonly truncated: number;
  /** Log records held (slots truncated..top that exist). */
  readonly logRecords: number;
  readonly laggard: boolean;
  /** Replicas this leader truncated past. */
  readonly laggardsMarked: number;
  readonly elections: number;
  readonly leaseUntilNs: number;
  /** Commands a session already applied, skipped at apply time. */
  readonly duplicatesSkipped: number;
  /** Accepts the leader sent again on a heartbeat tick. */
  readonly retransmits: number;
  /** Chosen entries received by catch-up. */
  readonly caughtUp: number;
  /** Catch-up answers that brought new entries (each at most CATCHUP_ENTRIES and CATCHUP_BYTES). */
  readonly catchupAnswers: number;
  /** Retried puts the leader answered from the sessions table. */
  readonly answeredFromSession: number;
  /** Restarts recovered from a non-empty durable log. */
  readonly recovered: number;
  /** Waiting for its durable log after a (re)start. */
  readonly recovering: boolean;
  /** Repeated `recover` answers ignored after the first was installed. */
  readonly duplicateRecovers: number;
  /** `recover` parts installed, over every restart (a state over the log's chunk budget takes several). */
  readonly recoverParts: number;
  /** Handler runs that stopped at RKV_BURST_BYTES and left the rest to a `resume`. */
  readonly resumes: number;
  /** A laggard fetching a snapshot (or waiting for its log to hold one). */
  readonly transferring: boolean;
  /** Chunks of the snapshot being fetched, in all and staged (0 when none). */
  readonly transferChunks: number;
  readonly transferReceived: number;
  /** Snapshots installed (each ended a laggard episode). */
  readonly transfers: number;
  /** Chunks staged over all transfers (duplicates not counted). */
  readonly transferChunksStaged: number;
  /** Snapshot transfers this replica was asked to serve. */
  readonly snapshotsServed: number;
  /** Pre-vote rounds this replica started (setup.preVote). */
  readonly preVotes: number;
  /** Transfers that threw staged chunks away and started over (another snapshot, or a stalled sender). */
  readonly transferRestarts: number;
  /** Snapshot chunk requests this replica was sent (every one, re-asks included). */
  readonly snapshotRequests: number;
  /** The highest ballot round this replica has seen (its next stand goes one above). */
  readonly maxRound: number;
}

/** Reads a consensus actor's DMO state (a test hook: the heap and roots of its instance). */
export function inspectConsensus(
  heap: ActorContext<RkvMessage, RkvMessage>['dmo'],
  roots: (name: string) => ObjectId | undefined,
): ConsensusView | undefined {
  const metaId = roots('meta');
  const logId = roots('log');
  if (metaId === undefined || logId === undefined) return undefined;
  const meta = DmoNumberMap.open(heap, metaId);
  const num = (key: number): number => meta.get(key) ?? 0;
  const log = DmoHashMap.open(heap, logId);
  const role = num(META.role);
  return {
    role: role === LEADER ? 'leader' : role === CANDIDATE ? 'candidate' : 'follower',
    ballot: num(META.ballot),
    promised: num(META.promised),
    commit: num(META.commit),
    applied: num(META.applied),
    truncated: num(META.truncated),
    logRecords: log.size,
    laggard: num(META.laggard) === 1,
    laggardsMarked: num(META.laggards),
    elections: num(META.elections),
    leaseUntilNs: num(META.leaseUntil),
    duplicatesSkipped: num(META.duplicatesSkipped),
    retransmits: num(META.retransmits),
    caughtUp: num(META.caughtUp),
    catchupAnswers: num(META.catchupAnswers),
    answeredFromSession: num(META.answeredFromSession),
    recovered: num(META.recovered),
    recovering: num(META.recovering) === 1,
    duplicateRecovers: num(META.duplicateRecovers),
    recoverParts: num(META.recoverParts),
    resumes: num(META.resumes),
    transferring: num(META.transferState) !== NO_TRANSFER,
    transferChunks: num(META.transferChunks),
    transferReceived: num(META.transferReceived),
    transfers: num(META.transfers),
    transferChunksStaged: num(META.transferChunksStaged),
    snapshotsServed: num(META.snapshotsServed),
    preVotes: num(META.preVotes),
    transferRestarts: num(META.transferRestarts),
    snapshotRequests: num(META.snapshotRequests),
    maxRound: num(META.maxRound),
  };
}

/**
 * The consensus actor (one per replica; `any`: starts on the NIC, may migrate). Set up with
 * `consensus-setup`; then it elects (or, static, the setup leader leads), serves `put`s and lease
 * `get`s at the leader, and refuses them elsewhere with a leader hint.
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
    ctx.setRoot('sessions', DmoNumberMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const meta = DmoNumberMap.open(ctx.dmo, rootOf(ctx, 'meta'));
    const setupMap = DmoHashMap.open(ctx.dmo, rootOf(ctx, 'setup'));
    if (message.type === 'consensus-setup') return onSetup(ctx, meta, setupMap, message);
    const bytes = setupMap.getString('setup');
    if (bytes === undefined) {
      ctx.log.warn({ type: message.type }, 'rkv: message before setup dropped');
      if (
        message.type === 'put' ||
        message.type === 'get' ||
        message.type === 'del' ||
        message.type === 'dbsize' ||
        message.type === 'cput' ||
        message.type === 'scan'
      ) {
        refuse(ctx, undefined, 'the consensus actor is not set up yet');
      }
      return;
    }
    const setup = rkvMessages.decode(bytes) as RkvMsg<'consensus-setup'>;
    const state = openState(ctx, meta, setup);
    if (meta.get(META.recovering) === 1) whileRecovering(ctx, state, message);
    else dispatch(ctx, state, message);
    if (state.durable) flushLog(ctx, state);
  },
  cost: consensusWork,
});

function dispatch(ctx: RkvContext, state: ConsensusState, message: RkvMessage): void {
  switch (message.type) {
    case 'put':
      onPut(ctx, state, message);
      return;
    case 'del':
      onDel(ctx, state, message);
      return;
    case 'get':
    case 'dbsize':
    case 'scan':
      onRead(ctx, state, message);
      return;
    case 'cput':
      onCput(ctx, state, message);
      return;
    case 'cond-state':
      onCondState(ctx, state, message);
      return;
    case 'accept':
      onAccept(ctx, state, message);
      return;
    case 'accepted':
      onAccepted(ctx, state, message);
      return;
    case 'commit':
      onCommit(ctx, state, message);
      return;
    case 'heartbeat-ack':
      onHeartbeatAck(ctx, state, message);
      return;
    case 'catchup-request':
      onCatchupRequest(ctx, state, message);
      return;
    case 'catchup':
      onCatchup(ctx, state, message);
      return;
    case 'prepare':
      onPrepare(ctx, state, message);
      return;
    case 'promise':
      onPromise(ctx, state, message);
      return;
    case 'reject':
      onReject(ctx, state, message);
      return;
    case 'tick':
      onTick(ctx, state);
      return;
    case 'log-synced':
      if (message.applied > state.num(META.durableApplied)) state.set(META.durableApplied, message.applied);
      return;
    case 'snapshot-request':
      onSnapshotRequest(ctx, state, message);
      return;
    case 'snapshot-chunk':
      onSnapshotChunk(ctx, state, message);
      return;
    case 'snapshot-installed':
      onSnapshotInstalled(ctx, state, message);
      return;
    case 'pre-vote':
      onPreVote(ctx, state, message);
      return;
    case 'pre-vote-reply':
      onPreVoteReply(ctx, state, message);
      return;
    case 'recover':
      // An answer to a log-read the recovering tick repeated: the first one was installed.
      state.set(META.duplicateRecovers, state.num(META.duplicateRecovers) + 1);
      return;
    case 'resume':
      onResume(ctx, state);
      return;
    default:
      ctx.log.warn({ type: message.type }, 'rkv: not a consensus message; dropped');
  }
}

// ---- declared work (the simulator's cost model; docs/apps/rkv-sim.md) ---------------------------

/** Decoding, dispatch and re-opening the DMO roots, for any message. */
export const RKV_BASE_INSTRUCTIONS = 600;
/** One DMO hash-map operation on a log record (hash, probe, copy the header). */
const LOG_RECORD_INSTRUCTIONS = 400;
/** Building and encoding one outgoing message. */
const SEND_INSTRUCTIONS = 250;
/** Copying or encoding payload bytes: 8 bytes per instruction. */
const PER_BYTE_INSTRUCTIONS = 1 / 8;

function entryBytes(entries: readonly { key: Uint8Array; value: Uint8Array }[]): number {
  let bytes = 0;
  for (const entry of entries) bytes += entry.key.length + entry.value.length;
  return bytes;
}

function consensusWork(message: RkvMessage): HandlerWork {
  const base = { ipc: 1.2, mpki: 2, workingSetBytes: 64 * 1024 };
  switch (message.type) {
    case 'put': {
      // Session look-up, record the slot (2 map ops: read next slot, store), one accept per follower (2).
      const bytes = message.key.length + message.value.length;
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          3 * LOG_RECORD_INSTRUCTIONS +
          2 * SEND_INSTRUCTIONS +
          3 * bytes * PER_BYTE_INSTRUCTIONS,
      };
    }
    case 'del': {
      // As a put whose value is the key.
      const bytes = 2 * message.key.length;
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          3 * LOG_RECORD_INSTRUCTIONS +
          2 * SEND_INSTRUCTIONS +
          3 * bytes * PER_BYTE_INSTRUCTIONS,
      };
    }
    case 'get':
    case 'dbsize':
    case 'scan':
      // Role, lease and applied point from meta; forward the key to the memtable.
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + SEND_INSTRUCTIONS };
    case 'accept': {
      const bytes = message.key.length + message.value.length;
      // Store the record, answer; the piggybacked commit usually applies one entry (read, mark,
      // session look-up, one apply message carrying the value).
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
      // Update the record; when chosen, apply it (read, session, one apply), truncate one slot
      // (amortised), send the commits.
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + 4 * LOG_RECORD_INSTRUCTIONS + 3 * SEND_INSTRUCTIONS,
      };
    case 'commit':
      // Mark and apply (usually one entry), drop one truncated entry, answer a heartbeat.
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + 3 * LOG_RECORD_INSTRUCTIONS + 2 * SEND_INSTRUCTIONS,
      };
    case 'heartbeat-ack':
      // Peer points, the lease (a sort of ≤ 16 numbers), truncation (amortised).
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + 2 * LOG_RECORD_INSTRUCTIONS };
    case 'catchup-request': {
      // The records the answer may read: the entry bound. The byte budget (CATCHUP_BYTES) can only
      // stop it sooner, after one record more than it sends, which this bound already covers; the
      // answer's bytes are charged where they are copied, at the follower ('catchup').
      const entries = Math.max(0, Math.min(message.toSlot - message.fromSlot + 1, CATCHUP_ENTRIES));
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + entries * LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS,
      };
    }
    case 'catchup':
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          message.entries.length * (2 * LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS) +
          2 * entryBytes(message.entries) * PER_BYTE_INSTRUCTIONS,
      };
    case 'tick':
      // A heartbeat per follower, and a scan of the (few) unchosen slots for retransmission.
      return {
        ...base,
        instructions: RKV_BASE_INSTRUCTIONS + 2 * SEND_INSTRUCTIONS + 2 * LOG_RECORD_INSTRUCTIONS,
      };
    case 'reject':
    case 'log-synced':
    case 'pre-vote-reply':
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS };
    case 'pre-vote':
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + SEND_INSTRUCTIONS };
    case 'recover':
      // A restart: store every durable entry, re-apply the snapshot and the chosen prefix (one
      // apply each), the sessions table.
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          message.entries.length * (2 * LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS) +
          message.snapshot.length * SEND_INSTRUCTIONS +
          message.sessions.length * LOG_RECORD_INSTRUCTIONS +
          2 * (entryBytes(message.entries) + entryBytes(message.snapshot)) * PER_BYTE_INSTRUCTIONS,
      };
    case 'snapshot-request':
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS };
    case 'snapshot-chunk':
      // Stage the chunk (its bytes copied into the DMO), ask for the next; the last one also reads
      // every staged chunk back and sends each to the log.
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          2 * LOG_RECORD_INSTRUCTIONS +
          SEND_INSTRUCTIONS +
          (message.items.length + message.sessions.length) * LOG_RECORD_INSTRUCTIONS +
          2 * entryBytes(message.items) * PER_BYTE_INSTRUCTIONS,
      };
    case 'snapshot-installed':
      // One apply per item to the memtable, the sessions table rewritten.
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          message.items * (LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS) +
          message.sessions * LOG_RECORD_INSTRUCTIONS,
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
