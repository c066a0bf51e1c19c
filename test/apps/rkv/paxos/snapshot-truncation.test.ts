/**
 * Log truncation after a snapshot (paper, "The applications": RKV's log must not grow forever):
 * replicas snapshot every N applied entries and drop the log (in memory and on disk) below it; a
 * replica that fell behind the truncation point is brought up by a snapshot transfer; the client
 * sessions travel with the snapshot so a retried command is still answered, not applied twice; a
 * restart resumes from the durable snapshot.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualCluster, MS, stateHex } from './manual-cluster.ts';

const EVERY = 5;

/** Runs `count` puts (client 1, seqs from `firstSeq`) through leader 0, delivering as it goes. */
function writes(
  cluster: ManualCluster,
  firstSeq: number,
  count: number,
  drop = (_to: number) => false,
): void {
  for (let seq = firstSeq; seq < firstSeq + count; seq++) {
    cluster.request(0, 1, seq, { op: 'put', key: `k${seq % 7}`, value: `v${seq}` });
    cluster.deliverAll((m) => drop(m.to) || drop(m.from));
  }
}

test('the log is truncated every N applied entries, in memory and on disk, and does not grow', () => {
  const cluster = new ManualCluster({ replicas: 3, config: { snapshotEveryEntries: EVERY } });
  cluster.electFirst();
  let maxLogEntries = 0;
  let maxDurableAccepted = 0;
  for (let seq = 1; seq <= 203; seq++) {
    writes(cluster, seq, 1);
    for (let id = 0; id < 3; id++) {
      maxLogEntries = Math.max(maxLogEntries, cluster.replica(id).status().logEntries);
      maxDurableAccepted = Math.max(maxDurableAccepted, cluster.storages[id]!.durableAcceptedCount);
    }
  }
  for (let id = 0; id < 3; id++) {
    const status = cluster.replica(id).status();
    assert.equal(status.appliedThrough, 203);
    assert.equal(status.snapshotSlot, 200, `replica ${id} snapshots at every multiple of ${EVERY}`);
    assert.equal(cluster.storages[id]!.durableSnapshotSlot, 200, 'the snapshot is durable');
  }
  assert.ok(
    maxLogEntries <= EVERY,
    `in-memory log stayed ≤ ${EVERY} entries (max ${maxLogEntries}) over 203 slots`,
  );
  assert.ok(maxDurableAccepted <= EVERY, `durable log stayed ≤ ${EVERY} records (max ${maxDurableAccepted})`);
});

test('a replica behind the truncation point catches up by snapshot transfer, sessions included', () => {
  const cluster = new ManualCluster({ replicas: 3, config: { snapshotEveryEntries: EVERY } });
  cluster.electFirst();
  // Replica 2 is cut off while 23 writes are chosen by replicas 0 and 1: client 2's only write at
  // slot 1, then client 1's 22 writes.
  cluster.request(0, 2, 1, { op: 'del', key: 'k0' });
  cluster.deliverAll((m) => m.to === 2 || m.from === 2);
  writes(cluster, 1, 22, (id) => id === 2);
  assert.equal(cluster.replica(0).status().snapshotSlot, 20);
  assert.equal(cluster.replica(2).status().appliedThrough, 0);

  // Healed: the next heartbeat's commit point sends replica 2 to catch up from slot 1, which the
  // leader has compacted away: it gets the snapshot at 20 and then slots 21..23.
  let installed = 0;
  for (let t = 50; t <= 120; t += 10) {
    cluster.nowNs = t * MS;
    cluster.handle(0, { type: 'tick' });
    while (cluster.inFlight.length > 0) {
      const next = cluster.inFlight.shift()!;
      const outputs = cluster.handle(next.to, next.message);
      if (next.to === 2 && outputs.installedSnapshotSlot > 0) installed = outputs.installedSnapshotSlot;
    }
  }
  assert.equal(installed, 20, 'replica 2 installed the snapshot at slot 20');
  assert.equal(cluster.replica(2).status().appliedThrough, 23);
  assert.equal(stateHex(cluster.machines[2]!), stateHex(cluster.machines[0]!));
  assert.ok(cluster.storages[2]!.durableSnapshotSlot >= 20, 'the installed snapshot was made durable');

  // Replica 2 becomes leader (replica 0 crashes). Client 2 retries its write of slot 1, which
  // replica 2 never applied itself: the sessions table came with the snapshot, so the retry is
  // answered from it (with the original result) and not proposed again.
  cluster.crash(0);
  cluster.nowNs = 400 * MS;
  cluster.handle(2, { type: 'tick' });
  cluster.deliverAll();
  assert.equal(cluster.replica(2).status().role, 'leader');
  const retry = cluster.request(2, 2, 1, { op: 'del', key: 'k0' });
  assert.deepEqual(
    retry.replies,
    [{ type: 'reply', clientId: 2, seq: 1, result: { op: 'del', existed: false } }],
    'the retry gets the result of the original application',
  );
  assert.equal(retry.send.filter((o) => o.message.type === 'accept').length, 0, 'and is not proposed again');
  const stale = cluster.request(2, 1, 3, { op: 'put', key: 'k3', value: 'v3' });
  assert.equal(stale.send.length + stale.replies.length, 0, 'an older retry is ignored, never re-applied');
});

test('a restarted replica resumes from its durable snapshot and replays nothing below it', () => {
  const cluster = new ManualCluster({ replicas: 3, config: { snapshotEveryEntries: EVERY } });
  cluster.electFirst();
  writes(cluster, 1, 12);
  const before = stateHex(cluster.machines[1]!);
  cluster.crash(1);
  const restarted = cluster.restart(1);
  const status = restarted.status();
  assert.equal(status.appliedThrough, 10, 'applied through the durable snapshot, not beyond');
  assert.equal(status.snapshotSlot, 10);
  assert.notEqual(stateHex(cluster.machines[1]!), before, 'slots 11 and 12 are not applied yet');
  // The leader's next heartbeat brings slots 11..12 back (the values are still in its log).
  cluster.tickAll(60 * MS);
  cluster.deliverAll();
  assert.equal(cluster.replica(1).status().appliedThrough, 12);
  assert.equal(stateHex(cluster.machines[1]!), before);
});
