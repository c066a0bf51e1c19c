/**
 * DT's three actors (iPipe §5 "DT": "coordinator and participant actors run on the NIC; a logging
 * actor pinned to the host persists the coordinator log"), hosting the same protocol logic the
 * deterministic simulator tests (coordinator-logic.ts, participant-logic.ts, logger-logic.ts).
 *
 * Each exec re-opens its state from DMO roots (dmo-stores.ts), rebuilds the logic over it, feeds it
 * the message and turns the outputs into actor calls:
 *
 *   DtOutput                         actor call
 *   send, answer: false              ctx.send(ref, message, { origin: 'self' })   (the answer comes back here)
 *   send, answer: true, to a client  ctx.reply(message) when a client waits; else dropped (it retries)
 *   send, answer: true, to an actor  ctx.reply(message) when that actor asked; else a plain send
 *   timer                            ctx.setTimer(delay, message, { origin: keepOrigin ? 'inherit' : 'none' })
 *   event                            published on diagnostics channel `ipipe:dt:event`
 *
 * Why `origin: 'self'` everywhere: an actor-to-actor request carries the asker's origin as its
 * parent, so the coordinator handles each lock-reply, validate-reply, log-durable and commit-ack
 * under the origin of the client's commit-request and can `reply` to that client when the last ack
 * arrives — the client's origin travels the whole request chain (envelope.ts). Retransmissions
 * sent from timer ticks have no origin; their answers then cannot reach the client, which retries,
 * and the response cache answers it.
 *
 * Addressing is by instance name, resolved through the actor table per send (`ctx.lookup`), so a
 * migrated or re-registered actor is found again. Names are configured by setup messages
 * (`coordinator-setup`, `participant-setup`, `logger-setup`), kept encoded in each actor's DMOs
 * under "setup", so an actor's whole state — setup included — migrates with it.
 *
 * A message that arrives before its actor's setup is dropped with a warning: every protocol message
 * is retransmitted by its sender, so nothing is lost by that.
 */

import { channel } from 'node:diagnostics_channel';
import type { ActorContext, ActorRef, HandlerWork } from '../../actor/index.ts';
import { defineActor, narrowRef } from '../../actor/index.ts';
import { DmoHashMap } from '../../dmo/index.ts';
import { ConfigError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import { CoordinatorLogic } from './coordinator-logic.ts';
import {
  type DmoCoordinatorRoots,
  DmoCoordinatorStore,
  type DmoParticipantRoots,
  DmoParticipantStore,
  dmoLoggerStateCell,
} from './dmo-stores.ts';
import { DtLogCorruptError, DtLogIoError } from './errors.ts';
import { openLogStorage } from './log-storage.ts';
import {
  describeLogRecovery,
  initialLoggerState,
  LoggerLogic,
  type LogRecoveryReport,
} from './logger-logic.ts';
import {
  type DtMessage,
  type DtMsg,
  dtMessages,
  isCoordinatorInput,
  isLoggerInput,
  isParticipantInput,
} from './messages.ts';
import { ParticipantLogic } from './participant-logic.ts';
import { type Address, type DtEvent, type DtOutput, hashShardMap } from './types.ts';

/** What is published on `DT_EVENT_CHANNEL` for every protocol event of every DT actor. */
export interface DtActorEvent {
  /** The instance name of the actor that reported it. */
  readonly actor: string;
  readonly atNs: number;
  readonly event: DtEvent;
}

/** The diagnostics channel DT actors publish their protocol events on (committed, aborted, …). */
export const DT_EVENT_CHANNEL = 'ipipe:dt:event';
const events = channel(DT_EVENT_CHANNEL);

/** The diagnostics channel the logging actor publishes each start-up LogRecoveryReport on. */
export const DT_LOG_RECOVERY_CHANNEL = 'ipipe:dt:log-recovery';
const logRecoveries = channel(DT_LOG_RECOVERY_CHANNEL);

type DtContext = ActorContext<DtMessage, DtMessage>;

// ---- the output adapter ------------------------------------------------------------------------

/** Carries out a logic's outputs with `ctx` (table in the header); `resolve` names the parties. */
function perform(
  ctx: DtContext,
  outputs: readonly DtOutput[],
  resolve: (to: Address) => string | undefined,
): void {
  for (const output of outputs) {
    switch (output.kind) {
      case 'event':
        if (events.hasSubscribers) {
          events.publish({ actor: ctx.name, atNs: ctx.now(), event: output.event } satisfies DtActorEvent);
        }
        break;
      case 'timer':
        ctx.setTimer(Math.max(0, Math.round(output.delayNs)), output.message, {
          origin: output.keepOrigin ? 'inherit' : 'none',
        });
        break;
      case 'send': {
        if (output.to.kind === 'client') {
          // Only a waiting client can be answered; one that is not waiting retries its request.
          if (output.answer && ctx.origin.kind === 'client') ctx.reply(output.message);
          break;
        }
        const name = resolve(output.to);
        const ref = name === undefined ? undefined : dtRef(ctx, name);
        if (ref === undefined) {
          ctx.log.warn({ to: output.to, type: output.message.type }, 'dt: no such actor; message dropped');
          break;
        }
        if (output.answer && ctx.origin.kind === 'actor' && ctx.origin.actor === ref.id)
          ctx.reply(output.message);
        else if (output.answer) ctx.send(ref, output.message, { origin: 'none' });
        else ctx.send(ref, output.message, { origin: 'self' });
        break;
      }
    }
  }
}

/** A DT actor's ref by instance name (all three share the codec, so any definition narrows it). */
function dtRef(ctx: DtContext, name: string): ActorRef<DtMessage, DtMessage> | undefined {
  return narrowRef(ctx.lookup(name), dtCoordinator);
}

function rootOf(ctx: DtContext, name: string): ObjectId {
  const id = ctx.root(name);
  if (id === undefined) throw new Error(`dt actor ${ctx.name}: root "${name}" missing (init did not run)`);
  return id;
}

function loadSetup<T extends DtMessage['type']>(state: DmoHashMap, type: T): DtMsg<T> | undefined {
  const bytes = state.getString('setup');
  if (!bytes) return undefined;
  const message = dtMessages.decode(bytes);
  return message.type === type ? (message as DtMsg<T>) : undefined;
}

function dropBeforeSetup(ctx: DtContext, message: DtMessage): void {
  ctx.log.warn({ type: message.type }, 'dt: message before setup dropped (its sender retransmits)');
}

// ---- cost model (for the simulator; iPipe Table 3's scale for hash-table work) -----------------

/** Instructions of a hash-table operation on one key (lookup + version/lock update). */
const PER_KEY_INSTRUCTIONS = 450;
/** Parsing, dispatch and building the answer of any DT message. */
const BASE_INSTRUCTIONS = 900;
/** fsync on a datacenter NVMe drive: what one group commit costs the host core, beyond the CPU. */
export const FSYNC_NS = 20_000;

function itemCount(message: DtMessage): number {
  switch (message.type) {
    case 'commit-request':
      return message.reads.length + message.writes.length;
    case 'lock':
    case 'validate':
      return message.keys.length;
    case 'commit':
    case 'log-append':
      return message.writes.length;
    case 'participant-load':
      return message.items.length;
    case 'log-recovered':
      return message.pending.length + message.clients.length;
    default:
      return 1;
  }
}

function protocolWork(message: DtMessage, mpki: number): HandlerWork {
  const keys = itemCount(message);
  return {
    instructions: BASE_INSTRUCTIONS + PER_KEY_INSTRUCTIONS * keys,
    ipc: 1.1,
    mpki,
    workingSetBytes: 64 * 1024,
  };
}

// ---- the coordinator ---------------------------------------------------------------------------

const COORDINATOR_ROOTS = ['txns', 'clients', 'tail', 'state'] as const;

function coordinatorStore(ctx: DtContext): DmoCoordinatorStore {
  const roots = Object.fromEntries(COORDINATOR_ROOTS.map((name) => [name, rootOf(ctx, name)]));
  return DmoCoordinatorStore.open(ctx.dmo, roots as unknown as DmoCoordinatorRoots);
}

/**
 * The DT coordinator: OCC + 2PC over the participants, commit point in the logging actor's log, a
 * response cache and the NIC-side log object (coordinator-logic.ts). Starts on the NIC; `any` lets
 * the runtime move it. Setup with `coordinator-setup` (it then recovers from the log and serves).
 */
export const dtCoordinator = defineActor({
  name: 'dt-coordinator',
  messages: dtMessages,
  replies: dtMessages,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    const store = DmoCoordinatorStore.create(ctx.dmo);
    for (const name of COORDINATOR_ROOTS) ctx.setRoot(name, store.roots[name]);
  },
  exec(ctx, message) {
    const store = coordinatorStore(ctx);
    if (message.type === 'coordinator-setup') {
      if (loadSetup(store.stateMap, 'coordinator-setup') !== undefined) return; // a duplicate setup
      store.stateMap.setString('setup', dtMessages.encode(message));
    }
    const setup = loadSetup(store.stateMap, 'coordinator-setup');
    if (setup === undefined) return dropBeforeSetup(ctx, message);
    const logic = new CoordinatorLogic(store, {
      shards: hashShardMap(setup.participants.length),
      retryNs: setup.retryNs,
      txnTimeoutNs: setup.txnTimeoutNs,
      logLimitRecords: setup.logLimitRecords,
      maxValueBytes: setup.maxValueBytes,
    });
    const resolve = (to: Address): string | undefined =>
      to.kind === 'logger'
        ? setup.logger
        : to.kind === 'participant'
          ? setup.participants[to.shard]
          : undefined;
    if (message.type === 'coordinator-setup')
      return perform(ctx, logic.start(setup.nonce, ctx.now()), resolve);
    if (!isCoordinatorInput(message)) return;
    perform(ctx, logic.handle(message, ctx.now()), resolve);
  },
  cost: (message) => protocolWork(message, 1.5),
});

// ---- the participants --------------------------------------------------------------------------

const PARTICIPANT_ROOTS = ['items', 'locks', 'ended', 'order', 'state'] as const;

function participantStore(ctx: DtContext): DmoParticipantStore {
  const roots = Object.fromEntries(PARTICIPANT_ROOTS.map((name) => [name, rootOf(ctx, name)]));
  return DmoParticipantStore.open(ctx.dmo, roots as unknown as DmoParticipantRoots);
}

/**
 * A DT participant: one shard's extensible hash table of versioned, lockable items in DMOs
 * (participant-logic.ts). Starts on the NIC; `any` lets the runtime move it. Setup with
 * `participant-setup`, then load data with `participant-load`.
 */
export const dtParticipant = defineActor({
  name: 'dt-participant',
  messages: dtMessages,
  replies: dtMessages,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    const store = DmoParticipantStore.create(ctx.dmo);
    for (const name of PARTICIPANT_ROOTS) ctx.setRoot(name, store.roots[name]);
  },
  exec(ctx, message) {
    const store = participantStore(ctx);
    const first =
      message.type === 'participant-setup' && loadSetup(store.stateMap, 'participant-setup') === undefined;
    if (first) store.stateMap.setString('setup', dtMessages.encode(message));
    const setup = loadSetup(store.stateMap, 'participant-setup');
    if (setup === undefined) return dropBeforeSetup(ctx, message);
    const logic = new ParticipantLogic(store, {
      shard: setup.shard,
      shards: hashShardMap(setup.shardCount),
      leaseNs: setup.leaseNs,
    });
    const resolve = (to: Address): string | undefined =>
      to.kind === 'coordinator' ? setup.coordinator : undefined;
    if (message.type === 'participant-setup') {
      if (first) perform(ctx, logic.start(ctx.now()), resolve);
      return;
    }
    if (!isParticipantInput(message)) return;
    perform(ctx, logic.handle(message, ctx.now()), resolve);
  },
  cost: (message) => protocolWork(message, 2),
});

// ---- the logging actor -------------------------------------------------------------------------

/**
 * The DT logging actor, pinned to the host because it writes the coordinator log to storage with
 * fsync (logger-logic.ts: group commit, epoch fencing, checkpoint + compaction). Setup with
 * `logger-setup` naming `file:<absolute path>` (a real file) or `memory:<name>` (a registered
 * in-memory disk); the setup scans the log, cuts a torn tail and reports it on
 * `DT_LOG_RECOVERY_CHANNEL` and the actor's log. A log corrupt in the middle under
 * `refuse-corruption` leaves the logger unconfigured (every message dropped, an error logged), so
 * the coordinator stays in recovery rather than serving from a damaged log.
 */
export const dtLogger = defineActor({
  name: 'dt-logger',
  messages: dtMessages,
  replies: dtMessages,
  placement: 'host',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('state', DmoHashMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const state = DmoHashMap.open(ctx.dmo, rootOf(ctx, 'state'));
    if (message.type === 'logger-setup') {
      if (loadSetup(state, 'logger-setup') !== undefined) return;
      let report: LogRecoveryReport;
      try {
        report = LoggerLogic.recover(openLogStorage(message.storage, 0, true), message.recovery);
      } catch (error) {
        // A corrupt log, an unusable file, an unknown storage name: the logger stays
        // unconfigured (and the coordinator in recovery) rather than serving from it.
        if (
          error instanceof DtLogCorruptError ||
          error instanceof DtLogIoError ||
          error instanceof ConfigError
        ) {
          ctx.log.error({ code: error.code, storage: message.storage }, error.message);
          return;
        }
        throw error;
      }
      ctx.log.info({ storage: message.storage, outcome: report.outcome }, describeLogRecovery(report));
      if (logRecoveries.hasSubscribers) logRecoveries.publish({ actor: ctx.name, report });
      dmoLoggerStateCell(state, initialLoggerState(report.epoch)).set(initialLoggerState(report.epoch));
      state.setString('setup', dtMessages.encode(message));
      return;
    }
    const setup = loadSetup(state, 'logger-setup');
    if (setup === undefined) return dropBeforeSetup(ctx, message);
    if (!isLoggerInput(message)) return;
    const cell = dmoLoggerStateCell(state, initialLoggerState(0));
    const logic = new LoggerLogic(openLogStorage(setup.storage, cell.get().generation), cell, {
      groupCommitNs: setup.groupCommitNs,
      recovery: setup.recovery,
    });
    perform(ctx, logic.handle(message, ctx.now()), (to) =>
      to.kind === 'coordinator' ? setup.coordinator : undefined,
    );
  },
  cost: (message): HandlerWork => {
    const work = protocolWork(message, 1);
    // The disk: a flush may fsync, recovery writes an epoch record and reads the log, a
    // checkpoint rewrites it. Charged as fixed time on the host core that blocks on it.
    switch (message.type) {
      case 'log-flush':
      case 'log-recover':
        return { ...work, fixedNs: FSYNC_NS };
      case 'log-checkpoint':
        return { ...work, fixedNs: 3 * FSYNC_NS };
      case 'logger-setup':
        return { ...work, fixedNs: 2 * FSYNC_NS };
      default:
        return work;
    }
  },
});
