/**
 * DBSIZE through RKV's actors on the simulator (messages.ts "DBSIZE", storage-actors.ts): the
 * leader's memtable counts its live keys and the SSTable reader adds the disk's live keys the
 * memtable does not hold (base data, level 0, level 1):
 *
 *   model     after random puts and deletes (base keys and new ones, through flushes and level-0
 *             merges) DBSIZE at the leader equals a Map model's live keys, every time it is asked
 *   refused   a follower refuses DBSIZE and names the leader (a lease read, as a get)
 *   hold      a count taken while the memtable is full and flushing on every write still counts
 *             each key once (the memtable's keys are left out of the disk's count)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { Random } from '../../../../src/random.ts';
import { BASE_KEYS, call, deployGroup, VALUE_BYTES } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 20261122);
process.stderr.write(`rkv dbsize seed ${SEED} (IPIPE_TEST_SEED=${SEED} reproduces)\n`);

function sizeOf(answer: RkvMessage, what: string): number {
  assert.equal(answer.type, 'size', `${what}: ${JSON.stringify(answer)}`);
  return answer.type === 'size' ? answer.keys : -1;
}

test(`DBSIZE at the leader equals the model's live keys through puts, deletes, flushes and merges (seed ${SEED})`, () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const random = new Random(SEED);
  // key index → live or not; absent: as the base data has it.
  const live = new Map<number, boolean>();
  const keys = Array.from({ length: 80 }, (_, i) => BASE_KEYS - 40 + i);
  const modelSize = () => {
    let size = BASE_KEYS;
    for (const [index, isLive] of live) size += (isLive ? 1 : 0) - (index < BASE_KEYS ? 1 : 0);
    return size;
  };
  assert.equal(sizeOf(call(d, leader, consensus, { type: 'dbsize' }), 'first'), BASE_KEYS);
  let counts = 0;
  for (let i = 0; i < 500; i++) {
    const index = keys[random.int(0, keys.length)] as number;
    if (random.next() < 0.55) {
      const value = new Uint8Array(VALUE_BYTES).fill(i % 256);
      const answer = call(d, leader, consensus, {
        type: 'put',
        clientId: 0,
        seq: 0,
        key: rkvKey(index),
        value,
      });
      assert.equal(answer.type, 'put-ok', `put #${i}`);
      live.set(index, true);
    } else {
      const answer = call(d, leader, consensus, { type: 'del', clientId: 0, seq: 0, key: rkvKey(index) });
      assert.equal(answer.type, 'del-ok', `del #${i}`);
      live.set(index, false);
    }
    if (i % 25 === 24) {
      assert.equal(sizeOf(call(d, leader, consensus, { type: 'dbsize' }), `dbsize after #${i}`), modelSize());
      counts++;
    }
  }
  assert.equal(counts, 20);
  const disk = d.disks[leader]!;
  assert.ok(disk.tablesWritten >= 3, `tables written: ${disk.tablesWritten}`);
  assert.notEqual(modelSize(), BASE_KEYS, 'the workload changed the key count');
});

test('a follower refuses DBSIZE and names the leader', () => {
  const d = deployGroup();
  const follower = (d.leader + 1) % 3;
  const answer = call(d, follower, d.consensus[follower] as Ref, { type: 'dbsize' });
  assert.equal(answer.type, 'refused', JSON.stringify(answer));
  if (answer.type === 'refused') assert.equal(answer.leader, d.leader);
});

test('a count while every write flushes counts each key once (memtable keys left out of the disk count)', () => {
  // A 1-byte memtable: every write freezes the memtable and sends a flush.
  const d = deployGroup({ memtableLimitBytes: 1 });
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  let answered = 0;
  let newKeysAnswered = 0;
  let newKeysAtCount = -1;
  let size = -1;
  for (let i = 0; i < 12; i++) {
    const key = rkvKey(BASE_KEYS + i);
    const value = new Uint8Array(VALUE_BYTES).fill(i);
    d.cluster.clientSend(leader, consensus, { type: 'put', clientId: 0, seq: 0, key, value }, () => {
      answered++;
      newKeysAnswered++;
    });
    // Overwrites of base keys: each must count once whether it sits in a memtable or on disk.
    d.cluster.clientSend(
      leader,
      consensus,
      { type: 'put', clientId: 0, seq: 0, key: rkvKey(i), value },
      () => {
        answered++;
      },
    );
    if (i === 6) {
      d.cluster.clientSend(leader, consensus, { type: 'dbsize' }, (_id, _latency, ok, reply) => {
        assert.ok(ok);
        size = sizeOf(reply as RkvMessage, 'mid-load dbsize');
        newKeysAtCount = newKeysAnswered;
      });
    }
  }
  d.cluster.kernel.run({});
  assert.equal(answered, 24);
  // A lease read at the applied point: every put answered before it counts, none sent after it.
  assert.ok(
    size >= BASE_KEYS + newKeysAtCount && size <= BASE_KEYS + 7,
    `mid-load DBSIZE ${size}, ${newKeysAtCount} new keys answered before it`,
  );
  assert.equal(sizeOf(call(d, leader, consensus, { type: 'dbsize' }), 'final'), BASE_KEYS + 12);
});
