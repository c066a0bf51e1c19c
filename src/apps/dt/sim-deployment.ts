/**
 * The DT experiment hook (iPipe §5 "DT" on the simulated platform): registers the coordinator,
 * participant and logging actors (actors.ts) on a SimNode, configures them, and gives experiment
 * code clients that run transactions through the node like external machines would (requests over
 * the simulated wire, retransmission on a timer, the FaSST execution phase at the client).
 *
 *   const dt = deployDtOnSimNode(node, { shards: 4, initialData });
 *   dt.runClosedLoop({ clients: 16, workload: fasstWorkload({ keys: 100_000 }), random, untilNs });
 *   kernel.run({ untilNs });
 *   dt.results  // every finished transaction: outcome, latency, reads and the versions it read
 *
 * The coordinator log goes to a simulated disk (`MemoryLogStorage`, registered under a unique
 * `memory:` name) unless `storage` names a real file. Everything is deterministic for a seeded
 * `Random` and a deterministic node.
 */

import type { ActorRef } from '../../actor/index.ts';
import type { ActorId } from '../../ids.ts';
import type { EventKernel } from '../../platform/sim/event-kernel.ts';
import type { SimNode } from '../../platform/sim/sim-node.ts';
import type { Random } from '../../random.ts';
import { dtCoordinator, dtLogger, dtParticipant } from './actors.ts';
import { type ClientCompletion, DtClientSession } from './client.ts';
import { type DmoParticipantRoots, DmoParticipantStore } from './dmo-stores.ts';
import { MemoryLogStorage, registerMemoryLogStorage } from './log-storage.ts';
import type { LogRecoveryPolicy } from './logger-logic.ts';
import { type DtMessage, isClientInput, MAX_RECOVERY_ITEMS } from './messages.ts';
import type { ParticipantItem } from './participant-logic.ts';
import {
  type Address,
  type DtOutput,
  hashShardMap,
  type ShardMap,
  type TxnId,
  type TxnOutcome,
} from './types.ts';
import type { DtWorkload, TxnPlan } from './workload.ts';

/** Options of `deployDtOnSimNode`. */
export interface DtSimOptions {
  /** Participants (shards), each its own actor. */
  readonly shards: number;
  /** Instance-name prefix (default "dt"): `<prefix>-coordinator`, `<prefix>-participant-<i>`, `<prefix>-logger`. */
  readonly namePrefix?: string;
  /** `file:<absolute path>` for a real log file; default: a fresh simulated disk. */
  readonly storage?: string;
  readonly recovery?: LogRecoveryPolicy;
  /** Data loaded into the participants before any transaction (each key to its shard). */
  readonly initialData?: readonly { readonly key: string; readonly value: Uint8Array }[];
  /** Coordinator retransmission (default 200 µs), attempt timeout (default 5 ms), log limit (default 64). */
  readonly retryNs?: number;
  readonly txnTimeoutNs?: number;
  readonly logLimitRecords?: number;
  /** Participants' lock lease (default 2 ms); the logger's group-commit window (default 10 µs). */
  readonly leaseNs?: number;
  readonly groupCommitNs?: number;
  readonly maxValueBytes?: number;
  /** Clients' retransmission (default 1 ms). */
  readonly clientRetryNs?: number;
}

/** One finished transaction as a client saw it. */
export interface DtSimTxnResult {
  readonly txn: TxnId;
  readonly outcome: TxnOutcome;
  /** From begin to the outcome, ns. */
  readonly latencyNs: number;
  readonly finishedAtNs: number;
  /** The read set as sent with the commit request (empty when the client aborted it itself). */
  readonly reads: readonly { readonly key: string; readonly version: number }[];
  readonly writeKeys: readonly string[];
}

/** What `deployDtOnSimNode` returns. */
export interface DtSimDeployment {
  readonly shards: ShardMap;
  readonly coordinator: ActorRef<DtMessage, DtMessage>;
  readonly participants: readonly ActorRef<DtMessage, DtMessage>[];
  readonly logger: ActorRef<DtMessage, DtMessage>;
  /** The simulated disk (undefined when `storage` named a file). */
  readonly disk: MemoryLogStorage | undefined;
  /** Every transaction finished so far by this deployment's clients, in finishing order. */
  readonly results: DtSimTxnResult[];
  /** A client with id `id` (unique per deployment; ids start at 1). */
  client(id: number): DtSimClient;
  /** Starts `clients` closed-loop clients that run `workload` until `untilNs` (no new begin after it). */
  runClosedLoop(options: DtClosedLoopOptions): DtSimClient[];
  /** Every row of a participant's table (for checks; walks its DMO hash map). */
  participantItems(shard: number): Map<string, ParticipantItem>;
}

/** Options of `runClosedLoop`. */
export interface DtClosedLoopOptions {
  readonly clients: number;
  readonly workload: DtWorkload;
  readonly random: Random;
  /** Clients begin no transaction after this time. */
  readonly untilNs: number;
  /** First client id (default 1). */
  readonly firstClient?: number;
  /** Called for every finished transaction. */
  readonly onResult?: (result: DtSimTxnResult) => void;
}

let deployments = 0;

/** Registers and configures the DT actors on `node` (see the header). */
export function deployDtOnSimNode(node: SimNode, options: DtSimOptions): DtSimDeployment {
  const prefix = options.namePrefix ?? 'dt';
  const shards = hashShardMap(options.shards);
  const names = {
    coordinator: `${prefix}-coordinator`,
    logger: `${prefix}-logger`,
    participant: (shard: number) => `${prefix}-participant-${shard}`,
  };
  let disk: MemoryLogStorage | undefined;
  let storage = options.storage;
  if (storage === undefined) {
    disk = new MemoryLogStorage(`${prefix}-${++deployments}`);
    const name = `sim-${prefix}-${deployments}`;
    registerMemoryLogStorage(name, disk);
    storage = `memory:${name}`;
  }
  const logger = node.register(dtLogger, { name: names.logger });
  const participants = Array.from({ length: options.shards }, (_, shard) =>
    node.register(dtParticipant, { name: names.participant(shard) }),
  );
  const coordinator = node.register(dtCoordinator, { name: names.coordinator });
  const ignore = (): void => {};

  node.clientSend(
    logger,
    {
      type: 'logger-setup',
      storage,
      coordinator: names.coordinator,
      groupCommitNs: options.groupCommitNs ?? 10_000,
      recovery: options.recovery ?? 'refuse-corruption',
    },
    ignore,
  );
  participants.forEach((ref, shard) => {
    node.clientSend(
      ref,
      {
        type: 'participant-setup',
        shard,
        shardCount: options.shards,
        coordinator: names.coordinator,
        leaseNs: options.leaseNs ?? 2_000_000,
      },
      ignore,
    );
  });
  // Loads go after every setup has landed (a participant drops what comes before its setup).
  // Sends ahead of time must be made in time order, hence the two passes.
  const loadAtNs = node.kernel.now() + 20_000;
  participants.forEach((ref, shard) => {
    const items = (options.initialData ?? []).filter((item) => shards.shardOf(item.key) === shard);
    for (let start = 0; start < items.length; start += MAX_RECOVERY_ITEMS) {
      const chunk = items.slice(start, start + MAX_RECOVERY_ITEMS).map(({ key, value }) => ({ key, value }));
      node.clientSend(ref, { type: 'participant-load', items: chunk }, ignore, undefined, { atNs: loadAtNs });
    }
  });
  // The coordinator starts recovery after the others had time to take their setup (it would
  // retransmit its log-recover anyway).
  node.clientSend(
    coordinator,
    {
      type: 'coordinator-setup',
      participants: participants.map((_, shard) => names.participant(shard)),
      logger: names.logger,
      retryNs: options.retryNs ?? 200_000,
      txnTimeoutNs: options.txnTimeoutNs ?? 5_000_000,
      logLimitRecords: options.logLimitRecords ?? 64,
      maxValueBytes: options.maxValueBytes ?? 1024,
      nonce: 1,
    },
    ignore,
    undefined,
    { atNs: node.kernel.now() + 50_000 },
  );

  const results: DtSimTxnResult[] = [];
  const route = (to: Address): ActorRef<DtMessage, DtMessage> | undefined => {
    if (to.kind === 'coordinator') return coordinator;
    if (to.kind === 'participant') return participants[to.shard];
    return undefined;
  };
  const clients = new Map<number, DtSimClient>();
  const deployment: DtSimDeployment = {
    shards,
    coordinator,
    participants,
    logger,
    disk,
    results,
    client(id) {
      let client = clients.get(id);
      if (!client) {
        client = new DtSimClient(
          node.kernel,
          id,
          shards,
          sendThroughNode(node, route),
          options.clientRetryNs ?? 1_000_000,
          (result) => results.push(result),
        );
        clients.set(id, client);
      }
      return client;
    },
    runClosedLoop(loop) {
      const first = loop.firstClient ?? 1;
      const started: DtSimClient[] = [];
      for (let id = first; id < first + loop.clients; id++) {
        const client = deployment.client(id);
        started.push(client);
        const next = (): void => {
          if (node.kernel.now() >= loop.untilNs) return;
          client.run(loop.workload.next(loop.random), (result) => {
            loop.onResult?.(result);
            next();
          });
        };
        node.kernel.after(100_000 + loop.random.int(0, 10_000), next);
      }
      return started;
    },
    participantItems(shard) {
      const ref = participants[shard];
      if (!ref) throw new RangeError(`shard ${shard} outside [0, ${options.shards})`);
      return participantRows(node, ref.id);
    },
  };
  return deployment;
}

function participantRows(node: SimNode, id: ActorId): Map<string, ParticipantItem> {
  const instance = node.instance(id);
  const roots: Record<string, unknown> = {};
  for (const name of ['items', 'locks', 'ended', 'order', 'state']) roots[name] = instance.root(name);
  const store = DmoParticipantStore.open(instance.heap, roots as unknown as DmoParticipantRoots);
  return new Map(store.entries());
}

/**
 * How a simulated client reaches a party: sends `message` to `to` over the simulated wire and
 * calls `onReply` with the answer, if one comes (a SimNode's or a SimCluster's clientSend).
 */
export type DtSimSend = (to: Address, message: DtMessage, onReply: (reply: DtMessage) => void) => void;

/** A DtSimSend over one node: every party is an actor of `node`, found by `route`. */
export function sendThroughNode(
  node: SimNode,
  route: (to: Address) => ActorRef<DtMessage, DtMessage> | undefined,
): DtSimSend {
  return (to, message, onReply) => {
    const ref = route(to);
    if (!ref) return;
    node.clientSend(ref, message, (_id, _latency, ok, reply) => {
      if (ok && isDtMessage(reply)) onReply(reply);
    });
  };
}

/**
 * A client machine on the simulated wire: runs one transaction plan at a time (reads, the plan's
 * computation, buffered writes, commit) through a DtClientSession, resending what goes unanswered.
 * Where its requests go is `send`'s business (one node, or the right node of a cluster).
 */
export class DtSimClient {
  readonly id: number;
  readonly #kernel: EventKernel;
  readonly #session: DtClientSession;
  readonly #sendTo: DtSimSend;
  readonly #record: (result: DtSimTxnResult) => void;
  #plan: TxnPlan | undefined;
  #done: ((result: DtSimTxnResult) => void) | undefined;
  #startedAtNs = 0;
  #values = new Map<string, Uint8Array | undefined>();
  #reads: { key: string; version: number }[] = [];
  #tickAtNs = Number.POSITIVE_INFINITY;

  constructor(
    kernel: EventKernel,
    id: number,
    shards: ShardMap,
    send: DtSimSend,
    retryNs: number,
    record: (result: DtSimTxnResult) => void,
    maxValueBytes?: number,
  ) {
    this.id = id;
    this.#kernel = kernel;
    this.#session = new DtClientSession({
      client: id,
      shards,
      retryNs,
      ...(maxValueBytes === undefined ? {} : { maxValueBytes }),
    });
    this.#sendTo = send;
    this.#record = record;
  }

  /** True while a transaction runs. */
  get busy(): boolean {
    return this.#plan !== undefined;
  }

  /** Runs `plan` as one transaction; `done` hears its outcome. One at a time per client. */
  run(plan: TxnPlan, done: (result: DtSimTxnResult) => void): void {
    this.#session.begin(); // throws DtTransactionStateError when one already runs
    this.#plan = plan;
    this.#done = done;
    this.#startedAtNs = this.#kernel.now();
    this.#values = new Map();
    this.#reads = [];
    const outputs: DtOutput[] = [];
    for (const key of plan.reads) outputs.push(...this.#session.read(key, this.#kernel.now()));
    this.#send(outputs);
    if (plan.reads.length === 0) this.#commit(plan); // blind writes: nothing to wait for
    this.#drain();
  }

  #commit(plan: TxnPlan): void {
    const values = plan.compute(plan.reads.map((key) => this.#values.get(key)));
    plan.writeKeys.forEach((key, i) => {
      this.#session.write(key, values[i]!);
    });
    this.#send(this.#session.commit(this.#kernel.now()));
  }

  #send(outputs: readonly DtOutput[]): void {
    for (const output of outputs) {
      if (output.kind !== 'send') continue;
      if (output.message.type === 'commit-request') {
        this.#reads = output.message.reads.map(({ key, version }) => ({ key, version }));
      }
      this.#sendTo(output.to, output.message, (reply) => {
        if (!isClientInput(reply)) return;
        this.#session.handle(reply, this.#kernel.now());
        this.#drain();
      });
    }
  }

  #drain(): void {
    for (
      let batch = this.#session.takeCompletions();
      batch.length > 0;
      batch = this.#session.takeCompletions()
    ) {
      for (const completion of batch) this.#complete(completion);
    }
    this.#armTick();
  }

  #complete(completion: ClientCompletion): void {
    const plan = this.#plan;
    if (!plan) return;
    if (completion.kind === 'read') {
      this.#values.set(completion.key, completion.result.value);
      if (plan.reads.every((key) => this.#values.has(key))) this.#commit(plan);
      return;
    }
    const now = this.#kernel.now();
    const result: DtSimTxnResult = {
      txn: completion.txn,
      outcome: completion.outcome,
      latencyNs: now - this.#startedAtNs,
      finishedAtNs: now,
      reads: this.#reads,
      writeKeys: plan.writeKeys,
    };
    const done = this.#done;
    this.#plan = undefined;
    this.#done = undefined;
    this.#record(result);
    done?.(result);
  }

  #armTick(): void {
    const next = this.#session.nextRetryNs();
    if (next === undefined || next >= this.#tickAtNs) return;
    this.#tickAtNs = next;
    this.#kernel.at(Math.max(this.#kernel.now(), Math.ceil(next)), () => {
      if (this.#tickAtNs !== next) return;
      this.#tickAtNs = Number.POSITIVE_INFINITY;
      this.#send(this.#session.tick(this.#kernel.now()));
      this.#drain();
    });
  }
}

function isDtMessage(value: unknown): value is DtMessage {
  return (
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
  );
}
