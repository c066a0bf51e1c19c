/**
 * Where the engine refuses a shared WebAssembly memory (an address-space limit: each reserves
 * ~10 GiB of guard region, and V8 runs three full collections before giving up), rings fall back to
 * a SharedArrayBuffer and the JavaScript checksum — and the refusal is remembered, so only the
 * first ring pays for it. Its own file: the refusal is per thread and stays for the process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SpscRing } from '../../../src/platform/live/channel/ring.ts';
import { sharedWasmMemoryRefused } from '../../../src/platform/live/channel/word-checksum-wasm.ts';

test('a refused shared WebAssembly memory is asked for once; the rings still carry messages', () => {
  const wasm = (globalThis as unknown as { WebAssembly: { Memory: unknown } }).WebAssembly;
  const original = wasm.Memory;
  let attempts = 0;
  wasm.Memory = class {
    constructor() {
      attempts++;
      throw new RangeError('WebAssembly.Memory(): could not allocate memory');
    }
  };
  try {
    const rings = [SpscRing.create({ capacityBytes: 1024 }), SpscRing.create({ capacityBytes: 1024 })];
    assert.equal(attempts, 1, 'the second ring did not ask again');
    assert.ok(sharedWasmMemoryRefused());
    for (const producer of rings) {
      assert.ok(producer.memory instanceof SharedArrayBuffer, 'fell back to a SharedArrayBuffer');
      assert.equal(producer.wasmChecksum, false);
      const consumer = SpscRing.attach(producer.memory);
      assert.equal(producer.write(new Uint8Array([1, 2, 3, 4, 5])), 'ok');
      producer.flush();
      assert.deepEqual(consumer.read(), new Uint8Array([1, 2, 3, 4, 5]));
    }
  } finally {
    wasm.Memory = original;
  }
});
