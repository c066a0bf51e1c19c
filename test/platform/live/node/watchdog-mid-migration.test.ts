/**
 * A NIC handler that overruns its watchdog while its actor is being moved to the host: the actor is
 * deregistered and its migration ends there — the `migrate()` caller hears why, the node does not
 * crash (finishing the move found no actor in the scheduler: an uncaught SchedulerStateError), and
 * the rest keeps serving. Found in review of the per-sender order change (LINK_DRAINED).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../../../src/errors.ts';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { echo, runaway } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

test('a watchdog kill of an actor mid-migration to the host fails that migration, and the node serves on', {
  timeout: 60_000,
}, async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  const node = await LiveNode.start({
    catalog: [
      { id: actorId(1), name: 'echo', module: MODULE, exportName: 'echo' },
      { id: actorId(2), name: 'runaway', module: MODULE, exportName: 'runaway' },
    ],
    nicCores: 2,
    hostCores: 1,
    watchdogMs: 200,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 2_000,
    retries: 0,
  });
  const echoReplies = echo.replies;
  const runawayReplies = runaway.replies;
  assert.ok(echoReplies && runawayReplies);
  try {
    const spin = client.call(2, runaway.messages, runawayReplies, { type: 'spin' }).then(
      () => 'answered',
      (error: unknown) => String(error),
    );
    await sleep(50);
    // Prepared while the handler spins: Ready waits for it, and the watchdog ends it first.
    const moving = node.migrate(actorId(2), 'host').then(
      () => 'moved',
      (error: unknown) => error,
    );
    assert.match(await spin, /IPIPE_ERR_ACTOR_DEREGISTERED|deregistered/);
    const outcome = await Promise.race([moving, sleep(5_000).then(() => 'still pending after 5 s')]);
    assert.ok(outcome instanceof ConfigError, `the migration fails with why: ${String(outcome)}`);
    assert.match(outcome.message, /deregistered/);
    for (let i = 0; i < 5; i++) {
      const reply: { data: Uint8Array } = await client.call(1, echo.messages, echoReplies, {
        type: 'echo',
        data: new Uint8Array([i]),
      });
      assert.deepEqual([...reply.data], [i], 'echo still served');
    }
    await sleep(300);
    assert.deepEqual(uncaught, [], 'nothing thrown out of the node');
    assert.equal(node.nic.idle, true, 'no migration left under way');
  } finally {
    process.removeListener('uncaughtException', onUncaught);
    await client.close();
    await node.stop(1_000);
  }
});
