/**
 * State transfer for a laggard (consensus-actor.ts "state transfer"), step by step on a SimCluster
 * with durable logs (deterministic scenarios, no randomness):
 *
 *   install:  a replica cut off while more than maxLogEntries puts commit is truncated past; healed,
 *             it becomes a laggard, fetches the snapshot in several chunks, installs it, votes
 *             again, and its store and sessions equal the leader's; then the leader crashes for
 *             good and the other follower crashes and restarts, so the former laggard leads with
 *             the restarted one's promise, commits a put with its accepted, and serves every key:
 *             the whole client history passes the linearizability checker.
 *   crash:    the laggard crashed mid-transfer restarts from its old durable state (it does not
 *             believe it holds the snapshot's point), asks again and installs; crashed after the
 *             install, it recovers the snapshot from its log.
 *   install window: crashed with every chunk staged but its log not switched, or with the log
 *             switched but the consensus actor not yet told, it restarts consistent (one switch
 *             in all, its store and durable sessions as the model's) and catches up.
 *   mutations: UNSAFE_INSTALL_PARTIAL_SNAPSHOT (install on the first chunk) leaves it with keys
 *             missing; UNSAFE_INSTALL_WITHOUT_SESSIONS lets a late duplicate of a put it already
 *             holds take effect again. Leading, it serves reads the linearizability checker
 *             rejects.
 *   duplicates: three copies of a staged chunk injected mid-transfer cost no more requests than
 *             none (a duplicate asks for nothing; before, each started a second request stream).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import {
  UNSAFE_INSTALL_PARTIAL_SNAPSHOT,
  UNSAFE_INSTALL_WITHOUT_SESSIONS,
} from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import {
  checkLinearizability,
  describeCheckResult,
  type KvHistoryOp,
  kvModel,
} from '../../../../src/apps/rkv/check/index.ts';
import {
  askWithin as ask,
  deployElecting,
  leaderOf,
  putMessage as put,
  settle as run,
  consensusView as view,
} from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;
/** Small: 40 puts while the laggard is away are far past it. */
const MAX_LOG_ENTRIES = 8;
/** An item here is 8 + 16 + 1 bytes: two per chunk, so ten keys and two sessions are 6 chunks. */
const CHUNK_BYTES = 64;
const KEYS = 10;

function deploy(unsafe = 0): RkvSimDeployment {
  return deployElecting(3, {
    durableLog: true,
    // Small: the puts flush the memtables to SSTables, so the store is memtable and disk.
    memtableLimitBytes: 256,
    consensus: { maxLogEntries: MAX_LOG_ENTRIES, snapshotChunkBytes: CHUNK_BYTES, unsafe },
  });
}

/** A put through replica `at`'s consensus actor, retried (same clientId and seq) until acknowledged. */
function putAcknowledged(
  d: RkvSimDeployment,
  at: number,
  clientId: number,
  seq: number,
  key: number,
  value: number,
): void {
  for (let attempt = 0; attempt < 20; attempt++) {
    if (ask(d, at, d.consensus[at] as Ref, put(clientId, seq, key, value), 300 * US)?.type === 'put-ok')
      return;
  }
  assert.fail(
    `put(${key}, ${value}) by client ${clientId} seq ${seq} at replica ${at} was never acknowledged`,
  );
}

/** What replica r's own store (memtable, then SSTables) holds for each key: null when absent. */
function storeOf(d: RkvSimDeployment, r: number): (number | null)[] {
  const values: (number | null)[] = [];
  for (let key = 0; key < KEYS + 2; key++) {
    const answer = ask(d, r, d.memtables[r] as Ref, { type: 'get', key: rkvKey(key) });
    assert.equal(answer?.type, 'value', `replica ${r} answered key ${key}`);
    values.push(answer?.type === 'value' && answer.found ? (answer.value[0] ?? -1) : null);
  }
  return values;
}

interface Scenario {
  readonly d: RkvSimDeployment;
  readonly leader: number;
  readonly laggard: number;
  readonly other: number;
  /** key → the last value written (null: never written). */
  readonly model: (number | null)[];
  /** clientId → its last seq. */
  readonly sessions: Map<number, number>;
  /** Every acknowledged put so far, as the linearizability checker reads a history. */
  readonly history: KvHistoryOp[];
  /** A put through replica `at`, retried until acknowledged, recorded in `history`. */
  readonly putOk: (at: number, clientId: number, seq: number, key: number, value: number) => void;
}

/**
 * Three replicas; a few puts everyone applies; the laggard-to-be isolated while 4 × KEYS puts by
 * two clients commit (far past maxLogEntries: the leader truncates past it); then healed.
 */
function cutOffAndHeal(unsafe = 0): Scenario {
  const d = deploy(unsafe);
  const leader = leaderOf(d);
  const laggard = (leader + 1) % 3;
  const other = (leader + 2) % 3;
  const model: (number | null)[] = Array.from({ length: KEYS + 2 }, () => null);
  const sessions = new Map<number, number>();
  const history: KvHistoryOp[] = [];
  const putOk = (at: number, clientId: number, seq: number, key: number, value: number): void => {
    const callAt = d.cluster.kernel.now();
    putAcknowledged(d, at, clientId, seq, key, value);
    history.push({
      clientId,
      input: { op: 'put', key: String(key), value: String(value) },
      callAt,
      status: 'ok',
      output: { op: 'put' },
      returnAt: d.cluster.kernel.now(),
    });
  };
  let value = 1;
  const write = (clientId: number, key: number): void => {
    const seq = (sessions.get(clientId) ?? 0) + 1;
    putOk(leader, clientId, seq, key, value);
    sessions.set(clientId, seq);
    model[key] = value;
    value = (value % 250) + 1;
  };
  for (let key = 0; key < 3; key++) write(1, key);
  run(d, 200 * US);
  const before = view(d, laggard).applied;
  assert.ok(before >= 3, `the laggard-to-be applied the first puts (applied ${before})`);
  d.cluster.isolate(laggard);
  for (let i = 0; i < 4 * KEYS; i++) write(1 + (i % 2), (i * 7) % KEYS);
  run(d, 200 * US);
  const atLeader = view(d, leader);
  assert.ok(atLeader.laggardsMarked >= 1, 'the leader marked the cut-off replica a laggard');
  assert.ok(
    atLeader.truncated > view(d, laggard).applied,
    `the leader truncated past it (truncated ${atLeader.truncated}, its applied ${view(d, laggard).applied})`,
  );
  d.cluster.heal();
  return { d, leader, laggard, other, model, sessions, history, putOk };
}

/** Steps until the laggard installed a snapshot (or `limitNs`); returns what it saw on the way. */
function untilInstalled(s: Scenario, limitNs = 5 * MS): { sawLaggard: boolean; chunks: number } {
  let sawLaggard = false;
  let chunks = 0;
  for (let t = 0; t < limitNs && view(s.d, s.laggard).transfers === 0; t += 5 * US) {
    run(s.d, 5 * US);
    const seen = view(s.d, s.laggard);
    sawLaggard ||= seen.laggard;
    chunks = Math.max(chunks, seen.transferChunks);
  }
  return { sawLaggard, chunks };
}

/**
 * After the install: the leader crashes for good and so does the other follower, which restarts
 * cut off a while later (the former laggard, alone meanwhile, stood at ever higher rounds), so the
 * former laggard leads with the restarted replica's promise; then a put (which needs that
 * replica's accepted too) and a lease read of every key through the former laggard, all in one
 * client history.
 */
function leadWithFormerLaggard(s: Scenario): { newLeader: number; history: KvHistoryOp[] } {
  const { d, laggard } = s;
  run(d, 500 * US);
  const leader = leaderOf(d);
  assert.notEqual(leader, laggard, 'the scenario crashes a leader other than the former laggard');
  const other = 3 - leader - laggard;
  assert.equal(view(d, laggard).applied, view(d, leader).commit, 'the former laggard caught up');
  crashReplica(d, leader);
  crashReplica(d, other);
  // Alone, the former laggard stands (again and again, one round higher each time).
  for (let t = 0; t < 2 * MS && view(d, laggard).role !== 'candidate'; t += 10 * US) run(d, 10 * US);
  assert.equal(view(d, laggard).role, 'candidate', 'the former laggard stands');
  run(d, MS);
  // The other one restarts cut off (it recovers its log and stands in vain at lower rounds), then
  // rejoins: the former laggard's higher ballot wins its promise.
  restartReplica(d, other);
  d.cluster.isolate(other);
  run(d, 800 * US);
  d.cluster.heal();
  let newLeader = -1;
  for (let t = 0; t < 5 * MS && newLeader < 0; t += 10 * US) {
    run(d, 10 * US);
    for (const r of [laggard, other])
      if (!view(d, r).recovering && view(d, r).role === 'leader') newLeader = r;
  }
  const history = [...s.history];
  if (newLeader < 0) return { newLeader, history };
  s.putOk(newLeader, 3, 1, KEYS + 1, 99);
  // The fabric delivers a late duplicate of client 2's first put (its key was overwritten since):
  // the sessions the snapshot carried must make it a no-op.
  const first = s.history.find((op) => op.clientId === 2);
  assert.ok(first !== undefined && first.input.op === 'put');
  const duplicate = put(2, 1, Number(first.input.key), Number(first.input.value));
  d.cluster.clientSend(newLeader, d.consensus[newLeader] as Ref, duplicate, () => {});
  run(d, 300 * US);
  for (let key = 0; key < KEYS + 2; key++) {
    const callAt = d.cluster.kernel.now();
    let answer: RkvMessage | undefined;
    for (let attempt = 0; attempt < 20 && answer?.type !== 'value'; attempt++) {
      answer = ask(d, newLeader, d.consensus[newLeader] as Ref, { type: 'get', key: rkvKey(key) }, 300 * US);
    }
    assert.equal(answer?.type, 'value', `the new leader answered key ${key}`);
    if (answer?.type !== 'value') continue;
    history.push({
      clientId: 9,
      input: { op: 'get', key: String(key) },
      callAt,
      status: 'ok',
      output: { op: 'get', value: answer.found ? String(answer.value[0]) : null },
      returnAt: d.cluster.kernel.now(),
    });
  }
  return { newLeader, history: [...s.history, ...history.slice(s.history.length)] };
}

test('a laggard is brought back by a chunked state transfer, votes again and holds the leader’s state', () => {
  const s = cutOffAndHeal();
  const { d, laggard } = s;
  const { sawLaggard, chunks } = untilInstalled(s);
  assert.ok(sawLaggard, 'the healed replica learned it was truncated past (a laggard)');
  assert.ok(chunks >= 3, `the snapshot came in several chunks (${chunks})`);
  const installed = view(d, laggard);
  assert.equal(installed.transfers, 1, 'one snapshot installed');
  assert.equal(installed.laggard, false, 'no longer a laggard');
  assert.ok(view(d, s.leader).snapshotsServed + view(d, s.other).snapshotsServed >= 1, 'a peer served it');
  run(d, 500 * US);
  // The rejoining replica may have deposed the leader with its higher round (no pre-vote): the
  // leader is whoever leads now.
  const leader = leaderOf(d);
  assert.equal(view(d, laggard).applied, view(d, leader).commit, 'it caught up with the leader');
  // Its store equals the leader's and the model's, key by key (memtable and SSTables).
  assert.deepEqual(storeOf(d, laggard), s.model, 'the former laggard’s store');
  assert.deepEqual(storeOf(d, leader), s.model, 'the leader’s store');
  // The sessions came with the snapshot: its durable log switched once and holds them.
  const log = d.logs[laggard];
  assert.ok(log !== undefined);
  assert.equal(log.installs, 1, 'its durable log switched to the snapshot once');
  const durableSessions = new Map(log.read().sessions.map((x) => [x.clientId, x.seq]));
  for (const [clientId, seq] of s.sessions)
    assert.equal(durableSessions.get(clientId), seq, `session ${clientId}`);

  const { newLeader, history } = leadWithFormerLaggard(s);
  assert.equal(newLeader, laggard, 'the former laggard leads, with the restarted replica’s promise');
  s.model[KEYS + 1] = 99;
  assert.ok(view(d, laggard).applied > view(d, laggard).truncated, 'it applied the new put');
  const check = checkLinearizability(kvModel, history);
  assert.equal(check.verdict, 'linearizable', describeCheckResult(kvModel, check));
  // A retried put of a session the snapshot carried is recognised as done (sessions installed).
  const answeredBefore = view(d, laggard).answeredFromSession;
  const [client, lastSeq] = [...s.sessions][0] as [number, number];
  assert.equal(ask(d, laggard, d.consensus[laggard] as Ref, put(client, lastSeq, 0, 200))?.type, 'put-ok');
  assert.equal(
    view(d, laggard).answeredFromSession,
    answeredBefore + 1,
    'answered from the installed session',
  );
  run(d, 300 * US);
  assert.deepEqual(storeOf(d, laggard), s.model, 'after the leader change');
});

test('a laggard crashed mid-transfer recovers its old state, asks again, and recovers the snapshot after the install', () => {
  const s = cutOffAndHeal();
  const { d, laggard } = s;
  const oldApplied = view(d, laggard).applied;
  // Crash it with some chunks staged, before its log switched.
  let crashed = false;
  for (let t = 0; t < 5 * MS && !crashed; t += US) {
    run(d, US);
    const seen = view(d, laggard);
    assert.equal(seen.transfers, 0, 'it installed before the crash point');
    if (seen.transferring && seen.transferReceived >= 2 && seen.transferReceived < seen.transferChunks) {
      crashReplica(d, laggard);
      crashed = true;
    }
  }
  assert.ok(crashed, 'the crash landed mid-transfer');
  const log = d.logs[laggard];
  assert.ok(log !== undefined);
  assert.equal(log.installs, 0, 'its durable log never switched');
  assert.ok(log.truncated <= oldApplied, 'its durable truncation point is still its old one');
  restartReplica(d, laggard);
  for (let t = 0; t < MS && view(d, laggard).recovering; t += 5 * US) run(d, 5 * US);
  const recovered = view(d, laggard);
  assert.equal(recovered.recovering, false);
  assert.ok(
    recovered.applied <= oldApplied,
    `restarted, it claims no more than it held before the transfer (applied ${recovered.applied}, before ${oldApplied})`,
  );
  untilInstalled(s);
  assert.equal(view(d, laggard).transfers, 1, 'the restarted replica fetched and installed a snapshot');
  run(d, 500 * US);
  assert.deepEqual(storeOf(d, laggard), s.model, 'after the install');
  // Crashed again after the install: its log holds the snapshot, the rebuilt memtable has it all.
  crashReplica(d, laggard);
  restartReplica(d, laggard);
  run(d, MS);
  const again = view(d, laggard);
  assert.equal(again.laggard, false, 'it recovered the snapshot, not the old state');
  // (The actor's counters restart with it; its durable log's do not.)
  assert.equal(log.installs, 1, 'no second transfer was needed');
  assert.equal(again.applied, view(d, leaderOf(d)).commit);
  assert.deepEqual(storeOf(d, laggard), s.model, 'after the restart');
});

for (const [name, unsafe, what] of [
  [
    'UNSAFE_INSTALL_PARTIAL_SNAPSHOT',
    UNSAFE_INSTALL_PARTIAL_SNAPSHOT,
    'reads of the keys the install missed',
  ],
  ['UNSAFE_INSTALL_WITHOUT_SESSIONS', UNSAFE_INSTALL_WITHOUT_SESSIONS, 'the duplicate put applied again'],
] as const) {
  test(`mutation ${name}: the linearizability checker catches the broken install`, (t) => {
    const s = cutOffAndHeal(unsafe);
    untilInstalled(s);
    assert.equal(view(s.d, s.laggard).transfers, 1, 'it installed');
    const { newLeader, history } = leadWithFormerLaggard(s);
    assert.equal(newLeader, s.laggard, 'the former laggard leads');
    const check = checkLinearizability(kvModel, history);
    t.diagnostic(describeCheckResult(kvModel, check));
    assert.equal(check.verdict, 'not-linearizable', `the checker should reject ${what}`);
  });
}

for (const [window, inWindow] of [
  [
    'all chunks staged, the log not switched yet',
    (s: Scenario): boolean => {
      const seen = view(s.d, s.laggard);
      return seen.transferring && seen.transferChunks > 0 && seen.transferReceived === seen.transferChunks;
    },
  ],
  [
    'the log switched, the consensus actor not told yet',
    (s: Scenario): boolean =>
      (s.d.logs[s.laggard]?.installs ?? 0) === 1 && view(s.d, s.laggard).transfers === 0,
  ],
] as const) {
  test(`a laggard crashed in the install window (${window}) recovers a consistent state and catches up`, () => {
    const s = cutOffAndHeal();
    const { d, laggard } = s;
    // Step finely (250 ns) to land inside the window: the install takes a few µs per chunk.
    let crashed = false;
    for (let t = 0; t < 5 * MS && !crashed && view(d, laggard).transfers === 0; t += 250) {
      run(d, 250);
      if (inWindow(s)) {
        crashReplica(d, laggard);
        crashed = true;
      }
    }
    assert.ok(crashed, `the crash landed in the window: ${window}`);
    const installsAtCrash = d.logs[laggard]?.installs ?? 0;
    run(d, 300 * US);
    restartReplica(d, laggard);
    for (let t = 0; t < 5 * MS && (d.logs[laggard]?.installs ?? 0) === 0; t += 50 * US) run(d, 50 * US);
    run(d, MS);
    const back = view(d, laggard);
    assert.equal(d.logs[laggard]?.installs, 1, `one switch in all (${installsAtCrash} before the crash)`);
    assert.equal(back.laggard, false, 'back to voting');
    assert.equal(back.applied, view(d, leaderOf(d)).commit, 'caught up');
    assert.deepEqual(storeOf(d, laggard), s.model, 'its store equals the model');
    const durable = new Map(d.logs[laggard]?.read().sessions.map((x) => [x.clientId, x.seq]));
    for (const [clientId, seq] of s.sessions) assert.equal(durable.get(clientId), seq, `session ${clientId}`);
  });
}

test('a duplicate of a staged chunk asks for nothing: no second request stream', () => {
  /** Requests the senders were sent during one transfer, with `duplicates` copies of chunk 0 injected. */
  const requestsFor = (duplicates: number): { requests: number; chunks: number } => {
    const s = cutOffAndHeal();
    const { d, laggard } = s;
    const sent = (): number => view(d, s.leader).snapshotRequests + view(d, s.other).snapshotRequests;
    const before = sent();
    for (let t = 0; t < 5 * MS && view(d, laggard).transferReceived === 0; t += US) run(d, US);
    const fetching = view(d, laggard);
    assert.ok(fetching.transferring && fetching.transferReceived >= 1, 'chunk 0 staged');
    const sender = view(d, s.leader).snapshotRequests > before ? s.leader : s.other;
    const log = d.logs[sender];
    assert.ok(log !== undefined);
    const slot = log.checkpointSlots.at(-1) ?? 0;
    const checkpoint = log.checkpoint(slot, 0, CHUNK_BYTES);
    assert.ok(checkpoint !== undefined && checkpoint.chunks.length === fetching.transferChunks);
    const chunk = checkpoint.chunks[0] as (typeof checkpoint.chunks)[number];
    for (let i = 0; i < duplicates; i++) {
      d.cluster.clientSend(
        laggard,
        d.consensus[laggard] as Ref,
        {
          type: 'snapshot-chunk',
          from: sender,
          slot,
          chunk: 0,
          chunks: checkpoint.chunks.length,
          items: [...chunk.items],
          sessions: [...chunk.sessions],
        },
        () => {},
      );
    }
    untilInstalled(s);
    assert.equal(view(d, laggard).transfers, 1, 'it installed');
    return { requests: sent() - before, chunks: checkpoint.chunks.length };
  };
  const plain = requestsFor(0);
  const duplicated = requestsFor(3);
  assert.ok(
    duplicated.requests <= plain.requests + 1,
    `requests with 3 duplicates: ${duplicated.requests}, without: ${plain.requests} (${plain.chunks} chunks)`,
  );
});
