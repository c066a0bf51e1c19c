/**
 * Ingress 'core': a forced migrate() racing core 0's own migrate decision (an operator's POST
 * /migrate, or an onDecision observer, landing between the core's OUT_DECISION and OUT_PREPARED).
 * The actor must not be wedged: the running migration completes, the forced caller is told the
 * actor is already migrating (never "scheduler misuse"), and the actor answers afterwards.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { staller } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

test('ingress core: a forced migrate() from the decision observer does not wedge the actor', {
  timeout: 25_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    warmSpare: false,
    catalog: [{ id: actorId(1), name: 'staller', module: MODULE, exportName: 'staller' }],
    hostCores: 1,
    scheduler: {
      enableMigration: true,
      enableDowngrade: false,
      enableAutoscale: false,
      meanThreshNs: 100_000,
      tailThreshNs: 400_000,
      pushWarmupCompletions: 8,
      settleNs: 1_000_000,
    },
  });
  let forced: Promise<string> | undefined;
  node.nic.onDecision = (decision) => {
    if (decision.kind === 'migrate' && forced === undefined) {
      forced = node.migrate(actorId(1), 'host').then(
        () => 'resolved',
        (error: unknown) => `rejected: ${(error as Error).message}`,
      );
    }
  };
  const replies = staller.replies;
  assert.ok(replies);
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 1_000,
    retries: 2,
  });
  try {
    for (let id = 0; forced === undefined && id < 2_000; id++)
      await client.call(1, staller.messages, replies, { type: 'stall', id, ms: 2 });
    assert.ok(forced, 'the scheduler decided to push the staller to the host');
    const outcome = await forced;
    assert.doesNotMatch(outcome, /scheduler misuse/);
    assert.match(outcome, /resolved|already migrating/);
    const deadline = performance.now() + 5_000;
    while (node.domainOf(actorId(1)) !== 'host' && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(node.domainOf(actorId(1)), 'host', 'the migration under way completed');
    const after = await client.call(1, staller.messages, replies, { type: 'stall', id: 99_999, ms: 1 });
    assert.deepEqual(after, { type: 'done', id: 99_999 });
    assert.equal(node.stats().migrations.length, 1);
  } finally {
    await client.close();
    await node.stop(500);
  }
});
