/**
 * A damaged record is never delivered (iPipe §3 "Host–NIC messaging": DMA may land bytes out of
 * order, so every message carries a checksum): bytes flipped in the shared memory behind the
 * producer's back surface as a typed error at that message's place, the counter goes up once, and
 * the messages around it arrive intact.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ChannelChecksumError,
  ChannelFrameError,
} from '../../../src/platform/live/channel/channel-errors.ts';
import {
  RING_CONTROL_BYTES,
  RING_CORRUPT,
  RING_EMPTY,
  SpscRing,
} from '../../../src/platform/live/channel/ring.ts';

function pair(capacityBytes = 1024): { producer: SpscRing; consumer: SpscRing; raw: Uint8Array } {
  const producer = SpscRing.create({ capacityBytes });
  const consumer = SpscRing.attach(producer.buffer);
  return { producer, consumer, raw: new Uint8Array(producer.buffer) };
}

/** Writes `payload` and returns the offset of its payload in the raw SharedArrayBuffer. */
function writeAndLocate(producer: SpscRing, payload: Uint8Array): number {
  const offset = producer.tryReserve(payload.length);
  assert.ok(offset >= 0);
  producer.bytes.set(payload, offset);
  producer.commit();
  return RING_CONTROL_BYTES + offset;
}

describe('SpscRing corruption', () => {
  test('a payload byte flipped after the checksum was written: read throws, counted, next message fine', () => {
    const { producer, consumer, raw } = pair();
    producer.tryWrite(new Uint8Array([1, 1, 1]));
    const at = writeAndLocate(producer, new Uint8Array([2, 2, 2, 2, 2]));
    producer.tryWrite(new Uint8Array([3]));
    raw[at + 2]! ^= 0x10; // behind the producer's back, before the consumer reads
    producer.flush();

    assert.deepEqual(consumer.read(), new Uint8Array([1, 1, 1]));
    assert.throws(
      () => consumer.read(),
      (error: unknown) =>
        error instanceof ChannelChecksumError && error.transport === 'ring' && error.lengthBytes === 5,
    );
    assert.equal(consumer.stats().checksumFailures, 1);
    assert.deepEqual(consumer.read(), new Uint8Array([3]), 'the stream goes on after the bad record');
    assert.equal(consumer.read(), null);
    const stats = consumer.stats();
    assert.equal(stats.received, 2, 'the damaged message is not counted as received');
    assert.equal(stats.checksumFailures, 1);
    assert.equal(stats.droppedBytes, 8 + 8);
  });

  test('peek reports RING_CORRUPT, counts it once however often it is peeked, consume drops it', () => {
    const { producer, consumer, raw } = pair();
    const at = writeAndLocate(producer, new Uint8Array(40).fill(9));
    producer.tryWrite(new Uint8Array([4, 4]));
    raw[at + 39]! ^= 1;
    producer.flush();
    assert.equal(consumer.peek(), RING_CORRUPT);
    assert.equal(consumer.peek(), RING_CORRUPT);
    assert.ok(consumer.lastError instanceof ChannelChecksumError);
    assert.equal(consumer.stats().checksumFailures, 1, 'counted once');
    consumer.consume();
    assert.equal(consumer.peek(), 2);
    const target = new Uint8Array(8);
    assert.equal(consumer.readInto(target), 2);
    assert.equal(consumer.readInto(target), RING_EMPTY);
  });

  test('readInto drops a damaged record and says so', () => {
    const { producer, consumer, raw } = pair();
    const at = writeAndLocate(producer, new Uint8Array(16).fill(5));
    raw[at]! ^= 0xff;
    producer.flush();
    assert.equal(consumer.readInto(new Uint8Array(64)), RING_CORRUPT);
    assert.equal(consumer.readInto(new Uint8Array(64)), RING_EMPTY);
    assert.equal(consumer.stats().checksumFailures, 1);
  });

  test('a flipped bit in the length word fails the check too (the CRC is continued from the length)', () => {
    const { producer, consumer, raw } = pair();
    const at = writeAndLocate(producer, new Uint8Array(24).fill(6));
    writeAndLocate(producer, new Uint8Array(8).fill(7));
    raw[at - 8]! ^= 0x08; // 24 → 16: still a plausible record inside the published range
    producer.flush();
    assert.throws(() => consumer.read(), ChannelChecksumError);
    assert.equal(consumer.stats().checksumFailures, 1);
  });

  test('a header that runs past the published tail is a framing error; the ring skips to the tail', () => {
    const { producer, consumer, raw } = pair();
    const at = writeAndLocate(producer, new Uint8Array(16).fill(1));
    producer.tryWrite(new Uint8Array(16).fill(2));
    raw[at - 8 + 1]! = 0x01; // length 16 → 272: past the published tail
    producer.flush();
    assert.throws(() => consumer.read(), ChannelFrameError);
    assert.equal(consumer.stats().framingErrors, 1);
    assert.equal(consumer.read(), null, 'everything up to the tail was dropped');
    producer.tryWrite(new Uint8Array([8]));
    producer.flush();
    assert.deepEqual(consumer.read(), new Uint8Array([8]), 'framing resumes at the next flush');
  });

  test('any single flipped payload bit is caught (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 200, size: 'max' }),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        (payload, where, bit) => {
          const { producer, consumer, raw } = pair(1024);
          const at = writeAndLocate(producer, payload);
          raw[at + (where % payload.length)]! ^= 1 << bit;
          producer.flush();
          assert.throws(() => consumer.read(), ChannelChecksumError);
          assert.equal(consumer.stats().checksumFailures, 1);
          assert.equal(consumer.stats().received, 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
