/**
 * The `MessageChannel` contract as one test suite, applied to every transport (shared-memory rings
 * in shared-channel.test.ts, TCP in tcp-channel.test.ts): the runtime must not be able to tell them
 * apart except by speed (iPipe §3 "Host–NIC messaging"; channel.ts states the contract).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageChannel } from '../../../src/platform/live/channel/channel.ts';
import { ChannelMessageTooLargeError } from '../../../src/platform/live/channel/channel-errors.ts';
import { fillMessage } from './fixtures/message-pattern.ts';

/** Two connected endpoints and how to tear them down. */
export interface ChannelPairFixture {
  readonly a: MessageChannel;
  readonly b: MessageChannel;
  /** A message size that fills the transport's buffering within a few hundred sends. */
  readonly bigMessageBytes: number;
  /** The largest message the transport accepts. */
  readonly maxMessageBytes: number;
  dispose(): Promise<void>;
}

function message(sequence: number, size: number): Uint8Array {
  return fillMessage(new Uint8Array(size), sequence, size).slice();
}

/** Receives `count` messages from `channel`, waiting as needed; fails after `timeoutMs` without progress. */
export async function receiveMessages(
  channel: MessageChannel,
  count: number,
  timeoutMs = 5000,
): Promise<Uint8Array[]> {
  const received: Uint8Array[] = [];
  while (received.length < count) {
    const next = channel.receive();
    if (next !== null) {
      received.push(next.slice());
      continue;
    }
    const waited = await channel.waitForData(timeoutMs);
    assert.equal(waited, 'ready', `waiting for message ${received.length} of ${count}: ${waited}`);
  }
  return received;
}

/**
 * Sends `count` messages from `from` and receives them at `to`, interleaved as a runtime would:
 * send while there is room, flush, take what has arrived, and wait for room or data otherwise.
 */
async function exchange(
  from: MessageChannel,
  to: MessageChannel,
  count: number,
  make: (sequence: number) => Uint8Array,
): Promise<Uint8Array[]> {
  const received: Uint8Array[] = [];
  let sent = 0;
  while (received.length < count) {
    while (sent < count && from.send(make(sent))) sent++;
    from.flush();
    let progressed = false;
    for (let next = to.receive(); next !== null; next = to.receive()) {
      received.push(next.slice());
      progressed = true;
    }
    if (progressed) continue;
    const waited = await Promise.race([
      to.waitForData(5000),
      sent < count ? from.waitForRoom(5000) : new Promise<never>(() => {}),
    ]);
    assert.equal(waited, 'ready', `stalled at message ${received.length} of ${count} (${sent} sent)`);
  }
  return received;
}

async function withPair(
  makePair: () => Promise<ChannelPairFixture>,
  body: (pair: ChannelPairFixture) => Promise<void>,
) {
  const pair = await makePair();
  try {
    await body(pair);
  } finally {
    await pair.dispose();
  }
}

/** Registers the contract tests for one transport. */
export function channelContract(name: string, makePair: () => Promise<ChannelPairFixture>): void {
  describe(`${name}: MessageChannel contract`, () => {
    test('messages arrive in order, intact, each once, in both directions; stats count them', () =>
      withPair(makePair, async ({ a, b }) => {
        const sizes = [0, 1, 7, 8, 9, 63, 64, 65, 200, 1000];
        const count = 2000;
        const sizeOf = (i: number): number => sizes[i % sizes.length]!;
        const atB = await exchange(a, b, count, (i) => message(i, sizeOf(i)));
        for (let i = 0; i < count; i++) assert.deepEqual(atB[i], message(i, sizeOf(i)), `message ${i}`);
        assert.equal(await b.waitForData(20), 'timed-out');
        assert.equal(b.receive(), null, 'nothing more: no duplicates');
        const atA = await exchange(b, a, 50, (i) => message(1000 + i, 33));
        atA.forEach((bytes, i) => {
          assert.deepEqual(bytes, message(1000 + i, 33));
        });
        let bytesSent = 0;
        for (let i = 0; i < count; i++) bytesSent += sizeOf(i);
        const statsA = a.stats();
        const statsB = b.stats();
        assert.equal(statsA.sent, count);
        assert.equal(statsA.bytesSent, bytesSent);
        assert.equal(statsB.received, count);
        assert.equal(statsB.bytesReceived, bytesSent);
        assert.equal(statsA.received, 50);
        assert.equal(statsB.sent, 50);
        assert.equal(statsB.checksumFailures, 0);
      }));

    test('nothing sent is visible to the peer before flush', () =>
      withPair(makePair, async ({ a, b }) => {
        for (let i = 0; i < 3; i++) a.send(message(i, 16));
        assert.equal(await b.waitForData(50), 'timed-out');
        assert.equal(b.receive(), null);
        a.flush();
        const received = await receiveMessages(b, 3);
        assert.deepEqual(received[2], message(2, 16));
      }));

    test('send refuses (never drops) when the peer has no room, and recovers once the peer drains', () =>
      withPair(makePair, async ({ a, b, bigMessageBytes }) => {
        let accepted = 0;
        for (let attempt = 0; attempt < 100_000; attempt++) {
          if (!a.send(message(accepted, bigMessageBytes))) break;
          accepted++;
          a.flush();
        }
        assert.ok(accepted < 100_000, 'send never returned false');
        assert.ok(a.stats().fullEvents >= 1, 'the refusal is counted');
        const refused = accepted;
        // Drain the peer while waiting for room; then the refused message goes through.
        const drained = receiveMessages(b, refused + 1);
        assert.equal(await a.waitForRoom(5000), 'ready');
        assert.ok(a.send(message(refused, bigMessageBytes)), 'room after the peer drained');
        a.flush();
        const received = await drained;
        for (let i = 0; i <= refused; i++)
          assert.deepEqual(received[i], message(i, bigMessageBytes), `message ${i}`);
      }));

    test('waitForData resolves when a message arrives, and times out when none does', () =>
      withPair(makePair, async ({ a, b }) => {
        assert.equal(await b.waitForData(30), 'timed-out');
        const waiting = b.waitForData(5000);
        setTimeout(() => {
          a.send(message(5, 10));
          a.flush();
        }, 10);
        assert.equal(await waiting, 'ready');
        assert.deepEqual(b.receive(), message(5, 10));
      }));

    test('onReadable calls its listener while messages wait; unsubscribing stops it', () =>
      withPair(makePair, async ({ a, b }) => {
        const got: Uint8Array[] = [];
        let calls = 0;
        let unsubscribe = (): void => {};
        const all = new Promise<void>((resolve) => {
          unsubscribe = b.onReadable(() => {
            calls++;
            for (let next = b.receive(); next !== null; next = b.receive()) got.push(next.slice());
            if (got.length === 20) resolve();
          });
        });
        for (let i = 0; i < 20; i++) a.send(message(i, 24));
        a.flush();
        await all;
        unsubscribe();
        assert.ok(calls >= 1);
        got.forEach((bytes, i) => {
          assert.deepEqual(bytes, message(i, 24));
        });
        const callsBefore = calls;
        a.send(message(99, 24));
        a.flush();
        await new Promise((resolve) => setTimeout(resolve, 30));
        assert.equal(calls, callsBefore, 'no call after unsubscribing');
      }));

    test('after close, the peer drains what was flushed, then sees the channel closed', () =>
      withPair(makePair, async ({ a, b }) => {
        for (let i = 0; i < 10; i++) a.send(message(i, 40));
        await a.close(); // flushes first
        assert.equal(a.closed, true);
        assert.equal(a.send(message(11, 40)), false, 'no send after close');
        const received = await receiveMessages(b, 10);
        received.forEach((bytes, i) => {
          assert.deepEqual(bytes, message(i, 40));
        });
        assert.equal(await b.waitForData(5000), 'closed');
        assert.equal(b.closed, true);
        assert.equal(b.receive(), null);
      }));

    test('a message over the maximum is refused with ChannelMessageTooLargeError', () =>
      withPair(makePair, async ({ a, maxMessageBytes }) => {
        assert.throws(() => a.send(new Uint8Array(maxMessageBytes + 1)), ChannelMessageTooLargeError);
        assert.ok(a.send(new Uint8Array(maxMessageBytes)), 'the maximum itself is fine');
      }));
  });
}
