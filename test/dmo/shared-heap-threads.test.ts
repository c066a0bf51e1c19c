/**
 * A non-exclusive actor's heap used from two worker threads at once (iPipe §3: actors without the
 * exec lock may run on several cores). The region's futex lock keeps allocator metadata
 * consistent: every object kept by either thread is intact and no two overlap.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { ObjectId } from '../../src/ids.ts';
import { A, makeDomain } from './helpers.ts';

test('two threads allocating and freeing in one shared heap never corrupt each other', async () => {
  const domain = makeDomain({ shared: true, regionBytes: 4 << 20, maxActors: 1 });
  const heap = domain.createHeap(A);
  const rounds = 30_000;
  const sync = new SharedArrayBuffer(8);
  const flags = new Int32Array(sync);
  const worker = new Worker(new URL('./fixtures/worker-bootstrap.mjs', import.meta.url), {
    workerData: {
      entry: new URL('./fixtures/concurrent-heap-worker.ts', import.meta.url).href,
      job: { buffer: domain.buffer, sync, actor: A, rounds, tag: 0xbb },
    },
  });
  const workerKept = new Promise<ObjectId[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  // Start both loops together: wait until the worker is ready, then release it.
  while (Atomics.load(flags, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  Atomics.store(flags, 1, 1);
  Atomics.notify(flags, 1);
  const mainKept: ObjectId[] = [];
  for (let round = 0; round < rounds; round++) {
    const id = heap.allocate(16 + (round % 5) * 16);
    heap.fill(id, 0xaa);
    if (round % 3 === 0) mainKept.push(id);
    else heap.free(id);
  }
  const fromWorker = await workerKept;
  await worker.terminate();

  const check = (ids: ObjectId[], tag: number) => {
    for (const id of ids)
      assert.ok(
        heap.bytes(id).every((byte) => byte === tag),
        `object ${id} was overwritten`,
      );
  };
  check(mainKept, 0xaa);
  check(fromWorker, 0xbb);
  assert.equal(heap.stats().liveObjects, mainKept.length + fromWorker.length);
  const rows = [...domain.objectTable()].sort((x, y) => x.start - y.start);
  assert.equal(rows.length, mainKept.length + fromWorker.length);
  for (let i = 1; i < rows.length; i++) {
    assert.ok(rows[i - 1]!.start + rows[i - 1]!.sizeBytes <= rows[i]!.start, 'objects overlap');
  }
});
