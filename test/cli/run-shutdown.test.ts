/**
 * `ipipe run` end to end (issue 4 §1, graceful shutdown): a node started from the CLI serves a
 * real client; SIGINT stops intake, drains, stops the cores and exits 130; SIGTERM exits 0.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { echo } from '../../examples/echo.ts';
import { IpipeClient } from '../../src/platform/live/net/client.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;
const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

interface Banner {
  readonly udp: { readonly port: number };
  readonly actors: readonly { readonly id: number; readonly name: string; readonly domain: string }[];
}

async function startNode(): Promise<{ child: ChildProcess; banner: Banner; stderr: () => string }> {
  const child = spawn(
    process.execPath,
    [BIN, 'run', ECHO, '--port', '0', '--nic-cores', '1', '--host-cores', '1', '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
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
  return { child, banner, stderr: () => stderr };
}

async function echoOnce(port: number, actor: number): Promise<Uint8Array> {
  const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 5_000 });
  const replies = echo.replies;
  assert.ok(replies);
  try {
    const reply: { data: Uint8Array } = await client.call(actor, echo.messages, replies, {
      type: 'echo',
      data: new Uint8Array([1, 2, 3]),
    });
    return reply.data;
  } finally {
    await client.close();
  }
}

for (const [signal, expected] of [
  ['SIGINT', 130],
  ['SIGTERM', 0],
] as const) {
  test(`ipipe run serves, then ${signal} drains and exits ${expected}`, { timeout: 60_000 }, async () => {
    const { child, banner, stderr } = await startNode();
    try {
      const actor = banner.actors.find((a) => a.name === 'echo');
      assert.ok(actor, 'the banner lists the echo actor');
      assert.equal(actor.domain, 'nic');
      assert.deepEqual([...(await echoOnce(banner.udp.port, actor.id))], [1, 2, 3]);
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      assert.equal(code, expected, stderr());
      assert.match(stderr(), new RegExp(`${signal}: stopping intake, draining`));
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
}
