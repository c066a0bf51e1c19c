/**
 * /metrics exports every drop reason (and every per-actor and per-kind counter) the node counts from its start, at 0 (both ingress modes):
 * a dashboard or an alert must tell "nothing dropped" from "not exported". A reason then counts up
 * from that 0 (the series is not counted twice), and every reason /stats reports is one of them.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { startAdminServer } from '../../../../src/platform/live/node/admin-server.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

/** The `reason` label → value of every `ipipe_drops_total` sample. */
function dropSamples(metrics: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const match of metrics.matchAll(/^ipipe_drops_total\{reason="([^"]+)"\} (\S+)$/gm))
    samples.set(match[1] as string, Number(match[2]));
  return samples;
}

/** One NIC and one host core, the `ledger` actor, no migrations, and its admin server. */
async function startLedgerNode(ingress: 'controller' | 'core') {
  const node = await LiveNode.start({
    ingress,
    warmSpare: false,
    catalog: [{ id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' }],
    nicCores: 1,
    hostCores: 1,
    scheduler: { enableMigration: false },
  });
  return { node, admin: await startAdminServer(node, 0) };
}

for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: ipipe_drops_total has every known reason at 0 before the first drop`, async () => {
    const { node, admin } = await startLedgerNode(ingress);
    const scrape = async () =>
      dropSamples(await (await fetch(`http://${admin.address}:${admin.port}/metrics`)).text());
    try {
      const before = await scrape();
      // The wire's reasons, the node's own, and the host domain's (prefixed host-), all at 0.
      for (const reason of [
        'bad-magic',
        'bad-checksum',
        'unknown-actor',
        'ingress-full',
        'host-corrupt-image',
      ])
        assert.equal(before.get(reason), 0, `${reason} is exported at 0`);
      for (const [reason, value] of before) assert.equal(value, 0, `${reason} before any drop`);

      const raw = createSocket('udp4');
      await new Promise<void>((resolve) =>
        raw.send(Buffer.from('not a frame'), node.address.port, '127.0.0.1', () => resolve()),
      );
      raw.close();
      for (let i = 0; i < 200 && (node.stats().drops['short'] ?? 0) === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const after = await scrape();
      assert.equal(after.get('short'), 1, 'a datagram shorter than a header');
      assert.equal(after.get('bad-checksum'), 0);
      for (const reason of Object.keys(node.stats().drops))
        assert.ok(before.has(reason), `/stats counts "${reason}", which /metrics did not export from 0`);
    } finally {
      await admin.close();
      await node.stop();
    }
  });

for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: executions, replies and migrations are series at 0 before the first request`, async () => {
    const { node, admin } = await startLedgerNode(ingress);
    try {
      const metrics = await (await fetch(`http://${admin.address}:${admin.port}/metrics`)).text();
      for (const series of [
        'ipipe_requests_executed_total{actor="ledger",domain="nic"} 0',
        'ipipe_requests_executed_total{actor="ledger",domain="host"} 0',
        'ipipe_migrations_total{actor="ledger",to="nic"} 0',
        'ipipe_migrations_total{actor="ledger",to="host"} 0',
        'ipipe_replies_total{kind="reply"} 0',
        'ipipe_replies_total{kind="error"} 0',
        'ipipe_replies_total{kind="duplicate"} 0',
      ])
        assert.ok(metrics.split('\n').includes(series), `${series} is exported`);
    } finally {
      await admin.close();
      await node.stop();
    }
  });
