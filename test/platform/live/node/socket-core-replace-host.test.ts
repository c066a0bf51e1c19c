/**
 * Ingress 'core': host actors' requests in flight while the watchdog replaces core 0. Each must
 * run on the host exactly once and be answered: the host's replies reach the client with its own
 * client id (the replacement core's directory is empty), and replies the killed core never took
 * from its work ring go to the replacement instead of dying with the thread.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { runaway, staller } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const entry = (id: number, name: string) => ({ id: actorId(id), name, module: MODULE, exportName: name });

test('ingress core: host requests in flight across a core replacement run once and are answered', {
  timeout: 25_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [entry(1, 'staller'), entry(2, 'runaway')],
    hostCores: 1,
    // The limit applies to host cores too: a 150 ms handler preempted on a loaded 2-vCPU machine
    // passed 200 ms and the host's watchdog deregistered the staller (seen once at load ~6).
    watchdogMs: 400,
    placement: { staller: 'host' },
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const stallerReplies = staller.replies;
  const runawayReplies = runaway.replies;
  assert.ok(stallerReplies && runawayReplies);
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 1_000,
    retries: 5,
  });
  try {
    await client.call(2, runaway.messages, runawayReplies, { type: 'ping' });
    // Four host requests of 150 ms each: the host answers them one by one while core 0 spins.
    const slow = Promise.all(
      [1, 2, 3, 4].map((id) =>
        client.call(1, staller.messages, stallerReplies, { type: 'stall', id, ms: 150 }).then(
          (reply) => reply,
          (error: unknown) => `failed: ${(error as Error).message}`,
        ),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const spin = await client.call(2, runaway.messages, runawayReplies, { type: 'spin' }).then(
      () => 'answered',
      (error: unknown) => (error as { remoteCode?: string }).remoteCode,
    );
    assert.equal(spin, 'IPIPE_ERR_ACTOR_DEREGISTERED');
    assert.deepEqual(
      await slow,
      [1, 2, 3, 4].map((id) => ({ type: 'done', id })),
    );
    assert.equal(node.nic.replacedCores, 1);
    assert.equal(node.stats().executed['staller']?.host, 4, 'each host request ran once');
  } finally {
    await client.close();
    await node.stop(500);
  }
});
