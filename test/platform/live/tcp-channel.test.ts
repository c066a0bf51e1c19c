/**
 * The TCP transport of the NIC↔host channel (for a NIC domain on another device): the same
 * MessageChannel contract as the shared rings, frames reassembled from arbitrary pieces of the
 * stream (down to single bytes), back-pressure carried end to end by TCP's window, and a damaged or
 * oversized frame closing the connection with a typed error and a counter.
 */

import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ChannelChecksumError,
  ChannelFrameError,
} from '../../../src/platform/live/channel/channel-errors.ts';
import {
  connectTcpChannel,
  listenTcpChannel,
  type TcpChannel,
  type TcpChannelOptions,
} from '../../../src/platform/live/channel/tcp-channel.ts';
import { encodeFrame, FrameDecoder } from '../../../src/platform/live/channel/tcp-framing.ts';
import { channelContract, receiveMessages } from './channel-contract.ts';

async function tcpPair(options: TcpChannelOptions = {}): Promise<{ client: TcpChannel; server: TcpChannel }> {
  const listener = await listenTcpChannel({ port: 0, ...options });
  const accepted = listener.accept();
  const client = await connectTcpChannel({ port: listener.port, ...options });
  const server = await accepted;
  await listener.close();
  return { client, server };
}

/** A raw socket to a channel, for writing bytes the channel did not frame itself. */
async function rawToChannel(options: TcpChannelOptions): Promise<{ raw: net.Socket; channel: TcpChannel }> {
  const listener = await listenTcpChannel({ port: 0, ...options });
  const accepted = listener.accept();
  const raw = net.connect({ port: listener.port, host: '127.0.0.1', noDelay: true });
  await once(raw, 'connect');
  const channel = await accepted;
  await listener.close();
  return { raw, channel };
}

function writeRaw(socket: net.Socket, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) =>
    socket.write(bytes, (error) => (error ? reject(error) : resolve())),
  );
}

channelContract('TCP', async () => {
  const { client, server } = await tcpPair({ maxFrameBytes: 1 << 20 });
  return {
    a: client,
    b: server,
    bigMessageBytes: 256 << 10,
    maxMessageBytes: 1 << 20,
    async dispose() {
      await Promise.all([client.close(), server.close()]);
    },
  };
});

describe('TCP channel framing and failures', () => {
  test('a frame written one byte at a time is reassembled, and not delivered before its last byte', async () => {
    const { raw, channel } = await rawToChannel({ maxFrameBytes: 4096 });
    try {
      const payload = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
      const frame = encodeFrame(payload);
      for (let i = 0; i < frame.length - 1; i++) {
        await writeRaw(raw, frame.subarray(i, i + 1));
        if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1)); // let pieces arrive apart
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(channel.receive(), null, 'an incomplete frame is not delivered');
      await writeRaw(raw, frame.subarray(frame.length - 1));
      const [message] = await receiveMessages(channel, 1);
      assert.deepEqual(message, payload);
      assert.equal(channel.stats().checksumFailures, 0);
    } finally {
      raw.destroy();
      await channel.close();
    }
  });

  test('an oversized frame closes the connection with ChannelFrameError, counted', async () => {
    const { raw, channel } = await rawToChannel({ maxFrameBytes: 1024 });
    const rawClosed = once(raw, 'close');
    raw.on('error', () => {}); // the channel resets the connection
    try {
      await writeRaw(raw, encodeFrame(new Uint8Array([1, 2, 3])));
      const header = new Uint8Array(8);
      new DataView(header.buffer).setUint32(0, 1025, true);
      await writeRaw(raw, header);
      assert.deepEqual((await receiveMessages(channel, 1))[0], new Uint8Array([1, 2, 3]));
      assert.equal(await channel.waitForData(5000), 'ready');
      assert.throws(
        () => channel.receive(),
        (error: unknown) => error instanceof ChannelFrameError && error.lengthBytes === 1025,
      );
      assert.equal(channel.receive(), null, 'nothing after the bad frame');
      assert.equal(channel.stats().framingErrors, 1);
      assert.equal(channel.closed, true);
      assert.ok(channel.closeError instanceof ChannelFrameError);
      await rawClosed;
    } finally {
      raw.destroy();
      await channel.close();
    }
  });

  test('a corrupted frame closes the connection with ChannelChecksumError after the frames before it', async () => {
    const { raw, channel } = await rawToChannel({ maxFrameBytes: 1024 });
    raw.on('error', () => {});
    try {
      const bad = encodeFrame(new Uint8Array(64).fill(9));
      bad[8 + 17]! ^= 0x20;
      const stream = new Uint8Array([
        ...encodeFrame(new Uint8Array([1])),
        ...bad,
        ...encodeFrame(new Uint8Array([3])), // after the damage: never delivered
      ]);
      await writeRaw(raw, stream);
      assert.deepEqual((await receiveMessages(channel, 1))[0], new Uint8Array([1]));
      assert.equal(await channel.waitForData(5000), 'ready');
      assert.throws(() => channel.receive(), ChannelChecksumError);
      assert.equal(channel.receive(), null);
      assert.equal(channel.stats().checksumFailures, 1);
      assert.equal(channel.stats().received, 1);
      assert.equal(await channel.waitForData(1000), 'closed');
      assert.ok(channel.closeError instanceof ChannelChecksumError);
    } finally {
      raw.destroy();
      await channel.close();
    }
  });

  test('a reader that stops reading stalls the sender (TCP window), then everything arrives in order', async () => {
    const { client, server } = await tcpPair({ receiveQueueBytes: 128 << 10 });
    try {
      const size = 64 << 10;
      const make = (i: number): Uint8Array => new Uint8Array(size).fill(i & 0xff);
      let sent = 0;
      let stalled = false;
      while (sent < 2000) {
        if (client.send(make(sent))) {
          sent++;
          client.flush();
          continue;
        }
        if ((await client.waitForRoom(300)) === 'timed-out') {
          stalled = true;
          break;
        }
      }
      assert.ok(stalled, `the sender never stalled after ${sent} × 64 KiB`);
      assert.ok(client.stats().fullEvents >= 1);
      const received = await receiveMessages(server, sent);
      received.forEach((bytes, i) => {
        assert.equal(bytes.length, size);
        assert.equal(bytes[0], i & 0xff, `message ${i} out of order`);
      });
      assert.equal(await client.waitForRoom(5000), 'ready', 'room again once the reader drained');
    } finally {
      await Promise.all([client.close(), server.close()]);
    }
  });

  test('connecting to a port nobody listens on rejects', async () => {
    const listener = await listenTcpChannel({ port: 0 });
    const port = listener.port;
    await listener.close();
    await assert.rejects(connectTcpChannel({ port }));
  });
});

describe('FrameDecoder', () => {
  test('any split of a stream of frames yields the same messages (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300, size: 'max' }), { maxLength: 20, size: 'max' }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 30, size: 'max' }),
        (payloads, cuts) => {
          const stream = new Uint8Array(payloads.reduce((total, p) => total + 8 + p.length, 0));
          let offset = 0;
          for (const payload of payloads) {
            stream.set(encodeFrame(payload), offset);
            offset += 8 + payload.length;
          }
          const decoder = new FrameDecoder(1024);
          const got: Uint8Array[] = [];
          let at = 0;
          for (let i = 0; at < stream.length; i++) {
            const next = Math.min(stream.length, at + cuts[i % cuts.length]!);
            // A fresh copy per piece, as a socket delivers them.
            assert.equal(
              decoder.push(stream.slice(at, next), (m) => got.push(m.slice())),
              undefined,
            );
            at = next;
          }
          assert.deepEqual(got, payloads);
          assert.equal(decoder.bufferedBytes, 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('after an error the decoder delivers nothing more', () => {
    const decoder = new FrameDecoder(16);
    const got: Uint8Array[] = [];
    const header = new Uint8Array(8);
    header[0] = 17;
    const error = decoder.push(new Uint8Array([...encodeFrame(new Uint8Array([5])), ...header]), (m) =>
      got.push(m),
    );
    assert.ok(error instanceof ChannelFrameError);
    assert.equal(got.length, 1);
    assert.equal(
      decoder.push(encodeFrame(new Uint8Array([6])), (m) => got.push(m)),
      error,
    );
    assert.equal(got.length, 1);
    assert.equal(decoder.framingErrors, 1);
  });
});
