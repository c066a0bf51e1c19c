/**
 * writeExperimentOutputs writes `<name>.json`, `<name>.csv` and `<name>-<chart>.svg` into the
 * directory (creating it), returns their paths, and refuses — writing nothing at all — any name
 * that could reach outside the directory or clash on a case-insensitive file system.
 * safeFileStem always yields a name that is accepted.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { isIpipeError } from '../../src/errors.ts';
import { htmlReport, lineChart, safeFileStem, writeExperimentOutputs } from '../../src/report/index.ts';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ipipe-report-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

let dirCounter = 0;
/** A fresh, not yet existing directory under the scratch root. */
function freshDir(): string {
  dirCounter++;
  return path.join(scratch, `run-${dirCounter}`, 'nested');
}

const svg = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>';

async function expectRefused(action: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.ok(
      isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID'),
      `expected a ConfigError, got ${String(error)}`,
    );
    assert.match(error.message, pattern);
    return true;
  });
}

describe('writeExperimentOutputs', () => {
  it('writes json, csv and one svg per chart, creating the directory, and returns the paths', async () => {
    const dir = freshDir();
    const written = await writeExperimentOutputs(dir, 'host-core-savings', {
      json: { schemaVersion: 1, totalNs: 12345678901234567890n, points: [{ cores: 2 }] },
      csvRows: [
        { packetSizeBytes: 64, hostCores: 3.5, note: 'a, "quoted" note' },
        { packetSizeBytes: 1500, hostCores: 1, note: null },
      ],
      charts: { cores: svg, 'latency.p99': svg },
    });
    const expected = {
      json: path.join(path.resolve(dir), 'host-core-savings.json'),
      csv: path.join(path.resolve(dir), 'host-core-savings.csv'),
      cores: path.join(path.resolve(dir), 'host-core-savings-cores.svg'),
      latency: path.join(path.resolve(dir), 'host-core-savings-latency.p99.svg'),
    };
    assert.equal(written.dir, path.resolve(dir));
    assert.equal(written.json, expected.json);
    assert.equal(written.csv, expected.csv);
    assert.deepEqual(written.charts, { cores: expected.cores, 'latency.p99': expected.latency });
    assert.deepEqual(written.all, [expected.json, expected.csv, expected.cores, expected.latency]);
    assert.deepEqual(fs.readdirSync(dir).sort(), [
      'host-core-savings-cores.svg',
      'host-core-savings-latency.p99.svg',
      'host-core-savings.csv',
      'host-core-savings.json',
    ]);
    assert.deepEqual(JSON.parse(fs.readFileSync(expected.json, 'utf8')), {
      schemaVersion: 1,
      totalNs: '12345678901234567890',
      points: [{ cores: 2 }],
    });
    assert.equal(
      fs.readFileSync(expected.csv, 'utf8'),
      'packetSizeBytes,hostCores,note\r\n64,3.5,"a, ""quoted"" note"\r\n1500,1,\r\n',
    );
    assert.equal(fs.readFileSync(expected.cores, 'utf8'), svg);
  });

  it('refuses an output directory that is a file, or lies under one, naming the file', async () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(path.resolve(dir), 'afile');
    fs.writeFileSync(file, 'not a directory');
    // The scratch path may hold regex metacharacters: match it literally.
    const isAFile = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is a file, not a directory`);
    await expectRefused(() => writeExperimentOutputs(file, 'x', { json: {} }), isAFile);
    await expectRefused(() => writeExperimentOutputs(path.join(file, 'sub'), 'x', { json: {} }), isAFile);
    assert.equal(fs.readFileSync(file, 'utf8'), 'not a directory');
  });

  it('writes only the parts given, and overwrites a previous run', async () => {
    const dir = freshDir();
    await writeExperimentOutputs(dir, 'run', { json: { a: 1 } });
    const written = await writeExperimentOutputs(dir, 'run', { json: { a: 2 } });
    assert.deepEqual(written.all, [path.join(path.resolve(dir), 'run.json')]);
    assert.deepEqual(written.charts, {});
    assert.equal(written.csv, undefined);
    assert.deepEqual(fs.readdirSync(dir), ['run.json'], 'no temporary file is left behind');
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')), { a: 2 });
  });

  it('refuses names that could leave the directory, and writes nothing', async () => {
    const badNames = [
      '../escape',
      '..',
      '.',
      '',
      'a/b',
      'a\\b',
      '/etc/passwd',
      '.hidden',
      '-flag',
      'a..b',
      'x'.repeat(101),
      'nul\0byte',
      'tab\tname',
    ];
    for (const name of badNames) {
      const dir = freshDir();
      await expectRefused(
        () => writeExperimentOutputs(dir, name, { json: {} }),
        /^name: .*not a plain file name/,
      );
      assert.ok(!fs.existsSync(dir), `nothing written for ${JSON.stringify(name)}`);
    }
    for (const chart of ['../../evil', 'sub/chart', '..']) {
      const dir = freshDir();
      await expectRefused(
        () => writeExperimentOutputs(dir, 'ok', { json: {}, charts: { fine: svg, [chart]: svg } }),
        /^charts\..*not a plain file name/,
      );
      assert.ok(!fs.existsSync(dir), `nothing written for chart ${JSON.stringify(chart)}`);
    }
    assert.ok(!fs.existsSync(path.join(scratch, 'escape.json')));
  });

  it('refuses chart names that differ only in case', async () => {
    const dir = freshDir();
    await expectRefused(
      () => writeExperimentOutputs(dir, 'run', { charts: { latency: svg, Latency: svg } }),
      /only in case/,
    );
    assert.ok(!fs.existsSync(dir));
  });

  it('refuses a result document that is not JSON, before writing anything', async () => {
    const dir = freshDir();
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    await expectRefused(
      () => writeExperimentOutputs(dir, 'run', { json: cyclic, charts: { a: svg } }),
      /^json: /,
    );
    await expectRefused(() => writeExperimentOutputs(dir, 'run', { json: () => 1 }), /^json: /);
    assert.ok(!fs.existsSync(dir));
  });

  it('writes a chart, its data and an HTML report end to end', async () => {
    const dir = freshDir();
    const rows = [
      { cores: 1, gbps: 3 },
      { cores: 2, gbps: 6 },
    ];
    const chart = await lineChart({
      title: 'Throughput',
      x: { field: 'cores', title: 'Cores', unit: 'cores' },
      y: { field: 'gbps', title: 'Throughput', unit: 'Gbps' },
      rows,
    });
    const written = await writeExperimentOutputs(dir, 'echo', {
      json: { rows },
      csvRows: rows,
      charts: { throughput: chart },
    });
    const report = htmlReport({
      title: 'Echo',
      sections: [
        {
          heading: 'Throughput',
          svg: fs.readFileSync(written.charts['throughput'] ?? '', 'utf8'),
          table: { rows },
        },
      ],
    });
    assert.ok(report.includes('>Throughput (Gbps)</text>'));
    assert.equal(fs.readFileSync(written.csv ?? '', 'utf8'), 'cores,gbps\r\n1,3\r\n2,6\r\n');
  });
});

describe('safeFileStem', () => {
  it('turns a title into a readable stem', () => {
    assert.equal(safeFileStem('Latency vs load (p99, µs)'), 'latency-vs-load-p99-s');
    assert.equal(safeFileStem('../../etc/passwd'), 'etc-passwd');
    assert.equal(safeFileStem('   '), 'output');
    assert.equal(safeFileStem('', 'chart'), 'chart');
  });

  it('always yields a name writeExperimentOutputs accepts', async () => {
    const dir = freshDir();
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (title) => {
        const stem = safeFileStem(title);
        const written = await writeExperimentOutputs(dir, stem, { charts: { c: svg } });
        assert.equal(path.dirname(written.charts['c'] ?? ''), path.resolve(dir));
      }),
      { numRuns: 100 },
    );
  });
});
