/** Spawning the two processes of a split node (`ipipe node --role nic|host`) for the CLI tests. */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { echo } from '../../examples/echo.ts';
import { IpipeClient } from '../../src/platform/live/net/client.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;
export const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

export interface Spawned {
  readonly child: ChildProcess;
  /** The first JSON document on stdout (the banner). */
  readonly banner: Promise<Record<string, unknown>>;
  stderr(): string;
  stdout(): string;
}

export function spawnIpipe(args: readonly string[]): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const banner = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      try {
        resolve(JSON.parse(stdout) as Record<string, unknown>);
      } catch {
        // Not a whole document yet (or not JSON at all: the exit or the test's timeout says so).
      }
    });
    // Bounded, so that a process that never prints JSON fails the test (and is killed) rather than hang it.
    setTimeout(() => reject(new Error(`no JSON banner within 30 s:\n${stdout}\n${stderr}`)), 30_000).unref();
    child.once('exit', (code) =>
      reject(new Error(`ipipe ${args[0]} exited with ${code} before a JSON banner:\n${stdout}\n${stderr}`)),
    );
  });
  banner.catch(() => undefined);
  return { child, banner, stderr: () => stderr, stdout: () => stdout };
}

/** Until a `--role nic` process says it waits for its host (it listens on the channel then); it must not exit first. */
export async function untilNicWaits(nic: Spawned): Promise<void> {
  while (!/waiting for the host domain/.test(nic.stderr())) {
    assert.equal(nic.child.exitCode, null, nic.stderr());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function freeTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function echoOnce(port: number, actor: number): Promise<Uint8Array> {
  const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 5_000 });
  const replies = echo.replies;
  assert.ok(replies);
  try {
    const reply: { data: Uint8Array } = await client.call(actor, echo.messages, replies, {
      type: 'echo',
      data: new Uint8Array([4, 5, 6]),
    });
    return reply.data;
  } finally {
    await client.close();
  }
}
