/**
 * /metrics reports the host domain's per-core rings and queues as it does the NIC cores' rings:
 * each host core's work and result ring bytes (`ipipe_host_ring_occupancy_bytes`) and the requests
 * each holds, queued for it and handed to it (`ipipe_host_core_requests`). Before, a scrape saw the
 * NIC cores and the NIC→host channel, and nothing of the host cores behind it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { startAdminServer } from '../../../../src/platform/live/node/admin-server.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { ledger } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

function sample(metrics: string, name: string, labels: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: /metrics has each host core's ring bytes and queued and held requests`, async () => {
    const node = await LiveNode.start({
      ingress,
      warmSpare: false,
      catalog: [{ id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' }],
      nicCores: 1,
      hostCores: 2,
      placement: { ledger: 'host' },
      scheduler: { enableMigration: false },
    });
    const admin = await startAdminServer(node, 0);
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: node.address.port,
      timeoutMs: 3_000,
    });
    const replies = ledger.replies;
    assert.ok(replies);
    try {
      // Served on the host: its cores' rings carried work and results.
      for (let i = 1; i <= 5; i++)
        await client.call(1, ledger.messages, replies, { type: 'add', key: 1, amount: 1, seq: i });
      assert.equal(node.stats().executed['ledger']?.host, 5);
      const metrics = await (await fetch(`http://${admin.address}:${admin.port}/metrics`)).text();
      assert.match(metrics, /# TYPE ipipe_host_ring_occupancy_bytes gauge/);
      assert.match(metrics, /# TYPE ipipe_host_core_requests gauge/);
      for (const core of ['0', '1']) {
        for (const ring of ['work', 'result']) {
          const bytes = sample(metrics, 'ipipe_host_ring_occupancy_bytes', `core="${core}",ring="${ring}"`);
          assert.ok(bytes !== undefined && bytes >= 0, `core ${core} ${ring}: ${bytes}\n${metrics}`);
        }
        // Every request was answered: nothing is left queued for or held by a host core.
        assert.equal(sample(metrics, 'ipipe_host_core_requests', `core="${core}",state="queued"`), 0);
        assert.equal(sample(metrics, 'ipipe_host_core_requests', `core="${core}",state="held"`), 0);
      }
      assert.equal(sample(metrics, 'ipipe_host_ring_occupancy_bytes', 'core="2",ring="work"'), undefined);
    } finally {
      await client.close();
      await admin.close();
      await node.stop();
    }
  });
