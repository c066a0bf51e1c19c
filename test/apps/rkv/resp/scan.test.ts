/**
 * SCAN on the RESP front (commands.ts `scan`, scan-cursors.ts) behind the in-memory backend:
 *
 *   pages      SCAN 0 COUNT n … until cursor 0 returns every key once; the cursor is an opaque
 *              number; MATCH filters each page by Redis's glob (a page may be empty, cursor not
 *              0); TYPE string keeps every key, another type none
 *   errors     a cursor that is not a number, or one this front never gave, and COUNT 0 or not a
 *              number, get Redis's error texts (the unknown cursor says to start from 0)
 *   eviction   the cursor table keeps the newest MAX_OPEN_SCAN_CURSORS: an evicted cursor gets its
 *              own error (ScanCursorExpiredError: restart from cursor 0), a kept one goes on
 *   redis-cli  `redis-cli --scan [--pattern p]` lists every (matching) key, where
 *              redis-cli is installed (it parses the cursor as a 64-bit number)
 * The actor backend's SCAN is tested live in test/apps/rkv/cluster/actor-shards.test.ts.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  BackendUnsupportedError,
  MemoryKvBackend,
  type RespServerHandle,
  ScanCursorExpiredError,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { MAX_OPEN_SCAN_CURSORS, ScanCursors } from '../../../../src/apps/rkv/resp/scan-cursors.ts';
import { findExecutable, type Plain, RawClient, runProcess } from './helpers.ts';

let server: RespServerHandle;
let client: RawClient;
const KEYS = Array.from({ length: 25 }, (_, i) => `scan:${String(i).padStart(2, '0')}`);

before(async () => {
  server = await startRespServer({ port: 0, backend: new MemoryKvBackend() });
  client = await RawClient.connect(server.address.port);
  for (const key of KEYS) assert.equal(await client.call('SET', key, `v${key}`), 'OK');
  assert.equal(await client.call('SET', 'other', 'x'), 'OK');
});

after(async () => {
  client.close();
  await server.close();
});

/** Every page of a SCAN with `options`, as [cursor, keys] pairs. */
async function pages(...options: string[]): Promise<[string, string[]][]> {
  const out: [string, string[]][] = [];
  let cursor = '0';
  do {
    const reply = (await client.call('SCAN', cursor, ...options)) as Plain[];
    assert.ok(Array.isArray(reply) && reply.length === 2, JSON.stringify(reply));
    cursor = reply[0] as string;
    out.push([cursor, reply[1] as string[]]);
    assert.ok(out.length < 100, 'the scan ends');
  } while (cursor !== '0');
  return out;
}

test('SCAN pages return every key once, MATCH filters, TYPE string keeps all', async () => {
  const all = await pages('COUNT', '4');
  assert.deepEqual(all.flatMap(([, keys]) => keys).sort(), [...KEYS, 'other'].sort());
  assert.equal(all.length, 7, '26 keys, 4 a page');
  for (const [cursor] of all.slice(0, -1)) assert.match(cursor, /^[1-9][0-9]*$/, 'an opaque number');
  const matched = await pages('MATCH', 'scan:1?', 'COUNT', '4');
  assert.deepEqual(
    matched.flatMap(([, keys]) => keys),
    KEYS.filter((key) => key.startsWith('scan:1')),
  );
  assert.ok(
    matched.some(([cursor, keys]) => keys.length === 0 && cursor !== '0'),
    'a page whose keys all fail MATCH is empty, and the scan goes on',
  );
  assert.deepEqual((await pages('MATCH', 'scan:[02]4', 'COUNT', '100'))[0]?.[1], ['scan:04', 'scan:24']);
  assert.deepEqual((await pages('TYPE', 'string', 'COUNT', '100'))[0]?.[1].length, 26);
  assert.deepEqual((await pages('TYPE', 'hash', 'COUNT', '100'))[0]?.[1], []);
  const defaultPage = (await client.call('SCAN', '0')) as [string, string[]];
  assert.equal(defaultPage[1].length, 10, 'COUNT defaults to 10');
});

test('SCAN errors: a bad or unknown cursor, a bad COUNT, a dangling option', async () => {
  assert.deepEqual(await client.call('SCAN', 'x'), { error: 'ERR invalid cursor' });
  assert.deepEqual(await client.call('SCAN', '-1'), { error: 'ERR invalid cursor' });
  const unknown = (await client.call('SCAN', '987654321')) as { error: string };
  assert.match(
    unknown.error,
    /^ERR invalid SCAN cursor 987654321: this front never gave it; start the scan again from cursor 0/,
  );
  assert.deepEqual(await client.call('SCAN', '0', 'COUNT', '0'), { error: 'ERR syntax error' });
  assert.deepEqual(await client.call('SCAN', '0', 'COUNT', 'x'), {
    error: 'ERR value is not an integer or out of range',
  });
  assert.deepEqual(await client.call('SCAN', '0', 'MATCH'), { error: 'ERR syntax error' });
  assert.deepEqual(await client.call('SCAN', '0', 'LIMIT', '3'), { error: 'ERR syntax error' });
});

const REDIS_CLI = findExecutable('redis-cli');
test('redis-cli --scan lists every key, and --pattern filters', {
  skip: REDIS_CLI === null ? 'redis-cli not found on PATH (Debian: apt-get install redis-tools)' : false,
}, async () => {
  const run = async (...args: string[]) => {
    const result = await runProcess(REDIS_CLI!, [
      '-h',
      '127.0.0.1',
      '-p',
      String(server.address.port),
      ...args,
    ]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout.split('\n').filter(Boolean);
  };
  assert.deepEqual((await run('--scan')).sort(), [...KEYS, 'other'].sort());
  assert.deepEqual((await run('--scan', '--pattern', '*2?')).sort(), [
    'scan:20',
    'scan:21',
    'scan:22',
    'scan:23',
    'scan:24',
  ]);
});

test('the cursor table keeps the newest cursors: an evicted one is refused as expired, a kept one goes on', () => {
  const cursors = new ScanCursors();
  const first = cursors.open(new Uint8Array([0x61]));
  const kept: string[] = [];
  for (let i = 0; i < MAX_OPEN_SCAN_CURSORS; i++) kept.push(cursors.open(new Uint8Array([0x62, i & 0xff])));
  assert.throws(
    () => cursors.resume(first),
    (error: unknown) =>
      error instanceof ScanCursorExpiredError &&
      error.code === 'IPIPE_ERR_RESP_SCAN_CURSOR_EXPIRED' &&
      error.cursor === first &&
      /restart the scan from cursor 0/.test(error.message),
  );
  assert.deepEqual(cursors.resume(kept[0] as string), new Uint8Array([0x62, 0]), 'the oldest kept');
  assert.deepEqual(cursors.resume(kept.at(-1) as string), new Uint8Array([0x62, 0xff]));
  assert.throws(() => cursors.resume('99999999'), BackendUnsupportedError, 'never given: not expired');
  assert.deepEqual(cursors.resume('0'), new Uint8Array(0));
});
