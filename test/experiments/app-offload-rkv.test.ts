/**
 * The applications' offload experiment on RKV (src/experiments/app-offload-rkv.ts): leader and
 * follower rows from a three-node cluster, the host-core relations the model implies between the
 * host-only baseline and the offloaded deployment (read from the run, not constants), and the
 * CLI's JSON document, CSV and SVG files.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/errors.ts';
import {
  type AppOffloadResult,
  type AppOffloadRow,
  runAppOffload,
} from '../../src/experiments/app-offload.ts';
import { appFor } from '../../src/experiments/app-offload-apps.ts';
import { rkvOffloadApp, rkvValueBytes } from '../../src/experiments/app-offload-rkv.ts';
import { getNicProfile, hostOf } from '../../src/hw/index.ts';
import { messagingLatencyNs } from '../../src/hw/models/messaging.ts';
import { timingFor } from '../../src/platform/sim/hardware-timing.ts';
import { runIpipe } from '../cli/run-ipipe.ts';

const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 7);
const nic = getNicProfile('liquidio-cn2350');
const timing = timingFor(nic, hostOf(nic));
const SIZE = 256;
/** Small enough for a quick run: a 64 KiB memtable (warmed to 32 KiB), 100 000 keys. */
const SMALL_APP = { keys: 100_000, memtableBytes: 64 * 1024 };

const result = runAppOffload({
  app: rkvOffloadApp(SMALL_APP),
  timing,
  nic: nic.name,
  packetSizes: [SIZE],
  seed: SEED,
  durationNs: 1_500_000,
  warmupNs: 500_000,
  probeNs: 1_000_000,
});

const row = (role: string, placement: string): AppOffloadRow => {
  const found = result.results.find((r) => r.role === role && r.placement === placement);
  assert.ok(found, `no ${role}/${placement} row`);
  return found;
};

test(`RKV rows: leader and follower per placement (seed ${SEED})`, () => {
  assert.deepEqual(
    result.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}/${r.nodes}`),
    [
      'leader/256/host-only/1',
      'follower/256/host-only/2',
      'leader/256/offloaded/1',
      'follower/256/offloaded/2',
    ],
  );
  for (const r of result.results) {
    assert.ok(r.answered > 0 && r.throughputMops > 0, JSON.stringify(r));
    assert.equal(r.refused, 0, JSON.stringify(r));
    assert.ok(
      r.p99LatencyUs !== null && r.avgLatencyUs !== null && r.p99LatencyUs >= r.avgLatencyUs,
      JSON.stringify(r),
    );
  }
  assert.ok(rkvValueBytes(1024) > rkvValueBytes(512) && rkvValueBytes(512) > rkvValueBytes(256));
  assert.equal(result.workload['keys'], SMALL_APP.keys);
});

test(`RKV host cores: the baseline pays every packet's I/O on the host; offloaded, only the host-pinned actors are there (seed ${SEED})`, () => {
  const packetIoNs = messagingLatencyNs('dpdk-recv', SIZE) + messagingLatencyNs('dpdk-send', 64);
  const leader = row('leader', 'host-only');
  const follower = row('follower', 'host-only');
  assert.equal(
    leader.actorsOnHost.split(' ').sort().join(' '),
    'rkv-compaction-0 rkv-consensus-0 rkv-memtable-0 rkv-sstable-0',
  );
  // Every answered operation was a client packet on the leader's host core.
  const opsPerSec = leader.throughputMops * 1e6;
  assert.ok(leader.hostCores >= (opsPerSec * packetIoNs) / 1e9, JSON.stringify(leader));
  // Followers see only the puts' accepts and commits: less host work than the leader.
  assert.ok(follower.hostCores > 0 && follower.hostCores < leader.hostCores, JSON.stringify(follower));

  const offLeader = row('leader', 'offloaded');
  const offFollower = row('follower', 'offloaded');
  for (const name of ['rkv-sstable-0', 'rkv-compaction-0']) {
    assert.ok(offLeader.actorsOnHost.split(' ').includes(name), offLeader.actorsOnHost);
  }
  // At 90% of the host-only capacity the offloaded NIC is far from its own: nothing migrates, so
  // consensus and memtable stay on the NIC and the leader's host does only memtable misses (the
  // SSTable reader; this small memtable misses often) — fewer host cores for the same load, more
  // operations per host core. The followers' hosts get nothing to do.
  assert.equal(offLeader.offeredMops, leader.offeredMops);
  assert.equal(offLeader.actorsOnHost.split(' ').sort().join(' '), 'rkv-compaction-0 rkv-sstable-0');
  assert.equal(offLeader.migrations, 0);
  assert.ok(
    offLeader.hostCores > 0 && offLeader.hostCores < leader.hostCores,
    JSON.stringify([offLeader, leader]),
  );
  assert.ok((offLeader.perCoreMops ?? 0) > (leader.perCoreMops ?? Number.POSITIVE_INFINITY));
  assert.ok(offFollower.hostCores < follower.hostCores, JSON.stringify([offFollower, follower]));
  // And the clients see the NIC's shorter path: lower average latency.
  assert.ok(
    offLeader.avgLatencyUs !== null &&
      leader.avgLatencyUs !== null &&
      offLeader.avgLatencyUs < leader.avgLatencyUs,
    JSON.stringify([offLeader, leader]),
  );
});

test(`RKV is reproducible from the seed: a one-placement run repeats its rows (seed ${SEED})`, () => {
  const again = runAppOffload({
    app: rkvOffloadApp(SMALL_APP),
    timing,
    nic: nic.name,
    packetSizes: [SIZE],
    placements: ['host-only'],
    seed: SEED,
    durationNs: 1_500_000,
    warmupNs: 500_000,
    probeNs: 1_000_000,
  });
  // The host-only capacity is the smaller one, so a host-only run alone is offered the same load
  // and, from the same seed, repeats the host-only rows exactly.
  assert.deepEqual(
    again.results,
    result.results.filter((r) => r.placement === 'host-only'),
  );
});

/** The CLI as a user runs it (stdout must stay the test runner's in this process). */
function ipipe(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  return runIpipe(args, 120_000);
}

test(`ipipe experiment rkv --json: the document, the row shape, JSON, CSV and SVG files (seed ${SEED})`, () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-rkv-'));
  const config = join(out, 'rkv.json');
  writeFileSync(config, JSON.stringify(SMALL_APP));
  const run = ipipe(
    'experiment',
    'rkv',
    '--platform',
    'sim',
    '--nic',
    'liquidio-cn2350',
    '--packet-sizes',
    '512',
    '--duration',
    '1ms',
    '--warmup',
    '0.5ms',
    '--probe-duration',
    '1ms',
    '--app-config',
    config,
    '--seed',
    String(SEED),
    '--out',
    out,
    '--json',
  );
  assert.equal(run.code, 0, run.stderr);
  const document = JSON.parse(run.stdout) as AppOffloadResult;
  assert.equal(document.schemaVersion, 1);
  assert.equal(document.app, 'rkv');
  assert.equal(document.seed, SEED);
  assert.deepEqual(
    document.results.map((r) => `${r.role}/${r.packetSize}/${r.placement}`),
    ['leader/512/host-only', 'follower/512/host-only', 'leader/512/offloaded', 'follower/512/offloaded'],
  );
  const shape: Record<string, string> = {
    role: 'string',
    packetSize: 'number',
    placement: 'string',
    hostCores: 'number',
    nicCores: 'number',
    throughputMops: 'number',
    avgLatencyUs: 'number',
    p99LatencyUs: 'number',
    capacityMops: 'number',
  };
  for (const r of document.results) {
    for (const [key, type] of Object.entries(shape)) {
      assert.equal(
        typeof (r as unknown as Record<string, unknown>)[key],
        type,
        `${key} of ${JSON.stringify(r)}`,
      );
    }
    assert.ok(r.perCoreMops === null || typeof r.perCoreMops === 'number');
  }
  assert.deepEqual(readdirSync(out).sort(), [
    'rkv-liquidio-cn2350-host-cores-follower.svg',
    'rkv-liquidio-cn2350-host-cores-leader.svg',
    'rkv-liquidio-cn2350-p99-latency.svg',
    'rkv-liquidio-cn2350-per-core-follower.svg',
    'rkv-liquidio-cn2350-per-core-leader.svg',
    'rkv-liquidio-cn2350.csv',
    'rkv-liquidio-cn2350.json',
    'rkv.json',
  ]);
  const csv = readFileSync(join(out, 'rkv-liquidio-cn2350.csv'), 'utf8').trim().split('\n');
  assert.equal(csv.length, 5);
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'rkv-liquidio-cn2350.json'), 'utf8')), document);
});

test('ipipe experiment rkv: a bad --app-config names the field and exits 2', () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-rkv-'));
  const config = join(out, 'rkv.json');
  writeFileSync(config, JSON.stringify({ memtableBytes: 64 * 1024 * 1024 }));
  const run = ipipe('experiment', 'rkv', '--nic', 'liquidio-cn2350', '--app-config', config, '--out', out);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /memtableBytes.*4 MiB DMO region/);
});

test('RKV app config: unknown keys, wrong types and out-of-range values are ConfigErrors naming the field', () => {
  const cases: [unknown, RegExp][] = [
    [{ replicas: 5 }, /rkv\.replicas.*unknown option/],
    [{ keys: '10' }, /rkv\.keys.*must be a number/],
    [{ zipfExponent: 0 }, /rkv\.zipfExponent/],
    [{ getFraction: 1.5 }, /rkv\.getFraction/],
    [{ warmMemtable: 'yes' }, /rkv\.warmMemtable/],
    [[1, 2], /must be an object/],
  ];
  for (const [config, message] of cases) {
    assert.throws(
      () => appFor('rkv', config),
      (error: unknown) =>
        error instanceof ConfigError && message.test(`${error.message} ${JSON.stringify(error)}`),
      JSON.stringify(config),
    );
  }
  assert.equal(appFor('rkv', { keys: 10, warmMemtable: false }).workload['keys'], 10);
});
