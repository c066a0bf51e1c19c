/**
 * Isolation, denial of service (issue 4, iPipe §4.4): an actor whose handler spins for ever is
 * stopped within its watchdog limit — deregistered, its request answered with a typed error, its
 * core thread replaced — while the other actors' requests keep succeeding.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { isNetError } from '../../../../src/platform/live/net/errors.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { echo, runaway } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const WATCHDOG_MS = 200;

test('a runaway handler is stopped within its watchdog limit; everything else keeps serving', async () => {
  const node = await LiveNode.start({
    catalog: [
      { id: actorId(1), name: 'echo', module: MODULE, exportName: 'echo' },
      { id: actorId(2), name: 'runaway', module: MODULE, exportName: 'runaway' },
    ],
    nicCores: 2,
    hostCores: 1,
    watchdogMs: WATCHDOG_MS,
    scheduler: { enableMigration: false, enableDowngrade: false },
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
    const pong: { type: string } = await client.call(2, runaway.messages, runawayReplies, { type: 'ping' });
    assert.equal(pong.type, 'pong');
    let echoes = 0;
    let stop = false;
    let echoFailure: unknown;
    const echoing = (async () => {
      while (!stop) {
        const reply: { data: Uint8Array } = await client.call(1, echo.messages, echoReplies, {
          type: 'echo',
          data: new Uint8Array([echoes & 0xff]),
        });
        assert.equal(reply.data[0], echoes & 0xff);
        echoes++;
      }
    })().catch((error: unknown) => {
      echoFailure = error;
    });
    const started = performance.now();
    const spin = await client.call(2, runaway.messages, runawayReplies, { type: 'spin' }).then(
      () => assert.fail('a spinning handler cannot answer'),
      (error: unknown) => error,
    );
    const tookMs = performance.now() - started;
    assert.ok(isNetError(spin, 'IPIPE_ERR_NET_REMOTE'), String(spin));
    assert.equal((spin as unknown as { remoteCode: string }).remoteCode, 'IPIPE_ERR_ACTOR_DEREGISTERED');
    assert.ok(tookMs >= WATCHDOG_MS && tookMs < WATCHDOG_MS * 4, `stopped after ${tookMs.toFixed(0)} ms`);
    const echoesDuringSpin = echoes;
    assert.ok(echoesDuringSpin > 10, `only ${echoesDuringSpin} echoes while the runaway spun`);
    // The runaway is gone for good; the node replaced its core and serves on.
    const after = await client.call(2, runaway.messages, runawayReplies, { type: 'ping' }).then(
      () => 'answered',
      (error: unknown) => (error as { remoteCode?: string }).remoteCode,
    );
    assert.equal(after, 'IPIPE_ERR_ACTOR_DEREGISTERED');
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop = true;
    await echoing;
    assert.equal(echoFailure, undefined, 'no echo failed');
    assert.ok(echoes > echoesDuringSpin, 'echoes continue after the runaway was stopped');
    assert.equal(node.stats().watchdogKills, 1);
    assert.equal(node.stats().drops['watchdog'], 1);
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.close();
    await node.stop();
  }
});
