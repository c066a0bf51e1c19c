/**
 * A new leader counts a follower's silence from the chosen prefix it starts with (consensus-actor.ts
 * META.leadFrom), not from its own applied point: lead() makes every slot a promise flagged chosen
 * its commit point at once, before any follower could report under the new ballot. Counted from the
 * applied point, a prefix of more than maxLogEntries chosen slots made every follower that had not
 * yet acknowledged a heartbeat "silent for maxLogEntries commits": a laggard, truncated past, sent to
 * a state transfer it does not need. Before this test only one laggard DST seed (62) caught that.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { makeBallot, replicaId } from '../../../../src/apps/rkv/paxos/types.ts';
import { handBuiltGroup, type Ref, send } from './hand-built-group.ts';

const MS = 1_000_000;
const MAX_LOG = 4;
const CHOSEN = 3 * MAX_LOG;

test('a new leader with a chosen prefix of more than maxLogEntries marks no follower a laggard before it reports', () => {
  const { cluster, consensus, view, setup: staticSetup } = handBuiltGroup();
  // Timed (heartbeats, truncation). Replica 2 refuses to promise for a lease (the election
  // timeout) after the old leader's last accept; replica 0, a candidate, asks again every heartbeat
  // and gets its promise once the lease is over, before replica 2's own timeout (at least as long).
  // Replica 1's lease is 10 times longer: it promises nothing during the test, so replica 0 leads
  // with replica 2's promise, which flags the prefix chosen.
  const setup = (r: number): RkvMessage =>
    staticSetup(r, {
      heartbeatNs: 200_000,
      electionTimeoutNs: r === 1 ? 50 * MS : 5 * MS,
      maxLogEntries: MAX_LOG,
    });
  for (const r of [1, 2]) assert.equal(send(cluster, r, consensus[r] as Ref, setup(r), MS)?.type, 'ready');
  // An earlier leader (replica 1, ballot (0, 1)) had slots 1..CHOSEN accepted by replicas 1 and 2
  // and told them they are chosen; replica 0 knows nothing of them.
  for (let slot = 1; slot <= CHOSEN; slot++) {
    for (const r of [1, 2]) {
      send(
        cluster,
        r,
        consensus[r] as Ref,
        {
          type: 'accept',
          from: 1,
          ballot: makeBallot(0, replicaId(1)),
          slot,
          clientId: 0,
          seq: 0,
          key: rkvKey(slot),
          value: new Uint8Array([slot]),
          commitThrough: slot,
        },
        100_000,
      );
    }
  }
  for (const r of [1, 2]) assert.equal(view(r).applied, CHOSEN, `replica ${r} applied the prefix`);
  // Replica 0 (applied 0) learns the chosen prefix from replica 2's promise. Event by event until
  // it leads: lead() commits the prefix at once, before any follower reported under its ballot.
  cluster.clientSend(0, consensus[0] as Ref, setup(0), () => {});
  const stopAt = cluster.kernel.now() + 20 * MS;
  while (cluster.kernel.now() < stopAt && view(0).role !== 'leader') {
    if (!cluster.kernel.step()) break;
  }
  const leader = view(0);
  assert.equal(leader.role, 'leader', 'replica 0 leads once replica 2 promises');
  assert.ok(leader.commit >= CHOSEN, `commit ${leader.commit}: the chosen prefix at once`);
  assert.equal(
    leader.laggardsMarked,
    0,
    'a follower that has not reported yet is not silent for maxLogEntries commits',
  );
  cluster.kernel.run({ untilNs: cluster.kernel.now() + 3 * MS });
  assert.equal(view(0).role, 'leader');
  assert.equal(view(0).laggardsMarked, 0, 'no laggard once the followers report either');
  for (const r of [1, 2]) {
    const follower = view(r);
    assert.equal(follower.laggard, false, `replica ${r} is no laggard`);
    assert.equal(follower.transfers, 0, `replica ${r} needed no state transfer`);
    assert.ok(follower.applied >= CHOSEN, `replica ${r} applied ${follower.applied} of ${CHOSEN}`);
  }
});
