/**
 * Debian's `redis-cli` (redis-tools) against the RESP front, unchanged: one-shot commands, several
 * commands on one connection from stdin, `--pipe` mass insertion, INFO, an unknown command, and
 * malformed input sent through `--pipe` (counted; the server keeps serving). Skipped, with the
 * reason, where redis-cli is not installed.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  MemoryKvBackend,
  type RespServerHandle,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { findExecutable, runProcess } from './helpers.ts';

const REDIS_CLI = findExecutable('redis-cli');
const skip =
  REDIS_CLI === null
    ? 'redis-cli not found on PATH (Debian: apt-get install redis-tools); the front is tested with raw sockets and ioredis instead'
    : false;

let server: RespServerHandle;
let backend: MemoryKvBackend;

before(async () => {
  backend = new MemoryKvBackend();
  server = await startRespServer({ port: 0, backend });
});

after(() => server.close());

/** `redis-cli --no-raw <args>`: formatted replies ("(nil)", "(integer) 1") as on a terminal. */
async function cli(args: readonly string[], input?: string): Promise<string> {
  const result = await runProcess(
    REDIS_CLI!,
    ['-h', '127.0.0.1', '-p', String(server.address.port), '--no-raw', ...args],
    input === undefined ? {} : { input },
  );
  assert.equal(result.code, 0, `redis-cli ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

test('one-shot SET, GET, EXISTS, MGET, DEL, DBSIZE', { skip }, async () => {
  assert.equal(await cli(['SET', 'cli:a', 'hello world']), 'OK\n');
  assert.equal(await cli(['GET', 'cli:a']), '"hello world"\n');
  assert.equal(await cli(['GET', 'cli:missing']), '(nil)\n');
  assert.equal(await cli(['EXISTS', 'cli:a', 'cli:missing']), '(integer) 1\n');
  assert.equal(await cli(['MGET', 'cli:a', 'cli:missing']), '1) "hello world"\n2) (nil)\n');
  assert.equal(await cli(['DBSIZE']), '(integer) 1\n');
  assert.equal(await cli(['DEL', 'cli:a', 'cli:missing']), '(integer) 1\n');
  assert.equal(await cli(['DBSIZE']), '(integer) 0\n');
});

test('commands read from stdin share one connection and are answered in order', { skip }, async () => {
  const accepted = server.stats().connectionsAccepted;
  const output = await cli([], 'SET cli:s 1\nGET cli:s\nPING\nDEL cli:s\nGET cli:s\n');
  assert.equal(output, 'OK\n"1"\nPONG\n(integer) 1\n(nil)\n');
  assert.equal(server.stats().connectionsAccepted, accepted + 1);
});

test('--pipe mass insertion: 1000 SETs, no errors, all stored', { skip }, async () => {
  let input = '';
  for (let index = 0; index < 1000; index++) {
    const key = `cli:pipe:${index}`;
    const value = `v${index}`;
    input += `*3\r\n$3\r\nSET\r\n$${key.length}\r\n${key}\r\n$${value.length}\r\n${value}\r\n`;
  }
  const output = await cli(['--pipe'], input);
  assert.match(output, /errors: 0, replies: 1000/);
  assert.equal(backend.size, 1000);
  assert.equal(await cli(['GET', 'cli:pipe:999']), '"v999"\n');
  assert.equal(
    await cli(['DEL', ...Array.from({ length: 1000 }, (_, index) => `cli:pipe:${index}`)]),
    '(integer) 1000\n',
  );
});

test('INFO shows the Redis sections and which replica leads', { skip }, async () => {
  const replication = await cli(['INFO', 'replication']);
  assert.match(replication, /^# Replication\r?\nrole:master\r?\n/);
  const all = await cli(['INFO']);
  for (const section of ['Server', 'Clients', 'Stats', 'Replication', 'Keyspace', 'Ipipe']) {
    assert.match(all, new RegExp(`# ${section}\\r?\\n`), `INFO has # ${section}`);
  }
  assert.match(all, /ipipe_role:standalone/);
});

test('an unknown command gets Redis error text and is counted; the server keeps serving', {
  skip,
}, async () => {
  const unknown = server.stats().unknownCommands;
  assert.equal(
    await cli(['FLUSHALL', 'ASYNC']),
    "(error) ERR unknown command 'FLUSHALL', with args beginning with: 'ASYNC' \n",
  );
  assert.equal(server.stats().unknownCommands, unknown + 1);
  assert.equal(await cli(['PING']), 'PONG\n');
});

test('malformed RESP through --pipe: a protocol error, counted, and the server keeps serving', {
  skip,
}, async () => {
  const before = server.stats().protocolErrors['invalid-bulk-length'];
  // A bulk length that is not a number: the front answers -ERR Protocol error and closes.
  const result = await runProcess(
    REDIS_CLI!,
    ['-h', '127.0.0.1', '-p', String(server.address.port), '--pipe'],
    { input: '*2\r\n$3\r\nGET\r\n$x\r\nkey\r\n' },
  );
  assert.match(result.stdout + result.stderr, /Protocol error/);
  assert.equal(server.stats().protocolErrors['invalid-bulk-length'], before + 1);
  assert.equal(await cli(['PING']), 'PONG\n');
});
