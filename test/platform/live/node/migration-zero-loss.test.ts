/**
 * Zero loss across live migration (issue 4): a client keeps 32 requests in flight to a stateful,
 * exclusive actor while the test forces migrations NIC ⇄ host; every request is answered exactly
 * once, the actor's DMO state equals the model, and per-key order holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { ledger } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const TOTAL = 100_000;

interface LedgerReply {
  readonly type: 'total';
  readonly key: number;
  readonly total: number;
  readonly seq: number;
}
const IN_FLIGHT = 32;
const KEYS = 16;

test('100 000 requests through ≥ 20 forced migrations: each answered once, state and order kept', async () => {
  const node = await LiveNode.start({
    catalog: [{ id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' }],
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
  const replies = ledger.replies;
  assert.ok(replies);
  const model = new Map<number, number>();
  const lastSeq = new Map<number, number>();
  const answered = new Set<number>();
  let sent = 0;
  let migrations = 0;
  let migrating = false;
  const flipEvery = Math.floor(TOTAL / 24);
  try {
    const worker = async () => {
      while (sent < TOTAL) {
        const seq = ++sent;
        const key = seq % KEYS;
        const amount = (seq % 7) + 1;
        model.set(key, (model.get(key) ?? 0) + amount);
        if (seq % flipEvery === 0 && !migrating) {
          migrating = true;
          const to = node.domainOf(actorId(1)) === 'nic' ? 'host' : 'nic';
          void node.migrate(actorId(1), to).then(() => {
            migrations++;
            migrating = false;
          });
        }
        const reply: LedgerReply = await client.call(1, ledger.messages, replies, {
          type: 'add',
          key,
          amount,
          seq,
        });
        assert.equal(reply.seq, seq, 'the reply answers this request');
        assert.ok(!answered.has(seq), `request ${seq} answered twice`);
        answered.add(seq);
        // The ledger is exclusive: the adds of one key take effect in the order they were sent.
        assert.ok(seq > (lastSeq.get(key) ?? 0), `key ${key}: ${seq} after ${lastSeq.get(key)}`);
        lastSeq.set(key, seq);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    while (migrating) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(answered.size, TOTAL, 'every request answered');
    assert.ok(migrations >= 20, `only ${migrations} migrations`);
    for (const [key, total] of model) {
      const reply: LedgerReply = await client.call(1, ledger.messages, replies, { type: 'get', key });
      assert.equal(reply.total, total, `key ${key}`);
    }
    const stats = node.stats();
    assert.ok(stats.migrations.length >= 20);
    assert.ok(
      stats.migrations.some((m) => m.bufferedRequests > 0),
      'some migrations buffered requests',
    );
    assert.ok(
      (stats.executed['ledger']?.nic ?? 0) > 0 && (stats.executed['ledger']?.host ?? 0) > 0,
      'ran on both sides',
    );
  } finally {
    await client.close();
    await node.stop();
  }
});
