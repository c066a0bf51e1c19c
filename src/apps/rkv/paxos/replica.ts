/**
 * One Multi-Paxos replica as a pure, deterministic state machine — RKV's consensus actor logic
 * (paper, "The applications": "Multi-Paxos … a leader runs accept + learn in the common case;
 * two-phase leader election; a new leader fills log gaps"). Lamport's "Paxos Made Simple" §3
 * (the state machine approach with a distinguished proposer) is the algorithm; each replica plays
 * proposer, acceptor and learner.
 *
 * `handle(input, nowNs)` → `{ send, replies, applied, wakeAtNs }`. No I/O, clock or randomness of
 * its own: time comes in with every call, randomness (election timeouts) from an injected source,
 * durability through an injected `PaxosStorage` that is synced before `handle` returns — so the
 * promises and accepts a returned message reports are durable before the host can send it.
 *
 * ── Common case (a stable leader with ballot b) ─────────────────────────────────────────────────
 *   client ─request─▶ leader: slot s = next; accept locally (persist)
 *          leader ─accept(b, s, cmd)─▶ followers: persist, ─accepted(b, s)─▶ leader
 *          majority accepted ⇒ s chosen; leader applies the contiguous chosen prefix, replies to
 *          the client, and sends commit(b, commitThrough) (the learn round)
 *
 * ── Leader election (phase 1) ──────────────────────────────────────────────────────────────────
 *   on election timeout: b = (maxRoundSeen + 1, me); persist promise(b); prepare(b, from) to all
 *   acceptor: b ≥ promised ⇒ persist promise(b), reply promise(b, accepted entries ≥ from,
 *   truncatedThrough); else reject(promised)
 *   with a majority of promises, for every slot above the commit point:
 *     reported chosen ⇒ adopt;  else the value accepted at the highest ballot ⇒ re-propose at b;
 *     else (a hole) ⇒ propose a no-op.  (P2c of "Paxos Made Simple".)
 *   Slots at or below the highest `truncatedThrough` reported are chosen but compacted away there:
 *   the candidate catches up (chosen entries or a snapshot) before it leads, so a leader never has
 *   to guess a value it cannot see.
 *
 * ── Invariants this file maintains (the simulation tests check them from outside) ──────────────
 *   I1  An acceptor never accepts below its promise, and never replies before the promise/accept
 *       is durable (storage.ts contract).
 *   I2  A leader proposes at most one command per slot per ballot, and only after phase 1.
 *   I3  A slot is marked chosen only (a) by the leader on a majority of accepted at its ballot,
 *       (b) on commit(b, c) when the local value was accepted at b — b's leader proposed it and
 *       b's leader only claims slots whose chosen value is its own proposal (see learnCommit),
 *       (c) from a peer that has it chosen (catch-up, promise chosen flags).
 *   I4  Entries are applied strictly in slot order, each exactly once per replica lifetime; a
 *       client command (clientId, seq) changes the state machine at most once (sessions table).
 *   I5  A leader never learns chosen values from others after it starts leading (it ignores
 *       catch-up): everything above its commit point is its own proposal at b, which keeps I3(b).
 *
 * Linearizable reads: GETs are ordered in the log like writes (no lease). The result is exact
 * without any assumption about clock drift, at the cost of one accept round per read; a lease
 * (reads served locally while a majority's promise not to elect anyone else holds) would save
 * that round but makes safety depend on bounded clock skew, which the live platform cannot
 * promise across processes. Batching amortises the round under load.
 */

import { type PaxosReplicaConfig, type ResolvedPaxosConfig, resolvePaxosConfig } from './config.ts';
import { PaxosSafetyError, PaxosTimeError } from './errors.ts';
import type { ReplicatedStateMachine } from './state-machine.ts';
import type { PaxosStorage } from './storage.ts';
import {
  type AppliedEntry,
  type Ballot,
  ballotLeader,
  ballotRound,
  type ClientId,
  type ClientReply,
  type ClientRequest,
  commandIdentity,
  type LogCommand,
  makeBallot,
  NO_BALLOT,
  type Outbound,
  type PaxosInput,
  type PaxosOutputs,
  type PaxosRole,
  type PeerMessage,
  type PromiseEntry,
  type ReplicaId,
  type ReplicaStatus,
  type SlotCommand,
  type Snapshot,
} from './types.ts';

/** A source of uniform doubles in [0, 1). `Random` from src/random.ts fits. */
export interface PaxosRandom {
  next(): number;
}

export interface PaxosReplicaOptions<C, R> {
  readonly config: PaxosReplicaConfig;
  /** Durable memory; on construction the replica recovers whatever it holds. */
  readonly storage: PaxosStorage<C, R>;
  /** A fresh (empty) state machine; restored from the stored snapshot, if any. */
  readonly stateMachine: ReplicatedStateMachine<C, R>;
  readonly random: PaxosRandom;
  /** The host clock at construction (election timers start from it). */
  readonly nowNs: number;
}

/** One slot in memory. `chosen`: this replica knows `command` is the slot's chosen value. */
interface Entry<C> {
  /** The ballot `command` was accepted at; NO_BALLOT when only learned as chosen. */
  ballot: Ballot;
  command: LogCommand<C>;
  chosen: boolean;
}

/** A leader's proposal still waiting for a majority. */
interface Proposal<C> {
  readonly command: LogCommand<C>;
  readonly acks: Set<ReplicaId>;
  sentAtNs: number;
}

interface Session<R> {
  readonly seq: number;
  readonly result: R;
}

type PromiseMessage<C, R> = Extract<PeerMessage<C, R>, { type: 'promise' }>;

export class PaxosReplica<C, R> {
  readonly #config: ResolvedPaxosConfig;
  readonly #me: ReplicaId;
  readonly #storage: PaxosStorage<C, R>;
  readonly #stateMachine: ReplicatedStateMachine<C, R>;
  readonly #random: PaxosRandom;

  // ── acceptor state (durable through #storage) ──
  #promised: Ballot;
  /** Slots above #snapshotSlot that this replica holds (accepted or learned). */
  readonly #log = new Map<number, Entry<C>>();

  // ── learner / state machine ──
  /** Every slot ≤ this is applied; also the commit point this replica announces as leader. */
  #appliedThrough = 0;
  /** The log is truncated through this slot; #snapshot holds the state there. */
  #snapshotSlot = 0;
  #snapshot: Snapshot<R> | null = null;
  #sessions = new Map<ClientId, Session<R>>();

  // ── roles ──
  #role: PaxosRole = 'follower';
  #ownBallot: Ballot = NO_BALLOT;
  #leaderHint: ReplicaId | null = null;
  #maxRoundSeen = 0;
  #lastNowNs: number;
  #electionDeadlineNs: number;
  #lastLeaderContactNs = Number.NEGATIVE_INFINITY;
  /** The ballot of the leader this follower last heard, and the highest commit point it announced. */
  #followedBallot: Ballot = NO_BALLOT;
  #leaderCommitThrough = 0;
  #catchupRetryAtNs = Number.NEGATIVE_INFINITY;

  // candidate
  readonly #promises = new Map<ReplicaId, PromiseMessage<C, R>>();
  #prepareFromSlot = 1;
  #prepareRetryAtNs = Number.POSITIVE_INFINITY;

  // leader
  #nextSlot = 1;
  readonly #proposals = new Map<number, Proposal<C>>();
  readonly #inflightClients = new Map<ClientId, number>();
  #lastAckNs: Float64Array;
  #heartbeatAtNs = Number.POSITIVE_INFINITY;

  // ── per-call output accumulators ──
  #dirty = false;
  #send: Outbound<C, R>[] = [];
  #replies: ClientReply<R>[] = [];
  #applied: AppliedEntry<C, R>[] = [];
  #installedSnapshotSlot = 0;
  /** New proposals of this call, sent as one accept batch at the end. */
  #newProposals: SlotCommand<C>[] = [];

  constructor(options: PaxosReplicaOptions<C, R>) {
    this.#config = resolvePaxosConfig(options.config);
    this.#me = this.#config.replicaId;
    this.#storage = options.storage;
    this.#stateMachine = options.stateMachine;
    this.#random = options.random;
    if (!Number.isSafeInteger(options.nowNs)) throw new PaxosTimeError(options.nowNs, 0);
    this.#lastNowNs = options.nowNs;
    this.#lastAckNs = new Float64Array(this.#config.replicaCount);

    // Recovery: the durable promise, snapshot and accepted values; nothing is known chosen
    // beyond the snapshot (commit points are relearned from the leader).
    const persisted = this.#storage.load();
    this.#promised = persisted.promised;
    this.#noteRound(persisted.promised);
    if (persisted.snapshot !== null) {
      this.#restoreSnapshot(persisted.snapshot);
    }
    for (const record of persisted.accepted) {
      if (record.slot <= this.#snapshotSlot) continue;
      this.#log.set(record.slot, { ballot: record.ballot, command: record.command, chosen: false });
      this.#noteRound(record.ballot);
    }
    this.#electionDeadlineNs = options.nowNs + this.#randomElectionTimeout();
  }

  /** Current role, ballots and log positions (read-only). */
  status(): ReplicaStatus {
    return {
      replicaId: this.#me,
      role: this.#role,
      promised: this.#promised,
      ownBallot: this.#ownBallot,
      leaderHint: this.#leaderHint,
      appliedThrough: this.#appliedThrough,
      snapshotSlot: this.#snapshotSlot,
      logEntries: this.#log.size,
    };
  }

  /** When the replica next wants a `tick` (also returned by every `handle`). */
  get wakeAtNs(): number {
    if (this.#role === 'leader') return this.#heartbeatAtNs;
    if (this.#role === 'candidate') return Math.min(this.#electionDeadlineNs, this.#prepareRetryAtNs);
    return this.#electionDeadlineNs;
  }

  /**
   * Processes one input at host time `nowNs` (integer ns, never decreasing). Returns the messages
   * to send, the client replies, the entries applied, and when to tick next. Anything this call
   * made durable-worthy is synced to storage before it returns.
   */
  handle(input: PaxosInput<C, R>, nowNs: number): PaxosOutputs<C, R> {
    if (!(Number.isSafeInteger(nowNs) && nowNs >= this.#lastNowNs)) {
      throw new PaxosTimeError(nowNs, this.#lastNowNs);
    }
    this.#lastNowNs = nowNs;
    this.#send = [];
    this.#replies = [];
    this.#applied = [];
    this.#installedSnapshotSlot = 0;
    this.#newProposals = [];

    switch (input.type) {
      case 'tick':
        break;
      case 'request':
        this.#onRequest(input, nowNs);
        break;
      case 'prepare':
        this.#onPrepare(input, nowNs);
        break;
      case 'promise':
        this.#onPromise(input, nowNs);
        break;
      case 'accept':
        this.#onAccept(input, nowNs);
        break;
      case 'accepted':
        this.#onAccepted(input, nowNs);
        break;
      case 'reject':
        this.#onReject(input, nowNs);
        break;
      case 'commit':
        this.#onCommit(input.from, input.ballot, input.commitThrough, nowNs, false);
        break;
      case 'heartbeat':
        this.#onCommit(input.from, input.ballot, input.commitThrough, nowNs, true);
        break;
      case 'heartbeatAck':
        if (this.#role === 'leader' && input.ballot === this.#ownBallot) this.#lastAckNs[input.from] = nowNs;
        break;
      case 'catchupRequest':
        this.#onCatchupRequest(input.from, input.fromSlot);
        break;
      case 'catchup':
        this.#onCatchup(input, nowNs);
        break;
    }
    this.#onTimers(nowNs);
    this.#flushProposals();

    // Durability before any reply leaves (I1): the host sends only what this returns.
    if (this.#dirty) {
      this.#dirty = false;
      this.#storage.sync();
    }
    return {
      send: this.#send,
      replies: this.#replies,
      applied: this.#applied,
      installedSnapshotSlot: this.#installedSnapshotSlot,
      wakeAtNs: this.wakeAtNs,
    };
  }

  // ───────────────────────────── clients ─────────────────────────────

  #onRequest(request: ClientRequest<C>, nowNs: number): void {
    const { clientId, seq } = request;
    if (this.#role !== 'leader') {
      const hint = this.#role === 'candidate' ? null : this.#leaderHint;
      this.#replies.push({ type: 'redirect', clientId, seq, leaderHint: hint });
      return;
    }
    const session = this.#sessions.get(clientId);
    if (session !== undefined) {
      // Already applied here: the cached result is the one the log produced (exactly once).
      if (seq === session.seq) {
        this.#replies.push({ type: 'reply', clientId, seq, result: session.result });
        return;
      }
      if (seq < session.seq) return; // a stale retry; the client has moved on
    }
    if (this.#inflightClients.get(clientId) === seq) return; // proposed already; reply comes on apply
    if (this.#proposals.size >= this.#config.maxInflightProposals) return; // shed load; client retries
    this.#inflightClients.set(clientId, seq);
    this.#propose(this.#nextSlot++, { kind: 'request', clientId, seq, payload: request.command }, nowNs);
    this.#applyReady(nowNs);
  }

  // ───────────────────────────── phase 1 ─────────────────────────────

  #startElection(nowNs: number): void {
    const round = Math.max(ballotRound(this.#promised), this.#maxRoundSeen) + 1;
    const ballot = makeBallot(round, this.#me);
    this.#clearLeaderState();
    this.#role = 'candidate';
    this.#ownBallot = ballot;
    this.#leaderHint = null;
    this.#noteRound(ballot);
    this.#promised = ballot;
    this.#persistPromise(ballot);
    this.#prepareFromSlot = this.#appliedThrough + 1;
    this.#electionDeadlineNs = nowNs + this.#randomElectionTimeout();
    this.#prepareRetryAtNs = nowNs + this.#config.retransmitIntervalNs;
    this.#broadcast({ type: 'prepare', from: this.#me, ballot, fromSlot: this.#prepareFromSlot });
    this.#tryCompleteElection(nowNs); // a group of one elects itself
  }

  #onPrepare(message: Extract<PeerMessage<C, R>, { type: 'prepare' }>, nowNs: number): void {
    this.#noteRound(message.ballot);
    if (message.ballot < this.#promised) {
      this.#sendTo(message.from, {
        type: 'reject',
        from: this.#me,
        ballot: message.ballot,
        promised: this.#promised,
      });
      return;
    }
    if (message.ballot > this.#promised && this.#stickyToLeader(nowNs)) return;
    if (message.ballot > this.#promised) {
      this.#promised = message.ballot;
      this.#persistPromise(message.ballot);
      if (this.#role !== 'follower') this.#stepDown(nowNs);
      this.#leaderHint = null;
    }
    // Give the candidate time to finish before we campaign ourselves.
    this.#electionDeadlineNs = nowNs + this.#randomElectionTimeout();
    const from = Math.max(message.fromSlot, this.#snapshotSlot + 1);
    const entries: PromiseEntry<C>[] = [];
    for (const [slot, entry] of this.#log) {
      if (slot >= from)
        entries.push({ slot, ballot: entry.ballot, command: entry.command, chosen: entry.chosen });
    }
    this.#sendTo(message.from, {
      type: 'promise',
      from: this.#me,
      ballot: message.ballot,
      truncatedThrough: this.#snapshotSlot,
      entries,
    });
  }

  /** True when a working leader should not be deposed by this prepare (config.leaderStickiness). */
  #stickyToLeader(nowNs: number): boolean {
    if (!this.#config.leaderStickiness) return false;
    const recent = nowNs - this.#config.electionTimeoutMinNs;
    if (this.#role === 'follower') return this.#leaderHint !== null && this.#lastLeaderContactNs > recent;
    if (this.#role === 'leader') return this.#peersHeardSince(recent) + 1 >= this.#config.majority;
    return false;
  }

  #onPromise(message: PromiseMessage<C, R>, nowNs: number): void {
    this.#noteRound(message.ballot);
    if (this.#role !== 'candidate' || message.ballot !== this.#ownBallot) return;
    this.#promises.set(message.from, message);
    this.#tryCompleteElection(nowNs);
  }

  /**
   * With a majority of promises: first make sure every slot some promiser already compacted away
   * (≤ the highest truncatedThrough) is known here — adopt reported chosen values, else catch up
   * from that promiser — then lead.
   */
  #tryCompleteElection(nowNs: number): void {
    if (this.#role !== 'candidate' || this.#promises.size + 1 < this.#config.majority) return;
    let truncatedThrough = this.#snapshotSlot;
    let truncatedSource = this.#me;
    for (const promise of this.#promises.values()) {
      if (promise.truncatedThrough > truncatedThrough) {
        truncatedThrough = promise.truncatedThrough;
        truncatedSource = promise.from;
      }
      for (const entry of promise.entries) {
        if (entry.chosen && entry.slot > this.#appliedThrough) this.#markChosen(entry.slot, entry.command);
      }
    }
    this.#applyReady(nowNs);
    if (this.#appliedThrough < truncatedThrough) {
      if (nowNs >= this.#catchupRetryAtNs) {
        this.#catchupRetryAtNs = nowNs + this.#config.retransmitIntervalNs;
        this.#sendTo(truncatedSource, {
          type: 'catchupRequest',
          from: this.#me,
          fromSlot: this.#appliedThrough + 1,
        });
      }
      return;
    }
    this.#becomeLeader(nowNs);
  }

  #becomeLeader(nowNs: number): void {
    this.#role = 'leader';
    this.#leaderHint = this.#me;
    this.#prepareRetryAtNs = Number.POSITIVE_INFINITY;
    this.#lastAckNs.fill(nowNs); // a grace period before check-quorum can depose us

    // Merge the majority's reports (and our own log) for every slot above the commit point.
    // Every promiser reported all it holds above max(fromSlot, its truncation) and every slot here
    // is above both, so the classic rule applies: chosen wins, else the highest ballot's value.
    const merged = new Map<number, { ballot: Ballot; command: LogCommand<C>; chosen: boolean }>();
    const consider = (slot: number, ballot: Ballot, command: LogCommand<C>, chosen: boolean): void => {
      if (slot <= this.#appliedThrough) return;
      const best = merged.get(slot);
      if (best === undefined || (!best.chosen && (chosen || ballot > best.ballot))) {
        merged.set(slot, { ballot, command, chosen });
      }
    };
    for (const [slot, entry] of this.#log) consider(slot, entry.ballot, entry.command, entry.chosen);
    for (const promise of this.#promises.values()) {
      for (const entry of promise.entries) consider(entry.slot, entry.ballot, entry.command, entry.chosen);
    }
    this.#promises.clear();
    let maxSlot = this.#appliedThrough;
    for (const slot of merged.keys()) maxSlot = Math.max(maxSlot, slot);
    this.#nextSlot = maxSlot + 1;

    for (let slot = this.#appliedThrough + 1; slot <= maxSlot; slot++) {
      const found = merged.get(slot);
      if (found?.chosen) this.#markChosen(slot, found.command);
      else if (found !== undefined && this.#config.bugs.ignorePromisedValues !== true) {
        this.#propose(slot, found.command, nowNs);
      } else this.#propose(slot, { kind: 'noop' }, nowNs); // a hole: fill it so the log can apply on
    }
    this.#heartbeatAtNs = nowNs; // announce ourselves on this call's timer pass
    this.#applyReady(nowNs);
  }

  #onReject(message: Extract<PeerMessage<C, R>, { type: 'reject' }>, nowNs: number): void {
    this.#noteRound(message.promised);
    if (this.#role === 'follower' || message.ballot !== this.#ownBallot) return;
    if (message.promised > this.#ownBallot) {
      this.#stepDown(nowNs);
      this.#leaderHint = null;
    }
  }

  // ───────────────────────────── phase 2 ─────────────────────────────

  /** Accept locally at our ballot (persisted) and queue the command for the accept batch. */
  #propose(slot: number, command: LogCommand<C>, nowNs: number): void {
    const ballot = this.#ownBallot;
    this.#log.set(slot, { ballot, command, chosen: false });
    this.#persistAccepted(slot, ballot, command);
    this.#proposals.set(slot, { command, acks: new Set([this.#me]), sentAtNs: nowNs });
    this.#newProposals.push({ slot, command });
    if (this.#config.majority <= 1 || this.#config.bugs.commitWithoutMajority === true) {
      this.#proposals.delete(slot);
      this.#markChosen(slot, command);
    }
  }

  #flushProposals(): void {
    if (this.#newProposals.length === 0 || this.#role !== 'leader') return;
    const batch = this.#config.maxBatchEntries;
    for (let start = 0; start < this.#newProposals.length; start += batch) {
      this.#broadcast({
        type: 'accept',
        from: this.#me,
        ballot: this.#ownBallot,
        entries: this.#newProposals.slice(start, start + batch),
        commitThrough: this.#appliedThrough,
      });
    }
    this.#newProposals = [];
  }

  #onAccept(message: Extract<PeerMessage<C, R>, { type: 'accept' }>, nowNs: number): void {
    this.#noteRound(message.ballot);
    if (message.ballot < this.#promised) {
      this.#sendTo(message.from, {
        type: 'reject',
        from: this.#me,
        ballot: message.ballot,
        promised: this.#promised,
      });
      return;
    }
    if (message.ballot > this.#promised) {
      this.#promised = message.ballot;
      this.#persistPromise(message.ballot);
    }
    if (this.#role !== 'follower') this.#stepDown(nowNs); // ballot > ours: someone else leads
    this.#follow(message.ballot, nowNs);
    const slots: number[] = [];
    for (const { slot, command } of message.entries) {
      slots.push(slot);
      // Chosen and compacted here. By P2c the leader's value is the chosen one, so acking is
      // truthful, and a future leader learns the slot is chosen from our truncatedThrough.
      if (slot <= this.#snapshotSlot) continue;
      const existing = this.#log.get(slot);
      if (existing?.chosen === true) {
        if (commandIdentity(existing.command) !== commandIdentity(command)) {
          throw new PaxosSafetyError(
            `replica ${this.#me}: slot ${slot} is chosen as ${commandIdentity(existing.command)} but ` +
              `ballot ${message.ballot} proposes ${commandIdentity(command)}`,
          );
        }
        existing.ballot = message.ballot;
      } else this.#log.set(slot, { ballot: message.ballot, command, chosen: false });
      this.#persistAccepted(slot, message.ballot, command);
    }
    this.#sendTo(message.from, { type: 'accepted', from: this.#me, ballot: message.ballot, slots });
    this.#learnCommit(message.from, message.ballot, message.commitThrough, nowNs);
  }

  #onAccepted(message: Extract<PeerMessage<C, R>, { type: 'accepted' }>, nowNs: number): void {
    if (this.#role !== 'leader' || message.ballot !== this.#ownBallot) return;
    this.#lastAckNs[message.from] = nowNs;
    for (const slot of message.slots) {
      const proposal = this.#proposals.get(slot);
      if (proposal === undefined) continue;
      proposal.acks.add(message.from);
      if (proposal.acks.size >= this.#config.majority) {
        this.#proposals.delete(slot);
        this.#markChosen(slot, proposal.command);
      }
    }
    this.#applyReady(nowNs);
  }

  // ───────────────────────────── learning ─────────────────────────────

  /** commit / heartbeat from the leader of `ballot`. */
  #onCommit(
    from: ReplicaId,
    ballot: Ballot,
    commitThrough: number,
    nowNs: number,
    isHeartbeat: boolean,
  ): void {
    this.#noteRound(ballot);
    if (ballot < this.#promised) {
      // A deposed leader; its commit point is still true (learnCommit is safe for any ballot).
      this.#learnCommit(from, ballot, commitThrough, nowNs);
      if (isHeartbeat) {
        this.#sendTo(from, { type: 'reject', from: this.#me, ballot, promised: this.#promised });
      }
      return;
    }
    if (this.#role !== 'follower') {
      if (ballot === this.#ownBallot) return; // our own ballot: cannot come from a peer
      this.#stepDown(nowNs);
    }
    this.#follow(ballot, nowNs);
    this.#learnCommit(from, ballot, commitThrough, nowNs);
    if (isHeartbeat) {
      this.#sendTo(from, {
        type: 'heartbeatAck',
        from: this.#me,
        ballot,
        appliedThrough: this.#appliedThrough,
      });
    }
  }

  /**
   * "Every slot ≤ commitThrough is chosen" from the leader of `ballot`. A local value accepted at
   * that very ballot was proposed by that leader, and (I5) a leader only announces slots whose
   * chosen value is its own proposal at its ballot — so the local value is the chosen one. Any
   * other slot in range needs the value: catch up from the sender.
   */
  #learnCommit(from: ReplicaId, ballot: Ballot, commitThrough: number, nowNs: number): void {
    if (ballot === this.#followedBallot && commitThrough > this.#leaderCommitThrough) {
      this.#leaderCommitThrough = commitThrough;
    }
    for (let slot = this.#appliedThrough + 1; slot <= commitThrough; slot++) {
      const entry = this.#log.get(slot);
      if (entry === undefined) break;
      if (!entry.chosen) {
        if (entry.ballot !== ballot) break;
        entry.chosen = true;
      }
    }
    this.#applyReady(nowNs);
    if (this.#appliedThrough < commitThrough && this.#role !== 'leader' && nowNs >= this.#catchupRetryAtNs) {
      this.#catchupRetryAtNs = nowNs + this.#config.retransmitIntervalNs;
      this.#sendTo(from, { type: 'catchupRequest', from: this.#me, fromSlot: this.#appliedThrough + 1 });
    }
  }

  /** Marks `slot` chosen with `command` (I3). A conflicting chosen value is a safety violation. */
  #markChosen(slot: number, command: LogCommand<C>): void {
    if (slot <= this.#appliedThrough) return;
    const entry = this.#log.get(slot);
    if (entry === undefined) {
      this.#log.set(slot, { ballot: NO_BALLOT, command, chosen: true });
      return;
    }
    const same = commandIdentity(entry.command) === commandIdentity(command);
    if (entry.chosen && !same) {
      throw new PaxosSafetyError(
        `replica ${this.#me}: slot ${slot} learned chosen as ${commandIdentity(command)} but it was ` +
          `chosen as ${commandIdentity(entry.command)}`,
      );
    }
    if (!same) {
      // The value we accepted was not chosen; forget its ballot so no commit(b) can match it.
      entry.ballot = NO_BALLOT;
      entry.command = command;
    }
    entry.chosen = true;
  }

  /** Applies the contiguous chosen prefix, in slot order (I4). */
  #applyReady(nowNs: number): void {
    const advancedFrom = this.#appliedThrough;
    for (;;) {
      const slot = this.#appliedThrough + 1;
      const entry = this.#log.get(slot);
      if (entry === undefined || !entry.chosen) break;
      this.#appliedThrough = slot;
      this.#applyOne(slot, entry.command);
    }
    if (this.#appliedThrough === advancedFrom) return;
    if (this.#role === 'leader') {
      // The learn round: tell followers the new commit point now rather than at the next heartbeat.
      this.#broadcast({
        type: 'commit',
        from: this.#me,
        ballot: this.#ownBallot,
        commitThrough: this.#appliedThrough,
      });
    }
    this.#maybeSnapshot(nowNs);
  }

  #applyOne(slot: number, command: LogCommand<C>): void {
    if (command.kind === 'noop') {
      this.#applied.push({ slot, command, result: undefined, duplicate: false });
      return;
    }
    const session = this.#sessions.get(command.clientId);
    let result: R | undefined;
    let duplicate = false;
    if (session !== undefined && command.seq <= session.seq) {
      // A retried command that an earlier slot already applied: never apply twice (I4).
      duplicate = true;
      result = command.seq === session.seq ? session.result : undefined;
    } else {
      result = this.#stateMachine.apply(command.payload);
      this.#sessions.set(command.clientId, { seq: command.seq, result });
    }
    this.#applied.push({ slot, command, result, duplicate });
    if (this.#role === 'leader') {
      if (this.#inflightClients.get(command.clientId) === command.seq) {
        this.#inflightClients.delete(command.clientId);
      }
      if (result !== undefined) {
        this.#replies.push({ type: 'reply', clientId: command.clientId, seq: command.seq, result });
      }
    }
  }

  // ───────────────────────────── snapshots and catch-up ─────────────────────────────

  #maybeSnapshot(_nowNs: number): void {
    const every = this.#config.snapshotEveryEntries;
    if (every === 0 || this.#appliedThrough - this.#snapshotSlot < every) return;
    const snapshot: Snapshot<R> = {
      lastIncludedSlot: this.#appliedThrough,
      state: this.#stateMachine.snapshot(),
      sessions: this.#sessionRecords(),
    };
    this.#storage.saveSnapshot(snapshot);
    this.#dirty = true;
    this.#truncateThrough(snapshot);
  }

  #sessionRecords(): Snapshot<R>['sessions'] {
    const records = [];
    for (const [clientId, session] of this.#sessions) {
      records.push({ clientId, seq: session.seq, result: session.result });
    }
    return records;
  }

  #truncateThrough(snapshot: Snapshot<R>): void {
    this.#snapshot = snapshot;
    this.#snapshotSlot = snapshot.lastIncludedSlot;
    for (const slot of [...this.#log.keys()]) {
      if (slot <= snapshot.lastIncludedSlot) this.#log.delete(slot);
    }
  }

  #restoreSnapshot(snapshot: Snapshot<R>): void {
    this.#stateMachine.restore(snapshot.state);
    this.#sessions = new Map();
    for (const record of snapshot.sessions) {
      this.#sessions.set(record.clientId, { seq: record.seq, result: record.result });
    }
    this.#appliedThrough = snapshot.lastIncludedSlot;
    this.#truncateThrough(snapshot);
  }

  #onCatchupRequest(from: ReplicaId, fromSlot: number): void {
    let snapshot: Snapshot<R> | null = null;
    let start = fromSlot;
    if (fromSlot <= this.#snapshotSlot && this.#snapshot !== null) {
      snapshot = this.#snapshot;
      start = this.#snapshotSlot + 1;
    }
    const entries: SlotCommand<C>[] = [];
    const end = Math.min(this.#appliedThrough, start + this.#config.maxBatchEntries - 1);
    for (let slot = start; slot <= end; slot++) {
      const entry = this.#log.get(slot);
      if (entry === undefined) break;
      entries.push({ slot, command: entry.command });
    }
    if (snapshot === null && entries.length === 0) return;
    this.#sendTo(from, { type: 'catchup', from: this.#me, snapshot, entries });
  }

  #onCatchup(message: Extract<PeerMessage<C, R>, { type: 'catchup' }>, nowNs: number): void {
    // I5: a leader's log above its commit point is its own proposals; it learns nothing from peers.
    if (this.#role === 'leader') return;
    const before = this.#appliedThrough;
    const snapshot = message.snapshot;
    if (snapshot !== null && snapshot.lastIncludedSlot > this.#appliedThrough) {
      this.#restoreSnapshot(snapshot);
      this.#storage.saveSnapshot(snapshot);
      this.#dirty = true;
      this.#installedSnapshotSlot = snapshot.lastIncludedSlot;
    }
    for (const { slot, command } of message.entries) this.#markChosen(slot, command);
    this.#applyReady(nowNs);
    if (this.#role === 'candidate') {
      this.#tryCompleteElection(nowNs);
      return;
    }
    // Still behind the leader and making progress: ask for the next batch right away.
    if (this.#appliedThrough > before && this.#appliedThrough < this.#leaderCommitThrough) {
      this.#catchupRetryAtNs = nowNs + this.#config.retransmitIntervalNs;
      this.#sendTo(message.from, {
        type: 'catchupRequest',
        from: this.#me,
        fromSlot: this.#appliedThrough + 1,
      });
    }
  }

  // ───────────────────────────── timers and roles ─────────────────────────────

  #onTimers(nowNs: number): void {
    if (this.#role === 'leader') {
      if (nowNs < this.#heartbeatAtNs) return;
      this.#heartbeatAtNs = nowNs + this.#config.heartbeatIntervalNs;
      if (this.#config.checkQuorum) {
        const heard = this.#peersHeardSince(nowNs - this.#config.electionTimeoutMaxNs);
        if (heard + 1 < this.#config.majority) {
          this.#stepDown(nowNs);
          this.#leaderHint = null;
          return;
        }
      }
      this.#broadcast({
        type: 'heartbeat',
        from: this.#me,
        ballot: this.#ownBallot,
        commitThrough: this.#appliedThrough,
      });
      this.#retransmitProposals(nowNs);
      return;
    }
    if (nowNs >= this.#electionDeadlineNs) {
      this.#startElection(nowNs);
      return;
    }
    if (this.#role === 'candidate' && nowNs >= this.#prepareRetryAtNs) {
      this.#prepareRetryAtNs = nowNs + this.#config.retransmitIntervalNs;
      const prepare: PeerMessage<C, R> = {
        type: 'prepare',
        from: this.#me,
        ballot: this.#ownBallot,
        fromSlot: this.#prepareFromSlot,
      };
      for (let peer = 0; peer < this.#config.replicaCount; peer++) {
        const id = peer as ReplicaId;
        if (id !== this.#me && !this.#promises.has(id)) this.#sendTo(id, prepare);
      }
      this.#tryCompleteElection(nowNs); // re-sends a pending catch-up request
    }
  }

  /** Resends accepts that have waited a retransmit interval, to the peers that have not acked. */
  #retransmitProposals(nowNs: number): void {
    const due = nowNs - this.#config.retransmitIntervalNs;
    const perPeer = new Map<ReplicaId, SlotCommand<C>[]>();
    let budget = this.#config.maxBatchEntries * 4;
    for (const [slot, proposal] of this.#proposals) {
      if (budget-- <= 0) break;
      if (proposal.sentAtNs > due) continue;
      proposal.sentAtNs = nowNs;
      for (let peer = 0; peer < this.#config.replicaCount; peer++) {
        const id = peer as ReplicaId;
        if (id === this.#me || proposal.acks.has(id)) continue;
        let list = perPeer.get(id);
        if (list === undefined) {
          list = [];
          perPeer.set(id, list);
        }
        list.push({ slot, command: proposal.command });
      }
    }
    for (const [peer, entries] of perPeer) {
      for (let start = 0; start < entries.length; start += this.#config.maxBatchEntries) {
        this.#sendTo(peer, {
          type: 'accept',
          from: this.#me,
          ballot: this.#ownBallot,
          entries: entries.slice(start, start + this.#config.maxBatchEntries),
          commitThrough: this.#appliedThrough,
        });
      }
    }
  }

  #peersHeardSince(sinceNs: number): number {
    let heard = 0;
    for (let peer = 0; peer < this.#config.replicaCount; peer++) {
      if (peer !== this.#me && this.#lastAckNs[peer]! >= sinceNs) heard++;
    }
    return heard;
  }

  /** Follow the leader of `ballot` (≥ our promise): reset the election timer. */
  #follow(ballot: Ballot, nowNs: number): void {
    if (ballot !== this.#followedBallot) {
      this.#followedBallot = ballot;
      this.#leaderCommitThrough = 0;
    }
    this.#leaderHint = ballotLeader(ballot);
    this.#lastLeaderContactNs = nowNs;
    this.#electionDeadlineNs = nowNs + this.#randomElectionTimeout();
  }

  #stepDown(nowNs: number): void {
    this.#clearLeaderState();
    this.#role = 'follower';
    this.#ownBallot = NO_BALLOT;
    this.#electionDeadlineNs = nowNs + this.#randomElectionTimeout();
  }

  #clearLeaderState(): void {
    this.#proposals.clear();
    this.#inflightClients.clear();
    this.#promises.clear();
    this.#newProposals = [];
    this.#heartbeatAtNs = Number.POSITIVE_INFINITY;
    this.#prepareRetryAtNs = Number.POSITIVE_INFINITY;
  }

  #randomElectionTimeout(): number {
    const { electionTimeoutMinNs: min, electionTimeoutMaxNs: max } = this.#config;
    return min + Math.floor(this.#random.next() * (max - min));
  }

  #noteRound(ballot: Ballot): void {
    const round = ballotRound(ballot);
    if (round > this.#maxRoundSeen) this.#maxRoundSeen = round;
  }

  // ───────────────────────────── output helpers ─────────────────────────────

  #persistPromise(ballot: Ballot): void {
    if (this.#config.bugs.skipPersistence === true) return;
    this.#storage.savePromise(ballot);
    this.#dirty = true;
  }

  #persistAccepted(slot: number, ballot: Ballot, command: LogCommand<C>): void {
    if (this.#config.bugs.skipPersistence === true) return;
    this.#storage.saveAccepted(slot, ballot, command);
    this.#dirty = true;
  }

  #sendTo(to: ReplicaId, message: PeerMessage<C, R>): void {
    this.#send.push({ to, message });
  }

  #broadcast(message: PeerMessage<C, R>): void {
    for (let peer = 0; peer < this.#config.replicaCount; peer++) {
      if (peer !== this.#me) this.#send.push({ to: peer as ReplicaId, message });
    }
  }
}
