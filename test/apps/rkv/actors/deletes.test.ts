/**
 * DEL through RKV's actors (messages.ts "Deletes", storage-actors.ts): a delete is chosen through
 * Multi-Paxos under the client's session, applied as a tombstone in log order on every replica,
 * flushed and merged with the SSTables, kept in the durable log's snapshot, and its answer says
 * whether the key existed at its slot:
 *
 *   model      puts, deletes and gets through the leader match a Map model through flushes and
 *              level-0 merges (base data deleted and re-written included); the followers agree
 *   tombstone  a get that meets a tombstone in the memtable answers not-found without a disk read
 *   probe      a delete whose tombstone is flushed at once (a 1-byte memtable) still answers as of
 *              its slot: the memtable holds its flushes while a probe is out
 *   no disk    a probe the SSTable reader cannot serve refuses the client and releases the hold
 *   sessions   a retried delete takes effect once (a later put survives the retry) and is answered
 *              as the first attempt was (the leader's memtable remembers each client's last)
 *   restart    a deleted key stays deleted on a replica restarted from its durable log after the
 *              delete was folded into the log's snapshot and its tombstone merged on disk
 *   transfer   a laggard brought back by a state transfer does not resurrect keys deleted while
 *              it was away (their old values are in its own SSTables)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import {
  DEL_ABSENT,
  DEL_EXISTED,
  DEL_UNKNOWN,
  type RkvMessage,
  rkvKey,
  rkvMessages,
} from '../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { baseValue, registerSimDisk, unregisterSimDisk } from '../../../../src/apps/rkv/actors/sim-disk.ts';
import { DmoHashMap, DmoNumberMap } from '../../../../src/dmo/index.ts';
import { Random } from '../../../../src/random.ts';
import {
  askWithin as ask,
  BASE_KEYS,
  call,
  commitThrough,
  delMessage as del,
  deployElecting,
  deployGroup,
  leaderOf,
  putMessage,
  settle,
  VALUE_BYTES,
  consensusView as view,
} from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;
const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 20261122);

/** A command through replica `at`, acknowledged within 20 tries of 300 µs (this file's bound). */
const commit = (d: RkvSimDeployment, at: number, message: RkvMessage): RkvMessage =>
  commitThrough(d, at, message, 20);

/** key index → its value, or null once deleted (absent from the map: never touched). */
type Model = Map<number, Uint8Array | null>;

function modelValue(model: Model, index: number, baseKeys = BASE_KEYS): Uint8Array | undefined {
  if (model.has(index)) return model.get(index) ?? undefined;
  return index < baseKeys ? baseValue(index, VALUE_BYTES) : undefined;
}

function existedOf(answer: RkvMessage, what: string): number {
  assert.equal(answer.type, 'del-ok', `${what}: ${JSON.stringify(answer)}`);
  return answer.type === 'del-ok' ? answer.existed : -1;
}

function assertStoreMatches(
  d: RkvSimDeployment,
  replica: number,
  model: Model,
  keys: readonly number[],
): void {
  for (const index of keys) {
    const answer = call(d, replica, d.memtables[replica] as Ref, { type: 'get', key: rkvKey(index) });
    assert.equal(answer.type, 'value');
    if (answer.type !== 'value') continue;
    const want = modelValue(model, index);
    assert.equal(answer.found, want !== undefined, `replica ${replica} key ${index}: found`);
    if (want !== undefined) assert.deepEqual([...answer.value], [...want], `replica ${replica} key ${index}`);
  }
}

test(`puts, deletes and gets through the leader match a model through flushes and merges (seed ${SEED})`, () => {
  const d = deployGroup();
  const leader = d.leader;
  const random = new Random(SEED);
  const model: Model = new Map();
  // 40 base keys and 40 keys beyond the base data: deletes find both present and absent keys.
  const keys = Array.from({ length: 80 }, (_, i) => BASE_KEYS - 40 + i);
  const counts = { existed: 0, absent: 0, gets: 0, puts: 0 };
  for (let i = 0; i < 600; i++) {
    const index = keys[random.int(0, keys.length)] as number;
    const roll = random.next();
    if (roll < 0.35) {
      const value = new Uint8Array(VALUE_BYTES).map(() => random.int(0, 256));
      const answer = call(d, leader, d.consensus[leader] as Ref, {
        type: 'put',
        clientId: 0,
        seq: 0,
        key: rkvKey(index),
        value,
      });
      assert.equal(answer.type, 'put-ok', `put #${i}`);
      model.set(index, value);
      counts.puts++;
    } else if (roll < 0.65) {
      const existed = existedOf(call(d, leader, d.consensus[leader] as Ref, del(0, 0, index)), `del #${i}`);
      const want = modelValue(model, index) !== undefined ? DEL_EXISTED : DEL_ABSENT;
      assert.equal(existed, want, `del #${i} of key ${index}: existed`);
      model.set(index, null);
      if (existed === DEL_EXISTED) counts.existed++;
      else counts.absent++;
    } else {
      assertStoreMatches(d, leader, model, [index]);
      counts.gets++;
    }
  }
  assert.ok(counts.existed > 40 && counts.absent > 40 && counts.gets > 100, JSON.stringify(counts));
  const disk = d.disks[leader]!;
  assert.ok(disk.tablesWritten >= 3, `tables written: ${disk.tablesWritten}`);
  assert.ok(disk.tombstonesDropped > 0, 'a merge dropped a tombstone of a key beyond the base data');
  d.cluster.kernel.run({});
  for (const replica of [0, 1, 2]) assertStoreMatches(d, replica, model, keys);
});

test('a get that meets a tombstone answers not-found without reading the disk', () => {
  const d = deployGroup({ memtableLimitBytes: 1 << 20 });
  const leader = d.leader;
  const disk = d.disks[leader]!;
  const lookup = disk.lookup.bind(disk);
  let lookups = 0;
  disk.lookup = (key) => {
    lookups++;
    return lookup(key);
  };
  // Key 7 is base data: only the disk holds it, so the delete probes it.
  assert.equal(existedOf(call(d, leader, d.consensus[leader] as Ref, del(0, 0, 7)), 'del 7'), DEL_EXISTED);
  assert.equal(lookups, 1, 'the delete probed the disk once');
  const gone = call(d, leader, d.memtables[leader] as Ref, { type: 'get', key: rkvKey(7) });
  assert.deepEqual(gone, { type: 'value', found: false, value: new Uint8Array(0) });
  assert.equal(lookups, 1, 'the tombstone answered: no disk read');
  const kept = call(d, leader, d.memtables[leader] as Ref, { type: 'get', key: rkvKey(8) });
  assert.equal(kept.type === 'value' && kept.found, true);
  assert.equal(lookups, 2, 'a miss does read the disk (the counter counts)');
});

test('a delete flushed at once still answers as of its slot: no table frozen after its probe left reaches the disk first', () => {
  // A 1-byte memtable: every apply freezes the memtable and flushes it when none is in flight.
  const d = deployGroup({ memtableLimitBytes: 1, level0Trigger: 2 });
  const leader = d.leader;
  const memtable = d.cluster.node(leader).instance(d.memtables[leader]!.id);
  const meta = (): {
    holds: [number, number][];
    freezes: number;
    inFlight: number;
    tablesFlushed: number;
  } => {
    const map = DmoNumberMap.open(memtable.heap, memtable.root('meta')!);
    const holdsRoot = memtable.root('holds');
    const holds = holdsRoot === undefined ? [] : [...DmoNumberMap.open(memtable.heap, holdsRoot).entries()];
    return { holds, freezes: map.get(4) ?? 0, inFlight: map.get(1) ?? 0, tablesFlushed: map.get(0) ?? 0 };
  };
  // Deletes a few µs apart, each of its own base key (on disk only: every one probes and every one
  // existed), with a put after each: each probe races the flushes of the tombstones around it.
  const answers = new Map<number, number>();
  for (let index = 0; index < 60; index++) {
    d.cluster.kernel.after(index * 3 * US, () => {
      const consensus = d.consensus[leader] as Ref;
      d.cluster.clientSend(leader, consensus, del(1, index + 1, index), (_i, _l, ok, reply) => {
        assert.ok(ok);
        answers.set(index, existedOf(reply as RkvMessage, `del of ${index}`));
      });
      d.cluster.clientSend(leader, consensus, putMessage(2, index + 1, 100 + index, 1), () => {});
    });
  }
  let held = 0;
  let flushedWhileHeld = 0;
  let before = meta();
  for (let steps = 0; steps < 100_000 && answers.size < 60; steps++) {
    settle(d, 100);
    const now = meta();
    // A table in flight belongs to the frozen memtable (freeze `freezes`): no hold taken before
    // that freeze (a smaller epoch) may still be out — its probe could read the table.
    if (now.inFlight !== 0)
      for (const [epoch, count] of now.holds)
        assert.ok(
          !(epoch < now.freezes && count > 0),
          `a table of freeze ${now.freezes} in flight with a hold of epoch ${epoch} out`,
        );
    if (before.holds.length > 0 && now.holds.length > 0) {
      held++;
      if (now.tablesFlushed > before.tablesFlushed) flushedWhileHeld++;
    }
    before = now;
  }
  d.cluster.kernel.run({});
  assert.equal(answers.size, 60, 'every delete answered');
  assert.deepEqual([...answers.values()], Array(60).fill(DEL_EXISTED), 'every deleted base key existed');
  assert.ok(held > 10, `steps with a probe out: ${held}`);
  // Newer holds do not stop an older frozen memtable's flush (storage-actors.ts "Flush holds").
  assert.ok(flushedWhileHeld > 0, `steps where a table left while probes were out: ${flushedWhileHeld}`);
  assert.ok(d.disks[leader]!.tablesWritten >= 5, `tables written: ${d.disks[leader]!.tablesWritten}`);
  const model: Model = new Map(Array.from({ length: 60 }, (_, i) => [i, null]));
  assertStoreMatches(
    d,
    leader,
    model,
    Array.from({ length: 70 }, (_, i) => i),
  );
});

test('a probe the SSTable reader cannot serve (no disk) refuses the client and releases the flush hold', () => {
  const d = deployGroup({ memtableLimitBytes: 64 });
  const leader = d.leader;
  const reader = d.cluster.node(leader).instance(d.sstables[leader]!.id);
  const setup = rkvMessages.decode(DmoHashMap.open(reader.heap, reader.root('setup')!).getString('setup')!);
  assert.equal(setup.type, 'sstable-setup');
  const name = setup.type === 'sstable-setup' ? setup.disk : '';
  unregisterSimDisk(name);
  const answer = call(d, leader, d.consensus[leader] as Ref, del(1, 1, 7));
  assert.equal(answer.type, 'refused');
  assert.match(answer.type === 'refused' ? answer.reason : '', /no disk/);
  registerSimDisk(name, d.disks[leader]!);
  const tables = d.disks[leader]!.tablesWritten;
  for (let i = 0; i < 20; i++)
    assert.equal(
      call(d, leader, d.consensus[leader] as Ref, putMessage(2, i + 1, 600 + i, i)).type,
      'put-ok',
    );
  assert.ok(d.disks[leader]!.tablesWritten > tables, 'the memtable flushes again');
  // The delete was applied all the same; its retry finds it done, with no answer kept.
  assert.deepEqual(call(d, leader, d.consensus[leader] as Ref, del(1, 1, 7)), {
    type: 'del-ok',
    slot: 0,
    existed: DEL_UNKNOWN,
  });
  const got = call(d, leader, d.memtables[leader] as Ref, { type: 'get', key: rkvKey(7) });
  assert.equal(got.type === 'value' && got.found, false);
});

test('a retried delete takes effect once and gets the first answer again: a put after it survives', () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  assert.equal(existedOf(call(d, leader, consensus, del(7, 1, 3)), 'del'), DEL_EXISTED);
  assert.equal(call(d, leader, consensus, putMessage(8, 1, 3, 42)).type, 'put-ok');
  // The retry finds seq 1 applied: the leader's memtable gives the answer it gave (key 3 existed
  // then; it exists again now, but a second delete would have said so and removed it).
  assert.deepEqual(call(d, leader, consensus, del(7, 1, 3)), {
    type: 'del-ok',
    slot: 0,
    existed: DEL_EXISTED,
  });
  const got = call(d, leader, d.memtables[leader] as Ref, { type: 'get', key: rkvKey(3) });
  assert.deepEqual(got, { type: 'value', found: true, value: new Uint8Array([42]) });
  // The same for an answer of "absent" (key 900 is beyond the base data), with a put in between.
  assert.equal(existedOf(call(d, leader, consensus, del(7, 2, 900)), 'del 900'), DEL_ABSENT);
  assert.equal(call(d, leader, consensus, putMessage(8, 2, 900, 5)).type, 'put-ok');
  assert.deepEqual(call(d, leader, consensus, del(7, 2, 900)), {
    type: 'del-ok',
    slot: 0,
    existed: DEL_ABSENT,
  });
  // A stale retry of seq 1 (the client has moved on): the memtable keeps only the last answer.
  assert.deepEqual(call(d, leader, consensus, del(7, 1, 3)), {
    type: 'del-ok',
    slot: 0,
    existed: DEL_UNKNOWN,
  });
  // The session is shared with the client's puts: its next delete goes through.
  assert.equal(existedOf(call(d, leader, consensus, del(7, 3, 3)), 'del seq 3'), DEL_EXISTED);
});

/** What replica r's own store (memtable, then SSTables) holds for keys 0 … keys − 1 (null: absent). */
function storeOf(d: RkvSimDeployment, r: number, keys: number): (number | null)[] {
  const values: (number | null)[] = [];
  for (let key = 0; key < keys; key++) {
    const answer = ask(d, r, d.memtables[r] as Ref, { type: 'get', key: rkvKey(key) });
    assert.equal(answer?.type, 'value', `replica ${r} answered key ${key}`);
    values.push(answer?.type === 'value' && answer.found ? (answer.value[0] ?? -1) : null);
  }
  return values;
}

const KEYS = 12;

test('a deleted key stays deleted on a replica restarted after the delete reached the snapshot and the disk', () => {
  const d = deployElecting(3, { memtableLimitBytes: 256, durableLog: true, consensus: { maxLogEntries: 8 } });
  const leader = leaderOf(d);
  const model: (number | null)[] = Array.from({ length: KEYS }, () => null);
  let seq = 0;
  for (let key = 0; key < KEYS; key++) {
    commit(d, leader, putMessage(1, ++seq, key, key + 1));
    model[key] = key + 1;
  }
  // Enough writes elsewhere that every replica flushes the values to its SSTables first.
  for (let i = 0; i < 40; i++) commit(d, leader, putMessage(1, ++seq, 100 + (i % 10), i));
  for (let key = 0; key < KEYS; key += 2) {
    assert.equal(existedOf(commit(d, leader, del(1, ++seq, key)), `del ${key}`), DEL_EXISTED);
    model[key] = null;
  }
  // …and after the deletes: the tombstones flush and merge, the logs fold them into the snapshot.
  for (let i = 0; i < 40; i++) commit(d, leader, putMessage(1, ++seq, 100 + (i % 10), i));
  settle(d, 300 * US);
  const follower = (leader + 1) % 3;
  const folded = d.logs[follower]!.truncated;
  assert.ok(folded > KEYS + 40 + KEYS / 2, `the follower's log folded the deletes (truncated ${folded})`);
  assert.ok(d.disks[follower]!.tablesWritten >= 4, 'the follower flushed tables');
  assert.deepEqual(storeOf(d, follower, KEYS), model, 'before the crash');
  crashReplica(d, follower);
  settle(d, MS);
  restartReplica(d, follower);
  settle(d, 2 * MS);
  assert.equal(view(d, follower).recovered, 1, 'it recovered a non-empty log');
  assert.deepEqual(storeOf(d, follower, KEYS), model, 'the restarted replica');
  assert.deepEqual(storeOf(d, leaderOf(d), KEYS), model, 'the leader');
});

test('a laggard brought back by a state transfer does not resurrect keys deleted while it was away', () => {
  const d = deployElecting(3, {
    durableLog: true,
    memtableLimitBytes: 256,
    consensus: { maxLogEntries: 8, snapshotChunkBytes: 64 },
  });
  const leader = leaderOf(d);
  const laggard = (leader + 1) % 3;
  const model: (number | null)[] = Array.from({ length: KEYS }, () => null);
  let seq = 0;
  for (let key = 0; key < KEYS; key++) {
    commit(d, leader, putMessage(1, ++seq, key, key + 1));
    model[key] = key + 1;
  }
  for (let i = 0; i < 30; i++) commit(d, leader, putMessage(1, ++seq, 100 + (i % 10), i));
  settle(d, 300 * US);
  assert.deepEqual(storeOf(d, laggard, KEYS), model, 'the laggard-to-be holds every key');
  assert.ok(d.disks[laggard]!.tablesWritten >= 2, 'and flushed them to its SSTables');
  d.cluster.isolate(laggard);
  for (let key = 1; key < KEYS; key += 2) {
    assert.equal(existedOf(commit(d, leader, del(1, ++seq, key)), `del ${key}`), DEL_EXISTED);
    model[key] = null;
  }
  for (let i = 0; i < 30; i++) commit(d, leader, putMessage(1, ++seq, 100 + (i % 10), i));
  settle(d, 200 * US);
  assert.ok(view(d, leader).truncated > view(d, laggard).applied, 'the leader truncated past the laggard');
  d.cluster.heal();
  for (let t = 0; t < 5 * MS && view(d, laggard).transfers === 0; t += 5 * US) settle(d, 5 * US);
  assert.ok(view(d, laggard).transfers >= 1, 'the laggard installed a snapshot');
  settle(d, MS);
  assert.deepEqual(storeOf(d, laggard, KEYS), model, 'the former laggard');
});
