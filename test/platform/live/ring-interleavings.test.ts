/**
 * Interleavings of the ring's two threads that a two-thread test meets only by chance, made
 * deterministic: the test wraps `Atomics.store` so that, right after the producer's store that
 * publishes a batch (`TAIL`), the consumer runs to completion — exactly as if the producer's
 * thread had been descheduled at that instruction. This is the iPipe §3 lazy head update ("the
 * consumer tells the producer when it has consumed half the ring") meeting a producer that was
 * refused by a head the consumer had not published yet.
 */

import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { SpscRing } from '../../../src/platform/live/channel/ring.ts';

const originalStore = Atomics.store;

/**
 * Runs `consumerTurn` once, right after the first `Atomics.store` on `ring`'s buffer that moves its
 * published tail — before the producer's next instruction.
 */
function runAfterTailStore(ring: SpscRing, consumerTurn: () => void): { readonly ran: () => boolean } {
  let ran = false;
  const before = ring.positions().publishedTailBytes;
  const store = (array: Int32Array, index: number, value: number): number => {
    const stored = originalStore(array, index, value);
    if (!ran && array.buffer === ring.buffer && ring.positions().publishedTailBytes !== before) {
      ran = true;
      consumerTurn();
    }
    return stored;
  };
  Atomics.store = store as typeof Atomics.store;
  return { ran: () => ran };
}

describe('SpscRing interleavings', () => {
  afterEach(() => {
    Atomics.store = originalStore;
  });

  test('a consumer that drains the batch published by a refused write answers the head request at once', () => {
    // 512-byte ring. The consumer publishes its head at 200 (rule 3), then the producer writes two
    // records (120 + 128 bytes: tail 448, unflushed) and is refused a 248-byte message (record 256):
    // at offset 448 it needs a 64-byte skip, 320 bytes, but only 512 − 248 are free as far as it knows.
    const producer = SpscRing.create({ capacityBytes: 512, spinIterations: 0 });
    const consumer = SpscRing.attach(producer.buffer, { spinIterations: 0 });
    assert.ok(producer.tryWrite(new Uint8Array(192))); // record 200
    producer.flush();
    assert.equal(consumer.read()?.length, 192);
    assert.equal(consumer.waitForData(0), 'timed-out'); // rule 3: about to sleep, it publishes
    assert.equal(consumer.positions().publishedHeadBytes, 200);
    assert.ok(producer.tryWrite(new Uint8Array(112))); // record 120
    assert.ok(producer.tryWrite(new Uint8Array(120))); // record 128: tail 448, 248 past the published head
    const big = new Uint8Array(248);

    // The consumer's thread runs the moment the refusal's flush makes the batch visible: it drains
    // both records (248 bytes: below half the ring, so no half-ring publication) and polls empty.
    const drained: number[] = [];
    const injected = runAfterTailStore(producer, () => {
      for (let message = consumer.read(); message !== null; message = consumer.read())
        drained.push(message.length);
    });
    assert.equal(producer.tryWrite(big), false, 'refused against the published head 200');
    Atomics.store = originalStore;
    assert.ok(injected.ran(), 'the consumer ran between the flush and the end of the refusal');
    assert.deepEqual(drained, [112, 120]);

    // The consumer has drained everything and is not asleep. Had the request come after the batch,
    // its empty poll would have seen none and kept the head to itself until its next sleep: a
    // producer that waits for anything but room (a duplex peer waiting for a reply) never learns
    // that the ring is empty. The request comes first, so the empty poll published the head.
    assert.equal(consumer.positions().publishedHeadBytes, 448, 'the empty poll answered the request');
    assert.ok(producer.tryWrite(big), 'the retry fits: an empty ring takes every legal message');
  });
});
