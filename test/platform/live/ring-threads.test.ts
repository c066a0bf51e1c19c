/**
 * The ring across two real threads (iPipe §3 "Host–NIC messaging": the NIC domain and the host
 * domain run concurrently on either side of the channel). A producer worker writes 100 000
 * messages of random sizes — up to the ring's maximum, so records wrap and skip often — whose
 * content derives from their sequence number; the main thread consumes and checks every byte:
 * order, content, no loss, no duplication, no checksum failure. The ring is small (4 KiB) and the
 * consumer stalls once on purpose, so the producer must meet back-pressure. Run with a spinning
 * consumer, a sleeping one (Atomics.wait at once) and an async one (Atomics.waitAsync).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import {
  RING_CORRUPT,
  RING_EMPTY,
  type RingStats,
  SpscRing,
} from '../../../src/platform/live/channel/ring.ts';
import { messageSize, mismatchAt } from './fixtures/message-pattern.ts';
import type { ProducerJob } from './fixtures/ring-producer-worker.ts';

const MESSAGES = 100_000;
const CAPACITY_BYTES = 4096;
const SEED = 0x5eed;
/** The consumer stalls this long once, after this many messages, so the producer fills the ring. */
const STALL_AT = 1000;
const STALL_MS = 20;

type ConsumerKind = 'spin' | 'sleep' | 'async';

interface Scenario {
  readonly consumer: ConsumerKind;
  readonly producerWhenFull: ProducerJob['whenFull'];
  readonly spinIterations: number;
}

function startProducer(
  ring: SpscRing,
  scenario: Scenario,
): { sync: Int32Array; done: Promise<RingStats>; worker: Worker } {
  const syncBuffer = new SharedArrayBuffer(8);
  const job: ProducerJob = {
    // The memory: both threads check records with the WebAssembly checksum (word-checksum-wasm.ts).
    buffer: ring.memory,
    messages: MESSAGES,
    batch: 16,
    seed: SEED,
    whenFull: scenario.producerWhenFull,
    spinIterations: scenario.spinIterations,
    sync: syncBuffer,
  };
  const worker = new Worker(new URL('./fixtures/worker-bootstrap.mjs', import.meta.url), {
    workerData: { entry: new URL('./fixtures/ring-producer-worker.ts', import.meta.url).href, job },
  });
  const done = new Promise<RingStats>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`producer exited with ${code} before reporting`)));
  });
  return { sync: new Int32Array(syncBuffer), done, worker };
}

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

async function runScenario(scenario: Scenario): Promise<void> {
  const ring = SpscRing.create({ capacityBytes: CAPACITY_BYTES, spinIterations: scenario.spinIterations });
  const consumer = SpscRing.attach(ring.memory, { spinIterations: scenario.spinIterations });
  assert.equal(consumer.wasmChecksum, true);
  const max = consumer.maxMessageBytes;
  const { sync, done, worker } = startProducer(ring, scenario);
  const failed = done.then(
    () => new Promise<never>(() => {}),
    (error: unknown) => Promise.reject(error),
  );
  while (Atomics.load(sync, 0) === 0)
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 1)), failed]);
  Atomics.store(sync, 1, 1);
  Atomics.notify(sync, 1);

  const bytes = consumer.bytes;
  const target = new Uint8Array(max);
  let sequence = 0;
  try {
    while (sequence < MESSAGES) {
      if (sequence === STALL_AT) busyWait(STALL_MS);
      const size = messageSize(sequence, SEED, max);
      let length: number;
      let mismatch: number;
      if (scenario.consumer === 'spin') {
        // Zero-copy: check the bytes in place, then release the record.
        length = consumer.peek();
        if (length >= 0) {
          mismatch = mismatchAt(bytes, consumer.peekOffset, length, sequence, size);
          consumer.consume();
        } else {
          mismatch = 0;
        }
      } else if (scenario.consumer === 'sleep') {
        length = consumer.readInto(target);
        mismatch = length >= 0 ? mismatchAt(target, 0, length, sequence, size) : 0;
      } else {
        const message = consumer.read();
        length = message === null ? RING_EMPTY : message.length;
        mismatch = message === null ? 0 : mismatchAt(message, 0, message.length, sequence, size);
      }
      if (length === RING_EMPTY) {
        const waited =
          scenario.consumer === 'async'
            ? await consumer.waitForDataAsync(10_000)
            : consumer.waitForData(10_000);
        assert.equal(waited, 'ready', `no data for 10 s at message ${sequence}`);
        continue;
      }
      assert.notEqual(length, RING_CORRUPT, `message ${sequence} failed its checksum`);
      assert.equal(
        mismatch,
        -1,
        `message ${sequence}: ${mismatch === -2 ? `length ${length}, expected ${size}` : `byte ${mismatch} differs`}`,
      );
      sequence++;
    }
    const producerStats = await done;
    assert.equal(consumer.read(), null, 'no message after the last one (no duplicates)');
    const consumerStats = consumer.stats();
    assert.equal(producerStats.sent, MESSAGES);
    assert.equal(consumerStats.received, MESSAGES);
    assert.equal(consumerStats.checksumFailures, 0);
    assert.ok(producerStats.fullEvents >= 1, 'the producer met back-pressure (4 KiB ring, stalled consumer)');
    if (scenario.consumer !== 'spin') {
      assert.ok(consumerStats.sleeps >= 1, 'the sleeping consumer slept');
      assert.ok(producerStats.doorbells >= 1, 'and the producer woke it');
    }
  } finally {
    await worker.terminate();
  }
}

describe('SpscRing across two threads, 100 000 messages', () => {
  test('spinning consumer (zero-copy peek/consume), producer spinning on tryWrite when full', () =>
    runScenario({ consumer: 'spin', producerWhenFull: 'spin', spinIterations: 5000 }));
  test('sleeping consumer (Atomics.wait at once, readInto), producer sleeping in write() when full', () =>
    runScenario({ consumer: 'sleep', producerWhenFull: 'block', spinIterations: 0 }));
  test('async consumer on the main thread (Atomics.waitAsync, read), producer sleeping in write()', () =>
    runScenario({ consumer: 'async', producerWhenFull: 'block', spinIterations: 0 }));
});
