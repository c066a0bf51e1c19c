/**
 * The shared-memory channel (two SpscRings, iPipe §3's "pair of one-way rings"): the MessageChannel
 * contract, and a duplex exchange with the far end attached in a worker from the posted descriptor.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { createSharedChannelPair } from '../../../src/platform/live/channel/channel.ts';
import { ChannelChecksumError } from '../../../src/platform/live/channel/channel-errors.ts';
import { RING_CONTROL_BYTES } from '../../../src/platform/live/channel/ring.ts';
import { channelContract } from './channel-contract.ts';
import { fillMessage, messageSize, mismatchAt } from './fixtures/message-pattern.ts';

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

test('shared channel: the far end attached in a worker echoes 20 000 messages back, duplex', async () => {
  const { nic, host } = createSharedChannelPair({ capacityBytes: 8192, spinIterations: 200 });
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
    const count = 20_000;
    const seed = 7;
    const max = nic.maxMessageBytes;
    const scratch = new Uint8Array(max);
    let sent = 0;
    let received = 0;
    while (received < count) {
      while (sent < count && nic.send(fillMessage(scratch, sent, messageSize(sent, seed, max)))) sent++;
      nic.flush();
      let progressed = false;
      for (let reply = nic.receive(); reply !== null; reply = nic.receive()) {
        reply.reverse();
        const at = mismatchAt(reply, 0, reply.length, received, messageSize(received, seed, max));
        assert.equal(at, -1, `echo ${received} differs at ${at}`);
        received++;
        progressed = true;
      }
      if (!progressed) assert.equal(await nic.waitForData(10_000), 'ready', `stalled at ${received}`);
    }
    await nic.close();
    assert.equal(await echoed, count, 'the worker saw the close and reports every message echoed');
    assert.equal(nic.stats().received, count);
    assert.equal(nic.stats().checksumFailures, 0);
  } finally {
    await worker.terminate();
  }
});
