/**
 * `ipipe experiment rta --platform live`: the same row shape as the simulator's, from live node
 * processes; host-only really runs every actor on the host, and the host cores come from what the
 * nodes measured.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runLiveAppOffload } from '../../src/experiments/app-offload-live.ts';

test('RTA live: one packet size, both placements, rows measured on the nodes', {
  timeout: 120_000,
}, async () => {
  const result = await runLiveAppOffload({
    app: 'rta',
    packetSizes: [256],
    placements: ['host-only', 'offloaded'],
    seed: 5,
    durationMs: 600,
  });
  assert.equal(result.schemaVersion, 1);
  assert.equal(result.workload['platform'], 'live');
  assert.deepEqual(
    result.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}`),
    ['worker/256/host-only', 'worker/256/offloaded'],
  );
  const [hostOnly, offloaded] = result.results;
  assert.ok(hostOnly && offloaded);
  for (const row of result.results) {
    assert.ok(row.answered > 0 && row.throughputMops > 0, `${row.placement} served`);
    assert.ok(
      row.p99LatencyUs !== null &&
        row.avgLatencyUs !== null &&
        row.p99LatencyUs >= row.avgLatencyUs * 0.5 &&
        row.p99LatencyUs > 0,
    );
  }
  // Host-only: every handler ran on host cores, none on NIC cores, and every actor is listed as on the host.
  assert.ok(hostOnly.hostCores > 0, 'host-only kept host cores busy');
  assert.equal(hostOnly.nicCores, 0);
  assert.deepEqual(hostOnly.actorsOnHost.split(' ').sort(), [
    'rta-aggregator',
    'rta-counter-0',
    'rta-counter-1',
    'rta-filter-0',
    'rta-ranker-0',
  ]);
  assert.equal(hostOnly.perCoreMops, hostOnly.throughputMops / hostOnly.hostCores);
});
