/**
 * `ipipe experiment rkv|dt|rta`: one JSON document with `schemaVersion`, the seed, the NIC
 * profile and `results[]` rows of the documented shape; JSON, CSV and SVG files written; usage
 * errors exit 2 with a message that says what to do.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderAppExperiment, runAppExperiment } from '../../src/cli/commands/experiment-apps.ts';
import { main } from '../../src/cli/main.ts';
import { resolveNic } from '../../src/cli/options.ts';
import type { AppOffloadResult } from '../../src/experiments/app-offload.ts';
import { runIpipe } from './run-ipipe.ts';

function ipipe(...args: string[]) {
  return runIpipe(args, 120_000);
}

/**
 * The same CLI in this process (no tsx start-up per case): `main(argv)` with stderr captured.
 * Only stderr: under `node --test` a test file's stdout carries its results to the runner.
 */
async function ipipeInProcess(...args: string[]) {
  let stderr = '';
  const err = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, stderr };
  } finally {
    process.stderr.write = err;
  }
}

/** Keys every row has, with the type of its value. */
const ROW_SHAPE: Record<string, 'number' | 'string' | 'number|null'> = {
  role: 'string',
  packetSize: 'number',
  placement: 'string',
  hostCores: 'number',
  perCoreMops: 'number|null',
  avgLatencyUs: 'number|null',
  p99LatencyUs: 'number|null',
  throughputMops: 'number',
  offeredMops: 'number',
};

const SMALL_RUN = ['--duration', '1ms', '--warmup', '0.5ms', '--probe-duration', '1ms'];

/** The document the --json run printed (the text test renders it). */
let document: AppOffloadResult | undefined;

test('experiment rta --json: one document with the row shape; JSON, CSV and SVG written', () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-apps-'));
  const run = ipipe(
    'experiment',
    'rta',
    '--platform',
    'sim',
    '--nic',
    'liquidio-cn2360',
    '--packet-sizes',
    '256',
    ...SMALL_RUN,
    '--seed',
    '5',
    '--out',
    out,
    '--json',
  );
  assert.equal(run.code, 0, run.stderr);
  const parsed = JSON.parse(run.stdout) as AppOffloadResult;
  document = parsed;
  assert.equal(document.schemaVersion, 1);
  assert.equal(document.seed, 5);
  assert.equal(document.nic, 'liquidio-cn2360');
  assert.equal(document.app, 'rta');
  assert.deepEqual(
    document.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}`),
    ['worker/256/host-only', 'worker/256/offloaded'],
  );
  for (const row of parsed.results) {
    for (const [key, type] of Object.entries(ROW_SHAPE)) {
      const value = (row as unknown as Record<string, unknown>)[key];
      const ok = type === 'number|null' ? value === null || typeof value === 'number' : typeof value === type;
      assert.ok(ok, `${key} should be ${type}, got ${JSON.stringify(value)}`);
    }
  }
  const files = readdirSync(out).sort();
  assert.deepEqual(files, [
    'rta-liquidio-cn2360-host-cores.svg',
    'rta-liquidio-cn2360-p99-latency.svg',
    'rta-liquidio-cn2360-per-core.svg',
    'rta-liquidio-cn2360.csv',
    'rta-liquidio-cn2360.json',
  ]);
  const csv = readFileSync(join(out, 'rta-liquidio-cn2360.csv'), 'utf8').trim().split('\n');
  assert.equal(csv.length, 3);
  assert.match(csv[0] ?? '', /^app,role,packetSize,placement,nodes,hostCores/);
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'rta-liquidio-cn2360.json'), 'utf8')), document);
  assert.match(readFileSync(join(out, 'rta-liquidio-cn2360-host-cores.svg'), 'utf8'), /^<svg/);
  // The seed goes to stderr too, so a text run can be reproduced.
  assert.match(run.stderr, /seed 5/);
});

test('experiment rta: the text form is a table with both placements', () => {
  assert.ok(document, 'the --json test ran first');
  const text = renderAppExperiment(document);
  assert.match(text, /RTA offload experiment \(simulated\) — liquidio-cn2360/);
  assert.match(text, /worker\s+256\s+host-only/);
  assert.match(text, /worker\s+256\s+offloaded/);
  assert.match(text, /seed 5/);
});

test('experiment dt: coordinator and participant rows, files named after the app and NIC', async () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-apps-'));
  const { result, written } = await runAppExperiment({
    app: 'dt',
    target: resolveNic('liquidio-cn2350'),
    packetSizes: [64],
    placements: ['host-only', 'offloaded'],
    seed: 9,
    durationNs: 1_000_000,
    warmupNs: 500_000,
    probeNs: 1_000_000,
    loadFraction: 0.9,
    outstanding: undefined,
    hostPacketIo: true,
    outDir: out,
    json: true,
  });
  assert.equal(result.app, 'dt');
  assert.equal(result.seed, 9);
  assert.equal(result.method.outstanding, 32);
  assert.deepEqual(
    result.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}`),
    [
      'coordinator/64/host-only',
      'participant/64/host-only',
      'coordinator/64/offloaded',
      'participant/64/offloaded',
    ],
  );
  for (const row of result.results) {
    for (const [key, type] of Object.entries(ROW_SHAPE)) {
      const value = (row as unknown as Record<string, unknown>)[key];
      const ok = type === 'number|null' ? value === null || typeof value === 'number' : typeof value === type;
      assert.ok(ok, `${key} should be ${type}, got ${JSON.stringify(value)}`);
    }
  }
  // Two roles: one host-core and one per-core chart per role, one latency chart.
  assert.deepEqual(readdirSync(out).sort(), [
    'dt-liquidio-cn2350-host-cores-coordinator.svg',
    'dt-liquidio-cn2350-host-cores-participant.svg',
    'dt-liquidio-cn2350-p99-latency.svg',
    'dt-liquidio-cn2350-per-core-coordinator.svg',
    'dt-liquidio-cn2350-per-core-participant.svg',
    'dt-liquidio-cn2350.csv',
    'dt-liquidio-cn2350.json',
  ]);
  assert.equal(written.length, 7);
  assert.deepEqual(
    JSON.parse(readFileSync(join(out, 'dt-liquidio-cn2350.json'), 'utf8')),
    JSON.parse(JSON.stringify(result)),
  );
});

const usageErrors: [string, string[], RegExp][] = [
  [
    'RKV runs live as a cluster, not as a live experiment',
    ['experiment', 'rkv', '--platform', 'live'],
    /cluster up rkv/,
  ],
  [
    'an unknown platform',
    ['experiment', 'rta', '--nic', 'liquidio-cn2350', '--platform', 'fpga'],
    /--platform/,
  ],
  [
    'packet sizes in range',
    ['experiment', 'rta', '--nic', 'liquidio-cn2350', '--packet-sizes', '32'],
    /--packet-sizes/,
  ],
  ['a NIC is required', ['experiment', 'rta'], /--nic/],
  [
    'unknown placement',
    ['experiment', 'rta', '--nic', 'liquidio-cn2350', '--placements', 'nic-only'],
    /--placements/,
  ],
];
for (const [name, args, message] of usageErrors) {
  test(`usage error: ${name} (exit 2)`, async () => {
    const run = await ipipeInProcess(...args);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
  });
}

test('a bad --app-config names the field and exits 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-apps-'));
  const config = join(dir, 'rta.json');
  writeFileSync(config, JSON.stringify({ window: { windowMs: 10, slideMs: 3 } }));
  const run = await ipipeInProcess(
    'experiment',
    'rta',
    '--nic',
    'liquidio-cn2350',
    '--app-config',
    config,
    '--out',
    dir,
  );
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /--app-config: .*windowMs.*whole multiple of slideMs/);
});
