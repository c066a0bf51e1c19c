/**
 * `DomainCores.forget` on a core whose work ring is full must not block the controller's thread:
 * the core may itself be waiting for room in its full result ring, which only that thread drains —
 * a blocking forget (the old `work.write`, an `Atomics.wait` on the main thread) never returned.
 * Work handed over after a forget still reaches the core after it, in order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DmoDomain } from '../../../../src/dmo/domain.ts';
import { actorId } from '../../../../src/ids.ts';
import type { FrameReader } from '../../../../src/platform/live/node/core-protocol.ts';
import { DomainCores } from '../../../../src/platform/live/node/domain-cores.ts';
import { LiveRequest } from '../../../../src/platform/live/node/live-request.ts';

/** Blocks this thread (no event loop: nothing drains the result ring meanwhile). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

test('forget with both rings full returns at once; held work follows it in order', async () => {
  const domain = DmoDomain.create({ regionBytes: 64 * 1024, maxActors: 4, shared: true });
  const results: number[] = [];
  const cores = new DomainCores({
    domain: 'host',
    cores: 1,
    domainBuffer: domain.buffer as SharedArrayBuffer,
    catalog: [],
    // Small rings: a few dozen work items and failure results fill them.
    ringBytes: 2048,
    spinIterations: 0,
    resultSpinUs: 0,
    watchdogMs: 60_000,
    onResult: (_core: number, reader: FrameReader) => {
      results.push(reader.u8());
      cores.release(0);
    },
    onWatchdog: () => assert.fail('no handler runs long'),
  });
  await cores.start();
  try {
    // Work for an actor the core has no heap for: each item fails at once and answers with an
    // error result (~100 bytes), so the core fills its result ring while this thread is blocked.
    const request = () => new LiveRequest(actorId(7), { kind: 'none' }, new Uint8Array(32), 0);
    let handed = 0;
    for (let round = 0; round < 200 && handed < 1000; round++) {
      while (cores.sendRequest(0, 0, request())) handed++;
      blockFor(2); // the core consumes what it can, then waits for room for its results
    }
    assert.equal(cores.sendRequest(0, 0, request()), false, 'the work ring is full');
    assert.ok(handed > 20, `handed ${handed}`);

    const started = performance.now();
    cores.forget(7);
    const forgetMs = performance.now() - started;
    assert.ok(forgetMs < 1000, `forget returned in ${forgetMs.toFixed(1)} ms`);
    assert.equal(cores.heldControls(), 1, 'the forget waits for room, held');
    assert.equal(cores.sendRequest(0, 0, request()), false, 'work waits behind a held forget');

    // The event loop drains results; the core consumes work; the forget and then new work go in.
    const deadline = performance.now() + 10_000;
    while (results.length < handed && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    assert.equal(results.length, handed, 'every item handed over was answered');
    while (cores.heldControls() > 0 && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    assert.equal(cores.heldControls(), 0, 'the forget was written once there was room');
    assert.equal(cores.sendRequest(0, 0, request()), true, 'work goes again');
    while (results.length < handed + 1 && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    assert.equal(results.length, handed + 1);
  } finally {
    await cores.stop();
  }
});
