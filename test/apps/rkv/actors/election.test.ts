/**
 * The consensus actor with timers (consensus-actor.ts), step by step on a fault-free SimCluster
 * where the test cuts links itself: election after the leader is cut off, the old leader's lease
 * running out (it refuses reads) and its step-down after the heal; exactly-once puts through the
 * sessions table; truncation once every replica applied; a replica cut off for long made a
 * non-voting laggard while the leader's log stays bounded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { NO_LEADER, type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import type { RkvSimDeployment } from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { deployElecting, putMessage as put, settle, consensusView as view } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const _US = 1_000;
const MS = 1_000_000;

function deploy(maxLogEntries?: number): RkvSimDeployment {
  return deployElecting(3, maxLogEntries === undefined ? {} : { consensus: { maxLogEntries } });
}

/** Sends from a client at `replica`'s node to its consensus actor; runs until answered (≤ 1 ms). */
function ask(deployment: RkvSimDeployment, replica: number, message: RkvMessage): RkvMessage | undefined {
  const { cluster } = deployment;
  let answer: RkvMessage | undefined;
  cluster.clientSend(replica, deployment.consensus[replica] as Ref, message, (_id, _l, _ok, reply) => {
    answer = reply as RkvMessage;
    cluster.kernel.stop();
  });
  cluster.kernel.run({ untilNs: cluster.kernel.now() + MS });
  return answer;
}

const get = (key: number): RkvMessage => ({ type: 'get', key: rkvKey(key) });

function leaders(deployment: RkvSimDeployment): number[] {
  return [0, 1, 2].filter((r) => view(deployment, r).role === 'leader');
}

test('the setup leader is elected; followers refuse puts and reads with its id as the hint', () => {
  const deployment = deploy();
  assert.deepEqual(leaders(deployment), [0]);
  assert.deepEqual(ask(deployment, 0, put(1, 1, 5, 50))?.type, 'put-ok');
  assert.deepEqual(ask(deployment, 0, get(5)), { type: 'value', found: true, value: new Uint8Array([50]) });
  for (const message of [put(1, 2, 5, 51), get(5)]) {
    const answer = ask(deployment, 1, message);
    assert.equal(answer?.type, 'refused');
    assert.equal(answer?.type === 'refused' ? answer.leader : NO_LEADER, 0);
  }
});

test('a cut-off leader loses its lease and refuses reads; a new leader is elected, serves the last write, and the old one steps down after the heal', () => {
  const deployment = deploy();
  const { cluster } = deployment;
  assert.equal(ask(deployment, 0, put(1, 1, 7, 1))?.type, 'put-ok');
  const oldBallot = view(deployment, 0).ballot;
  cluster.isolate(0);
  settle(deployment, 2 * MS);
  const elected = leaders(deployment).filter((r) => r !== 0);
  assert.equal(elected.length, 1, `one new leader among 1 and 2: ${JSON.stringify(leaders(deployment))}`);
  const leader = elected[0]!;
  assert.ok(view(deployment, leader).ballot > oldBallot);
  // The old leader has heard no majority for 2 ms > T: no lease, so no (possibly stale) read.
  assert.equal(view(deployment, 0).role, 'leader', 'cut off, it has not heard of the new ballot yet');
  assert.ok(view(deployment, 0).leaseUntilNs < cluster.kernel.now());
  assert.equal(ask(deployment, 0, get(7))?.type, 'refused');
  // The new leader holds the write the old one acknowledged, and takes new ones.
  assert.deepEqual(ask(deployment, leader, get(7)), {
    type: 'value',
    found: true,
    value: new Uint8Array([1]),
  });
  assert.equal(ask(deployment, leader, put(1, 2, 7, 2))?.type, 'put-ok');
  cluster.heal();
  settle(deployment, 2 * MS);
  assert.equal(view(deployment, 0).role, 'follower');
  const applied = [0, 1, 2].map((r) => view(deployment, r).applied);
  assert.ok(
    applied.every((a) => a === applied[0]),
    `every replica applied the same log: ${applied.join(',')}`,
  );
});

test('exactly-once: a retried put that was already applied is answered but not applied again', () => {
  const deployment = deploy();
  assert.equal(ask(deployment, 0, put(7, 1, 3, 10))?.type, 'put-ok');
  assert.equal(ask(deployment, 0, put(8, 1, 3, 20))?.type, 'put-ok');
  // Client 7's retry of seq 1 (its answer "was lost"): answered as done, key 3 keeps client 8's value.
  assert.deepEqual(ask(deployment, 0, put(7, 1, 3, 10)), { type: 'put-ok', slot: 0 });
  assert.deepEqual(ask(deployment, 0, get(3)), { type: 'value', found: true, value: new Uint8Array([20]) });
  // Two copies of one command in flight at once: both are answered, the second is skipped at apply.
  const { cluster } = deployment;
  let answered = 0;
  for (let copy = 0; copy < 2; copy++) {
    cluster.clientSend(0, deployment.consensus[0] as Ref, put(9, 1, 4, 30), (_id, _l, _ok, reply) => {
      if ((reply as RkvMessage).type === 'put-ok') answered++;
    });
  }
  settle(deployment, MS);
  assert.equal(answered, 2);
  assert.equal(view(deployment, 0).duplicatesSkipped, 1);
  for (const r of [1, 2]) assert.equal(view(deployment, r).duplicatesSkipped, 1, `replica ${r} skips it too`);
});

test('applied entries are truncated once every replica applied them', () => {
  const deployment = deploy();
  for (let i = 1; i <= 60; i++) assert.equal(ask(deployment, 0, put(1, i, i % 7, i))?.type, 'put-ok');
  settle(deployment, MS);
  for (const r of [0, 1, 2]) {
    const seen = view(deployment, r);
    assert.ok(seen.applied >= 61, `replica ${r} applied ${seen.applied}`);
    assert.ok(
      seen.truncated >= seen.applied - 2,
      `replica ${r} truncated ${seen.truncated} of ${seen.applied}`,
    );
    assert.ok(seen.logRecords <= 2, `replica ${r} holds ${seen.logRecords} records`);
  }
});

test('a replica cut off for long is truncated past (a laggard, non-voting); the leader keeps at most maxLogEntries', () => {
  const deployment = deploy(20);
  const { cluster } = deployment;
  cluster.isolate(2);
  for (let i = 1; i <= 80; i++) assert.equal(ask(deployment, 0, put(1, i, i % 5, i))?.type, 'put-ok');
  const leader = view(deployment, 0);
  assert.equal(leader.laggardsMarked, 1);
  assert.ok(leader.logRecords <= 22, `the leader holds ${leader.logRecords} records`);
  cluster.heal();
  settle(deployment, 2 * MS);
  const laggard = view(deployment, 2);
  assert.ok(laggard.laggard, 'replica 2 learned it was truncated past');
  assert.equal(laggard.role, 'follower');
  assert.equal(leaders(deployment).join(), '0', 'the laggard never stood; replica 0 still leads');
  // The two voting replicas carry on.
  assert.equal(ask(deployment, 0, put(1, 81, 1, 81))?.type, 'put-ok');
  assert.deepEqual(ask(deployment, 0, get(1)), { type: 'value', found: true, value: new Uint8Array([81]) });
});

test('a leader change with the log past maxLogEntries marks no healthy follower a laggard: writes go on', () => {
  const deployment = deploy(20);
  const { cluster } = deployment;
  for (let i = 1; i <= 60; i++) assert.equal(ask(deployment, 0, put(1, i, i % 5, i))?.type, 'put-ok');
  cluster.isolate(0);
  settle(deployment, 2 * MS);
  const elected = leaders(deployment).filter((r) => r !== 0);
  assert.equal(elected.length, 1, `one new leader among 1 and 2: ${JSON.stringify(leaders(deployment))}`);
  const leader = elected[0]!;
  const follower = leader === 1 ? 2 : 1;
  // Its commit point is past maxLogEntries; the follower that elected it has not reported under the
  // new ballot yet when the first slot is chosen — that must not make it a laggard.
  for (let i = 61; i <= 70; i++) {
    assert.equal(ask(deployment, leader, put(1, i, i % 5, i))?.type, 'put-ok', `put ${i} at the new leader`);
  }
  assert.equal(view(deployment, leader).laggardsMarked, 0, 'the new leader marked nobody');
  assert.equal(view(deployment, follower).laggard, false);
  cluster.heal();
  settle(deployment, 2 * MS);
  const applied = [0, 1, 2].map((r) => view(deployment, r).applied);
  assert.ok(
    applied.every((a) => a === applied[0]),
    `every replica applied the same log: ${applied.join(',')}`,
  );
  assert.deepEqual(ask(deployment, leader, get(0)), {
    type: 'value',
    found: true,
    value: new Uint8Array([70]),
  });
});
