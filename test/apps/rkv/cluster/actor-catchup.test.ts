/**
 * A lagging replica of RKV's live actor form catches up by the log, not by state transfer, after
 * a burst of values near the 8 KiB limit: three nodes, one follower's node killed while the others
 * take 40 values of 8 000 bytes (~320 KB: one catch-up answer of 64 entries would be ~5 live
 * datagrams of 65 000 bytes), then started again and set up from its files. It must read back every
 * value from its own memtable and SSTables within seconds; no node may have refused a peer message
 * as too large (`peer-too-large`, /stats), and the restarted replica must never have been truncated
 * past or installed a snapshot (its log lines). Before catch-up answers were bounded by bytes
 * (consensus-actor.ts CATCHUP_BYTES) and peer messages could travel in fragments, the answer was
 * dropped at the leader's node and the follower stayed behind until marked a laggard.
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { distinctValue, NodeStderrs, nodeStats, stopwatch, writeActorCluster } from './actor-fixture.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`rkv actor catch-up seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
const KEYS = 40;
const VALUE_BYTES = 8000;

function valueFor(index: number): Uint8Array {
  return distinctValue(seed, index, VALUE_BYTES);
}

test('a follower restarted after ~320 KB of 8 000-byte writes catches up by the log, without state transfer', {
  timeout: 90_000,
}, async () => {
  const { dir, spec, file } = await writeActorCluster('rkv-catchup-');
  const leader = seed % 3;
  const lagging = (leader + 1 + (seed % 2)) % 3;
  const setup = { heartbeatMs: 50, electionTimeoutMs: 300, leader, dataDir: join(dir, 'data') };
  const mark = stopwatch();
  const logs = new NodeStderrs();
  const stderrs = logs.text;
  const onStderr = logs.onStderr;
  const cluster = await LocalCluster.launch({ file, spec, onStderr, extraArgs: ['--metrics-port', '0'] });
  const connection = await RkvActorConnection.connect(spec);
  try {
    await connection.setup(setup);
    mark(`launched and set up; leader ${leader}, lagging ${lagging}`);
    const writer = connection.client(1);
    await writer.put(encoder.encode('before'), encoder.encode('all three'), 20_000);

    await cluster.kill(lagging);
    const clients = Array.from({ length: 8 }, (_, i) => connection.client(10 + i));
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (next < KEYS) {
          const index = next++;
          await client.put(encoder.encode(`k${index}`), valueFor(index), 20_000);
        }
      }),
    );
    mark(`${KEYS} values written without node ${lagging}`);

    await cluster.start(lagging);
    stderrs.set(lagging, '');
    await connection.restartReplica(lagging);
    mark(`node ${lagging} started again and set up`);

    // Its own memtable (a miss goes on to its SSTable reader) must come to hold every value.
    const missing = new Set(Array.from({ length: KEYS }, (_, i) => i));
    const deadline = performance.now() + 15_000;
    while (missing.size > 0 && performance.now() < deadline) {
      for (const index of [...missing]) {
        const answer = await connection.ask('memtable', lagging, {
          type: 'get',
          key: encoder.encode(`k${index}`),
        });
        if (answer?.type === 'value' && answer.found) {
          assert.deepEqual(answer.value, valueFor(index), `k${index} at replica ${lagging}`);
          missing.delete(index);
        }
      }
      if (missing.size > 0) await sleep(200);
    }
    assert.equal(
      missing.size,
      0,
      `replica ${lagging} still lacks ${missing.size} of ${KEYS} values after 15 s`,
    );
    mark(`replica ${lagging} holds every value`);

    for (const node of [0, 1, 2]) {
      const stats = await nodeStats(cluster, node);
      assert.equal(
        stats.drops['peer-too-large'] ?? 0,
        0,
        `node ${node} refused no peer message as too large`,
      );
    }
    const log = stderrs.get(lagging) ?? '';
    assert.doesNotMatch(log, /truncated past this replica/, 'never a laggard');
    assert.doesNotMatch(log, /snapshot installed/, 'no state transfer');
    // And through the protocol: the leader still serves every value and takes writes.
    assert.deepEqual(await writer.get(encoder.encode(`k${KEYS - 1}`), 20_000), valueFor(KEYS - 1));
    await writer.put(encoder.encode('after'), encoder.encode('yes'), 20_000);
    mark('checked');
  } catch (error) {
    logs.printTails();
    throw error;
  } finally {
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
