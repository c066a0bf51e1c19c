/**
 * Replies stay in request order per connection even when the backend answers out of order, under
 * pipelining and back-pressure; backend rejections map to the documented replies.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  BackendUnavailableError,
  type KvBackend,
  type KvBackendInfo,
  MemoryKvBackend,
  NotLeaderError,
  type SetCondition,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { encodeArgs, RawClient, sleep } from './helpers.ts';

/** The in-memory backend behind a delay chosen per call: answers come back out of order. */
class DelayingBackend implements KvBackend {
  readonly inner = new MemoryKvBackend();
  readonly delayMs: (op: string, key: string) => number;
  constructor(delayMs: (op: string, key: string) => number) {
    this.delayMs = delayMs;
  }
  async #after<T>(op: string, key: Buffer | undefined, work: () => Promise<T>): Promise<T> {
    const ms = this.delayMs(op, key?.toString() ?? '');
    if (ms > 0) await sleep(ms);
    return work();
  }
  get(key: Buffer) {
    return this.#after('get', key, () => this.inner.get(key));
  }
  set(key: Buffer, value: Buffer, condition: SetCondition) {
    const copy = Buffer.from(value);
    return this.#after('set', key, () => this.inner.set(key, copy, condition));
  }
  del(keys: readonly Buffer[]) {
    return this.#after('del', keys[0], () => this.inner.del(keys));
  }
  exists(keys: readonly Buffer[]) {
    return this.#after('exists', keys[0], () => this.inner.exists(keys));
  }
  mget(keys: readonly Buffer[]) {
    return this.#after('mget', keys[0], () => this.inner.mget(keys));
  }
  dbsize() {
    return this.inner.dbsize();
  }
  info(): Promise<KvBackendInfo> {
    return this.inner.info();
  }
}

test('a pipeline answered out of order by the backend is replied to in order', async () => {
  // Earlier keys wait longer: the backend finishes them last.
  const backend = new DelayingBackend((_op, key) => (key.startsWith('slow') ? 40 - Number(key.slice(4)) : 0));
  await backend.inner.set(Buffer.from('fast'), Buffer.from('F'), 'always');
  for (let index = 0; index < 10; index++) {
    await backend.inner.set(Buffer.from(`slow${index}`), Buffer.from(`S${index}`), 'always');
  }
  const server = await startRespServer({ port: 0, backend });
  const client = await RawClient.connect(server.address.port);
  const commands: Buffer[] = [];
  const expected: unknown[] = [];
  for (let index = 0; index < 10; index++) {
    commands.push(encodeArgs(['GET', `slow${index}`]), encodeArgs(['PING']), encodeArgs(['GET', 'fast']));
    expected.push(`S${index}`, 'PONG', 'F');
  }
  client.send(Buffer.concat(commands));
  assert.deepEqual(await client.plainReplies(expected.length), expected);
  client.close();
  await server.close();
});

test('property: random delays never reorder replies (seeded)', async () => {
  const seed = Number(process.env['RESP_SEED'] ?? Date.now() % 2 ** 31);
  console.log(`property seed ${seed} (rerun with RESP_SEED=${seed})`);
  let longPipelines = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.tuple(
          fc.constantFrom('SET', 'GET', 'DEL', 'EXISTS', 'PING'),
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: 0, max: 4 }),
        ),
        // size 'max': fast-check's default size stops 10 commands past minLength (11 at most).
        { minLength: 1, maxLength: 40, size: 'max' },
      ),
      async (ops) => {
        if (ops.length >= 20) longPipelines++;
        // The delay is drawn from the op itself, so runs are reproducible from fast-check's seed.
        const delays = new Map<string, number>();
        const backend = new DelayingBackend((_op, key) => delays.get(key) ?? 0);
        const server = await startRespServer({ port: 0, backend });
        const client = await RawClient.connect(server.address.port);
        // Model: a plain Map applied in request order.
        const model = new Map<string, string>();
        const expected: unknown[] = [];
        const bytes: Buffer[] = [];
        ops.forEach(([op, keyIndex, delay], index) => {
          const key = `k${keyIndex}`;
          delays.set(key, delay);
          switch (op) {
            case 'SET':
              bytes.push(encodeArgs(['SET', key, `v${index}`]));
              model.set(key, `v${index}`);
              expected.push('OK');
              break;
            case 'GET':
              bytes.push(encodeArgs(['GET', key]));
              expected.push(model.get(key) ?? null);
              break;
            case 'DEL':
              bytes.push(encodeArgs(['DEL', key]));
              expected.push(model.delete(key) ? 1 : 0);
              break;
            case 'EXISTS':
              bytes.push(encodeArgs(['EXISTS', key]));
              expected.push(model.has(key) ? 1 : 0);
              break;
            default:
              bytes.push(encodeArgs(['PING']));
              expected.push('PONG');
          }
        });
        // The backend applies writes in arrival order only if delays allow; so send one command
        // per round trip for writes' effects, but pipeline to check ordering: here every command
        // of a key shares one delay, so per-key order is preserved and the model holds.
        client.send(Buffer.concat(bytes));
        const replies = await client.plainReplies(expected.length);
        client.close();
        await server.close();
        assert.deepEqual(replies, expected);
      },
    ),
    { numRuns: 25, seed },
  );
  // P(fewer than 2 of 25 pipelines reach 20 commands) is about 1e-6 with lengths about uniform.
  assert.ok(longPipelines >= 2, `only ${longPipelines} of 25 pipelines had 20 or more commands`);
});

test('back-pressure: past maxInflightCommands the socket is paused, and nothing is lost', async () => {
  const backend = new DelayingBackend(() => 1);
  const server = await startRespServer({ port: 0, backend, limits: { maxInflightCommands: 8 } });
  const client = await RawClient.connect(server.address.port);
  const count = 2000;
  const bytes: Buffer[] = [];
  for (let index = 0; index < count; index++)
    bytes.push(encodeArgs(['ECHO', String(index)]), encodeArgs(['GET', 'x']));
  client.send(Buffer.concat(bytes));
  const replies = await client.plainReplies(count * 2, 20_000);
  for (let index = 0; index < count; index++) {
    assert.equal(replies[index * 2], String(index));
    assert.equal(replies[index * 2 + 1], null);
  }
  assert.ok(server.stats().readPauses > 0, 'reading was paused at least once');
  client.close();
  await server.close();
});

test('back-pressure: a client that does not read its replies stops being read, then catches up', async (t) => {
  const backend = new MemoryKvBackend();
  const value = Buffer.alloc(256 * 1024, 0x61);
  await backend.set(Buffer.from('big'), value, 'always');
  const server = await startRespServer({ port: 0, backend });
  const client = await RawClient.connect(server.address.port);
  t.after(() => {
    client.close();
    return server.close({ timeoutMs: 100 });
  });
  client.socket.pause();
  // 16 MiB of replies: far past the socket's high-water mark and loopback's kernel buffers.
  const count = 64;
  client.send(Buffer.concat(Array.from({ length: count }, () => encodeArgs(['GET', 'big']))));
  await sleep(300);
  assert.ok(server.stats().readPauses > 0, 'the server stopped reading a client that does not read');
  client.socket.resume();
  const replies = await client.replies(count, 20_000);
  assert.equal(replies.length, count);
  for (const reply of replies) assert.ok(reply.type === 'bulk' && reply.value?.equals(value));
});

/** Rejects according to the key's first letter. */
class FailingBackend extends MemoryKvBackend {
  override get(key: Buffer): Promise<Buffer | null> {
    const kind = key.toString()[0];
    if (kind === 'f') return Promise.reject(new NotLeaderError('10.0.0.2:6380'));
    if (kind === 'n') return Promise.reject(new NotLeaderError());
    if (kind === 'u')
      return Promise.reject(new BackendUnavailableError('no quorum: 1 of 3 replicas reachable'));
    if (kind === 'e') return Promise.reject(new Error('disk on fire\r\nsecond line'));
    if (kind === 's') throw new Error('thrown, not rejected');
    return super.get(key);
  }
}

test('backend rejections become -READONLY, -TRYAGAIN or -ERR internal error, in order', async () => {
  const server = await startRespServer({ port: 0, backend: new FailingBackend() });
  const client = await RawClient.connect(server.address.port);
  client.send(Buffer.concat(['f', 'n', 'u', 'e', 's', 'ok'].map((key) => encodeArgs(['GET', key]))));
  assert.deepEqual(await client.plainReplies(6), [
    { error: 'READONLY this replica is not the leader; the leader is 10.0.0.2:6380: send commands there' },
    { error: 'READONLY this replica is not the leader and knows no leader yet; retry shortly' },
    { error: 'TRYAGAIN no quorum: 1 of 3 replicas reachable' },
    { error: 'ERR internal error: disk on fire  second line' },
    { error: 'ERR internal error: thrown, not rejected' },
    null,
  ]);
  const stats = server.stats();
  assert.equal(stats.notLeaderReplies, 2);
  assert.equal(stats.unavailableReplies, 1);
  assert.equal(stats.backendErrors, 2);
  assert.equal(stats.errorReplies, 5);
  assert.equal(await client.call('PING'), 'PONG', 'the connection goes on');
  client.close();
  await server.close();
});

test('INFO on a follower: role:slave with master_host/master_port, and the leader in # Ipipe', async () => {
  class Follower extends MemoryKvBackend {
    override info(): Promise<KvBackendInfo> {
      return Promise.resolve({
        role: 'follower',
        leaderAddress: '127.0.0.1:6381',
        ipipe: [
          ['replica_id', 1],
          ['leader_id', 0],
        ],
      });
    }
  }
  const server = await startRespServer({ port: 0, backend: new Follower() });
  const client = await RawClient.connect(server.address.port);
  assert.equal(
    await client.call('INFO', 'replication', 'ipipe'),
    '# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:6381\r\n\r\n' +
      '# Ipipe\r\nipipe_role:follower\r\nipipe_leader:127.0.0.1:6381\r\nreplica_id:1\r\nleader_id:0\r\n',
  );
  client.close();
  await server.close();
});
