/**
 * `npm run ipipe -- run …` (and `npm start`) stopped by SIGTERM sent to npm alone, as a supervisor
 * does: npm hands the signal to its script's shell; without `exec` in the script the shell died and
 * left the node running, orphaned, and npm exited 143. With `exec`, the node gets the signal,
 * drains, and its own exit code (0) is npm's.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';

const ROOT = new URL('../..', import.meta.url).pathname;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('SIGTERM to `npm run ipipe -- run` reaches the node: it drains, exits 0, and npm exits 0', {
  timeout: 60_000,
}, async (t) => {
  const npm = spawn(
    'npm',
    [
      'run',
      '--silent',
      'ipipe',
      '--',
      'run',
      'examples/echo.ts',
      '--port',
      '0',
      '--nic-cores',
      '1',
      '--host-cores',
      '1',
      '--json',
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const spawned = await Promise.race([
    once(npm, 'spawn').then(() => true),
    once(npm, 'error').then(() => false),
  ]);
  if (!spawned) {
    t.skip('npm is not on PATH here');
    return;
  }
  let stdout = '';
  let stderr = '';
  npm.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let nodePid: number | undefined;
  try {
    const banner = await new Promise<{ pid: number }>((resolve, reject) => {
      npm.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        try {
          resolve(JSON.parse(stdout) as { pid: number });
        } catch {
          // Not a whole document yet.
        }
      });
      npm.once('exit', (code) => reject(new Error(`npm exited with ${code}: ${stderr}`)));
    });
    nodePid = banner.pid;
    const exited = once(npm, 'exit');
    npm.kill('SIGTERM');
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    assert.equal(signal, null, stderr);
    assert.equal(code, 0, `npm's exit code is the node's${stderr}`);
    assert.match(stderr, /SIGTERM: stopping intake, draining/);
    assert.equal(alive(nodePid), false, 'no node left running');
  } finally {
    if (npm.exitCode === null) npm.kill('SIGKILL');
    if (nodePid !== undefined && alive(nodePid)) process.kill(nodePid, 'SIGKILL');
  }
});
