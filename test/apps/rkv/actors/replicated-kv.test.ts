/**
 * RKV's actors on a three-node SimCluster answer gets and puts like a Map (the model), through
 * flushes and level-0 merges, and after forced migrations of the leader's memtable and consensus
 * actors (their state lives in DMOs); the followers apply the same log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnyActorDefinition } from '../../../../src/actor/define-actor.ts';
import { defineActor } from '../../../../src/actor/index.ts';
import { rkvKey, rkvMessages } from '../../../../src/apps/rkv/actors/messages.ts';
import { Random } from '../../../../src/random.ts';
import { BASE_KEYS, call, deployGroup, expected, runAgainstModel } from './helpers.ts';

const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 20261122);

test(`gets and puts through the leader match a Map model (seed ${SEED})`, () => {
  const deployment = deployGroup();
  const model = new Map<number, Uint8Array>();
  const counts = runAgainstModel(deployment, new Random(SEED), 400, model);
  assert.ok(counts.puts > 100 && counts.gets > 150, JSON.stringify(counts));
  // The small memtable flushed to the leader's disk and level 0 was merged at least once.
  const disk = deployment.disks[deployment.leader]!;
  assert.ok(disk.tablesWritten >= 3, `tables written: ${disk.tablesWritten}`);
  assert.ok(disk.level0Tables < 3, 'level 0 was merged into level 1');
});

test(`a put at a follower is refused with the leader's id (seed ${SEED})`, () => {
  const deployment = deployGroup();
  const answer = call(deployment, 1, deployment.consensus[1]!, {
    type: 'put',
    clientId: 0,
    seq: 0,
    key: rkvKey(1),
    value: new Uint8Array(4),
  });
  assert.equal(answer.type, 'refused');
  assert.match(answer.type === 'refused' ? answer.reason : '', /replica 0/);
});

test(`followers apply the same log: every replica's memtable answers like the leader's (seed ${SEED})`, () => {
  const deployment = deployGroup({ memtableLimitBytes: 1 << 20 });
  const model = new Map<number, Uint8Array>();
  runAgainstModel(deployment, new Random(SEED + 1), 200, model);
  // The last commit reaches the followers with the leader's commit message; let it land.
  deployment.cluster.kernel.run({});
  for (const replica of [1, 2]) {
    for (let index = 0; index < BASE_KEYS + 50; index += 7) {
      const answer = call(deployment, replica, deployment.memtables[replica]!, {
        type: 'get',
        key: rkvKey(index),
      });
      assert.equal(answer.type, 'value');
      if (answer.type !== 'value') continue;
      const want = expected(model, index);
      assert.equal(answer.found, want !== undefined, `replica ${replica} key ${index}`);
      if (want !== undefined)
        assert.deepEqual([...answer.value], [...want], `replica ${replica} key ${index}`);
    }
  }
});

test(`state survives forced migrations of the leader's memtable and consensus actors (seed ${SEED})`, () => {
  const deployment = deployGroup();
  const node = deployment.cluster.node(deployment.leader);
  const memtable = deployment.memtables[deployment.leader]!.id;
  const consensus = deployment.consensus[deployment.leader]!.id;
  const model = new Map<number, Uint8Array>();
  const moves: string[] = [];
  const counts = runAgainstModel(deployment, new Random(SEED + 2), 400, model, (i) => {
    if (i % 50 !== 25) return;
    // Alternate: memtable, consensus, each to the other side; the kernel finishes the move.
    const id = (i / 50) % 2 < 1 ? memtable : consensus;
    const to = node.domainOf(id) === 'host' ? 'nic' : 'host';
    node.migrate(id, to);
    deployment.cluster.kernel.run({});
    assert.equal(node.domainOf(id), to, `actor ${id} moved to the ${to}`);
    moves.push(`${id}→${to}`);
  });
  assert.ok(moves.length >= 6, moves.join(' '));
  assert.ok(node.migrations.length >= moves.length, `node recorded ${node.migrations.length} migrations`);
  assert.ok(counts.gets > 150 && counts.puts > 100);
  // Both actors ended somewhere, and a final read of every key still matches the model.
  for (let index = 0; index < BASE_KEYS + 50; index += 3) {
    const answer = call(deployment, deployment.leader, deployment.memtables[deployment.leader]!, {
      type: 'get',
      key: rkvKey(index),
    });
    const want = expected(model, index);
    assert.equal(answer.type === 'value' && answer.found, want !== undefined, `key ${index}`);
  }
});

/** A compaction actor that never finishes a flush: the memtable's frozen copy stays in use. */
const stalledCompaction = defineActor({
  name: 'rkv-compaction',
  messages: rkvMessages,
  replies: rkvMessages,
  placement: 'host',
  exec(ctx, message) {
    if (message.type === 'compaction-setup' && ctx.origin.kind !== 'none') ctx.reply({ type: 'ready' });
  },
});

test(`while a flush is in flight the frozen memtable still serves its keys (seed ${SEED})`, () => {
  const deployment = deployGroup({
    wrap: (role, definition) =>
      role === 'compaction' ? (stalledCompaction as unknown as AnyActorDefinition) : definition,
  });
  const model = new Map<number, Uint8Array>();
  const counts = runAgainstModel(deployment, new Random(SEED + 3), 300, model);
  // The memtable filled and froze (2 KiB limit; 72 B per entry), but nothing reached the disk: every written key
  // was read back from the active or the frozen memtable.
  assert.equal(deployment.disks[deployment.leader]!.tablesWritten, 0);
  assert.ok(counts.puts * (16 + 24 + 32) > 2 * 2048, JSON.stringify(counts));
  assert.ok(counts.hits > 100, JSON.stringify(counts));
});

test(`puts in flight while the leader's consensus and memtable actors migrate are all answered and applied (seed ${SEED})`, () => {
  const deployment = deployGroup({ memtableLimitBytes: 1 << 20 });
  const { cluster, leader } = deployment;
  const node = cluster.node(leader);
  const random = new Random(SEED + 4);
  const startNs = cluster.kernel.now();
  const written = new Map<number, Uint8Array>();
  let answered = 0;
  // 200 puts to distinct keys, 2 µs apart, while both actors move to the host and back.
  for (let i = 0; i < 200; i++) {
    const value = new Uint8Array(24).map(() => random.int(0, 256));
    written.set(i, value);
    cluster.node(leader).clientSend(
      deployment.consensus[leader]!,
      { type: 'put', clientId: 0, seq: 0, key: rkvKey(i), value },
      (_id, _latency, ok, reply) => {
        if (ok && (reply as { type: string }).type === 'put-ok') answered++;
      },
      undefined,
      { atNs: startNs + i * 2_000 },
    );
  }
  const consensus = deployment.consensus[leader]!.id;
  const memtable = deployment.memtables[leader]!.id;
  cluster.kernel.at(startNs + 50_000, () => node.migrate(consensus, 'host'));
  cluster.kernel.at(startNs + 120_000, () => node.migrate(memtable, 'host'));
  cluster.kernel.at(startNs + 250_000, () => node.migrate(consensus, 'nic'));
  cluster.kernel.run({});
  assert.equal(answered, 200);
  assert.ok(node.migrations.length >= 3, `migrations: ${node.migrations.length}`);
  for (const replica of [0, 1, 2]) {
    for (const [index, value] of written) {
      if (index % 5 !== 0) continue;
      const answer = call(deployment, replica, deployment.memtables[replica]!, {
        type: 'get',
        key: rkvKey(index),
      });
      assert.deepEqual(answer, { type: 'value', found: true, value }, `replica ${replica} key ${index}`);
    }
  }
});
