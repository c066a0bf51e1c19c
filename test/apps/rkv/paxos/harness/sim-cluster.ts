/**
 * Deterministic simulation testing (DST) of RKV's Multi-Paxos, in the manner of FoundationDB's
 * simulator, openraft's and turmoil's (STYLE.md): 3 or 5 real `PaxosReplica`s and closed-loop KV
 * clients run over a simulated network that drops, duplicates, delays and reorders messages and
 * partitions nodes (leader isolation included), while a nemesis crashes and restarts replicas —
 * between handles, or *inside* a storage sync so only part of a handle's writes survive. Every
 * random choice comes from one seeded `Random` (src/random.ts), forked per component, so a seed
 * reproduces a run exactly (`reproduceCommand` prints the command; scripts/rkv-dst.ts runs it).
 *
 * What it runs on: the simulated platform's `EventKernel` (src/platform/sim/event-kernel.ts) as
 * the event queue and clock — the same discrete-event core the ipipe simulator runs on, FIFO at
 * equal timestamps, so a run's order depends on nothing but the seed. The harness uses the
 * kernel's closure path (`at`/`after`); a run is 2–15 thousand events and takes ~20–60 ms
 * (measured on the 2-core dev machine), most of it in the replicas and the message copies, so the
 * typed-event path would buy nothing here. It does not run the replicas inside `SimNode` actors:
 * the replica logic is driven directly, as the ipipe actor on a NIC would drive it.
 *
 * Checked after every event (the replica that handled it):
 *   S1 agreement      every replica applies the same command at a slot (one global slot → command
 *                     map; the first application defines it). Prefix consistency follows with S2.
 *   S2 in order       a replica applies slot s only right after s − 1, or right after a snapshot it
 *                     installed; a restart resumes at its durable snapshot.
 *   S3 one value per ballot and slot — accepts sent with the same ballot for the same slot carry
 *                     the same command (a leader never proposes twice; catches forgotten promises).
 *   S4 durable promises never decrease.
 *   S5 two snapshots of one slot (taken or installed anywhere) are identical, state and sessions.
 *   The replica's own assertion (`PaxosSafetyError`: a chosen slot learned with another value).
 * At the end (partitions healed, every replica restarted, faults off):
 *   L1 a verifier client reads every key through the protocol (liveness: must finish);
 *   L2 every replica catches up to the same slot and holds byte-identical state, equal to a
 *      reference replay of the agreed log (with the same exactly-once rule);
 *   C1 the whole client history (including the verifier's reads) is linearizable (check/);
 *   C2 no acknowledged write is lost: each key's final value comes from a write that no
 *      acknowledged write strictly follows.
 * `invariants: false` (`--clients-only`) skips S1–S5 and L2 and judges a run by C1, C2 and L1
 * alone, which is how dst-catches-bugs.test.ts shows the black-box checker catches bugs by itself.
 */

import {
  type CheckResult,
  checkLinearizability,
  describeCheckResult,
  type KvHistoryOp,
  type KvInput,
  type KvOutput,
  kvModel,
} from '../../../../../src/apps/rkv/check/index.ts';
import {
  type Ballot,
  type ClientId,
  type ClientReply,
  type ClientRequest,
  commandIdentity,
  type KvCommand,
  type KvResult,
  KvStateMachine,
  type LogCommand,
  MemoryPaxosStorage,
  NO_BALLOT,
  type PaxosInput,
  type PaxosOutputs,
  PaxosReplica,
  type PaxosReplicaConfig,
  PaxosSafetyError,
  PaxosSimulatedCrash,
  type PaxosTestingBugs,
  type PeerMessage,
  type ReplicaId,
  type ReplicaStatus,
  type Snapshot,
  clientId as toClientId,
  replicaId as toReplicaId,
} from '../../../../../src/apps/rkv/paxos/index.ts';
import { type EventHandle, EventKernel, NO_EVENT } from '../../../../../src/platform/sim/index.ts';
import { Random } from '../../../../../src/random.ts';

type Msg = PeerMessage<KvCommand, KvResult>;

const MS = 1_000_000;
/** The client that reads every key after healing (its reads are the "final" values of C2). */
const VERIFIER_CLIENT_ID = 1000;

export interface DstOptions {
  readonly seed: number;
  /** 3 or 5; default: drawn from the seed (about one run in three has 5). */
  readonly replicas?: number;
  /** Deliberately broken replica variants (to prove the harness catches bugs). */
  readonly bugs?: PaxosTestingBugs;
  /**
   * Skip the replica-level invariants (S1–S4, L2) and judge the run only by what clients saw
   * (C1, C2, L1) — to show the black-box checks catch bugs on their own. Default true.
   */
  readonly invariants?: boolean;
  /** Receives a line per notable event (crash, partition, leader change, client op). */
  readonly trace?: (line: string) => void;
}

export interface DstStats {
  readonly replicas: number;
  readonly clients: number;
  readonly events: number;
  readonly simulatedMs: number;
  readonly messagesSent: number;
  readonly messagesDropped: number;
  /** Deliveries of a second copy of a message. */
  readonly messagesDuplicated: number;
  /** Replica-to-replica deliveries that arrived before a message sent earlier on the same link. */
  readonly messagesReordered: number;
  readonly opsAcknowledged: number;
  readonly opsUnknown: number;
  readonly crashes: number;
  readonly crashesInsideSync: number;
  readonly partitions: number;
  readonly leaderChanges: number;
  readonly snapshotsInstalled: number;
  readonly finalSlot: number;
}

/**
 * Which check rejected a run:
 *   invariant        a replica-level invariant the harness checks (S1–S5, L2)
 *   safety-error     the replica's own safety assertion (`PaxosSafetyError`)
 *   liveness         the verifier did not finish, or replicas did not converge, after healing (L1)
 *   linearizability  the client history is not linearizable (C1), or the check was inconclusive
 *   lost-write       an acknowledged write is lost (C2)
 *   exception        anything else thrown (a bug in the replica or the harness)
 */
export type DstCheck =
  | 'invariant'
  | 'safety-error'
  | 'liveness'
  | 'linearizability'
  | 'lost-write'
  | 'exception';

export type DstResult =
  | { readonly ok: true; readonly seed: number; readonly stats: DstStats }
  | {
      readonly ok: false;
      readonly seed: number;
      readonly check: DstCheck;
      readonly failure: string;
      readonly stats: DstStats;
    };

/** The work and fault counters a range of runs reports, summed over its seeds. */
export const DST_TOTAL_KEYS = [
  'opsAcknowledged',
  'crashes',
  'crashesInsideSync',
  'partitions',
  'leaderChanges',
  'snapshotsInstalled',
  'messagesDropped',
  'messagesDuplicated',
  'messagesReordered',
] as const;

export type DstTotals = Record<(typeof DST_TOTAL_KEYS)[number], number>;

/** All-zero totals. */
export function emptyDstTotals(): DstTotals {
  return Object.fromEntries(DST_TOTAL_KEYS.map((key) => [key, 0])) as DstTotals;
}

/** Adds one run's counters to `totals`. */
export function addDstStats(totals: DstTotals, stats: DstStats): void {
  for (const key of DST_TOTAL_KEYS) totals[key] += stats[key];
}

/** The one-line command that replays `seed` with a trace. */
export function reproduceCommand(options: Omit<DstOptions, 'trace'>): string {
  const parts = ['npx tsx scripts/rkv-dst.ts', `--seed ${options.seed}`];
  if (options.replicas !== undefined) parts.push(`--replicas ${options.replicas}`);
  if (options.invariants === false) parts.push('--clients-only');
  for (const [bug, on] of Object.entries(options.bugs ?? {})) if (on === true) parts.push(`--bug ${bug}`);
  parts.push('--trace');
  return parts.join(' ');
}

/**
 * C2, no acknowledged write lost: for each final read (an `ok` get by `finalReader`), the value it
 * saw must come from a write (or, for null, a delete or the initial state) that no acknowledged
 * write strictly follows — otherwise that later write was lost. Returns what was lost, or null.
 * Exported for its own test (dst-catches-bugs.test.ts).
 */
export function findLostWrite(history: readonly KvHistoryOp[], finalReader: number): string | null {
  const finals = history.filter((op) => op.clientId === finalReader && op.status === 'ok');
  for (const final of finals) {
    if (final.status !== 'ok' || final.output.op !== 'get' || final.input.op !== 'get') continue;
    const key = final.input.key;
    const value = final.output.value;
    // Scans and gets write nothing.
    const writes = history.filter(
      (op) => op.input.op !== 'scan' && op.input.op !== 'get' && op.input.key === key,
    );
    // A conditional put answered not-written wrote nothing: it follows no write.
    const acknowledged = writes.filter(
      (op) => op.status === 'ok' && !(op.output.op === 'cput' && !op.output.written),
    );
    const returnOf = (op: KvHistoryOp): number =>
      op.status === 'ok' ? op.returnAt : Number.POSITIVE_INFINITY;
    const sources: number[] = writes
      .filter((op) =>
        value === null
          ? op.input.op === 'del'
          : (op.input.op === 'put' || op.input.op === 'cput') && op.input.value === value,
      )
      .map(returnOf);
    if (value === null) sources.push(Number.NEGATIVE_INFINITY); // the initial absent state
    const survives = sources.some((end) => !acknowledged.some((w) => w.callAt > end));
    if (!survives) {
      return (
        `acknowledged write lost on ${key}: the final read saw ${JSON.stringify(value)}, but an ` +
        'acknowledged write strictly followed every write of it'
      );
    }
  }
  return null;
}

/** Runs one seeded simulation and checks it. Never throws for a protocol failure: it reports it. */
export function runDst(options: DstOptions): DstResult {
  const sim = new ClusterSim(options);
  let failure: { readonly check: DstCheck; readonly message: string } | null = null;
  try {
    sim.run();
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const check: DstCheck =
      error instanceof InvariantViolation
        ? error.check
        : error instanceof PaxosSafetyError
          ? 'safety-error'
          : 'exception';
    failure = { check, message };
  }
  failure ??= sim.finalChecks();
  const stats = sim.stats();
  return failure === null
    ? { ok: true, seed: options.seed, stats }
    : { ok: false, seed: options.seed, check: failure.check, failure: failure.message, stats };
}

/**
 * A private deep copy of a message (plain objects, arrays, `Uint8Array`s, primitives — all a
 * Paxos message can hold). Hand-written because `structuredClone` doubled the cost of a run.
 */
function deepCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Uint8Array) return value.slice() as T;
  if (Array.isArray(value)) return value.map(deepCopy) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = deepCopy((value as Record<string, unknown>)[key]);
  return copy as T;
}

/** A broken invariant found by the harness (not by the replica itself). */
class InvariantViolation extends Error {
  override name = 'InvariantViolation';
  readonly check: 'invariant' | 'liveness';
  constructor(message: string, check: 'invariant' | 'liveness' = 'invariant') {
    super(message);
    this.check = check;
  }
}

interface SimNode {
  readonly id: ReplicaId;
  readonly storage: RecordingStorage;
  replica: PaxosReplica<KvCommand, KvResult> | null;
  stateMachine: KvStateMachine | null;
  wake: EventHandle;
  wakeAtNs: number;
  life: number;
  lastApplied: number;
  lastDurablePromised: Ballot;
  wasLeader: boolean;
  group: number;
}

/** What this harness's replicated state machine runs: no conditional puts (RKV's actors have them). */
type HarnessInput = Exclude<KvInput, { readonly op: 'cput' } | { readonly op: 'scan' }>;

interface PendingOp {
  readonly seq: number;
  readonly input: HarnessInput;
  readonly callAt: number;
  readonly startNs: number;
  attempts: number;
}

interface SimClient {
  readonly id: ClientId;
  readonly random: Random;
  readonly verifier: boolean;
  seq: number;
  pending: PendingOp | null;
  target: number;
  retry: EventHandle;
  /** Keys the verifier still has to read. */
  readonly toVerify: string[];
}

/** Memory storage that reports every snapshot saved through it (for S5 and the reference replay). */
class RecordingStorage extends MemoryPaxosStorage<KvCommand, KvResult> {
  readonly #onSnapshot: (snapshot: Snapshot<KvResult>) => void;
  constructor(onSnapshot: (snapshot: Snapshot<KvResult>) => void) {
    super();
    this.#onSnapshot = onSnapshot;
  }
  override saveSnapshot(snapshot: Snapshot<KvResult>): void {
    this.#onSnapshot(snapshot);
    super.saveSnapshot(snapshot);
  }
}

class ClusterSim {
  readonly #seed: number;
  readonly #trace: ((line: string) => void) | undefined;
  readonly #invariants: boolean;
  readonly #kernel = new EventKernel();
  readonly #netRandom: Random;
  readonly #nemesisRandom: Random;
  readonly #nodes: SimNode[] = [];
  readonly #clients: SimClient[] = [];
  readonly #config: Omit<PaxosReplicaConfig, 'replicaId'>;
  readonly #keys: string[];
  readonly #history: KvHistoryOp[] = [];
  /** Strictly increasing stamp for call/return events: exact real-time order for the checker. */
  #historyClock = 0;

  // Network weather.
  #dropRate: number;
  #duplicateRate: number;
  #minDelayNs: number;
  #jitterNs: number;
  #faultsOn = true;

  // Phases.
  readonly #workloadEndNs: number;
  readonly #verifyAtNs: number;
  readonly #deadlineNs: number;
  #verifierDone = false;
  #converged = false;

  // Invariant state.
  readonly #chosen: LogCommand<KvCommand>[] = []; // index = slot
  readonly #acceptsByBallot = new Map<Ballot, Map<number, string>>();
  /** Every snapshot any replica saved (taken or installed), by slot: S5 says one content per slot. */
  readonly #snapshots = new Map<
    number,
    { readonly content: string; readonly snapshot: Snapshot<KvResult> }
  >();

  // Stats.
  #messagesSent = 0;
  #messagesDropped = 0;
  #messagesDuplicated = 0;
  #messagesReordered = 0;
  /** Per directed replica link (from · n + to): send counter, and the highest counter delivered. */
  #linkSent: number[] = [];
  #linkDelivered: number[] = [];
  #crashes = 0;
  #crashesInsideSync = 0;
  #partitions = 0;
  #leaderChanges = 0;
  #snapshotsInstalled = 0;

  constructor(options: DstOptions) {
    this.#seed = options.seed;
    this.#trace = options.trace;
    this.#invariants = options.invariants ?? true;
    const root = new Random(options.seed);
    const params = root.fork('params');
    this.#netRandom = root.fork('network');
    this.#nemesisRandom = root.fork('nemesis');

    const replicaCount = options.replicas ?? (params.chance(0.35) ? 5 : 3);
    const clientCount = params.int(3, 8);
    const keyCount = params.int(1, 5);
    this.#keys = Array.from({ length: keyCount }, (_, i) => `k${i}`);
    this.#dropRate = params.next() * 0.15;
    this.#duplicateRate = params.next() * 0.08;
    this.#minDelayNs = params.int(50_000, 1_000_000);
    this.#jitterNs = params.int(100_000, 4 * MS);
    const snapshotChoices = [5, 12, 30, 1000];
    this.#config = {
      replicaCount,
      heartbeatIntervalNs: 10 * MS,
      electionTimeoutMinNs: 40 * MS,
      electionTimeoutMaxNs: 80 * MS,
      retransmitIntervalNs: 10 * MS,
      snapshotEveryEntries: snapshotChoices[params.int(0, snapshotChoices.length)]!,
      maxBatchEntries: params.chance(0.5) ? 4 : 64,
      ...(options.bugs === undefined ? {} : { unsafeTestingBugs: options.bugs }),
    };
    this.#workloadEndNs = params.int(1000, 2500) * MS;
    this.#verifyAtNs = this.#workloadEndNs + 400 * MS;
    this.#deadlineNs = this.#verifyAtNs + 4000 * MS;

    for (let i = 0; i < replicaCount; i++) {
      const node: SimNode = {
        id: toReplicaId(i),
        storage: new RecordingStorage((snapshot) => this.#onSnapshotSaved(node.id, snapshot)),
        replica: null,
        stateMachine: null,
        wake: NO_EVENT,
        wakeAtNs: Number.POSITIVE_INFINITY,
        life: 0,
        lastApplied: 0,
        lastDurablePromised: NO_BALLOT,
        wasLeader: false,
        group: 0,
      };
      this.#nodes.push(node);
      this.#start(node);
    }
    for (let i = 0; i < clientCount; i++) this.#addClient(i + 1, false, root.fork(`client${i + 1}`));
    this.#log(
      `seed ${this.#seed}: ${replicaCount} replicas, ${clientCount} clients, keys ${keyCount}, drop ${this.#dropRate.toFixed(3)}, ` +
        `dup ${this.#duplicateRate.toFixed(3)}, delay ${this.#minDelayNs}+${this.#jitterNs} ns, snapshot every ${this.#config.snapshotEveryEntries}`,
    );
  }

  #log(line: string): void {
    this.#trace?.(`${(this.#kernel.now() / MS).toFixed(3).padStart(9)} ms  ${line}`);
  }

  // ───────────────────────────── run ─────────────────────────────

  run(): void {
    const kernel = this.#kernel;
    for (const client of this.#clients) {
      kernel.at(client.random.int(0, 20 * MS), () => this.#issue(client));
    }
    kernel.at(this.#nemesisRandom.int(50, 150) * MS, () => this.#nemesis());
    kernel.at(this.#workloadEndNs, () => this.#heal());
    kernel.at(this.#verifyAtNs, () => {
      const verifier = this.#addClient(VERIFIER_CLIENT_ID, true, new Random(this.#seed).fork('verifier'));
      verifier.toVerify.push(...this.#keys);
      this.#issue(verifier);
    });
    kernel.at(this.#verifyAtNs, () => this.#watchConvergence());
    kernel.run({ untilNs: this.#deadlineNs });
    if (!this.#verifierDone) {
      throw new InvariantViolation(
        `liveness: the verifier's reads did not finish within ${(this.#deadlineNs - this.#verifyAtNs) / MS} ms ` +
          `after healing (${this.#describeNodes()})`,
        'liveness',
      );
    }
    if (!this.#converged) {
      throw new InvariantViolation(
        `liveness: replicas did not converge after healing (${this.#describeNodes()})`,
        'liveness',
      );
    }
  }

  #describeNodes(): string {
    return this.#nodes
      .map((node) => {
        const status = node.replica?.status();
        return status === undefined
          ? `r${node.id} down`
          : `r${node.id} ${status.role} applied ${status.appliedThrough} promised ${status.promised}`;
      })
      .join('; ');
  }

  // ───────────────────────────── replicas ─────────────────────────────

  #start(node: SimNode): void {
    node.life++;
    const stateMachine = new KvStateMachine();
    const replica = new PaxosReplica<KvCommand, KvResult>({
      config: { ...this.#config, replicaId: node.id },
      storage: node.storage,
      stateMachine,
      random: new Random(this.#seed).fork(`replica${node.id}/life${node.life}`),
      nowNs: this.#kernel.now(),
    });
    node.replica = replica;
    node.stateMachine = stateMachine;
    node.wasLeader = false;
    // S2: a restarted replica resumes at its durable snapshot.
    const status = replica.status();
    if (this.#invariants && status.appliedThrough !== node.storage.durableSnapshotSlot) {
      throw new InvariantViolation(
        `r${node.id} restarted at slot ${status.appliedThrough}, its durable snapshot is ${node.storage.durableSnapshotSlot}`,
      );
    }
    node.lastApplied = status.appliedThrough;
    this.#schedule(node, replica.wakeAtNs);
  }

  #crash(node: SimNode, why: string): void {
    if (node.replica === null) return;
    this.#crashes++;
    this.#log(`r${node.id} crashes (${why})`);
    node.storage.crash();
    node.replica = null;
    node.stateMachine = null;
    this.#kernel.cancel(node.wake);
    node.wake = NO_EVENT;
    node.wakeAtNs = Number.POSITIVE_INFINITY;
  }

  #restart(node: SimNode): void {
    if (node.replica !== null) return;
    this.#log(`r${node.id} restarts`);
    this.#start(node);
  }

  #schedule(node: SimNode, wakeAtNs: number): void {
    if (wakeAtNs === node.wakeAtNs && node.wake !== NO_EVENT) return;
    this.#kernel.cancel(node.wake);
    node.wakeAtNs = wakeAtNs;
    node.wake = NO_EVENT;
    if (!Number.isFinite(wakeAtNs)) return;
    const at = Math.max(this.#kernel.now(), wakeAtNs);
    node.wake = this.#kernel.at(at, () => {
      node.wake = NO_EVENT;
      node.wakeAtNs = Number.POSITIVE_INFINITY;
      this.#deliver(node, { type: 'tick' });
    });
  }

  /** Runs one input through a replica, then checks invariants and carries out its outputs. */
  #deliver(node: SimNode, input: PaxosInput<KvCommand, KvResult>): void {
    const replica = node.replica;
    if (replica === null) return;
    let outputs: PaxosOutputs<KvCommand, KvResult>;
    try {
      outputs = replica.handle(input, this.#kernel.now());
    } catch (error) {
      if (!(error instanceof PaxosSimulatedCrash)) throw error;
      this.#crashesInsideSync++;
      this.#crash(node, error.message);
      this.#kernel.after(this.#nemesisRandom.int(5, 100) * MS, () => this.#restart(node));
      return;
    }
    this.#checkStep(node, outputs);
    for (const { to, message } of outputs.send) {
      if (this.#invariants) this.#checkAccept(message);
      const target = this.#nodes[to]!;
      const link = node.id * this.#nodes.length + to;
      const sent = (this.#linkSent[link] ?? 0) + 1;
      this.#linkSent[link] = sent;
      this.#transmit(node.group === target.group, message, (copy) => {
        if (sent < (this.#linkDelivered[link] ?? 0)) this.#messagesReordered++;
        else this.#linkDelivered[link] = sent;
        this.#deliver(target, copy);
      });
    }
    for (const reply of outputs.replies) {
      const client = this.#clients.find((c) => c.id === reply.clientId);
      if (client === undefined) continue;
      this.#transmit(true, reply, (copy) => this.#onReply(client, node.id, copy));
    }
    this.#schedule(node, outputs.wakeAtNs);
  }

  /** Sends `message` through the faulty network: maybe dropped, maybe duplicated, delayed. */
  #transmit<T>(connected: boolean, message: T, deliver: (copy: T) => void): void {
    this.#messagesSent++;
    const random = this.#netRandom;
    if (!connected || (this.#faultsOn && random.chance(this.#dropRate))) {
      this.#messagesDropped++;
      return;
    }
    const copies = this.#faultsOn && random.chance(this.#duplicateRate) ? 2 : 1;
    if (copies === 2) this.#messagesDuplicated++;
    for (let i = 0; i < copies; i++) {
      const delay = this.#minDelayNs + random.int(0, this.#jitterNs);
      // A private copy per delivery: a replica that kept or changed what it was sent would be caught.
      const copy = deepCopy(message);
      this.#kernel.after(delay, () => deliver(copy));
    }
  }

  // ───────────────────────────── invariants ─────────────────────────────

  #checkStep(node: SimNode, outputs: PaxosOutputs<KvCommand, KvResult>): void {
    const replica = node.replica!;
    if (!this.#invariants) {
      // Still track the highest applied slot: convergence waits for it.
      for (const entry of outputs.applied) this.#chosen[entry.slot] ??= entry.command;
      if (outputs.installedSnapshotSlot > 0) this.#snapshotsInstalled++;
      this.#trackRole(node, replica.status());
      return;
    }
    if (outputs.installedSnapshotSlot > 0) {
      if (outputs.installedSnapshotSlot <= node.lastApplied) {
        throw new InvariantViolation(
          `r${node.id} installed a snapshot at ${outputs.installedSnapshotSlot}, not beyond its applied ${node.lastApplied}`,
        );
      }
      if (!this.#snapshots.has(outputs.installedSnapshotSlot)) {
        throw new InvariantViolation(
          `r${node.id} installed a snapshot at slot ${outputs.installedSnapshotSlot}, which no replica took`,
        );
      }
      this.#snapshotsInstalled++;
      this.#log(`r${node.id} installs snapshot at slot ${outputs.installedSnapshotSlot}`);
      node.lastApplied = outputs.installedSnapshotSlot;
    }
    for (const entry of outputs.applied) {
      // S2
      if (entry.slot !== node.lastApplied + 1) {
        throw new InvariantViolation(`r${node.id} applied slot ${entry.slot} after slot ${node.lastApplied}`);
      }
      node.lastApplied = entry.slot;
      // S1
      const agreed = this.#chosen[entry.slot];
      if (agreed === undefined) this.#chosen[entry.slot] = entry.command;
      else if (commandIdentity(agreed) !== commandIdentity(entry.command)) {
        throw new InvariantViolation(
          `agreement: r${node.id} applied ${commandIdentity(entry.command)} at slot ${entry.slot}, ` +
            `another replica applied ${commandIdentity(agreed)}`,
        );
      }
    }
    const status = replica.status();
    if (status.appliedThrough !== node.lastApplied) {
      throw new InvariantViolation(
        `r${node.id} reports applied ${status.appliedThrough} but its outputs applied through ${node.lastApplied}`,
      );
    }
    // S4
    const durable = node.storage.durablePromised;
    if (durable < node.lastDurablePromised) {
      throw new InvariantViolation(
        `r${node.id}'s durable promise fell from ${node.lastDurablePromised} to ${durable}`,
      );
    }
    node.lastDurablePromised = durable;
    this.#trackRole(node, status);
  }

  /** Counts and traces leadership changes. */
  #trackRole(node: SimNode, status: ReplicaStatus): void {
    const isLeader = status.role === 'leader';
    if (isLeader && !node.wasLeader) {
      this.#leaderChanges++;
      this.#log(`r${node.id} leads with ballot ${status.ownBallot} (applied ${status.appliedThrough})`);
    } else if (!isLeader && node.wasLeader) this.#log(`r${node.id} steps down`);
    node.wasLeader = isLeader;
  }

  /** S3: one command per (ballot, slot) across every accept ever sent. */
  #checkAccept(message: Msg): void {
    if (message.type !== 'accept') return;
    let slots = this.#acceptsByBallot.get(message.ballot);
    if (slots === undefined) {
      slots = new Map();
      this.#acceptsByBallot.set(message.ballot, slots);
    }
    for (const { slot, command } of message.entries) {
      const identity = commandIdentity(command);
      const earlier = slots.get(slot);
      if (earlier === undefined) slots.set(slot, identity);
      else if (earlier !== identity) {
        throw new InvariantViolation(
          `ballot ${message.ballot} proposed both ${earlier} and ${identity} for slot ${slot}`,
        );
      }
    }
  }

  /** S5: two snapshots of one slot must be identical (state and sessions). */
  #onSnapshotSaved(id: ReplicaId, snapshot: Snapshot<KvResult>): void {
    const sessions = [...snapshot.sessions].sort((a, b) => a.clientId - b.clientId);
    const content = `${Buffer.from(snapshot.state).toString('hex')}|${JSON.stringify(sessions)}`;
    const earlier = this.#snapshots.get(snapshot.lastIncludedSlot);
    if (earlier === undefined) this.#snapshots.set(snapshot.lastIncludedSlot, { content, snapshot });
    else if (earlier.content !== content && this.#invariants) {
      throw new InvariantViolation(
        `r${id} saved a snapshot at slot ${snapshot.lastIncludedSlot} unlike an earlier one`,
      );
    }
  }

  /** The highest slot known applied anywhere (by an applied output or a snapshot). */
  #highestSlot(): number {
    let highest = this.#chosen.length - 1;
    for (const slot of this.#snapshots.keys()) highest = Math.max(highest, slot);
    return highest;
  }

  // ───────────────────────────── clients ─────────────────────────────

  #addClient(id: number, verifier: boolean, random: Random): SimClient {
    const client: SimClient = {
      id: toClientId(id),
      random,
      verifier,
      seq: 0,
      pending: null,
      target: random.int(0, this.#nodes.length),
      retry: NO_EVENT,
      toVerify: [],
    };
    this.#clients.push(client);
    return client;
  }

  #issue(client: SimClient): void {
    let input: HarnessInput;
    if (client.verifier) {
      const key = client.toVerify.shift();
      if (key === undefined) {
        this.#verifierDone = true;
        this.#log('verifier done');
        return;
      }
      input = { op: 'get', key };
    } else {
      if (this.#kernel.now() >= this.#workloadEndNs) return;
      const random = client.random;
      const key = this.#keys[random.int(0, this.#keys.length)]!;
      const roll = random.next();
      input =
        roll < 0.45
          ? { op: 'get', key }
          : roll < 0.85
            ? { op: 'put', key, value: `c${client.id}.${client.seq + 1}` }
            : { op: 'del', key };
    }
    client.seq++;
    client.pending = {
      seq: client.seq,
      input,
      callAt: ++this.#historyClock,
      startNs: this.#kernel.now(),
      attempts: 0,
    };
    this.#sendRequest(client);
  }

  #sendRequest(client: SimClient): void {
    const pending = client.pending;
    if (pending === null) return;
    pending.attempts++;
    const target = this.#nodes[client.target]!;
    const request: ClientRequest<KvCommand> = {
      type: 'request',
      clientId: client.id,
      seq: pending.seq,
      command: pending.input,
    };
    this.#transmit(true, request, (copy) => this.#deliver(target, copy));
    this.#kernel.cancel(client.retry);
    client.retry = this.#kernel.after(30 * MS, () => {
      client.retry = NO_EVENT;
      this.#onRetryTimeout(client);
    });
  }

  #onRetryTimeout(client: SimClient): void {
    const pending = client.pending;
    if (pending === null) return;
    // A workload client gives up after a while: the op's outcome becomes unknown (it may still
    // take effect later — the checker allows that). The verifier never gives up.
    if (!client.verifier && this.#kernel.now() - pending.startNs > 250 * MS) {
      this.#history.push({
        clientId: client.id,
        input: pending.input,
        callAt: pending.callAt,
        status: 'unknown',
      });
      client.pending = null;
      this.#kernel.after(client.random.int(0, 5 * MS), () => this.#issue(client));
      return;
    }
    client.target = (client.target + 1 + client.random.int(0, this.#nodes.length - 1)) % this.#nodes.length;
    this.#sendRequest(client);
  }

  #onReply(client: SimClient, from: ReplicaId, reply: ClientReply<KvResult>): void {
    const pending = client.pending;
    if (pending === null || reply.seq !== pending.seq) return; // stale or duplicate
    if (reply.type === 'redirect') {
      const hint = reply.leaderHint;
      if (hint !== null && hint !== from) {
        client.target = hint;
        this.#kernel.after(MS, () => this.#sendRequest(client));
      }
      return; // no hint: the retry timer moves on
    }
    this.#kernel.cancel(client.retry);
    client.retry = NO_EVENT;
    this.#history.push({
      clientId: client.id,
      input: pending.input,
      callAt: pending.callAt,
      status: 'ok',
      output: reply.result,
      returnAt: ++this.#historyClock,
    });
    client.target = from;
    client.pending = null;
    if (client.verifier) {
      const seen = reply.result.op === 'get' ? JSON.stringify(reply.result.value) : reply.result.op;
      this.#log(`verifier read ${pending.input.key} = ${seen}`);
      this.#issue(client);
    } else this.#kernel.after(client.random.int(0, 4 * MS), () => this.#issue(client));
  }

  // ───────────────────────────── nemesis ─────────────────────────────

  #nemesis(): void {
    if (!this.#faultsOn) return;
    const random = this.#nemesisRandom;
    const roll = random.next();
    const up = this.#nodes.filter((node) => node.replica !== null);
    if (roll < 0.22) {
      this.#partitions++;
      for (const node of this.#nodes) node.group = random.int(0, 2);
      this.#log(`partition ${this.#groupsText()}`);
    } else if (roll < 0.37) {
      const leader = up.find((node) => node.replica!.status().role === 'leader');
      if (leader !== undefined) {
        this.#partitions++;
        for (const node of this.#nodes) node.group = 0;
        leader.group = 1;
        this.#log(`isolate leader r${leader.id}`);
      }
    } else if (roll < 0.55) {
      for (const node of this.#nodes) node.group = 0;
      this.#log('heal partitions');
    } else if (roll < 0.8) {
      const leaderFirst = random.chance(0.4)
        ? up.find((node) => node.replica!.status().role === 'leader')
        : undefined;
      const victim = leaderFirst ?? up[random.int(0, Math.max(1, up.length))];
      if (victim !== undefined) {
        this.#crash(victim, 'nemesis');
        this.#kernel.after(random.int(10, 300) * MS, () => this.#restart(victim));
      }
    } else if (roll < 0.9) {
      const victim = up[random.int(0, Math.max(1, up.length))];
      if (victim !== undefined) {
        const keep = random.int(0, 3);
        victim.storage.armCrashOnSync(keep);
        this.#log(`r${victim.id} will crash inside its next sync, keeping ${keep} record(s)`);
      }
    } else {
      this.#dropRate = random.next() * 0.2;
      this.#duplicateRate = random.next() * 0.1;
      this.#log(`weather: drop ${this.#dropRate.toFixed(3)} dup ${this.#duplicateRate.toFixed(3)}`);
    }
    this.#kernel.after(random.int(20, 150) * MS, () => this.#nemesis());
  }

  #groupsText(): string {
    const groups = [0, 1].map((g) =>
      this.#nodes.filter((node) => node.group === g).map((node) => `r${node.id}`),
    );
    return groups.map((g) => `[${g.join(',')}]`).join(' | ');
  }

  /** End of the fault window: heal the network, restart everyone, stop dropping. */
  #heal(): void {
    this.#faultsOn = false;
    for (const node of this.#nodes) {
      node.group = 0;
      node.storage.disarmCrash();
      this.#restart(node);
    }
    this.#log('faults off: network healed, all replicas up');
  }

  #watchConvergence(): void {
    if (this.#verifierDone) {
      const applied = this.#nodes.map((node) => node.replica?.status().appliedThrough ?? -1);
      const target = this.#highestSlot();
      if (applied.every((slot) => slot === target)) {
        this.#converged = true;
        this.#log(`converged at slot ${target}`);
        this.#kernel.stop();
        return;
      }
    }
    this.#kernel.after(5 * MS, () => this.#watchConvergence());
  }

  // ───────────────────────────── final checks ─────────────────────────────

  /** L2, C1, C2. Returns the failed check, or null. */
  finalChecks(): { readonly check: DstCheck; readonly message: string } | null {
    if (this.#invariants) {
      const divergence = this.#compareStates();
      if (divergence !== null) return { check: 'invariant', message: divergence };
    }
    // C1: linearizability of everything the clients saw.
    const history = [...this.#history];
    for (const client of this.#clients) {
      if (client.pending !== null) {
        const { input, callAt } = client.pending;
        history.push({ clientId: client.id, input, callAt, status: 'unknown' });
      }
    }
    const result: CheckResult<KvInput, KvOutput> = checkLinearizability(kvModel, history, {
      maxStepsPerPartition: 20_000_000,
    });
    if (result.verdict !== 'linearizable') {
      return { check: 'linearizability', message: describeCheckResult(kvModel, result) };
    }

    // C2: no acknowledged write lost.
    const lost = findLostWrite(history, VERIFIER_CLIENT_ID);
    return lost === null ? null : { check: 'lost-write', message: lost };
  }

  /**
   * L2: identical state everywhere, equal to a reference replay of the agreed log; and every
   * snapshot any replica took equals the replay at its slot. A slot no replica was seen applying
   * (it applied it inside a handle that then crashed in its sync, and everyone else installed the
   * snapshot it left) is bridged by that snapshot.
   */
  #compareStates(): string | null {
    const reference = new KvStateMachine();
    let sessions = new Map<number, number>();
    const last = this.#highestSlot();
    for (let slot = 1; slot <= last; slot++) {
      const command = this.#chosen[slot];
      if (command === undefined) {
        let bridge: Snapshot<KvResult> | undefined;
        for (const { snapshot } of this.#snapshots.values()) {
          if (
            snapshot.lastIncludedSlot >= slot &&
            (bridge === undefined || snapshot.lastIncludedSlot < bridge.lastIncludedSlot)
          ) {
            bridge = snapshot;
          }
        }
        if (bridge === undefined) return `the agreed log has a hole at slot ${slot} that no snapshot covers`;
        reference.restore(bridge.state);
        sessions = new Map(bridge.sessions.map((session) => [session.clientId, session.seq]));
        slot = bridge.lastIncludedSlot;
        continue;
      }
      if (command.kind === 'request' && (sessions.get(command.clientId) ?? 0) < command.seq) {
        sessions.set(command.clientId, command.seq);
        reference.apply(command.payload);
      }
      const taken = this.#snapshots.get(slot);
      if (
        taken !== undefined &&
        Buffer.from(taken.snapshot.state).toString('hex') !==
          Buffer.from(reference.snapshot()).toString('hex')
      ) {
        return `the snapshot at slot ${slot} differs from the replay of the agreed log`;
      }
    }
    const expected = Buffer.from(reference.snapshot()).toString('hex');
    for (const node of this.#nodes) {
      const state = node.stateMachine;
      if (state === null) return `r${node.id} is down at the end`;
      if (Buffer.from(state.snapshot()).toString('hex') !== expected) {
        return `r${node.id}'s state differs from the replay of the agreed log`;
      }
    }
    return null;
  }

  stats(): DstStats {
    return {
      replicas: this.#nodes.length,
      clients: this.#clients.filter((c) => !c.verifier).length,
      events: this.#kernel.eventsProcessed,
      simulatedMs: Math.round(this.#kernel.now() / MS),
      messagesSent: this.#messagesSent,
      messagesDropped: this.#messagesDropped,
      messagesDuplicated: this.#messagesDuplicated,
      messagesReordered: this.#messagesReordered,
      opsAcknowledged: this.#history.filter((op) => op.status === 'ok').length,
      opsUnknown: this.#history.filter((op) => op.status === 'unknown').length,
      crashes: this.#crashes,
      crashesInsideSync: this.#crashesInsideSync,
      partitions: this.#partitions,
      leaderChanges: this.#leaderChanges,
      snapshotsInstalled: this.#snapshotsInstalled,
      finalSlot: this.#highestSlot(),
    };
  }
}
