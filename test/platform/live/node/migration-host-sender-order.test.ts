/**
 * Per-sender FIFO across a live NIC → host migration, for a sender on the host. While `tally`
 * migrates to the host, the NIC buffers its requests — among them the notes a host actor (`pump`)
 * sent before the host adopted tally's image — and hands them over only once it hears the host
 * adopted it. A note pump sends after the adoption must not run ahead of those: tally must see
 * every note in the order pump sent it (fixtures/order-actors.ts). RKV's consensus actor on the
 * host sending `apply`s to its memtable as the memtable moves is this case: overtaken, an older
 * write of a key was applied after a newer one, and an acknowledged put read back stale.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { pump, tally } from './fixtures/order-actors.ts';

const MODULE = new URL('./fixtures/order-actors.ts', import.meta.url).pathname;
const TALLY = actorId(1);
const PUMP = actorId(2);
/** Enough for dozens of moves to the host: without the fix some 20 to 50 of them arrived out of order. */
const NOTES = 2_000;
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

for (const ingress of ['controller', 'core'] as const) {
  test(`ingress ${ingress}: a host sender’s messages reach an actor migrating NIC → host in the order it sent them`, {
    timeout: 120_000,
  }, async () => {
    await runOrder(ingress);
  });
}

async function runOrder(ingress: 'controller' | 'core'): Promise<void> {
  const node = await LiveNode.start({
    ingress,
    catalog: [
      { id: TALLY, name: 'tally', module: MODULE, exportName: 'tally' },
      { id: PUMP, name: 'pump', module: MODULE, exportName: 'pump' },
    ],
    nicCores: 1,
    hostCores: 1,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 3_000,
    retries: 5,
  });
  const tallyReplies = tally.replies;
  const pumpReplies = pump.replies;
  assert.ok(tallyReplies && pumpReplies);
  try {
    await client.call(2, pump.messages, pumpReplies, { type: 'start', until: NOTES });
    let toHost = 0;
    let report = { last: 0, disorder: 0, count: 0 };
    // Moves tally back and forth while the notes flow; each move to the host is the case.
    while (report.count < NOTES) {
      const to = node.domainOf(TALLY) === 'nic' ? 'host' : 'nic';
      await node.migrate(TALLY, to);
      if (to === 'host') toHost++;
      await sleep(2);
      report = await client.call(1, tally.messages, tallyReplies, { type: 'report' });
    }
    assert.ok(toHost >= 3, `tally moved to the host ${toHost} times while the notes flowed`);
    assert.equal(report.count, NOTES, 'every note arrived once');
    assert.equal(report.disorder, 0, `${report.disorder} notes arrived after a later one`);
    assert.equal(report.last, NOTES);
  } finally {
    await client.close();
    await node.stop();
  }
}
