/**
 * A new leader fills the log from what its promisers accepted (Multi-Paxos phase 1 over every
 * unchosen slot, "Paxos Made Simple" P2c): a value accepted by a minority is re-proposed, the
 * value accepted at the highest ballot wins, a slot reported chosen is adopted without a vote, and
 * a hole no promiser saw becomes a no-op. Replicas that missed slots learn them by catch-up.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Ballot,
  clientId,
  type KvCommand,
  type LogCommand,
  makeBallot,
  type PromiseEntry,
  replicaId,
} from '../../../../src/apps/rkv/paxos/index.ts';
import { ManualCluster, MS, stateHex } from './manual-cluster.ts';

function put(client: number, key: string, value: string): LogCommand<KvCommand> {
  return { kind: 'request', clientId: clientId(client), seq: 1, payload: { op: 'put', key, value } };
}

test('a value only a minority accepted survives the leader crash; the hole before it becomes a no-op', () => {
  const cluster = new ManualCluster({ replicas: 3, timeoutFraction: [0, 0.5, 0.9] });
  cluster.electFirst(); // replica 0 leads at (1, 0)
  cluster.request(0, 1, 1, { op: 'put', key: 'a', value: 'A' }); // slot 1
  cluster.request(0, 2, 1, { op: 'put', key: 'b', value: 'B' }); // slot 2
  cluster.request(0, 3, 1, { op: 'put', key: 'c', value: 'C' }); // slot 3
  // Only slot 2's accept reaches anyone (replica 1); then the leader dies before hearing back.
  const slot2ToReplica1 = cluster.take(
    (m) => m.message.type === 'accept' && m.to === 1 && m.message.entries.some((e) => e.slot === 2),
  );
  cluster.inFlight = [];
  for (const { to, message } of slot2ToReplica1) cluster.handle(to, message);
  cluster.inFlight = [];
  cluster.crash(0);

  // Replica 1 times out and campaigns; replica 2 promises; replica 1 leads at (2, 1).
  cluster.nowNs = 200 * MS;
  cluster.handle(1, { type: 'tick' });
  const leaderAccepts: { entries: string; ballot: Ballot }[] = [];
  cluster.deliverAll((m) => {
    if (m.message.type === 'accept' && m.from === 1 && m.to === 2) {
      leaderAccepts.push({
        ballot: m.message.ballot,
        entries: JSON.stringify(m.message.entries.map((e) => [e.slot, e.command.kind])),
      });
    }
    return false;
  });
  const status = cluster.replica(1).status();
  assert.equal(status.role, 'leader');
  assert.equal(status.ownBallot, makeBallot(2, replicaId(1)));
  assert.deepEqual(
    leaderAccepts[0],
    {
      ballot: makeBallot(2, replicaId(1)),
      entries: JSON.stringify([
        [1, 'noop'],
        [2, 'request'],
      ]),
    },
    'slot 1 (seen by no promiser) is filled with a no-op; slot 2 re-proposed; slot 3 (unseen) left free',
  );
  assert.equal(status.appliedThrough, 2);
  for (const id of [1, 2]) {
    const machine = cluster.machines[id]!;
    assert.equal(machine.get('b'), 'B', `replica ${id} applied the minority-accepted write`);
    assert.equal(machine.get('a'), undefined);
    assert.equal(machine.get('c'), undefined);
  }
  assert.deepEqual(cluster.resultsFor(2, 1), [{ op: 'put' }], 'the new leader answers the client of slot 2');

  // The old leader comes back holding A and C accepted at (1, 0). It learns slot 1 = no-op and
  // slot 2 = B by catch-up, and its stale C at slot 3 is overwritten by the new leader's proposal.
  cluster.restart(0);
  cluster.request(1, 4, 1, { op: 'put', key: 'd', value: 'D' }); // slot 3 at (2, 1)
  for (let t = 210; t <= 300; t += 10) {
    cluster.tickAll(t * MS);
    cluster.deliverAll();
  }
  for (const id of [0, 1, 2]) {
    assert.equal(cluster.replica(id).status().appliedThrough, 3, `replica ${id} caught up`);
    assert.equal(stateHex(cluster.machines[id]!), stateHex(cluster.machines[1]!));
  }
  assert.equal(cluster.machines[0]!.get('c'), undefined, 'the unchosen C never applies anywhere');
  assert.equal(cluster.machines[0]!.get('d'), 'D');
});

/**
 * Replica 0 of five campaigns at round 4 and gets two promises (with its own, a majority) whose
 * reports disagree: the merge must take the highest ballot's value, adopt chosen reports, and
 * re-propose only what is not chosen.
 */
function campaignWithReports(bugs: { ignorePromisedValues?: boolean }): ManualCluster {
  const cluster = new ManualCluster({ replicas: 5, config: { unsafeTestingBugs: bugs } });
  cluster.handle(0, {
    type: 'prepare',
    from: replicaId(4),
    ballot: makeBallot(3, replicaId(4)),
    fromSlot: 1,
  });
  cluster.tickAll(40 * MS);
  const ballot = cluster.replica(0).status().ownBallot;
  assert.equal(ballot, makeBallot(4, replicaId(0)), 'a campaign goes above every round seen');
  cluster.inFlight = [];
  const report = (
    from: number,
    entries: readonly PromiseEntry<KvCommand>[],
  ): Parameters<ManualCluster['handle']>[1] => ({
    type: 'promise',
    from: replicaId(from),
    ballot,
    truncatedThrough: 0,
    entries,
  });
  cluster.handle(
    0,
    report(1, [
      { slot: 1, ballot: makeBallot(1, replicaId(1)), command: put(11, 'k', 'X'), chosen: false },
      { slot: 3, ballot: makeBallot(2, replicaId(2)), command: put(13, 'z', 'Z'), chosen: false },
    ]),
  );
  assert.equal(cluster.replica(0).status().role, 'candidate', 'two of five is no majority');
  cluster.handle(
    0,
    report(2, [
      { slot: 1, ballot: makeBallot(2, replicaId(2)), command: put(12, 'k', 'Y'), chosen: false },
      { slot: 2, ballot: makeBallot(1, replicaId(1)), command: put(14, 'w', 'W'), chosen: true },
    ]),
  );
  assert.equal(cluster.replica(0).status().role, 'leader');
  return cluster;
}

test('the merge takes the highest-ballot value, adopts chosen reports without a vote, and applies in order', () => {
  const cluster = campaignWithReports({});
  const accepts = cluster.inFlight.filter((m) => m.message.type === 'accept' && m.to === 1);
  assert.equal(accepts.length, 1);
  const accept = accepts[0]!.message;
  assert.ok(accept.type === 'accept');
  assert.deepEqual(
    accept.entries.map((e) => [e.slot, e.command.kind === 'request' ? e.command.payload : 'noop']),
    [
      [1, { op: 'put', key: 'k', value: 'Y' }],
      [3, { op: 'put', key: 'z', value: 'Z' }],
    ],
    'slot 1 takes Y (ballot round 2 beats X at round 1); slot 2 is chosen already and is not re-voted',
  );
  assert.equal(cluster.replica(0).status().appliedThrough, 0, 'slot 2 waits for slot 1: apply is in order');

  // Two more acceptors accept: slots 1 and 3 are chosen, and 1, 2, 3 apply in that order.
  cluster.deliverAll((m) => m.to === 3 || m.to === 4);
  assert.equal(cluster.replica(0).status().appliedThrough, 3);
  assert.equal(cluster.machines[0]!.get('k'), 'Y');
  assert.equal(cluster.machines[0]!.get('w'), 'W');
  assert.equal(cluster.machines[0]!.get('z'), 'Z');
});

test('the ignorePromisedValues bug (used by the DST mutation check) really drops promised values', () => {
  const cluster = campaignWithReports({ ignorePromisedValues: true });
  const accept = cluster.inFlight.find((m) => m.message.type === 'accept' && m.to === 1)?.message;
  assert.ok(accept?.type === 'accept');
  assert.deepEqual(
    accept.entries.map((e) => [e.slot, e.command.kind]),
    [
      [1, 'noop'],
      [3, 'noop'],
    ],
  );
});

test('a follower that missed an accept asks the leader for the chosen entries and applies them', () => {
  const cluster = new ManualCluster({ replicas: 3 });
  cluster.electFirst();
  cluster.request(0, 5, 1, { op: 'put', key: 'q', value: '1' });
  // Replica 2 never sees the accept for slot 1.
  cluster.deliverAll((m) => m.message.type === 'accept' && m.to === 2);
  assert.equal(cluster.replica(0).status().appliedThrough, 1);
  // The commit (learn) reached replica 2, which had no value: it asked for one and got it.
  assert.equal(cluster.replica(2).status().appliedThrough, 1);
  assert.equal(cluster.machines[2]!.get('q'), '1');
});
