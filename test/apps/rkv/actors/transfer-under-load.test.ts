/**
 * State transfer and truncation while the group keeps committing (consensus-actor.ts "state
 * transfer", "truncation"), step by step on a SimCluster with durable logs (deterministic, no
 * randomness):
 *
 *   busy:  a laggard fetches a 163-chunk snapshot (300 keys) while a put commits every 20 µs
 *          (maxLogEntries 8: the leader would pass the snapshot's point within a few chunks), so
 *          the leader must hold its truncation through the fetch, the install (its log's 163
 *          fsyncs, then one long handler) and the catch-up after it. It must install
 *          within the run without starting over, catch up, and then vote: with the third replica
 *          crashed, a put still commits — it needs the former laggard's accepted.
 *   dead:  five replicas; one dies, then the leader dies; the leader elected after that never
 *          hears the first from under its ballot, yet it must still truncate (the silent replicas
 *          are laggards after maxLogEntries commits). Restarted, the dead replica comes back by a
 *          state transfer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import type { RkvMessage } from '../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { deployElecting, putMessage as put, settle as run, consensusView as view } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;
const MAX_LOG_ENTRIES = 8;

function leaderAmong(d: RkvSimDeployment, replicas: readonly number[]): number | undefined {
  return replicas.find((r) => !d.cluster.isDown(r) && !view(d, r).recovering && view(d, r).role === 'leader');
}

/** A put through the current leader, retried (same clientId and seq) until acknowledged. */
function putAcknowledged(
  d: RkvSimDeployment,
  replicas: readonly number[],
  clientId: number,
  seq: number,
): void {
  for (let attempt = 0; attempt < 40; attempt++) {
    const at = leaderAmong(d, replicas);
    if (at !== undefined) {
      let answer: RkvMessage | undefined;
      d.cluster.clientSend(
        at,
        d.consensus[at] as Ref,
        put(clientId, seq, seq % 7, seq % 200),
        (_i, _l, _ok, r) => {
          answer = r as RkvMessage;
          d.cluster.kernel.stop();
        },
      );
      run(d, 300 * US);
      if (answer?.type === 'put-ok') return;
    } else run(d, 100 * US);
  }
  assert.fail(`put seq ${seq} of client ${clientId} was never acknowledged`);
}

test('a many-chunk transfer completes while the group commits a put every 20 µs, and the replica votes again', () => {
  const KEYS = 300;
  const GAP_NS = 20 * US;
  const d = deployElecting(3, {
    durableLog: true,
    consensus: { maxLogEntries: MAX_LOG_ENTRIES, snapshotChunkBytes: 64, preVote: true },
  });
  const leader = leaderAmong(d, [0, 1, 2]);
  assert.ok(leader !== undefined, 'a leader was elected');
  const laggard = (leader + 1) % 3;
  const other = (leader + 2) % 3;
  let seq = 0;
  // Fire-and-forget puts at the leader (it keeps leading: pre-vote), one every GAP_NS.
  const fire = (): void => {
    seq++;
    const message = put(1 + (seq % 50), Math.ceil(seq / 50), seq % KEYS, seq % 200);
    d.cluster.clientSend(leader, d.consensus[leader] as Ref, message, () => {});
    run(d, GAP_NS);
  };
  d.cluster.isolate(laggard);
  for (let i = 0; i < KEYS + 2 * MAX_LOG_ENTRIES; i++) fire();
  d.cluster.heal();
  let chunks = 0;
  let installedAtNs = -1;
  const healedNs = d.cluster.kernel.now();
  const log = d.logs[laggard];
  assert.ok(log !== undefined);
  for (let t = 0; t < 8 * MS; t += GAP_NS) {
    fire();
    chunks = Math.max(chunks, view(d, laggard).transferChunks);
    if (installedAtNs < 0 && log.installs > 0) installedAtNs = d.cluster.kernel.now() - healedNs;
  }
  const lag = view(d, laggard);
  const atLeader = view(d, leader);
  const summary =
    `laggard: installs ${log.installs}, restarts ${lag.transferRestarts}, laggard ${lag.laggard}, ` +
    `applied ${lag.applied}; leader: commit ${atLeader.commit}, truncated ${atLeader.truncated}, ` +
    `marked ${atLeader.laggardsMarked}, checkpoints ${d.logs[leader]?.checkpoints}; chunks ${chunks}`;
  assert.ok(chunks >= 150, `a snapshot of many chunks (${summary})`);
  assert.equal(atLeader.role, 'leader', 'the leader kept leading');
  assert.ok(installedAtNs >= 0, `the laggard installed the snapshot within the run (${summary})`);
  assert.equal(log.installs, 1, `one install was enough (${summary})`);
  assert.equal(lag.transferRestarts, 0, `the transfer never started over (${summary})`);
  // (Not asserted: the leader's marks. With maxLogEntries 8 at this load the other follower may
  // fall 9 behind for a moment and be marked too: that is the setting, not the transfer.)
  assert.equal(lag.laggard, false, summary);
  assert.ok(atLeader.commit - lag.applied <= 2, `it keeps up with the leader (${summary})`);
  assert.ok(atLeader.truncated >= atLeader.commit - MAX_LOG_ENTRIES, `truncation resumed (${summary})`);
  // It votes: with the third replica down, a put needs its accepted to commit.
  crashReplica(d, other);
  const before = view(d, leader).commit;
  putAcknowledged(d, [leader], 900, 1);
  assert.ok(view(d, leader).commit > before, 'committed with the former laggard’s accepted');
});

test('a leader elected after a replica died still truncates: the silent replica is a laggard, and comes back by a transfer', () => {
  const replicas = [0, 1, 2, 3, 4];
  const d = deployElecting(5, {
    durableLog: true,
    consensus: { maxLogEntries: MAX_LOG_ENTRIES, snapshotChunkBytes: 32 },
  });
  const first = leaderAmong(d, replicas);
  assert.ok(first !== undefined);
  let seq = 0;
  const puts = (n: number): void => {
    for (let i = 0; i < n; i++) putAcknowledged(d, replicas, 1, ++seq);
  };
  puts(3);
  const dead = (first + 1) % 5;
  crashReplica(d, dead);
  puts(5);
  crashReplica(d, first);
  run(d, 2 * MS);
  puts(3);
  const next = leaderAmong(d, replicas);
  assert.ok(next !== undefined && next !== first, 'a new leader among the three survivors');
  const start = view(d, next);
  puts(6 * MAX_LOG_ENTRIES);
  const after = view(d, next);
  const summary =
    `commit ${start.commit}→${after.commit}, truncated ${start.truncated}→${after.truncated}, ` +
    `records ${after.logRecords}, marked ${after.laggardsMarked}`;
  assert.ok(after.commit - start.commit >= 6 * MAX_LOG_ENTRIES, summary);
  assert.ok(after.truncated >= after.commit - MAX_LOG_ENTRIES - 1, `the new leader truncates (${summary})`);
  assert.ok(after.logRecords <= 2 * MAX_LOG_ENTRIES, `its log stays bounded (${summary})`);
  assert.equal(after.laggardsMarked, 2, `both silent replicas marked (${summary})`);
  // The dead replica restarts: truncated past, it fetches a snapshot and rejoins.
  restartReplica(d, dead);
  for (let t = 0; t < 5 * MS && (d.logs[dead]?.installs ?? 0) === 0; t += 50 * US) run(d, 50 * US);
  puts(2);
  run(d, 500 * US);
  const back = view(d, dead);
  assert.equal(d.logs[dead]?.installs, 1, 'it installed a snapshot');
  assert.equal(back.laggard, false);
  assert.equal(back.applied, view(d, next).commit, 'and caught up');
});
