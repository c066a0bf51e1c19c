/**
 * The ring's doorbell and waits (piscina's idiom: an idle side sleeps in Atomics.wait on a word):
 * a busy consumer costs the producer no notify; a sleeping one is woken exactly once per sleep;
 * timeouts and close end every kind of wait; a producer waiting for room is woken by the consumer's
 * head publication (lazy head update on request).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SpscRing } from '../../../src/platform/live/channel/ring.ts';

function pair(capacityBytes = 1024, spinIterations = 0): { producer: SpscRing; consumer: SpscRing } {
  const producer = SpscRing.create({ capacityBytes, spinIterations });
  return { producer, consumer: SpscRing.attach(producer.buffer, { spinIterations }) };
}

describe('SpscRing doorbell and waits', () => {
  test('waitForData on an empty ring sleeps and times out; data already there returns at once', () => {
    const { producer, consumer } = pair();
    const started = performance.now();
    assert.equal(consumer.waitForData(40), 'timed-out');
    const elapsedMs = performance.now() - started;
    assert.ok(elapsedMs >= 35 && elapsedMs < 2000, `waited ${elapsedMs} ms`);
    assert.equal(consumer.stats().sleeps, 1);
    assert.equal(consumer.positions().doorbellArmed, true, 'a timed-out sleep leaves the doorbell armed');
    producer.tryWrite(new Uint8Array([1]));
    producer.flush();
    assert.equal(consumer.waitForData(10_000), 'ready');
    assert.equal(consumer.stats().sleeps, 1, 'no sleep when data is waiting');
  });

  test('a flush rings the doorbell only while the consumer sleeps, once per sleep', async () => {
    const { producer, consumer } = pair();
    for (let i = 0; i < 10; i++) {
      producer.tryWrite(new Uint8Array([i]));
      producer.flush();
    }
    assert.equal(producer.stats().doorbells, 0, 'a consumer that is not waiting costs no notify');
    while (consumer.read() !== null) {}

    const waiting = consumer.waitForDataAsync(5000);
    assert.ok(consumer.positions().doorbellArmed, 'the async waiter armed the doorbell');
    producer.tryWrite(new Uint8Array([42]));
    producer.flush();
    producer.tryWrite(new Uint8Array([43]));
    producer.flush();
    assert.equal(await waiting, 'ready');
    assert.equal(producer.stats().doorbells, 1, 'one notify for one sleep, not one per flush');
    assert.deepEqual(consumer.read(), new Uint8Array([42]));
    assert.deepEqual(consumer.read(), new Uint8Array([43]));
  });

  test('waitForDataAsync times out and leaves the event loop free meanwhile', async () => {
    const { consumer } = pair();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const result = await consumer.waitForDataAsync(60);
    clearInterval(timer);
    assert.equal(result, 'timed-out');
    assert.ok(ticks >= 3, `the event loop ran ${ticks} timer ticks during the wait`);
  });

  test('close wakes a sleeping consumer; what was published before still drains, then closed', async () => {
    const { producer, consumer } = pair();
    const waiting = consumer.waitForDataAsync(10_000);
    producer.close();
    assert.equal(await waiting, 'closed');

    const second = pair();
    second.producer.tryWrite(new Uint8Array([7]));
    second.producer.close(); // flushes first
    assert.equal(second.consumer.waitForData(1000), 'ready');
    assert.deepEqual(second.consumer.read(), new Uint8Array([7]));
    assert.equal(second.consumer.waitForData(1000), 'closed');
    assert.equal(second.producer.write(new Uint8Array([1])), 'closed');
  });

  test('a blocking write into a full ring with no consumer times out; nothing is written', () => {
    const { producer, consumer } = pair(256);
    while (producer.tryWrite(new Uint8Array(56))) {}
    const sent = producer.stats().sent;
    const started = performance.now();
    assert.equal(producer.write(new Uint8Array(56), 30), 'timed-out');
    assert.ok(performance.now() - started >= 25);
    assert.equal(producer.stats().sent, sent);
    let delivered = 0;
    while (consumer.read() !== null) delivered++;
    assert.equal(delivered, sent, 'everything accepted before the timeout is delivered');
  });

  test('a producer waiting for room is woken by the consumer publishing its head on request', async () => {
    const { producer, consumer } = pair(256);
    while (producer.tryWrite(new Uint8Array(56))) {}
    const room = producer.waitForRoomAsync(56, 5000);
    assert.ok(producer.positions().headRequested, 'the waiting producer asked for the head');
    assert.notEqual(consumer.read(), null);
    assert.equal(consumer.positions().publishedHeadBytes, 0, 'lazy: 64 of 256 bytes is below half the ring');
    // The half-ring mark (or, at the latest, the empty poll after draining) publishes and notifies.
    while (consumer.read() !== null) {}
    assert.equal(await room, 'ready');
    assert.ok(producer.tryWrite(new Uint8Array(56)));
  });
});
