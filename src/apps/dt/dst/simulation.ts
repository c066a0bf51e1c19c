/**
 * Deterministic simulation testing of DT (the openraft / turmoil / FoundationDB practice, STYLE.md:
 * seeded randomness, injected faults, invariants checked at every quiescent point, a failing seed
 * reproduced exactly), over the same protocol logic the actors host.
 *
 * The world: one coordinator server (the coordinator on its NIC, the logging actor and its disk on
 * its host), `shards` participants, `clients` closed-loop clients, joined by a simulated network.
 * Time is the platform's discrete-event kernel (src/platform/sim/event-kernel.ts: virtual ns, ties
 * fired in scheduling order), and every random choice — latencies, drops, duplicates, crash times
 * and victims, what a crash leaves on the disk, the workload — comes from forks of one seeded
 * `Random`, so a run is a pure function of its seed and options. We use the bare kernel rather
 * than SimNode because the faults are the point here (SimNode models cores and PCIe, not a lossy
 * network or a crashing disk), and every message is still encoded and decoded with the real
 * codec on its way (what a live wire would refuse, the simulation refuses too).
 *
 * Faults, while a phase runs: messages dropped, duplicated, and delayed by a random latency (so
 * reordered); crashes of the coordinator alone (NIC: volatile state lost, the logger survives), of
 * the whole coordinator server (the disk loses, keeps or garbles what was not fsynced), and of
 * participants (timers and messages in flight lost; the table persists — see
 * participant-logic.ts). A crashed node drops what reaches it and restarts after a random downtime.
 *
 * Then the phase quiesces: faults stop, clients stop starting transactions, and the run continues
 * until every transaction finished and no lock stands (or a deadline says a lock is held forever).
 * At each quiescent point the invariants are checked:
 *   - the committed history (every attempt that passed the commit point) is serializable,
 *   - every participant's data is exactly what the committed history says (no committed write lost
 *     across restarts, no uncommitted write visible),
 *   - every transaction a client was told committed is in that history, none it was told aborted is,
 *   - the bank's total balance is unchanged (bank workload),
 *   - no lock is held.
 */

import { EventKernel } from '../../../platform/sim/event-kernel.ts';
import { Random } from '../../../random.ts';
import { type ClientCompletion, DtClientSession } from '../client.ts';
import { type CoordinatorConfig, CoordinatorLogic, type CoordinatorStore } from '../coordinator-logic.ts';
import { DtLogCorruptError } from '../errors.ts';
import { MemoryLogStorage } from '../log-storage.ts';
import {
  initialLoggerState,
  LoggerLogic,
  type LoggerState,
  type LogRecoveryReport,
} from '../logger-logic.ts';
import {
  type CoordinatorInput,
  type DtMessage,
  dtMessages,
  isClientInput,
  isCoordinatorInput,
  isLoggerInput,
  isParticipantInput,
} from '../messages.ts';
import { ParticipantLogic, type ParticipantStore } from '../participant-logic.ts';
import { checkSerializable, describeViolation, type HistoryTxn } from '../serializability.ts';
import {
  type Address,
  addressKey,
  type DtEvent,
  type DtOutput,
  hashShardMap,
  type LockOwner,
  type LoggedWrite,
  MemoryCell,
  type ShardMap,
  txnKey,
} from '../types.ts';
import {
  bankWorkload,
  type DtWorkload,
  decodeBalance,
  fasstWorkload,
  type KeyDistribution,
  type TxnPlan,
} from '../workload.ts';
import type { DtSimulationStores } from './stores.ts';
import { createStores } from './stores.ts';

/** What the coordinator looks like to the simulator (the broken variants wrap one). */
export interface CoordinatorLike {
  start(nonce: number, nowNs: number): DtOutput[];
  handle(message: CoordinatorInput, nowNs: number): DtOutput[];
}

/** Builds a coordinator over a fresh store; the default is `new CoordinatorLogic(store, config)`. */
export type CoordinatorFactory = (store: CoordinatorStore, config: CoordinatorConfig) => CoordinatorLike;

/** The faults a phase injects. */
export interface DtFaultOptions {
  readonly dropProbability: number;
  readonly duplicateProbability: number;
  readonly minLatencyNs: number;
  readonly maxLatencyNs: number;
  /** Crashes per phase are drawn uniformly from 0..maxCrashesPerPhase. */
  readonly maxCrashesPerPhase: number;
  readonly minDowntimeNs: number;
  readonly maxDowntimeNs: number;
}

/** Default faults: lossy, duplicating, reordering, and a few crashes per phase. */
export const DEFAULT_FAULTS: DtFaultOptions = Object.freeze({
  dropProbability: 0.05,
  duplicateProbability: 0.05,
  minLatencyNs: 2_000,
  maxLatencyNs: 60_000,
  maxCrashesPerPhase: 3,
  minDowntimeNs: 200_000,
  maxDowntimeNs: 3_000_000,
});

/** Options of one simulated run. */
export interface DtSimulationOptions {
  readonly seed: number;
  readonly shards?: number;
  readonly clients?: number;
  readonly workload?: 'bank' | 'fasst';
  /** How keys are drawn (default uniform). */
  readonly distribution?: KeyDistribution;
  /** Accounts (bank) or keys (fasst); few keys, much contention. */
  readonly keys?: number;
  /** Quiescent points (each after a phase of faulty load). */
  readonly phases?: number;
  /** Virtual duration of a phase's faulty load. */
  readonly phaseNs?: number;
  readonly faults?: Partial<DtFaultOptions>;
  /** `memory` (Maps) or `dmo` (the actors' DMO-backed stores). */
  readonly stores?: 'memory' | 'dmo';
  /** Checkpoint after this many new log records (small, so runs exercise compaction). */
  readonly logLimitRecords?: number;
  readonly coordinatorFactory?: CoordinatorFactory;
  /** Receives one line per delivered message and fault (debugging a seed). */
  readonly trace?: (line: string) => void;
}

/** Counters of one run. */
export interface DtSimulationStats {
  committed: number;
  clientCommitted: number;
  clientAborted: number;
  abortReasons: Record<string, number>;
  messagesSent: number;
  dropped: number;
  duplicated: number;
  lostToCrash: number;
  coordinatorCrashes: number;
  serverCrashes: number;
  participantCrashes: number;
  tornTails: number;
  checkpoints: number;
  recoveredPending: number;
  quiescentPoints: number;
  virtualNs: number;
}

/** The result of one run: violations (empty when every invariant held) and counters. */
export interface DtSimulationResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violations: readonly string[];
  readonly stats: DtSimulationStats;
  readonly logRecoveries: readonly LogRecoveryReport[];
}

const QUIESCE_LIMIT_NS = 200_000_000;
const QUIESCE_STEP_NS = 250_000;

interface NodeState {
  up: boolean;
  incarnation: number;
}

interface ClientState {
  readonly id: number;
  readonly session: DtClientSession;
  readonly node: NodeState;
  plan: TxnPlan | undefined;
  readonly values: Map<string, { value: Uint8Array | undefined; version: number }>;
  tickAtNs: number;
}

interface CommittedRecord {
  readonly owner: LockOwner;
  readonly writes: readonly LoggedWrite[];
}

/** Runs one seeded simulation and checks the invariants (see the header). Never throws for a violation. */
export function runDtSimulation(options: DtSimulationOptions): DtSimulationResult {
  return new DtWorld(options).run();
}

class DtWorld {
  readonly #options: DtSimulationOptions;
  readonly #faults: DtFaultOptions;
  readonly #kernel = new EventKernel();
  readonly #net: Random;
  readonly #chaos: Random;
  readonly #work: Random;
  readonly #shards: ShardMap;
  readonly #workload: DtWorkload;
  readonly #totalBalance: number | undefined;
  readonly #coordinatorConfig: CoordinatorConfig;
  readonly #leaseNs = 2_000_000;
  readonly #stores: DtSimulationStores;
  readonly #trace: ((line: string) => void) | undefined;

  // nodes
  readonly #coordinatorNode: NodeState = { up: true, incarnation: 0 };
  readonly #loggerNode: NodeState = { up: true, incarnation: 0 };
  readonly #participantNodes: NodeState[] = [];
  #coordinator!: CoordinatorLike;
  #coordinatorStore!: CoordinatorStore;
  #logger!: LoggerLogic;
  readonly #disk = new MemoryLogStorage('dst');
  readonly #participantStores: ParticipantStore[] = [];
  readonly #participants: ParticipantLogic[] = [];
  readonly #clients: ClientState[] = [];

  // the run
  #faultsActive = false;
  #clientsActive = false;
  readonly #violations: string[] = [];
  readonly #committed = new Map<string, CommittedRecord>();
  readonly #requests = new Map<string, { reads: { key: string; version: number }[] }>();
  readonly #ackedCommitted = new Set<string>();
  readonly #ackedAborted = new Set<string>();
  readonly #logRecoveries: LogRecoveryReport[] = [];
  readonly #stats: DtSimulationStats = {
    committed: 0,
    clientCommitted: 0,
    clientAborted: 0,
    abortReasons: {},
    messagesSent: 0,
    dropped: 0,
    duplicated: 0,
    lostToCrash: 0,
    coordinatorCrashes: 0,
    serverCrashes: 0,
    participantCrashes: 0,
    tornTails: 0,
    checkpoints: 0,
    recoveredPending: 0,
    quiescentPoints: 0,
    virtualNs: 0,
  };

  constructor(options: DtSimulationOptions) {
    this.#options = options;
    this.#faults = { ...DEFAULT_FAULTS, ...options.faults };
    const root = new Random(options.seed);
    this.#net = root.fork('net');
    this.#chaos = root.fork('chaos');
    this.#work = root.fork('workload');
    this.#trace = options.trace;
    this.#shards = hashShardMap(options.shards ?? 2);
    const keys = options.keys ?? 8;
    if ((options.workload ?? 'bank') === 'bank') {
      const distribution = options.distribution ?? { kind: 'uniform' };
      const bank = bankWorkload({ accounts: keys, initialBalance: 1000, maxTransfer: 200, distribution });
      this.#workload = bank;
      this.#totalBalance = bank.totalBalance;
    } else {
      this.#workload = fasstWorkload({
        keys,
        valueBytes: 8,
        distribution: options.distribution ?? { kind: 'uniform' },
      });
      this.#totalBalance = undefined;
    }
    this.#coordinatorConfig = {
      shards: this.#shards,
      retryNs: 400_000,
      txnTimeoutNs: 5_000_000,
      logLimitRecords: options.logLimitRecords ?? 8,
      maxValueBytes: 1024,
    };
    this.#stores = createStores(options.stores ?? 'memory');
  }

  run(): DtSimulationResult {
    this.#boot();
    const phases = this.#options.phases ?? 3;
    const phaseNs = this.#options.phaseNs ?? 15_000_000;
    for (let phase = 0; phase < phases && this.#violations.length === 0; phase++) {
      this.#runPhase(phaseNs);
      if (this.#violations.length > 0) break;
      if (!this.#quiesce()) break;
      this.#checkInvariants(`quiescent point ${phase + 1}`);
      this.#stats.quiescentPoints++;
    }
    this.#stats.virtualNs = this.#kernel.now();
    this.#stats.committed = this.#committed.size;
    this.#stores.dispose();
    return {
      seed: this.#options.seed,
      ok: this.#violations.length === 0,
      violations: [...this.#violations],
      stats: this.#stats,
      logRecoveries: this.#logRecoveries,
    };
  }

  // ---- setup -------------------------------------------------------------------------------

  #boot(): void {
    this.#startLogger();
    for (let shard = 0; shard < this.#shards.shardCount; shard++) {
      const store = this.#stores.participantStore(shard);
      this.#participantStores.push(store);
      this.#participantNodes.push({ up: true, incarnation: 0 });
      const logic = this.#participantLogic(shard);
      this.#participants.push(logic);
      // Load this shard's part of the initial data directly (as a deploy script would).
      const items = this.#workload.initialData().filter((item) => this.#shards.shardOf(item.key) === shard);
      logic.handle({ type: 'participant-load', items }, 0);
    }
    this.#startCoordinator();
    const clients = this.#options.clients ?? 4;
    for (let id = 1; id <= clients; id++) {
      this.#clients.push({
        id,
        session: new DtClientSession({ client: id, shards: this.#shards, retryNs: 1_000_000 }),
        node: { up: true, incarnation: 0 },
        plan: undefined,
        values: new Map(),
        tickAtNs: Number.POSITIVE_INFINITY,
      });
    }
  }

  #participantLogic(shard: number): ParticipantLogic {
    return new ParticipantLogic(this.#participantStores[shard]!, {
      shard,
      shards: this.#shards,
      leaseNs: this.#leaseNs,
    });
  }

  #startLogger(): boolean {
    try {
      const report = LoggerLogic.recover(this.#disk, 'refuse-corruption');
      this.#logRecoveries.push(report);
      if (report.outcome === 'torn-tail-discarded') this.#stats.tornTails++;
      this.#logger = new LoggerLogic(
        this.#disk,
        new MemoryCell<LoggerState>(initialLoggerState(report.epoch)),
        {
          groupCommitNs: 20_000,
          recovery: 'refuse-corruption',
        },
      );
      return true;
    } catch (error) {
      if (error instanceof DtLogCorruptError) {
        this.#violation(`the logger refused to start: ${error.message}`);
        return false;
      }
      throw error;
    }
  }

  #startCoordinator(): void {
    this.#coordinatorStore = this.#stores.coordinatorStore();
    const factory =
      this.#options.coordinatorFactory ?? ((store, config) => new CoordinatorLogic(store, config));
    this.#coordinator = factory(this.#coordinatorStore, this.#coordinatorConfig);
    const nonce = this.#chaos.int(1, 2 ** 32);
    this.#process(
      this.#coordinator.start(nonce, this.#kernel.now()),
      { kind: 'coordinator' },
      this.#coordinatorNode,
    );
  }

  // ---- phases ------------------------------------------------------------------------------

  #runPhase(phaseNs: number): void {
    const start = this.#kernel.now();
    this.#faultsActive = true;
    this.#clientsActive = true;
    for (const client of this.#clients) {
      if (!client.session.current) this.#kernel.after(this.#work.int(0, 50_000), () => this.#nextTxn(client));
    }
    const crashes = this.#chaos.int(0, this.#faults.maxCrashesPerPhase + 1);
    for (let i = 0; i < crashes; i++) {
      this.#kernel.at(start + this.#chaos.int(0, phaseNs), () => this.#crash());
    }
    this.#kernel.run({ untilNs: start + phaseNs });
    this.#faultsActive = false;
    this.#clientsActive = false;
  }

  /** Runs until nothing is in flight; false (with a violation) when the deadline passes first. */
  #quiesce(): boolean {
    const deadline = this.#kernel.now() + QUIESCE_LIMIT_NS;
    while (this.#kernel.now() < deadline) {
      if (this.#violations.length > 0) return false;
      if (this.#isQuiescent()) return true;
      this.#kernel.run({ untilNs: Math.min(deadline, this.#kernel.now() + QUIESCE_STEP_NS) });
    }
    if (this.#isQuiescent()) return true;
    const locks: string[] = [];
    this.#participantStores.forEach((store, shard) => {
      for (const key of store.lockedKeys()) {
        const lock = store.get(key)?.lock;
        locks.push(`shard ${shard} ${key} by ${lock ? `${lock.client}:${lock.seq}@${lock.epoch}` : '?'}`);
      }
    });
    const running = this.#coordinatorStore
      .txns()
      .map((txn) => `${txn.client}:${txn.seq}@${txn.epoch} ${txn.phase}`);
    const busyClients = this.#clients.filter((c) => c.session.current).map((c) => c.id);
    this.#violation(
      `not quiescent ${QUIESCE_LIMIT_NS / 1e6} ms after the faults stopped (a lock held forever or a stuck ` +
        `transaction): coordinator ${this.#coordinator && this.#coordinatorStore.meta().status}, ` +
        `locks [${locks.join('; ')}], running [${running.join('; ')}], busy clients [${busyClients.join(', ')}]`,
    );
    return false;
  }

  #isQuiescent(): boolean {
    if (!this.#coordinatorNode.up || !this.#loggerNode.up) return false;
    if (this.#participantNodes.some((node) => !node.up)) return false;
    const meta = this.#coordinatorStore.meta();
    if (meta.status !== 'serving' || this.#coordinatorStore.txnCount > 0) return false;
    if (this.#clients.some((client) => client.session.current !== undefined)) return false;
    return this.#participantStores.every((store) => store.lockedKeys().length === 0);
  }

  // ---- faults ------------------------------------------------------------------------------

  #crash(): void {
    const downtime = this.#chaos.int(this.#faults.minDowntimeNs, this.#faults.maxDowntimeNs + 1);
    const roll = this.#chaos.next();
    if (roll < 0.3) {
      if (!this.#coordinatorNode.up) return;
      this.#stats.coordinatorCrashes++;
      this.#down(this.#coordinatorNode, 'coordinator (NIC)');
      this.#kernel.after(downtime, () => this.#restartCoordinator());
    } else if (roll < 0.6) {
      if (!this.#coordinatorNode.up || !this.#loggerNode.up) return;
      this.#stats.serverCrashes++;
      this.#down(this.#coordinatorNode, 'coordinator server');
      this.#down(this.#loggerNode, 'logger');
      const damage = this.#disk.crash(this.#chaos);
      this.#traceLine(
        `disk crash: ${damage.unsyncedBytes} unsynced byte(s), kept ${damage.keptBytes}, garbled ${damage.garbledBytes}`,
      );
      this.#kernel.after(downtime, () => {
        this.#loggerNode.up = true;
        if (this.#startLogger()) this.#restartCoordinator();
      });
    } else {
      const shard = this.#chaos.int(0, this.#shards.shardCount);
      const node = this.#participantNodes[shard]!;
      if (!node.up) return;
      this.#stats.participantCrashes++;
      this.#down(node, `participant ${shard}`);
      this.#kernel.after(downtime, () => {
        node.up = true;
        this.#traceLine(`participant ${shard} restarts`);
        const logic = this.#participantLogic(shard);
        this.#participants[shard] = logic;
        this.#process(logic.start(this.#kernel.now()), { kind: 'participant', shard }, node);
      });
    }
  }

  #down(node: NodeState, name: string): void {
    node.up = false;
    node.incarnation++; // pending timers of the old incarnation die with it
    this.#traceLine(`crash: ${name}`);
  }

  #restartCoordinator(): void {
    this.#coordinatorNode.up = true;
    this.#traceLine('coordinator restarts');
    this.#stores.releaseCoordinatorStore();
    this.#startCoordinator();
  }

  // ---- the network -------------------------------------------------------------------------

  #send(from: Address, to: Address, message: DtMessage): void {
    this.#stats.messagesSent++;
    if (this.#faultsActive && this.#net.chance(this.#faults.dropProbability)) {
      this.#stats.dropped++;
      this.#traceLine(`drop ${addressKey(from)} -> ${addressKey(to)} ${message.type}`);
      return;
    }
    const copies = this.#faultsActive && this.#net.chance(this.#faults.duplicateProbability) ? 2 : 1;
    if (copies === 2) this.#stats.duplicated++;
    // Through the real codec: a copy the receiver cannot alias, and what the wire would refuse.
    const bytes = dtMessages.encode(message);
    for (let copy = 0; copy < copies; copy++) {
      const latency = this.#net.int(this.#faults.minLatencyNs, this.#faults.maxLatencyNs + 1);
      this.#kernel.after(latency, () => this.#deliver(from, to, dtMessages.decode(bytes)));
    }
  }

  #deliver(from: Address, to: Address, message: DtMessage): void {
    const now = this.#kernel.now();
    const node = this.#nodeOf(to);
    if (!node.up) {
      this.#stats.lostToCrash++;
      return;
    }
    this.#traceLine(`${addressKey(from)} -> ${addressKey(to)} ${describeMessage(message)}`);
    this.#dispatch(to, message, now);
  }

  #nodeOf(address: Address): NodeState {
    switch (address.kind) {
      case 'coordinator':
        return this.#coordinatorNode;
      case 'logger':
        return this.#loggerNode;
      case 'participant':
        return this.#participantNodes[address.shard]!;
      case 'client':
        return this.#clients[address.client - 1]!.node;
    }
  }

  #dispatch(to: Address, message: DtMessage, now: number): void {
    switch (to.kind) {
      case 'coordinator':
        if (isCoordinatorInput(message))
          this.#process(this.#coordinator.handle(message, now), to, this.#coordinatorNode);
        return;
      case 'logger':
        if (isLoggerInput(message)) this.#process(this.#logger.handle(message, now), to, this.#loggerNode);
        return;
      case 'participant':
        if (isParticipantInput(message)) {
          this.#process(
            this.#participants[to.shard]!.handle(message, now),
            to,
            this.#participantNodes[to.shard]!,
          );
        }
        return;
      case 'client': {
        const client = this.#clients[to.client - 1]!;
        if (isClientInput(message)) this.#process(client.session.handle(message, now), to, client.node);
        this.#afterClient(client);
        return;
      }
    }
  }

  #process(outputs: readonly DtOutput[], self: Address, node: NodeState): void {
    for (const output of outputs) {
      switch (output.kind) {
        case 'send':
          this.#send(self, output.to, output.message);
          break;
        case 'timer': {
          const incarnation = node.incarnation;
          this.#kernel.after(Math.max(0, Math.round(output.delayNs)), () => {
            if (node.up && node.incarnation === incarnation)
              this.#dispatch(self, output.message, this.#kernel.now());
          });
          break;
        }
        case 'event':
          this.#observe(output.event);
          break;
      }
    }
  }

  #observe(event: DtEvent): void {
    switch (event.kind) {
      case 'committed': {
        const key = txnKey(event.owner.client, event.owner.seq);
        const known = this.#committed.get(key);
        if (known === undefined) this.#committed.set(key, { owner: event.owner, writes: event.writes });
        else if (known.owner.epoch !== event.owner.epoch) {
          this.#violation(
            `transaction ${key} committed twice, in epochs ${known.owner.epoch} and ${event.owner.epoch}`,
          );
        }
        if (event.recovered) this.#stats.recoveredPending++;
        break;
      }
      case 'checkpoint':
        this.#stats.checkpoints++;
        break;
      default:
        break;
    }
  }

  // ---- clients -----------------------------------------------------------------------------

  #nextTxn(client: ClientState): void {
    if (!this.#clientsActive || client.session.current) return;
    const plan = this.#workload.next(this.#work);
    client.plan = plan;
    client.values.clear();
    client.session.begin();
    const now = this.#kernel.now();
    for (const key of plan.reads) {
      this.#process(client.session.read(key, now), { kind: 'client', client: client.id }, client.node);
    }
    this.#afterClient(client);
  }

  #afterClient(client: ClientState): void {
    const now = this.#kernel.now();
    // Completions can produce completions (a doomed transaction's commit finishes at once), so
    // drain until none is left.
    for (
      let batch = client.session.takeCompletions();
      batch.length > 0;
      batch = client.session.takeCompletions()
    ) {
      for (const completion of batch) this.#complete(client, completion, now);
    }
    this.#armClientTick(client, now);
  }

  #complete(client: ClientState, completion: ClientCompletion, now: number): void {
    const self: Address = { kind: 'client', client: client.id };
    if (completion.kind === 'read') {
      client.values.set(completion.key, {
        value: completion.result.value,
        version: completion.result.version,
      });
      const plan = client.plan;
      if (plan?.reads.every((key) => client.values.has(key))) {
        const values = plan.compute(plan.reads.map((key) => client.values.get(key)?.value));
        plan.writeKeys.forEach((key, i) => {
          client.session.write(key, values[i]!);
        });
        const outputs = client.session.commit(now);
        for (const output of outputs) {
          if (output.kind === 'send' && output.message.type === 'commit-request') {
            this.#requests.set(txnKey(output.message.client, output.message.seq), {
              reads: output.message.reads.map(({ key, version }) => ({ key, version })),
            });
          }
        }
        this.#process(outputs, self, client.node);
      }
    } else {
      const key = txnKey(completion.txn.client, completion.txn.seq);
      if (completion.outcome.outcome === 'committed') {
        this.#stats.clientCommitted++;
        this.#ackedCommitted.add(key);
      } else {
        this.#stats.clientAborted++;
        this.#stats.abortReasons[completion.outcome.reason] =
          (this.#stats.abortReasons[completion.outcome.reason] ?? 0) + 1;
        if (completion.outcome.outcome === 'aborted') this.#ackedAborted.add(key);
        else
          this.#violation(
            `client ${client.id} got "invalid" for a well-formed transaction: ${completion.outcome.reason}`,
          );
      }
      client.plan = undefined;
      this.#kernel.after(this.#work.int(0, 20_000), () => this.#nextTxn(client));
    }
  }

  /** Retransmission timer: one pending tick per client, at its next retry time. */
  #armClientTick(client: ClientState, now: number): void {
    const self: Address = { kind: 'client', client: client.id };
    const next = client.session.nextRetryNs();
    if (next !== undefined && next < client.tickAtNs) {
      client.tickAtNs = next;
      this.#kernel.at(Math.max(now, Math.ceil(next)), () => {
        if (client.tickAtNs !== next) return;
        client.tickAtNs = Number.POSITIVE_INFINITY;
        this.#process(client.session.tick(this.#kernel.now()), self, client.node);
        this.#afterClient(client);
      });
    }
  }

  // ---- invariants --------------------------------------------------------------------------

  #checkInvariants(where: string): void {
    // 1. The committed history is serializable.
    const history: HistoryTxn[] = [];
    for (const [key, record] of this.#committed) {
      const request = this.#requests.get(key);
      if (!request) {
        this.#violation(`${where}: ${key} committed without a commit request from its client`);
        continue;
      }
      history.push({
        id: `${key}@${record.owner.epoch}`,
        reads: request.reads,
        writes: record.writes.map(({ key: written, version }) => ({ key: written, version })),
      });
    }
    const verdict = checkSerializable(history, { contiguousVersions: true });
    if (!verdict.ok) {
      for (const violation of verdict.violations)
        this.#violation(`${where}: ${describeViolation(violation)}`);
    }

    // 2. The data is what the committed history says: the latest committed version of every key.
    const latest = new Map<string, LoggedWrite>();
    for (const record of this.#committed.values()) {
      for (const write of record.writes) {
        const known = latest.get(write.key);
        if (!known || write.version > known.version) latest.set(write.key, write);
      }
    }
    let total = 0;
    this.#participantStores.forEach((store, shard) => {
      for (const { key } of this.#workload.initialData()) {
        if (this.#shards.shardOf(key) !== shard) continue;
        const item = store.get(key);
        const expected = latest.get(key);
        const version = item?.version ?? 0;
        if (expected && (version !== expected.version || !sameBytes(item?.value, expected.value))) {
          this.#violation(
            `${where}: ${key} on shard ${shard} holds version ${version}, but the committed history's last write ` +
              `installed version ${expected.version} (a committed write was lost or an uncommitted one applied)`,
          );
        } else if (!expected && version !== 0) {
          this.#violation(
            `${where}: ${key} holds version ${version} although no committed transaction wrote it`,
          );
        }
        if (item?.lock) this.#violation(`${where}: ${key} is still locked at a quiescent point`);
        total += decodeBalance(item?.value);
      }
    });

    // 3. What clients were told matches the history.
    for (const key of this.#ackedCommitted) {
      if (!this.#committed.has(key)) {
        this.#violation(`${where}: client was told ${key} committed, but it never passed the commit point`);
      }
    }
    for (const key of this.#ackedAborted) {
      if (this.#committed.has(key))
        this.#violation(`${where}: client was told ${key} aborted, but it committed`);
    }

    // 4. The bank's invariant.
    if (this.#totalBalance !== undefined && total !== this.#totalBalance) {
      this.#violation(`${where}: total balance is ${total}, expected ${this.#totalBalance}`);
    }
  }

  #violation(text: string): void {
    this.#violations.push(`t=${this.#kernel.now()}ns ${text}`);
    this.#kernel.stop();
  }

  #traceLine(line: string): void {
    this.#trace?.(`${String(this.#kernel.now()).padStart(12)}ns ${line}`);
  }
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function describeMessage(message: DtMessage): string {
  const parts: string[] = [message.type];
  const record = message as unknown as Record<string, unknown>;
  for (const key of [
    'client',
    'seq',
    'epoch',
    'shard',
    'ok',
    'reason',
    'outcome',
    'key',
    'version',
    'nonce',
  ]) {
    if (key in record) parts.push(`${key}=${String(record[key])}`);
  }
  return parts.join(' ');
}

/**
 * The command that re-runs exactly `options`' simulation with a trace (printed next to a failing
 * seed). Only options the script understands are carried; a custom coordinatorFactory is not.
 */
export function reproduceCommand(options: DtSimulationOptions): string {
  const parts = ['npx tsx scripts/dt-dst.ts', `--seed ${options.seed}`];
  if (options.workload !== undefined) parts.push(`--workload ${options.workload}`);
  if (options.stores !== undefined) parts.push(`--stores ${options.stores}`);
  if (options.distribution?.kind === 'zipf') parts.push(`--zipf ${options.distribution.exponent}`);
  if (options.shards !== undefined) parts.push(`--shards ${options.shards}`);
  if (options.clients !== undefined) parts.push(`--clients ${options.clients}`);
  if (options.keys !== undefined) parts.push(`--keys ${options.keys}`);
  if (options.phases !== undefined) parts.push(`--phases ${options.phases}`);
  if (options.logLimitRecords !== undefined) parts.push(`--log-limit ${options.logLimitRecords}`);
  const faults = options.faults ?? {};
  if (faults.maxCrashesPerPhase !== undefined) parts.push(`--crashes ${faults.maxCrashesPerPhase}`);
  if (faults.dropProbability !== undefined) parts.push(`--drop ${faults.dropProbability}`);
  if (faults.duplicateProbability !== undefined) parts.push(`--duplicate ${faults.duplicateProbability}`);
  parts.push('--trace');
  return parts.join(' ');
}
