/**
 * Sharding of RKV's live actor form (actor-cluster.ts, `cluster up rkv --actors --shards S`): S
 * consensus groups over the same node processes, a key's group chosen by the process-per-replica
 * form's hash (`shardOf`, commands.ts). The layout (names, storage paths, the memtable's share of
 * the NIC memory) is checked without processes; then three live nodes run two shards behind the
 * RESP front: SETs from several connections land in both shards (each shard's group holds only
 * its own keys; INFO names each shard's leader), shard 0's memtable flushes at its share of the NIC
 * memory, the node leading shard 0 is SIGKILLed mid-load, started again on its files and set up in
 * every shard, another node is killed as well — so each shard's majority needs the restarted
 * replica — and every acknowledged SET reads back with its value. Then SCAN (RkvActorClient.scan,
 * scanAll): after deletes of a flushed key and a memtable key, a scan of everything, page by page
 * over both shards, returns each stored key once in byte order with its value (as MGET reads it),
 * every acknowledged key and no deleted one; a range of 8 000-byte values comes in pages cut by
 * bytes; RESP SCAN (cursor pages, MATCH) through the front lists the same keys.
 */

import assert from 'node:assert/strict';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../../../src/apps/rkv/cluster/actor-backend.ts';
import {
  MAX_RKV_ACTOR_SHARDS,
  MAX_RKV_MEMTABLE_LIMIT_BYTES,
  RkvActorConnection,
  rkvActorClusterSpec,
  rkvActorName,
  rkvActorNodeMaxActors,
  rkvActorStorageNames,
  rkvMemtableLimitBytes,
} from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { shardOf } from '../../../../src/apps/rkv/cluster/commands.ts';
import { RespClient, respInfoFields } from '../../../../src/apps/rkv/resp/client.ts';
import { startRespServer } from '../../../../src/apps/rkv/resp/server.ts';
import { ConfigError } from '../../../../src/errors.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { writeActorCluster } from './actor-fixture.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`rkv actor shards seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
const nodes = (count: number) =>
  Array.from({ length: count }, (_, id) => ({ id, address: '127.0.0.1', port: 30_000 + id }));

test('layout: per-shard actor names and storage, one shard keeps the old ones, too many shards refused', () => {
  const one = rkvActorClusterSpec({ nodes: nodes(3) }, { durable: true });
  assert.deepEqual(
    one.actors.filter((a) => a.node === 1).map((a) => a.name),
    ['rkv-sstable-1', 'rkv-compaction-1', 'rkv-log-1', 'rkv-memtable-1', 'rkv-consensus-1'],
  );
  const three = rkvActorClusterSpec({ nodes: nodes(3) }, { durable: true, shards: 3 });
  assert.equal(three.actors.length, 3 * 3 * 5);
  assert.equal(three.actors.filter((a) => a.node === 2).length, 15, 'every node runs every shard');
  assert.ok(three.actors.some((a) => a.name === rkvActorName('consensus', 2, 1, 3)));
  assert.equal(rkvActorName('consensus', 2, 1, 3), 'rkv-consensus-s1-2');
  assert.equal(
    three.actors.find((a) => a.name === 'rkv-compaction-s2-0')?.domain,
    'host',
    "a shard's SSTable side is pinned to the host",
  );
  assert.throws(
    () => rkvActorClusterSpec({ nodes: nodes(3) }, { shards: MAX_RKV_ACTOR_SHARDS + 1 }),
    (error: unknown) =>
      error instanceof ConfigError && new RegExp(`1 to ${MAX_RKV_ACTOR_SHARDS} shards`).test(error.message),
  );
  assert.equal(MAX_RKV_ACTOR_SHARDS, 64, 'as many shards as the process-per-replica form');
  // Past six shards a node runs more actors than LiveNode's default 32 regions per domain: the
  // spec gives every node a region for each of its actors (all may end up on the host).
  const wide = rkvActorClusterSpec({ nodes: nodes(3) }, { durable: true, shards: MAX_RKV_ACTOR_SHARDS });
  for (const node of wide.nodes) {
    const placed = wide.actors.filter((a) => a.node === node.id).length;
    assert.equal(placed, 5 * MAX_RKV_ACTOR_SHARDS);
    assert.ok(
      (node.maxActors ?? 32) >= placed,
      `node ${node.id}: ${node.maxActors} regions for ${placed} actors`,
    );
    assert.equal(node.regionBytes, 4 * 1024 * 1024);
  }
  assert.equal(rkvActorNodeMaxActors(2, true), 32, 'six shards or fewer start as before');
  assert.equal(rkvActorNodeMaxActors(8, false), 32);
  assert.equal(rkvActorNodeMaxActors(8, true), 40);

  const base = join('d', 'x');
  assert.deepEqual(rkvActorStorageNames(base, 1), {
    disk: `file:${join(base, 'replica-1', 'lsm')}`,
    log: `file:${join(base, 'replica-1', 'log.journal')}`,
  });
  assert.deepEqual(rkvActorStorageNames(base, 1, 2, 3), {
    disk: `file:${join(base, 'replica-1', 's2', 'lsm')}`,
    log: `file:${join(base, 'replica-1', 's2', 'log.journal')}`,
  });
  // The name travels in a 63-byte setup field: a path that fits with one shard may not with more.
  const edge = `/${'a'.repeat(63 - 'file:/'.length - '/replica-0/log.journal'.length)}`;
  assert.doesNotThrow(() => rkvActorStorageNames(edge, 0));
  assert.throws(
    () => rkvActorStorageNames(edge, 0, 1, 2),
    (error: unknown) => error instanceof ConfigError && /longer than the 63 bytes/.test(error.message),
  );
});

test('memory sizing: a shard memtable flushes at NIC memory / (2 × shards), capped, refused when too small', () => {
  assert.equal(rkvMemtableLimitBytes(512 * 1024, 1), 256 * 1024, 'the default: one shard as before');
  assert.equal(rkvMemtableLimitBytes(512 * 1024, 2), 128 * 1024);
  assert.equal(rkvMemtableLimitBytes(3 * 1024 * 1024, 4), 384 * 1024);
  assert.equal(rkvMemtableLimitBytes(64 * 1024 * 1024, 1), MAX_RKV_MEMTABLE_LIMIT_BYTES);
  assert.throws(
    () => rkvMemtableLimitBytes(256 * 1024, 6),
    (error: unknown) =>
      error instanceof ConfigError && /at least 393216 bytes\) or use fewer shards/.test(error.message),
  );
});

test('three live nodes, two shards: keys spread by hash, a node killed and restarted, every acknowledged SET reads back', {
  timeout: 60_000,
}, async () => {
  const shards = 2;
  const { dir, spec, file } = await writeActorCluster('rkv-shards-', shards);
  const cluster = await LocalCluster.launch({ file, spec });
  const connection = await RkvActorConnection.connect(spec);
  const dataDir = join(dir, 'data');
  const server = await startRespServer({
    port: 0,
    backend: new ActorKvBackend(connection, { clients: 16, firstClientId: 1 }),
    limits: ACTOR_RESP_LIMITS,
  });
  const resps: RespClient[] = [];
  try {
    assert.equal(connection.shards, shards);
    await connection.setup({
      heartbeatMs: 50,
      electionTimeoutMs: 300,
      leader: seed % 3,
      nicMemoryBytes: 256 * 1024,
      dataDir,
    });
    assert.equal(connection.memtableLimitBytes(), 64 * 1024, 'NIC memory 256 KiB / (2 × 2 shards)');
    assert.throws(
      () => connection.memtableLimitBytes({ memtableLimitBytes: 1024 * 1024 }),
      (error: unknown) => error instanceof ConfigError && /one message/.test(error.message),
      'a limit above one ring message is refused, not left to lose its flush',
    );
    for (let i = 0; i < 4; i++)
      resps.push(await RespClient.connect(server.address.port, { timeoutMs: 15_000 }));
    const probe = resps[0] as RespClient;
    const before = await respInfoFields(probe);
    assert.equal(before.get('shard_1_leader'), 'unknown', 'no command has found a leader yet');

    const acknowledged = new Map<string, string>();
    let stop = false;
    const writer = async (resp: RespClient, name: string) => {
      for (let n = 0; !stop; n++) {
        const key = `${name}:${n % 25}`;
        const value = `${name}.${n}`;
        const reply = await resp.command('SET', key, value).catch(() => null);
        // Anything but OK (a -TRYAGAIN while a shard has no leader): the outcome is unknown, and a
        // later acknowledged SET of that key from this writer supersedes it.
        if (reply === 'OK') acknowledged.set(key, value);
        else {
          acknowledged.delete(key);
          // A command that fails at once (a closed connection rejects without any I/O) must not
          // make this loop spin on microtasks: it would starve the timers that end it.
          await sleep(20);
        }
      }
    };
    const writers = resps.slice(1).map((resp, index) => writer(resp, `w${index}`));
    await sleep(1_000);
    const perShard = new Array<number>(shards).fill(0);
    for (const key of acknowledged.keys()) perShard[shardOf(encoder.encode(key), shards)]! += 1;
    assert.ok(
      perShard.every((count) => count > 0),
      `acknowledged keys land in every shard: ${JSON.stringify(perShard)}`,
    );
    // Each shard is its own group: its replicas' durable logs took writes...
    for (let shard = 0; shard < shards; shard++) {
      const log = rkvActorStorageNames(dataDir, 0, shard, shards).log.slice('file:'.length);
      assert.ok(statSync(log).size > 0, `shard ${shard}'s log on replica 0 has records`);
    }
    // ...and holds only its own keys: a lease read of a key at the other shard's leader misses.
    const [someKey] = [...acknowledged.keys()];
    const keyBytes = encoder.encode(someKey as string);
    const otherShard = 1 - shardOf(keyBytes, shards);
    const answers = await Promise.all(
      [0, 1, 2].map((r) => connection.ask('consensus', r, { type: 'get', key: keyBytes }, otherShard)),
    );
    const read = answers.find((a) => a?.type === 'value');
    assert.ok(read?.type === 'value', `the other shard's leader answers a read: ${JSON.stringify(answers)}`);
    assert.equal(read.found, false, `${someKey} (shard ${1 - otherShard}) is not in shard ${otherShard}`);

    // Memory sizing: shard 0's memtable flushes once it holds 64 KiB (NIC memory / (2 × 2 shards);
    // one shard would hold 256 KiB): ten 8 000-byte values make an SSTable there, none in shard 1.
    const big = 'x'.repeat(8_000);
    const bigKeys = Array.from({ length: 100 }, (_, i) => `big:${i}`)
      .filter((k) => shardOf(encoder.encode(k), shards) === 0)
      .slice(0, 10);
    const bigReplies = await Promise.all(bigKeys.map((k) => probe.command('SET', k, big)));
    bigKeys.forEach((k, i) => {
      if (bigReplies[i] === 'OK') acknowledged.set(k, big);
    });
    const tables = (shard: number): string[] =>
      readdirSync(rkvActorStorageNames(dataDir, 0, shard, shards).disk.slice('file:'.length)).filter((name) =>
        name.endsWith('.sst'),
      );
    for (let waited = 0; waited < 5_000 && tables(0).length === 0; waited += 100) await sleep(100);
    assert.ok(tables(0).length > 0, `shard 0 flushed its memtable at 64 KiB: ${bigReplies.join(' ')}`);
    assert.deepEqual(tables(1), [], "shard 1's memtable (a few KiB of small values) did not flush");

    const info = await respInfoFields(probe);
    assert.equal(info.get('ipipe_shards'), String(shards));
    const leaders = [0, 1].map((shard) => Number(info.get(`shard_${shard}_leader`)));
    assert.equal(
      leaders[otherShard],
      answers.indexOf(read),
      `INFO names shard ${otherShard}'s leader (the replica that served the read): ${leaders}`,
    );

    // SIGKILL the node leading shard 0 under load; both shards serve again without it.
    const victim = leaders[0] as number;
    await cluster.kill(victim);
    const killedAt = performance.now();
    for (let shard = 0; shard < shards; shard++) {
      const key = ['a', 'b', 'c', 'd', 'e', 'f'].find(
        (k) => shardOf(encoder.encode(`after:${k}`), shards) === shard,
      );
      assert.equal(await probe.command('SET', `after:${key}`, 'yes'), 'OK', `shard ${shard} serves`);
      acknowledged.set(`after:${key}`, 'yes');
    }
    const failoverMs = performance.now() - killedAt;
    await sleep(500);
    stop = true;
    await Promise.all(writers);

    // Start it again on its files, set every shard's replica up, then kill another node: each
    // shard's majority is now the restarted replica and the third.
    await cluster.start(victim);
    await connection.restartReplica(victim);
    await sleep(1_000);
    const second = (victim + 1) % 3;
    await cluster.kill(second);
    for (let shard = 0; shard < shards; shard++) {
      const key = ['g', 'h', 'i', 'j', 'k', 'l'].find(
        (k) => shardOf(encoder.encode(`again:${k}`), shards) === shard,
      );
      assert.equal(
        await probe.command('SET', `again:${key}`, 'yes'),
        'OK',
        `shard ${shard} serves with the restarted replica`,
      );
      acknowledged.set(`again:${key}`, 'yes');
    }
    // Deletes: a big key (on shard 0's SSTables) and a small one (in a memtable, or flushed too).
    const deleted = [
      bigKeys.find((k) => acknowledged.has(k)),
      [...acknowledged.keys()].find((k) => k.startsWith('w')),
    ];
    for (const key of deleted) {
      assert.ok(key !== undefined);
      assert.equal(await probe.command('DEL', key), 1, `DEL ${key}`);
      acknowledged.delete(key);
    }
    const keys = [...acknowledged.keys()];
    const values = (await probe.command('MGET', ...keys)) as (string | null)[];
    assert.deepEqual(
      values,
      keys.map((key) => acknowledged.get(key)),
      'every acknowledged SET reads back, in the order of the MGET',
    );

    // SCAN everything, 7 pairs a page over both shards: each key once, in byte order, as MGET has it.
    const scanner = connection.client(900);
    const scanned: [string, string][] = [];
    for await (const pair of scanner.scanAll(new Uint8Array(0), undefined, { limit: 7, giveUpMs: 20_000 }))
      scanned.push([decoder.decode(pair.key), decoder.decode(pair.value)]);
    const scannedKeys = scanned.map(([key]) => key);
    assert.deepEqual(
      scannedKeys,
      [...scannedKeys].sort((a, b) => Buffer.compare(encoder.encode(a), encoder.encode(b))),
      'key order',
    );
    assert.equal(new Set(scannedKeys).size, scannedKeys.length, 'each key once');
    for (const key of deleted)
      assert.ok(!scannedKeys.includes(key as string), `deleted ${key} is not scanned`);
    for (const [key, value] of acknowledged) {
      const found = scanned.find(([k]) => k === key);
      assert.equal(found?.[1], value, `acknowledged ${key} is scanned with its value`);
    }
    const reread = (await probe.command('MGET', ...scannedKeys)) as (string | null)[];
    assert.deepEqual(
      reread,
      scanned.map(([, value]) => value),
      'every scanned pair is what MGET reads',
    );
    // A range of 8 000-byte values: pages cut by bytes (48 KiB: six of them), the next key named.
    const bigLive = bigKeys.filter((k) => acknowledged.has(k)).sort();
    const first = await scanner.scan(encoder.encode('big:'), encoder.encode('big;'), { limit: 100 });
    assert.deepEqual(
      first.pairs.map((pair) => decoder.decode(pair.key)),
      bigLive.slice(0, 6),
      'a page holds six 8 000-byte values',
    );
    assert.equal(first.next === null ? null : decoder.decode(first.next), bigLive[6] ?? null);
    // RESP SCAN through the same front (opaque cursors): the same keys, and MATCH big:*.
    const respScan = async (...options: string[]): Promise<string[]> => {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const reply = (await probe.command('SCAN', cursor, ...options)) as [string, string[]];
        keys.push(...reply[1]);
        cursor = reply[0];
      } while (cursor !== '0');
      return keys;
    };
    assert.deepEqual(await respScan('COUNT', '5'), scannedKeys, 'SCAN COUNT 5 lists what scanAll did');
    assert.deepEqual(await respScan('MATCH', 'big:*', 'COUNT', '1000'), bigLive);
    process.stderr.write(
      `shards: ${JSON.stringify(perShard)} acknowledged keys per shard after 1 s; killed node ${victim} (shard 0's leader), ` +
        `both shards served ${failoverMs.toFixed(0)} ms later; restarted it, killed node ${second}; ` +
        `${keys.length} acknowledged keys read back; ${scanned.length} pairs scanned\n`,
    );
  } finally {
    for (const resp of resps) resp.close();
    await server.close();
    await connection.close();
    await cluster.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});
