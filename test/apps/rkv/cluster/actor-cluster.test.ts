/**
 * RKV's simulator actors on live node processes (actor-cluster.ts): three nodes, each a replica
 * with its consensus and memtable actors on the NIC domain and its SSTable reader and compaction on
 * the host, Multi-Paxos between the nodes as actor messages. Puts are committed and read back;
 * writers keep going while the leader's process is SIGKILLed; a survivor is elected (the clients
 * find it through refusals), writes go on, every acknowledged put reads back with its value, and
 * the whole client history (puts and lease reads, across the fail-over) is linearizable. The
 * killed node is started again on its files (durable log, SSTable journal) and rejoins; the leader
 * of the moment is killed, so the group's majority needs the restarted replica — puts go on and
 * every acknowledged one reads back (the reads checked in the linearizable history, and a key one
 * client wrote, none of its puts unknown, against its last acknowledged put). Then the Redis-protocol front over the two running replicas (actor-backend.ts): SET/GET/MGET/EXISTS
 * work, a pipelined SET and GET of one key read the write, SET NX of a present key answers nil,
 * DBSIZE counts at least the acknowledged keys, and a key longer than their codec carries is refused
 * with -ERR, not faked (DEL: actor-del.test.ts; NX/XX and DBSIZE in full: actor-nx-xx-dbsize.test.ts).
 */

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkLinearizability, describeCheckResult, kvModel } from '../../../../src/apps/rkv/check/index.ts';
import type { KvHistoryOp } from '../../../../src/apps/rkv/check/kv-model.ts';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../../../src/apps/rkv/cluster/actor-backend.ts';
import { type RkvActorClient, RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { RespClient, respInfoFields } from '../../../../src/apps/rkv/resp/client.ts';
import { startRespServer } from '../../../../src/apps/rkv/resp/server.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { writeActorCluster } from './actor-fixture.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`rkv actor cluster seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

test('three live nodes run the RKV actors: commit, fail over after SIGKILL of the leader, lose nothing acknowledged', {
  timeout: 120_000,
}, async () => {
  const { dir, spec, file } = await writeActorCluster('rkv-actors-');
  const cluster = await LocalCluster.launch({ file, spec });
  const connection = await RkvActorConnection.connect(spec);
  const history: KvHistoryOp[] = [];
  const acknowledged = new Map<string, string>();
  try {
    await connection.setup({
      heartbeatMs: 50,
      electionTimeoutMs: 300,
      leader: seed % 3,
      dataDir: join(dir, 'data'),
    });
    const first = connection.client(1);
    const key = (name: string) => encoder.encode(name.padEnd(16, '.'));
    const slot = await first.put(key('hello'), encoder.encode('world'));
    assert.ok(slot >= 0, `committed (slot ${slot}; 0 when a retry was answered from the session table)`);
    assert.equal(decoder.decode((await first.get(key('hello'))) ?? new Uint8Array()), 'world');
    assert.equal(await first.get(key('absent')), null);
    const oldLeader = first.leader;

    let stop = false;
    const writer = async (client: RkvActorClient, name: string) => {
      for (let n = 0; !stop; n++) {
        const k = `${name}:${n % 20}`;
        const value = `${name}.${n}`;
        const callAt = performance.now();
        try {
          if (n % 3 === 2) {
            const got = await client.get(key(k), 5_000);
            history.push({
              clientId: client.clientId,
              input: { op: 'get', key: k },
              callAt,
              status: 'ok',
              output: { op: 'get', value: got === null ? null : decoder.decode(got) },
              returnAt: performance.now(),
            });
          } else {
            await client.put(key(k), encoder.encode(value), 5_000);
            history.push({
              clientId: client.clientId,
              input: { op: 'put', key: k, value },
              callAt,
              status: 'ok',
              output: { op: 'put' },
              returnAt: performance.now(),
            });
            acknowledged.set(k, value);
          }
        } catch {
          const input =
            n % 3 === 2 ? ({ op: 'get', key: k } as const) : ({ op: 'put', key: k, value } as const);
          history.push({ clientId: client.clientId, input, callAt, status: 'unknown' });
        }
      }
    };
    // Two writers share keys (w:…), one has its own (v:…); `hello` was written above.
    history.push({
      clientId: 1,
      input: { op: 'put', key: 'hello', value: 'world' },
      callAt: 0,
      status: 'ok',
      output: { op: 'put' },
      returnAt: 1,
    });
    const writers = [
      writer(connection.client(2), 'w'),
      writer(connection.client(3), 'w'),
      writer(connection.client(4), 'v'),
    ];
    await sleep(1_500);
    const beforeKill = acknowledged.size;
    assert.ok(beforeKill > 0, 'puts were acknowledged before the kill');
    await cluster.kill(oldLeader);
    const killedAt = performance.now();
    // A survivor leads once a put through it is acknowledged again.
    const probe = connection.client(5);
    await probe.put(key('after-kill'), encoder.encode('yes'), 20_000);
    const failoverMs = performance.now() - killedAt;
    assert.notEqual(probe.leader, oldLeader, 'a survivor leads');
    const atFailover = history.length;
    await sleep(1_000);
    stop = true;
    await Promise.all(writers);
    const afterFailover = history.slice(atFailover).filter((op) => op.status === 'ok').length;
    process.stderr.write(
      `killed leader ${oldLeader}; replica ${probe.leader} leads, a put went through ${failoverMs.toFixed(0)} ms later; ` +
        `${history.length} operations (${history.filter((op) => op.status === 'unknown').length} unknown), ` +
        `${afterFailover} answered after the fail-over\n`,
    );
    assert.ok(afterFailover > 0, 'the group kept serving after the fail-over');

    // The killed replica's node starts again on its files and rejoins; then the replica leading
    // now is killed too, so a majority needs the restarted one: it must have kept its promises and
    // accepted entries (its durable log) and catch up to serve every acknowledged put if it leads.
    await cluster.start(oldLeader);
    await connection.restartReplica(oldLeader);
    await sleep(1_000);
    const secondLeader = probe.leader;
    await cluster.kill(secondLeader);
    const secondKillAt = performance.now();
    await probe.put(key('after-second-kill'), encoder.encode('yes'), 20_000);
    process.stderr.write(
      `restarted replica ${oldLeader} from its files; killed leader ${secondLeader}; replica ${probe.leader} leads, ` +
        `a put went through ${(performance.now() - secondKillAt).toFixed(0)} ms later\n`,
    );
    assert.notEqual(probe.leader, secondLeader, 'the group of the restarted replica and the third serves');
    // Every key is read back, and the reads join the history: linearizability then decides what
    // each may return. The last acknowledged put is the only right answer only for a key one
    // client wrote with no put of it left unknown — two writers' overlapping puts may be
    // acknowledged in another order than they took effect, and a put that timed out may take
    // effect at any later point — so those keys are also checked exactly, the others only so.
    const writersOf = new Map<string, Set<number>>();
    const unknownPut = new Set<string>();
    for (const op of history) {
      if (op.input.op !== 'put') continue;
      const clients = writersOf.get(op.input.key) ?? new Set<number>();
      clients.add(op.clientId);
      writersOf.set(op.input.key, clients);
      if (op.status === 'unknown') unknownPut.add(op.input.key);
    }
    for (const [k, value] of acknowledged) {
      const callAt = performance.now();
      const got = await probe.get(key(k));
      const read = got === null ? null : decoder.decode(got);
      history.push({
        clientId: probe.clientId,
        input: { op: 'get', key: k },
        callAt,
        status: 'ok',
        output: { op: 'get', value: read },
        returnAt: performance.now(),
      });
      if (writersOf.get(k)?.size === 1 && !unknownPut.has(k)) assert.equal(read, value, `acknowledged ${k}`);
    }
    const result = checkLinearizability(kvModel, history, { timeLimitMs: 30_000 });
    assert.equal(result.verdict, 'linearizable', describeCheckResult(kvModel, result));

    // The RESP front over the two running replicas.
    const server = await startRespServer({
      port: 0,
      backend: new ActorKvBackend(connection, { clients: 8, firstClientId: 100 }),
      limits: ACTOR_RESP_LIMITS,
    });
    const resp = await RespClient.connect(server.address.port, { timeoutMs: 15_000 });
    try {
      assert.equal(await resp.command('SET', 'resp:a', '1'), 'OK');
      const [set, get] = await Promise.all([
        resp.command('SET', 'resp:b', 'two'),
        resp.command('GET', 'resp:b'),
      ]);
      assert.deepEqual([set, get], ['OK', 'two'], 'a pipelined GET reads the SET before it');
      assert.deepEqual(await resp.command('MGET', 'resp:a', 'resp:b', 'resp:none'), ['1', 'two', null]);
      assert.equal(await resp.command('EXISTS', 'resp:a', 'resp:none'), 1);
      assert.equal(await resp.command('GET', 'w:0'.padEnd(16, '.')), acknowledged.get('w:0') ?? null);
      assert.equal(await resp.command('SET', 'resp:a', '3', 'NX'), null, 'NX on a present key: nil');
      const size = await resp.command('DBSIZE');
      assert.ok(
        typeof size === 'number' && size >= acknowledged.size + 2,
        `DBSIZE ${JSON.stringify(size)}: at least the ${acknowledged.size} acknowledged keys and resp:a, resp:b`,
      );
      const tooLong = (await resp.command('SET', 'k'.repeat(65), 'v')) as { error?: string };
      assert.match(
        tooLong.error ?? '',
        /^ERR/,
        `a key longer than the codec carries: ${JSON.stringify(tooLong)}`,
      );
      assert.equal(await resp.command('GET', 'resp:a'), '1', 'the NX and the refused SET changed nothing');
      const info = await respInfoFields(resp);
      assert.equal(info.get('ipipe_backend'), 'rkv-actors');
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
