import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CORES_FOR_LINE_RATE,
  ECHO_GBPS_BY_CORES,
  FIG4_ADDED_US,
  FIG4_CURVES,
  FORWARDING_SIZES_BYTES,
  type ForwardedNic,
  HEADROOM_US_ALL_CORES,
} from '../../src/hw/data/published.ts';
import { getNicProfile } from '../../src/hw/load-profile.ts';
import { coresForLineRate, forwardingThroughput, headroomNs } from '../../src/hw/models/forwarding.ts';

const NICS: readonly ForwardedNic[] = ['liquidio-cn2350', 'stingray-ps225'];

function relativeError(model: number, published: number): number {
  return Math.abs(model / published - 1);
}

for (const nic of NICS) {
  test(`${nic}: cores for line rate match the §2.2.2 text exactly at every size`, () => {
    const profile = getNicProfile(nic);
    for (const packetBytes of FORWARDING_SIZES_BYTES) {
      const expected = CORES_FOR_LINE_RATE[nic][packetBytes] ?? null;
      assert.equal(coresForLineRate(profile, packetBytes), expected, `${nic} at ${packetBytes} B`);
    }
  });

  test(`${nic}: headroom with all cores is within 10% of the text (Fig 4)`, () => {
    const profile = getNicProfile(nic);
    for (const [size, publishedUs] of Object.entries(HEADROOM_US_ALL_CORES[nic])) {
      const modelUs = headroomNs(profile, Number(size)) / 1000;
      assert.ok(
        relativeError(modelUs, publishedUs) <= 0.1,
        `${nic} ${size} B: ${modelUs} µs vs ${publishedUs} µs`,
      );
    }
  });
}

test('Fig 4: every digitized point (plateau and slope) is within 10% as wire rate', () => {
  for (const curve of FIG4_CURVES) {
    const profile = getNicProfile(curve.nic);
    const points: (readonly [number, number])[] = [
      ...FIG4_ADDED_US.filter((addedUs) => addedUs <= curve.plateauUpToUs).map(
        (addedUs) => [addedUs, curve.plateauGbps] as const,
      ),
      ...curve.points,
    ];
    for (const [addedUs, publishedGbps] of points) {
      const model = forwardingThroughput(profile, {
        packetBytes: curve.packetBytes,
        addedNs: addedUs * 1000,
      });
      assert.ok(
        relativeError(model.wireGbps, publishedGbps) <= 0.1,
        `${curve.nic} ${curve.packetBytes} B +${addedUs} µs: ${model.wireGbps} vs ${publishedGbps}`,
      );
    }
  }
});

test('an additive model could not give the headroom: one CN2350 core alone needs ~2 µs per 256 B packet', () => {
  // The fact the max(c + d, w) model exists for: the per-packet time of a lone core is almost the
  // whole 12-core line-rate budget, yet 2.5 µs of work per packet still fit.
  const cn2350 = getNicProfile('liquidio-cn2350');
  const lonePerPacketNs = 1e9 / forwardingThroughput(cn2350, { packetBytes: 256, cores: 1 }).packetsPerSec;
  const budgetNs = (12 * 1e9) / forwardingThroughput(cn2350, { packetBytes: 256 }).packetsPerSec;
  assert.ok(budgetNs - lonePerPacketNs < 500, 'additive headroom would be under 0.5 µs');
  assert.ok(headroomNs(cn2350, 256) > 2000, 'the model keeps ~2.5 µs');
  const atHeadroom = forwardingThroughput(cn2350, {
    packetBytes: 256,
    addedNs: headroomNs(cn2350, 256) * 0.99,
  });
  assert.ok(atHeadroom.lineRateLimited);
  const pastHeadroom = forwardingThroughput(cn2350, {
    packetBytes: 256,
    addedNs: headroomNs(cn2350, 256) * 1.05,
  });
  assert.ok(!pastHeadroom.lineRateLimited);
});

/**
 * The points the fit misses by more than 10% — listed in docs/calibration.md. The CN2350 256 B
 * curve contradicts the text (which wins); the two lone points sit inside the plots' digitizing
 * error of ~0.2 Gbps. A change of the fit that adds a miss fails here.
 */
const KNOWN_MISSES = new Set([
  'liquidio-cn2350 64 B 1c',
  'liquidio-cn2350 256 B 1c',
  'liquidio-cn2350 256 B 7c',
  'liquidio-cn2350 256 B 8c',
  'liquidio-cn2350 256 B 9c',
  'liquidio-cn2350 256 B 10c',
  'liquidio-cn2350 256 B 11c',
  'stingray-ps225 64 B 5c',
]);

test('Fig 2/3: every digitized point is within 10%, except the documented misses (all within 20%)', () => {
  const misses: string[] = [];
  for (const nic of NICS) {
    const profile = getNicProfile(nic);
    for (const packetBytes of FORWARDING_SIZES_BYTES) {
      ECHO_GBPS_BY_CORES[nic][packetBytes]!.forEach((publishedGbps, index) => {
        const cores = index + 1;
        const model = forwardingThroughput(profile, { packetBytes, cores }).goodputGbps;
        const error = relativeError(model, publishedGbps);
        assert.ok(error <= 0.2, `${nic} ${packetBytes} B ${cores}c off by ${(error * 100).toFixed(1)}%`);
        if (error > 0.1) misses.push(`${nic} ${packetBytes} B ${cores}c`);
      });
    }
  }
  assert.deepEqual(new Set(misses), KNOWN_MISSES);
});

test('the CN2350 256 B residual is reported against both sides of the contradiction', () => {
  const cn2350 = getNicProfile('liquidio-cn2350');
  // Text side: line rate with 10 cores (exact). Digitized side: the curve's 12-core top (8.64 Gbps)
  // is within 10% of the model's line-rate goodput.
  const tenCores = forwardingThroughput(cn2350, { packetBytes: 256, cores: 10 });
  assert.ok(tenCores.lineRateLimited);
  assert.ok(relativeError(tenCores.goodputGbps, 8.64) < 0.1);
});
