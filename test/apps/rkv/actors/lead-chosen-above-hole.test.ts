/**
 * A new leader whose log holds a slot known chosen ABOVE one that is not (lead() skips re-proposing
 * the chosen one, see consensus-actor.ts): its commit point must stay below the unchosen slot until
 * a majority accepted it at the new ballot, and the chosen slot above is applied only after it. The
 * DST seeds do not reach this state reliably (a leader's commit point jumping to the highest chosen
 * slot over the hole passed 100 of 100 seeds), so it is built here step by step.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { makeBallot, replicaId } from '../../../../src/apps/rkv/paxos/types.ts';
import { type HandBuiltGroup, handBuiltGroup, type Ref, send } from './hand-built-group.ts';

const A = new Uint8Array([1, 1]);
const B = new Uint8Array([2, 2]);

type Group = HandBuiltGroup;

/**
 * Slot 1 = A accepted at ballot (0, 1) by replicas 1 and 2 (chosen, but nobody learned it); slot 2
 * = B accepted at the higher ballot (0, 2) by replicas 1 and 2, and replica 2 told commitThrough 2
 * at (0, 2) (so it holds slot 2 chosen, slot 1 not: a commit marks only what was accepted at its
 * ballot). Both ballots are below replica 0's first (round 1). Replica 0
 * is cut off from replica 1, and its setup makes it stand: its only promise comes from replica 2.
 * Returns once replica 0 has run lead() — before any accept it sent there was answered.
 */
function electAboveHole(): Group {
  const group = handBuiltGroup();
  const { cluster, consensus, view, setup } = group;
  for (const r of [1, 2]) assert.equal(send(cluster, r, consensus[r] as Ref, setup(r))?.type, 'ready');
  const accept = (
    r: number,
    slot: number,
    key: number,
    value: Uint8Array,
    proposer: number,
    commitThrough: number,
  ) =>
    send(cluster, r, consensus[r] as Ref, {
      type: 'accept',
      from: proposer,
      ballot: makeBallot(0, replicaId(proposer)),
      slot,
      clientId: 0,
      seq: 0,
      key: rkvKey(key),
      value,
      commitThrough,
    });
  accept(1, 1, 11, A, 1, 0);
  accept(2, 1, 11, A, 1, 0);
  accept(1, 2, 12, B, 2, 0);
  accept(2, 2, 12, B, 2, 2);
  assert.equal(view(2).commit, 2, 'replica 2 learned commitThrough 2');
  assert.equal(view(2).applied, 0, 'replica 2 cannot apply slot 2 over the unchosen slot 1');
  cluster.partition(0, 1);
  cluster.clientSend(0, consensus[0] as Ref, setup(0), () => {});
  // Event by event until lead() ran: its accepts are on their way, none answered yet.
  const stopAt = cluster.kernel.now() + 5_000_000;
  while (cluster.kernel.now() < stopAt && view(0).role !== 'leader') {
    if (!cluster.kernel.step()) break;
  }
  assert.equal(view(0).role, 'leader', 'replica 0 leads with the promise of replica 2');
  return group;
}

function get(group: Group, r: number, key: number): RkvMessage | undefined {
  return send(group.cluster, r, group.memtables[r] as Ref, { type: 'get', key: rkvKey(key) });
}

test('a new leader does not commit a chosen slot over an unchosen one below it before its accepts come back', () => {
  const group = electAboveHole();
  const at = group.view(0);
  assert.equal(at.commit, 0, 'at lead(): slot 1 is not chosen, so the commit point stays at 0');
  assert.equal(at.applied, 0);
  // Replica 2's answers to the re-proposed slot 1 never arrive: the commit point must not move.
  group.cluster.partition(0, 2);
  group.cluster.kernel.run({ untilNs: group.cluster.kernel.now() + 5_000_000 });
  assert.equal(group.view(0).commit, 0, 'slot 1 has one accept (the leader): not chosen, not committed');
  assert.equal(group.view(0).applied, 0);
  // A key the memtable lacks goes to the SSTable reader, which this test does not run: 'refused'.
  assert.equal(get(group, 0, 12)?.type, 'refused', 'B (slot 2) is not applied before slot 1');
  assert.equal(get(group, 0, 11)?.type, 'refused');
});

test('once a majority accepted the re-proposed slot, both slots are applied in order everywhere', () => {
  const group = electAboveHole();
  group.cluster.kernel.run({ untilNs: group.cluster.kernel.now() + 5_000_000 });
  assert.equal(group.view(0).commit, 2, 'slot 1 chosen at the new ballot, slot 2 was chosen already');
  group.cluster.heal();
  // The new leader's own first command: its accept carries the commit point to replica 1 too, which
  // catches up on slots 1 and 2.
  const put = send(group.cluster, 0, group.consensus[0] as Ref, {
    type: 'put',
    clientId: 0,
    seq: 0,
    key: rkvKey(1),
    value: new Uint8Array([1]),
  });
  assert.deepEqual(put, { type: 'put-ok', slot: 3 });
  group.cluster.kernel.run({ untilNs: group.cluster.kernel.now() + 5_000_000 });
  for (const r of [0, 1, 2]) {
    assert.deepEqual(get(group, r, 11), { type: 'value', found: true, value: A }, `A at replica ${r}`);
    assert.deepEqual(get(group, r, 12), { type: 'value', found: true, value: B }, `B at replica ${r}`);
    assert.equal(group.view(r).applied, 3, `replica ${r} applied slots 1–3`);
  }
});
