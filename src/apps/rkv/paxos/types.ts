/**
 * The vocabulary of RKV's Multi-Paxos (paper, "The applications": RKV's consensus actor runs
 * Multi-Paxos with a distinguished leader): identifiers, ballots, log commands, snapshots, every
 * message a replica sends or receives, and what one `handle` call returns.
 *
 * Messages are plain data (no classes, no functions) so a host can put them through a codec and
 * over any wire; a replica never mutates a message it received and never keeps a reference into
 * one it sent, so a simulator may deliver the same object twice (a duplicate) safely.
 *
 * Slots are numbered from 1. Slot 0 means "none": `appliedThrough = 0` is an empty log.
 */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A replica of one consensus group: 0 … replicaCount − 1. */
export type ReplicaId = Brand<number, 'ReplicaId'>;
/** A client session; with `seq` it identifies one command for exactly-once application. */
export type ClientId = Brand<number, 'ClientId'>;
/**
 * A Paxos ballot (proposal number), totally ordered and unique per proposer:
 *
 *   ballot = round · BALLOT_REPLICA_SPACE + replicaId      (round ≥ 1 for a real ballot)
 *
 * so comparing ballots is comparing numbers, and two replicas never pick the same ballot.
 * `NO_BALLOT` (0) is below every real ballot.
 */
export type Ballot = Brand<number, 'Ballot'>;

/** Replica ids must be below this; ballots reserve this many values per round. */
export const BALLOT_REPLICA_SPACE = 1024;
export const NO_BALLOT = 0 as Ballot;

export function replicaId(value: number): ReplicaId {
  if (!(Number.isInteger(value) && value >= 0 && value < BALLOT_REPLICA_SPACE)) {
    throw new RangeError(`replica id must be an integer in [0, ${BALLOT_REPLICA_SPACE}), got ${value}`);
  }
  return value as ReplicaId;
}

export function clientId(value: number): ClientId {
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new RangeError(`client id must be a non-negative safe integer, got ${value}`);
  }
  return value as ClientId;
}

export function makeBallot(round: number, leader: ReplicaId): Ballot {
  return (round * BALLOT_REPLICA_SPACE + leader) as Ballot;
}

export function ballotRound(ballot: Ballot): number {
  return Math.floor(ballot / BALLOT_REPLICA_SPACE);
}

/** The replica that owns (proposes with) a ballot. Meaningless for NO_BALLOT. */
export function ballotLeader(ballot: Ballot): ReplicaId {
  return (ballot % BALLOT_REPLICA_SPACE) as ReplicaId;
}

/**
 * What a log slot holds: a client's command, or a no-op a new leader writes into a hole no
 * majority-reported value fills (Multi-Paxos gap filling).
 */
export type LogCommand<C> =
  | { readonly kind: 'noop' }
  | { readonly kind: 'request'; readonly clientId: ClientId; readonly seq: number; readonly payload: C };

/**
 * A command's identity: two proposals for one slot with the same identity are the same command
 * (a client never reuses a sequence number for a different payload). Used by safety checks.
 */
export function commandIdentity<C>(command: LogCommand<C>): string {
  return command.kind === 'noop' ? 'noop' : `${command.clientId}:${command.seq}`;
}

/** The last result a client session got, kept so a retried command is answered, not re-applied. */
export interface SessionRecord<R> {
  readonly clientId: ClientId;
  readonly seq: number;
  readonly result: R;
}

/**
 * The replicated state at `lastIncludedSlot`: the state machine's bytes and the client sessions
 * (dedup is part of the replicated state: it must travel with the snapshot, or a retry arriving at
 * a replica that caught up by snapshot would be applied twice).
 */
export interface Snapshot<R> {
  readonly lastIncludedSlot: number;
  readonly state: Uint8Array;
  readonly sessions: readonly SessionRecord<R>[];
}

/** One slot's command in an accept or catch-up message. */
export interface SlotCommand<C> {
  readonly slot: number;
  readonly command: LogCommand<C>;
}

/** An acceptor's report about one slot in a promise (phase 1b). */
export interface PromiseEntry<C> {
  readonly slot: number;
  /** The ballot the value was accepted at (NO_BALLOT when only learned as chosen). */
  readonly ballot: Ballot;
  readonly command: LogCommand<C>;
  /** The acceptor knows this slot is chosen: the new leader adopts it without a vote. */
  readonly chosen: boolean;
}

/**
 * Replica ↔ replica messages. Every one carries its sender; ballots order them.
 *
 *   leader election (phase 1):  prepare ──▶ promise | reject
 *   common case (phase 2):      accept ──▶ accepted | reject,  then  commit (learn) to all
 *   liveness:                   heartbeat ──▶ heartbeatAck
 *   catch-up:                   catchupRequest ──▶ catchup (chosen entries, or a snapshot)
 */
export type PeerMessage<C, R> =
  /** Phase 1a: "promise not to accept below `ballot`; tell me what you accepted from `fromSlot`". */
  | { readonly type: 'prepare'; readonly from: ReplicaId; readonly ballot: Ballot; readonly fromSlot: number }
  /** Phase 1b. `truncatedThrough`: slots ≤ it are chosen and compacted into a snapshot here. */
  | {
      readonly type: 'promise';
      readonly from: ReplicaId;
      readonly ballot: Ballot;
      readonly truncatedThrough: number;
      readonly entries: readonly PromiseEntry<C>[];
    }
  /** Phase 2a, batched; piggybacks the leader's commit point. */
  | {
      readonly type: 'accept';
      readonly from: ReplicaId;
      readonly ballot: Ballot;
      readonly entries: readonly SlotCommand<C>[];
      readonly commitThrough: number;
    }
  /** Phase 2b for the listed slots. */
  | {
      readonly type: 'accepted';
      readonly from: ReplicaId;
      readonly ballot: Ballot;
      readonly slots: readonly number[];
    }
  /** A prepare or accept at `ballot` refused: the sender promised `promised` (> ballot). */
  | { readonly type: 'reject'; readonly from: ReplicaId; readonly ballot: Ballot; readonly promised: Ballot }
  /** Learn round: every slot ≤ commitThrough is chosen; values accepted at `ballot` are the chosen ones. */
  | {
      readonly type: 'commit';
      readonly from: ReplicaId;
      readonly ballot: Ballot;
      readonly commitThrough: number;
    }
  /** Leader liveness (and the commit point, for followers that missed a commit). */
  | {
      readonly type: 'heartbeat';
      readonly from: ReplicaId;
      readonly ballot: Ballot;
      readonly commitThrough: number;
    }
  | {
      readonly type: 'heartbeatAck';
      readonly from: ReplicaId;
      readonly ballot: Ballot;
      readonly appliedThrough: number;
    }
  /** "Send me the chosen commands from `fromSlot`" (a lagging follower, or a leader missing values). */
  | { readonly type: 'catchupRequest'; readonly from: ReplicaId; readonly fromSlot: number }
  /** Chosen commands (and a snapshot first, when `fromSlot` was already compacted away here). */
  | {
      readonly type: 'catchup';
      readonly from: ReplicaId;
      readonly snapshot: Snapshot<R> | null;
      readonly entries: readonly SlotCommand<C>[];
    };

/** A client's command. Retries reuse `seq`; a client has at most one command outstanding. */
export interface ClientRequest<C> {
  readonly type: 'request';
  readonly clientId: ClientId;
  readonly seq: number;
  readonly command: C;
}

/** What a replica tells a client: the result, or "not me, try `leaderHint`". */
export type ClientReply<R> =
  | { readonly type: 'reply'; readonly clientId: ClientId; readonly seq: number; readonly result: R }
  | {
      readonly type: 'redirect';
      readonly clientId: ClientId;
      readonly seq: number;
      readonly leaderHint: ReplicaId | null;
    };

/** The host's wake-up call: deliver at (or after) the last `wakeAtNs` a replica asked for. */
export interface Tick {
  readonly type: 'tick';
}

/** Everything `PaxosReplica.handle` accepts. */
export type PaxosInput<C, R> = PeerMessage<C, R> | ClientRequest<C> | Tick;

/** A message to another replica of the group. */
export interface Outbound<C, R> {
  readonly to: ReplicaId;
  readonly message: PeerMessage<C, R>;
}

/** One log entry applied to the state machine, in slot order. */
export interface AppliedEntry<C, R> {
  readonly slot: number;
  readonly command: LogCommand<C>;
  /**
   * The state machine's result; `undefined` for a no-op. For a retried request that the sessions
   * table recognised, the cached result (and `duplicate` is true: the state machine was not called).
   */
  readonly result: R | undefined;
  readonly duplicate: boolean;
}

/**
 * What one `handle` call produced. The host must send `send` and `replies` (in any order; the
 * durable state they depend on is already persisted when `handle` returns) and arrange one `tick`
 * at `wakeAtNs` (replacing any earlier wake-up it holds for this replica).
 */
export interface PaxosOutputs<C, R> {
  readonly send: Outbound<C, R>[];
  readonly replies: ClientReply<R>[];
  /** Entries applied during this call, in slot order (for the host's memtable/metrics). */
  readonly applied: AppliedEntry<C, R>[];
  /** Slot of a snapshot installed from a peer during this call (state jumped there), else 0. */
  readonly installedSnapshotSlot: number;
  readonly wakeAtNs: number;
}

/** A replica's role in the current ballot. */
export type PaxosRole = 'follower' | 'candidate' | 'leader';

/** A read-only view of a replica, for hosts (INFO, metrics) and for invariant checks. */
export interface ReplicaStatus {
  readonly replicaId: ReplicaId;
  readonly role: PaxosRole;
  /** The highest ballot promised (persisted). */
  readonly promised: Ballot;
  /** The ballot this replica leads or campaigns with; NO_BALLOT as a follower. */
  readonly ownBallot: Ballot;
  readonly leaderHint: ReplicaId | null;
  readonly appliedThrough: number;
  readonly snapshotSlot: number;
  /** Log entries held in memory (slots above the snapshot). */
  readonly logEntries: number;
}
