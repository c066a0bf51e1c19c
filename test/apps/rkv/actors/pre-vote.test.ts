/**
 * Pre-vote (consensus-setup.preVote, consensus-actor.ts standOrPreVote), step by step on a
 * SimCluster with durable logs: a follower cut off from the group for many election timeouts
 * rejoins without deposing the leader the others kept hearing — the leader keeps its ballot and
 * its lease, and writes go on. The same scenario without pre-vote deposes it (the test's control:
 * the assertions below can fail). With the leader really gone, pre-vote still elects a new one.
 * A pre-vote the voter would grant changes neither its promise nor its round (a prepare does). A
 * grant that arrives after the pre-voter stepped down on a higher ballot does not make it stand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import type { RkvMessage } from '../../../../src/apps/rkv/actors/messages.ts';
import { crashReplica, type RkvSimDeployment } from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { makeBallot, replicaId } from '../../../../src/apps/rkv/paxos/types.ts';
import {
  deployElecting,
  leaderOf,
  putMessage as put,
  settle as run,
  consensusView as view,
} from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;
/** deployElecting's election timeout (the lease). */
const ELECTION_TIMEOUT_NS = 250 * US;

function putAt(d: RkvSimDeployment, at: number, seq: number): RkvMessage | undefined {
  let answer: RkvMessage | undefined;
  d.cluster.clientSend(at, d.consensus[at] as Ref, put(1, seq, 3, seq), (_id, _l, _ok, reply) => {
    answer = reply as RkvMessage;
    d.cluster.kernel.stop();
  });
  run(d, 300 * US);
  return answer;
}

/** Cuts a follower off for about 3 ms (≥ 6 election timeouts) while the others write, then heals. */
function rejoin(preVote: boolean): {
  d: RkvSimDeployment;
  leader: number;
  ballot: number;
  cutOff: number;
  leaderChanges: number;
} {
  const d = deployElecting(3, { durableLog: true, consensus: { preVote } });
  const leader = leaderOf(d);
  const ballot = view(d, leader).ballot;
  const cutOff = (leader + 1) % 3;
  d.cluster.isolate(cutOff);
  for (let seq = 1; seq <= 10; seq++) {
    assert.equal(putAt(d, leader, seq)?.type, 'put-ok');
    run(d, 300 * US);
  }
  d.cluster.heal();
  // Watch for a leader change for 2 ms after the heal, with a put every 200 µs.
  let leaderChanges = 0;
  for (let step = 0; step < 10; step++) {
    putAt(d, leader, 100 + step);
    run(d, 200 * US);
    if (view(d, leader).role !== 'leader' || view(d, leader).ballot !== ballot) leaderChanges++;
  }
  return { d, leader, ballot, cutOff, leaderChanges };
}

test('with pre-vote, a replica cut off for many timeouts rejoins without deposing the leader', () => {
  const { d, leader, ballot, cutOff, leaderChanges } = rejoin(true);
  const back = view(d, cutOff);
  assert.ok(
    back.preVotes >= 3,
    `the cut-off replica asked for votes while away (${back.preVotes} pre-votes)`,
  );
  assert.equal(back.elections, 0, 'it never stood: no majority would have promised');
  assert.equal(leaderChanges, 0, 'the leader kept leading at its ballot');
  assert.equal(view(d, leader).ballot, ballot);
  assert.equal(back.role, 'follower');
  assert.equal(back.promised, ballot, 'it follows the leader it hears');
  assert.equal(back.applied, view(d, leader).commit, 'and caught up');
  assert.ok(view(d, leader).leaseUntilNs > d.cluster.kernel.now(), 'the leader holds its lease');
});

test('without pre-vote, the same rejoin deposes the leader (the control)', () => {
  const { d, cutOff, leaderChanges } = rejoin(false);
  assert.ok(view(d, cutOff).elections >= 3, 'the cut-off replica stood again and again');
  assert.ok(leaderChanges > 0, 'its higher round deposed the leader');
});

test('with pre-vote, a crashed leader is still replaced', () => {
  const d = deployElecting(3, { durableLog: true, consensus: { preVote: true } });
  const leader = leaderOf(d);
  crashReplica(d, leader);
  run(d, 2 * MS);
  const next = leaderOf(d);
  assert.notEqual(next, leader);
  assert.equal(putAt(d, next, 1)?.type, 'put-ok', 'the new leader commits with the other survivor');
});

test('a pre-vote it would grant leaves the voter’s promise and round as they were', () => {
  const d = deployElecting(3, { durableLog: true, consensus: { preVote: true } });
  const leader = leaderOf(d);
  const voter = (leader + 1) % 3;
  const asker = (leader + 2) % 3;
  // Cut off for longer than a lease, the voter is no longer sticky: it would promise a higher
  // ballot. (Its own pre-votes reach no one, so it never stands and its state stays put.)
  d.cluster.isolate(voter);
  run(d, 3 * ELECTION_TIMEOUT_NS);
  const before = view(d, voter);
  assert.equal(before.elections, 0, 'it never stood');
  const ballot = makeBallot(before.maxRound + 5, replicaId(asker));
  assert.ok(ballot > before.promised, 'a ballot above its promise');
  // Delivered on the voter's node (the isolation drops only its answer).
  d.cluster.clientSend(
    voter,
    d.consensus[voter] as Ref,
    { type: 'pre-vote', from: asker, ballot, fromSlot: before.applied },
    () => {},
  );
  run(d, 100 * US);
  const after = view(d, voter);
  assert.equal(after.promised, before.promised, 'the promise is unchanged');
  assert.equal(after.maxRound, before.maxRound, 'the round it stands at next is unchanged');
  assert.equal(after.role, 'follower');
  // The control: a prepare at the same ballot does raise both.
  d.cluster.clientSend(
    voter,
    d.consensus[voter] as Ref,
    { type: 'prepare', from: asker, ballot, fromSlot: before.applied },
    () => {},
  );
  run(d, 100 * US);
  assert.equal(view(d, voter).promised, ballot, 'a prepare is promised');
  assert.equal(view(d, voter).maxRound, before.maxRound + 5);
});

test('a late pre-vote grant does not make a replica that stepped down stand', () => {
  const d = deployElecting(3, { durableLog: true, consensus: { preVote: true } });
  const leader = leaderOf(d);
  const x = (leader + 1) % 3;
  const y = (leader + 2) % 3;
  const deliver = (message: RkvMessage): void => {
    d.cluster.clientSend(x, d.consensus[x] as Ref, message, () => {});
    run(d, 20 * US);
  };
  // Cut off, x times out and asks for pre-votes (no one hears them); a grant from y is a majority.
  d.cluster.isolate(x);
  const round0 = view(d, x).maxRound;
  for (let t = 0; t < 5 * MS && view(d, x).preVotes === 0; t += 10 * US) run(d, 10 * US);
  assert.equal(view(d, x).preVotes, 1, 'x asked for pre-votes');
  deliver({
    type: 'pre-vote-reply',
    from: y,
    ballot: makeBallot(round0 + 1, replicaId(x)),
    granted: true,
    promised: 0,
  });
  assert.equal(view(d, x).elections, 1, 'with a majority of grants it stood');
  // Its election times out (still cut off): it asks for pre-votes one round up…
  const round1 = view(d, x).maxRound;
  for (let t = 0; t < 5 * MS && view(d, x).preVotes === 1; t += 10 * US) run(d, 10 * US);
  assert.equal(view(d, x).preVotes, 2);
  assert.equal(view(d, x).role, 'candidate');
  // …then learns of a higher ballot and steps down…
  deliver({
    type: 'reject',
    from: y,
    ballot: view(d, x).ballot,
    promised: makeBallot(round1 + 5, replicaId(y)),
  });
  assert.equal(view(d, x).role, 'follower', 'a higher ballot: it stepped down');
  // …and a late grant of that pre-vote arrives: it must not stand on it.
  deliver({
    type: 'pre-vote-reply',
    from: y,
    ballot: makeBallot(round1 + 1, replicaId(x)),
    granted: true,
    promised: 0,
  });
  assert.equal(view(d, x).elections, 1, 'no stand on a grant from before it stepped down');
  assert.equal(view(d, x).role, 'follower');
});
