import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCharacterize } from '../../src/experiments/characterize.ts';
import { paperDistribution, runSchedulerComparison } from '../../src/experiments/scheduler-comparison.ts';
import { getNicProfile, hostOf } from '../../src/hw/index.ts';
import { timingFor } from '../../src/platform/sim/hardware-timing.ts';

test('same seed, same scheduler comparison; another seed, another run', () => {
  const nic = getNicProfile('stingray-ps225');
  const options = {
    timing: timingFor(nic, hostOf(nic)),
    distribution: paperDistribution(nic, 'exponential'),
    loads: [0.5, 0.9],
    schedulers: ['fcfs', 'hybrid'] as const,
    durationNs: 20_000_000,
    warmupNs: 2_000_000,
    actors: 4,
    packetBytes: 512,
  };
  const first = runSchedulerComparison({ ...options, seed: 11 });
  const second = runSchedulerComparison({ ...options, seed: 11 });
  const other = runSchedulerComparison({ ...options, seed: 12 });
  assert.deepEqual(second, first);
  assert.notDeepEqual(other.results, first.results);
  for (const point of first.results) {
    assert.ok(
      point.answered > 0 && point.p50Us !== null && point.p99Us !== null && point.p50Us <= point.p99Us,
      JSON.stringify(point),
    );
  }
});

test('same seed, same characterization (and it finds the published core counts)', () => {
  const nic = getNicProfile('stingray-ps225');
  const run = () => runCharacterize({ nic, host: hostOf(nic), seed: 3, pointNs: 200_000 });
  const first = run();
  assert.deepEqual(run(), first);
  assert.deepEqual(first.coresForLineRate, { 64: null, 128: null, 256: 3, 512: 2, 1024: 1, 1500: 1 });
});
