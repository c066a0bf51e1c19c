/**
 * Multi-Paxos leader election (phase 1) and the common case (phase 2 + learn), step by step on a
 * hand-driven group (manual-cluster.ts): ballots, promises made durable before they are sent,
 * rejection of stale ballots, leader stickiness, and "one accept round and one learn round".
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ballotLeader,
  ballotRound,
  makeBallot,
  PaxosSimulatedCrash,
  replicaId,
} from '../../../../src/apps/rkv/paxos/index.ts';
import { ManualCluster, MS } from './manual-cluster.ts';

test('the replica whose timer fires first wins with ballot (round 1, its id); the others follow it', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  cluster.tickAll(40 * MS);
  const prepares = cluster.inFlight.filter((m) => m.message.type === 'prepare');
  assert.equal(prepares.length, 2, 'a prepare to each peer');
  assert.equal(cluster.replica(0).status().role, 'candidate');
  cluster.deliverAll();

  const ballot = makeBallot(1, replicaId(0));
  const leader = cluster.replica(0).status();
  assert.equal(leader.role, 'leader');
  assert.equal(leader.ownBallot, ballot);
  assert.equal(ballotRound(leader.ownBallot), 1);
  assert.equal(ballotLeader(leader.ownBallot), 0);
  for (const id of [1, 2]) {
    const status = cluster.replica(id).status();
    assert.equal(status.role, 'follower');
    assert.equal(status.promised, ballot);
    assert.equal(status.leaderHint, 0, 'the heartbeat told the follower who leads');
    assert.equal(cluster.storages[id]!.durablePromised, ballot, 'the promise is on disk');
  }
});

test('a promise is durable before the replica returns it, and a crash inside that sync sends nothing', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  cluster.tickAll(40 * MS);
  const [toReplica1] = cluster.take((m) => m.message.type === 'prepare' && m.to === 1);
  assert.ok(toReplica1);
  const syncsBefore = cluster.storages[1]!.syncCount;
  const outputs = cluster.handle(1, toReplica1.message);
  assert.equal(outputs.send[0]?.message.type, 'promise');
  assert.equal(cluster.storages[1]!.syncCount, syncsBefore + 1);
  assert.equal(cluster.storages[1]!.durablePromised, makeBallot(1, replicaId(0)));

  // Replica 2 dies inside the sync of its promise: handle throws, so the host never sends it.
  const [toReplica2] = cluster.take((m) => m.message.type === 'prepare' && m.to === 2);
  assert.ok(toReplica2);
  cluster.storages[2]!.armCrashOnSync(0);
  const sentBefore = cluster.inFlight.length;
  assert.throws(() => cluster.handle(2, toReplica2.message), PaxosSimulatedCrash);
  assert.equal(cluster.inFlight.length, sentBefore, 'nothing left the crashed replica');
  assert.equal(cluster.storages[2]!.durablePromised, 0, 'the promise never reached disk');
});

test('a prepare below the promise is rejected with the promise, and the stale candidate steps down', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  const high = makeBallot(2, replicaId(1));
  const promised = cluster.handle(2, { type: 'prepare', from: replicaId(1), ballot: high, fromSlot: 1 });
  assert.equal(promised.send[0]?.message.type, 'promise');
  assert.equal(cluster.replica(2).status().promised, high);

  // A prepare at a lower ballot now gets a reject carrying the higher promise, and no promise.
  const low = makeBallot(1, replicaId(0));
  const outputs = cluster.handle(2, { type: 'prepare', from: replicaId(0), ballot: low, fromSlot: 1 });
  assert.deepEqual(outputs.send, [
    { to: 0, message: { type: 'reject', from: 2, ballot: low, promised: high } },
  ]);
  assert.equal(cluster.replica(2).status().promised, high, 'a lower prepare never lowers the promise');
  // An accept below the promise is refused the same way (phase 2 respects phase 1).
  const accept = cluster.handle(2, {
    type: 'accept',
    from: replicaId(0),
    ballot: low,
    entries: [{ slot: 1, command: { kind: 'noop' } }],
    commitThrough: 0,
  });
  assert.equal(accept.send[0]?.message.type, 'reject');
  assert.equal(cluster.storages[2]!.durableAcceptedCount, 0, 'nothing accepted below the promise');

  // A candidate that hears a reject above its own ballot gives up its campaign.
  cluster.tickAll(40 * MS); // replica 0 campaigns (at round 1: it never saw round 2)
  const own = cluster.replica(0).status().ownBallot;
  assert.equal(cluster.replica(0).status().role, 'candidate');
  cluster.handle(0, {
    type: 'reject',
    from: replicaId(1),
    ballot: own,
    promised: makeBallot(9, replicaId(1)),
  });
  assert.equal(cluster.replica(0).status().role, 'follower');
});

test('a working leader is not deposed by a returning replica (stickiness), but is when stickiness is off', () => {
  for (const leaderStickiness of [true, false]) {
    const cluster = new ManualCluster({ replicas: 3, config: { leaderStickiness } });
    cluster.electFirst();
    cluster.tickAll(50 * MS);
    cluster.deliverAll(); // heartbeats and acks: the leader heard its majority just now
    const intruder = makeBallot(5, replicaId(2));
    cluster.handle(0, { type: 'prepare', from: replicaId(2), ballot: intruder, fromSlot: 1 });
    cluster.handle(1, { type: 'prepare', from: replicaId(2), ballot: intruder, fromSlot: 1 });
    const role = cluster.replica(0).status().role;
    if (leaderStickiness) {
      assert.equal(role, 'leader', 'a sticky leader ignores a prepare while its majority is fresh');
      assert.notEqual(
        cluster.replica(1).status().promised,
        intruder,
        'a follower of a live leader ignores it too',
      );
    } else {
      assert.equal(role, 'follower', 'without stickiness the higher ballot wins');
      assert.equal(cluster.replica(0).status().promised, intruder);
    }
  }
});

test('the common case is one accept round and one learn round, and followers apply on the commit', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  cluster.electFirst();
  cluster.inFlight = [];

  const proposed = cluster.request(0, 7, 1, { op: 'put', key: 'a', value: '1' });
  assert.deepEqual(
    proposed.send.map((o) => [o.message.type, o.to]),
    [
      ['accept', 1],
      ['accept', 2],
    ],
    'phase 2a straight away: no prepare for a sitting leader',
  );
  assert.equal(proposed.replies.length, 0, 'not chosen yet');

  // Phase 2b: both followers accept (durably) and answer.
  const accepts = cluster.take(() => true);
  for (const { to, message } of accepts) {
    const outputs = cluster.handle(to, message);
    assert.deepEqual(
      outputs.send.map((o) => o.message.type),
      ['accepted'],
    );
    assert.equal(
      cluster.storages[to]!.durableAcceptedCount >= 1,
      true,
      'accepted is durable before the reply',
    );
  }
  // The first accepted makes a majority (leader + 1): chosen, applied, replied, learn round sent.
  const [firstAck] = cluster.take((m) => m.message.type === 'accepted');
  assert.ok(firstAck);
  const learned = cluster.handle(0, firstAck.message);
  assert.deepEqual(cluster.resultsFor(7, 1), [{ op: 'put' }]);
  assert.deepEqual(
    learned.applied.map((entry) => entry.slot),
    [1],
  );
  assert.deepEqual(
    learned.send.map((o) => [o.message.type, o.to]),
    [
      ['commit', 1],
      ['commit', 2],
    ],
  );
  cluster.take((m) => m.message.type === 'accepted'); // the late second ack changes nothing
  for (const { to, message } of cluster.take(() => true)) {
    const outputs = cluster.handle(to, message);
    assert.deepEqual(
      outputs.applied.map((entry) => entry.slot),
      [1],
      `replica ${to} applies on the commit`,
    );
  }
  for (const machine of cluster.machines) assert.equal(machine.get('a'), '1');
});

test('followers redirect clients to the leader they follow; a candidate redirects with no hint', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  cluster.electFirst();
  const outputs = cluster.request(2, 9, 1, { op: 'get', key: 'a' });
  assert.deepEqual(outputs.replies, [{ type: 'redirect', clientId: 9, seq: 1, leaderHint: 0 }]);

  const campaigning = new ManualCluster({ replicas: 3 });
  campaigning.tickAll(40 * MS);
  const fromCandidate = campaigning.request(0, 9, 1, { op: 'get', key: 'a' });
  assert.deepEqual(fromCandidate.replies, [{ type: 'redirect', clientId: 9, seq: 1, leaderHint: null }]);
});

test('a leader cut off from its majority steps down (check-quorum) and stops taking writes', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  cluster.electFirst();
  cluster.down.add(1);
  cluster.down.add(2);
  for (let t = 50; t <= 200; t += 10) {
    cluster.tickAll(t * MS);
    cluster.deliverAll();
  }
  assert.notEqual(cluster.replica(0).status().role, 'leader');
  const outputs = cluster.request(0, 3, 1, { op: 'put', key: 'x', value: 'y' });
  assert.equal(outputs.replies[0]?.type, 'redirect');
});
