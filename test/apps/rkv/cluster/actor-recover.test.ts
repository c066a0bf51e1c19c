/**
 * RKV's actors on live nodes recover a durable state far over the NIC↔host ring's frame (1 MiB − 8
 * bytes): three nodes, one shard, ~1.3 MB of 8000-byte values written, then one replica's node is
 * killed, started again and set up from its files (restartReplica), and finally the whole cluster
 * is stopped and launched again on its files. Each time the replicas must leave "recovering" (the
 * log answers in parts, the memtable is rebuilt in slices: log-actor.ts, consensus-actor.ts
 * "bounded bursts"), every acknowledged value must read back and new puts must succeed. Before
 * recovery was chunked, the single `recover` answer overflowed the ring and the replicas asked for
 * it again for ever.
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { distinctValue, NodeStderrs, stopwatch, writeActorCluster } from './actor-fixture.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`rkv actor recovery seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
/** 170 × 8000 bytes ≈ 1.36 MB: over the ring's 1 MiB frame with room to spare. */
const KEYS = 170;
const VALUE_BYTES = 8000;

function valueFor(index: number): Uint8Array {
  return distinctValue(seed, index, VALUE_BYTES);
}

/** Waits until replica `replica`'s consensus actor no longer answers that it is recovering. */
async function untilRecovered(
  connection: RkvActorConnection,
  replica: number,
  withinMs: number,
): Promise<string> {
  const deadline = performance.now() + withinMs;
  let last = '';
  while (performance.now() < deadline) {
    const answer = await connection
      .ask('consensus', replica, { type: 'get', key: encoder.encode('probe') })
      .catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    last =
      typeof answer === 'string' ? answer : answer?.type === 'refused' ? answer.reason : String(answer?.type);
    if (!last.includes('recovering')) return last;
    await sleep(100);
  }
  assert.fail(`replica ${replica} still recovering after ${withinMs} ms (last answer: ${last})`);
}

test('live RKV actors recover a durable state over 1 MiB: one replica restarted, then the whole cluster', {
  timeout: 120_000,
}, async () => {
  const { dir, spec, file } = await writeActorCluster('rkv-recover-');
  const leader = seed % 3;
  const restarted = (leader + 1 + (seed % 2)) % 3;
  const setup = { heartbeatMs: 50, electionTimeoutMs: 300, leader, dataDir: join(dir, 'data') };
  const mark = stopwatch();
  // Each node's stderr (its tail is printed if the test fails: a stuck replica says why there).
  const logs = new NodeStderrs(3000);
  const onStderr = logs.onStderr;
  let cluster = await LocalCluster.launch({ file, spec, onStderr });
  let connection = await RkvActorConnection.connect(spec);
  try {
    await connection.setup(setup);
    mark('launched and set up');
    const clients = Array.from({ length: 32 }, (_, i) => connection.client(1 + i));
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (next < KEYS) {
          const index = next++;
          await client.put(encoder.encode(`k${index}`), valueFor(index), 20_000);
        }
      }),
    );

    mark(`${KEYS} values written`);
    // One replica: killed, started again, set up from its files; it must recover and serve.
    await cluster.kill(restarted);
    await cluster.start(restarted);
    mark(`node ${restarted} started again`);
    await connection.restartReplica(restarted);
    await untilRecovered(connection, restarted, 10_000);
    mark(`replica ${restarted} recovered`);
    const probe = connection.client(100);
    await probe.put(encoder.encode('after-restart'), encoder.encode('yes'), 20_000);
    // The restarted replica's memtable holds every value again (its rebuild lost none).
    for (const index of [0, Math.floor(KEYS / 2), KEYS - 1]) {
      const answer = await connection.ask('memtable', restarted, {
        type: 'get',
        key: encoder.encode(`k${index}`),
      });
      assert.equal(answer?.type, 'value', `replica ${restarted}'s memtable answers k${index}`);
    }
    mark('restarted replica checked');
    await connection.close();
    await cluster.stopAll();
    mark('cluster stopped');

    // The whole cluster, from its files.
    cluster = await LocalCluster.launch({ file, spec, onStderr });
    connection = await RkvActorConnection.connect(spec);
    mark('cluster launched, connected');
    await connection.setup(setup);
    mark('cluster launched again');
    for (const replica of [0, 1, 2]) await untilRecovered(connection, replica, 10_000);
    mark('every replica recovered');
    const reader = connection.client(200);
    await reader.put(encoder.encode('after-full-restart'), encoder.encode('yes'), 20_000);
    for (let index = 0; index < KEYS; index++) {
      const value = await reader.get(encoder.encode(`k${index}`), 20_000);
      assert.deepEqual(value, valueFor(index), `k${index} reads back after the whole cluster restarted`);
    }
    assert.deepEqual(await reader.get(encoder.encode('after-restart'), 20_000), encoder.encode('yes'));
    mark('every value read back');
  } catch (error) {
    logs.printTails();
    throw error;
  } finally {
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
