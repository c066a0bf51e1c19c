/**
 * The live cluster's durability and restarts:
 *   - a follower SIGKILLed while writes continue, restarted on its data directory, rejoins and
 *     catches up — by snapshot transfer, since the leader truncated its log meanwhile
 *     (a snapshot every 100 entries here; the follower misses about 150 per shard); commands
 *     pipelined to it before it knows a leader are applied in order;
 *   - the whole cluster stopped and started again on the same directories serves every key it
 *     acknowledged (Paxos logs + SSTables recovered), DBSIZE included;
 *   - a second cluster, or a single replica, on a directory in use is refused with a clear error.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ClusterDataDirInUseError, ClusterOptionsError } from '../../../../src/apps/rkv/cluster/errors.ts';
import { ClusterReplica } from '../../../../src/apps/rkv/cluster/replica-host.ts';
import { ClusterSupervisor } from '../../../../src/apps/rkv/cluster/supervisor.ts';
import { RespClient, respInfoFields } from '../../../../src/apps/rkv/resp/client.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`restart seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const timing = { heartbeatMs: 50, electionTimeoutMinMs: 400, electionTimeoutMaxMs: 800 };
const step = (what: string): void => {
  process.stderr.write(`restart test: ${what}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms));

async function writeKeys(
  client: RespClient,
  prefix: string,
  count: number,
  expected: Map<string, string>,
): Promise<void> {
  const replies = await Promise.all(
    Array.from({ length: count }, (_, n) =>
      client.command('SET', `${prefix}${n}`, `${prefix}value${n}:${seed}`),
    ),
  );
  replies.forEach((reply, n) => {
    assert.equal(reply, 'OK', `SET ${prefix}${n}`);
    expected.set(`${prefix}${n}`, `${prefix}value${n}:${seed}`);
  });
}

async function assertAll(client: RespClient, expected: Map<string, string>, what: string): Promise<void> {
  const keys = [...expected.keys()];
  const values = await Promise.all(keys.map((key) => client.command('GET', key)));
  const wrong = keys.filter((key, index) => values[index] !== expected.get(key));
  assert.deepEqual(wrong.slice(0, 5), [], `${what}: ${wrong.length} of ${keys.length} keys missing or wrong`);
  assert.equal(await client.command('DBSIZE'), expected.size, `${what}: DBSIZE`);
}

test('a killed follower rejoins by snapshot; a full restart recovers every key; a busy data dir is refused', {
  timeout: 90_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rkv-restart-'));
  const options = {
    replicas: 3,
    shards: 2,
    dataDir,
    respPort: 0,
    seed,
    timing,
    snapshotEveryEntries: 40,
  } as const;
  const expected = new Map<string, string>();
  let supervisor = await ClusterSupervisor.start(options);
  const clients: RespClient[] = [];
  const connect = async (port: number): Promise<RespClient> => {
    const client = await RespClient.connect(port);
    clients.push(client);
    return client;
  };
  try {
    await supervisor.waitForLeader(0);
    await supervisor.waitForLeader(1);

    step('leaders elected');
    // A directory in use: a second supervisor, and a lone replica on replica 0's directory.
    await assert.rejects(ClusterSupervisor.start(options), (error: unknown) => {
      assert.ok(error instanceof ClusterDataDirInUseError);
      assert.match(error.message, /in use by a running cluster supervisor \(process \d+\)/);
      return true;
    });
    const replica0 = supervisor.replicas()[0]!;
    await assert.rejects(
      ClusterReplica.start({
        replicaId: 0,
        shardCount: 2,
        directory: join(dataDir, 'replica-0'),
        host: '127.0.0.1',
        replicas: [{ peerPort: 0, respPort: 0 }],
        seed,
      }),
      (error: unknown) => {
        assert.ok(error instanceof ClusterDataDirInUseError);
        assert.equal(error.holderPid, replica0.pid);
        return true;
      },
    );
    await assert.rejects(
      ClusterSupervisor.start({
        ...options,
        dataDir: mkdtempSync(join(tmpdir(), 'rkv-shape-')),
        replicas: 0,
      }),
      ClusterOptionsError,
    );

    step('busy directory refused');
    // Kill a follower of shard 0; keep writing (well past the snapshot interval); restart it.
    const leader = supervisor.leaderOf(0)!;
    const follower = [0, 1, 2].find((id) => id !== leader)!;
    const survivor = [0, 1, 2].find((id) => id !== follower)!;
    const client = await connect(supervisor.replicas()[survivor]!.respPort);
    await writeKeys(client, 'before:', 100, expected);
    step('100 keys written');
    await supervisor.kill(follower, 'SIGKILL');
    await writeKeys(client, 'during:', 300, expected);
    assert.equal(await client.command('DEL', 'during:0', 'during:0', 'nope'), 1);
    expected.delete('during:0');
    step('follower killed, 300 more keys written');
    await supervisor.restart(follower);
    const rejoined = await connect(supervisor.replicas()[follower]!.respPort);
    // Pipelined at once, before the restarted replica has heard from a leader: the commands are
    // held back and then sent in order, so the GET sees the second SET.
    const pipelined = await Promise.all([
      rejoined.command('SET', 'order:k', 'first'),
      rejoined.command('SET', 'order:k', 'second'),
      rejoined.command('GET', 'order:k'),
    ]);
    assert.deepEqual(pipelined, ['OK', 'OK', 'second']);
    expected.set('order:k', 'second');
    // Reads through the restarted replica are forwarded to the leader: they work at once…
    await assertAll(rejoined, expected, 'through the restarted follower');
    step('read through the restarted follower');
    // …and its own store catches up with the leader's (by snapshot: the log was truncated).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const mine = await respInfoFields(rejoined);
      const theirs = await respInfoFields(client);
      const caughtUp = [0, 1].every(
        (shard) =>
          mine.get(`shard_${shard}_keys`) === theirs.get(`shard_${shard}_keys`) &&
          Number(mine.get(`shard_${shard}_applied_through`)) > 0,
      );
      if (caughtUp) {
        // The leader truncated its log meanwhile: the follower had to load a snapshot.
        const loads = [0, 1].map((shard) => Number(mine.get(`shard_${shard}_snapshot_loads`)));
        assert.ok(
          loads.some((count) => count > 0),
          `no snapshot was loaded: ${loads}`,
        );
        break;
      }
      assert.ok(
        Date.now() < deadline,
        `the restarted follower did not catch up: ${JSON.stringify([...mine])}`,
      );
      await sleep(200);
    }

    step('follower caught up');
    // Stop everything, start again on the same directories: the data is there.
    for (const c of clients.splice(0)) c.close();
    await supervisor.stop();
    supervisor = await ClusterSupervisor.start(options);
    await supervisor.waitForLeader(0);
    await supervisor.waitForLeader(1);
    const [first, ...others] = supervisor.replicas();
    await assertAll(await connect(first!.respPort), expected, 'after a full restart');
    for (const replica of others) {
      const reader = await connect(replica.respPort);
      assert.equal(await reader.command('DBSIZE'), expected.size, `DBSIZE via replica ${replica.replicaId}`);
      assert.equal(await reader.command('GET', 'during:299'), expected.get('during:299'));
    }
    step('full restart verified');
    // A directory created with 2 shards refuses another shape.
    await supervisor.stop();
    await assert.rejects(ClusterSupervisor.start({ ...options, shards: 3 }), (error: unknown) => {
      assert.ok(error instanceof ClusterOptionsError);
      assert.match(error.message, /created with --replicas 3 --shards 2/);
      return true;
    });
  } finally {
    for (const c of clients) c.close();
    await supervisor.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
