/**
 * The node's admin endpoint (issue 4 §3): /metrics in Prometheus text with per-actor request
 * counts, latency summaries, the domain of each actor, migrations by phase, drops by reason and
 * ring occupancy; /stats as JSON; POST /migrate moves an actor and refuses bad input clearly.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { startAdminServer } from '../../../../src/platform/live/node/admin-server.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { ledger } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

/** The value of one sample line `name{labels} value`, or undefined. */
function sample(metrics: string, name: string, labels: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** A node serving the ledger (scheduler migration off: only forced moves) and its admin endpoint. */
async function ledgerNodeWithAdmin(ingress: 'controller' | 'core' = 'controller') {
  const node = await LiveNode.start({
    ingress,
    warmSpare: false, // only the watchdog needs it (socket-core.test.ts)
    catalog: [{ id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' }],
    nicCores: 1,
    hostCores: 1,
    scheduler: { enableMigration: false },
  });
  const admin = await startAdminServer(node, 0);
  return { node, admin, base: `http://${admin.address}:${admin.port}` };
}

// Both ingress modes: with NIC core 0 owning the socket, the counters come from its shared block
// and the latencies from its OUT_LATENCY records.
for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: /metrics, /stats and /migrate report and steer a serving node`, async () => {
    const { node, admin, base } = await ledgerNodeWithAdmin(ingress);
    assert.equal(node.ingress, ingress);
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: node.address.port,
      timeoutMs: 3_000,
    });
    const replies = ledger.replies;
    assert.ok(replies);
    try {
      for (let i = 1; i <= 20; i++)
        await client.call(1, ledger.messages, replies, { type: 'add', key: 1, amount: 1, seq: i });
      // A bad frame, counted by reason.
      const raw = createSocket('udp4');
      await new Promise<void>((resolve) =>
        raw.send(Buffer.from('not a frame'), node.address.port, '127.0.0.1', () => resolve()),
      );
      raw.close();

      const moved = await fetch(`${base}/migrate?actor=ledger&to=host`, { method: 'POST' });
      assert.equal(moved.status, 200);
      const body = (await moved.json()) as { migration: { to: string; phasesMs: Record<string, number> } };
      assert.equal(body.migration.to, 'host');
      assert.deepEqual(Object.keys(body.migration.phasesMs), ['prepare', 'ready', 'gone', 'clean']);
      for (let i = 21; i <= 30; i++)
        await client.call(1, ledger.messages, replies, { type: 'add', key: 1, amount: 1, seq: i });

      const badTarget = await fetch(`${base}/migrate?actor=ledger&to=moon`, { method: 'POST' });
      assert.equal(badTarget.status, 400);
      assert.match(((await badTarget.json()) as { error: string }).error, /nic or host/);
      const unknown = await fetch(`${base}/migrate?actor=nobody&to=nic`, { method: 'POST' });
      assert.equal(unknown.status, 404);
      assert.match(((await unknown.json()) as { error: string }).error, /no actor named "nobody"/);
      const already = await fetch(`${base}/migrate?actor=ledger&to=host`, { method: 'POST' });
      assert.equal(already.status, 409, 'moving to where it already is is refused');
      assert.match(((await already.json()) as { error: string }).error, /ledger already runs on the host/);

      // With core 0 owning the socket, latencies reach the controller with its next management
      // tick (OUT_LATENCY is batched), not with the reply: read until the last ones are in.
      let metrics = '';
      for (const deadline = performance.now() + 5_000; ; ) {
        const metricsResponse = await fetch(`${base}/metrics`);
        assert.equal(metricsResponse.status, 200);
        assert.match(metricsResponse.headers.get('content-type') ?? '', /text\/plain/);
        metrics = await metricsResponse.text();
        const latencies = sample(metrics, 'ipipe_request_latency_seconds_count', 'actor="ledger"') ?? 0;
        if (latencies >= 30 || performance.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(sample(metrics, 'ipipe_requests_executed_total', 'actor="ledger",domain="nic"'), 20);
      assert.equal(sample(metrics, 'ipipe_requests_executed_total', 'actor="ledger",domain="host"'), 10);
      assert.equal(
        sample(metrics, 'ipipe_actor_domain', 'actor="ledger"'),
        1,
        'the ledger now runs on the host',
      );
      assert.ok((sample(metrics, 'ipipe_request_latency_seconds_count', 'actor="ledger"') ?? 0) >= 30);
      assert.ok(
        (sample(metrics, 'ipipe_request_latency_seconds', 'quantile="0.99",actor="ledger"') ?? 0) > 0,
      );
      assert.equal(sample(metrics, 'ipipe_migration_phase_seconds_count', 'phase="gone"'), 1);
      // 11 bytes is shorter than a header: counted as 'short'.
      assert.equal(sample(metrics, 'ipipe_drops_total', 'reason="short"'), 1);
      assert.notEqual(sample(metrics, 'ipipe_ring_occupancy_bytes', 'core="0",ring="work"'), undefined);

      const stats = (await (await fetch(`${base}/stats`)).json()) as {
        schemaVersion: number;
        replies: number;
        migrations: unknown[];
      };
      assert.equal(stats.schemaVersion, 1);
      assert.equal(stats.replies, 30);
      assert.equal(stats.migrations.length, 1);
    } finally {
      await client.close();
      await admin.close();
      await node.stop();
    }
  });

test('a node that migrates for ever keeps its last 256 migrations; totals and /metrics count them all', async () => {
  const { node, admin, base } = await ledgerNodeWithAdmin();
  try {
    // 600: past 512, where the node's list is first trimmed (to its last 256).
    const moves = 600;
    for (let i = 0; i < moves; i++) {
      // Scrapes every 100 moves: each phase is observed once, across the trim too.
      if (i > 0 && i % 100 === 0) await (await fetch(`${base}/metrics`)).text();
      await node.nic.migrate(actorId(1), i % 2 === 0 ? 'host' : 'nic');
    }
    const stats = node.stats();
    assert.equal(stats.migrationsTotal, moves);
    assert.equal(stats.migrations.length, 256, 'the most recent 256');
    assert.equal(stats.migrations.at(-1)?.to, 'nic', 'the last move is the newest entry');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.equal(sample(metrics, 'ipipe_migrations_total', 'actor="ledger",to="host"'), moves / 2);
    assert.equal(sample(metrics, 'ipipe_migrations_total', 'actor="ledger",to="nic"'), moves / 2);
    assert.equal(sample(metrics, 'ipipe_migration_phase_seconds_count', 'phase="gone"'), moves);
  } finally {
    await admin.close();
    await node.stop();
  }
});
