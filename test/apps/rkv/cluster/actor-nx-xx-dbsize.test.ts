/**
 * DBSIZE through the Redis-protocol front on RKV's actors on live node processes with two shards
 * (actor-backend.ts, actor-cluster.ts `RkvActorClient.dbsize`, storage-actors.ts "DBSIZE"): each
 * shard's leader counts its live keys — memtable plus its LSM store (LsmDisk, a 512-byte memtable
 * so most keys are flushed) — and the front sums them. SETs (overwrites included) and DELs
 * (existing and missing keys) move the count as Redis's would, keys land in both shards, and a
 * pipeline's SETs then DBSIZE counts those SETs. SET NX / XX answer OK or nil as Redis's do: NX
 * twice (OK then nil), XX on a missing key (nil, nothing written), on keys only the SSTables hold,
 * and NX after a DEL.
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../../../src/apps/rkv/cluster/actor-backend.ts';
import { RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { RespClient } from '../../../../src/apps/rkv/resp/client.ts';
import { startRespServer } from '../../../../src/apps/rkv/resp/server.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { writeActorCluster } from './actor-fixture.ts';

test('DBSIZE and SET NX / XX on the live actors over 2 shards', {
  timeout: 120_000,
}, async () => {
  const { dir, spec, file } = await writeActorCluster('rkv-dbs-', 2);
  const cluster = await LocalCluster.launch({ file, spec });
  const connection = await RkvActorConnection.connect(spec);
  const server = await startRespServer({
    port: 0,
    backend: new ActorKvBackend(connection, { clients: 8, firstClientId: 100 }),
    limits: ACTOR_RESP_LIMITS,
  });
  const resp = await RespClient.connect(server.address.port, { timeoutMs: 15_000 });
  try {
    await connection.setup({
      heartbeatMs: 50,
      electionTimeoutMs: 300,
      dataDir: join(dir, 'd'),
      memtableLimitBytes: 512,
    });
    assert.equal(await resp.command('DBSIZE'), 0, 'an empty cluster');
    for (let i = 0; i < 20; i++) assert.equal(await resp.command('SET', `size:${i}`, 'v'.repeat(60)), 'OK');
    const shardsUsed = new Set(
      Array.from({ length: 20 }, (_, i) => connection.shardOf(Buffer.from(`size:${i}`))),
    );
    assert.equal(shardsUsed.size, 2, 'the keys land in both shards');
    assert.equal(await resp.command('DBSIZE'), 20);
    // Overwrites (most of these keys are flushed by now) count once.
    for (let i = 0; i < 10; i++) assert.equal(await resp.command('SET', `size:${i}`, 'w'.repeat(60)), 'OK');
    assert.equal(await resp.command('DBSIZE'), 20, 'overwrites do not add keys');
    assert.equal(await resp.command('DEL', 'size:0', 'size:1', 'size:2', 'size:none'), 3);
    assert.equal(await resp.command('DBSIZE'), 17, 'three deleted, a missing key changes nothing');
    assert.equal(await resp.command('SET', 'size:1', 'back'), 'OK');
    // A pipeline: the SETs before the DBSIZE are counted.
    const pipelined = await Promise.all([
      resp.command('SET', 'size:pipe:a', '1'),
      resp.command('SET', 'size:pipe:b', '2'),
      resp.command('DBSIZE'),
    ]);
    assert.deepEqual(pipelined, ['OK', 'OK', 20], 'a deleted key written again, two new keys');
    // SET NX / XX, on keys of both shards (most of the size: keys are on disk by now).
    assert.equal(await resp.command('SET', 'cond:a', 'first', 'NX'), 'OK', 'NX on an absent key');
    assert.equal(await resp.command('SET', 'cond:a', 'second', 'NX'), null, 'NX on a present key');
    assert.equal(await resp.command('GET', 'cond:a'), 'first');
    assert.equal(await resp.command('SET', 'cond:missing', 'v', 'XX'), null, 'XX on a missing key');
    assert.equal(await resp.command('GET', 'cond:missing'), null);
    assert.equal(await resp.command('SET', 'cond:a', 'third', 'XX'), 'OK', 'XX on a present key');
    assert.equal(await resp.command('GET', 'cond:a'), 'third');
    const shardsOfSizeKeys = new Set<number>();
    for (let i = 3; i < 20; i++) {
      assert.equal(await resp.command('SET', `size:${i}`, 'nx', 'NX'), null, `NX on flushed size:${i}`);
      assert.equal(await resp.command('SET', `size:${i}`, 'xx', 'XX'), 'OK', `XX on flushed size:${i}`);
      shardsOfSizeKeys.add(connection.shardOf(Buffer.from(`size:${i}`)));
    }
    assert.equal(shardsOfSizeKeys.size, 2);
    assert.equal(await resp.command('GET', 'size:19'), 'xx');
    assert.equal(await resp.command('SET', 'size:0', 'back', 'NX'), 'OK', 'NX after DEL');
    assert.equal(await resp.command('DBSIZE'), 22, 'cond:a and size:0 added; cond:missing not');
  } finally {
    resp.close();
    await server.close();
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
