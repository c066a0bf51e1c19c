/**
 * RKV's live actor form past six shards: each node runs five actors per shard, more than LiveNode's
 * default 32 DMO regions per domain, so the cluster file gives every node a region for each of its
 * actors (`maxActors`, rkvActorNodeMaxActors). Three live nodes run sixteen shards behind the RESP
 * front: every shard elects a leader (INFO names it), takes SETs on its keys and serves them back.
 * Its own file (not actor-shards.test.ts) so each file stays well under 30 s on two loaded cores.
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../../../src/apps/rkv/cluster/actor-backend.ts';
import { RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { shardOf } from '../../../../src/apps/rkv/cluster/commands.ts';
import { RespClient, respInfoFields } from '../../../../src/apps/rkv/resp/client.ts';
import { startRespServer } from '../../../../src/apps/rkv/resp/server.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { writeActorCluster } from './actor-fixture.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`rkv actor wide shards seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

test('three live nodes, sixteen shards (80 actors a node, past the default 32 regions per domain): every shard elects, takes puts and serves gets', {
  timeout: 60_000,
}, async () => {
  const shards = 16;
  const { dir, spec, file } = await writeActorCluster('rkv-shards8-', shards);
  const cluster = await LocalCluster.launch({ file, spec });
  const connection = await RkvActorConnection.connect(spec);
  const server = await startRespServer({
    port: 0,
    backend: new ActorKvBackend(connection, { clients: 4, firstClientId: 1 }),
    limits: ACTOR_RESP_LIMITS,
  });
  let resp: RespClient | undefined;
  try {
    // 1 MiB of NIC memory leaves each of 16 shards a 32 KiB memtable: the smallest allowed.
    await connection.setup({
      heartbeatMs: 50,
      electionTimeoutMs: 300,
      leader: seed % 3,
      nicMemoryBytes: 1 << 20,
      dataDir: join(dir, 'data'),
    });
    resp = await RespClient.connect(server.address.port, { timeoutMs: 15_000 });
    const keys = new Map<number, string[]>();
    for (let n = 0; keys.size < shards || [...keys.values()].some((k) => k.length < 2); n++) {
      const key = `k${seed}:${n}`;
      const shard = shardOf(encoder.encode(key), shards);
      const list = keys.get(shard) ?? [];
      if (list.length < 2) list.push(key);
      keys.set(shard, list);
    }
    const all = [...keys.values()].flat();
    for (const key of all) {
      let reply: unknown = null;
      // A shard's first election may still be under way: -TRYAGAIN until it has a leader.
      for (let tries = 0; tries < 50 && reply !== 'OK'; tries++) {
        reply = await resp.command('SET', key, `v:${key}`).catch(() => null);
        if (reply !== 'OK') await sleep(100);
      }
      assert.equal(reply, 'OK', `SET ${key} (shard ${shardOf(encoder.encode(key), shards)})`);
    }
    for (const key of all) assert.equal(await resp.command('GET', key), `v:${key}`, `GET ${key}`);
    const info = await respInfoFields(resp);
    assert.equal(info.get('ipipe_shards'), String(shards));
    for (let shard = 0; shard < shards; shard++) {
      const leader = info.get(`shard_${shard}_leader`);
      assert.ok(
        leader !== undefined && /^[0-2]$/.test(leader),
        `INFO names shard ${shard}'s leader: ${leader}`,
      );
    }
  } finally {
    resp?.close();
    await server.close();
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
