/**
 * The `ioredis` npm client against the RESP front, unchanged: its connect handshake (CLIENT
 * SETINFO, the INFO ready check), GET/SET/DEL/EXISTS/MGET/DBSIZE, binary values, a pipeline, INFO,
 * and how the front's error replies reach it (unknown command, oversized value, not the leader) —
 * each followed by a command showing the connection still serves.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import {
  type KvBackendInfo,
  MemoryKvBackend,
  NotLeaderError,
  type RespServerHandle,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';

/** ioredis's ReplyError (from redis-errors, which ships no types): an Error named ReplyError. */
function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

let server: RespServerHandle;
let redis: Redis;

/** A client that fails fast instead of retrying forever, so a broken front fails the test. */
function connectClient(port: number): Promise<Redis> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 5000,
  });
  return client.connect().then(() => client);
}

before(async () => {
  server = await startRespServer({
    port: 0,
    backend: new MemoryKvBackend({ ipipe: [['replica_id', 0]] }),
    limits: { maxKeyBytes: 64, maxValueBytes: 1024 },
  });
  redis = await connectClient(server.address.port);
});

after(async () => {
  await redis.quit();
  await server.close();
});

test('ioredis connects: the ready check passed and PING answers', async () => {
  assert.equal(redis.status, 'ready');
  assert.equal(await redis.ping(), 'PONG');
});

test('SET, GET, DEL, EXISTS, DBSIZE', async () => {
  assert.equal(await redis.set('io:a', 'alpha'), 'OK');
  assert.equal(await redis.set('io:b', 'beta'), 'OK');
  assert.equal(await redis.get('io:a'), 'alpha');
  assert.equal(await redis.get('io:missing'), null);
  assert.equal(await redis.exists('io:a', 'io:b', 'io:a', 'io:missing'), 3);
  const before = await redis.dbsize();
  assert.equal(await redis.del('io:a', 'io:missing'), 1);
  assert.equal(await redis.get('io:a'), null);
  assert.equal(await redis.dbsize(), before - 1);
  assert.equal(await redis.set('io:b', 'new', 'NX'), null, 'NX on a present key writes nothing');
  assert.equal(await redis.set('io:c', 'c', 'XX'), null, 'XX on an absent key writes nothing');
  assert.equal(await redis.get('io:b'), 'beta');
});

test('binary values round-trip through getBuffer', async () => {
  const value = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
  assert.equal(await redis.set(Buffer.from([0xff, 0x00, 0x0d, 0x0a]), value), 'OK');
  const back = await redis.getBuffer(Buffer.from([0xff, 0x00, 0x0d, 0x0a]));
  assert.ok(back?.equals(value));
});

test('MGET answers in key order with nulls for absent keys', async () => {
  await redis.set('io:m1', 'one');
  await redis.set('io:m3', 'three');
  assert.deepEqual(await redis.mget('io:m1', 'io:m2', 'io:m3', 'io:m1'), ['one', null, 'three', 'one']);
});

test('a pipeline of 500 commands is answered in order', async () => {
  const pipeline = redis.pipeline();
  for (let index = 0; index < 100; index++) {
    pipeline.set(`io:p${index}`, `v${index}`);
    pipeline.get(`io:p${index}`);
    pipeline.exists(`io:p${index}`);
    pipeline.del(`io:p${index}`);
    pipeline.get(`io:p${index}`);
  }
  const results = await pipeline.exec();
  assert.ok(results !== null);
  assert.equal(results.length, 500);
  for (let index = 0; index < 100; index++) {
    const slice: [Error | null, unknown][] = results.slice(index * 5, index * 5 + 5);
    for (const [error] of slice) assert.equal(error, null);
    assert.deepEqual(
      slice.map(([, value]) => value),
      ['OK', `v${index}`, 1, 1, null],
    );
  }
});

test('INFO: Redis layout, role:master, and the # Ipipe section', async () => {
  const info = await redis.info();
  assert.match(info, /^# Server\r\nredis_version:/);
  assert.match(info, /\r\n# Replication\r\nrole:master\r\n/);
  assert.match(info, /\r\n# Ipipe\r\nipipe_role:standalone\r\n/);
  assert.match(info, /\r\nreplica_id:0\r\n/);
  assert.match(info, /\r\nloading:0\r\n/);
  const replication = await redis.info('replication');
  assert.equal(replication, '# Replication\r\nrole:master\r\n');
});

test('an unknown command is a ReplyError with Redis text; the connection keeps serving', async () => {
  const unknownBefore = server.stats().unknownCommands;
  await assert.rejects(redis.call('FLUSHALL'), (error: unknown) => {
    assert.ok(isReplyError(error), `a ReplyError, got ${String(error)}`);
    assert.equal(error.message, "ERR unknown command 'FLUSHALL', with args beginning with: ");
    return true;
  });
  assert.equal(server.stats().unknownCommands, unknownBefore + 1);
  assert.equal(await redis.ping(), 'PONG');
});

test('an oversized value or key is refused with the limit named; the connection keeps serving', async () => {
  await assert.rejects(
    redis.set('io:big', 'x'.repeat(1025)),
    /ERR value of 1025 bytes exceeds the limit of 1024 bytes \(maxValueBytes\)/,
  );
  await assert.rejects(
    redis.get('k'.repeat(65)),
    /ERR key of 65 bytes exceeds the limit of 64 bytes \(maxKeyBytes\)/,
  );
  assert.equal(await redis.get('io:big'), null);
  assert.equal(await redis.set('io:fits', 'x'.repeat(1024)), 'OK');
});

test('a follower: -READONLY names the leader, INFO says role:slave', async () => {
  class Follower extends MemoryKvBackend {
    override get(): Promise<Buffer | null> {
      return Promise.reject(new NotLeaderError('127.0.0.1:7001'));
    }
    override info(): Promise<KvBackendInfo> {
      return Promise.resolve({ role: 'follower', leaderAddress: '127.0.0.1:7001' });
    }
  }
  const follower = await startRespServer({ port: 0, backend: new Follower() });
  const client = await connectClient(follower.address.port);
  try {
    await assert.rejects(client.get('k'), (error: unknown) => {
      assert.ok(isReplyError(error), `a ReplyError, got ${String(error)}`);
      assert.equal(
        error.message,
        'READONLY this replica is not the leader; the leader is 127.0.0.1:7001: send commands there',
      );
      return true;
    });
    assert.equal(
      await client.info('replication'),
      '# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:7001\r\n',
    );
    assert.equal(follower.stats().notLeaderReplies, 1);
  } finally {
    await client.quit();
    await follower.close();
  }
});
