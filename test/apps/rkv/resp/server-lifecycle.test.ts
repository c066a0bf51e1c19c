/**
 * Starting and stopping the RESP server: typed errors for bad limits and a taken port, and a
 * graceful close that answers the commands already taken (even ones still waiting on the backend)
 * before closing their connections.
 */

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import {
  MemoryKvBackend,
  RespLimitsError,
  RespListenError,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { isIpipeError } from '../../../../src/errors.ts';
import { encodeArgs, RawClient, sleep } from './helpers.ts';

test('bad limits: RespLimitsError naming the limit, before anything listens', async () => {
  await assert.rejects(
    startRespServer({ port: 0, backend: new MemoryKvBackend(), limits: { maxValueBytes: 0 } }),
    (error: unknown) => {
      assert.ok(error instanceof RespLimitsError);
      assert.ok(isIpipeError(error, 'IPIPE_ERR_RESP_INVALID_LIMITS'));
      assert.equal(error.limit, 'maxValueBytes');
      return true;
    },
  );
  await assert.rejects(
    startRespServer({
      port: 0,
      backend: new MemoryKvBackend(),
      limits: { maxKeyBytes: 64, maxValueBytes: 2048, maxBulkBytes: 1024 },
    }),
    /maxValueBytes: 2048 exceeds maxBulkBytes \(1024\)/,
  );
});

test('a port already taken: RespListenError saying what to do', async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as net.AddressInfo).port;
  try {
    await assert.rejects(startRespServer({ port, backend: new MemoryKvBackend() }), (error: unknown) => {
      assert.ok(error instanceof RespListenError);
      assert.ok(isIpipeError(error, 'IPIPE_ERR_RESP_LISTEN'));
      assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}.*pick a free port`));
      return true;
    });
  } finally {
    holder.close();
  }
});

test('graceful close: commands taken are answered (even slow ones), then connections close', async () => {
  class SlowBackend extends MemoryKvBackend {
    override async get(key: Buffer): Promise<Buffer | null> {
      await sleep(150);
      return super.get(key);
    }
  }
  const backend = new SlowBackend();
  await backend.set(Buffer.from('k'), Buffer.from('v'), 'always');
  const server = await startRespServer({ port: 0, backend });
  const client = await RawClient.connect(server.address.port);
  client.send(Buffer.concat([encodeArgs(['GET', 'k']), encodeArgs(['PING'])]));
  await sleep(30); // both commands read; GET still waits on the backend
  const closing = server.close();
  assert.deepEqual(await client.plainReplies(2), ['v', 'PONG']);
  await client.waitClosed();
  await closing;
  assert.equal(server.stats().connectionsOpen, 0);
  await assert.rejects(RawClient.connect(server.address.port), /ECONNREFUSED/);
  assert.equal(server.close(), closing, 'closing again returns the same promise');
});
