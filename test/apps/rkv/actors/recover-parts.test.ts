/**
 * Recovery in parts and bounded bursts (log-actor.ts `recoverPart`, consensus-actor.ts "bounded
 * bursts"). On a live node one handler run's outputs cross the NIC↔host ring as one frame of at
 * most 1 MiB − 8 bytes, so a durable state of any size must come back in parts and the memtable's
 * rebuild must go in slices. Here:
 *   cut:      a random durable state (seeded) cut at a budget: the parts, in order, are the state;
 *             each is at most the budget or one item; a part past the last is undefined.
 *   restart:  a replica with a ~340 KB state (7000-byte values) crashes and restarts; it installs
 *             many `recover` parts and its memtable holds every value the leader serves.
 *   install:  a laggard brought back by a state transfer of that state hands the chunks to its log
 *             and rebuilds its memtable over several handler runs (`resume`s), and holds every value.
 *   flush:    a frozen memtable over MAX_FLUSH_PIECE_BYTES goes to the compaction actor in pieces
 *             (several level-0 tables), every value reads back, and the next flush still happens.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { RKV_BURST_BYTES } from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import { recoverPart } from '../../../../src/apps/rkv/actors/log-actor.ts';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import {
  type DurableEntry,
  type DurableLogState,
  SNAPSHOT_SESSION_BYTES,
  snapshotItemBytes,
} from '../../../../src/apps/rkv/actors/sim-log.ts';
import { MAX_FLUSH_PIECE_BYTES } from '../../../../src/apps/rkv/actors/storage-actors.ts';
import { Random } from '../../../../src/random.ts';
import {
  askWithin as ask,
  deployElecting,
  leaderOf,
  settle as run,
  consensusView as view,
} from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`rkv recover parts seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

test('recoverPart cuts a durable state into parts that are, in order, the state, each within the budget', () => {
  const stream = new Random(seed, 'recover-parts');
  const next = () => stream.nextDouble();
  const int = (n: number) => Math.floor(next() * n);
  for (let round = 0; round < 50; round++) {
    const bytes = (n: number) => new Uint8Array(n).map(() => int(256));
    const state: DurableLogState = {
      promised: int(1000),
      truncated: int(1000),
      sessions: Array.from({ length: int(20) }, (_, i) => ({ clientId: i + 1, seq: int(100) })),
      snapshot: Array.from({ length: int(60) }, () => ({ key: bytes(1 + int(64)), value: bytes(int(8192)) })),
      entries: Array.from(
        { length: int(30) },
        (_, i): DurableEntry => ({
          slot: 1000 + i,
          ballot: int(50),
          chosen: next() < 0.5,
          clientId: int(5),
          seq: int(100),
          key: bytes(1 + int(16)),
          value: bytes(int(8192)),
        }),
      ),
    };
    const budget = 64 + int(20_000);
    const first = recoverPart(state, false, budget, 0);
    assert.ok(first !== undefined);
    const parts = first.parts;
    const all = { sessions: [] as unknown[], snapshot: [] as unknown[], entries: [] as unknown[] };
    for (let part = 0; part < parts; part++) {
      const message = recoverPart(state, false, budget, part);
      assert.ok(message !== undefined, `part ${part} of ${parts}`);
      assert.equal(message.parts, parts);
      assert.equal(message.promised, state.promised);
      assert.equal(message.truncated, state.truncated);
      const size =
        message.sessions.length * SNAPSHOT_SESSION_BYTES +
        message.snapshot.reduce((sum, item) => sum + snapshotItemBytes(item), 0) +
        message.entries.reduce((sum, entry) => sum + 42 + entry.key.length + entry.value.length, 0);
      const count = message.sessions.length + message.snapshot.length + message.entries.length;
      assert.ok(
        size <= budget || count === 1,
        `seed ${seed} round ${round}: part ${part} has ${size} bytes > ${budget}`,
      );
      all.sessions.push(...message.sessions);
      all.snapshot.push(...message.snapshot);
      all.entries.push(...message.entries);
    }
    assert.deepEqual(all, { sessions: state.sessions, snapshot: state.snapshot, entries: state.entries });
    assert.equal(recoverPart(state, false, budget, parts), undefined, 'no part past the last');
  }
});

const KEYS = 48;
const VALUE_BYTES = 7000;

function valueFor(key: number, round: number): Uint8Array {
  const value = new Uint8Array(VALUE_BYTES).fill((key * 7 + round) % 251);
  value[0] = key;
  value[1] = round;
  return value;
}

function deploy(): RkvSimDeployment {
  return deployElecting(3, {
    durableLog: true,
    memtableLimitBytes: 64 * 1024,
    consensus: { maxLogEntries: 8, snapshotChunkBytes: 8 * 1024 },
  });
}

/** Writes every key twice through the leader (the second round is what must read back). */
function writeAll(d: RkvSimDeployment, leader: number): void {
  let seq = 0;
  for (const round of [1, 2]) {
    for (let key = 0; key < KEYS; key++) {
      const put: RkvMessage = {
        type: 'put',
        clientId: 1,
        seq: ++seq,
        key: rkvKey(key),
        value: valueFor(key, round),
      };
      let ok = false;
      for (let attempt = 0; attempt < 20 && !ok; attempt++) {
        ok = ask(d, leader, d.consensus[leader] as Ref, put, 300 * US)?.type === 'put-ok';
      }
      assert.ok(ok, `put of key ${key} round ${round} acknowledged`);
    }
  }
}

function assertHoldsAll(d: RkvSimDeployment, replica: number): void {
  for (let key = 0; key < KEYS; key++) {
    const answer = ask(d, replica, d.memtables[replica] as Ref, { type: 'get', key: rkvKey(key) });
    assert.equal(answer?.type, 'value', `replica ${replica} answered key ${key}`);
    assert.ok(answer?.type === 'value' && answer.found, `replica ${replica} holds key ${key}`);
    assert.deepEqual(answer.value, valueFor(key, 2), `replica ${replica}: key ${key} has its last value`);
  }
}

test('a replica whose durable state spans many recover parts restarts, recovers every part and holds every value', () => {
  const d = deploy();
  const leader = leaderOf(d);
  const follower = (leader + 1) % 3;
  writeAll(d, leader);
  run(d, 500 * US);
  assert.ok(d.logs[follower]!.truncated > 0, 'the follower folded its log into a snapshot');
  crashReplica(d, follower);
  run(d, 200 * US);
  restartReplica(d, follower);
  run(d, 3 * MS);
  const back = view(d, follower);
  assert.equal(back.recovering, false, 'recovered');
  assert.equal(back.recovered, 1);
  // 48 values of 7000 bytes in 8 KiB parts: one part per value at least.
  assert.ok(back.recoverParts >= KEYS, `${back.recoverParts} recover parts`);
  assertHoldsAll(d, follower);
});

test('a laggard installs a snapshot over RKV_BURST_BYTES in slices (resumes) and holds every value', () => {
  assert.ok(KEYS * VALUE_BYTES > RKV_BURST_BYTES, 'the state outgrows one burst');
  const d = deploy();
  const leader = leaderOf(d);
  const laggard = (leader + 1) % 3;
  d.cluster.isolate(laggard);
  writeAll(d, leader);
  run(d, 200 * US);
  assert.ok(view(d, leader).truncated > view(d, laggard).applied, 'the leader truncated past it');
  d.cluster.heal();
  for (let t = 0; t < 20 * MS && view(d, laggard).transfers === 0; t += 20 * US) run(d, 20 * US);
  run(d, 2 * MS);
  const back = view(d, laggard);
  assert.equal(back.transfers, 1, 'one snapshot installed');
  assert.ok(back.resumes >= 1, `the install went in slices (${back.resumes} resumes)`);
  assertHoldsAll(d, laggard);
});

test('a frozen memtable over MAX_FLUSH_PIECE_BYTES is flushed in pieces; every value reads back and flushing goes on', () => {
  const d = deployElecting(3, { memtableLimitBytes: MAX_FLUSH_PIECE_BYTES + 32 * 1024 });
  const leader = leaderOf(d);
  const disk = d.disks[leader]!;
  // 8000-byte values: the memtable freezes past the limit, so its run is over one piece.
  const keys = Math.ceil((MAX_FLUSH_PIECE_BYTES + 64 * 1024) / 8000);
  const value = (key: number) => new Uint8Array(8000).fill(key % 251);
  let seq = 0;
  const writeKeys = (from: number, to: number) => {
    for (let key = from; key < to; key++) {
      const put: RkvMessage = { type: 'put', clientId: 1, seq: ++seq, key: rkvKey(key), value: value(key) };
      assert.equal(ask(d, leader, d.consensus[leader] as Ref, put, 2 * MS)?.type, 'put-ok', `put ${key}`);
    }
  };
  writeKeys(0, keys);
  run(d, 2 * MS);
  assert.ok(disk.tablesWritten >= 2, `the frozen memtable went in pieces (${disk.tablesWritten} tables)`);
  for (let key = 0; key < keys; key++) {
    const answer = ask(d, leader, d.memtables[leader] as Ref, { type: 'get', key: rkvKey(key) });
    assert.ok(answer?.type === 'value' && answer.found, `key ${key} reads back`);
    assert.deepEqual(answer.value, value(key));
  }
  // The frozen memtable was dropped once its last piece was written: the next flush happens.
  const before = disk.tablesWritten;
  writeKeys(keys, 2 * keys);
  run(d, 2 * MS);
  assert.ok(disk.tablesWritten > before, `a later flush wrote tables (${before} → ${disk.tablesWritten})`);
});
