/**
 * A core publishes each handler's result as soon as the handler returns: a reply does not wait for
 * the handlers queued behind it on the same core. (It used to: results were flushed only once the
 * core's work ring was empty, so RKV's reply to a SET waited out the next item on the host core —
 * often the durable log's fsync — docs/apps/rkv-cluster.md "Where a SET waits".)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { staller } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
/** How long the last handler holds the core: the earlier replies must not wait for it. */
const LONG_MS = 600;

test('a reply leaves as its handler returns, not after the next handler on the core', async () => {
  const node = await LiveNode.start({
    catalog: [{ id: actorId(1), name: 'staller', module: MODULE, exportName: 'staller' }],
    nicCores: 1,
    hostCores: 1,
    watchdogMs: 10_000,
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 5_000,
    retries: 0,
  });
  const replies = staller.replies;
  assert.ok(replies);
  try {
    const call = (id: number, ms: number): Promise<number> =>
      client.call(1, staller.messages, replies, { type: 'stall', id, ms }).then((reply) => {
        assert.equal(reply.id, id);
        return performance.now();
      });
    // The first request holds the core while the next two arrive: the controller then hands both
    // to the core at once (its ring holds the short one with the long one behind it).
    const first = call(1, 100);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const short = call(2, 0);
    const long = call(3, LONG_MS);
    const [shortAt, longAt] = await Promise.all([short, long]);
    await first;
    const aheadMs = longAt - shortAt;
    assert.ok(
      aheadMs > LONG_MS / 2,
      `the short request's reply came only ${aheadMs.toFixed(0)} ms before the long one's (it waited for it)`,
    );
  } finally {
    await client.close();
    await node.stop();
  }
});
