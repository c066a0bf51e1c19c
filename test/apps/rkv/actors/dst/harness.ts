/**
 * Deterministic simulation testing of RKV's consensus actor as deployed: 3 or 5 replicas, each a
 * SimNode running the four RKV actors (consensus with timers, memtable, SSTable reader,
 * compaction), on one SimCluster whose fabric drops, duplicates and reorders (jitter) frames and
 * is partitioned by a nemesis (leader isolation, a random node cut off, a cut pair, heal).
 * Closed-loop clients put, delete and get a few keys through the replica they believe leads, with
 * timeouts and retries (a retried put or delete keeps its clientId and seq: exactly-once; about a
 * quarter of a client's writes are deletes, drawn from a stream of their own, so the put/get draws
 * are as before; a delete's answer says whether the key existed and is checked like a read,
 * except DEL_UNKNOWN — a retry of an applied delete at a replica restarted since the call (its
 * memtable's answers were NIC memory, and re-applying the delete's slot its disk may be ahead of it)
 * or that installed a snapshot since the call; counted, and in `deletesUnknownUnexplained` when
 * neither excuse holds — which counts as indeterminate); on
 * `refused` they follow the leader hint, on a timeout they try the next replica. With `scans`,
 * some reads are one SCAN page of a random range of the keys (a small random limit, so pages end
 * early and name their next key), checked by the KV model as a read of every key of the range the
 * page covers. Optionally the consensus and memtable actors of random replicas are
 * force-migrated NIC↔host mid-run.
 *
 * Per-sender order across migration (option `migrateOrder`): a host actor's messages to an actor
 * moving NIC → host must run in the order sent, though the older ones come through the NIC and the
 * newer ones straight to the host (sim-node.ts #draining; live: LINK_DRAINED). In episodes — drawn
 * during the writes, through each restarted replica's recovery and catch-up, and on every replica
 * from shortly before the clients stop — a replica's consensus actor is moved to the host and its
 * memtable NIC↔host again and again while the consensus sends it applies: an apply run out of slot
 * order leaves an older value of its key (replicas-differ) or a wrong delete answer
 * (delete-answers). Without the simulator's hold about 1 seed in 100 fails; with it, none.
 *
 * Node crash and restart: every replica has a durable log on its host (log-actor.ts). The nemesis
 * crashes one or two random replicas per run (the leader in about half of the crashes) at random
 * times and restarts each after a random downtime, never with more than a minority down at once:
 * the crashed node loses its NIC and host memory (every actor's DMOs, queues, timers); the
 * restarted one recovers from its durable log and SSTables and rejoins as a follower.
 *
 * Laggards (option `laggards`): maxLogEntries is small (LAGGARD_MAX_LOG_ENTRIES) so a replica cut off
 * or down for a while is truncated past and must be brought back by a state transfer, whose
 * snapshots come in chunks of about one item (LAGGARD_CHUNK_BYTES); in about half of those runs a
 * replica is crashed in the middle of fetching one (a chunk staged, not all), at most once a run.
 *
 * Every random choice comes from one seeded `Random` (forked per component), so a seed replays
 * exactly; a failing seed prints `reproduceActorDst(...)`'s command.
 *
 * At the end: heal, let it settle, a verifier client reads every key through the protocol
 * (liveness: it must finish); then
 *   C1  the client history (the verifier's reads included) is linearizable (src/apps/rkv/check);
 *   C2  no acknowledged write is lost (the paxos harness's `findLostWrite`);
 *   R1  every replica that applied the leader's commit point answers every key from its own
 *       memtable / SSTables exactly as the verifier read it (the followers applied the same log).
 *       With `laggards`, first every replica (all are up by then) must, within LAGGARD_SETTLE_NS,
 *       be a voting non-laggard that applied the leader's commit point ('replicas-behind'
 *       otherwise): a replica stuck fetching or installing a snapshot fails the run.
 */

import { TextDecoder, TextEncoder } from 'node:util';
import type { ActorRef } from '../../../../../src/actor/index.ts';
import { type ConsensusView, inspectConsensus } from '../../../../../src/apps/rkv/actors/consensus-actor.ts';
import {
  COND_NX,
  COND_XX,
  DEL_EXISTED,
  DEL_UNKNOWN,
  NO_LEADER,
  type RkvMessage,
  rkvKey,
  rkvKeyIndex,
} from '../../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  deployRkvOnSimCluster,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../../src/apps/rkv/actors/sim-deployment.ts';
import {
  checkLinearizability,
  describeCheckResult,
  type KvHistoryOp,
  type KvInput,
  kvModel,
} from '../../../../../src/apps/rkv/check/index.ts';
import { DmoMemtable } from '../../../../../src/apps/rkv/lsm/dmo-memtable.ts';
import { DmoNumberMap } from '../../../../../src/dmo/index.ts';
import { EventKernel } from '../../../../../src/platform/sim/event-kernel.ts';
import { SimCluster } from '../../../../../src/platform/sim/sim-cluster.ts';
import { Random } from '../../../../../src/random.ts';
import { testTiming } from '../../../../platform/sim/test-timing.ts';
import { findLostWrite } from '../../paxos/harness/sim-cluster.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;

const US = 1_000;
const MS = 1_000_000;
/** The leader's heartbeat period H and the election timeout / lease T. */
const HEARTBEAT_NS = 80 * US;
const ELECTION_TIMEOUT_NS = 300 * US;
/** Clients work for this long, then the nemesis stops, everything heals and settles. */
const WORKLOAD_NS = 4 * MS;
const SETTLE_NS = 2 * MS;
/** The verifier must have read every key within this. */
const VERIFY_NS = 10 * MS;
const CLIENT_TIMEOUT_NS = 200 * US;
const VERIFIER_CLIENT_ID = 1000;
/** A client's writes that are deletes (drawn from the client's own `deletes` stream). */
const DELETE_FRACTION = 0.25;
/** With `conditionals`, the share of puts that are conditional. */
const CONDITIONAL_FRACTION = 0.35;
/** With `scans`, the share of reads that are a SCAN page. */
const SCAN_FRACTION = 0.4;
/** With `scans`, the share of scan pages with a byte bound (`maxBytes` 1 … 159: one pair or two). */
const SCAN_BYTES_FRACTION = 0.3;
/**
 * With `scans`, the memtable's flush limit: a few distinct keys fill it (an overwrite does not grow
 * it), so keys live on the disk, in a frozen memtable in flight and in the active one at once and
 * pages merge all three. At the default 1024 bytes the 2–6 keys never flush.
 */
const SCAN_MEMTABLE_LIMIT_BYTES = 100;
/** How often the memtable check samples every replica's memtables. */
const MEMTABLE_SAMPLE_NS = 20 * US;
/**
 * The longest an active memtable may stay at or over its limit: a flush in flight, then one held
 * by holds taken before its memtable froze (a page or probe round trip each): under 0.4 ms in 40
 * seeds; with every hold stopping every flush (the bug this guards against) up to 2.5 ms.
 */
const MAX_FLUSH_STALL_NS = MS;
/** With `scans`, how often the background scanner sends a page to the leader. */
const SCANNER_INTERVAL_NS = 10 * US;
/** Keys are indices past the pre-loaded data set (there is none): every key starts absent. */
const KEY_BASE = 100;
/** With `laggards`: the log kept for a replica that does not apply it, and the chunk budget. */
export const LAGGARD_MAX_LOG_ENTRIES = 2;
const LAGGARD_CHUNK_BYTES = 40;
/** With `laggards`: how long after the verifier every replica has to be back and caught up. */
const LAGGARD_SETTLE_NS = 10 * MS;
/**
 * With `migrateOrder`: episodes on a random replica begin every ORDER_EPISODE_GAP_* µs of the
 * workload and last ORDER_EPISODE_* µs; a restarted replica's lasts ORDER_CATCH_UP_* µs (its
 * recovery from the durable log, then its catch-up from the leader). Within one, the memtable is
 * kept moving: a move takes under a microsecond (its DMOs are small), and only a host message sent
 * in the microsecond or two after a move to the host ends (while the older ones still cross) can
 * overtake. So the next move starts 0–ORDER_STEP_MAX_US µs after a move to the NIC began, and
 * ORDER_HOST_DWELL_* µs after a move to the host began — a move back to the NIC sooner would send
 * the next applies through the NIC again and close that window. (With a uniform 1–20 µs step,
 * 100 seeds without the simulator's hold saw one apply overtaken, and 300 seeds failed none.)
 */
const ORDER_EPISODE_GAP_MIN_US = 250;
const ORDER_EPISODE_GAP_MAX_US = 700;
const ORDER_EPISODE_MIN_US = 150;
const ORDER_EPISODE_MAX_US = 400;
const ORDER_CATCH_UP_MIN_US = 300;
const ORDER_CATCH_UP_MAX_US = 800;
const ORDER_STEP_MAX_US = 1;
const ORDER_HOST_DWELL_MIN_US = 3;
const ORDER_HOST_DWELL_MAX_US = 10;
/** With `migrateOrder`: the final episode (every replica) begins this long before the clients stop. */
const ORDER_END_MIN_US = 100;
const ORDER_END_MAX_US = 400;

export interface ActorDstOptions {
  readonly seed: number;
  /** 3 or 5; default: drawn from the seed (about one run in four has 5). */
  readonly replicas?: number;
  /** Force-migrate consensus and memtable actors NIC↔host during the run. */
  readonly migrate?: boolean;
  /**
   * Per-sender order across a move to the host (see the header): a replica's consensus actor is
   * moved to the host, then its memtable is shuttled NIC↔host while the consensus sends it apply
   * after apply — in episodes during the writes, and through each restarted replica's recovery and
   * catch-up. A schedule of its own (stream `migrate-order`): the other draws stay as they were.
   */
  readonly migrateOrder?: boolean;
  /** Test-only protocol mutations (UNSAFE_* of consensus-actor.ts). */
  readonly unsafe?: number;
  /** Log entries kept for a replica that does not apply them (default: the actor's). */
  readonly maxLogEntries?: number;
  /** Crash and restart replicas (default true; needs the durable log, which every run has). */
  readonly crashes?: boolean;
  /**
   * Force laggards and state transfers (see the header): maxLogEntries LAGGARD_MAX_LOG_ENTRIES
   * unless `maxLogEntries` is given, small chunks, a crash mid-transfer in about half the runs.
   */
  readonly laggards?: boolean;
  /** Pre-vote before standing (consensus-setup.preVote). */
  readonly preVote?: boolean;
  /**
   * Conditional puts (SET NX / XX): about a third of the puts become one, NX or XX at even odds,
   * drawn from a stream of their own (the other draws stay as they were).
   */
  readonly conditionals?: boolean;
  /**
   * SCAN pages among the reads (about two in five), drawn from a stream of their own (the other
   * draws stay as they were).
   */
  readonly scans?: boolean;
  readonly trace?: (line: string) => void;
}

export interface ActorDstStats {
  replicas: number;
  clients: number;
  opsAcknowledged: number;
  opsUnknown: number;
  refusals: number;
  timeouts: number;
  partitions: number;
  leaderIsolations: number;
  elections: number;
  migrations: number;
  /**
   * With `migrateOrder`: episodes begun, memtable moves to the host made in them (its consensus
   * on the host), and those of the moves that handed requests buffered on the NIC over (the case
   * where a newer host message could overtake them).
   */
  orderEpisodes: number;
  orderMovesToHost: number;
  orderHandOvers: number;
  /** Replicas crashed, and restarted. */
  crashes: number;
  restarts: number;
  /** Restarts that recovered from a non-empty durable log (counted by the consensus actors). */
  recovered: number;
  framesDropped: number;
  framesDuplicated: number;
  laggards: number;
  /** Snapshots installed by laggards, chunks they staged, transfers replicas served. */
  transfers: number;
  transferChunksStaged: number;
  snapshotsServed: number;
  /** Replicas crashed while fetching a snapshot (laggards mode). */
  midTransferCrashes: number;
  /** Pre-vote rounds started (preVote mode; counted by the consensus actors up at the end). */
  preVotes: number;
  duplicatesSkipped: number;
  retransmits: number;
  caughtUp: number;
  answeredFromSession: number;
  /** Deletes acknowledged (existed or not), and those answered DEL_UNKNOWN (a retry of an applied one). */
  deletes: number;
  deletesUnknown: number;
  /**
   * DEL_UNKNOWN answers by a replica that neither restarted nor installed a snapshot since the
   * delete was called: every replica decides and remembers a delete's answer when it applies it
   * (storage-actors.ts "Deletes") — one restarted before the call too, as the delete's slot is above
   * every slot chosen before the call, so above its disk's D — so these must be 0.
   */
  deletesUnknownUnexplained: number;
  /**
   * At the end, the delete answers the replicas' memtables remember (`answers`) for a delete whose
   * client got a known answer — each must equal it (check 'delete-answers') — and those of them
   * held by a replica restarted in the run (which decides deletes again once its disk is behind).
   */
  deleteAnswersHeld: number;
  deleteAnswersHeldRestarted: number;
  /** Conditional puts acknowledged: written, and not written (Redis's nil). */
  conditionalWritten: number;
  conditionalNotWritten: number;
  /** SCAN pages answered, the pairs they held, and those that ended early (named a next key). */
  scans: number;
  scanPairs: number;
  scansCut: number;
  /** The largest number of log records any replica held at the end. */
  maxLogRecords: number;
  /**
   * Sampled every MEMTABLE_SAMPLE_NS during the workload, on every replica that is up: the most
   * bytes its memtables (active and frozen) held, and the longest its active memtable stayed at or
   * over its flush limit (flushes held by scans, probes and counts must not starve: "memtable").
   */
  maxMemtableBytes: number;
  maxFlushStallNs: number;
  events: number;
}

export type ActorDstCheck =
  | 'liveness'
  | 'linearizability'
  | 'lost-write'
  | 'replicas-behind'
  | 'replicas-differ'
  | 'delete-answers'
  | 'memtable'
  | 'exception';

export type ActorDstResult =
  | { readonly ok: true; readonly seed: number; readonly stats: ActorDstStats }
  | {
      readonly ok: false;
      readonly seed: number;
      readonly check: ActorDstCheck;
      readonly failure: string;
      readonly stats: ActorDstStats;
    };

/** The command that replays one run (replay.test.ts reads these variables). */
export function reproduceActorDst(options: Omit<ActorDstOptions, 'trace'>): string {
  const vars = [`RKV_ACTOR_DST_SEED=${options.seed}`];
  if (options.replicas !== undefined) vars.push(`RKV_ACTOR_DST_REPLICAS=${options.replicas}`);
  if (options.migrate === true) vars.push('RKV_ACTOR_DST_MIGRATE=1');
  if (options.migrateOrder === true) vars.push('RKV_ACTOR_DST_MIGRATE_ORDER=1');
  if (options.unsafe !== undefined && options.unsafe !== 0)
    vars.push(`RKV_ACTOR_DST_UNSAFE=${options.unsafe}`);
  if (options.maxLogEntries !== undefined) vars.push(`RKV_ACTOR_DST_MAX_LOG=${options.maxLogEntries}`);
  if (options.crashes === false) vars.push('RKV_ACTOR_DST_CRASHES=0');
  if (options.laggards === true) vars.push('RKV_ACTOR_DST_LAGGARDS=1');
  if (options.preVote === true) vars.push('RKV_ACTOR_DST_PRE_VOTE=1');
  if (options.conditionals === true) vars.push('RKV_ACTOR_DST_CONDITIONALS=1');
  if (options.scans === true) vars.push('RKV_ACTOR_DST_SCANS=1');
  return `${vars.join(' ')} RKV_ACTOR_DST_TRACE=1 npx tsx --test test/apps/rkv/actors/dst/replay.test.ts`;
}

interface PendingOp {
  readonly clientId: number;
  readonly input: KvInput;
  readonly message: RkvMessage;
  readonly callAt: number;
  /** Each replica's snapshot installs when the op was called (a DEL_UNKNOWN's excuse, see stats). */
  readonly installsAtCall: readonly number[];
  /** Each replica's restarts when the op was called (the other excuse). */
  readonly restartsAtCall: readonly number[];
  attempt: number;
  done: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A run's counters before it starts (also the seed-range runner's zero totals). */
export function emptyActorDstStats(replicas: number): ActorDstStats {
  return {
    replicas,
    clients: 0,
    opsAcknowledged: 0,
    opsUnknown: 0,
    refusals: 0,
    timeouts: 0,
    partitions: 0,
    leaderIsolations: 0,
    elections: 0,
    migrations: 0,
    orderEpisodes: 0,
    orderMovesToHost: 0,
    orderHandOvers: 0,
    crashes: 0,
    restarts: 0,
    recovered: 0,
    framesDropped: 0,
    framesDuplicated: 0,
    laggards: 0,
    transfers: 0,
    transferChunksStaged: 0,
    snapshotsServed: 0,
    midTransferCrashes: 0,
    preVotes: 0,
    duplicatesSkipped: 0,
    retransmits: 0,
    caughtUp: 0,
    answeredFromSession: 0,
    deletes: 0,
    conditionalWritten: 0,
    conditionalNotWritten: 0,
    scans: 0,
    scanPairs: 0,
    scansCut: 0,
    maxMemtableBytes: 0,
    maxFlushStallNs: 0,
    deletesUnknown: 0,
    deletesUnknownUnexplained: 0,
    deleteAnswersHeld: 0,
    deleteAnswersHeldRestarted: 0,
    maxLogRecords: 0,
    events: 0,
  };
}

/** Runs one seed; never throws (an exception is a failed run). */
export function runActorDst(options: ActorDstOptions): ActorDstResult {
  const random = new Random(options.seed, 'rkv-actor-dst');
  const replicas = options.replicas ?? (random.fork('size').chance(0.25) ? 5 : 3);
  const trace = options.trace ?? (() => {});
  const stats = emptyActorDstStats(replicas);
  const fail = (check: ActorDstCheck, failure: string): ActorDstResult => ({
    ok: false,
    seed: options.seed,
    check,
    failure,
    stats,
  });
  let deployment: RkvSimDeployment | undefined;
  try {
    const net = random.fork('net');
    const kernel = new EventKernel();
    const cluster = new SimCluster({
      kernel,
      timing: testTiming(),
      nodes: replicas,
      random: net.fork('fabric'),
      network: {
        jitterNs: net.int(0, 20) * US,
        dropProbability: net.int(0, 6) / 100,
        duplicateProbability: net.int(0, 6) / 100,
      },
    });
    deployment = deployRkvOnSimCluster(cluster, {
      baseKeys: 0,
      valueBytes: 16,
      memtableLimitBytes: options.scans === true ? SCAN_MEMTABLE_LIMIT_BYTES : 1024,
      level0Trigger: 3,
      durableLog: true,
      consensus: {
        heartbeatNs: HEARTBEAT_NS,
        electionTimeoutNs: ELECTION_TIMEOUT_NS,
        ...(options.maxLogEntries === undefined
          ? options.laggards === true
            ? { maxLogEntries: LAGGARD_MAX_LOG_ENTRIES }
            : {}
          : { maxLogEntries: options.maxLogEntries }),
        ...(options.laggards === true ? { snapshotChunkBytes: LAGGARD_CHUNK_BYTES } : {}),
        ...(options.preVote === true ? { preVote: true } : {}),
        unsafe: options.unsafe ?? 0,
      },
    });
    const d = deployment;
    const startNs = kernel.now();
    const endNs = startNs + WORKLOAD_NS;
    const keys = random.fork('keys').int(2, 6);
    const history: KvHistoryOp[] = [];
    /** Restarts of each replica so far: a restart loses its memtable's remembered answers. */
    const restarts: number[] = new Array<number>(replicas).fill(0);
    /** "clientId:seq" → existed, for each delete its client got a known answer for. */
    const deleteAnswers = new Map<string, boolean>();

    const view = (r: number): ConsensusView | undefined => {
      if (cluster.isDown(r)) return undefined;
      try {
        const instance = cluster.node(r).instance(d.consensus[r]!.id);
        return inspectConsensus(instance.heap, (name) => instance.root(name));
      } catch {
        return undefined;
      }
    };
    const leaderNow = (): number | undefined => {
      let best: number | undefined;
      let bestBallot = -1;
      for (let r = 0; r < replicas; r++) {
        const v = view(r);
        if (v?.role === 'leader' && v.ballot > bestBallot) {
          best = r;
          bestBallot = v.ballot;
        }
      }
      return best;
    };

    // ---- clients -------------------------------------------------------------------------------
    /** Sends `op` (again) to the replica `client.target`; a timeout or refusal moves on. */
    const clientRandom = random.fork('clients');
    interface Client {
      readonly id: number;
      target: number;
      seq: number;
      readonly random: Random;
      /** This client's share of gets (drawn per client: some mostly read, some mostly write). */
      readonly getFraction: number;
      /** Whether a write is a delete: a stream of its own, so the put/get draws stay as they were. */
      readonly deletes: Random;
      /** Whether a put is conditional (option `conditionals`): a stream of its own as well. */
      readonly conditionals: Random;
      /** Whether a read is a scan page (option `scans`), and its range: a stream of its own. */
      readonly scans: Random;
    }
    const attemptOp = (client: Client, op: PendingOp, stopAt: number, onDone: () => void): void => {
      if (op.done) return;
      if (kernel.now() >= stopAt) return;
      const attempt = ++op.attempt;
      const to = client.target;
      cluster.clientSend(to, d.consensus[to] as Ref, op.message, (_id, _latency, ok, reply) => {
        if (op.done) return;
        const answer = reply as RkvMessage | undefined;
        if (
          ok &&
          answer !== undefined &&
          (answer.type === 'put-ok' ||
            answer.type === 'value' ||
            answer.type === 'del-ok' ||
            answer.type === 'cond-ok' ||
            answer.type === 'scan-page')
        ) {
          op.done = true;
          const returnAt = kernel.now();
          if (answer.type === 'scan-page') {
            stats.scans++;
            stats.scanPairs += answer.pairs.length;
            if (!answer.done) stats.scansCut++;
            history.push({
              clientId: op.clientId,
              input: op.input,
              callAt: op.callAt,
              status: 'ok',
              output: {
                op: 'scan',
                pairs: answer.pairs.map((pair) => [
                  String(rkvKeyIndex(pair.key)),
                  decoder.decode(pair.value),
                ]),
                next: answer.done ? null : String(rkvKeyIndex(answer.next)),
              },
              returnAt,
            });
          } else if (op.input.op === 'cput') {
            const written = answer.type === 'put-ok' || (answer.type === 'cond-ok' && answer.written);
            if (written) stats.conditionalWritten++;
            else stats.conditionalNotWritten++;
            history.push({
              clientId: op.clientId,
              input: op.input,
              callAt: op.callAt,
              status: 'ok',
              output: { op: 'cput', written },
              returnAt,
            });
          } else if (answer.type === 'del-ok') {
            stats.deletes++;
            if (answer.existed === DEL_UNKNOWN) {
              // It took effect (once), but its answer is not known: the checker may place it
              // anywhere after its call, as an op that timed out.
              stats.deletesUnknown++;
              const installed = (d.logs[to]?.installs ?? 0) > (op.installsAtCall[to] ?? 0);
              const restartedSince = (restarts[to] ?? 0) > (op.restartsAtCall[to] ?? 0);
              if (!restartedSince && !installed) {
                stats.deletesUnknownUnexplained++;
                trace(`${kernel.now()} DEL_UNKNOWN from replica ${to}, no restart or install since the call`);
              }
              history.push({ clientId: op.clientId, input: op.input, callAt: op.callAt, status: 'unknown' });
            } else {
              if (op.message.type === 'del')
                deleteAnswers.set(`${op.clientId}:${op.message.seq}`, answer.existed === DEL_EXISTED);
              history.push({
                clientId: op.clientId,
                input: op.input,
                callAt: op.callAt,
                status: 'ok',
                output: { op: 'del', existed: answer.existed === DEL_EXISTED },
                returnAt,
              });
            }
          } else if (answer.type === 'value') {
            history.push({
              clientId: op.clientId,
              input: op.input,
              callAt: op.callAt,
              status: 'ok',
              output: { op: 'get', value: answer.found ? decoder.decode(answer.value) : null },
              returnAt,
            });
          } else {
            history.push({
              clientId: op.clientId,
              input: op.input,
              callAt: op.callAt,
              status: 'ok',
              output: { op: 'put' },
              returnAt,
            });
          }
          stats.opsAcknowledged++;
          trace(
            `${returnAt} client ${op.clientId} ${describe(op.input)} → ${describeAnswer(answer)} at ${to}`,
          );
          onDone();
          return;
        }
        if (attempt !== op.attempt) return;
        stats.refusals++;
        const hint = answer?.type === 'refused' ? answer.leader : NO_LEADER;
        client.target = hint !== NO_LEADER && hint !== to && hint < replicas ? hint : (to + 1) % replicas;
        kernel.after(client.random.int(20, 80) * US, () => attemptOp(client, op, stopAt, onDone));
      });
      kernel.after(CLIENT_TIMEOUT_NS, () => {
        if (op.done || attempt !== op.attempt) return;
        stats.timeouts++;
        client.target = (to + 1) % replicas;
        attemptOp(client, op, stopAt, onDone);
      });
    };
    const clientCount = clientRandom.int(2, 5);
    stats.clients = clientCount;
    const pending: PendingOp[] = [];
    const nextOp = (client: Client): void => {
      if (kernel.now() >= endNs) return;
      const key = String(KEY_BASE + client.random.int(0, keys));
      let input: KvInput;
      let message: RkvMessage;
      const keyBytes = rkvKey(Number(key));
      if (!client.random.chance(client.getFraction)) {
        client.seq++;
        const value = `c${client.id}s${client.seq}`;
        if (client.deletes.chance(DELETE_FRACTION)) {
          input = { op: 'del', key };
          message = { type: 'del', clientId: client.id, seq: client.seq, key: keyBytes };
        } else if (options.conditionals === true && client.conditionals.chance(CONDITIONAL_FRACTION)) {
          const nx = client.conditionals.chance(0.5);
          input = { op: 'cput', key, value, condition: nx ? 'nx' : 'xx' };
          message = {
            type: 'cput',
            clientId: client.id,
            seq: client.seq,
            key: keyBytes,
            value: encoder.encode(value),
            condition: nx ? COND_NX : COND_XX,
          };
        } else {
          input = { op: 'put', key, value };
          message = {
            type: 'put',
            clientId: client.id,
            seq: client.seq,
            key: keyBytes,
            value: encoder.encode(value),
          };
        }
      } else if (options.scans === true && client.scans.chance(SCAN_FRACTION)) {
        const from = KEY_BASE + client.scans.int(0, keys);
        const to = client.scans.chance(0.3) ? undefined : from + client.scans.int(1, keys + 1);
        const limit = client.scans.int(1, 4);
        // Now and then a byte bound of about one or two pairs: pages cut by bytes under faults.
        const maxBytes = client.scans.chance(SCAN_BYTES_FRACTION) ? client.scans.int(1, 160) : 0;
        input = { op: 'scan', start: String(from), end: to === undefined ? null : String(to), limit };
        message = {
          type: 'scan',
          start: rkvKey(from),
          end: to === undefined ? new Uint8Array(0) : rkvKey(to),
          limit,
          maxBytes,
        };
      } else {
        input = { op: 'get', key };
        message = { type: 'get', key: keyBytes };
      }
      const op: PendingOp = {
        clientId: client.id,
        input,
        message,
        callAt: kernel.now(),
        installsAtCall: d.logs.map((log) => log.installs),
        restartsAtCall: [...restarts],
        attempt: 0,
        done: false,
      };
      pending.push(op);
      attemptOp(client, op, endNs + SETTLE_NS, () => {
        kernel.after(client.random.int(20, 120) * US, () => nextOp(client));
      });
    };
    for (let c = 1; c <= clientCount; c++) {
      const client: Client = {
        id: c,
        target: clientRandom.int(0, replicas),
        seq: 0,
        random: clientRandom.fork(`c${c}`),
        // Some clients only read: they stay with a replica as long as it answers (a deposed
        // leader without a lease check would keep answering them).
        getFraction: clientRandom.chance(0.3) ? 1 : 0.3 + clientRandom.next() * 0.6,
        deletes: clientRandom.fork(`d${c}`),
        conditionals: clientRandom.fork(`x${c}`),
        scans: clientRandom.fork(`s${c}`),
      };
      kernel.after(client.random.int(0, 200) * US, () => nextOp(client));
    }

    // ---- nemesis -------------------------------------------------------------------------------
    const nemesis = random.fork('nemesis');
    for (let at = startNs + nemesis.int(200, 800) * US; at < endNs; at += nemesis.int(400, 2000) * US) {
      kernel.at(at, () => {
        const roll = nemesis.next();
        if (roll < 0.3) {
          const leader = leaderNow() ?? nemesis.int(0, replicas);
          cluster.heal();
          cluster.isolate(leader);
          stats.partitions++;
          stats.leaderIsolations++;
          trace(`${kernel.now()} nemesis: isolate leader ${leader}`);
        } else if (roll < 0.5) {
          const node = nemesis.int(0, replicas);
          cluster.heal();
          cluster.isolate(node);
          stats.partitions++;
          trace(`${kernel.now()} nemesis: isolate ${node}`);
        } else if (roll < 0.7) {
          const a = nemesis.int(0, replicas);
          const b = (a + nemesis.int(1, replicas)) % replicas;
          cluster.partition(a, b);
          stats.partitions++;
          trace(`${kernel.now()} nemesis: cut ${a}–${b}`);
        } else {
          cluster.heal();
          trace(`${kernel.now()} nemesis: heal`);
        }
      });
    }
    kernel.at(endNs, () => {
      cluster.heal();
      trace(`${kernel.now()} heal; settle`);
    });

    // ---- migrations ----------------------------------------------------------------------------
    if (options.migrate === true) {
      const mover = random.fork('migrate');
      for (let at = startNs + mover.int(100, 600) * US; at < endNs; at += mover.int(300, 900) * US) {
        kernel.at(at, () => {
          const r = mover.int(0, replicas);
          if (cluster.isDown(r)) return;
          const node = cluster.node(r);
          const ref = mover.chance(0.6) ? d.consensus[r]! : d.memtables[r]!;
          const where = node.domainOf(ref.id);
          if (where === 'migrating') return;
          node.migrate(ref.id, where === 'host' ? 'nic' : 'host');
          stats.migrations++;
          trace(`${kernel.now()} migrate ${ref.name} → ${where === 'host' ? 'nic' : 'host'}`);
        });
      }
    }

    // ---- migrations for per-sender order (option migrateOrder) ----------------------------------
    // A host actor's messages to an actor moving NIC → host reach it by two ways: the older ones
    // through the NIC (sent while it migrated: buffered there, or still crossing), the newer ones
    // straight to the host queue. The runtime must run them in the order sent (sim-node.ts
    // #draining; live: LINK_DRAINED). RKV's consensus actor sends its memtable an apply per chosen
    // slot and the memtable keeps the last one it ran, so applies run out of order leave an older
    // value of a key (actor-cluster.test.ts's lost acknowledged put). Episodes put one replica's
    // consensus on the host and then move its memtable NIC↔host, each move soon after the last
    // ends, so moves end while applies are buffered or crossing and new ones are being sent.
    const minority = Math.floor((replicas - 1) / 2);
    /** Replicas crashed and not yet restarted. */
    const down = new Set<number>();
    const orderMover = options.migrateOrder === true ? random.fork('migrate-order') : undefined;
    /** Memtable moves to the host seen (SimNode.migrations) — counted once each. */
    const orderMovesSeen = new WeakSet<object>();
    const countOrderMoves = (r: number): void => {
      if (cluster.isDown(r)) return;
      const memtableId = d.memtables[r]!.id;
      for (const record of cluster.node(r).migrations) {
        if (record.actor !== memtableId || record.to !== 'host' || orderMovesSeen.has(record)) continue;
        orderMovesSeen.add(record);
        stats.orderMovesToHost++;
        if (record.bufferedRequests > 0) stats.orderHandOvers++;
      }
    };
    /**
     * One episode on replica r until `untilNs`: its consensus to the host (from wherever it is),
     * then its memtable to the other side at each step unless it is still moving (steps: see
     * ORDER_STEP_MAX_US). Ends early if r crashes (a restart begins an episode of its own); two
     * episodes on one replica at once (a restart's and a drawn one) just step more often.
     */
    const orderEpisode = (r: number, untilNs: number, why: string): void => {
      if (orderMover === undefined || cluster.isDown(r)) return;
      const incarnation = restarts[r];
      stats.orderEpisodes++;
      trace(`${kernel.now()} migrate-order: episode on replica ${r} (${why}) until ${untilNs}`);
      const step = (): void => {
        if (cluster.isDown(r) || restarts[r] !== incarnation) return;
        countOrderMoves(r);
        if (kernel.now() >= untilNs) return;
        const node = cluster.node(r);
        const consensus = d.consensus[r]!;
        const memtable = d.memtables[r]!;
        const consensusAt = node.domainOf(consensus.id);
        /** Where the memtable is headed: the host, then it stays a while (see ORDER_STEP_*). */
        let toHost = false;
        if (consensusAt === 'nic') {
          node.migrate(consensus.id, 'host');
          stats.migrations++;
          trace(`${kernel.now()} migrate ${consensus.name} → host (migrate-order)`);
        } else if (consensusAt === 'host') {
          const memtableAt = node.domainOf(memtable.id);
          if (memtableAt !== 'migrating') {
            const to = memtableAt === 'host' ? 'nic' : 'host';
            toHost = to === 'host';
            node.migrate(memtable.id, to);
            stats.migrations++;
            trace(`${kernel.now()} migrate ${memtable.name} → ${to} (migrate-order)`);
          }
        }
        kernel.after(
          toHost
            ? orderMover.int(ORDER_HOST_DWELL_MIN_US, ORDER_HOST_DWELL_MAX_US + 1) * US
            : orderMover.int(0, ORDER_STEP_MAX_US + 1) * US,
          step,
        );
      };
      step();
    };
    if (orderMover !== undefined) {
      for (
        let at = startNs + orderMover.int(100, 500) * US;
        at < endNs;
        at += orderMover.int(ORDER_EPISODE_GAP_MIN_US, ORDER_EPISODE_GAP_MAX_US + 1) * US
      ) {
        const r = orderMover.int(0, replicas);
        const lengthNs = orderMover.int(ORDER_EPISODE_MIN_US, ORDER_EPISODE_MAX_US + 1) * US;
        kernel.at(at, () => orderEpisode(r, Math.min(kernel.now() + lengthNs, endNs), 'writes'));
      }
    }
    if (orderMover !== undefined) {
      // The last writes of each key are the ones a reorder would leave behind for the final checks
      // (an older apply run last is overwritten by the next write of its key, if one comes): from
      // shortly before the clients stop until halfway through the settle, an episode on every replica.
      const at = endNs - orderMover.int(ORDER_END_MIN_US, ORDER_END_MAX_US + 1) * US;
      kernel.at(at, () => {
        for (let r = 0; r < replicas; r++) orderEpisode(r, endNs + SETTLE_NS / 2, 'end');
      });
    }
    /** A replica comes back: with migrateOrder, an episode through its recovery and catch-up. */
    const restarted = (r: number): void => {
      restartReplica(d, r);
      restarts[r] = (restarts[r] ?? 0) + 1;
      down.delete(r);
      stats.restarts++;
      trace(`${kernel.now()} nemesis: restart ${r}`);
      if (orderMover !== undefined) {
        const lengthNs = orderMover.int(ORDER_CATCH_UP_MIN_US, ORDER_CATCH_UP_MAX_US + 1) * US;
        orderEpisode(r, kernel.now() + lengthNs, 'restart');
      }
    };

    // ---- crashes -------------------------------------------------------------------------------
    if (options.crashes !== false) {
      const crasher = random.fork('crash');
      const count = crasher.chance(0.35) ? 2 : 1;
      for (let i = 0; i < count; i++) {
        const at = startNs + crasher.int(200, WORKLOAD_NS / US - 1200) * US;
        const downtimeNs = crasher.int(200, 1200) * US;
        const leaderFirst = crasher.chance(0.5);
        const pick = crasher.int(0, replicas);
        kernel.at(at, () => {
          const leader = leaderNow();
          let r = leaderFirst && leader !== undefined ? leader : pick;
          // Never more than a minority down: skip, or take another replica that is up.
          if (down.size + 1 > minority) return;
          for (let k = 0; down.has(r) && k < replicas; k++) r = (r + 1) % replicas;
          if (down.has(r)) return;
          crashReplica(d, r);
          down.add(r);
          stats.crashes++;
          trace(`${kernel.now()} nemesis: crash ${r}${r === leader ? ' (the leader)' : ''}`);
          kernel.at(Math.min(kernel.now() + downtimeNs, endNs), () => restarted(r));
        });
      }
    }

    if (options.laggards === true && options.crashes !== false) {
      // A crash in the middle of a state transfer: the first replica seen with a chunk staged but
      // not all, in about half the runs (checked every 5 µs of the workload).
      const midCrasher = random.fork('mid-transfer-crash');
      if (midCrasher.chance(0.5)) {
        const downtimeNs = midCrasher.int(200, 800) * US;
        const check = (): void => {
          if (kernel.now() >= endNs || stats.midTransferCrashes > 0) return;
          for (let r = 0; r < replicas; r++) {
            const v = view(r);
            if (v === undefined || !v.transferring || v.transferReceived < 1) continue;
            if (v.transferReceived >= v.transferChunks || down.has(r) || down.size + 1 > minority) continue;
            crashReplica(d, r);
            down.add(r);
            stats.crashes++;
            stats.midTransferCrashes++;
            trace(
              `${kernel.now()} nemesis: crash ${r} mid-transfer (${v.transferReceived}/${v.transferChunks} chunks)`,
            );
            kernel.at(Math.min(kernel.now() + downtimeNs, endNs), () => restarted(r));
            return;
          }
          kernel.after(5 * US, check);
        };
        kernel.after(5 * US, check);
      }
    }

    // ---- memtable bound: sampled during the workload ----------------------------------------
    const memtableLimitBytes = options.scans === true ? SCAN_MEMTABLE_LIMIT_BYTES : 1024;
    const overLimitSince: (number | undefined)[] = Array.from({ length: replicas }, () => undefined);
    let memtableFailure: string | undefined;
    const sampleMemtables = (): void => {
      for (let r = 0; r < replicas; r++) {
        let active = 0;
        let frozen = 0;
        try {
          if (cluster.isDown(r)) throw new Error('down');
          const instance = cluster.node(r).instance(d.memtables[r]!.id);
          const activeRoot = instance.root('active');
          const frozenRoot = instance.root('frozen');
          if (activeRoot === undefined) throw new Error('no memtable yet');
          active = DmoMemtable.open(instance.heap, activeRoot).approximateBytes;
          if (frozenRoot !== undefined) frozen = DmoMemtable.open(instance.heap, frozenRoot).approximateBytes;
        } catch {
          overLimitSince[r] = undefined;
          continue;
        }
        stats.maxMemtableBytes = Math.max(stats.maxMemtableBytes, active + frozen);
        if (active < memtableLimitBytes) {
          overLimitSince[r] = undefined;
          continue;
        }
        const since = overLimitSince[r] ?? kernel.now();
        overLimitSince[r] = since;
        stats.maxFlushStallNs = Math.max(stats.maxFlushStallNs, kernel.now() - since);
        if (memtableFailure === undefined && kernel.now() - since > MAX_FLUSH_STALL_NS)
          memtableFailure =
            `replica ${r}'s active memtable has held ${active} bytes (limit ${memtableLimitBytes}) ` +
            `since ${since} ns, ${(kernel.now() - since) / MS} ms: its flushes are starved`;
      }
      if (kernel.now() < endNs) kernel.after(MEMTABLE_SAMPLE_NS, sampleMemtables);
    };
    kernel.after(MEMTABLE_SAMPLE_NS, sampleMemtables);
    if (options.scans === true) {
      // Scans at the leader every SCANNER_INTERVAL_NS besides the clients' (answers unchecked):
      // their flush holds overlap, which starved flushes before holds had freeze epochs.
      const scanner = (): void => {
        if (kernel.now() >= endNs) return;
        const leader = leaderNow();
        if (leader !== undefined && !cluster.isDown(leader))
          cluster.clientSend(
            leader,
            d.consensus[leader] as Ref,
            { type: 'scan', start: new Uint8Array(0), end: new Uint8Array(0), limit: 2, maxBytes: 0 },
            () => {},
          );
        kernel.after(SCANNER_INTERVAL_NS, scanner);
      };
      kernel.after(SCANNER_INTERVAL_NS, scanner);
    }

    kernel.run({ untilNs: endNs + SETTLE_NS });
    if (orderMover !== undefined) for (let r = 0; r < replicas; r++) countOrderMoves(r);
    if (memtableFailure !== undefined) return fail('memtable', memtableFailure);

    // ---- verify --------------------------------------------------------------------------------
    const finals = new Map<string, string | null>();
    const verifier: Client = {
      id: VERIFIER_CLIENT_ID,
      target: leaderNow() ?? 0,
      seq: 0,
      random: random.fork('verifier'),
      getFraction: 1,
      deletes: random.fork('verifier-deletes'),
      conditionals: random.fork('verifier-conditionals'),
      scans: random.fork('verifier-scans'),
    };
    const verifyEnd = kernel.now() + VERIFY_NS;
    let keyIndex = 0;
    let verified = 0;
    const readNext = (): void => {
      if (keyIndex >= keys) return;
      const key = String(KEY_BASE + keyIndex++);
      const op: PendingOp = {
        clientId: VERIFIER_CLIENT_ID,
        input: { op: 'get', key },
        message: { type: 'get', key: rkvKey(Number(key)) },
        callAt: kernel.now(),
        installsAtCall: d.logs.map((log) => log.installs),
        restartsAtCall: [...restarts],
        attempt: 0,
        done: false,
      };
      attemptOp(verifier, op, verifyEnd, () => {
        verified++;
        if (verified === keys) kernel.stop();
        readNext();
      });
    };
    readNext();
    kernel.run({ untilNs: verifyEnd });
    for (const op of history) {
      if (
        op.clientId === VERIFIER_CLIENT_ID &&
        op.status === 'ok' &&
        op.output.op === 'get' &&
        op.input.op === 'get'
      ) {
        finals.set(op.input.key, op.output.value);
      }
    }
    for (const op of pending) {
      if (op.done) continue;
      stats.opsUnknown++;
      history.push({ clientId: op.clientId, input: op.input, callAt: op.callAt, status: 'unknown' });
    }
    const views = Array.from({ length: replicas }, (_, r) => view(r));

    for (const v of views) {
      if (v === undefined) continue;
      stats.elections += v.elections;
      stats.laggards += v.laggardsMarked;
      stats.transferChunksStaged += v.transferChunksStaged;
      stats.snapshotsServed += v.snapshotsServed;
      stats.preVotes += v.preVotes;
      stats.duplicatesSkipped += v.duplicatesSkipped;
      stats.retransmits += v.retransmits;
      stats.caughtUp += v.caughtUp;
      stats.answeredFromSession += v.answeredFromSession;
      stats.recovered += v.recovered;
      stats.maxLogRecords = Math.max(stats.maxLogRecords, v.logRecords);
    }
    // Installs are counted by the durable logs: they survive the restarts that reset the actors.
    for (const log of d.logs) stats.transfers += log.installs;
    stats.framesDropped = cluster.counters.framesDropped;
    stats.framesDuplicated = cluster.counters.framesDuplicated;
    stats.events = kernel.eventsProcessed;
    if (verified < keys) {
      return fail(
        'liveness',
        `the verifier read ${verified} of ${keys} keys within ${VERIFY_NS / MS} ms after healing ` +
          `(roles: ${views.map((v) => v?.role ?? '?').join(',')})`,
      );
    }
    const check = checkLinearizability(kvModel, history);
    if (check.verdict !== 'linearizable') return fail('linearizability', describeCheckResult(kvModel, check));
    const lost = findLostWrite(history, VERIFIER_CLIENT_ID);
    if (lost !== null) return fail('lost-write', lost);

    // R1: every replica that applied the leader's commit point holds what the verifier read.
    let leader = leaderNow();
    let commit = leader === undefined ? undefined : views[leader]?.commit;
    let finalViews = views;
    if (options.laggards === true) {
      // …and with laggards, every replica must get there: none left behind a transfer.
      const behind = (): string[] => {
        leader = leaderNow();
        finalViews = Array.from({ length: replicas }, (_, r) => view(r));
        commit = leader === undefined ? undefined : finalViews[leader]?.commit;
        const late: string[] = [];
        for (let r = 0; r < replicas; r++) {
          const v = finalViews[r];
          if (v === undefined) late.push(`${r}: down`);
          else if (v.laggard || commit === undefined || v.applied !== commit)
            late.push(
              `${r}: ${v.laggard ? `laggard (${v.transferReceived}/${v.transferChunks} chunks), ` : ''}applied ${v.applied} of ${commit ?? 'no leader'}`,
            );
        }
        return late;
      };
      const settleEnd = kernel.now() + LAGGARD_SETTLE_NS;
      let late = behind();
      while (late.length > 0 && kernel.now() < settleEnd) {
        kernel.run({ untilNs: kernel.now() + 100 * US });
        late = behind();
      }
      if (late.length > 0) {
        return fail(
          'replicas-behind',
          `${LAGGARD_SETTLE_NS / MS} ms after the verifier, not every replica is back: ${late.join('; ')}`,
        );
      }
    }
    for (let r = 0; r < replicas; r++) {
      const v = finalViews[r];
      if (v === undefined || v.laggard || commit === undefined || v.applied < commit) continue;
      for (const [key, want] of finals) {
        let got: RkvMessage | undefined;
        cluster.clientSend(
          r,
          d.memtables[r] as Ref,
          { type: 'get', key: rkvKey(Number(key)) },
          (_i, _l, _ok, reply) => {
            got = reply as RkvMessage;
            kernel.stop();
          },
        );
        kernel.run({ untilNs: kernel.now() + MS });
        const value = got?.type === 'value' ? (got.found ? decoder.decode(got.value) : null) : 'no answer';
        if (value !== want) {
          return fail(
            'replicas-differ',
            `replica ${r} (applied ${v.applied}) has key ${key} = ${value}, the verifier read ${want}`,
          );
        }
      }
    }
    // Every replica decides each delete the same way (storage-actors.ts "Deletes"): what a memtable
    // remembers for a client's delete must be the answer that client got — a replica restarted
    // past a later flush must decide nothing rather than read its disk ahead of the slot.
    const clientIds = new Set<number>();
    for (const name of deleteAnswers.keys()) clientIds.add(Number(name.split(':')[0]));
    for (let r = 0; r < replicas; r++) {
      if (cluster.isDown(r)) continue;
      const instance = cluster.node(r).instance(d.memtables[r]!.id);
      const root = instance.root('answers');
      if (root === undefined) continue;
      const answers = DmoNumberMap.open(instance.heap, root);
      for (const clientId of clientIds) {
        const held = answers.get(clientId);
        if (held === undefined) continue;
        const want = deleteAnswers.get(`${clientId}:${Math.floor(held / 2)}`);
        if (want === undefined) continue;
        stats.deleteAnswersHeld++;
        if ((restarts[r] ?? 0) > 0) stats.deleteAnswersHeldRestarted++;
        if ((held % 2 === DEL_EXISTED) !== want) {
          return fail(
            'delete-answers',
            `replica ${r} (restarted ${restarts[r] ?? 0}×) remembers client ${clientId}'s delete ` +
              `seq ${Math.floor(held / 2)} as ${held % 2 === DEL_EXISTED ? 'existed' : 'absent'}; the client was told the opposite`,
          );
        }
      }
    }
    return { ok: true, seed: options.seed, stats };
  } catch (error) {
    return fail('exception', error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
}

function describe(input: KvInput): string {
  if (input.op === 'scan') return `scan([${input.start}, ${input.end ?? '∞'}), limit ${input.limit})`;
  if (input.op === 'cput') return `put-${input.condition}(${input.key}, ${input.value})`;
  return input.op === 'put' ? `put(${input.key}, ${input.value})` : `${input.op}(${input.key})`;
}

function describeAnswer(answer: RkvMessage): string {
  if (answer.type === 'scan-page')
    return `${answer.pairs.map((pair) => `${rkvKeyIndex(pair.key)}=${decoder.decode(pair.value)}`).join(' ')}${answer.done ? ' done' : ` next ${rkvKeyIndex(answer.next)}`}`;
  if (answer.type === 'value') return answer.found ? decoder.decode(answer.value) : 'null';
  if (answer.type === 'del-ok') return ['absent', 'existed', 'unknown (retry)'][answer.existed] ?? 'del-ok';
  return answer.type;
}
