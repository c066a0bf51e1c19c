import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIG5_LATENCY_US } from '../../src/hw/data/published.ts';
import { getNicProfile } from '../../src/hw/load-profile.ts';
import {
  dispatcherCapacityPacketsPerSec,
  dispatcherCores,
  dispatcherPerPacketNs,
} from '../../src/hw/models/dispatcher.ts';
import { echoPathLatency } from '../../src/hw/models/echo-path.ts';
import { forwardingThroughput, headroomNs } from '../../src/hw/models/forwarding.ts';
import { linePacketsPerSec } from '../../src/hw/models/link.ts';
import { switchTraversalNs, TOR_SWITCH } from '../../src/hw/models/switch.ts';
import { thresholdsFor } from '../../src/hw/models/thresholds.ts';
import {
  BLUEFIELD_1M332A,
  LIQUIDIO_CN2350,
  LIQUIDIO_CN2360,
  NIC_PROFILE_NAMES,
  STINGRAY_PS225,
} from '../../src/hw/profiles.ts';

test('CN2350 thresholds are Fig 5 at 1500 B with 12 cores (the 6/12 columns read as the text says)', () => {
  const thresholds = thresholdsFor(LIQUIDIO_CN2350);
  assert.equal(thresholds.provenance, 'published');
  assert.equal(thresholds.packetBytes, 1500);
  const point = FIG5_LATENCY_US[1500]!;
  // Text: 6 → 12 cores *adds* latency, so the 12-core figures are the larger column.
  assert.equal(thresholds.meanThreshNs, Math.max(point.avg6CoresUs, point.avg12CoresUs) * 1000);
  assert.equal(thresholds.tailThreshNs, Math.max(point.p996CoresUs, point.p9912CoresUs) * 1000);
});

test('other NICs get derived thresholds: tail above mean, faster links queue for less time', () => {
  for (const name of NIC_PROFILE_NAMES) {
    const thresholds = thresholdsFor(getNicProfile(name));
    assert.ok(thresholds.tailThreshNs > thresholds.meanThreshNs, name);
    assert.ok(thresholds.meanThreshNs > echoPathLatency(getNicProfile(name), 1500).totalNs, name);
    if (name !== 'liquidio-cn2350') assert.equal(thresholds.provenance, 'derived');
  }
  assert.ok(thresholdsFor(STINGRAY_PS225).meanThreshNs < thresholdsFor(LIQUIDIO_CN2350).meanThreshNs);
  assert.ok(thresholdsFor(LIQUIDIO_CN2360).meanThreshNs < thresholdsFor(LIQUIDIO_CN2350).meanThreshNs);
  // The derivation reproduces the reference itself when applied to it.
  const reference = thresholdsFor({ ...LIQUIDIO_CN2350, forwardingLatency: null });
  assert.ok(Math.abs(reference.meanThreshNs - 41_300) < 1e-6);
  assert.ok(Math.abs(reference.tailThreshNs - 77_600) < 1e-6);
});

test('the unloaded echo path: two serializations, the Fig 6 pipelines and the core compute', () => {
  const path = echoPathLatency(LIQUIDIO_CN2350, 1500);
  assert.ok(Math.abs(path.rxSerializationNs - 1216) < 1e-9);
  assert.equal(path.rxPipelineNs, 150);
  assert.equal(path.txPipelineNs, 320);
  assert.ok(Math.abs(path.totalNs - (2 * 1216 + 150 + 320 + path.computeNs)) < 1e-9);
  assert.ok(
    path.totalNs < (FIG5_LATENCY_US[1500]!.avg12CoresUs * 1000) / 5,
    'Fig 5 is mostly testbed and queueing',
  );
  assert.ok(echoPathLatency(LIQUIDIO_CN2350, 64, 2000).computeNs > 2000);
  // ARM NICs borrow the slower DPDK path.
  assert.ok(
    echoPathLatency(STINGRAY_PS225, 64).rxPipelineNs > echoPathLatency(LIQUIDIO_CN2350, 64).rxPipelineNs,
  );
});

test('off-path NICs set aside a dispatcher core; the Stingray echo figures did not (Fig 4)', () => {
  assert.equal(dispatcherCores(LIQUIDIO_CN2350), 0);
  assert.equal(dispatcherPerPacketNs(LIQUIDIO_CN2350, 256), 0);
  assert.equal(dispatcherCores(STINGRAY_PS225), 1);
  // Fig 4: 16.7 Gbps wire at +1 µs needs ≥ 7.5 Mpps, more than 7 workers at ≥ 1 µs each can give.
  const needed = (16.7e9 / ((256 + 20) * 8)) * 0.98;
  assert.ok(7 / 1e-6 < needed);
  assert.ok(
    forwardingThroughput(STINGRAY_PS225, { packetBytes: 256, addedNs: 1000 }).packetsPerSec >= needed,
  );
  // The dispatcher keeps up with line rate at 512 B and up on the Stingray, not at 256 B.
  assert.ok(
    dispatcherCapacityPacketsPerSec(STINGRAY_PS225, 512) >= linePacketsPerSec(STINGRAY_PS225.link, 512),
  );
  assert.ok(
    dispatcherCapacityPacketsPerSec(STINGRAY_PS225, 256) < linePacketsPerSec(STINGRAY_PS225.link, 256),
  );
  assert.ok(dispatcherPerPacketNs(BLUEFIELD_1M332A, 512) > dispatcherPerPacketNs(STINGRAY_PS225, 512));
  // With the dispatcher's core taken, the workers' headroom shrinks.
  assert.ok(headroomNs(STINGRAY_PS225, 1024, { cores: 7 }) < headroomNs(STINGRAY_PS225, 1024));
});

test('the ToR switch is an assumed 500 ns cut-through hop plus one egress serialization', () => {
  assert.equal(TOR_SWITCH.portToPortNs, 500);
  assert.ok(Math.abs(switchTraversalNs({ linkGbps: 10 }, 1500) - (500 + 1216)) < 1e-9);
  assert.ok(
    switchTraversalNs({ linkGbps: 10 }, 1500, { portToPortNs: 500, cutThrough: false }) >
      switchTraversalNs({ linkGbps: 10 }, 1500),
  );
});
