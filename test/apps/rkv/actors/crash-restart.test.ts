/**
 * The consensus actor with a durable log (log-actor.ts, sim-log.ts), step by step on a fault-free
 * SimCluster: an acknowledged put is durable on a majority of the replicas' logs; the leader
 * crashes (its NIC and host memory lost), another is elected and takes writes, the old leader
 * restarts from init, recovers from its durable log (snapshot + entries), rebuilds its memtable
 * and catches up as a follower, and answers every key as the leader does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import {
  crashReplica,
  deployRkvOnSimCluster,
  type RkvSimDeployment,
  restartReplica,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { EventKernel } from '../../../../src/platform/sim/event-kernel.ts';
import { SimCluster } from '../../../../src/platform/sim/sim-cluster.ts';
import { testTiming } from '../../../platform/sim/test-timing.ts';
import { deployElecting, leaderOf, settle, consensusView as view } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const US = 1_000;
const MS = 1_000_000;

function deploy(): RkvSimDeployment {
  return deployElecting(3, { memtableLimitBytes: 1024, durableLog: true });
}

function ask(deployment: RkvSimDeployment, replica: number, ref: Ref, message: RkvMessage): RkvMessage {
  const { cluster } = deployment;
  let answer: RkvMessage | undefined;
  cluster.clientSend(replica, ref, message, (_id, _l, _ok, reply) => {
    answer = reply as RkvMessage;
    cluster.kernel.stop();
  });
  cluster.kernel.run({ untilNs: cluster.kernel.now() + MS });
  assert.ok(answer !== undefined, `${message.type} to ${ref.name} was not answered`);
  return answer;
}

const put = (seq: number, key: number, value: number): RkvMessage => ({
  type: 'put',
  clientId: 1,
  seq,
  key: rkvKey(key),
  value: new Uint8Array([value]),
});

function readAll(deployment: RkvSimDeployment, replica: number, ref: Ref, keys: number): (number | null)[] {
  const values: (number | null)[] = [];
  for (let key = 0; key < keys; key++) {
    const answer = ask(deployment, replica, ref, { type: 'get', key: rkvKey(key) });
    assert.equal(answer.type, 'value', `get ${key} at ${ref.name}: ${JSON.stringify(answer)}`);
    values.push(answer.type === 'value' && answer.found ? (answer.value[0] as number) : null);
  }
  return values;
}

test('an acknowledged put is in the durable log of a majority', () => {
  const d = deploy();
  const leader = leaderOf(d);
  for (let seq = 1; seq <= 5; seq++) {
    const answer = ask(d, leader, d.consensus[leader] as Ref, put(seq, seq, seq));
    assert.equal(answer.type, 'put-ok');
    const slot = answer.type === 'put-ok' ? answer.slot : 0;
    const durable = d.logs.filter((log) => log.entry(slot) !== undefined || log.truncated >= slot).length;
    assert.ok(durable >= 2, `slot ${slot} is durable on ${durable} replicas`);
  }
});

test('a crashed leader restarts from its durable log, rebuilds its memtable and follows', () => {
  const d = deploy();
  const first = leaderOf(d);
  const keys = 12;
  let seq = 0;
  // Enough writes that the logs truncate (a snapshot) and the memtables flush.
  for (let i = 0; i < 80; i++) {
    const answer = ask(d, first, d.consensus[first] as Ref, put(++seq, i % keys, i));
    assert.equal(answer.type, 'put-ok');
  }
  settle(d, 200 * US);
  assert.ok(
    d.logs.every((log) => log.truncated > 0),
    'every log folded a prefix into its snapshot',
  );
  crashReplica(d, first);
  settle(d, 2 * MS);
  const second = leaderOf(d);
  assert.notEqual(second, first);
  for (let i = 80; i < 100; i++) {
    const answer = ask(d, second, d.consensus[second] as Ref, put(++seq, i % keys, i));
    assert.equal(answer.type, 'put-ok');
  }
  restartReplica(d, first);
  settle(d, 2 * MS);
  const back = view(d, first);
  assert.equal(back.recovering, false);
  assert.equal(back.recovered, 1, 'it recovered a non-empty log');
  assert.equal(back.role, 'follower');
  assert.equal(leaderOf(d), second, 'the restarted replica rejoined as a follower');
  assert.ok(back.applied >= view(d, second).commit, `applied ${back.applied} caught up`);
  const atLeader = readAll(d, second, d.consensus[second] as Ref, keys);
  assert.deepEqual(
    atLeader,
    Array.from({ length: keys }, (_, key) => key + keys * Math.floor((99 - key) / keys)),
    'the leader serves the last write of every key',
  );
  assert.deepEqual(
    readAll(d, first, d.memtables[first] as Ref, keys),
    atLeader,
    'the restarted replica agrees',
  );
});

test('static mode (no timers) with a durable log: the setup leader leads once its log answered', () => {
  const cluster = new SimCluster({ kernel: new EventKernel(), timing: testTiming(), nodes: 3 });
  const d = deployRkvOnSimCluster(cluster, { baseKeys: 0, valueBytes: 8, durableLog: true });
  cluster.kernel.run({});
  assert.equal(view(d, 0).role, 'leader');
  for (let seq = 1; seq <= 3; seq++) {
    let answer: RkvMessage | undefined;
    cluster.clientSend(0, d.consensus[0] as Ref, put(seq, seq, seq), (_i, _l, _ok, reply) => {
      answer = reply as RkvMessage;
    });
    cluster.kernel.run({});
    assert.equal(answer?.type, 'put-ok');
  }
  assert.ok(
    d.logs.every((log) => log.promised > 0 && log.writes > 0),
    'every replica synced its promise',
  );
});
