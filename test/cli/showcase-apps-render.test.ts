/**
 * The showcase's Part 2 table (renderApps): under it, for each row whose offloaded run migrated
 * actors, where those actors ended — "moved 4" beside few host cores must not read as "the work
 * stayed on the NIC" when every actor went to the host.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderApps } from '../../src/cli/commands/showcase.ts';
import type { AppOffloadRow, OffloadAppName, OffloadPlacement } from '../../src/experiments/app-offload.ts';
import type { AppsShowcaseResult } from '../../src/experiments/apps-showcase.ts';

function row(
  app: OffloadAppName,
  role: string,
  placement: OffloadPlacement,
  migrations: number,
  actorsOnHost: string,
): AppOffloadRow {
  return {
    app,
    role,
    packetSize: 512,
    placement,
    nodes: 1,
    hostCores: placement === 'host-only' ? 10 : 3,
    nicCores: 8,
    offeredMops: 2,
    throughputMops: 2,
    perCoreMops: 0.2,
    avgLatencyUs: 10,
    p99LatencyUs: 20,
    capacityMops: 2.2,
    answered: 20_000,
    refused: 0,
    migrations,
    actorsOnHost,
  };
}

test('rows whose offloaded run migrated say which actors ended on the host; the others say nothing', () => {
  const result: AppsShowcaseResult = {
    nic: 'test NIC',
    seed: 1,
    packetSize: 512,
    rows: [
      {
        app: 'dt',
        role: 'coordinator',
        packetSize: 512,
        offeredMops: 0.05,
        hostOnly: row('dt', 'coordinator', 'host-only', 0, 'dt-coordinator dt-logger'),
        offloaded: row('dt', 'coordinator', 'offloaded', 0, 'dt-logger'),
      },
      {
        app: 'rta',
        role: 'worker',
        packetSize: 512,
        offeredMops: 2,
        hostOnly: row('rta', 'worker', 'host-only', 0, 'rta-filter-0 rta-counter-0'),
        offloaded: row('rta', 'worker', 'offloaded', 4, 'rta-filter-0 rta-counter-0'),
      },
    ],
  };
  const lines = renderApps(result).split('\n');
  const notes = lines.filter((line) => line.includes('on the host at the end'));
  assert.deepEqual(notes, ['  rta worker offloaded — on the host at the end: filter-0, counter-0']);
});

test('a row that moved actors but ended with none on the host says so', () => {
  const result: AppsShowcaseResult = {
    nic: 'test NIC',
    seed: 1,
    packetSize: 512,
    rows: [
      {
        app: 'rta',
        role: 'worker',
        packetSize: 512,
        offeredMops: 2,
        hostOnly: row('rta', 'worker', 'host-only', 0, 'rta-filter-0'),
        offloaded: row('rta', 'worker', 'offloaded', 2, ''),
      },
    ],
  };
  assert.ok(renderApps(result).includes('  rta worker offloaded — on the host at the end: none'));
});
