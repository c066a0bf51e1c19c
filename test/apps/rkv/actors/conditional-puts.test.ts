/**
 * SET NX / SET XX through RKV's actors on the simulator (messages.ts "Conditional puts"): the
 * leader locks the key, reads it at its applied point (memtable, else the SSTable reader) and
 * either proposes the plain put it becomes or answers not-written; every replica applies the same
 * log:
 *
 *   answers   NX on an absent key writes, NX again does not; XX on an absent key does not; XX on a
 *             key only the disk holds (base data: the reader decides) writes; NX after DEL writes
 *   model     random puts, deletes, conditional puts and gets through the leader match a Map
 *             model through flushes and merges; the followers hold the same values
 *   retry     a retried conditional put that wrote is answered written and does not write again
 *             (a put between the attempts survives)
 *   race      NX puts of one key sent at once: exactly one writes (the others are refused while
 *             the key is locked, or find it written)
 *   lock      a plain put sent right behind an NX of the same key is refused while the NX's read
 *             is out (else it was proposed first, and the NX, deciding on the older state, wrote
 *             after it: both acknowledged, not linearizable)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { COND_NX, COND_XX, type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import type { RkvSimDeployment } from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { baseValue } from '../../../../src/apps/rkv/actors/sim-disk.ts';
import { Random } from '../../../../src/random.ts';
import { BASE_KEYS, call, deployGroup, VALUE_BYTES } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 20261122);
process.stderr.write(`rkv conditional puts seed ${SEED} (IPIPE_TEST_SEED=${SEED} reproduces)\n`);

function cput(clientId: number, seq: number, key: number, value: Uint8Array, condition: number): RkvMessage {
  return { type: 'cput', clientId, seq, key: rkvKey(key), value, condition };
}

/** true: wrote (put-ok, or cond-ok written); false: did not. */
function writtenOf(answer: RkvMessage, what: string): boolean {
  if (answer.type === 'put-ok') return true;
  assert.equal(answer.type, 'cond-ok', `${what}: ${JSON.stringify(answer)}`);
  return answer.type === 'cond-ok' && answer.written;
}

function valueAt(d: RkvSimDeployment, replica: number, key: number): Uint8Array | undefined {
  const answer = call(d, replica, d.memtables[replica] as Ref, { type: 'get', key: rkvKey(key) });
  assert.equal(answer.type, 'value');
  return answer.type === 'value' && answer.found ? answer.value : undefined;
}

const valueNumbered = (n: number) => new Uint8Array(VALUE_BYTES).fill(n % 256);

test('NX and XX answer as Redis: absent and present keys, keys only the disk holds, after a delete', () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const fresh = BASE_KEYS + 7;
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(0, 0, fresh, valueNumbered(1), COND_NX)), 'NX absent'),
    true,
  );
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(0, 0, fresh, valueNumbered(2), COND_NX)), 'NX again'),
    false,
  );
  assert.deepEqual(valueAt(d, leader, fresh), valueNumbered(1), 'the second NX did not write');
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(0, 0, fresh + 1, valueNumbered(3), COND_XX)), 'XX absent'),
    false,
  );
  assert.equal(valueAt(d, leader, fresh + 1), undefined, 'XX on an absent key wrote nothing');
  // Base keys are only on the disk: the SSTable reader decides.
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(0, 0, 3, valueNumbered(4), COND_XX)), 'XX on disk'),
    true,
  );
  assert.deepEqual(valueAt(d, leader, 3), valueNumbered(4));
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(0, 0, 4, valueNumbered(5), COND_NX)), 'NX on disk'),
    false,
  );
  assert.deepEqual(valueAt(d, leader, 4), baseValue(4, VALUE_BYTES));
  assert.equal(
    call(d, leader, consensus, { type: 'del', clientId: 0, seq: 0, key: rkvKey(4) }).type,
    'del-ok',
  );
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(0, 0, 4, valueNumbered(6), COND_NX)), 'NX after DEL'),
    true,
  );
  assert.equal(
    writtenOf(
      call(d, leader, consensus, cput(0, 0, fresh + 1, valueNumbered(7), COND_XX)),
      'XX still absent',
    ),
    false,
  );
  d.cluster.kernel.run({});
  for (const replica of [0, 1, 2]) {
    assert.deepEqual(valueAt(d, replica, 4), valueNumbered(6), `replica ${replica}`);
    assert.deepEqual(valueAt(d, replica, 3), valueNumbered(4), `replica ${replica}`);
    assert.equal(valueAt(d, replica, fresh + 1), undefined, `replica ${replica}`);
  }
});

test('a follower refuses a conditional put and names the leader', () => {
  const d = deployGroup();
  const follower = (d.leader + 1) % 3;
  const answer = call(d, follower, d.consensus[follower] as Ref, cput(0, 0, 1, valueNumbered(1), COND_NX));
  assert.equal(answer.type, 'refused', JSON.stringify(answer));
  if (answer.type === 'refused') assert.equal(answer.leader, d.leader);
});

test(`puts, deletes, NX, XX and gets through the leader match a model through flushes (seed ${SEED})`, () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const random = new Random(SEED);
  const model = new Map<number, Uint8Array | null>();
  const current = (index: number) =>
    model.has(index)
      ? (model.get(index) ?? undefined)
      : index < BASE_KEYS
        ? baseValue(index, VALUE_BYTES)
        : undefined;
  const keys = Array.from({ length: 60 }, (_, i) => BASE_KEYS - 30 + i);
  const counts = { written: 0, notWritten: 0, fromDisk: 0 };
  for (let i = 0; i < 500; i++) {
    const index = keys[random.int(0, keys.length)] as number;
    const roll = random.next();
    const value = valueNumbered(i);
    if (roll < 0.2) {
      assert.equal(
        call(d, leader, consensus, { type: 'put', clientId: 0, seq: 0, key: rkvKey(index), value }).type,
        'put-ok',
      );
      model.set(index, value);
    } else if (roll < 0.35) {
      assert.equal(
        call(d, leader, consensus, { type: 'del', clientId: 0, seq: 0, key: rkvKey(index) }).type,
        'del-ok',
      );
      model.set(index, null);
    } else if (roll < 0.8) {
      const condition = random.next() < 0.5 ? COND_NX : COND_XX;
      const present = current(index) !== undefined;
      const holds = condition === COND_NX ? !present : present;
      if (!model.has(index)) counts.fromDisk++;
      const wrote = writtenOf(call(d, leader, consensus, cput(0, 0, index, value, condition)), `cput #${i}`);
      assert.equal(wrote, holds, `cput #${i} (${condition === COND_NX ? 'NX' : 'XX'}) of key ${index}`);
      if (wrote) {
        model.set(index, value);
        counts.written++;
      } else counts.notWritten++;
    } else {
      assert.deepEqual(valueAt(d, leader, index), current(index), `get #${i} of key ${index}`);
    }
  }
  assert.ok(counts.written > 40 && counts.notWritten > 40 && counts.fromDisk > 5, JSON.stringify(counts));
  assert.ok(d.disks[leader]!.tablesWritten >= 2, 'the memtable flushed');
  d.cluster.kernel.run({});
  for (const replica of [0, 1, 2])
    for (const index of keys)
      assert.deepEqual(valueAt(d, replica, index), current(index), `replica ${replica} key ${index}`);
});

test('a retried conditional put that wrote is answered written and does not write again', () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const key = BASE_KEYS + 3;
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(9, 1, key, valueNumbered(1), COND_NX)), 'first'),
    true,
  );
  // Another client overwrites; the retry (same session and seq) must not put its value back.
  assert.equal(
    call(d, leader, consensus, {
      type: 'put',
      clientId: 10,
      seq: 1,
      key: rkvKey(key),
      value: valueNumbered(2),
    }).type,
    'put-ok',
  );
  const retry = call(d, leader, consensus, cput(9, 1, key, valueNumbered(1), COND_NX));
  assert.deepEqual(retry, { type: 'cond-ok', written: true }, 'the retry is answered as the first attempt');
  assert.deepEqual(valueAt(d, leader, key), valueNumbered(2), 'the retry did not write');
  // The session goes on: the next seq is evaluated afresh (the key is present: NX does not write).
  assert.equal(
    writtenOf(call(d, leader, consensus, cput(9, 2, key, valueNumbered(3), COND_NX)), 'next seq'),
    false,
  );
});

test('NX puts of one key sent at once: exactly one writes', () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const key = BASE_KEYS + 11;
  const answers: RkvMessage[] = [];
  for (let c = 1; c <= 6; c++) {
    d.cluster.clientSend(
      leader,
      consensus,
      cput(c, 1, key, valueNumbered(c), COND_NX),
      (_id, _latency, ok, reply) => {
        assert.ok(ok);
        answers.push(reply as RkvMessage);
      },
    );
  }
  d.cluster.kernel.run({});
  assert.equal(answers.length, 6);
  const winners = answers.filter((a) => a.type === 'put-ok');
  assert.equal(winners.length, 1, JSON.stringify(answers.map((a) => a.type)));
  const refusedOrNil = answers.filter((a) => a.type === 'refused' || (a.type === 'cond-ok' && !a.written));
  assert.equal(refusedOrNil.length, 5);
  assert.ok(
    answers.some((a) => a.type === 'refused'),
    'the lock refused a racing NX',
  );
});

test('a plain put of a key whose NX is being decided does not land between its read and its put', () => {
  const d = deployGroup();
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const key = BASE_KEYS + 21;
  const answers = new Map<string, RkvMessage>();
  const record = (what: string) => (_id: number, _latency: number, ok: boolean, reply: unknown) => {
    assert.ok(ok);
    answers.set(what, reply as RkvMessage);
  };
  d.cluster.clientSend(leader, consensus, cput(1, 1, key, valueNumbered(1), COND_NX), record('nx'));
  d.cluster.clientSend(
    leader,
    consensus,
    { type: 'put', clientId: 2, seq: 1, key: rkvKey(key), value: valueNumbered(2) },
    record('put'),
  );
  d.cluster.kernel.run({});
  const nx = answers.get('nx')?.type;
  const put = answers.get('put')?.type;
  // Both written would only be linearizable as NX then the put: the put's value last.
  if (nx === 'put-ok' && put === 'put-ok') assert.deepEqual(valueAt(d, leader, key), valueNumbered(2));
  assert.deepEqual([nx, put], ['put-ok', 'refused'], 'the lock refused the plain put (the client retries)');
  assert.deepEqual(valueAt(d, leader, key), valueNumbered(1));
});
