import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ACCELERATOR_KINDS } from '../../src/actor/cost.ts';
import { ACCELERATOR_TABLE } from '../../src/hw/data/published.ts';
import {
  acceleratorLatencyNs,
  acceleratorSpeedupVsHost,
  hostSoftwareLatencyNs,
  isBatchable,
} from '../../src/hw/models/accelerator.ts';
import { handlerTimeNs } from '../../src/hw/models/handler-cost.ts';
import { LIQUIDIO_CN2350, LIQUIDIO_CN2360, STINGRAY_PS225, XEON_E5_2680V3 } from '../../src/hw/profiles.ts';

test('Table 3: every accelerator latency at batch 1, 8 and 32 is reproduced', () => {
  for (const kind of ACCELERATOR_KINDS) {
    const row = ACCELERATOR_TABLE[kind];
    const at = (batch: number): number => acceleratorLatencyNs(LIQUIDIO_CN2350, kind, { batch }) / 1000;
    assert.ok(Math.abs(at(1) - row.batch1Us) < 1e-9, `${kind} batch 1`);
    if (row.batch8Us !== null) assert.ok(Math.abs(at(8) - row.batch8Us) < 1e-9, `${kind} batch 8`);
    if (row.batch32Us !== null) assert.ok(Math.abs(at(32) - row.batch32Us) < 1e-9, `${kind} batch 32`);
  }
});

test('zip is not batchable: any batch costs the batch-1 latency per request', () => {
  assert.equal(isBatchable(LIQUIDIO_CN2350, 'zip'), false);
  assert.equal(isBatchable(LIQUIDIO_CN2350, 'crc'), true);
  assert.equal(acceleratorLatencyNs(LIQUIDIO_CN2350, 'zip', { batch: 32 }), 190_900);
});

test('batching never raises the per-request latency; size beyond 1 KB scales it', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...ACCELERATOR_KINDS),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 64 }),
      (kind, a, b) => {
        const [small, large] = a <= b ? [a, b] : [b, a];
        assert.ok(
          acceleratorLatencyNs(LIQUIDIO_CN2350, kind, { batch: large }) <=
            acceleratorLatencyNs(LIQUIDIO_CN2350, kind, { batch: small }) + 1e-9,
        );
      },
    ),
  );
  assert.equal(acceleratorLatencyNs(LIQUIDIO_CN2350, 'aes', { bytes: 64 }), 2700);
  assert.equal(acceleratorLatencyNs(LIQUIDIO_CN2350, 'aes', { bytes: 4096 }), 4 * 2700);
  // Between measured batch sizes: log2 interpolation (batch 4 is 2/3 of the way from 1 to 8).
  assert.ok(
    Math.abs(acceleratorLatencyNs(LIQUIDIO_CN2350, 'crc', { batch: 4 }) - (2600 + (2 / 3) * (700 - 2600))) <
      1e-9,
  );
});

test('Table 3 speed-ups over the host: md5 7.0×, aes 2.5×', () => {
  assert.ok(Math.abs(acceleratorSpeedupVsHost(LIQUIDIO_CN2350, XEON_E5_2680V3, 'md5') - 7) < 1e-9);
  assert.ok(Math.abs(acceleratorSpeedupVsHost(LIQUIDIO_CN2350, XEON_E5_2680V3, 'aes') - 2.5) < 1e-9);
  assert.equal(hostSoftwareLatencyNs(XEON_E5_2680V3, 'md5'), 35_000);
});

test('the calling core stalls for the engine: a handler pays the accelerator latency', () => {
  const work = { instructions: 0, accelerators: [{ kind: 'sha1' as const, bytes: 1024, batch: 8 }] };
  assert.equal(handlerTimeNs(LIQUIDIO_CN2350, work), 1200);
  assert.equal(handlerTimeNs(XEON_E5_2680V3, work), 3500);
  // Other cards: the CN2360 by clock, the ARM cards borrow the CN2350's numbers.
  assert.ok(Math.abs(handlerTimeNs(LIQUIDIO_CN2360, work) - 1200 * (1.2 / 1.5)) < 1e-9);
  assert.equal(handlerTimeNs(STINGRAY_PS225, work), 1200);
});
