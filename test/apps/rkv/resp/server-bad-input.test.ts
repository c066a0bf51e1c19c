/**
 * Bad input over a real socket (issue 5, §6): malformed RESP, oversized bulks, an HTTP request,
 * too many clients. Each gets a clear error (or, for HTTP, Redis's silent close), is counted by
 * reason, is published on the diagnostics channel, and never stops the server: a connection open
 * beside the bad one, and a new one, keep being served.
 */

import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { after, before, test } from 'node:test';
import {
  MemoryKvBackend,
  type ProtocolErrorEvent,
  type RespServerHandle,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { encodeArgs, RawClient, sleep } from './helpers.ts';

let server: RespServerHandle;
/** A well-behaved client open through every test: it must keep working. */
let bystander: RawClient;

before(async () => {
  server = await startRespServer({
    port: 0,
    backend: new MemoryKvBackend(),
    limits: { maxBulkBytes: 1024, maxKeyBytes: 64, maxValueBytes: 512, maxArrayLength: 8, maxConnections: 4 },
  });
  bystander = await RawClient.connect(server.address.port);
});

after(async () => {
  bystander.close();
  await server.close();
});

/** Sends `bytes` on a fresh connection; returns the replies it got before the server closed it. */
async function sendAndExpectClose(bytes: string | Buffer, replies: number): Promise<unknown[]> {
  const client = await RawClient.connect(server.address.port);
  client.send(bytes);
  const got = await client.plainReplies(replies);
  await client.waitClosed();
  return got;
}

const malformed: [name: string, bytes: string, reason: string, error: RegExp][] = [
  [
    'a bulk length that is not a number',
    '*2\r\n$3\r\nGET\r\n$abc\r\n',
    'invalid-bulk-length',
    /^ERR Protocol error: invalid bulk length$/,
  ],
  [
    'an array length that is not a number',
    '*x\r\n',
    'invalid-array-length',
    /^ERR Protocol error: invalid multibulk length$/,
  ],
  [
    'an array element that is not a bulk string',
    '*1\r\n:1\r\n',
    'expected-bulk',
    /^ERR Protocol error: expected '\$', got ':'$/,
  ],
  [
    'a bulk string longer than announced',
    '*1\r\n$4\r\nPINGXX\r\n',
    'missing-crlf',
    /^ERR Protocol error: expected \\r\\n after the bulk string$/,
  ],
  [
    'an unbalanced quote in an inline command',
    'SET k "open\r\n',
    'unbalanced-quotes',
    /^ERR Protocol error: unbalanced quotes in request$/,
  ],
  [
    'a bulk over maxBulkBytes',
    '*2\r\n$3\r\nGET\r\n$2000\r\n',
    'bulk-too-long',
    /^ERR Protocol error: bulk length 2000 exceeds the limit of 1024 bytes \(maxBulkBytes\)$/,
  ],
  [
    'an array over maxArrayLength',
    '*9\r\n',
    'array-too-long',
    /^ERR Protocol error: multibulk length 9 exceeds the limit of 8 \(maxArrayLength\)$/,
  ],
];

for (const [name, bytes, reason, error] of malformed) {
  test(`${name}: commands before it answered, then -ERR Protocol error, counted as ${reason}, closed`, async () => {
    const before = server.stats();
    const events: ProtocolErrorEvent[] = [];
    const listen = (message: unknown) => events.push(message as ProtocolErrorEvent);
    diagnosticsChannel.subscribe('ipipe:resp:protocol-error', listen);
    try {
      const replies = await sendAndExpectClose(
        Buffer.concat([encodeArgs(['PING']), Buffer.from(bytes, 'latin1')]),
        2,
      );
      assert.equal(replies[0], 'PONG');
      const reply = replies[1] as { error: string };
      assert.match(reply.error, error);
    } finally {
      diagnosticsChannel.unsubscribe('ipipe:resp:protocol-error', listen);
    }
    const after = server.stats();
    assert.equal(
      after.protocolErrors[reason as keyof typeof after.protocolErrors],
      before.protocolErrors[reason as keyof typeof before.protocolErrors] + 1,
    );
    assert.equal(after.protocolErrorsTotal, before.protocolErrorsTotal + 1);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.reason, reason);
    assert.equal(await bystander.call('PING'), 'PONG', 'the connection beside it is still served');
  });
}

test('an HTTP request is closed without a reply (cross-protocol), as Redis does', async () => {
  const before = server.stats().protocolErrors['cross-protocol'];
  const client = await RawClient.connect(server.address.port);
  client.send('POST / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await client.waitClosed();
  assert.equal(client.received.length, 0, 'no bytes sent back');
  assert.equal(server.stats().protocolErrors['cross-protocol'], before + 1);
  assert.equal(await bystander.call('PING'), 'PONG');
});

test('a value over maxValueBytes but under maxBulkBytes: -ERR for that command, the connection goes on', async () => {
  const client = await RawClient.connect(server.address.port);
  assert.deepEqual(await client.call('SET', 'k', 'v'.repeat(600)), {
    error: 'ERR value of 600 bytes exceeds the limit of 512 bytes (maxValueBytes)',
  });
  assert.equal(await client.call('SET', 'k', 'v'.repeat(512)), 'OK');
  assert.ok(!client.closed);
  client.close();
});

test('past maxConnections a client is told so and closed; the others keep working', async () => {
  // The bystander holds one of the 4 slots; earlier tests' sockets may still be closing.
  for (let waited = 0; server.stats().connectionsOpen > 1; waited += 10) {
    assert.ok(waited < 5000, `connections still open: ${server.stats().connectionsOpen}`);
    await sleep(10);
  }
  const open: RawClient[] = [];
  for (let index = 0; index < 3; index++) open.push(await RawClient.connect(server.address.port));
  for (const client of open) assert.equal(await client.call('PING'), 'PONG');
  const rejectedBefore = server.stats().connectionsRejected;
  const extra = await RawClient.connect(server.address.port);
  assert.deepEqual(await extra.plainReplies(1), [{ error: 'ERR max number of clients reached' }]);
  await extra.waitClosed();
  assert.equal(server.stats().connectionsRejected, rejectedBefore + 1);
  assert.equal(await bystander.call('PING'), 'PONG');
  for (const client of open) client.close();
});
