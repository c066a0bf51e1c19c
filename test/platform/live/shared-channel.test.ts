/**
 * The shared-memory channel (two SpscRings, iPipe §3's "pair of one-way rings"): the MessageChannel
 * contract, and a duplex exchange with the far end attached in a worker from the posted descriptor.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import {
  createSharedChannelPair,
  type SharedChannelEndpoint,
} from '../../../src/platform/live/channel/channel.ts';
import { ChannelChecksumError } from '../../../src/platform/live/channel/channel-errors.ts';
import { RING_CONTROL_BYTES } from '../../../src/platform/live/channel/ring.ts';
import { channelContract } from './channel-contract.ts';
import { exchangeEchoes } from './fixtures/echo-client.ts';

channelContract('shared-memory rings', async () => {
  const { nic, host } = createSharedChannelPair({ capacityBytes: 4096, spinIterations: 0 });
  return {
    a: nic,
    b: host,
    bigMessageBytes: 1000,
    maxMessageBytes: nic.maxMessageBytes,
    async dispose() {
      await nic.close();
      await host.close();
    },
  };
});

test('shared channel: a corrupt message surfaces at its place in the stream, the channel goes on', () => {
  const { nic, host } = createSharedChannelPair({ capacityBytes: 1024 });
  nic.send(new Uint8Array([1]));
  const offset = nic.sendRing.tryReserve(4);
  nic.sendRing.bytes.set([2, 2, 2, 2], offset);
  nic.sendRing.commit();
  nic.send(new Uint8Array([3]));
  new Uint8Array(nic.sendRing.buffer)[RING_CONTROL_BYTES + offset + 1]! ^= 0x40;
  nic.flush();
  assert.deepEqual(host.receive(), new Uint8Array([1]));
  assert.throws(() => host.receive(), ChannelChecksumError);
  assert.deepEqual(host.receive(), new Uint8Array([3]));
  assert.equal(host.stats().checksumFailures, 1);
});

/**
 * The far end of an echo in this thread, replying to each message at once (flush after every echo)
 * and yielding a turn of the event loop before it polls again — so the client runs between a reply
 * and the poll that finds the ring empty and publishes the head. A client that sees the last echo
 * and is refused by the head the peer has not published yet has nothing in flight: only room can
 * come (the old duplex loop waited for data there and stalled).
 */
async function eagerEchoPeer(end: SharedChannelEndpoint, stallMs: number): Promise<number> {
  let echoed = 0;
  for (;;) {
    const message = end.receive();
    if (message === null) {
      const waited = await end.waitForData(stallMs);
      if (waited === 'closed') return echoed;
      assert.equal(waited, 'ready', `peer: no message for ${stallMs} ms after ${echoed} echoes`);
      continue;
    }
    message.reverse();
    while (!end.send(message)) {
      assert.equal(await end.waitForRoom(stallMs), 'ready', `peer: no room for echo ${echoed}`);
    }
    end.flush();
    echoed++;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('shared channel: a send refused with nothing in flight is answered by room, not data (echo client)', async () => {
  // 512-byte rings: messages up to 248 bytes, so a refusal against a stale head is frequent.
  const { nic, host } = createSharedChannelPair({ capacityBytes: 512, spinIterations: 0 });
  const count = 3000;
  const peer = eagerEchoPeer(host, 2000);
  // Its failure is reported by the await below; if the client fails first, the client's is the one to see.
  peer.catch(() => {});
  const received = await exchangeEchoes(nic, {
    count,
    seed: 11,
    maxMessageBytes: nic.maxMessageBytes,
    stallMs: 2000,
  });
  assert.equal(received, count);
  assert.ok(nic.stats().fullEvents > 0, 'the exchange met back-pressure');
  await nic.close();
  assert.equal(await peer, count);
});

for (const { capacityBytes, count } of [
  { capacityBytes: 8192, count: 20_000 },
  { capacityBytes: 512, count: 20_000 },
]) {
  test(`shared channel: the far end attached in a worker echoes ${count} messages back, duplex (${capacityBytes} B rings)`, async () => {
    const { nic, host } = createSharedChannelPair({ capacityBytes, spinIterations: 200 });
    const worker = new Worker(new URL('./fixtures/worker-bootstrap.mjs', import.meta.url), {
      workerData: {
        entry: new URL('./fixtures/echo-worker.ts', import.meta.url).href,
        descriptor: host.descriptor,
      },
    });
    const echoed = new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    try {
      const received = await exchangeEchoes(nic, {
        count,
        seed: 7,
        maxMessageBytes: nic.maxMessageBytes,
        stallMs: 10_000,
      });
      assert.equal(received, count);
      await nic.close();
      assert.equal(await echoed, count, 'the worker saw the close and reports every message echoed');
      assert.equal(nic.stats().received, count);
      assert.equal(nic.stats().checksumFailures, 0);
    } finally {
      await worker.terminate();
    }
  });
}
