/**
 * Catch-up answers are bounded by bytes as well as entries (consensus-actor.ts CATCHUP_BYTES): a
 * follower cut off while the others commit 20 puts of 8 000-byte values (~160 KB, far above one
 * 65 000-byte live datagram) catches up by the log — in answers of at most 4 such entries (32 KiB),
 * asking again from where each stopped — without becoming a laggard or needing a state transfer,
 * and then serves every value as leader. Before the budget one answer carried all 20 entries.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { CATCHUP_BYTES } from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { askWithin, consensusView, deployElecting, settle } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const MS = 1_000_000;
const VALUE_BYTES = 8_000;
const PUTS = 20;

function bigValue(i: number): Uint8Array {
  return Uint8Array.from({ length: VALUE_BYTES }, (_, j) => (i * 31 + j) & 0xff);
}

test('a follower behind by ~160 KB of entries catches up by the log in answers of at most CATCHUP_BYTES', () => {
  const deployment = deployElecting(3, {
    memtableLimitBytes: 1 << 20,
    consensus: { heartbeatNs: 200_000, electionTimeoutNs: 1_000_000, preVote: true },
  });
  const { cluster } = deployment;
  const leader = deployment.consensus[0] as Ref;
  cluster.isolate(2);
  for (let i = 1; i <= PUTS; i++) {
    const answer = askWithin(deployment, 0, leader, {
      type: 'put',
      clientId: 1,
      seq: i,
      key: rkvKey(i),
      value: bigValue(i),
    });
    assert.equal(answer?.type, 'put-ok', `put ${i}`);
  }
  const behind = consensusView(deployment, 2).applied;
  cluster.heal();
  settle(deployment, 10 * MS);
  const follower = consensusView(deployment, 2);
  const leaderView = consensusView(deployment, 0);
  assert.equal(follower.laggard, false, 'not truncated past');
  assert.equal(follower.transfers, 0, 'no state transfer');
  assert.ok(follower.applied >= leaderView.commit, `applied ${follower.applied} of ${leaderView.commit}`);
  assert.equal(follower.caughtUp, leaderView.commit - behind, 'every missing entry came by catch-up');
  const perAnswer = Math.floor(CATCHUP_BYTES / (41 + 16 + VALUE_BYTES));
  assert.equal(perAnswer, 4);
  assert.ok(
    follower.catchupAnswers >= Math.ceil(follower.caughtUp / perAnswer),
    `${follower.caughtUp} entries in ${follower.catchupAnswers} answers: at most ${perAnswer} each`,
  );
  // The follower now holds every value: make it lead (cut the leader off) and read them back.
  cluster.isolate(0);
  settle(deployment, 10 * MS);
  const newLeader = [1, 2].find((r) => consensusView(deployment, r).role === 'leader');
  assert.ok(newLeader !== undefined, 'a new leader among 1 and 2');
  for (let i = 1; i <= PUTS; i++) {
    const answer = askWithin(deployment, newLeader, deployment.consensus[newLeader] as Ref, {
      type: 'get',
      key: rkvKey(i),
    });
    assert.deepEqual(
      answer,
      { type: 'value', found: true, value: bigValue(i) },
      `key ${i} at replica ${newLeader}`,
    );
  }
});
