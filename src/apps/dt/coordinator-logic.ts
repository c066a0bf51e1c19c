/**
 * The DT coordinator's logic: OCC + two-phase commit with a coordinator log, after FaSST §4 as
 * iPipe §5 runs it on the NIC ("DT: (1) read the read set and lock the write set, abort if anything
 * is locked; (2) validate: re-read, abort if locked or a version changed; (3) write the coordinator
 * log — the commit point; (4) send commits, participants apply and unlock, reply after all acks").
 *
 * One transaction attempt, as a state machine (each arrow is one message handled):
 *
 *   commit-request ─▶ locking ──all lock-replies ok──▶ validating ──all ok──▶ logging
 *                        │  (a lock refused, a version      │ (a read key locked     │ log-durable
 *                        │   differs from the read)         │  or changed)           ▼
 *                        └──────────────▶ aborting ◀────────┘                    committing
 *                                          │ all abort-acks                         │ all commit-acks
 *                                          ▼                                        ▼
 *                                      forgotten                        finished: reply "committed"
 *
 * - An attempt is `(client, seq, epoch)`. The epoch is this coordinator incarnation's, handed out
 *   by the logging actor at start-up (see logger-logic.ts: older epochs are fenced off the log).
 * - The commit point is the `log-durable` answer: the record is fsynced. Nothing is sent to a
 *   participant as `commit` before it, so an attempt is committed iff its record is in the log.
 * - Versions: every write installs lock-time version + 1; the log record carries them, which
 *   makes commits idempotent at the participants and lets a checker rebuild the version order.
 * - Response cache (FaSST / the paper's "cache of responses for outstanding transactions"): the
 *   last outcome per client. A retried `commit-request` is answered from it or, while the attempt
 *   runs, ignored — never executed twice. Its durable part (each client's last committed seq)
 *   is in the log, so a restarted coordinator still recognises a retry of a committed request.
 * - Retransmission: a tick resends whatever a phase still waits for; every message is idempotent at
 *   its receiver. An attempt stuck in locking/validating past `txnTimeoutNs` aborts.
 * - The log object (the paper's NIC-resident coordinator log): every commit record is also kept
 *   in the coordinator's `tail`. When `logLimitRecords` new records have accumulated, the log object
 *   "migrates to the host": a `log-checkpoint` carries the committed-and-finished part to the
 *   logging actor (which writes a checkpoint record and compacts the file) and the tail keeps only
 *   the unfinished records.
 *
 * Recovery (`start`): a new incarnation asks the logging actor for a new epoch and the log. Every
 * logged attempt is committed: it re-enters `committing` and its commits are resent until every
 * participant acknowledges (idempotent). An attempt that did not reach the log is aborted by
 * presumption: the participants holding its locks ask when their lease expires, and the answer to
 * an unknown attempt is `abort`. That is safe because (a) recovery read the log *after* the new
 * epoch was fenced in, so no older append can land later, and (b) every logged attempt is known
 * to this incarnation until all its participants acknowledged — only then can it be forgotten.
 */

import { describeTxnProblem } from './errors.ts';
import type { LoggedCommit } from './log-format.ts';
import type { CoordinatorInput, DtMessage, DtMsg } from './messages.ts';
import {
  clientAddress,
  type DtEvent,
  type DtOutput,
  LOGGER,
  type LockOwner,
  type LoggedWrite,
  participantAddress,
  type ShardMap,
  txnKey,
} from './types.ts';
import { findTxnProblem, type ReadItem, type WriteItem } from './validation.ts';

/** Where an attempt is. */
export type TxnPhase = 'locking' | 'validating' | 'logging' | 'committing' | 'aborting';

/** One attempt the coordinator is running (kept in its store, rewritten whole on each change). */
export interface TxnRecord {
  readonly client: number;
  readonly seq: number;
  readonly epoch: number;
  readonly phase: TxnPhase;
  readonly reads: readonly ReadItem[];
  readonly writes: readonly WriteItem[];
  /** Each write's version at lock time (−1 until its shard answered). */
  readonly lockVersions: readonly number[];
  /** Shards whose answer this phase still waits for. */
  readonly waiting: readonly number[];
  /** Why it aborts ('' otherwise). */
  readonly reason: string;
  readonly startedAtNs: number;
  /** When this phase's messages were last sent (retransmission clock). */
  readonly sentAtNs: number;
  /** Re-entered from the log by a restarted coordinator. */
  readonly recovered: boolean;
}

/** The response cache's entry for one client. */
export interface ClientRecord {
  readonly client: number;
  /** The seq of the client's latest finished request. */
  readonly seq: number;
  readonly outcome: 'committed' | 'aborted' | 'invalid';
  readonly reason: string;
  /** The client's latest committed seq (−1: none); the durable part, carried by checkpoints. */
  readonly committedSeq: number;
}

/** The coordinator's scalar state. */
export interface CoordinatorMeta {
  /** `idle`: not started; `recovering`: waiting for the log; `serving`. */
  readonly status: 'idle' | 'recovering' | 'serving';
  readonly epoch: number;
  /** This incarnation's recover nonce. */
  readonly nonce: number;
  readonly tickArmed: boolean;
  /** When log-recover was last sent. */
  readonly recoverSentAtNs: number;
  /** Tail records kept by the last checkpoint (unfinished then): the limit counts records beyond. */
  readonly tailBase: number;
}

/** Where the coordinator keeps its state (DMOs in the actor, Maps in the simulator). */
export interface CoordinatorStore {
  meta(): CoordinatorMeta;
  setMeta(meta: CoordinatorMeta): void;
  getTxn(client: number, seq: number): TxnRecord | undefined;
  putTxn(record: TxnRecord): void;
  deleteTxn(client: number, seq: number): void;
  /** Every running attempt (the retransmission scan). */
  txns(): TxnRecord[];
  readonly txnCount: number;
  getClient(client: number): ClientRecord | undefined;
  putClient(record: ClientRecord): void;
  clients(): ClientRecord[];
  /** The log object: commit records since the last checkpoint, plus the unfinished ones before it. */
  tailAppend(record: LoggedCommit): void;
  tailRecords(): LoggedCommit[];
  tailReset(records: readonly LoggedCommit[]): void;
  readonly tailLength: number;
}

/** The state a never-started coordinator has. */
export const INITIAL_COORDINATOR_META: CoordinatorMeta = Object.freeze({
  status: 'idle',
  epoch: 0,
  nonce: 0,
  tickArmed: false,
  recoverSentAtNs: 0,
  tailBase: 0,
});

/** A CoordinatorStore in JS memory. */
export class MemoryCoordinatorStore implements CoordinatorStore {
  #meta: CoordinatorMeta = INITIAL_COORDINATOR_META;
  readonly #txns = new Map<string, TxnRecord>();
  readonly #clients = new Map<number, ClientRecord>();
  #tail: LoggedCommit[] = [];

  meta(): CoordinatorMeta {
    return this.#meta;
  }
  setMeta(meta: CoordinatorMeta): void {
    this.#meta = meta;
  }
  getTxn(client: number, seq: number): TxnRecord | undefined {
    return this.#txns.get(txnKey(client, seq));
  }
  putTxn(record: TxnRecord): void {
    this.#txns.set(txnKey(record.client, record.seq), record);
  }
  deleteTxn(client: number, seq: number): void {
    this.#txns.delete(txnKey(client, seq));
  }
  txns(): TxnRecord[] {
    return [...this.#txns.values()];
  }
  get txnCount(): number {
    return this.#txns.size;
  }
  getClient(client: number): ClientRecord | undefined {
    return this.#clients.get(client);
  }
  putClient(record: ClientRecord): void {
    this.#clients.set(record.client, record);
  }
  clients(): ClientRecord[] {
    return [...this.#clients.values()];
  }
  tailAppend(record: LoggedCommit): void {
    this.#tail.push(record);
  }
  tailRecords(): LoggedCommit[] {
    return [...this.#tail];
  }
  tailReset(records: readonly LoggedCommit[]): void {
    this.#tail = [...records];
  }
  get tailLength(): number {
    return this.#tail.length;
  }
}

/** The coordinator's configuration. */
export interface CoordinatorConfig {
  readonly shards: ShardMap;
  /** Resend what a phase waits for after this long without an answer. */
  readonly retryNs: number;
  /** Abort an attempt still locking or validating after this long. */
  readonly txnTimeoutNs: number;
  /** New records in the log object that trigger a checkpoint (the paper's log limit). */
  readonly logLimitRecords: number;
  readonly maxValueBytes: number;
}

function uniqueSorted(values: Iterable<number>): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function ownerOf(record: TxnRecord): LockOwner {
  return { client: record.client, seq: record.seq, epoch: record.epoch };
}

/** The coordinator's state machine. */
export class CoordinatorLogic {
  readonly #store: CoordinatorStore;
  readonly #config: CoordinatorConfig;

  constructor(store: CoordinatorStore, config: CoordinatorConfig) {
    this.#store = store;
    this.#config = config;
  }

  /** Status and epoch, for hosts and tests. */
  get meta(): CoordinatorMeta {
    return this.#store.meta();
  }

  /**
   * Starts an incarnation (first start or after a crash, on an empty store): ask the logging
   * actor for a new epoch and the log. `nonce` must differ between incarnations.
   */
  start(nonce: number, nowNs: number): DtOutput[] {
    const out: DtOutput[] = [];
    this.#store.setMeta({ ...this.#store.meta(), status: 'recovering', nonce, recoverSentAtNs: nowNs });
    out.push({ kind: 'send', to: LOGGER, message: { type: 'log-recover', nonce }, answer: false });
    this.#ensureTick(out);
    return out;
  }

  handle(message: CoordinatorInput, nowNs: number): DtOutput[] {
    const out: DtOutput[] = [];
    switch (message.type) {
      case 'commit-request':
        this.#commitRequest(message, nowNs, out);
        break;
      case 'lock-reply':
        this.#lockReply(message, nowNs, out);
        break;
      case 'validate-reply':
        this.#validateReply(message, nowNs, out);
        break;
      case 'log-durable':
        this.#durable(message, nowNs, out);
        break;
      case 'log-rejected':
        this.#ignored(out, message, 'an append from an older epoch was fenced');
        break;
      case 'commit-ack':
        this.#commitAck(message, out);
        break;
      case 'abort-ack':
        this.#abortAck(message);
        break;
      case 'status-query':
        this.#statusQuery(message, nowNs, out);
        break;
      case 'log-recovered':
        this.#recovered(message, nowNs, out);
        break;
      case 'coordinator-tick':
        this.#tick(nowNs, out);
        break;
    }
    return out;
  }

  // ---- client requests -----------------------------------------------------------------------

  #commitRequest(message: DtMsg<'commit-request'>, nowNs: number, out: DtOutput[]): void {
    const meta = this.#store.meta();
    if (meta.status !== 'serving') {
      this.#ignored(out, message, 'recovering; the client retries');
      return;
    }
    const { client, seq } = message;
    const running = this.#store.getTxn(client, seq);
    if (running !== undefined) {
      // Already decided to abort (only the releases are outstanding): the answer is known.
      if (running.phase === 'aborting') {
        this.#replyClient(out, client, seq, 'aborted', running.reason);
        return;
      }
      this.#ignored(out, message, 'in progress');
      return;
    }
    const cached = this.#store.getClient(client);
    if (cached !== undefined && cached.seq === seq) {
      this.#replyClient(out, client, seq, cached.outcome, cached.reason);
      return;
    }
    // A client runs one transaction at a time with increasing seqs: anything at or below what
    // it already finished (and is not the cached answer) is a stale duplicate.
    if (cached !== undefined && (cached.seq > seq || cached.committedSeq >= seq)) {
      this.#ignored(out, message, 'stale retry');
      return;
    }
    const problem = findTxnProblem(message, {
      shards: this.#config.shards,
      maxValueBytes: this.#config.maxValueBytes,
    });
    if (problem) {
      const reason = describeTxnProblem(problem);
      this.#store.putClient({
        client,
        seq,
        outcome: 'invalid',
        reason,
        committedSeq: cached?.committedSeq ?? -1,
      });
      this.#replyClient(out, client, seq, 'invalid', reason);
      return;
    }
    const writeShards = uniqueSorted(message.writes.map((write) => write.shard));
    const record: TxnRecord = {
      client,
      seq,
      epoch: meta.epoch,
      phase: 'locking',
      reads: message.reads,
      writes: message.writes,
      lockVersions: message.writes.map(() => -1),
      waiting: writeShards,
      reason: '',
      startedAtNs: nowNs,
      sentAtNs: nowNs,
      recovered: false,
    };
    this.#store.putTxn(record);
    this.#sendPhase(record, writeShards, out);
    this.#ensureTick(out);
  }

  // ---- (1) lock ------------------------------------------------------------------------------

  #lockReply(message: DtMsg<'lock-reply'>, nowNs: number, out: DtOutput[]): void {
    const record = this.#expect(message, 'locking');
    if (!record) {
      this.#ignored(out, message, 'no attempt waits for this lock-reply');
      return;
    }
    if (!message.ok) {
      this.#abort(record, message.reason || 'locked', nowNs, out);
      return;
    }
    const lockVersions = [...record.lockVersions];
    let answered = 0;
    for (let i = 0; i < record.writes.length; i++) {
      const write = record.writes[i]!;
      if (write.shard !== message.shard) continue;
      const version = message.versions[answered++];
      if (version === undefined) {
        this.#abort(record, 'malformed lock-reply', nowNs, out);
        return;
      }
      lockVersions[i] = version;
      // A key both read and written: the lock must see the version the client read (FaSST's
      // validation of the write set happens here, under the lock).
      const read = record.reads.find((item) => item.key === write.key);
      if (read !== undefined && read.version !== version) {
        this.#abort({ ...record, lockVersions }, 'version-changed', nowNs, out);
        return;
      }
    }
    const waiting = record.waiting.filter((shard) => shard !== message.shard);
    const next = { ...record, lockVersions, waiting };
    if (waiting.length > 0) {
      this.#store.putTxn(next);
      return;
    }
    this.#startValidation(next, nowNs, out);
  }

  // ---- (2) validate --------------------------------------------------------------------------

  /** The reads whose keys are not written: the ones validation re-reads. */
  #readOnly(record: TxnRecord): ReadItem[] {
    const written = new Set(record.writes.map((write) => write.key));
    return record.reads.filter((read) => !written.has(read.key));
  }

  #startValidation(record: TxnRecord, nowNs: number, out: DtOutput[]): void {
    const shards = uniqueSorted(this.#readOnly(record).map((read) => read.shard));
    if (shards.length === 0) {
      this.#startLogging(record, nowNs, out);
      return;
    }
    const next: TxnRecord = { ...record, phase: 'validating', waiting: shards, sentAtNs: nowNs };
    this.#store.putTxn(next);
    this.#sendPhase(next, shards, out);
  }

  #validateReply(message: DtMsg<'validate-reply'>, nowNs: number, out: DtOutput[]): void {
    const record = this.#expect(message, 'validating');
    if (!record) {
      this.#ignored(out, message, 'no attempt waits for this validate-reply');
      return;
    }
    if (!message.ok) {
      this.#abort(record, message.reason || 'validation failed', nowNs, out);
      return;
    }
    const waiting = record.waiting.filter((shard) => shard !== message.shard);
    const next = { ...record, waiting };
    if (waiting.length > 0) {
      this.#store.putTxn(next);
      return;
    }
    this.#startLogging(next, nowNs, out);
  }

  // ---- (3) log: the commit point -------------------------------------------------------------

  #loggedWrites(record: TxnRecord): LoggedWrite[] {
    return record.writes.map((write, i) => ({
      shard: write.shard,
      key: write.key,
      value: write.value,
      version: record.lockVersions[i]! + 1,
    }));
  }

  #startLogging(record: TxnRecord, nowNs: number, out: DtOutput[]): void {
    const next: TxnRecord = { ...record, phase: 'logging', waiting: [], sentAtNs: nowNs };
    this.#store.putTxn(next);
    this.#sendPhase(next, [], out);
  }

  #durable(message: DtMsg<'log-durable'>, nowNs: number, out: DtOutput[]): void {
    const record = this.#store.getTxn(message.client, message.seq);
    if (!record || record.epoch !== message.epoch || record.phase !== 'logging') {
      this.#ignored(out, message, 'no attempt is at its commit point');
      return;
    }
    this.#enterCommitting(record, nowNs, false, out);
  }

  #enterCommitting(record: TxnRecord, nowNs: number, recovered: boolean, out: DtOutput[]): void {
    const writes = this.#loggedWrites(record);
    const shards = uniqueSorted(record.writes.map((write) => write.shard));
    const next: TxnRecord = { ...record, phase: 'committing', waiting: shards, sentAtNs: nowNs, recovered };
    this.#store.putTxn(next);
    if (!recovered) {
      this.#store.tailAppend({ epoch: record.epoch, client: record.client, seq: record.seq, writes });
    }
    this.#event(out, { kind: 'committed', owner: ownerOf(record), writes, recovered });
    this.#sendPhase(next, shards, out);
  }

  // ---- (4) commit ----------------------------------------------------------------------------

  #commitAck(message: DtMsg<'commit-ack'>, out: DtOutput[]): void {
    const record = this.#expect(message, 'committing');
    if (!record) return; // a duplicate ack, or an ack of a presumed-abort answer
    const waiting = record.waiting.filter((shard) => shard !== message.shard);
    if (waiting.length > 0) {
      this.#store.putTxn({ ...record, waiting });
      return;
    }
    // Every participant applied the writes: the attempt is finished and can be forgotten.
    this.#store.deleteTxn(record.client, record.seq);
    const cached = this.#store.getClient(record.client);
    if (cached === undefined || cached.seq <= record.seq) {
      this.#store.putClient({
        client: record.client,
        seq: record.seq,
        outcome: 'committed',
        reason: '',
        committedSeq: Math.max(record.seq, cached?.committedSeq ?? -1),
      });
    }
    this.#event(out, { kind: 'finished', owner: ownerOf(record) });
    this.#replyClient(out, record.client, record.seq, 'committed', '');
    this.#maybeCheckpoint(out);
  }

  // ---- abort ---------------------------------------------------------------------------------

  #abort(record: TxnRecord, reason: string, nowNs: number, out: DtOutput[]): void {
    // Every write shard is told, also those that have not answered: a lock request still in
    // flight may yet be granted, and the abort (or the participant's lease) releases it.
    const shards = uniqueSorted(record.writes.map((write) => write.shard));
    const next: TxnRecord = { ...record, phase: 'aborting', waiting: shards, reason, sentAtNs: nowNs };
    this.#store.putTxn(next);
    const cached = this.#store.getClient(record.client);
    this.#store.putClient({
      client: record.client,
      seq: record.seq,
      outcome: 'aborted',
      reason,
      committedSeq: cached?.committedSeq ?? -1,
    });
    this.#event(out, { kind: 'aborted', owner: ownerOf(record), reason });
    this.#replyClient(out, record.client, record.seq, 'aborted', reason);
    this.#sendPhase(next, shards, out);
  }

  #abortAck(message: DtMsg<'abort-ack'>): void {
    const record = this.#expect(message, 'aborting');
    if (!record) return;
    const waiting = record.waiting.filter((shard) => shard !== message.shard);
    if (waiting.length > 0) this.#store.putTxn({ ...record, waiting });
    else this.#store.deleteTxn(record.client, record.seq);
  }

  // ---- a participant's lease expired ---------------------------------------------------------

  #statusQuery(message: DtMsg<'status-query'>, nowNs: number, out: DtOutput[]): void {
    const owner: LockOwner = { client: message.client, seq: message.seq, epoch: message.epoch };
    const to = participantAddress(message.shard);
    const answer = (reply: DtMessage): void => {
      out.push({ kind: 'send', to, message: reply, answer: true });
    };
    if (this.#store.meta().status !== 'serving') {
      answer({ type: 'status-pending', ...owner, shard: message.shard });
      return;
    }
    const record = this.#store.getTxn(message.client, message.seq);
    if (record === undefined || record.epoch !== message.epoch) {
      // Unknown attempt: not in the log (recovery would have re-entered it), or finished (every
      // participant acknowledged, so a lock left for it is a stale duplicate). Presumed abort.
      answer({ type: 'abort', ...owner, shard: message.shard });
      return;
    }
    switch (record.phase) {
      case 'locking':
      case 'validating':
        // Before the commit point the coordinator may still choose: a lock outliving its lease
        // means the attempt is stuck, so abort it (which tells every write shard).
        this.#abort(record, 'lease-expired', nowNs, out);
        return;
      case 'logging':
        answer({ type: 'status-pending', ...owner, shard: message.shard });
        return;
      case 'committing':
        answer(this.#commitMessage(record, message.shard));
        return;
      case 'aborting':
        answer({ type: 'abort', ...owner, shard: message.shard });
        return;
    }
  }

  // ---- recovery ------------------------------------------------------------------------------

  #recovered(message: DtMsg<'log-recovered'>, nowNs: number, out: DtOutput[]): void {
    const meta = this.#store.meta();
    if (meta.status !== 'recovering' || message.nonce !== meta.nonce) {
      this.#ignored(out, message, 'not the answer to this incarnation');
      return;
    }
    this.#store.setMeta({ ...meta, status: 'serving', epoch: message.epoch });
    for (const { client, seq } of message.clients) {
      this.#store.putClient({ client, seq, outcome: 'committed', reason: '', committedSeq: seq });
    }
    const tail: LoggedCommit[] = [];
    for (const commit of message.pending) {
      tail.push(commit);
      const record: TxnRecord = {
        client: commit.client,
        seq: commit.seq,
        epoch: commit.epoch,
        phase: 'committing',
        reads: [],
        writes: commit.writes.map(({ shard, key, value }) => ({ shard, key, value })),
        lockVersions: commit.writes.map((write) => write.version - 1),
        waiting: [],
        reason: '',
        startedAtNs: nowNs,
        sentAtNs: nowNs,
        recovered: true,
      };
      this.#enterCommitting(record, nowNs, true, out);
    }
    this.#store.tailReset(tail);
    this.#store.setMeta({ ...this.#store.meta(), tailBase: tail.length });
    this.#event(out, {
      kind: 'recovered',
      epoch: message.epoch,
      pending: message.pending.length,
      clients: message.clients.length,
    });
    this.#ensureTick(out);
  }

  // ---- the log object's limit: checkpoint ----------------------------------------------------

  #maybeCheckpoint(out: DtOutput[]): void {
    const meta = this.#store.meta();
    if (this.#store.tailLength - meta.tailBase < this.#config.logLimitRecords) return;
    const finished: LoggedCommit[] = [];
    const unfinished: LoggedCommit[] = [];
    for (const record of this.#store.tailRecords()) {
      const running = this.#store.getTxn(record.client, record.seq);
      if (running !== undefined && running.epoch === record.epoch) unfinished.push(record);
      else finished.push(record);
    }
    if (finished.length === 0) return;
    out.push({
      kind: 'send',
      to: LOGGER,
      message: {
        type: 'log-checkpoint',
        epoch: meta.epoch,
        clients: this.#store
          .clients()
          .filter((client) => client.committedSeq >= 0)
          .map((client) => ({ client: client.client, seq: client.committedSeq })),
        finished: finished.map(({ client, seq, epoch }) => ({ client, seq, epoch })),
      },
      answer: false,
    });
    this.#store.tailReset(unfinished);
    this.#store.setMeta({ ...this.#store.meta(), tailBase: unfinished.length });
    this.#event(out, {
      kind: 'checkpoint',
      epoch: meta.epoch,
      finished: finished.length,
      keptInTail: unfinished.length,
    });
  }

  // ---- retransmission and timeouts -----------------------------------------------------------

  #tick(nowNs: number, out: DtOutput[]): void {
    const meta = this.#store.meta();
    this.#store.setMeta({ ...meta, tickArmed: false });
    if (meta.status === 'recovering') {
      if (nowNs - meta.recoverSentAtNs >= this.#config.retryNs) {
        this.#store.setMeta({ ...this.#store.meta(), recoverSentAtNs: nowNs });
        out.push({
          kind: 'send',
          to: LOGGER,
          message: { type: 'log-recover', nonce: meta.nonce },
          answer: false,
        });
      }
    } else if (meta.status === 'serving') {
      for (const record of this.#store.txns()) {
        const early = record.phase === 'locking' || record.phase === 'validating';
        if (early && nowNs - record.startedAtNs >= this.#config.txnTimeoutNs) {
          this.#abort(record, 'timeout', nowNs, out);
        } else if (nowNs - record.sentAtNs >= this.#config.retryNs) {
          const next = { ...record, sentAtNs: nowNs };
          this.#store.putTxn(next);
          this.#sendPhase(next, record.waiting, out);
        }
      }
    }
    this.#ensureTick(out);
  }

  #ensureTick(out: DtOutput[]): void {
    const meta = this.#store.meta();
    if (meta.tickArmed) return;
    if (meta.status !== 'recovering' && this.#store.txnCount === 0) return;
    this.#store.setMeta({ ...meta, tickArmed: true });
    out.push({
      kind: 'timer',
      delayNs: Math.max(1, Math.round(this.#config.retryNs / 2)),
      message: { type: 'coordinator-tick' },
      // Never under a client's origin: a tick serves every attempt, not the one that armed it.
      keepOrigin: false,
    });
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Sends what `record`'s phase waits for to `shards` (or the logger while logging). */
  #sendPhase(record: TxnRecord, shards: readonly number[], out: DtOutput[]): void {
    const owner = ownerOf(record);
    const send = (shard: number, message: DtMessage): void => {
      out.push({ kind: 'send', to: participantAddress(shard), message, answer: false });
    };
    switch (record.phase) {
      case 'locking':
        for (const shard of shards) {
          const keys = record.writes.filter((write) => write.shard === shard).map((write) => write.key);
          send(shard, { type: 'lock', ...owner, shard, keys });
        }
        return;
      case 'validating': {
        const reads = this.#readOnly(record);
        for (const shard of shards) {
          const mine = reads.filter((read) => read.shard === shard);
          send(shard, {
            type: 'validate',
            ...owner,
            shard,
            keys: mine.map((read) => read.key),
            versions: mine.map((read) => read.version),
          });
        }
        return;
      }
      case 'logging':
        out.push({
          kind: 'send',
          to: LOGGER,
          message: { type: 'log-append', ...owner, writes: this.#loggedWrites(record) },
          answer: false,
        });
        return;
      case 'committing':
        for (const shard of shards) send(shard, this.#commitMessage(record, shard));
        return;
      case 'aborting':
        for (const shard of shards) send(shard, { type: 'abort', ...owner, shard });
        return;
    }
  }

  #commitMessage(record: TxnRecord, shard: number): DtMessage {
    const writes = this.#loggedWrites(record)
      .filter((write) => write.shard === shard)
      .map(({ key, value, version }) => ({ key, value, version }));
    return { type: 'commit', ...ownerOf(record), shard, writes };
  }

  /** The running attempt a participant's answer is for, if it is in `phase` and waits for that shard. */
  #expect(
    message: {
      readonly client: number;
      readonly seq: number;
      readonly epoch: number;
      readonly shard: number;
    },
    phase: TxnPhase,
  ): TxnRecord | undefined {
    const record = this.#store.getTxn(message.client, message.seq);
    if (!record || record.epoch !== message.epoch || record.phase !== phase) return undefined;
    return record.waiting.includes(message.shard) ? record : undefined;
  }

  #replyClient(
    out: DtOutput[],
    client: number,
    seq: number,
    outcome: 'committed' | 'aborted' | 'invalid',
    reason: string,
  ): void {
    out.push({
      kind: 'send',
      to: clientAddress(client),
      message: { type: 'txn-outcome', client, seq, outcome, reason: reason.slice(0, 200) },
      answer: true,
    });
  }

  #event(out: DtOutput[], event: DtEvent): void {
    out.push({ kind: 'event', event });
  }

  #ignored(out: DtOutput[], message: DtMessage, why: string): void {
    out.push({ kind: 'event', event: { kind: 'ignored', role: 'coordinator', type: message.type, why } });
  }
}
