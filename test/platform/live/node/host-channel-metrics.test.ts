/**
 * /metrics reports the NIC↔host channel's occupancy (issue 4: "ring occupancy", and the channel is
 * the SPSC ring the issue describes). Before, only the NIC cores' work and result rings were
 * there: the ring between the domains — where back-pressure shows first, as unread bytes and then
 * as the NIC's backlog — was invisible to a scrape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { startAdminServer } from '../../../../src/platform/live/node/admin-server.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

function sample(metrics: string, name: string, labels: string): number | undefined {
  const prefix = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = metrics.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: /metrics has the NIC→host channel's unread and backlog bytes and its capacity`, async () => {
    const node = await LiveNode.start({
      ingress,
      warmSpare: false,
      catalog: [{ id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' }],
      nicCores: 1,
      hostCores: 1,
      scheduler: { enableMigration: false },
    });
    const admin = await startAdminServer(node, 0);
    try {
      // A migration sends the actor's region over the channel: the channel was used, and is idle after.
      await node.nic.migrate(actorId(1), 'host');
      const metrics = await (await fetch(`http://${admin.address}:${admin.port}/metrics`)).text();
      assert.match(metrics, /# HELP ipipe_host_channel_bytes .+/);
      assert.match(metrics, /# TYPE ipipe_host_channel_bytes gauge/);
      assert.match(metrics, /# TYPE ipipe_host_channel_capacity_bytes gauge/);
      assert.equal(
        sample(metrics, 'ipipe_host_channel_bytes', 'state="unread",transport="ring"') !== undefined,
        true,
        metrics,
      );
      assert.equal(sample(metrics, 'ipipe_host_channel_bytes', 'state="backlog",transport="ring"'), 0);
      const capacity = sample(metrics, 'ipipe_host_channel_capacity_bytes', 'transport="ring"') ?? 0;
      assert.ok(capacity > 0, `capacity ${capacity}`);
      const unread = sample(metrics, 'ipipe_host_channel_bytes', 'state="unread",transport="ring"') ?? -1;
      assert.ok(unread >= 0 && unread <= capacity, `unread ${unread} of ${capacity}`);
    } finally {
      await admin.close();
      await node.stop();
    }
  });
