/**
 * The watchdog with NIC core 0 owning the socket (`ingress: 'core'`): a runaway handler on core 0
 * gets its thread terminated, its actor deregistered and its request a typed error; the warm spare
 * takes the same port over, re-arms the NIC actors' timers, and serves on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { isNetError } from '../../../../src/platform/live/net/errors.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { SocketCoreController } from '../../../../src/platform/live/node/socket-core-controller.ts';
import { echo, runaway, ticker } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const entry = (id: number, name: string) => ({ id: actorId(id), name, module: MODULE, exportName: name });

test('ingress core: a runaway handler on core 0 is stopped; the warm spare serves the same port', async (t) => {
  const watchdogMs = 200;
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [entry(1, 'echo'), entry(2, 'runaway'), entry(3, 'ticker')],
    hostCores: 1,
    watchdogMs,
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const port = node.address.port;
  const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 1_000, retries: 5 });
  const echoReplies = echo.replies;
  const runawayReplies = runaway.replies;
  assert.ok(echoReplies && runawayReplies);
  try {
    const pong: { type: string } = await client.call(2, runaway.messages, runawayReplies, { type: 'ping' });
    assert.equal(pong.type, 'pong');
    // A timer armed in core 0 must outlive its thread: the replacement re-arms it from the heap.
    const tickerReplies = ticker.replies;
    assert.ok(tickerReplies);
    const ticks = async () =>
      ((await client.call(3, ticker.messages, tickerReplies, { type: 'count' })) as { ticks: number }).ticks;
    await client.call(3, ticker.messages, tickerReplies, { type: 'start', everyMs: 20 });
    const started = performance.now();
    const spin = await client.call(2, runaway.messages, runawayReplies, { type: 'spin' }).then(
      () => assert.fail('a spinning handler cannot answer'),
      (error: unknown) => error,
    );
    const tookMs = performance.now() - started;
    assert.ok(isNetError(spin, 'IPIPE_ERR_NET_REMOTE'), String(spin));
    assert.equal((spin as unknown as { remoteCode: string }).remoteCode, 'IPIPE_ERR_ACTOR_DEREGISTERED');
    // The limit, the check's period, then the spare's takeover (tens of ms; a loaded CI machine may
    // stretch it, so the bound is loose — the spare's use is asserted below).
    assert.ok(tookMs >= watchdogMs && tookMs < watchdogMs + 3_000, `answered after ${tookMs.toFixed(0)} ms`);
    assert.equal(node.address.port, port, 'the replacement bound the same port');
    const reply: { data: Uint8Array } = await client.call(1, echo.messages, echoReplies, {
      type: 'echo',
      data: new Uint8Array([7]),
    });
    assert.deepEqual([...reply.data], [7]);
    const after = await client.call(2, runaway.messages, runawayReplies, { type: 'ping' }).then(
      () => 'answered',
      (error: unknown) => (error as { remoteCode?: string }).remoteCode,
    );
    assert.equal(after, 'IPIPE_ERR_ACTOR_DEREGISTERED', 'the runaway stays deregistered');
    const ticksAfter = await ticks();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok((await ticks()) > ticksAfter, 'the ticker still ticks: its timer was re-armed');
    const stats = node.stats();
    assert.equal(stats.watchdogKills, 1);
    assert.equal(stats.drops['watchdog'], 1);
    assert.ok(node.nic instanceof SocketCoreController);
    assert.ok(node.nic.usedSpare, 'the warm spare took the port over');
    t.diagnostic(`port dark ${node.nic.lastReplacementDarkMs.toFixed(0)} ms (terminate, spare told, bound)`);
  } finally {
    await client.close();
    await node.stop();
  }
});
