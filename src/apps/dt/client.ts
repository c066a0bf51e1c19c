/**
 * The interactive DT client library (iPipe §5 "DT"; FaSST §4's execution phase runs at the
 * client): `begin`, `read`, `write`, `commit`.
 *
 * - Reads go straight to the participant that owns the key and come back with the key's version;
 *   the first read of a key fixes its version for the transaction (repeatable reads), a read of a
 *   key the transaction wrote returns the buffered value (read-your-writes).
 * - Writes are buffered; `commit` sends the read set (keys + versions) and the write set to the
 *   coordinator, which locks, validates, logs and commits (coordinator-logic.ts).
 * - A read that finds its key locked dooms the transaction (FaSST aborts at once): `commit` then
 *   answers `aborted` without troubling the coordinator.
 * - Every request is retransmitted until answered (`retryNs`); the coordinator's response cache
 *   makes a retried commit safe. A client runs one transaction at a time, with increasing seqs —
 *   the coordinator relies on that to recognise stale duplicates.
 *
 * Two layers: `DtClientSession` is the synchronous core (outputs and completions, no I/O, no
 * clock — the simulator drives it), and `DtClient` / `DtTransaction` wrap it in promises over any
 * `DtClientTransport` (UDP, an in-process runtime).
 */

import { DtTransactionStateError } from './errors.ts';
import { type ClientInput, type DtMessage, isClientInput } from './messages.ts';
import {
  type Address,
  COORDINATOR,
  type DtOutput,
  participantAddress,
  type ShardMap,
  type TxnId,
  type TxnOutcome,
} from './types.ts';
import { type ReadItem, validateTransaction, type WriteItem } from './validation.ts';

/** What a read returns. */
export interface ReadResult {
  readonly found: boolean;
  /** Undefined when the key does not exist. */
  readonly value: Uint8Array | undefined;
  readonly version: number;
  /** The key was locked by a committing transaction: this transaction will abort. */
  readonly locked: boolean;
}

/** Something the session finished. Narrow on `kind`. */
export type ClientCompletion =
  | { readonly kind: 'read'; readonly txn: TxnId; readonly key: string; readonly result: ReadResult }
  | { readonly kind: 'outcome'; readonly txn: TxnId; readonly outcome: TxnOutcome };

/** A session's configuration. */
export interface ClientSessionConfig {
  /** This client's id (unique in the cluster; part of every transaction id). */
  readonly client: number;
  readonly shards: ShardMap;
  /** Resend an unanswered request after this long. */
  readonly retryNs: number;
  readonly maxValueBytes?: number;
  /** The last seq already used (a restarted client must start above it); default 0. */
  readonly lastSeq?: number;
}

interface ActiveTxn {
  readonly id: TxnId;
  phase: 'active' | 'committing';
  readonly reads: Map<string, ReadItem & { readonly result: ReadResult }>;
  readonly pendingReads: Map<string, { readonly shard: number; sentAtNs: number }>;
  readonly writes: Map<string, WriteItem>;
  doomed: string | undefined;
  commitRequest: DtMessage | undefined;
  commitSentAtNs: number;
}

/** The synchronous client core (see the header). */
export class DtClientSession {
  readonly client: number;
  readonly #config: ClientSessionConfig;
  #seq: number;
  #current: ActiveTxn | undefined;
  readonly #completions: ClientCompletion[] = [];

  constructor(config: ClientSessionConfig) {
    if (!(Number.isInteger(config.client) && config.client >= 0 && config.client <= 0xffff_ffff)) {
      throw new RangeError(`client id must be a u32, got ${config.client}`);
    }
    this.client = config.client;
    this.#config = config;
    this.#seq = config.lastSeq ?? 0;
  }

  /** The running transaction, if any. */
  get current(): TxnId | undefined {
    return this.#current?.id;
  }

  /** True while a transaction is being committed (it can no longer be abandoned). */
  get committing(): boolean {
    return this.#current?.phase === 'committing';
  }

  /** Starts a transaction. Throws DtTransactionStateError while another one runs. */
  begin(): TxnId {
    if (this.#current) {
      throw new DtTransactionStateError(
        `client ${this.client} is already running transaction ${this.#current.id.seq}: commit or abandon it first`,
      );
    }
    this.#seq++;
    const id = { client: this.client, seq: this.#seq };
    this.#current = {
      id,
      phase: 'active',
      reads: new Map(),
      pendingReads: new Map(),
      writes: new Map(),
      doomed: undefined,
      commitRequest: undefined,
      commitSentAtNs: 0,
    };
    return id;
  }

  /** Reads `key` (completion: `read`). Served locally when the transaction wrote or read it before. */
  read(key: string, nowNs: number): DtOutput[] {
    const txn = this.#active('read');
    const written = txn.writes.get(key);
    if (written) {
      this.#completions.push({
        kind: 'read',
        txn: txn.id,
        key,
        result: { found: true, value: written.value, version: -1, locked: false },
      });
      return [];
    }
    const known = txn.reads.get(key);
    if (known) {
      this.#completions.push({ kind: 'read', txn: txn.id, key, result: known.result });
      return [];
    }
    if (txn.pendingReads.has(key)) return [];
    const shard = this.#config.shards.shardOf(key);
    txn.pendingReads.set(key, { shard, sentAtNs: nowNs });
    return [this.#readRequest(txn.id, shard, key)];
  }

  /** Buffers a write of `key` (sent with the commit). */
  write(key: string, value: Uint8Array): void {
    const txn = this.#active('write');
    txn.writes.set(key, { shard: this.#config.shards.shardOf(key), key, value });
  }

  /**
   * Sends the transaction to the coordinator (completion: `outcome`). Throws
   * DtInvalidTransactionError for a malformed transaction (it stays active: fix it or abandon it),
   * DtTransactionStateError while reads are outstanding.
   */
  commit(nowNs: number): DtOutput[] {
    const txn = this.#active('commit');
    if (txn.pendingReads.size > 0) {
      throw new DtTransactionStateError(
        `transaction ${txn.id.seq} still waits for ${txn.pendingReads.size} read(s): wait for them before commit`,
      );
    }
    const reads = [...txn.reads.values()].map(({ shard, key, version }) => ({ shard, key, version }));
    const writes = [...txn.writes.values()];
    validateTransaction(
      { reads, writes },
      { shards: this.#config.shards, maxValueBytes: this.#config.maxValueBytes ?? Number.MAX_SAFE_INTEGER },
    );
    if (txn.doomed !== undefined) {
      this.#finish({ outcome: 'aborted', reason: txn.doomed });
      return [];
    }
    txn.phase = 'committing';
    txn.commitRequest = { type: 'commit-request', client: txn.id.client, seq: txn.id.seq, reads, writes };
    txn.commitSentAtNs = nowNs;
    return [{ kind: 'send', to: COORDINATOR, message: txn.commitRequest, answer: false }];
  }

  /** Drops the running transaction before commit (nothing was locked: nothing to undo). */
  abandon(): void {
    const txn = this.#current;
    if (!txn) return;
    if (txn.phase === 'committing') {
      throw new DtTransactionStateError(
        `transaction ${txn.id.seq} is being committed and may commit: wait for its outcome`,
      );
    }
    this.#current = undefined;
  }

  /** Handles a reply; completions become available through `takeCompletions`. */
  handle(message: ClientInput, _nowNs: number): DtOutput[] {
    const txn = this.#current;
    if (!txn || message.client !== this.client || message.seq !== txn.id.seq) return [];
    if (message.type === 'read-reply') {
      const pending = txn.pendingReads.get(message.key);
      if (!pending) return [];
      txn.pendingReads.delete(message.key);
      if (message.status === 'wrong-shard') {
        txn.doomed ??= `wrong-shard: ${message.key}`;
      } else if (message.locked) {
        txn.doomed ??= 'read-locked';
      }
      const result: ReadResult = {
        found: message.found,
        value: message.found ? message.value : undefined,
        version: message.version,
        locked: message.locked,
      };
      if (message.status === 'ok') {
        txn.reads.set(message.key, {
          shard: pending.shard,
          key: message.key,
          version: message.version,
          result,
        });
      }
      this.#completions.push({ kind: 'read', txn: txn.id, key: message.key, result });
      return [];
    }
    if (txn.phase !== 'committing') return [];
    this.#finish(
      message.outcome === 'committed'
        ? { outcome: 'committed' }
        : { outcome: message.outcome, reason: message.reason },
    );
    return [];
  }

  /** Resends what has waited `retryNs` or longer. */
  tick(nowNs: number): DtOutput[] {
    const txn = this.#current;
    if (!txn) return [];
    const out: DtOutput[] = [];
    for (const [key, pending] of txn.pendingReads) {
      if (nowNs - pending.sentAtNs < this.#config.retryNs) continue;
      pending.sentAtNs = nowNs;
      out.push(this.#readRequest(txn.id, pending.shard, key));
    }
    if (
      txn.phase === 'committing' &&
      txn.commitRequest &&
      nowNs - txn.commitSentAtNs >= this.#config.retryNs
    ) {
      txn.commitSentAtNs = nowNs;
      out.push({ kind: 'send', to: COORDINATOR, message: txn.commitRequest, answer: false });
    }
    return out;
  }

  /** When `tick` next has something to resend (undefined: nothing outstanding). */
  nextRetryNs(): number | undefined {
    const txn = this.#current;
    if (!txn) return undefined;
    let next = Number.POSITIVE_INFINITY;
    for (const pending of txn.pendingReads.values())
      next = Math.min(next, pending.sentAtNs + this.#config.retryNs);
    if (txn.phase === 'committing') next = Math.min(next, txn.commitSentAtNs + this.#config.retryNs);
    return Number.isFinite(next) ? next : undefined;
  }

  /** Completions since the last call, in order. */
  takeCompletions(): ClientCompletion[] {
    return this.#completions.splice(0, this.#completions.length);
  }

  #finish(outcome: TxnOutcome): void {
    const txn = this.#current!;
    this.#current = undefined;
    this.#completions.push({ kind: 'outcome', txn: txn.id, outcome });
  }

  #readRequest(id: TxnId, shard: number, key: string): DtOutput {
    return {
      kind: 'send',
      to: participantAddress(shard),
      message: { type: 'read', client: id.client, seq: id.seq, shard, key },
      answer: false,
    };
  }

  #active(operation: string): ActiveTxn {
    const txn = this.#current;
    if (!txn)
      throw new DtTransactionStateError(`${operation}: no transaction is running; call begin() first`);
    if (txn.phase !== 'active') {
      throw new DtTransactionStateError(`${operation}: transaction ${txn.id.seq} is already committing`);
    }
    return txn;
  }
}

// ---- the promise API ---------------------------------------------------------------------------

/** How a DtClient reaches the cluster. */
export interface DtClientTransport {
  /** Sends one message to a party of the cluster. */
  send(to: Address, message: DtMessage): void;
  /** Registers where incoming messages go (called once by the client). */
  listen(receive: (message: DtMessage) => void): void;
}

/** Options of `DtClient`. */
export interface DtClientOptions {
  readonly client: number;
  readonly shards: ShardMap;
  readonly transport: DtClientTransport;
  /** Resend unanswered requests after this many ms (default 20). */
  readonly retryMs?: number;
  readonly maxValueBytes?: number;
  readonly lastSeq?: number;
}

const textEncoder = new TextEncoder();

/** A promise-based DT client over a transport (see the header). */
export class DtClient {
  readonly #session: DtClientSession;
  readonly #transport: DtClientTransport;
  readonly #retryMs: number;
  readonly #startNs = process.hrtime.bigint();
  readonly #readWaiters = new Map<string, ((result: ReadResult) => void)[]>();
  #outcomeWaiter: ((outcome: TxnOutcome) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: DtClientOptions) {
    this.#retryMs = options.retryMs ?? 20;
    this.#session = new DtClientSession({
      client: options.client,
      shards: options.shards,
      retryNs: this.#retryMs * 1e6,
      ...(options.maxValueBytes === undefined ? {} : { maxValueBytes: options.maxValueBytes }),
      ...(options.lastSeq === undefined ? {} : { lastSeq: options.lastSeq }),
    });
    this.#transport = options.transport;
    this.#transport.listen((message) => this.#receive(message));
  }

  /** Starts a transaction (one at a time per client). */
  begin(): DtTransaction {
    if (this.#closed) throw new DtTransactionStateError('the client is closed');
    const id = this.#session.begin();
    return new DtTransaction(this, id);
  }

  /**
   * Runs `body` in a transaction and commits it, retrying from the start on `aborted` up to
   * `attempts` times. Returns the last outcome and body's value from the attempt that produced it.
   */
  async transact<T>(
    body: (txn: DtTransaction) => Promise<T>,
    options: { readonly attempts?: number } = {},
  ): Promise<{ readonly outcome: TxnOutcome; readonly value: T; readonly attempts: number }> {
    const attempts = options.attempts ?? 10;
    for (let attempt = 1; ; attempt++) {
      const txn = this.begin();
      let value: T;
      try {
        value = await body(txn);
      } catch (error) {
        txn.abandon();
        throw error;
      }
      const outcome = await txn.commit();
      if (outcome.outcome !== 'aborted' || attempt >= attempts) return { outcome, value, attempts: attempt };
    }
  }

  /** Stops the retry timer; outstanding promises stay pending. */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** @internal used by DtTransaction */
  readKey(key: string): Promise<ReadResult> {
    const promise = new Promise<ReadResult>((resolve) => {
      const waiters = this.#readWaiters.get(key) ?? [];
      waiters.push(resolve);
      this.#readWaiters.set(key, waiters);
    });
    this.#dispatch(this.#session.read(key, this.#now()));
    return promise;
  }

  /** @internal */
  writeKey(key: string, value: Uint8Array): void {
    this.#session.write(key, value);
  }

  /** @internal */
  commitCurrent(): Promise<TxnOutcome> {
    const outputs = this.#session.commit(this.#now()); // throws before any waiter is set
    const promise = new Promise<TxnOutcome>((resolve) => {
      this.#outcomeWaiter = resolve;
    });
    this.#dispatch(outputs);
    return promise;
  }

  /** @internal */
  abandonCurrent(): void {
    this.#session.abandon();
    this.#readWaiters.clear();
  }

  #now(): number {
    return Number(process.hrtime.bigint() - this.#startNs);
  }

  #receive(message: DtMessage): void {
    if (!isClientInput(message)) return;
    this.#dispatch(this.#session.handle(message, this.#now()));
  }

  #dispatch(outputs: readonly DtOutput[]): void {
    for (const output of outputs) {
      if (output.kind === 'send') this.#transport.send(output.to, output.message);
    }
    for (const completion of this.#session.takeCompletions()) {
      if (completion.kind === 'read') {
        const waiters = this.#readWaiters.get(completion.key) ?? [];
        this.#readWaiters.delete(completion.key);
        for (const resolve of waiters) resolve(completion.result);
      } else {
        const resolve = this.#outcomeWaiter;
        this.#outcomeWaiter = undefined;
        resolve?.(completion.outcome);
      }
    }
    this.#armTimer();
  }

  #armTimer(): void {
    const busy = this.#session.nextRetryNs() !== undefined;
    if (busy && this.#timer === undefined && !this.#closed) {
      this.#timer = setInterval(() => this.#dispatch(this.#session.tick(this.#now())), this.#retryMs);
      this.#timer.unref();
    } else if (!busy && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** One transaction of a DtClient. */
export class DtTransaction {
  readonly id: TxnId;
  readonly #client: DtClient;
  #done = false;

  /** @internal created by DtClient.begin */
  constructor(client: DtClient, id: TxnId) {
    this.#client = client;
    this.id = id;
  }

  /** The value of `key` (undefined when absent), with its version and lock flag. */
  async readWithVersion(key: string): Promise<ReadResult> {
    this.#check('read');
    return this.#client.readKey(key);
  }

  /** The value of `key`, or undefined when it does not exist. */
  async read(key: string): Promise<Uint8Array | undefined> {
    return (await this.readWithVersion(key)).value;
  }

  /** Buffers a write; strings are stored as UTF-8. */
  write(key: string, value: Uint8Array | string): void {
    this.#check('write');
    this.#client.writeKey(key, typeof value === 'string' ? textEncoder.encode(value) : value);
  }

  /** Commits; resolves with the outcome (never rejects for an abort). */
  async commit(): Promise<TxnOutcome> {
    this.#check('commit');
    const outcome = this.#client.commitCurrent();
    this.#done = true;
    return outcome;
  }

  /** Gives the transaction up before commit. */
  abandon(): void {
    if (this.#done) return;
    this.#done = true;
    this.#client.abandonCurrent();
  }

  #check(operation: string): void {
    if (this.#done)
      throw new DtTransactionStateError(`${operation}: transaction ${this.id.seq} already finished`);
  }
}
