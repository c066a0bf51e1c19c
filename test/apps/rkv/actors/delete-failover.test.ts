/**
 * A DEL whose answer was lost, retried after a fail-over (storage-actors.ts "Deletes"): every
 * replica's memtable decides whether the key existed when it applies the delete (the memtable, else
 * a probe of its SSTable reader) and remembers it per client, so the retry that reaches the new
 * leader gets the true answer instead of DEL_UNKNOWN:
 *
 *   memtable   the deleted key is in the followers' memtables                → existed
 *   disk       the deleted key was flushed: only the followers' SSTables hold it → existed (a probe)
 *   absent     the key was never written                                      → absent (a probe)
 *   race       retries of one delete arriving every microsecond at the leader, some while its
 *              probe is out: each waits for the probe and gets the decided answer
 *   restart    a replica restarted from its log decides a delete it follows from its memtables
 *              (a hit), else by a probe that its disk answers only when it holds nothing from the
 *              delete's slot or later (D < s): every delete after a restart's replay is decided,
 *              also long after the restart (a rolling restart, then fail-overs: not DEL_UNKNOWN)
 *   ahead      a restarted replica re-applying a delete of a key its disk holds from a LATER slot
 *              (flushed before the crash) decides nothing, never a wrong answer: a retry's
 *              `del-again` at its memtable answers DEL_UNKNOWN
 *   SET NX     a conditional put that wrote, retried after a fail-over, is answered from the
 *              replicated sessions (written), not decided again (the key exists now: nil)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import {
  COND_NX,
  DEL_ABSENT,
  DEL_EXISTED,
  DEL_UNKNOWN,
  type RkvMessage,
  rkvKey,
} from '../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { DmoMemtable } from '../../../../src/apps/rkv/lsm/dmo-memtable.ts';
import { DmoNumberMap } from '../../../../src/dmo/index.ts';
import { encodeOrigin } from '../../../../src/runtime/origin-codec.ts';
import {
  askWithin as ask,
  commitThrough as commit,
  delMessage as del,
  deployElecting,
  deployGroup,
  leaderOf,
  putMessage,
  settle,
  consensusView as view,
} from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;

function awaitLeader(d: RkvSimDeployment): number {
  for (let t = 0; t < 10 * MS; t += 50 * US) {
    settle(d, 50 * US);
    const leaders = [0, 1, 2].filter((r) => !d.cluster.isDown(r) && view(d, r).role === 'leader');
    if (leaders.length === 1) return leaders[0] as number;
  }
  assert.fail('no new leader within 10 ms');
}

/** Whether replica r's memtables (active or frozen) hold key index `key` (a value or a tombstone). */
function memtableHolds(d: RkvSimDeployment, r: number, key: number): boolean {
  const instance = d.cluster.node(r).instance(d.memtables[r]!.id);
  for (const name of ['active', 'frozen']) {
    const root = instance.root(name);
    if (root !== undefined && DmoMemtable.open(instance.heap, root).get(rkvKey(key)) !== undefined)
      return true;
  }
  return false;
}

/**
 * Client 9's delete of `key` (seq `seq`) sent to the leader, its answer dropped; once every replica
 * applied it the leader crashes, and the retry (same session) goes to the new leader. Returns the
 * retry's answer, and the replica that gave it.
 */
function deleteRetriedAfterFailover(
  d: RkvSimDeployment,
  key: number,
  seq: number,
): { existed: number; answeredBy: number } {
  const leader = leaderOf(d);
  let lost: RkvMessage | undefined;
  d.cluster.clientSend(leader, d.consensus[leader] as Ref, del(9, seq, key), (_id, _latency, _ok, reply) => {
    lost = reply as RkvMessage;
  });
  settle(d, 500 * US);
  assert.equal(lost?.type, 'del-ok', 'the first attempt took effect (its answer is then ignored)');
  const applied = view(d, leader).applied;
  for (const r of [0, 1, 2]) assert.equal(view(d, r).applied, applied, `replica ${r} applied the delete`);
  crashReplica(d, leader);
  const answeredBy = awaitLeader(d);
  const answer = commit(d, answeredBy, del(9, seq, key));
  assert.equal(answer.type, 'del-ok');
  return { existed: answer.type === 'del-ok' ? answer.existed : -1, answeredBy };
}

const SMALL_MEMTABLE = { durableLog: true, memtableLimitBytes: 256, consensus: { maxLogEntries: 64 } };

test('a delete of a key in the memtables, retried after the leader crashed, answers existed', () => {
  const d = deployElecting(3, { ...SMALL_MEMTABLE, memtableLimitBytes: 1 << 20 });
  commit(d, leaderOf(d), putMessage(1, 1, 5, 55));
  settle(d, 200 * US);
  for (const r of [0, 1, 2]) assert.ok(memtableHolds(d, r, 5), `replica ${r}'s memtable holds key 5`);
  assert.equal(deleteRetriedAfterFailover(d, 5, 1).existed, DEL_EXISTED);
});

test('a delete of a key only on disk (flushed), retried after the leader crashed, answers existed', () => {
  const d = deployElecting(3, SMALL_MEMTABLE);
  const leader = leaderOf(d);
  commit(d, leader, putMessage(1, 1, 5, 55));
  // Writes of other keys until every replica flushed key 5 out of its memtables.
  for (let i = 0; i < 60; i++) commit(d, leader, putMessage(1, 2 + i, 100 + (i % 12), i));
  settle(d, 300 * US);
  for (const r of [0, 1, 2]) {
    assert.ok(!memtableHolds(d, r, 5), `replica ${r}'s memtable no longer holds key 5`);
    assert.ok(d.disks[r]!.lookup(rkvKey(5)).value !== undefined, `replica ${r}'s SSTables hold key 5`);
  }
  const lookups = [0, 1, 2].map((r) => {
    const disk = d.disks[r]!;
    const lookup = disk.lookup.bind(disk);
    const count = { n: 0 };
    disk.lookup = (key) => {
      count.n++;
      return lookup(key);
    };
    return count;
  });
  const { existed, answeredBy } = deleteRetriedAfterFailover(d, 5, 1);
  assert.equal(existed, DEL_EXISTED);
  assert.ok((lookups[answeredBy]?.n ?? 0) >= 1, 'the new leader decided it by a probe of its own disk');
});

test('a delete of a key never written, retried after the leader crashed, answers absent', () => {
  const d = deployElecting(3, SMALL_MEMTABLE);
  commit(d, leaderOf(d), putMessage(1, 1, 5, 55));
  assert.equal(deleteRetriedAfterFailover(d, 777, 1).existed, DEL_ABSENT);
});

test('retries that reach the leader while its probe is out wait for the probe: all get the decided answer', () => {
  // Key 7 is base data (only the disk holds it): the delete probes. A retry every µs from the
  // delete's send on: the first ones are proposed again (duplicates at apply), the next find the
  // session applied while the probe is still out (`del-again` behind the `apply-del`), the last
  // find the answer remembered. Every one must say existed.
  const d = deployGroup({ memtableLimitBytes: 1 << 20 });
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const answers: number[] = [];
  for (let i = 0; i < 150; i++) {
    d.cluster.kernel.after(i * US, () => {
      d.cluster.clientSend(leader, consensus, del(4, 1, 7), (_id, _latency, ok, reply) => {
        assert.ok(ok);
        const answer = reply as RkvMessage;
        answers.push(answer.type === 'del-ok' ? answer.existed : -1);
      });
    });
  }
  d.cluster.kernel.run({});
  assert.equal(answers.length, 150, 'every attempt answered');
  const counts = [DEL_ABSENT, DEL_EXISTED, DEL_UNKNOWN, -1].map((v) => answers.filter((a) => a === v).length);
  assert.deepEqual(counts, [0, 150, 0, 0], 'absent, existed, unknown, other');
});

test('a restarted replica decides a followed delete of a key its memtables miss by a probe (its disk is behind the slot)', () => {
  const d = deployElecting(3, SMALL_MEMTABLE);
  const first = leaderOf(d);
  const restarted = (first + 1) % 3;
  const kept = (first + 2) % 3;
  commit(d, first, putMessage(1, 1, 5, 55));
  crashReplica(d, restarted);
  settle(d, 200 * US);
  restartReplica(d, restarted);
  settle(d, 2 * MS);
  assert.equal(view(d, restarted).recovered, 1, 'it recovered a non-empty log');
  const remembered = (r: number, clientId: number): number | undefined => {
    const instance = d.cluster.node(r).instance(d.memtables[r]!.id);
    return DmoNumberMap.open(instance.heap, instance.root('answers')!).get(clientId);
  };
  // Key 5 is in every memtable (the restarted one rebuilt it from its log): decided everywhere.
  commit(d, first, del(8, 1, 5));
  // Key 777 was never written: a miss, which only a probe of the disk could decide.
  const { existed, answeredBy } = deleteRetriedAfterFailover(d, 777, 1);
  assert.equal(remembered(kept, 8), 2 * 1 + DEL_EXISTED, 'a hit: the replica that never restarted');
  assert.equal(remembered(restarted, 8), 2 * 1 + DEL_EXISTED, 'a hit: the restarted replica too');
  assert.equal(remembered(kept, 9), 2 * 1 + DEL_ABSENT, 'a miss: the replica that never restarted probed');
  assert.equal(remembered(restarted, 9), 2 * 1 + DEL_ABSENT, 'a miss: the restarted replica probed too');
  assert.ok(d.disks[restarted]!.appliedSlot < view(d, restarted).applied, 'its disk is behind the delete');
  assert.equal(existed, DEL_ABSENT, `answered by replica ${answeredBy}`);
});

test('after a rolling restart, a later delete of a key only on disk is decided everywhere: a retry after a fail-over gets existed', () => {
  const d = deployElecting(3, SMALL_MEMTABLE);
  const first = leaderOf(d);
  commit(d, first, putMessage(1, 1, 900, 1)); // every log non-empty: each restart recovers
  settle(d, 200 * US);
  for (const r of [0, 1, 2]) {
    if (r === first) continue;
    crashReplica(d, r);
    settle(d, 200 * US);
    restartReplica(d, r);
    settle(d, 3 * MS);
    assert.equal(view(d, r).recovered, 1, `replica ${r} recovered its log`);
  }
  const leader = leaderOf(d);
  // Long after both restarts key 5 is written for the first time, then flushed out everywhere.
  commit(d, leader, putMessage(1, 2, 5, 55));
  for (let i = 0; i < 60; i++) commit(d, leader, putMessage(1, 3 + i, 100 + (i % 12), i));
  settle(d, 300 * US);
  for (const r of [0, 1, 2]) {
    assert.ok(!memtableHolds(d, r, 5), `replica ${r}'s memtable no longer holds key 5`);
    assert.ok(d.disks[r]!.lookup(rkvKey(5)).value !== undefined, `replica ${r}'s SSTables hold key 5`);
  }
  const { existed, answeredBy } = deleteRetriedAfterFailover(d, 5, 1);
  assert.equal(existed, DEL_EXISTED, `answered by replica ${answeredBy}: its disk is behind the slot`);
});

test('a restarted replica re-applying a delete of a key its disk holds from a later slot decides nothing (never existed)', () => {
  const d = deployElecting(3, SMALL_MEMTABLE);
  const leader = leaderOf(d);
  const follower = (leader + 1) % 3;
  const third = (leader + 2) % 3;
  commit(d, leader, putMessage(1, 1, 900, 1));
  settle(d, 200 * US);
  // The third replica down: the leader's truncation point stays where it last reported, so the
  // follower's log keeps the delete's slot and re-applies it after its own restart.
  crashReplica(d, third);
  settle(d, 100 * US);
  commit(d, leader, del(9, 1, 5)); // key 5 never written: absent at this slot
  commit(d, leader, putMessage(1, 2, 5, 55)); // written after the delete
  for (let i = 0; i < 20; i++) commit(d, leader, putMessage(1, 3 + i, 100 + (i % 12), i));
  settle(d, 200 * US);
  const remembered = (r: number, clientId: number): number | undefined => {
    const instance = d.cluster.node(r).instance(d.memtables[r]!.id);
    return DmoNumberMap.open(instance.heap, instance.root('answers')!).get(clientId);
  };
  assert.equal(remembered(follower, 9), 2 * 1 + DEL_ABSENT, 'decided absent before the crash');
  assert.ok(!memtableHolds(d, follower, 5), 'key 5 flushed out of the follower memtable');
  assert.ok(d.disks[follower]!.lookup(rkvKey(5)).value !== undefined, 'the follower disk holds key 5');
  const aheadOf = d.disks[follower]!.appliedSlot;
  crashReplica(d, follower);
  settle(d, 100 * US);
  restartReplica(d, follower);
  settle(d, 2 * MS);
  assert.equal(view(d, follower).recovered, 1, 'it recovered its log');
  assert.ok(view(d, follower).truncated < aheadOf, 'it re-applied slots its disk is ahead of');
  assert.ok(d.disks[follower]!.appliedSlot >= aheadOf, "the disk's D survived the restart");
  const answer = remembered(follower, 9);
  assert.ok(answer === undefined, `remembered nothing (got ${answer}): the disk holds key 5's later write`);
  // A retry at this replica — were it to lead — finds the session applied and asks its memtable
  // (`del-again`), which has no answer to give: DEL_UNKNOWN, not a guessed absent. Sent straight to
  // the memtable: which replica a fail-over elects is not this test's to choose.
  assert.equal(delAgainAt(d, follower, 9, 1), DEL_UNKNOWN, 'the restarted replica answers a retry unknown');
  assert.equal(delAgainAt(d, leader, 9, 1), DEL_ABSENT, 'the leader that never restarted remembers absent');
});

test('a SET NX that wrote, its answer lost, retried after the leader crashed, answers written (not nil)', () => {
  // The retry must not be decided again: the key exists now (its own write), so NX would say nil.
  // The put it became is in the log under the client's session, which every replica applies, so the
  // new leader answers from its sessions table.
  const d = deployElecting(3, SMALL_MEMTABLE);
  const leader = leaderOf(d);
  const cput: RkvMessage = {
    type: 'cput',
    clientId: 9,
    seq: 1,
    key: rkvKey(40),
    value: new Uint8Array([4]),
    condition: COND_NX,
  };
  let lost: RkvMessage | undefined;
  d.cluster.clientSend(leader, d.consensus[leader] as Ref, cput, (_id, _latency, _ok, reply) => {
    lost = reply as RkvMessage;
  });
  settle(d, 500 * US);
  assert.equal(lost?.type, 'put-ok', 'the first attempt wrote');
  crashReplica(d, leader);
  const next = awaitLeader(d);
  assert.deepEqual(commitCput(d, next, cput), { type: 'cond-ok', written: true });
  // A new SET NX of the same key (a new seq) is decided, and finds it present.
  const again = commitCput(d, next, { ...cput, seq: 2 });
  assert.deepEqual(again, { type: 'cond-ok', written: false });
});

/**
 * A `del-again` of client `clientId`'s delete `seq` straight to replica r's memtable, as its
 * consensus actor sends it for a retry of an applied delete; the memtable's `existed`. The client's
 * origin rides in the message (the consensus actor encodes its client's), so it is filled in
 * once the send has its request id, before the simulator delivers it.
 */
function delAgainAt(d: RkvSimDeployment, r: number, clientId: number, seq: number): number {
  const message = { type: 'del-again' as const, clientId, seq, origin: new Uint8Array(0) as Uint8Array };
  let answer: RkvMessage | undefined;
  const requestId = d.cluster.clientSend(r, d.memtables[r] as Ref, message, (_id, _latency, _ok, reply) => {
    answer = reply as RkvMessage;
  });
  message.origin = encodeOrigin({ kind: 'client', endpoint: { address: 'client', port: r }, requestId });
  settle(d, 200 * US);
  assert.equal(answer?.type, 'del-ok', `replica ${r}'s memtable answered the retry`);
  return answer?.type === 'del-ok' ? answer.existed : -1;
}

function commitCput(d: RkvSimDeployment, at: number, message: RkvMessage): RkvMessage | undefined {
  let answer: RkvMessage | undefined;
  for (let attempt = 0; attempt < 40 && answer?.type !== 'cond-ok' && answer?.type !== 'put-ok'; attempt++)
    answer = ask(d, at, d.consensus[at] as Ref, message, 300 * US);
  return answer;
}
