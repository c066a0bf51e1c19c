/**
 * Every command the front answers, over a real socket, with Redis 7's replies and error texts —
 * and the documented deviations (SET EX/PX refused, SELECT 0 only, RESP2 only).
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  MemoryKvBackend,
  type RespServerHandle,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { RawClient } from './helpers.ts';

let server: RespServerHandle;
let client: RawClient;

before(async () => {
  server = await startRespServer({
    port: 0,
    backend: new MemoryKvBackend({ ipipe: [['replica_id', 2]] }),
    limits: { maxKeyBytes: 16, maxValueBytes: 64 },
  });
  client = await RawClient.connect(server.address.port);
});

after(async () => {
  client.close();
  await server.close();
});

const call = (...args: (string | Buffer)[]) => client.call(...args);

test('PING, PING msg, ECHO', async () => {
  assert.equal(await call('PING'), 'PONG');
  assert.equal(await call('ping', 'hello'), 'hello');
  assert.equal(await call('ECHO', 'x y'), 'x y');
  assert.deepEqual(await call('PING', 'a', 'b'), {
    error: "ERR wrong number of arguments for 'ping' command",
  });
});

test('SET and GET, binary-safe; GET of a missing key is null', async () => {
  const binary = Buffer.from([0, 1, 2, 0xff, 13, 10]);
  assert.equal(await call('SET', 'bin', binary), 'OK');
  assert.equal(await call('GET', 'bin'), binary.toString('latin1'));
  assert.equal(await call('GET', 'missing'), null);
  assert.equal(await call('set', 'k', 'v1'), 'OK');
  assert.equal(await call('SeT', 'k', 'v2'), 'OK');
  assert.equal(await call('get', 'k'), 'v2');
});

test('SET NX / XX write only when the condition holds, else reply null', async () => {
  assert.equal(await call('SET', 'nx', 'a', 'NX'), 'OK');
  assert.equal(await call('SET', 'nx', 'b', 'nx'), null);
  assert.equal(await call('GET', 'nx'), 'a');
  assert.equal(await call('SET', 'xx', 'a', 'XX'), null);
  assert.equal(await call('GET', 'xx'), null);
  assert.equal(await call('SET', 'nx', 'c', 'XX'), 'OK');
  assert.equal(await call('GET', 'nx'), 'c');
  assert.equal(await call('SET', 'nx', 'd', 'KEEPTTL'), 'OK', 'KEEPTTL holds trivially: keys never expire');
});

test('SET options: Redis syntax errors, and EX/PX/EXAT/PXAT/GET refused with a clear error', async () => {
  assert.deepEqual(await call('SET', 'k', 'v', 'NX', 'XX'), { error: 'ERR syntax error' });
  assert.deepEqual(await call('SET', 'k', 'v', 'EX'), { error: 'ERR syntax error' });
  assert.deepEqual(await call('SET', 'k', 'v', 'EX', '1', 'PX', '1'), { error: 'ERR syntax error' });
  assert.deepEqual(await call('SET', 'k', 'v', 'KEEPTTL', 'EX', '1'), { error: 'ERR syntax error' });
  assert.deepEqual(await call('SET', 'k', 'v', 'BOGUS'), { error: 'ERR syntax error' });
  assert.deepEqual(await call('SET', 'k', 'v', 'EX', 'abc'), {
    error: 'ERR value is not an integer or out of range',
  });
  assert.deepEqual(await call('SET', 'k', 'v', 'PX', '0'), {
    error: "ERR invalid expire time in 'set' command",
  });
  for (const option of ['EX', 'px', 'EXAT', 'pxat']) {
    const reply = await call('SET', 'k', 'v', option, '10');
    assert.deepEqual(reply, {
      error: `ERR SET option '${option.toUpperCase()}' is not supported: ipipe RKV keys do not expire; drop the option (or delete the key yourself)`,
    });
  }
  assert.deepEqual(await call('SET', 'k', 'v', 'GET'), {
    error: "ERR SET option 'GET' is not supported by ipipe RKV: send GET, then SET",
  });
  assert.equal(await call('GET', 'k'), 'v2', 'nothing was written by the refused SETs');
});

test('DEL and EXISTS take many keys and count as Redis counts', async () => {
  await call('SET', 'd1', '1');
  await call('SET', 'd2', '2');
  assert.equal(await call('EXISTS', 'd1', 'd1', 'd2', 'nope'), 3, 'a key named twice counts twice');
  assert.equal(await call('DEL', 'd1', 'd1', 'd2', 'nope'), 2, 'a key deleted once counts once');
  assert.equal(await call('EXISTS', 'd1', 'd2'), 0);
});

test('MGET returns nulls for missing keys, in order', async () => {
  await call('SET', 'm1', 'one');
  await call('SET', 'm3', 'three');
  assert.deepEqual(await call('MGET', 'm1', 'm2', 'm3', 'm4'), ['one', null, 'three', null]);
});

test('DBSIZE counts keys', async () => {
  const before = await call('DBSIZE');
  assert.equal(typeof before, 'number');
  await call('SET', 'dbsize-new', 'x');
  assert.equal(await call('DBSIZE'), (before as number) + 1);
});

test('oversized keys and values get a clear -ERR and the connection goes on', async () => {
  const longKey = 'k'.repeat(17);
  const expectKey = { error: 'ERR key of 17 bytes exceeds the limit of 16 bytes (maxKeyBytes)' };
  assert.deepEqual(await call('SET', longKey, 'v'), expectKey);
  assert.deepEqual(await call('GET', longKey), expectKey);
  assert.deepEqual(await call('MGET', 'a', longKey), expectKey);
  assert.deepEqual(await call('DEL', longKey), expectKey);
  assert.deepEqual(await call('SET', 'k', 'v'.repeat(65)), {
    error: 'ERR value of 65 bytes exceeds the limit of 64 bytes (maxValueBytes)',
  });
  assert.equal(await call('SET', 'k', 'v'.repeat(64)), 'OK');
  assert.equal(await call('PING'), 'PONG');
});

test('unknown commands get Redis’s exact text, trailing space included', async () => {
  assert.deepEqual(await call('FOO', 'a', 'b'), {
    error: "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ",
  });
  assert.deepEqual(await call('foo'), { error: "ERR unknown command 'foo', with args beginning with: " });
  // Redis quotes at most 128 bytes of arguments, each as a C string.
  const reply = await call('NOPE', 'x'.repeat(200), 'y');
  assert.deepEqual(reply, {
    error: `ERR unknown command 'NOPE', with args beginning with: '${'x'.repeat(128)}' `,
  });
  assert.deepEqual(await call('NOPE', 'a\r\nb'), {
    error: "ERR unknown command 'NOPE', with args beginning with: 'a  b' ",
  });
  assert.equal(server.stats().unknownCommands >= 4, true);
});

test('wrong arity gets Redis’s text', async () => {
  assert.deepEqual(await call('GET'), { error: "ERR wrong number of arguments for 'get' command" });
  assert.deepEqual(await call('GET', 'a', 'b'), { error: "ERR wrong number of arguments for 'get' command" });
  assert.deepEqual(await call('SET', 'a'), { error: "ERR wrong number of arguments for 'set' command" });
  assert.deepEqual(await call('MGET'), { error: "ERR wrong number of arguments for 'mget' command" });
  assert.deepEqual(await call('DBSIZE', 'x'), {
    error: "ERR wrong number of arguments for 'dbsize' command",
  });
});

test('SELECT 0 only', async () => {
  assert.equal(await call('SELECT', '0'), 'OK');
  assert.deepEqual(await call('SELECT', '1'), { error: 'ERR DB index is out of range' });
  assert.deepEqual(await call('SELECT', 'abc'), { error: 'ERR value is not an integer or out of range' });
});

test('INFO: sections, role, keyspace, the ipipe section; unknown section is empty', async () => {
  const all = (await call('INFO')) as string;
  for (const header of [
    '# Server',
    '# Clients',
    '# Persistence',
    '# Stats',
    '# Replication',
    '# Keyspace',
    '# Ipipe',
  ]) {
    assert.ok(all.includes(`${header}\r\n`), header);
  }
  assert.match(all, /\r\nrole:master\r\n/);
  assert.match(all, /\r\nloading:0\r\n/);
  assert.match(all, /\r\ndb0:keys=\d+,expires=0,avg_ttl=0\r\n/);
  assert.match(all, /\r\nipipe_role:standalone\r\nipipe_backend:memory\r\nreplica_id:2\r\n/);
  assert.match(all, new RegExp(`tcp_port:${server.address.port}\\r\\n`));
  const replication = (await call('info', 'REPLICATION')) as string;
  assert.equal(replication, '# Replication\r\nrole:master\r\n');
  assert.equal(await call('INFO', 'nosuch'), '');
});

test('COMMAND, COMMAND COUNT/INFO/LIST/DOCS', async () => {
  const table = (await call('COMMAND')) as unknown[][];
  assert.equal(table.length, await call('COMMAND', 'COUNT'));
  const get = table.find((entry) => entry[0] === 'get');
  assert.deepEqual(get, ['get', 2, ['readonly', 'fast'], 1, 1, 1, ['@read', '@string', '@fast'], [], [], []]);
  assert.deepEqual(await call('COMMAND', 'INFO', 'set', 'nosuch'), [
    ['set', -3, ['write', 'denyoom'], 1, 1, 1, ['@write', '@string', '@slow'], [], [], []],
    null,
  ]);
  assert.ok(((await call('COMMAND', 'LIST')) as string[]).includes('mget'));
  assert.deepEqual(await call('COMMAND', 'DOCS'), []);
  assert.deepEqual(await call('COMMAND', 'nope'), {
    error: "ERR unknown subcommand 'nope'. Try COMMAND HELP.",
  });
});

test('CONFIG GET answers the settings clients ask for, with globs', async () => {
  assert.deepEqual(await call('CONFIG', 'GET', 'save'), ['save', '']);
  assert.deepEqual(await call('CONFIG', 'GET', 'appendonly'), ['appendonly', 'no']);
  assert.deepEqual(await call('config', 'get', 'max*'), ['maxclients', '10000', 'maxmemory', '0']);
  assert.deepEqual(await call('CONFIG', 'GET', 'DATA[a-c]ases', 'nomatch'), ['databases', '1']);
  assert.deepEqual(await call('CONFIG', 'GET'), {
    error: "ERR wrong number of arguments for 'config|get' command",
  });
  assert.deepEqual(await call('CONFIG', 'foo'), { error: "ERR unknown subcommand 'foo'. Try CONFIG HELP." });
  assert.match(
    ((await call('CONFIG', 'SET', 'save', '')) as { error: string }).error,
    /^ERR CONFIG SET is not supported/,
  );
});

test('CLIENT SETNAME/GETNAME/ID/SETINFO', async () => {
  assert.equal(await call('CLIENT', 'GETNAME'), null);
  assert.equal(await call('CLIENT', 'SETNAME', 'worker-1'), 'OK');
  assert.equal(await call('CLIENT', 'GETNAME'), 'worker-1');
  assert.deepEqual(await call('CLIENT', 'SETNAME', 'a b'), {
    error: 'ERR Client names cannot contain spaces, newlines or special characters.',
  });
  assert.equal(typeof (await call('CLIENT', 'ID')), 'number');
  assert.equal(await call('CLIENT', 'SETINFO', 'LIB-NAME', 'test'), 'OK');
  assert.deepEqual(await call('CLIENT', 'KILL'), {
    error: "ERR unknown subcommand 'KILL'. Try CLIENT HELP.",
  });
});

test('HELLO: RESP2 handshake; HELLO 3 gets -NOPROTO so clients fall back', async () => {
  const reply = (await call('HELLO', '2', 'SETNAME', 'h')) as unknown[];
  assert.deepEqual(reply.slice(0, 6), ['server', 'redis', 'version', '7.0.0', 'proto', 2]);
  assert.deepEqual(reply.slice(8), ['mode', 'standalone', 'role', 'master', 'modules', []]);
  assert.equal(await call('CLIENT', 'GETNAME'), 'h');
  assert.deepEqual(await call('HELLO', '3'), { error: 'NOPROTO unsupported protocol version' });
  assert.deepEqual(await call('HELLO', 'x'), {
    error: 'ERR Protocol version is not an integer or out of range',
  });
  assert.deepEqual(await call('HELLO', '2', 'BOGUS'), { error: "ERR Syntax error in HELLO option 'BOGUS'" });
});

test('AUTH: no passwords here, answered as Redis answers without requirepass', async () => {
  assert.match(((await call('AUTH', 'pw')) as { error: string }).error, /without any password configured/);
  assert.equal(await call('AUTH', 'default', 'pw'), 'OK');
});

test('inline commands typed into telnet work', async () => {
  client.send('SET inline "hello world"\r\nGET inline\nPING\r\n');
  assert.deepEqual(await client.plainReplies(3), ['OK', 'hello world', 'PONG']);
});

test('QUIT replies +OK, skips what follows, and closes', async () => {
  const quitter = await RawClient.connect(server.address.port);
  quitter.send('PING\r\nQUIT\r\nSET after-quit x\r\n');
  assert.deepEqual(await quitter.plainReplies(2), ['PONG', 'OK']);
  await quitter.waitClosed();
  assert.equal(await call('EXISTS', 'after-quit'), 0);
});
