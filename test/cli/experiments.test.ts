import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';

function ipipe(...args: string[]) {
  return runIpipe(args, 120_000);
}

test('experiment scheduler --json: one document, files written, results per scheduler and load', () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-cli-'));
  const run = ipipe(
    'experiment',
    'scheduler',
    '--nic',
    'liquidio-cn2350',
    '--dist',
    'bimodal',
    '--loads',
    '0.3,0.8',
    '--duration',
    '5ms',
    '--warmup',
    '1ms',
    '--seed',
    '4',
    '--out',
    out,
    '--json',
  );
  assert.equal(run.code, 0, run.stderr);
  const document = JSON.parse(run.stdout) as {
    schemaVersion: number;
    seed: number;
    results: { scheduler: string; load: number; p99Us: number }[];
  };
  assert.equal(document.schemaVersion, 1);
  assert.equal(document.seed, 4);
  assert.deepEqual(
    document.results.map((r) => `${r.scheduler}@${r.load}`),
    ['fcfs@0.3', 'fcfs@0.8', 'drr@0.3', 'drr@0.8', 'hybrid@0.3', 'hybrid@0.8'],
  );
  const files = readdirSync(out).sort();
  assert.ok(
    files.some((f) => f.endsWith('.csv')) && files.filter((f) => f.endsWith('.svg')).length === 2,
    files.join(','),
  );
});

const usageErrors: [string, string[], RegExp][] = [
  [
    'unknown profile lists the known ones',
    ['characterize', '--nic', 'bluefield-2'],
    /unknown profile "bluefield-2"; known NIC profiles: liquidio-cn2350, liquidio-cn2360, bluefield-1m332a, stingray-ps225/,
  ],
  [
    'a load of 0',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--loads', '0,0.5'],
    /--loads must be a number in \(0, 1\]/,
  ],
  [
    'a load above 1',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--loads', '1.5'],
    /--loads must be a number in \(0, 1\]/,
  ],
  [
    'a negative duration',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--duration=-5ms'],
    /--duration must be a positive duration/,
  ],
  [
    'a duration without a unit',
    ['characterize', '--nic', 'stingray-ps225', '--point-duration', '100'],
    /--point-duration must be a positive duration/,
  ],
  [
    'an impossible actor count',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--actors', '0'],
    /--actors must be an integer in \[1, 64\]/,
  ],
  [
    'an unknown scheduler',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--schedulers', 'fifo'],
    /--schedulers must be one of fcfs, drr, hybrid/,
  ],
  [
    'a load written in hex (Number() would read 0x1 as 1)',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--loads', '0x1'],
    /--loads must be a number in \(0, 1\], got "0x1"/,
  ],
  [
    'a host profile given as --nic says it is a host, not that it is unknown',
    ['characterize', '--nic', 'xeon-e5-2620v4'],
    /"xeon-e5-2620v4" is a host profile; --nic needs a NIC profile: liquidio-cn2350, liquidio-cn2360, bluefield-1m332a, stingray-ps225/,
  ],
  [
    "characterize's --duration (the other experiments' word) points at --point-duration",
    ['characterize', '--nic', 'stingray-ps225', '--duration', '5ms'],
    /characterize has no --duration: its simulated time is set per measured point with --point-duration .*e\.g\. --point-duration 5ms/,
  ],
  [
    'a simulator-only option on a live app experiment (it would be silently dropped)',
    ['experiment', 'rta', '--platform', 'live', '--nic', 'stingray-ps225', '--warmup', '1ms'],
    /--nic, --warmup do not apply to --platform live: they set up the simulated run/,
  ],
  [
    'a bimodal share with the exponential distribution (it would be silently dropped)',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--bimodal-share', '0.3'],
    /--bimodal-share does not apply to --dist exponential: .*add --dist bimodal/,
  ],
  [
    'an unknown distribution',
    ['experiment', 'scheduler', '--nic', 'stingray-ps225', '--dist', 'pareto'],
    /Allowed choices are exponential, bimodal/,
  ],
];

for (const [name, args, pattern] of usageErrors) {
  test(`usage error (exit 2): ${name}`, () => {
    const run = ipipe(...args);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, pattern);
    assert.equal(run.stdout, '');
  });
}

test('a user profile file: a bad field is named, a good one is used', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-profile-'));
  const bad = join(dir, 'bad.json');
  writeFileSync(
    bad,
    JSON.stringify({ extends: 'stingray-ps225', name: 'my-card', cores: { count: 'eight' } }),
  );
  const refused = ipipe('characterize', '--nic', bad);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /cores\.count/);
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{ "extends": ');
  const unreadable = ipipe('characterize', '--nic', broken);
  assert.equal(unreadable.code, 2);
  assert.match(unreadable.stderr, /broken\.json/);
});

test('a user NIC profile naming a host that is not built in: the field and the known hosts are named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-profile-'));
  const file = join(dir, 'my-card.json');
  writeFileSync(file, JSON.stringify({ extends: 'bluefield-1m332a', name: 'my-card', host: 'my-server' }));
  const run = ipipe('characterize', '--nic', file);
  assert.equal(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /json: host: unknown host profile "my-server"; known host profiles: xeon-e5-2680v3, xeon-e5-2620v4/,
  );
  assert.doesNotMatch(run.stderr, /loadProfileFile/);
});

/** A scheduler experiment whose points are too short to complete a request. */
const TOO_SHORT_SCHEDULER = [
  'experiment',
  'scheduler',
  '--nic',
  'liquidio-cn2350',
  '--duration',
  '1ns',
  '--seed',
  '1',
];

test('experiment scheduler with a duration too short to complete a request: the report still comes out', () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-cli-'));
  const run = ipipe(...TOO_SHORT_SCHEDULER, '--loads', '0.1', '--out', out, '--json');
  assert.equal(run.code, 0, run.stderr);
  const document = JSON.parse(run.stdout) as {
    results: { answered: number; meanUs: number | null; p50Us: number | null; p99Us: number | null }[];
  };
  assert.ok(document.results.length > 0);
  // No request completed: no latency, null — not a 0 µs that reads as an instant answer.
  for (const point of document.results) {
    assert.equal(point.answered, 0);
    assert.deepEqual([point.meanUs, point.p50Us, point.p99Us], [null, null, null], JSON.stringify(point));
  }
  assert.match(
    run.stderr,
    /chart p99 not written: every point completed no request \(no latency\); use a longer --duration/,
  );
});

test('experiment scheduler, text: a point that completed no request reads "no data", not a 0 µs latency', () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-cli-'));
  const run = ipipe(...TOO_SHORT_SCHEDULER, '--loads', '0.1,0.5', '--out', out);
  assert.equal(run.code, 0, run.stderr);
  const rows = run.stdout.split('\n').filter((line) => /^0\.[15]0\s/.test(line));
  assert.equal(rows.length, 2, run.stdout);
  for (const row of rows) {
    // fcfs, drr and hybrid: p50 and p99 each.
    assert.equal(row.match(/no data/g)?.length, 6, row);
    assert.doesNotMatch(row, /\s0(\s|$)/, row);
  }
  assert.match(
    run.stderr,
    /6 of 6 point\(s\) completed no request in the measured 0\.000001 ms: their latencies read "no data".*use a longer --duration/,
  );
});

test('help shows defaults as the user would type them, not in nanoseconds', () => {
  const characterize = ipipe('characterize', '--help');
  assert.match(characterize.stdout, /\(default: 1ms\)/);
  const rkv = ipipe('experiment', 'rkv', '--help').stdout.replace(/\s+/g, ' ');
  assert.match(rkv, /\(default: 64,256,512,1024\)/);
  assert.match(rkv, /\(default: 5ms\)/);
  assert.match(rkv, /\(default: 10ms\)/);
  const run = ipipe('run', '--help').stdout.replace(/\s+/g, ' ');
  assert.match(run, /\(default: 1s\)/);
  assert.doesNotMatch(`${characterize.stdout}${rkv}${run}`, /default: \d{6,}|default: \{\}/);
});
