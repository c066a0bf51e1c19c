/**
 * `ipipe node --role nic|host` end to end: the split node honours --json and --metrics-port as
 * `ipipe run` does (the NIC process serves /metrics and /stats), and refuses the options that
 * belong to the other role instead of ignoring them.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { echo } from '../../examples/echo.ts';
import { IpipeClient } from '../../src/platform/live/net/client.ts';
import { runIpipe } from './run-ipipe.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;
const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

interface Spawned {
  readonly child: ChildProcess;
  /** The first JSON document on stdout (the banner). */
  readonly banner: Promise<Record<string, unknown>>;
  stderr(): string;
  stdout(): string;
}

function spawnIpipe(args: readonly string[]): Spawned {
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

async function freeTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function echoOnce(port: number, actor: number): Promise<Uint8Array> {
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

test('a split node prints JSON banners and its NIC process serves /stats and /metrics', {
  timeout: 60_000,
}, async () => {
  const channel = `tcp://127.0.0.1:${await freeTcpPort()}`;
  const common = ['--channel', channel, '--json'];
  const nic = spawnIpipe([
    'node',
    ECHO,
    '--role',
    'nic',
    ...common,
    '--port',
    '0',
    '--metrics-port',
    '0',
    '--nic-cores',
    '1',
  ]);
  let host: Spawned | undefined;
  try {
    // The NIC process listens before it prints; wait for that line, then start the host.
    while (!/waiting for the host domain/.test(nic.stderr())) {
      assert.equal(nic.child.exitCode, null, nic.stderr());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    host = spawnIpipe(['node', ECHO, '--role', 'host', ...common, '--host-cores', '1']);
    const [nicBanner, hostBanner] = await Promise.all([nic.banner, host.banner]);
    assert.equal(nicBanner['role'], 'nic');
    assert.equal(hostBanner['role'], 'host');
    assert.equal(hostBanner['channel'], channel);
    const admin = nicBanner['admin'];
    assert.equal(typeof admin, 'string', `the NIC banner names its admin endpoint: ${nic.stdout()}`);
    const udp = nicBanner['udp'] as { port: number };
    const actors = nicBanner['actors'] as { id: number; name: string }[];
    const actor = actors.find((a) => a.name === 'echo');
    assert.ok(actor, 'the NIC banner lists the echo actor');
    assert.deepEqual([...(await echoOnce(udp.port, actor.id))], [4, 5, 6]);

    const stats = (await (await fetch(`${admin}/stats`)).json()) as { requests: number; replies: number };
    assert.ok(stats.requests >= 1 && stats.replies >= 1, JSON.stringify(stats));
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    assert.match(metrics, /ipipe_replies_total\{kind="reply"\} [1-9]/);

    const nicExit = once(nic.child, 'exit');
    const hostExit = once(host.child, 'exit');
    nic.child.kill('SIGTERM');
    host.child.kill('SIGTERM');
    assert.equal(((await nicExit) as [number | null])[0], 0, nic.stderr());
    assert.equal(((await hostExit) as [number | null])[0], 0, host.stderr());
  } finally {
    if (nic.child.exitCode === null) nic.child.kill('SIGKILL');
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
  }
});

test('options of the other role are refused, not ignored (exit 2, naming them)', () => {
  const host = runIpipe([
    'node',
    ECHO,
    '--role',
    'host',
    '--channel',
    'tcp://127.0.0.1:1',
    '--metrics-port',
    '9464',
    '--port',
    '9001',
  ]);
  assert.equal(host.code, 2, host.stderr);
  assert.match(host.stderr, /--port, --metrics-port belong to the --role nic process/);
  const nic = runIpipe([
    'node',
    ECHO,
    '--role',
    'nic',
    '--channel',
    'tcp://127.0.0.1:1',
    '--host-cores',
    '4',
  ]);
  assert.equal(nic.code, 2, nic.stderr);
  assert.match(nic.stderr, /--host-cores belongs to the --role host process/);
});
