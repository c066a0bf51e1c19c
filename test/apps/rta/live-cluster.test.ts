/**
 * RTA across two live node processes (filters and aggregator on node 0, counters and rankers on
 * node 1): every tuple crosses between processes twice, and the windows still equal the reference.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { rtaWorkload } from '../../../src/apps/rta/index.ts';
import { driveRta, RtaClusterClient, rtaClusterSpec } from '../../../src/apps/rta/live-cluster.ts';
import { LocalCluster } from '../../../src/platform/live/cluster/launch.ts';
import { freeUdpPort } from '../../platform/live/free-port.ts';

test('RTA on a two-process cluster: every window equals the reference', async () => {
  const workload = rtaWorkload({
    config: {
      counters: 2,
      rankers: 2,
      window: { windowMs: 2_000, slideMs: 500, latenessMs: 2_000, tickMs: 2 },
    },
    packetBytes: 512,
    seed: 17,
  });
  const spec = rtaClusterSpec(workload, {
    nodes: [
      { id: 0, address: '127.0.0.1', port: await freeUdpPort(), nicCores: 1, hostCores: 1 },
      { id: 1, address: '127.0.0.1', port: await freeUdpPort(), nicCores: 1, hostCores: 1 },
    ],
  });
  const onNode1 = spec.actors.filter((a) => a.node === 1).map((a) => a.name);
  assert.ok(onNode1.some((n) => n.includes('counter')) && onNode1.some((n) => n.includes('ranker')));
  const file = join(mkdtempSync(join(tmpdir(), 'ipipe-rta-')), 'cluster.json');
  writeFileSync(file, JSON.stringify(spec));
  const cluster = await LocalCluster.launch({ file, spec });
  const client = await RtaClusterClient.connect(spec, workload);
  try {
    await client.configure();
    const tuples = workload.generator().takeUntil(3_000);
    const result = await driveRta(client, workload, tuples, 4);
    assert.ok(result.windows > 0, 'windows were reported');
    assert.deepEqual(result.mismatches, []);
    assert.equal(result.tuples, tuples.length);
  } finally {
    await client.close();
    await cluster.stopAll();
  }
});
