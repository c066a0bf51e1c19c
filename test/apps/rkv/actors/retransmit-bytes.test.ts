/**
 * A leader's heartbeat retransmits unacknowledged accepts within a byte budget
 * (consensus-actor.ts RETRANSMIT_BYTES), oldest slots first: on a live node the run's outputs cross
 * the ring as one result frame of at most 1 MiB, and 64 slots of 8 KB values to two followers
 * (~1.06 MB) made the heartbeat run fail whole, every tick. Here a leader cut off from both
 * followers holds 100 unchosen puts of 8 000-byte values; every heartbeat run retransmits at most
 * RETRANSMIT_BYTES of accepts, and once the followers are back every put is chosen.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { ACCEPT_BYTES, RETRANSMIT_BYTES } from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { consensusView, deployElecting, settle } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const MS = 1_000_000;
const HEARTBEAT_NS = 200_000;
const VALUE_BYTES = 8_000;
const PUTS = 100;

test('a heartbeat run retransmits at most RETRANSMIT_BYTES of accepts, oldest first, and every put is then chosen', () => {
  const deployment = deployElecting(3, {
    memtableLimitBytes: 4 << 20,
    // The followers do not time out while the leader is cut off (a few milliseconds).
    consensus: { heartbeatNs: HEARTBEAT_NS, electionTimeoutNs: 50 * MS, preVote: true },
  });
  const { cluster } = deployment;
  const leader = deployment.consensus[0] as Ref;
  assert.equal(consensusView(deployment, 0).role, 'leader');
  const committed = consensusView(deployment, 0).commit;
  cluster.isolate(0);
  const answers: (RkvMessage | undefined)[] = [];
  for (let i = 1; i <= PUTS; i++) {
    const value = Uint8Array.from({ length: VALUE_BYTES }, (_, j) => (i * 31 + j) & 0xff);
    cluster.clientSend(
      0,
      leader,
      { type: 'put', clientId: 1, seq: i, key: rkvKey(i), value },
      (_id, _l, _ok, reply) => {
        answers[i] = reply as RkvMessage;
      },
    );
  }
  settle(deployment, MS);
  assert.equal(consensusView(deployment, 0).commit, committed, 'nothing chosen: no follower reachable');
  const accept = ACCEPT_BYTES + rkvKey(1).length + VALUE_BYTES;
  // Heartbeat runs are at least HEARTBEAT_NS apart: each window of that length holds at most one.
  const perRun: number[] = [];
  for (let window = 0; window < 20; window++) {
    const before = consensusView(deployment, 0).retransmits;
    settle(deployment, HEARTBEAT_NS);
    perRun.push(consensusView(deployment, 0).retransmits - before);
  }
  const most = Math.max(...perRun);
  assert.ok(most > 0, 'the leader retransmitted');
  assert.ok(
    most * accept <= RETRANSMIT_BYTES,
    `at most ${most} accepts (${most * accept} bytes) per heartbeat run; budget ${RETRANSMIT_BYTES}: ${perRun}`,
  );
  // The budget binds here (without it: 64 slots × 2 followers = 128 accepts per run).
  assert.equal(most, 2 * Math.floor(RETRANSMIT_BYTES / (2 * accept)), `per run: ${perRun}`);
  cluster.heal();
  settle(deployment, 20 * MS);
  for (let i = 1; i <= PUTS; i++)
    assert.equal(answers[i]?.type, 'put-ok', `put ${i}: ${JSON.stringify(answers[i])}`);
  for (const r of [1, 2])
    assert.ok(consensusView(deployment, r).applied >= committed + PUTS, `replica ${r} applied every put`);
});
