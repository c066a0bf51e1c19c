/**
 * `ipipe load` without --module sends random bytes. An ipipe actor's codec refuses them: the node
 * answers each IPIPE_ERR_CODEC_DECODE and counts it as a `decode` drop — on the NIC or the host
 * domain — never as an execution; and `load` says what it sent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;
const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

interface Stats {
  readonly executed: Record<string, { nic: number; host: number }>;
  readonly drops: Record<string, number>;
}

test('random bytes at an actor with a codec are decode drops, not executions, on both domains', {
  timeout: 60_000,
}, async () => {
  const node = spawn(
    process.execPath,
    [
      BIN,
      'run',
      ECHO,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--nic-cores',
      '1',
      '--host-cores',
      '1',
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  node.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    const banner = await new Promise<{ udp: { port: number }; admin: string }>((resolve, reject) => {
      node.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        try {
          resolve(JSON.parse(stdout) as { udp: { port: number }; admin: string });
        } catch {
          // Not a whole document yet.
        }
      });
      node.once('exit', (code) => reject(new Error(`ipipe run exited with ${code}: ${stderr}`)));
    });
    const target = `127.0.0.1:${banner.udp.port}`;
    const load = () => {
      const run = runIpipe([
        'load',
        '--target',
        target,
        '--closed',
        '2',
        '--duration',
        '300ms',
        '--warmup',
        '0',
        '--seed',
        '5',
        '--json',
      ]);
      assert.equal(run.code, 1, `nothing answered, so exit 1\n${run.stderr}`);
      return JSON.parse(run.stdout) as {
        sent: number;
        errors: Record<string, number>;
        payload: { kind: string; bytes: number };
      };
    };
    const onNic = load();
    assert.deepEqual(onNic.payload, { kind: 'random-bytes', bytes: 64 }, 'load says what it sent');
    // Then on the host domain: the refusal crosses the channel as an error, without a DONE.
    // (The node's scheduler may have pushed echo there already, if this machine's other load made
    // the NIC core's latency pass Mean_thresh: then the move is refused as nothing to do.)
    const moved = await fetch(`${banner.admin}/migrate?actor=echo&to=host`, { method: 'POST' });
    const movedText = await moved.text();
    if (moved.status !== 200) {
      assert.equal(moved.status, 409, movedText);
      assert.match(movedText, /already runs on the host/);
    }
    const onHost = load();
    const refused =
      (onNic.errors['IPIPE_ERR_CODEC_DECODE'] ?? 0) + (onHost.errors['IPIPE_ERR_CODEC_DECODE'] ?? 0);
    assert.ok(refused > 0 && onNic.sent > 0 && onHost.sent > 0);

    const stats = (await (await fetch(`${banner.admin}/stats`)).json()) as Stats;
    const executed = stats.executed['echo'] ?? { nic: 0, host: 0 };
    assert.deepEqual(
      executed,
      { nic: 0, host: 0 },
      `no random payload counts as executed: ${JSON.stringify(stats.executed)}`,
    );
    assert.equal(stats.drops['decode'], refused, JSON.stringify(stats.drops));

    const text = runIpipe([
      'load',
      '--target',
      target,
      '--closed',
      '1',
      '--duration',
      '100ms',
      '--warmup',
      '0',
      '--seed',
      '5',
    ]);
    assert.match(
      text.stdout,
      /payload: 64 random bytes[\s\S]*refuses each as IPIPE_ERR_CODEC_DECODE; --module and --message send real ones/,
    );
  } finally {
    if (node.exitCode === null) {
      const exited = once(node, 'exit');
      node.kill('SIGTERM');
      await exited;
    }
  }
});
