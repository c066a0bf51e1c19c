/**
 * The logging actor's logic (iPipe §5 "DT": "a logging actor pinned to the host writes the log to
 * persistent storage; when the coordinator log reaches its limit, the log object migrates to the
 * host and a checkpoint message goes to the logging actor").
 *
 * Duties, each a message:
 *
 * - `log-append` (step 3, the commit point): write the commit record at once, then acknowledge it
 *   (`log-durable`) only after an fsync covers it. **Group commit**: the fsync is not issued per
 *   record. Each append arms a `log-flush` timer `groupCommitNs` later (under the appender's
 *   origin, so the answer finds its way back); the first flush to fire syncs *everything* written
 *   so far, and the others find their record already durable and only answer. One fsync thus
 *   covers every append that arrived within the window (and with a window of 0, every append
 *   queued before the first flush runs). The rule that matters for safety is unchanged: no
 *   `log-durable` before the fsync that covers its record.
 * - Fencing: appends carry the coordinator's epoch; one from an older epoch (a coordinator
 *   incarnation that has since been replaced) is refused with `log-rejected`. Without it, an
 *   append still in flight from a dead incarnation could land *after* its successor presumed the
 *   transaction aborted, and a later recovery would then find it committed.
 * - `log-recover`: a (re)started coordinator gets a new epoch — an `epoch` record, fsynced before
 *   the answer — and the log's contents: every client's latest committed seq and every commit
 *   record still in the file (committed, perhaps not yet applied everywhere). A repeated request
 *   with the same nonce (a retransmission) gets the same epoch, not another bump.
 * - `log-checkpoint`: the coordinator's NIC-side log object reached its limit and moved here. The
 *   logger appends a checkpoint record (the clients' latest committed seqs), fsyncs, and compacts
 *   the file: it keeps the current epoch, one merged checkpoint, and the commit records of
 *   transactions not yet acknowledged by every participant — so the file stays bounded and a
 *   restarted coordinator redoes only what may be unfinished.
 *
 * Start-up (`LoggerLogic.open`) scans the file: a torn tail (crash during an unsynced write) is
 * cut off and reported; damage with valid records after it is refused unless the operator chose
 * `discard-after-corruption` (see log-format.ts and DtLogCorruptError).
 */

import { DtLogCorruptError } from './errors.ts';
import {
  encodeLogRecord,
  type LogDamage,
  type LoggedCommit,
  type LogRecord,
  replayLog,
  scanLog,
} from './log-format.ts';
import type { LogStorage } from './log-storage.ts';
import type { DtMsg, LoggerInput } from './messages.ts';
import { COORDINATOR, type DtOutput, type StateCell, txnKey } from './types.ts';

/** What to do when the log is damaged with valid records after the damage. */
export type LogRecoveryPolicy = 'refuse-corruption' | 'discard-after-corruption';

/** The logger's configuration. */
export interface LoggerConfig {
  /** Group-commit window: how long an append may wait for the fsync that covers it. */
  readonly groupCommitNs: number;
  readonly recovery: LogRecoveryPolicy;
}

/** The logger's state between messages (kept in a DMO by the actor). */
export interface LoggerState {
  /** The current coordinator epoch (0: none has started yet). */
  readonly epoch: number;
  /** Appends written so far (monotonic). */
  readonly appended: number;
  /** Appends covered by an fsync. */
  readonly synced: number;
  /** Nonce of the last recover request served (0: none). */
  readonly recoverNonce: number;
  /** Compactions so far (a cached file descriptor of an older generation is stale). */
  readonly generation: number;
}

/** What start-up found in the log, and what it did about it. */
export interface LogRecoveryReport {
  readonly storage: string;
  /** Records kept. */
  readonly records: number;
  readonly validBytes: number;
  readonly discardedBytes: number;
  readonly damage: LogDamage | undefined;
  /** `clean`; a torn tail cut off; or damage in the middle accepted under `discard-after-corruption`. */
  readonly outcome: 'clean' | 'torn-tail-discarded' | 'corruption-discarded';
  /** Valid records after the damage that were dropped (only under `discard-after-corruption`). */
  readonly recordsLost: number;
  readonly epoch: number;
}

/** A one-line account of a recovery, for logs and the CLI. */
export function describeLogRecovery(report: LogRecoveryReport): string {
  const head = `coordinator log ${report.storage}: ${report.records} record(s), ${report.validBytes} valid byte(s)`;
  switch (report.outcome) {
    case 'clean':
      return `${head}; clean`;
    case 'torn-tail-discarded':
      return `${head}; discarded a torn tail of ${report.discardedBytes} byte(s) (${report.damage}) left by a crash during an unsynced write`;
    case 'corruption-discarded':
      return `${head}; DISCARDED ${report.discardedBytes} byte(s) after damage (${report.damage}), losing ${report.recordsLost} valid record(s), as the discard-after-corruption policy allows`;
  }
}

/** The initial state of a logger whose file replays to `epoch`. */
export function initialLoggerState(epoch: number): LoggerState {
  return { epoch, appended: 0, synced: 0, recoverNonce: 0, generation: 0 };
}

/** The logging actor's state machine over one LogStorage. */
export class LoggerLogic {
  readonly #storage: LogStorage;
  readonly #state: StateCell<LoggerState>;
  readonly #config: LoggerConfig;

  constructor(storage: LogStorage, state: StateCell<LoggerState>, config: LoggerConfig) {
    this.#storage = storage;
    this.#state = state;
    this.#config = config;
  }

  /**
   * Scans the log, cuts off a torn tail (durably, so the next append does not follow garbage) and
   * returns what it found with the epoch the log replays to. Throws DtLogCorruptError when valid
   * records follow damage and the policy refuses.
   */
  static recover(storage: LogStorage, policy: LogRecoveryPolicy): LogRecoveryReport {
    const scan = scanLog(storage.readAll());
    let outcome: LogRecoveryReport['outcome'] = 'clean';
    let recordsLost = 0;
    if (scan.damage !== undefined) {
      if (scan.recordsAfterDamage > 0) {
        if (policy === 'refuse-corruption') {
          throw new DtLogCorruptError(scan.validBytes, scan.damage, scan.recordsAfterDamage, storage.name);
        }
        outcome = 'corruption-discarded';
        recordsLost = scan.recordsAfterDamage;
      } else {
        outcome = 'torn-tail-discarded';
      }
      storage.truncate(scan.validBytes);
    }
    return {
      storage: storage.name,
      records: scan.records.length,
      validBytes: scan.validBytes,
      discardedBytes: scan.discardedBytes,
      damage: scan.damage,
      outcome,
      recordsLost,
      epoch: replayLog(scan.records).epoch,
    };
  }

  get state(): LoggerState {
    return this.#state.get();
  }

  /** Handles one message; returns what to send and which timers to arm. */
  handle(message: LoggerInput, _nowNs: number): DtOutput[] {
    switch (message.type) {
      case 'log-append':
        return this.#append(message);
      case 'log-flush':
        return this.#flush(message);
      case 'log-recover':
        return this.#recover(message);
      case 'log-checkpoint':
        return this.#checkpoint(message);
    }
  }

  #append(message: DtMsg<'log-append'>): DtOutput[] {
    const state = this.#state.get();
    const owner = { client: message.client, seq: message.seq, epoch: message.epoch };
    if (message.epoch !== state.epoch) {
      return [
        {
          kind: 'send',
          to: COORDINATOR,
          message: { type: 'log-rejected', ...owner, currentEpoch: state.epoch },
          answer: true,
        },
      ];
    }
    this.#storage.append(
      encodeLogRecord({
        type: 'commit',
        epoch: message.epoch,
        client: message.client,
        seq: message.seq,
        writes: message.writes,
      }),
    );
    const appended = state.appended + 1;
    this.#state.set({ ...state, appended });
    return [
      {
        kind: 'timer',
        delayNs: this.#config.groupCommitNs,
        message: { type: 'log-flush', ...owner, upTo: appended },
        keepOrigin: true,
      },
    ];
  }

  #flush(message: DtMsg<'log-flush'>): DtOutput[] {
    const state = this.#state.get();
    if (state.synced < message.upTo) {
      // Everything written so far becomes durable with this one fsync (group commit).
      this.#storage.sync();
      this.#state.set({ ...state, synced: state.appended });
    }
    return [
      {
        kind: 'send',
        to: COORDINATOR,
        message: { type: 'log-durable', client: message.client, seq: message.seq, epoch: message.epoch },
        answer: true,
      },
    ];
  }

  #recover(message: DtMsg<'log-recover'>): DtOutput[] {
    let state = this.#state.get();
    if (message.nonce === 0 || message.nonce !== state.recoverNonce) {
      // A new incarnation: fence every older one with a durable epoch record before answering.
      const epoch = state.epoch + 1;
      this.#storage.append(encodeLogRecord({ type: 'epoch', epoch }));
      this.#storage.sync();
      state = { ...state, epoch, recoverNonce: message.nonce, synced: state.appended };
      this.#state.set(state);
    }
    const replay = replayLog(scanLog(this.#storage.readAll()).records);
    return [
      {
        kind: 'send',
        to: COORDINATOR,
        message: {
          type: 'log-recovered',
          nonce: message.nonce,
          epoch: state.epoch,
          clients: [...replay.clients].map(([client, seq]) => ({ client, seq })),
          pending: replay.commits.map((commit) => ({
            client: commit.client,
            seq: commit.seq,
            epoch: commit.epoch,
            writes: commit.writes,
          })),
        },
        answer: true,
      },
    ];
  }

  #checkpoint(message: DtMsg<'log-checkpoint'>): DtOutput[] {
    const state = this.#state.get();
    if (message.epoch !== state.epoch) return []; // from a replaced incarnation: its view is stale
    this.#storage.append(
      encodeLogRecord({ type: 'checkpoint', epoch: message.epoch, clients: message.clients }),
    );
    this.#storage.sync();
    // Compaction: the replay of the whole file (checkpoint included) is what must survive.
    const replay = replayLog(scanLog(this.#storage.readAll()).records);
    const finished = new Set(message.finished.map((ref) => txnKey(ref.client, ref.seq)));
    const kept: LoggedCommit[] = replay.commits.filter(
      (commit) => !finished.has(txnKey(commit.client, commit.seq)),
    );
    const records: LogRecord[] = [
      { type: 'epoch', epoch: state.epoch },
      {
        type: 'checkpoint',
        epoch: state.epoch,
        clients: [...replay.clients].map(([client, seq]) => ({ client, seq })),
      },
      ...kept.map((commit): LogRecord => ({ type: 'commit', ...commit })),
    ];
    const encoded = records.map(encodeLogRecord);
    const total = encoded.reduce((sum, bytes) => sum + bytes.length, 0);
    const file = new Uint8Array(total);
    let offset = 0;
    for (const bytes of encoded) {
      file.set(bytes, offset);
      offset += bytes.length;
    }
    this.#storage.replace(file);
    this.#state.set({ ...state, synced: state.appended, generation: state.generation + 1 });
    return [];
  }
}
