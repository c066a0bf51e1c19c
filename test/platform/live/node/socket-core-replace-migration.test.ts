/**
 * Ingress 'core': the watchdog replaces core 0 while an actor is moving from the host to the NIC
 * (LINK_MIGRATE sent, the host still running the actor's queue before it sends the image). The
 * migration must finish on the replacement core — the image adopted, the actor serving from the
 * NIC — not leave the host "leaving" with its image dropped as stray and the actor's requests
 * bouncing between the two sides.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { runaway, staller } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const entry = (id: number, name: string) => ({ id: actorId(id), name, module: MODULE, exportName: name });

test('ingress core: a host -> NIC migration under way survives a core replacement', {
  timeout: 25_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [entry(1, 'staller'), entry(2, 'runaway')],
    hostCores: 1,
    // The limit applies to host cores too: headroom over the staller's 250 ms for a loaded machine.
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
    timeoutMs: 2_000,
    retries: 2,
  });
  try {
    await client.call(2, runaway.messages, runawayReplies, { type: 'ping' });
    await client.call(1, staller.messages, stallerReplies, { type: 'stall', id: 0, ms: 1 });
    // 1 s of work queued on the host: the image leaves only after it, well after the watchdog.
    const queued = [1, 2, 3, 4].map((id) =>
      client.call(1, staller.messages, stallerReplies, { type: 'stall', id, ms: 250 }).catch(() => undefined),
    );
    const deadline = performance.now() + 2_000;
    while (node.stats().requests < 6 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 2));
    assert.equal(node.stats().requests, 6, 'the four slow requests reached core 0');
    // The controller has read the five forwards (staller 0-4): the next result record it reads is
    // the core's OUT_PREPARED, on which it sends LINK_MIGRATE. The watchdog must fire after that.
    const resultsRead = () => node.nic.ringStats()[0]?.results ?? 0;
    while (resultsRead() < 5 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 2));
    assert.equal(resultsRead(), 5, 'the five forwards were read');
    const moving = node.migrate(actorId(1), 'nic').then(
      (record) => `moved to ${record.to}`,
      (error: unknown) => `rejected: ${(error as Error).message}`,
    );
    while (resultsRead() < 6 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 2));
    assert.equal(resultsRead(), 6, 'OUT_PREPARED was read: LINK_MIGRATE is on its way to the host');
    const spin = await client.call(2, runaway.messages, runawayReplies, { type: 'spin' }).then(
      () => 'answered',
      (error: unknown) => (error as { remoteCode?: string }).remoteCode,
    );
    assert.equal(spin, 'IPIPE_ERR_ACTOR_DEREGISTERED');
    assert.equal(node.nic.replacedCores, 1);
    assert.equal(await moving, 'moved to nic');
    await Promise.all(queued);
    assert.equal(node.domainOf(actorId(1)), 'nic');
    assert.equal(node.stats().drops['stray-image'], undefined, 'the image was adopted, not dropped');
    const after = await client.call(1, staller.messages, stallerReplies, { type: 'stall', id: 77, ms: 1 });
    assert.deepEqual(after, { type: 'done', id: 77 });
    assert.ok((node.stats().executed['staller']?.nic ?? 0) >= 1, 'served by the NIC now');
  } finally {
    await client.close();
    await node.stop(500);
  }
});
