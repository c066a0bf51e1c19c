/**
 * The live cluster survives its leader's death: three replica processes under client load, the
 * leader process SIGKILLed mid-load, a new leader elected, the cluster serving again through the
 * survivors, and every SET a client saw acknowledged (+OK) readable afterwards with its value.
 * Writers talk to every replica (followers forward to the leader), so some are cut off with the
 * killed one; only their acknowledged writes count. The old leader, restarted on its directory,
 * rejoins as a follower and catches up. Seeded (election timeouts); the seed is printed.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ClusterSupervisor } from '../../../../src/apps/rkv/cluster/supervisor.ts';
import { RespClient, respInfoFields } from '../../../../src/apps/rkv/resp/client.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`leader-failover seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const sleep = (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms));

test('a 3-replica cluster keeps serving after SIGKILL of its leader and loses no acknowledged SET', {
  timeout: 60_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rkv-failover-'));
  const supervisor = await ClusterSupervisor.start({
    replicas: 3,
    shards: 1,
    dataDir,
    respPort: 0,
    seed,
    timing: { heartbeatMs: 50, electionTimeoutMinMs: 400, electionTimeoutMaxMs: 800 },
    requestTimeoutMs: 4000,
  });
  const acknowledged = new Map<string, string>();
  let errors = 0;
  let stop = false;
  const clients: RespClient[] = [];
  try {
    const oldLeader = await supervisor.waitForLeader(0);
    const ports = supervisor.replicas().map((replica) => replica.respPort);

    // Two writers per replica; each writes its own keys, one command at a time.
    const writer = async (writerId: number, port: number): Promise<void> => {
      const client = await RespClient.connect(port);
      clients.push(client);
      for (let n = 0; !stop && !client.closed; n++) {
        const key = `w${writerId}:${n}`;
        const value = `v${n}:${seed}`;
        try {
          const reply = await client.command('SET', key, value);
          if (reply === 'OK') acknowledged.set(key, value);
          else errors++;
        } catch {
          errors++; // the replica died under us: the write is not acknowledged
        }
      }
    };
    const writers = ports.flatMap((port, replica) => [
      writer(replica * 2, port),
      writer(replica * 2 + 1, port),
    ]);

    await sleep(1500);
    const beforeKill = acknowledged.size;
    assert.ok(beforeKill > 0, 'no SET was acknowledged before the kill');
    await supervisor.kill(oldLeader, 'SIGKILL');
    const killedAt = Date.now();
    const newLeader = await supervisor.waitForLeader(0, 20_000);
    const electedMs = Date.now() - killedAt;
    assert.notEqual(newLeader, oldLeader);
    const atElection = acknowledged.size;
    await sleep(1500);
    stop = true;
    await Promise.all(writers);
    const afterElection = acknowledged.size - atElection;
    process.stderr.write(
      `killed leader ${oldLeader}; replica ${newLeader} led ${electedMs} ms later; ` +
        `${beforeKill} SETs acknowledged before the kill, ${acknowledged.size} in all ` +
        `(${afterElection} after the election), ${errors} errors\n`,
    );
    assert.ok(afterElection > 0, 'the cluster acknowledged no SET after the new leader was elected');

    // Every acknowledged SET is readable, through each survivor.
    for (const replica of supervisor.replicas().filter((entry) => entry.alive)) {
      const reader = await RespClient.connect(replica.respPort);
      clients.push(reader);
      const keys = [...acknowledged.keys()];
      const values = await Promise.all(keys.map((key) => reader.command('GET', key)));
      const lost = keys.filter((key, index) => values[index] !== acknowledged.get(key));
      assert.deepEqual(
        lost.slice(0, 5),
        [],
        `${lost.length} acknowledged SETs lost or wrong via replica ${replica.replicaId}`,
      );
      const info = await respInfoFields(reader);
      assert.equal(info.get('ipipe_leader_replica'), String(newLeader), 'INFO names the new leader');
    }

    // The old leader, restarted on its directory, rejoins as a follower and catches up.
    await supervisor.restart(oldLeader);
    const rejoined = await RespClient.connect(supervisor.replicas()[oldLeader]!.respPort);
    clients.push(rejoined);
    const someKey = [...acknowledged.keys()].at(-1)!;
    assert.equal(await rejoined.command('GET', someKey), acknowledged.get(someKey));
    const survivor = await RespClient.connect(supervisor.replicas()[newLeader]!.respPort);
    clients.push(survivor);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const mine = await respInfoFields(rejoined);
      const leaders = await respInfoFields(survivor);
      if (mine.get('shard_0_role') === 'follower' && mine.get('shard_0_keys') === leaders.get('shard_0_keys'))
        break;
      assert.ok(
        Date.now() < deadline,
        `the restarted old leader did not catch up: ${JSON.stringify([...mine])}`,
      );
      await sleep(200);
    }
  } finally {
    stop = true;
    for (const client of clients) client.close();
    await supervisor.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
