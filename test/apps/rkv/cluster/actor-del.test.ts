/**
 * DEL through the Redis-protocol front on RKV's actors on live node processes (actor-backend.ts,
 * actor-cluster.ts `RkvActorClient.del`): SET, DEL → :1, GET → nil, DEL → :0, a multi-key DEL
 * counting the keys that existed; keys written, flushed to the replicas' LSM stores (LsmDisk, a
 * 512-byte memtable) and then deleted stay deleted in the leader's own store after its node is
 * SIGKILLed and started again on its files (durable log, SSTables), and through RESP; a delete
 * whose answer was lost, retried under the same session once that leader was killed, gets the
 * same answer from the new leader (every replica decided it when it applied the delete).
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEL_EXISTED, type RkvMessage } from '../../../../src/apps/rkv/actors/messages.ts';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../../../src/apps/rkv/cluster/actor-backend.ts';
import { RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { RespClient } from '../../../../src/apps/rkv/resp/client.ts';
import { startRespServer } from '../../../../src/apps/rkv/resp/server.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { writeActorCluster } from './actor-fixture.ts';

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

test('DEL through RESP on the live actors: :1 then nil then :0, and still deleted after a node restart', {
  timeout: 120_000,
}, async () => {
  const { dir, spec, file } = await writeActorCluster('rkv-actors-del-');
  const cluster = await LocalCluster.launch({ file, spec });
  const connection = await RkvActorConnection.connect(spec);
  let firstClientId = 100;
  const front = async () => {
    const server = await startRespServer({
      port: 0,
      backend: new ActorKvBackend(connection, { clients: 4, firstClientId }),
      limits: ACTOR_RESP_LIMITS,
    });
    firstClientId += 100;
    return { server, resp: await RespClient.connect(server.address.port, { timeoutMs: 15_000 }) };
  };
  try {
    // A 512-byte memtable: the values below reach every replica's SSTables before the deletes.
    await connection.setup({
      heartbeatMs: 50,
      electionTimeoutMs: 300,
      dataDir: join(dir, 'data'),
      memtableLimitBytes: 512,
    });
    let { server, resp } = await front();
    try {
      assert.equal(await resp.command('SET', 'del:a', '1'), 'OK');
      assert.equal(await resp.command('DEL', 'del:a'), 1, 'DEL of a key that exists');
      assert.equal(await resp.command('GET', 'del:a'), null, 'GET after DEL');
      assert.equal(await resp.command('DEL', 'del:a'), 0, 'DEL of a key that does not');
      const empty = (await resp.command('SET', '', 'v')) as { error?: string };
      assert.match(empty.error ?? '', /^ERR SET with an empty key/, 'the log spells deletes with empty keys');
      for (let i = 0; i < 16; i++) assert.equal(await resp.command('SET', `fill:${i}`, 'x'.repeat(80)), 'OK');
      assert.equal(
        await resp.command('DEL', 'fill:1', 'fill:2', 'del:none', 'fill:1'),
        2,
        'multi-key DEL counts',
      );
      // More writes after the deletes: the tombstones flush too.
      for (let i = 16; i < 32; i++)
        assert.equal(await resp.command('SET', `fill:${i}`, 'y'.repeat(80)), 'OK');
      assert.deepEqual(await resp.command('MGET', 'fill:1', 'fill:2', 'fill:3'), [
        null,
        null,
        'x'.repeat(80),
      ]);
    } finally {
      resp.close();
      await server.close();
    }
    // The leader's node killed and started again on its files (durable log, SSTables): its own
    // store — asked directly, not through whichever replica leads now — must not have the deleted
    // keys back, nor lose the others.
    const encoder = new TextEncoder();
    const finder = connection.client(50);
    await finder.get(encoder.encode('fill:3'));
    const restarted = finder.leader;
    // A delete whose answer is lost, retried after a fail-over: every replica decided and kept the
    // answer when it applied the delete, so the new leader gives the same one (not DEL_UNKNOWN).
    const lostDelete = { type: 'del', clientId: 777, seq: 1, key: encoder.encode('fill:5') } as const;
    const first = await connection.ask('consensus', restarted, lostDelete);
    assert.deepEqual(first?.type === 'del-ok' && first.existed, DEL_EXISTED, JSON.stringify(first));
    const others = [0, 1, 2].filter((r) => r !== restarted);
    const appliedAt = async (r: number): Promise<boolean> => {
      const answer = await connection.ask('memtable', r, { type: 'get', key: lostDelete.key });
      return answer?.type === 'value' && !answer.found;
    };
    for (let i = 0; i < 100 && !(await Promise.all(others.map(appliedAt))).every(Boolean); i++)
      await sleep(50);
    await cluster.kill(restarted);
    let retried: RkvMessage | undefined;
    for (let i = 0; i < 200 && retried?.type !== 'del-ok'; i++) {
      retried = await connection.ask('consensus', others[i % 2] as number, lostDelete);
      if (retried?.type !== 'del-ok') await sleep(50);
    }
    assert.deepEqual(retried?.type === 'del-ok' && retried.existed, DEL_EXISTED, JSON.stringify(retried));
    await cluster.start(restarted);
    await connection.restartReplica(restarted);
    const own = async (key: string): Promise<boolean | undefined> => {
      const answer = await connection.ask('memtable', restarted, { type: 'get', key: encoder.encode(key) });
      return answer?.type === 'value' ? answer.found : undefined;
    };
    // It rejoins as a follower and catches up (a commit or heartbeat away): wait for the last write.
    for (let i = 0; i < 100 && (await own('fill:31')) !== true; i++) await sleep(50);
    assert.deepEqual(
      await Promise.all(['del:a', 'fill:1', 'fill:2', 'fill:3', 'fill:31'].map(own)),
      [false, false, false, true, true],
      `replica ${restarted}'s own store after its restart`,
    );
    ({ server, resp } = await front());
    try {
      assert.equal(await resp.command('GET', 'del:a'), null, 'still deleted after the restart');
      assert.deepEqual(await resp.command('MGET', 'fill:1', 'fill:2', 'fill:3'), [
        null,
        null,
        'x'.repeat(80),
      ]);
      assert.equal(await resp.command('DEL', 'del:a', 'fill:2'), 0);
      assert.equal(await resp.command('DEL', 'fill:3'), 1);
    } finally {
      resp.close();
      await server.close();
    }
  } finally {
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
