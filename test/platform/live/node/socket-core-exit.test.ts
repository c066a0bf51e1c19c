/**
 * Ingress 'core': the ends of core 0 other than the watchdog's. A core thread that exits by itself
 * is replaced on the same port (nothing deregistered); a stop() that lands while the watchdog is
 * replacing the core leaves no replacement serving behind it (the port is free afterwards).
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { echo, exiter, runaway } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const entry = (id: number, name: string) => ({ id: actorId(id), name, module: MODULE, exportName: name });

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test('ingress core: a core 0 that exits by itself is replaced and serves again', {
  timeout: 25_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [entry(1, 'echo'), entry(2, 'exiter')],
    hostCores: 1,
    scheduler: { enableMigration: false },
  });
  const exiterReplies = exiter.replies;
  const echoReplies = echo.replies;
  assert.ok(exiterReplies && echoReplies);
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 300,
    retries: 0,
  });
  try {
    await client.call(2, exiter.messages, exiterReplies, { type: 'ping' });
    await client.call(2, exiter.messages, exiterReplies, { type: 'exit' }).catch(() => undefined);
    await until(() => node.nic.replacedCores === 1, 'the replacement');
    const reply: { data: Uint8Array } = await client.call(1, echo.messages, echoReplies, {
      type: 'echo',
      data: new Uint8Array([7]),
    });
    assert.deepEqual([...reply.data], [7]);
    assert.equal(node.stats().drops['core-exited'], 1);
  } finally {
    await client.close();
    await node.stop(500);
  }
});

test('ingress core: stop() during a watchdog replacement leaves no core serving the port', {
  timeout: 25_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [entry(1, 'runaway')],
    hostCores: 1,
    watchdogMs: 100,
    scheduler: { enableMigration: false },
  });
  const port = node.address.port;
  const replies = runaway.replies;
  assert.ok(replies);
  const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 2_000, retries: 0 });
  try {
    await client.call(1, runaway.messages, replies, { type: 'ping' });
    void client.call(1, runaway.messages, replies, { type: 'spin' }).catch(() => undefined);
    // The watchdog counts its drop as it starts replacing the core, before the old thread is gone.
    await until(() => node.stats().drops['watchdog'] === 1, 'the watchdog');
    await node.stop(200);
    // A replacement that went on after stop() would take the port within its ~1 s of bind retries.
    let bound = 'bound';
    for (let probeAt = performance.now(); bound === 'bound' && performance.now() - probeAt < 1_200; ) {
      const probe = createSocket('udp4');
      bound = await new Promise<string>((resolve) => {
        probe.once('error', (error) => resolve(error.message));
        probe.bind(port, '127.0.0.1', () => resolve('bound'));
      });
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(bound, 'bound', 'nothing serves the port after stop()');
  } finally {
    await client.close();
    await node.stop(200);
  }
});
