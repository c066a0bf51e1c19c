/**
 * The experiment commands print their report before they write files, and a point that measured
 * nothing (a tiny --duration) is left out of the charts with a note instead of drawing an empty
 * chart (src/cli/report-files.ts): a bad --out or a short run loses nothing on stdout.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';

const SHORT_RKV = [
  'experiment',
  'rkv',
  '--nic',
  'liquidio-cn2350',
  '--packet-sizes',
  '256',
  '--duration',
  '1ns',
  '--warmup',
  '1ms',
  '--probe-duration',
  '2ms',
  '--seed',
  '1',
];

test('experiment rkv with a --duration too short to answer anything: report, note, every file with data', () => {
  const out = mkdtempSync(join(tmpdir(), 'ipipe-short-'));
  try {
    const run = runIpipe([...SHORT_RKV, '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /RKV offload experiment[\s\S]*leader[\s\S]*\nWrote /,
      'the table, then where the files went',
    );
    assert.doesNotMatch(run.stderr, /Infinite extent|IPIPE_CHART_WARNING/, 'no chart drawn from no data');
    assert.match(run.stderr, /4 of 4 point\(s\) answered no request .*use a longer --duration/);
    // Latencies of no request are no data, not a measured 0 µs.
    const leaders = run.stdout.split('\n').filter((line) => /^leader\s/.test(line));
    assert.equal(leaders.length, 2, run.stdout);
    for (const line of leaders) assert.match(line, /no data\s+no data\s+\d+$/, line);
    assert.match(run.stderr, /latencies read "no data"/);
    const files = readdirSync(out).sort();
    assert.deepEqual(
      files.filter((f) => !f.endsWith('.svg')),
      ['rkv-liquidio-cn2350.csv', 'rkv-liquidio-cn2350.json'],
    );
    // No latency chart of 0 µs bars: no point has a latency to draw.
    assert.ok(!files.some((f) => f.includes('p99-latency')), `no empty latency chart: ${files.join(', ')}`);
    assert.ok(!files.some((f) => f.includes('per-core')), `no empty per-core chart: ${files.join(', ')}`);
    assert.match(run.stderr, /chart p99-latency not written: every point measured nothing/);
    // In the JSON and CSV too: no latency is null (an empty cell), not 0.
    const document = JSON.parse(readFileSync(join(out, 'rkv-liquidio-cn2350.json'), 'utf8')) as {
      results: { answered: number; avgLatencyUs: number | null; p99LatencyUs: number | null }[];
    };
    const silent = document.results.filter((r) => r.answered === 0);
    assert.equal(silent.length, 4, JSON.stringify(document.results));
    for (const row of silent) assert.deepEqual([row.avgLatencyUs, row.p99LatencyUs], [null, null]);
    const [header, ...rows] = readFileSync(join(out, 'rkv-liquidio-cn2350.csv'), 'utf8').trim().split('\n');
    const column = (header ?? '').split(',').indexOf('p99LatencyUs');
    assert.ok(column >= 0, header);
    for (const row of rows) assert.equal(row.split(',')[column], '', row);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('an --out that cannot be written still leaves the report on stdout (characterize; the experiments share its code)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-outfile-'));
  try {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    const characterize = runIpipe([
      'characterize',
      '--nic',
      'liquidio-cn2350',
      '--point-duration',
      '200us',
      '--seed',
      '1',
      '--out',
      file,
    ]);
    assert.equal(characterize.code, 2, characterize.stderr);
    assert.match(characterize.stdout, /SmartNIC characterization \(simulated\)[\s\S]*Cores for line rate/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
