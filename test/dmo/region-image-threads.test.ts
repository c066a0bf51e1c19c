/**
 * A region image crossing threads: a worker attached to the source domain streams the actor's
 * image through a four-slot ring in a SharedArrayBuffer (as a DMA ring would), and the main thread
 * assembles it straight into another domain — the move between a NIC and a host process.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { DmoHashMap, DmoVector, ImageAssembler } from '../../src/dmo/index.ts';
import { A, makeDomain } from './helpers.ts';

const SLOT_COUNT = 4;
const SLOT_BYTES = 4096;

test('an image streamed by another thread through a small ring adopts with the same ids and contents', async () => {
  const nic = makeDomain({ shared: true, regionBytes: 1 << 20, maxActors: 2 });
  const heap = nic.createHeap(A);
  const map = DmoHashMap.create(heap);
  for (let i = 0; i < 2000; i++) map.setString(`k${i}`, `v${i}`.repeat(1 + (i % 5)));
  for (let i = 0; i < 2000; i += 3) map.deleteString(`k${i}`);
  const vector = DmoVector.create(heap, { element: 'bytes', elementBytes: 64 });
  for (let i = 0; i < 3000; i++) vector.pushBytes(new Uint8Array(64).fill(i & 0xff));

  const host = makeDomain({ shared: true, regionBytes: 1 << 20, maxActors: 2 });
  const control = new SharedArrayBuffer(4 * (4 + SLOT_COUNT));
  const slots = new SharedArrayBuffer(SLOT_COUNT * SLOT_BYTES);
  const words = new Int32Array(control);
  const worker = new Worker(new URL('./fixtures/worker-bootstrap.mjs', import.meta.url), {
    workerData: {
      entry: new URL('./fixtures/image-producer-worker.ts', import.meta.url).href,
      job: {
        source: nic.buffer,
        actor: A,
        control,
        slots,
        slotCount: SLOT_COUNT,
        slotBytes: SLOT_BYTES,
        checksum: 'crc32c',
      },
    },
  });
  const exited = new Promise<number>((resolve, reject) => {
    worker.once('exit', resolve);
    worker.once('error', reject);
  });
  while (Atomics.load(words, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));

  // Consume on this thread, blocking between chunks (the worker needs nothing from our event loop).
  const assembler = new ImageAssembler(host, A, { verify: 'crc32c' });
  const ring = new Uint8Array(slots);
  let consumed = 0;
  let chunks = 0;
  // Done when the bytes the image header announced have arrived.
  while (assembler.expectedBytes === undefined || assembler.receivedBytes < assembler.expectedBytes) {
    const produced = Atomics.load(words, 1);
    if (consumed < produced) {
      const slot = consumed % SLOT_COUNT;
      assembler.push(ring.subarray(slot * SLOT_BYTES, slot * SLOT_BYTES + words[4 + slot]!));
      consumed++;
      chunks++;
      Atomics.store(words, 2, consumed);
      Atomics.notify(words, 2);
    } else {
      // Returns at once if the producer moved on since the load above: no wake-up is lost.
      assert.notEqual(Atomics.wait(words, 1, produced, 10_000), 'timed-out', 'the producer stalled');
    }
  }
  const adopted = assembler.finish();
  assert.equal(await exited, 0);

  assert.ok(chunks > SLOT_COUNT * 4, `the image crossed the ring in ${chunks} chunks`);
  assert.deepEqual([...adopted.objects()], [...heap.objects()]);
  assert.deepEqual(adopted.stats(), heap.stats());
  const moved = DmoHashMap.open(adopted, map.rootId);
  assert.equal(moved.size, map.size);
  for (let i = 1; i < 2000; i += 3) assert.equal(moved.getStringValue(`k${i}`), `v${i}`.repeat(1 + (i % 5)));
  assert.equal(moved.getStringValue('k0'), undefined);
  const movedVector = DmoVector.open(adopted, vector.rootId);
  assert.equal(movedVector.length, 3000);
  assert.deepEqual(movedVector.getBytes(2999), new Uint8Array(64).fill(2999 & 0xff));
});
