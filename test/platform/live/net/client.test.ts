/**
 * The UDP client (src/platform/live/net/client.ts) against the protocol echo server on 127.0.0.1:
 * pipelined requests are all answered and each matched to its own request; a lost first copy is
 * answered on retry with the same request id; a silent server ends in a typed timeout after every
 * retry; error replies carry the server's code; typed calls go through the actor's codecs;
 * close() fails what is pending; bad input is refused before anything is sent.
 */

import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { field, messages } from '../../../../src/actor/index.ts';
import { isIpipeError } from '../../../../src/errors.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { type EchoServer, startEchoServer } from '../../../../src/platform/live/net/echo-server.ts';
import {
  ClientClosedError,
  isNetError,
  RemoteError,
  RequestTimeoutError,
} from '../../../../src/platform/live/net/errors.ts';

describe('IpipeClient against the echo server', () => {
  let server: EchoServer;
  let client: IpipeClient;

  before(async () => {
    server = await startEchoServer({ actorIds: [1, 2] });
    client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: server.address.port,
      timeoutMs: 500,
      retries: 3,
    });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('answers thousands of pipelined requests, each with its own payload', async () => {
    const count = 3000;
    const window = 256;
    const payloadOf = (i: number) => {
      const bytes = new Uint8Array(4 + (i % 50));
      new DataView(bytes.buffer).setUint32(0, i, true);
      bytes.fill(i & 0xff, 4);
      return bytes;
    };
    let next = 0;
    let matched = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const reply = await client.request(1 + (i % 2), payloadOf(i));
        assert.deepEqual([...reply], [...payloadOf(i)], `request ${i} got another request's reply`);
        matched++;
      }
    };
    const peak = { outstanding: 0 };
    const sampler = setInterval(() => {
      peak.outstanding = Math.max(peak.outstanding, client.outstanding);
    }, 1);
    await Promise.all(Array.from({ length: window }, worker));
    clearInterval(sampler);
    assert.equal(matched, count);
    assert.equal(client.outstanding, 0);
    assert.ok(peak.outstanding > 1, 'requests were not pipelined');
    assert.equal(server.drops.total, 0);
  });

  it('encodes with the actor codec and decodes with the reply codec', async () => {
    const kv = messages({ put: { key: field.string({ maxBytes: 32 }), value: field.u32() }, get: {} });
    // The echo server answers with the request's own bytes, so the reply codec is the same schema.
    const reply = await client.call(1, kv, kv, { type: 'put', key: 'answer', value: 42 });
    assert.deepEqual(reply, { type: 'put', key: 'answer', value: 42 });
    const other = messages({ only: { flag: field.bool() } });
    await assert.rejects(client.call(1, kv, other, { type: 'get' }), (error: unknown) =>
      isIpipeError(error, 'IPIPE_ERR_CODEC_DECODE'),
    );
    await assert.rejects(
      client.call(1, kv, kv, { type: 'put', key: 'x'.repeat(33), value: 1 }),
      (error: unknown) => isIpipeError(error, 'IPIPE_ERR_CODEC_ENCODE'),
    );
  });

  it("surfaces an error reply as a RemoteError with the server's code and message", async () => {
    await assert.rejects(client.request(99, new Uint8Array([1])), (error: unknown) => {
      assert.ok(error instanceof RemoteError);
      assert.equal(error.code, 'IPIPE_ERR_NET_REMOTE');
      assert.equal(error.remoteCode, 'IPIPE_ERR_ACTOR_UNKNOWN');
      assert.match(error.remoteMessage, /unknown actor id 99/);
      assert.equal(error.actorId, 99);
      return true;
    });
    assert.ok(client.stats().errorReplies >= 1);
  });

  it('refuses payloads over the frame limit and actor ids that are not u32, sending nothing', async () => {
    const before = server.stats().datagrams;
    await assert.rejects(client.request(1, new Uint8Array(1449)), (error: unknown) =>
      isIpipeError(error, 'IPIPE_ERR_CODEC_ENCODE'),
    );
    await assert.rejects(client.request(-1, new Uint8Array(1)), (error: unknown) =>
      isIpipeError(error, 'IPIPE_ERR_CODEC_ENCODE'),
    );
    assert.equal((await client.request(1, new Uint8Array(1448))).length, 1448);
    assert.equal(server.stats().datagrams, before + 1);
  });
});

describe('IpipeClient timeouts and retries', () => {
  it('gets an answer on retry when the server ignores every first copy, reusing the request id', async () => {
    const server = await startEchoServer({ behaviour: 'answer-retransmits-only' });
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: server.address.port,
      timeoutMs: 50,
      retries: 2,
    });
    try {
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => client.request(7, new Uint8Array([i]))),
      );
      for (const [i, reply] of replies.entries()) assert.deepEqual([...reply], [i]);
      const stats = client.stats();
      assert.equal(stats.retransmits, 20, 'one retransmission per request');
      assert.equal(stats.timeouts, 0);
      // The server saw each request twice: once ignored, once (flagged RETRANSMIT, same id) answered.
      assert.equal(server.stats().requests, 40);
      assert.equal(server.stats().retransmits, 20);
      assert.equal(server.stats().ignored, 20);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('fails with RequestTimeoutError after 1 + retries copies when the server never answers', async () => {
    const server = await startEchoServer({ behaviour: 'silent' });
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: server.address.port,
      timeoutMs: 40,
      retries: 2,
    });
    try {
      const started = performance.now();
      await assert.rejects(client.request(3, new Uint8Array([1, 2])), (error: unknown) => {
        assert.ok(error instanceof RequestTimeoutError);
        assert.ok(isNetError(error, 'IPIPE_ERR_NET_TIMEOUT'));
        assert.equal(error.attempts, 3);
        assert.equal(error.actorId, 3);
        assert.equal(error.timeoutMs, 40);
        return true;
      });
      const elapsedMs = performance.now() - started;
      assert.ok(elapsedMs >= 3 * 40, `gave up after ${elapsedMs} ms, before three timeouts`);
      assert.ok(elapsedMs < 3 * 40 + 500, `took ${elapsedMs} ms`);
      assert.equal(server.stats().requests, 3);
      assert.equal(client.stats().timeouts, 1);
      assert.equal(client.outstanding, 0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('times out (no crash) when nothing listens at the port', async () => {
    const probe = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
    const port = probe.address().port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 30, retries: 1 });
    try {
      await assert.rejects(client.request(1, new Uint8Array(4)), RequestTimeoutError);
      await assert.rejects(client.request(1, new Uint8Array(4)), RequestTimeoutError);
    } finally {
      await client.close();
    }
  });

  it('fails pending requests with ClientClosedError on close, and refuses new ones', async () => {
    const server = await startEchoServer({ behaviour: 'silent' });
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: server.address.port,
      timeoutMs: 10_000,
    });
    const pending = client.request(1, new Uint8Array(1));
    await client.close();
    await assert.rejects(pending, ClientClosedError);
    await assert.rejects(client.request(1, new Uint8Array(1)), ClientClosedError);
    await client.close(); // idempotent
    await server.close();
  });

  it('refuses bad connection settings with ConfigError', async () => {
    for (const options of [
      { host: '127.0.0.1', port: 0 },
      { host: '127.0.0.1', port: 70_000 },
      { host: '', port: 9 },
      { host: '127.0.0.1', port: 9, timeoutMs: 0 },
      { host: '127.0.0.1', port: 9, retries: -1 },
      { host: '127.0.0.1', port: 9, maxFrameBytes: 10 },
    ]) {
      await assert.rejects(IpipeClient.connect(options), (error: unknown) =>
        isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID'),
      );
    }
  });
});
