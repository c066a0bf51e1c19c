/**
 * `ipipe run --ingress core` end to end: NIC core 0 owns the node's UDP socket (no --nic-cores:
 * the mode's one core is the default), serves a real client, and SIGTERM exits 0; what the mode
 * does not support is refused at start with what to do, exit 2.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { echo } from '../../examples/echo.ts';
import { IpipeClient } from '../../src/platform/live/net/client.ts';
import { freeUdpPort } from '../platform/live/free-port.ts';
import { runIpipe } from './run-ipipe.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;
const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

interface Banner {
  readonly udp: { readonly port: number };
  readonly ingress: string;
  readonly actors: readonly { readonly id: number; readonly name: string }[];
}

test('ipipe run --ingress core: core 0 owns the socket and serves; SIGTERM exits 0', {
  timeout: 60_000,
}, async () => {
  const child = spawn(
    process.execPath,
    [BIN, 'run', ECHO, '--port', '0', '--host-cores', '1', '--ingress', 'core', '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    const banner = await new Promise<Banner>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        try {
          resolve(JSON.parse(stdout) as Banner);
        } catch {
          // Not a whole document yet.
        }
      });
      child.once('exit', (code) => reject(new Error(`ipipe run exited with ${code}: ${stderr}`)));
    });
    assert.equal(banner.ingress, 'core');
    const actor = banner.actors.find((a) => a.name === 'echo');
    assert.ok(actor, 'the banner lists the echo actor');
    const client = await IpipeClient.connect({ host: '127.0.0.1', port: banner.udp.port, timeoutMs: 5_000 });
    const replies = echo.replies;
    assert.ok(replies);
    try {
      const reply: { data: Uint8Array } = await client.call(actor.id, echo.messages, replies, {
        type: 'echo',
        data: new Uint8Array([1, 2, 3]),
      });
      assert.deepEqual([...reply.data], [1, 2, 3]);
    } finally {
      await client.close();
    }
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

test('--ingress core with several NIC cores is refused at start with what to do, exit 2', async () => {
  const port = await freeUdpPort();
  const run = runIpipe(['run', ECHO, '--port', String(port), '--ingress', 'core', '--nic-cores', '2']);
  assert.equal(run.code, 2, `exit ${run.code}\n${run.stderr}`);
  assert.match(run.stderr, /not supported with ingress 'core'.*use 1 NIC core/);
  assert.doesNotMatch(run.stderr, /\n\s+at /, `a stack trace:\n${run.stderr}`);
});

test('ipipe node --role host --ingress core is refused as a usage error, exit 2', () => {
  const run = runIpipe([
    'node',
    ECHO,
    '--role',
    'host',
    '--channel',
    'tcp://127.0.0.1:1',
    '--ingress',
    'core',
  ]);
  assert.equal(run.code, 2, `exit ${run.code}\n${run.stderr}`);
  assert.match(run.stderr, /--ingress core is for the NIC domain \(--role nic\)/);
  assert.doesNotMatch(run.stderr, /\n\s+at /, `a stack trace:\n${run.stderr}`);
});
