/**
 * The consensus actor's phase 1 (P2c of "Paxos Made Simple"): a value an acceptor accepted at an
 * older ballot, reported in its promise, is re-proposed by the new leader at its own ballot and
 * chosen — applied on every replica, the leader included — and a hole below it becomes a no-op.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { makeBallot, replicaId } from '../../../../src/apps/rkv/paxos/types.ts';
import { handBuiltGroup, type Ref, send } from './hand-built-group.ts';

test('a value accepted at an older ballot is re-proposed and chosen by the new leader; a hole becomes a no-op', () => {
  const { cluster, consensus, memtables, setup } = handBuiltGroup();
  for (const r of [1, 2]) assert.equal(send(cluster, r, consensus[r] as Ref, setup(r))?.type, 'ready');
  // An earlier leader (replica 1, round 0) got slot 2 accepted by replicas 1 and 2 — a majority,
  // so it was chosen — and vanished before anyone learned it; slot 1 was never accepted (a hole).
  const value = new Uint8Array([7, 7, 7]);
  for (const r of [1, 2]) {
    send(cluster, r, consensus[r] as Ref, {
      type: 'accept',
      from: 1,
      ballot: makeBallot(0, replicaId(1)),
      slot: 2,
      clientId: 0,
      seq: 0,
      key: rkvKey(42),
      value,
      commitThrough: 0,
    });
  }
  // Replica 0 takes over: phase 1 learns the value from replica 2's promise.
  assert.equal(send(cluster, 0, consensus[0] as Ref, setup(0))?.type, 'ready');
  for (const r of [0, 1, 2]) {
    const answer = send(cluster, r, memtables[r] as Ref, { type: 'get', key: rkvKey(42) });
    assert.deepEqual(answer, { type: 'value', found: true, value }, `replica ${r}`);
  }
  // The new leader's first own command goes after the re-proposed slots.
  const put = send(cluster, 0, consensus[0] as Ref, {
    type: 'put',
    clientId: 0,
    seq: 0,
    key: rkvKey(1),
    value: new Uint8Array([1]),
  });
  assert.deepEqual(put, { type: 'put-ok', slot: 3 });
  // A stale leader's accept is now refused: replica 2 promised the new ballot.
  const stale = send(cluster, 2, consensus[2] as Ref, {
    type: 'accept',
    from: 1,
    ballot: makeBallot(0, replicaId(1)),
    slot: 9,
    clientId: 0,
    seq: 0,
    key: rkvKey(9),
    value,
    commitThrough: 0,
  });
  assert.equal(stale, undefined, 'a refused accept answers the proposer, not the client');
  assert.deepEqual(send(cluster, 2, memtables[2] as Ref, { type: 'get', key: rkvKey(9) })?.type, 'refused');
});
