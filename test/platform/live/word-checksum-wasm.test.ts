/**
 * The ring checksum compiled to WebAssembly (src/platform/live/channel/word-checksum-wasm.ts): it
 * is the JavaScript `ringChecksum` bit for bit — at every length 0..400 (three 128-byte blocks and
 * every combination of the parts after them), at random lengths up to 4 KiB and random offsets
 * (seeded), with bytes outside the record not sealed — so a ring side attached by its
 * SharedArrayBuffer (JavaScript) and one attached by its WebAssembly.Memory agree; a ring made by
 * `SpscRing.create` uses it on both sides when attached by `memory`; a damaged word is caught by a
 * consumer that verifies in WebAssembly; and where shared memory is refused or the module does not
 * compile (no SIMD) the ring works on the JavaScript twin.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import { RING_CONTROL_BYTES, RING_CORRUPT, SpscRing } from '../../../src/platform/live/channel/ring.ts';
import { ringChecksum } from '../../../src/platform/live/channel/word-checksum.ts';
import {
  allocateSharedWasmMemory,
  isSharedWasmMemory,
  wasmRingChecksum,
} from '../../../src/platform/live/channel/word-checksum-wasm.ts';

const SEED = 0x0a5e_17;
console.log(`word-checksum-wasm: fast-check seed ${SEED}`);

function wasmAndViews(bytes: number) {
  const memory = allocateSharedWasmMemory(bytes);
  assert.ok(memory !== undefined, 'Node 20 has shared WebAssembly memory');
  const checksum = wasmRingChecksum(memory);
  assert.ok(checksum !== undefined, 'the checksum module compiles and instantiates');
  return { memory, checksum, words: new Int32Array(memory.buffer), bytes: new Uint8Array(memory.buffer) };
}

test('the WebAssembly checksum equals the JavaScript one at every length 0..400, at several offsets', () => {
  const { checksum, words, bytes } = wasmAndViews(8192);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 0xff;
  for (const start of [0, 4, 8, 392, 4096]) {
    for (let length = 0; length <= 400; length++) {
      assert.equal(
        checksum(start, length),
        ringChecksum(words, bytes, start, length),
        `start ${start}, length ${length}`,
      );
    }
  }
});

test('… and at random lengths up to 4 KiB and random contents (seeded), ignoring bytes past the record', () => {
  const { checksum, words, bytes } = wasmAndViews(16_384);
  fc.assert(
    fc.property(
      // size 'max': fast-check otherwise keeps arrays short, and the lanes past the first need ≥ 16 bytes.
      fc.uint8Array({ minLength: 0, maxLength: 4096, size: 'max' }),
      fc.nat({ max: 1000 }),
      fc.uint8Array({ minLength: 4, maxLength: 4 }),
      (payload, startWords, junk) => {
        const start = startWords * 4;
        bytes.set(payload, start);
        bytes.set(junk, start + payload.length); // the padding after a record is not sealed
        const sealed = checksum(start, payload.length);
        assert.equal(sealed, ringChecksum(words, bytes, start, payload.length));
        bytes.set(
          junk.map((value) => value ^ 0xff),
          start + payload.length,
        );
        assert.equal(checksum(start, payload.length), sealed);
      },
    ),
    { numRuns: 400, seed: SEED },
  );
});

test('a ring made by create checks in WebAssembly on the side attached by memory, in JavaScript by buffer', () => {
  const producer = SpscRing.create({ capacityBytes: 4096 });
  assert.ok(isSharedWasmMemory(producer.memory));
  assert.equal(producer.buffer, (producer.memory as { buffer: SharedArrayBuffer }).buffer);
  assert.equal(producer.wasmChecksum, true);
  assert.equal(SpscRing.attach(producer.memory).wasmChecksum, true);
  assert.equal(SpscRing.attach(producer.buffer).wasmChecksum, false);
});

test('records sealed on one side are verified on the other, whichever checksum each side runs (seeded)', () => {
  for (const [producerBy, consumerBy] of [
    ['memory', 'buffer'],
    ['buffer', 'memory'],
    ['memory', 'memory'],
  ] as const) {
    const created = SpscRing.create({ capacityBytes: 8192 });
    const producer = producerBy === 'memory' ? created : SpscRing.attach(created.buffer);
    const consumer = SpscRing.attach(consumerBy === 'memory' ? created.memory : created.buffer);
    assert.equal(producer.wasmChecksum, producerBy === 'memory');
    assert.equal(consumer.wasmChecksum, consumerBy === 'memory');
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 1500, size: 'max' }), { maxLength: 12 }),
        (messages) => {
          const sent: Uint8Array[] = [];
          for (const message of messages) {
            if (!producer.tryWrite(message)) break;
            sent.push(message);
          }
          producer.flush();
          for (const message of sent) assert.deepEqual(consumer.read(), message);
          assert.equal(consumer.read(), null);
          consumer.waitForData(0); // publishes the head: the next round starts with an empty ring
        },
      ),
      { numRuns: 150, seed: SEED },
    );
    assert.equal(consumer.stats().checksumFailures, 0, `${producerBy} → ${consumerBy}`);
  }
});

test('a damaged word is caught by a consumer that verifies in WebAssembly', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 1, maxLength: 1024, size: 'max' }),
      fc.nat(),
      fc.integer({ min: 1, max: 0xff }),
      (payload, pick, mask) => {
        const producer = SpscRing.create({ capacityBytes: 4096 });
        const consumer = SpscRing.attach(producer.memory);
        assert.ok(producer.tryWrite(payload));
        producer.flush();
        // The first record starts the data area: 8 header bytes, then the payload.
        new Uint8Array(producer.buffer)[RING_CONTROL_BYTES + 8 + (pick % payload.length)]! ^= mask;
        assert.equal(consumer.peek(), RING_CORRUPT);
        assert.equal(consumer.stats().checksumFailures, 1);
      },
    ),
    { numRuns: 300, seed: SEED },
  );
});

test('without shared WebAssembly memory the ring falls back to a SharedArrayBuffer and the JavaScript checksum', () => {
  // A child process whose WebAssembly.Memory refuses every memory, as an engine without shared
  // WebAssembly memory would (WebAssembly itself stays: the TypeScript loader needs it).
  const ringUrl = new URL('../../../src/platform/live/channel/ring.ts', import.meta.url).href;
  const script = `
    WebAssembly.Memory = class { constructor() { throw new RangeError('no shared memory here'); } };
    const { SpscRing } = await import(${JSON.stringify(ringUrl)});
    const producer = SpscRing.create({ capacityBytes: 1024 });
    const consumer = SpscRing.attach(producer.memory);
    const message = new Uint8Array(300).map((_, i) => (i * 7) & 0xff);
    producer.tryWrite(message);
    producer.flush();
    const copy = consumer.read();
    console.log(JSON.stringify({
      sab: producer.memory instanceof SharedArrayBuffer,
      wasm: producer.wasmChecksum || consumer.wasmChecksum,
      same: copy !== null && copy.every((byte, i) => byte === message[i]) && copy.length === 300,
    }));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout.trim()), { sab: true, wasm: false, same: true });
});

test('where the checksum module does not compile (no WebAssembly SIMD) the ring checks in JavaScript', () => {
  // A child process whose WebAssembly.Module refuses to compile, as an engine without SIMD would:
  // the ring keeps its shared WebAssembly.Memory but seals and verifies with the JavaScript twin.
  const ringUrl = new URL('../../../src/platform/live/channel/ring.ts', import.meta.url).href;
  const script = `
    const { SpscRing } = await import(${JSON.stringify(ringUrl)});
    WebAssembly.Module = class { constructor() { throw new WebAssembly.CompileError('no SIMD here'); } };
    const producer = SpscRing.create({ capacityBytes: 4096 });
    const consumer = SpscRing.attach(producer.memory);
    const message = new Uint8Array(1000).map((_, i) => (i * 7) & 0xff);
    producer.tryWrite(message);
    producer.tryWrite(message);
    producer.flush();
    const copy = consumer.read();
    new Uint8Array(producer.buffer)[${RING_CONTROL_BYTES} + 8 + 1008 + 8 + 500] ^= 0x10;
    let caught = '';
    try { consumer.read(); } catch (error) { caught = error.code; }
    console.log(JSON.stringify({
      wasmMemory: !(producer.memory instanceof SharedArrayBuffer),
      wasm: producer.wasmChecksum || consumer.wasmChecksum,
      same: copy !== null && copy.length === 1000 && copy.every((byte, i) => byte === message[i]),
      caught,
    }));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout.trim()), {
    wasmMemory: true,
    wasm: false,
    same: true,
    caught: 'IPIPE_ERR_CHANNEL_CHECKSUM',
  });
});
