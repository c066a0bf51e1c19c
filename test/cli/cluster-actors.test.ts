/**
 * `ipipe cluster up rta|dt`, `ipipe load --app rta|dt` and `ipipe cluster down` as a user runs
 * them: separate processes, the cluster's state in its data directory, results checked by load.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freeUdpPort } from '../platform/live/free-port.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;

/** Starts `cluster up …` and resolves with its JSON banner once the cluster serves. */
function clusterUp(args: string[]): Promise<{ child: ChildProcess; banner: { nodes: { pid: number }[] } }> {
  const child = spawn(process.execPath, [BIN, 'cluster', 'up', ...args, '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      try {
        resolve({ child, banner: JSON.parse(stdout) });
      } catch {
        // not the whole document yet
      }
    });
    child.once('exit', (code) => reject(new Error(`cluster up exited ${code}: ${stderr}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

test('cluster up rta → load --app rta (own tuple file) → cluster down', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-cli-rta-'));
  const input = join(dir, 'tweets.ndjson');
  const lines = Array.from({ length: 400 }, (_, i) =>
    JSON.stringify({ timestampMs: 1_000 + 5 * i, hashtags: [`#t${i % 7}`, `#u${i % 3}`] }),
  );
  lines.splice(3, 0, 'not json');
  writeFileSync(input, `${lines.join('\n')}\n`);
  const { child, banner } = await clusterUp([
    'rta',
    '--nodes',
    '1',
    '--base-port',
    String(await freeUdpPort()),
    '--data-dir',
    dir,
  ]);
  try {
    assert.equal(banner.nodes.length, 1);
    const load = spawnSync(
      process.execPath,
      [BIN, 'load', '--app', 'rta', '--data-dir', dir, '--input', input, '--json'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(load.status, 0, load.stderr);
    const result = JSON.parse(load.stdout) as { tuples: number; windows: number; equalsReference: boolean };
    assert.equal(result.tuples, 800, 'two tuples per valid line');
    assert.ok(result.windows > 0);
    assert.equal(result.equalsReference, true);
    assert.match(load.stderr, /1 malformed skipped \(line 4: not valid JSON/);
    const again = spawnSync(process.execPath, [BIN, 'load', '--app', 'rta', '--data-dir', dir], {
      encoding: 'utf8',
    });
    assert.equal(again.status, 2, 'a second stream into closed windows is refused');
    assert.match(again.stderr, /already loaded/);
  } finally {
    const down = spawnSync(process.execPath, [BIN, 'cluster', 'down', '--data-dir', dir], {
      encoding: 'utf8',
    });
    assert.equal(down.status, 0, down.stderr);
  }
  assert.equal(await exited(child), 0, 'the supervisor stopped its nodes and exited cleanly');
});

test('cluster up dt → load --app dt (bank transfers, balance read back) → cluster down', {
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-cli-dt-'));
  const { child } = await clusterUp([
    'dt',
    '--nodes',
    '2',
    '--accounts',
    '40',
    '--base-port',
    String(await freeUdpPort()),
    '--data-dir',
    dir,
  ]);
  try {
    const load = spawnSync(
      process.execPath,
      [
        BIN,
        'load',
        '--app',
        'dt',
        '--data-dir',
        dir,
        '--duration',
        '1s',
        '--closed',
        '2',
        '--seed',
        '3',
        '--json',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(load.status, 0, load.stderr);
    const result = JSON.parse(load.stdout) as {
      committed: number;
      totalBalance: number;
      expectedBalance: number;
      invariantHolds: boolean;
      lockedAccounts: number;
    };
    assert.ok(result.committed > 0, 'transactions committed');
    assert.equal(result.expectedBalance, 40_000);
    assert.equal(result.totalBalance, 40_000);
    assert.equal(result.invariantHolds, true);
    assert.equal(result.lockedAccounts, 0);
    const wrong = spawnSync(process.execPath, [BIN, 'load', '--app', 'rta', '--data-dir', dir], {
      encoding: 'utf8',
    });
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /holds a dt cluster, not rta/);
  } finally {
    spawnSync(process.execPath, [BIN, 'cluster', 'down', '--data-dir', dir], { encoding: 'utf8' });
  }
  assert.equal(await exited(child), 0);
});
