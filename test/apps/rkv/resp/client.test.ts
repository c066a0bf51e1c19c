/**
 * The RESP client (src/apps/rkv/resp/client.ts) against the real front: pipelined commands are
 * answered in order, error replies resolve as values, and every way of getting no reply — nothing
 * listening, a connection that dies with commands outstanding, a silent server, a peer that does
 * not speak RESP — rejects each outstanding command with a RespClientError naming the failure.
 */

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import {
  MemoryKvBackend,
  RespClient,
  RespClientError,
  type RespServerHandle,
  respInfoFields,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';

let server: RespServerHandle;
before(async () => {
  server = await startRespServer({ port: 0, backend: new MemoryKvBackend({ ipipe: [['replica_id', 7]] }) });
});
after(async () => {
  await server.close();
});

/** A TCP server that runs `onConnection` for each client; closed after the test. */
async function rawServer(
  onConnection: (socket: net.Socket) => void,
): Promise<{ port: number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  return {
    port: (tcp.address() as net.AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      tcp.close();
    },
  };
}

function failure(error: unknown): string {
  assert.ok(error instanceof RespClientError, `a RespClientError, got ${String(error)}`);
  assert.equal(error.code, 'IPIPE_ERR_RESP_CLIENT');
  return error.failure;
}

test('pipelined commands are answered in order, with every reply type decoded', async () => {
  const client = await RespClient.connect(server.address.port);
  const replies = await Promise.all([
    client.command('SET', 'a', 'héllo'),
    client.command('GET', 'a'),
    client.command('GET', 'missing'),
    client.command('EXISTS', 'a', 'missing', 'a'),
    client.command('MGET', 'a', 'missing'),
    client.command('NOSUCHCOMMAND'),
    client.command('SET', 'b', Buffer.from('bytes')),
    client.command('GET', 'b'),
  ]);
  assert.deepEqual(replies.slice(0, 5), ['OK', 'héllo', null, 2, ['héllo', null]]);
  const unknown = replies[5] as { error: string };
  assert.match(unknown.error, /^ERR unknown command/);
  assert.deepEqual(replies.slice(6), ['OK', 'bytes']);
  assert.equal((await respInfoFields(client)).get('replica_id'), '7');
  assert.equal(client.pending, 0);
  client.close();
  assert.equal(client.closed, true);
  assert.equal(
    failure(
      await client.command('PING').then(
        () => null,
        (error: unknown) => error,
      ),
    ),
    'closed',
  );
});

test('nothing listening: connect fails with "connect"', async () => {
  const probe = await rawServer(() => {});
  const port = probe.port;
  probe.close();
  const error = await RespClient.connect(port).then(
    () => null,
    (e: unknown) => e,
  );
  assert.equal(failure(error), 'connect');
  assert.match((error as Error).message, new RegExp(`127\\.0\\.0\\.1:${port}`));
});

test('a connection that dies fails every outstanding command with "closed"', async () => {
  const dying = await rawServer((socket) => socket.once('data', () => socket.destroy()));
  try {
    const client = await RespClient.connect(dying.port);
    const outcomes = await Promise.all(
      [client.command('GET', 'x'), client.command('GET', 'y')].map((p) =>
        p.then(
          () => null,
          (e: unknown) => e,
        ),
      ),
    );
    assert.deepEqual(outcomes.map(failure), ['closed', 'closed']);
    assert.equal(client.closed, true);
  } finally {
    dying.close();
  }
});

test('a silent server: the oldest command times out, and the connection closes with it', async () => {
  const silent = await rawServer(() => {});
  try {
    const client = await RespClient.connect(silent.port, { timeoutMs: 80 });
    const started = performance.now();
    const outcomes = await Promise.all(
      [client.command('GET', 'x'), client.command('GET', 'y')].map((p) =>
        p.then(
          () => null,
          (e: unknown) => e,
        ),
      ),
    );
    const waited = performance.now() - started;
    assert.deepEqual(outcomes.map(failure), ['timeout', 'timeout']);
    assert.ok(waited >= 75 && waited < 2_000, `timed out after ${waited.toFixed(0)} ms`);
    assert.equal(client.closed, true);
  } finally {
    silent.close();
  }
  assert.throws(() => RespClient.connect(1, { timeoutMs: 0 }), RangeError);
});

test('a reply that is not RESP2 fails with "protocol"', async () => {
  const http = await rawServer((socket) =>
    socket.once('data', () => socket.write('HTTP/1.1 400 Bad Request\r\n\r\n')),
  );
  try {
    const client = await RespClient.connect(http.port);
    assert.equal(
      failure(
        await client.command('PING').then(
          () => null,
          (e: unknown) => e,
        ),
      ),
      'protocol',
    );
  } finally {
    http.close();
  }
});
