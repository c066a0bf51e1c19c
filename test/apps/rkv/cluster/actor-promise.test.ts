/**
 * An election after a burst of values near the 8 KiB limit, in RKV's live actor form: three nodes;
 * one follower's node killed while the others take 40 values of 8 000 bytes (~320 KB), then the
 * leader's node killed and the follower's started again. The two survivors must elect a leader,
 * take a put, and read back every acknowledged value through it; no handler may fail and no node
 * may refuse a peer message as too large.
 *
 * The path under test: the replica that was behind stands first, the other's promise carries all
 * 40 entries (~330 KB, six 65 000-byte datagrams) in fragments (net/fragments.ts), and the new
 * leader must not re-propose the chosen entries it learns — before, that one handler run's outputs
 * (an accept per follower and a log entry per slot, plus applies) passed the ring's 1 MiB frame, the
 * run failed whole and its applies were lost: 16 acknowledged values read back absent (seed 2;
 * with that re-proposal put back, this test failed 3 runs of 3). Which survivor stands first
 * depends on timing (the one that was behind did in about 4 of 5 runs), and the cluster's setup has
 * no per-node election timeout (unequal ones would break the lease), so a round the other survivor
 * wins is not counted: the killed leader is started again and the round repeats with the winner as
 * leader, at most MAX_ROUNDS times. The test asserts that the lagging replica led in the last round
 * and rebuilt at least one fragmented message after its restart (the promise; catch-up answers are
 * below one datagram), and that every value acknowledged in any round reads back.
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { distinctValue, NodeStderrs, nodeStats, writeActorCluster } from './actor-fixture.ts';

// Seed 2 made the replica that was behind win the election in most runs here (the path above).
const seed = Number(process.env['IPIPE_TEST_SEED'] ?? 2);
process.stderr.write(`rkv actor promise seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const encoder = new TextEncoder();
const KEYS = 40;
const VALUE_BYTES = 8000;
// 6: on a loaded 2-core CI machine the other survivor won three rounds in a row once (a fresh
// clone's .ci/run, 2026-11-22; locally 5 runs then took 1, 1, 1, 1 and 3 rounds); a round costs
// a few seconds only when it is needed.
const MAX_ROUNDS = 6;

function valueFor(index: number): Uint8Array {
  return distinctValue(seed, index, VALUE_BYTES);
}

test('after a burst of 8 000-byte writes, the leader killed and a lagging follower back: a new leader serves every value', {
  timeout: 90_000,
}, async () => {
  const { dir, spec, file } = await writeActorCluster('rkv-promise-');
  let leader = seed % 3;
  const setup = { heartbeatMs: 50, electionTimeoutMs: 300, leader, dataDir: join(dir, 'data') };
  const logs = new NodeStderrs();
  const stderrs = logs.text;
  const onStderr = logs.onStderr;
  const cluster = await LocalCluster.launch({ file, spec, onStderr, extraArgs: ['--metrics-port', '0'] });
  const connection = await RkvActorConnection.connect(spec);
  const statsOf = (node: number) => nodeStats(cluster, node);
  try {
    await connection.setup(setup);
    const writer = connection.client(1);
    await writer.put(encoder.encode('before'), encoder.encode('all three'), 20_000);
    const clients = Array.from({ length: 8 }, (_, i) => connection.client(10 + i));
    let written = 0;
    let lagging = -1;
    let led = false;
    for (let round = 0; round < MAX_ROUNDS && !led; round++) {
      lagging = (leader + 1) % 3;
      await cluster.kill(lagging);
      const first = written;
      written += KEYS;
      let next = first;
      await Promise.all(
        clients.map(async (client) => {
          while (next < written) {
            const index = next++;
            await client.put(encoder.encode(`k${index}`), valueFor(index), 20_000);
          }
        }),
      );
      await cluster.kill(leader);
      await cluster.start(lagging);
      await connection.restartReplica(lagging);
      const t0 = performance.now();
      await writer.put(encoder.encode('after'), encoder.encode(`round ${round}`), 30_000);
      const winner = writer.leaderOf(0);
      const rebuilt = (await statsOf(lagging)).peer.reassembled;
      process.stderr.write(
        `round ${round}: leader ${leader} killed, replica ${lagging} was behind; a put went through ` +
          `${(performance.now() - t0).toFixed(0)} ms after its restart, led by ${winner}; ` +
          `it rebuilt ${rebuilt} fragmented message(s)\n`,
      );
      led = winner === lagging && rebuilt > 0;
      if (!led) {
        // The other survivor won: bring the killed leader back and go again with the winner leading.
        await cluster.start(leader);
        await connection.restartReplica(leader);
        leader = winner;
      }
    }
    assert.ok(led, `the replica that was behind led on a promise in fragments within ${MAX_ROUNDS} rounds`);
    const absent: number[] = [];
    for (let index = 0; index < written; index++) {
      const value = await writer.get(encoder.encode(`k${index}`), 20_000);
      if (value === null) absent.push(index);
      else assert.deepEqual(value, valueFor(index), `k${index}`);
    }
    assert.deepEqual(absent, [], 'every acknowledged value reads back');
    for (const node of [0, 1, 2]) {
      if (node === leader) continue;
      const stats = await statsOf(node);
      assert.equal(
        stats.drops['peer-too-large'] ?? 0,
        0,
        `node ${node} refused no peer message as too large`,
      );
      assert.doesNotMatch(stderrs.get(node) ?? '', /a handler failed/, `no handler failed on node ${node}`);
    }
    const sent = (await statsOf(3 - leader - lagging)).peer.fragmented;
    assert.ok(sent > 0, `the other survivor sent ${sent} peer message(s) in fragments`);
  } catch (error) {
    logs.printTails();
    throw error;
  } finally {
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
