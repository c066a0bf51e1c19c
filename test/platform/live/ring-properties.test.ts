/**
 * SpscRing within one thread, against a model (iPipe §3 "Host–NIC messaging"): random sequences of
 * writes (sizes that force skips at the end, records that end exactly at the end, messages that
 * fill the ring exactly), flushes, batch writes and the three read APIs. After every step:
 *   - FIFO: every read returns the oldest flushed unread message, byte for byte; nothing is lost or
 *     duplicated, and a read finds nothing exactly when no flushed message is unread;
 *   - back-pressure is exact: `tryWrite` returns false exactly when the record (plus any skip to the
 *     start) does not fit against the head the consumer has published — never a silent drop;
 *   - the lazy head update: the published head never passes the consumer's head, lags it by less
 *     than half the ring, moves only by at least half a ring unless the producer asked, and an
 *     empty poll answers an outstanding request.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../../../src/errors.ts';
import { ChannelMessageTooLargeError } from '../../../src/platform/live/channel/channel-errors.ts';
import {
  RING_CONTROL_BYTES,
  RING_EMPTY,
  RING_TARGET_TOO_SMALL,
  SpscRing,
} from '../../../src/platform/live/channel/ring.ts';

type Size = { readonly kind: 'small' | 'any' | 'max' | 'fill' | 'to-end'; readonly value: number };
type Op =
  | { readonly kind: 'write'; readonly size: Size }
  | { readonly kind: 'batch'; readonly sizes: readonly Size[] }
  | { readonly kind: 'flush' }
  | { readonly kind: 'read' | 'readInto' | 'peekConsume' };

const sizeArbitrary: fc.Arbitrary<Size> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('small' as const), value: fc.integer({ min: 0, max: 40 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('any' as const), value: fc.integer({ min: 0, max: 1 << 20 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('max' as const), value: fc.constant(0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fill' as const), value: fc.constant(0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('to-end' as const), value: fc.constant(0) }) },
);

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('write' as const), size: sizeArbitrary }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      sizes: fc.array(sizeArbitrary, { maxLength: 6, size: 'max' }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('flush' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('readInto' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('peekConsume' as const) }) },
);

const recordBytes = (length: number): number => 8 + ((length + 7) & ~7);
const diff = (a: number, b: number): number => (a - b) >>> 0;

/** Runs one op sequence against a fresh ring and the model; throws on the first divergence. */
function runScenario(capacityBytes: number, ops: readonly Op[], seed: number): void {
  const producer = SpscRing.create({ capacityBytes });
  const consumer = SpscRing.attach(producer.buffer);
  const max = producer.maxMessageBytes;
  assert.equal(max, capacityBytes / 2 - 8);

  let nextSequence = 0;
  const written: Uint8Array[] = []; // every message written, in order
  let flushedCount = 0; // written[0, flushedCount) are visible to the consumer
  let readCount = 0;
  const scratch = new Uint8Array(max);

  const makeMessage = (length: number): Uint8Array => {
    const sequence = nextSequence++;
    const bytes = new Uint8Array(length);
    for (let i = 0; i < length; i++) bytes[i] = (sequence * 131 + i * 17 + seed) & 0xff;
    return bytes;
  };

  const resolveSize = (size: Size): number => {
    const at = producer.positions();
    const index = at.tailBytes & (capacityBytes - 1);
    const contiguous = capacityBytes - index;
    const free = capacityBytes - diff(at.tailBytes, at.publishedHeadBytes);
    switch (size.kind) {
      case 'small':
        return Math.min(size.value, max);
      case 'any':
        return size.value % (max + 1);
      case 'max':
        return max;
      case 'fill': // a record that makes the ring exactly full (or ends exactly at the end)
        return Math.max(0, Math.min(max, Math.min(free, contiguous) - 8));
      case 'to-end': // a record that ends exactly at the end of the data area
        return Math.max(0, Math.min(max, contiguous - 8));
    }
  };

  /** Writes one message and checks the result against the model. */
  const write = (length: number, viaBatch: readonly Uint8Array[] | undefined): boolean => {
    const before = producer.positions();
    const index = before.tailBytes & (capacityBytes - 1);
    const contiguous = capacityBytes - index;
    const needed = recordBytes(length) <= contiguous ? recordBytes(length) : contiguous + recordBytes(length);
    const fits = diff(before.tailBytes, before.publishedHeadBytes) <= capacityBytes - needed;
    const message = makeMessage(length);
    const accepted =
      viaBatch === undefined ? producer.tryWrite(message) : producer.writeBatch([message]) === 1;
    assert.equal(accepted, fits, `tryWrite(${length}) at tail ${before.tailBytes}: expected fits=${fits}`);
    const after = producer.positions();
    if (accepted) {
      written.push(message);
      assert.equal(diff(after.tailBytes, before.tailBytes), needed, 'tail advanced by record + skip');
      assert.equal(after.headRequested, false, 'a write that fits withdraws any request for the head');
      if (viaBatch !== undefined) flushedCount = written.length;
    } else {
      nextSequence--; // not sent: the model's next message reuses the number
      // Rule 1: a full ring publishes the pending batch and asks for the head.
      flushedCount = written.length;
      assert.equal(after.publishedTailBytes, after.tailBytes, 'a refused write publishes the pending batch');
      assert.ok(after.headRequested, 'a refused write asks the consumer for its head');
    }
    assert.ok(
      diff(after.tailBytes, after.publishedHeadBytes) <= capacityBytes,
      'never more than capacity in use',
    );
    return accepted;
  };

  const expectNext = (bytes: Uint8Array | null, how: string): void => {
    if (readCount === flushedCount) {
      assert.equal(bytes, null, `${how}: nothing flushed is unread, yet a message came`);
      return;
    }
    assert.notEqual(bytes, null, `${how}: message ${readCount} was flushed but not delivered`);
    assert.deepEqual(bytes, written[readCount], `${how}: message ${readCount} differs (FIFO / content)`);
    readCount++;
  };

  for (const op of ops) {
    const before = consumer.positions();
    switch (op.kind) {
      case 'write':
        write(resolveSize(op.size), undefined);
        break;
      case 'batch':
        for (const size of op.sizes) if (!write(resolveSize(size), [])) break;
        break;
      case 'flush':
        producer.flush();
        flushedCount = written.length;
        break;
      case 'read':
        expectNext(consumer.read(), 'read');
        break;
      case 'readInto': {
        const length = consumer.readInto(scratch);
        assert.notEqual(length, RING_TARGET_TOO_SMALL);
        expectNext(length === RING_EMPTY ? null : scratch.slice(0, length), 'readInto');
        break;
      }
      case 'peekConsume': {
        const view = consumer.peekView();
        expectNext(view === null ? null : view.slice(), 'peek');
        if (view !== null) {
          // Peeking again without consuming gives the same message: not consumed twice, not skipped.
          assert.equal(consumer.peek(), view.length);
          consumer.consume();
        }
        break;
      }
    }
    // Lazy head update invariants, checked on the shared words after every step.
    const after = consumer.positions();
    const lag = diff(after.headBytes, after.publishedHeadBytes);
    assert.ok(lag < capacityBytes / 2, `published head lags by ${lag} ≥ half the ring`);
    const moved = diff(after.publishedHeadBytes, before.publishedHeadBytes);
    if (moved > 0) {
      assert.ok(
        moved >= capacityBytes / 2 || before.headRequested,
        `head published after only ${moved} bytes without a request`,
      );
    }
    const isRead = op.kind === 'read' || op.kind === 'readInto' || op.kind === 'peekConsume';
    if (isRead && before.headRequested && diff(after.headBytes, before.headBytes) === 0) {
      // An empty poll while asked: rule 2 publishes the head.
      assert.equal(after.publishedHeadBytes, after.headBytes, 'an empty poll answers a head request');
    }
    if (after.headRequested && after.headBytes === after.publishedTailBytes) {
      // Still asked with nothing left to read: the next poll must answer.
      assert.equal(consumer.peek(), RING_EMPTY);
      const answered = consumer.positions();
      assert.equal(
        answered.publishedHeadBytes,
        answered.headBytes,
        'the next empty poll answers a head request',
      );
    }
  }
  // Drain: everything flushed arrives, in order, then nothing.
  producer.flush();
  flushedCount = written.length;
  for (let message = consumer.read(); message !== null; message = consumer.read())
    expectNext(message, 'drain');
  assert.equal(readCount, written.length, 'every written message was delivered');
  const stats = consumer.stats();
  assert.equal(stats.received, written.length);
  assert.equal(stats.checksumFailures, 0);
  assert.equal(producer.stats().sent, written.length);
}

describe('SpscRing (one thread, model-checked)', () => {
  for (const capacityBytes of [64, 128, 512, 4096]) {
    test(`FIFO, no loss or duplication, exact back-pressure, lazy head — ${capacityBytes} B ring`, () => {
      fc.assert(
        fc.property(
          fc.array(opArbitrary, { minLength: 1, maxLength: 250, size: 'max' }),
          fc.integer(),
          (ops, seed) => {
            runScenario(capacityBytes, ops, seed);
          },
        ),
        { numRuns: capacityBytes >= 4096 ? 150 : 250 },
      );
    });
  }

  test('a ring filled exactly to capacity refuses even an empty message until the consumer publishes', () => {
    const producer = SpscRing.create({ capacityBytes: 256 });
    const consumer = SpscRing.attach(producer.buffer);
    const message = new Uint8Array(56).fill(7); // record = 64 bytes: four fill the ring exactly
    for (let i = 0; i < 4; i++) assert.ok(producer.tryWrite(message), `write ${i}`);
    const full = producer.positions();
    assert.equal(diff(full.tailBytes, full.publishedHeadBytes), 256, 'exactly full');
    assert.equal(producer.tryWrite(new Uint8Array(0)), false, 'no room for even a header');
    assert.equal(producer.stats().fullEvents, 1);
    // The refusal published the batch: the consumer can drain it.
    assert.deepEqual(consumer.read(), message);
    // 64 of 256 bytes consumed: below half, and the request is answered only by an empty poll.
    assert.equal(consumer.positions().publishedHeadBytes, 0, 'lazy: one record is not half the ring');
    assert.equal(producer.tryWrite(new Uint8Array(0)), false);
    assert.deepEqual(consumer.read(), message); // 128 consumed: half the ring, published
    assert.equal(consumer.positions().publishedHeadBytes, 128);
    assert.ok(producer.tryWrite(message), 'room after the half-ring publication');
  });

  test('a request from a full producer is answered by the next empty poll', () => {
    const producer = SpscRing.create({ capacityBytes: 1024 });
    const consumer = SpscRing.attach(producer.buffer);
    const big = new Uint8Array(producer.maxMessageBytes); // 504 bytes, record 512
    assert.ok(producer.tryWrite(new Uint8Array(192))); // record 200
    producer.flush();
    assert.notEqual(consumer.read(), null);
    assert.equal(consumer.waitForData(0), 'timed-out'); // rule 3: about to sleep, so it publishes
    assert.equal(consumer.positions().publishedHeadBytes, 200);
    assert.ok(producer.tryWrite(new Uint8Array(448))); // record 456: tail 656
    producer.flush();
    assert.notEqual(consumer.read(), null); // head 656: 456 past the published 200, below half
    assert.equal(consumer.positions().publishedHeadBytes, 200, 'lazy');
    // At offset 656 a 512-byte record needs a 368-byte skip: 880 bytes, but only 1024 − 456 are free
    // as far as the producer knows.
    assert.equal(producer.tryWrite(big), false, 'does not fit against the published head');
    assert.ok(producer.positions().headRequested);
    assert.equal(consumer.read(), null, 'empty poll');
    assert.equal(consumer.positions().publishedHeadBytes, 656, 'the empty poll published the head');
    assert.ok(producer.positions().headRequested, 'only the producer withdraws its request');
    assert.ok(producer.tryWrite(big));
    assert.equal(producer.positions().headRequested, false, 'a write that fits withdraws the request');
  });

  test('the largest message fits an empty ring at every tail offset; a larger one throws', () => {
    for (const capacityBytes of [64, 256, 4096]) {
      const producer = SpscRing.create({ capacityBytes });
      const consumer = SpscRing.attach(producer.buffer);
      const max = producer.maxMessageBytes;
      for (let step = 0; step < capacityBytes / 8; step++) {
        assert.ok(producer.tryWrite(new Uint8Array(max).fill(step)), `offset ${step * 8}`);
        producer.flush();
        assert.equal(consumer.read()?.[0], step & 0xff);
        consumer.waitForData(0); // publishes the head (rule 3) so the next write sees an empty ring
        // Move the tail by 8 bytes so the next max-size write starts elsewhere.
        assert.ok(producer.tryWrite(new Uint8Array(0)));
        producer.flush();
        assert.equal(consumer.read()?.length, 0);
        consumer.waitForData(0);
      }
      assert.throws(() => producer.tryWrite(new Uint8Array(max + 1)), ChannelMessageTooLargeError);
    }
  });

  test('readInto leaves a message that does not fit the target in place', () => {
    const producer = SpscRing.create({ capacityBytes: 256 });
    const consumer = SpscRing.attach(producer.buffer);
    producer.tryWrite(new Uint8Array([1, 2, 3, 4, 5]));
    producer.flush();
    assert.equal(consumer.readInto(new Uint8Array(4)), RING_TARGET_TOO_SMALL);
    const target = new Uint8Array(8);
    assert.equal(consumer.readInto(target), 5);
    assert.deepEqual(target.subarray(0, 5), new Uint8Array([1, 2, 3, 4, 5]));
    assert.equal(consumer.readInto(target), RING_EMPTY);
  });

  test('tryReserve + commit writes in place; nothing is visible before flush', () => {
    const producer = SpscRing.create({ capacityBytes: 256 });
    const consumer = SpscRing.attach(producer.buffer);
    const offset = producer.tryReserve(3);
    assert.ok(offset >= 0);
    producer.bytes.set([9, 8, 7], offset);
    producer.commit();
    assert.equal(consumer.read(), null, 'unflushed');
    producer.flush();
    assert.deepEqual(consumer.read(), new Uint8Array([9, 8, 7]));
  });

  test('create and attach reject what is not a ring', () => {
    for (const capacityBytes of [0, 32, 100, 3000, 2 ** 31]) {
      assert.throws(() => SpscRing.create({ capacityBytes }), ConfigError, `capacity ${capacityBytes}`);
    }
    assert.throws(() => SpscRing.create({ capacityBytes: 256, spinIterations: -1 }), ConfigError);
    assert.throws(() => SpscRing.attach(new SharedArrayBuffer(RING_CONTROL_BYTES + 256)), ConfigError);
    assert.throws(() => SpscRing.attach(new SharedArrayBuffer(16)), ConfigError);
    const ring = SpscRing.create({ capacityBytes: 256 });
    assert.equal(SpscRing.attach(ring.buffer).capacityBytes, 256);
  });

  test('attach refuses a header whose capacity does not match the memory it lies in', () => {
    // A ring in an exact-size SharedArrayBuffer (the fallback's shape), its header rewritten.
    const header = (capacityBytes: number, bufferBytes: number): SharedArrayBuffer => {
      const model = SpscRing.create({ capacityBytes: 1024 });
      const buffer = new SharedArrayBuffer(bufferBytes);
      new Uint8Array(buffer).set(new Uint8Array(model.buffer, 0, RING_CONTROL_BYTES));
      new Int32Array(buffer)[2] = capacityBytes; // the capacity word
      return buffer;
    };
    assert.equal(SpscRing.attach(header(1024, RING_CONTROL_BYTES + 1024)).capacityBytes, 1024);
    assert.equal(SpscRing.attach(header(1024, 65_536)).capacityBytes, 1024, 'rounded up to a page');
    for (const [capacity, bytes, why] of [
      [96, RING_CONTROL_BYTES + 96, 'not a power of two'],
      [512, RING_CONTROL_BYTES + 1024, 'halved: the data area is bigger than the header says'],
      [2048, RING_CONTROL_BYTES + 1024, 'larger than the memory'],
      [32, RING_CONTROL_BYTES + 32, 'below the minimum'],
    ] as const) {
      assert.throws(() => SpscRing.attach(header(capacity, bytes)), ConfigError, why);
    }
  });
});
