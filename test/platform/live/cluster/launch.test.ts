import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../../../src/errors.ts';
import { MAX_ACTOR_ID } from '../../../../src/ids.ts';
import {
  type ClusterSpec,
  nodeOptionsFor,
  parseClusterSpec,
} from '../../../../src/platform/live/cluster/cluster-file.ts';
import { LocalCluster } from '../../../../src/platform/live/cluster/launch.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LIVE_SCHEDULER_DEFAULTS } from '../../../../src/platform/live/node/live-node.ts';
import { freeUdpPort } from '../free-port.ts';
import { front } from '../node/fixtures/relay-actors.ts';

const MODULE = new URL('../node/fixtures/relay-actors.ts', import.meta.url).pathname;

test('cluster files are validated: duplicate nodes, unknown placements, bad names are refused', () => {
  const nodes = [
    { id: 0, address: '127.0.0.1', port: 9100 },
    { id: 1, address: '127.0.0.1', port: 9101 },
  ];
  const actor = { name: 'front', module: MODULE, exportName: 'front', node: 0 };
  assert.ok(parseClusterSpec({ schemaVersion: 1, nodes, actors: [actor] }));
  const refused = (value: unknown, pattern: RegExp) =>
    assert.throws(
      () => parseClusterSpec(value),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
    );
  refused({ schemaVersion: 1, nodes: [nodes[0], nodes[0]], actors: [actor] }, /node id 0 appears twice/);
  refused(
    { schemaVersion: 1, nodes, actors: [{ ...actor, node: 7 }] },
    /placed on node 7, which the file does not list/,
  );
  refused({ schemaVersion: 1, nodes, actors: [actor, actor] }, /"front" appears twice/);
  refused({ schemaVersion: 1, nodes, actors: [{ ...actor, name: 'Front!' }] }, /cluster\.actors\.0\.name/);
  refused({ schemaVersion: 2, nodes, actors: [actor] }, /cluster\.schemaVersion/);
  refused(
    { schemaVersion: 1, nodes: [{ ...nodes[0], maxFrameBytes: 70_000 }], actors: [actor] },
    /cluster\.nodes\.0\.maxFrameBytes/,
  );
  // Actor ids: 1 … MAX_ACTOR_ID (2^21 − 1, an object id holds its owner's in 21 bits). Above it
  // the file used to pass and the node's start fail with a bare RangeError.
  assert.equal(
    parseClusterSpec({ schemaVersion: 1, nodes, actors: [{ ...actor, id: MAX_ACTOR_ID }] }).actors[0]?.id,
    MAX_ACTOR_ID,
  );
  for (const id of [0, MAX_ACTOR_ID + 1, 2 ** 32])
    refused(
      { schemaVersion: 1, nodes, actors: [{ ...actor, id }] },
      /cluster\.actors\.0\.id: an actor id is an integer in \[1, 2097151\].*leave "id" out/,
    );
});

test('nodeOptionsFor refuses a spec built in code with an unusable actor id as a ConfigError, not a RangeError', () => {
  const spec: ClusterSpec = {
    schemaVersion: 1,
    nodes: [{ id: 0, address: '127.0.0.1', port: 9100 }],
    actors: [{ name: 'front', module: MODULE, exportName: 'front', node: 0, id: MAX_ACTOR_ID + 1 }],
  };
  assert.throws(
    () => nodeOptionsFor(spec, 0),
    (e: unknown) => e instanceof ConfigError && /cluster\.actors\.0\.id: .*got 2097152/.test(e.message),
  );
});

test("a node's actor regions: maxActors must hold every actor placed on it, regions sized sanely, both reach LiveNode", () => {
  const node = { id: 0, address: '127.0.0.1', port: 9100 };
  const actors = Array.from({ length: 33 }, (_, i) => ({
    name: `a${i}`,
    module: MODULE,
    exportName: 'front',
    node: 0,
  }));
  const refused = (value: unknown, pattern: RegExp) =>
    assert.throws(
      () => parseClusterSpec(value),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
    );
  // 33 actors do not fit LiveNode's default 32 regions: refused up front, saying what to set.
  refused(
    { schemaVersion: 1, nodes: [node], actors },
    /node 0 runs 33 actors but its DMO domains hold 32 actor regions each \(the default\): set "maxActors" on the node to at least 33/,
  );
  refused({ schemaVersion: 1, nodes: [{ ...node, maxActors: 32 }], actors }, /at least 33/);
  const spec = parseClusterSpec({
    schemaVersion: 1,
    nodes: [{ ...node, maxActors: 40, regionBytes: 1 << 20 }],
    actors,
  });
  const options = nodeOptionsFor(spec, 0);
  assert.equal(options.maxActors, 40);
  assert.equal(options.regionBytes, 1 << 20);
  const plain = nodeOptionsFor(parseClusterSpec({ schemaVersion: 1, nodes: [node], actors: [actors[0]] }), 0);
  assert.ok(!('maxActors' in plain) && !('regionBytes' in plain), "no setting: LiveNode's defaults");
  refused(
    { schemaVersion: 1, nodes: [{ ...node, regionBytes: 1000 }], actors: [actors[0]] },
    /cluster\.nodes\.0\.regionBytes/,
  );
  refused(
    { schemaVersion: 1, nodes: [{ ...node, regionBytes: 1030 }], actors: [actors[0]] },
    /multiple of 16/,
  );
  refused(
    { schemaVersion: 1, nodes: [{ ...node, maxActors: 0 }], actors: [actors[0]] },
    /cluster\.nodes\.0\.maxActors/,
  );
  refused(
    { schemaVersion: 1, nodes: [{ ...node, maxActors: 2048, regionBytes: 4 << 20 }], actors: [actors[0]] },
    /2048 regions \(maxActors\) of 4194304 bytes \(regionBytes\) exceed the 4 GiB/,
  );
});

test('a node with large frames gets core rings that hold a full queue of them', () => {
  const actor = { name: 'front', module: MODULE, exportName: 'front', node: 0 };
  const spec = parseClusterSpec({
    schemaVersion: 1,
    nodes: [
      { id: 0, address: '127.0.0.1', port: 9100, maxFrameBytes: 65_000 },
      { id: 1, address: '127.0.0.1', port: 9101 },
    ],
    actors: [actor],
  });
  const large = nodeOptionsFor(spec, 0);
  assert.equal(large.maxFrameBytes, 65_000);
  const depth = LIVE_SCHEDULER_DEFAULTS.coreQueueDepth ?? 1;
  const ring = large.ringBytes ?? 0;
  assert.ok(ring >= 2 * depth * (65_000 + 256), `ring ${ring} B`);
  assert.equal(ring & (ring - 1), 0, 'a power of two');
  const plain = nodeOptionsFor(spec, 1);
  assert.equal(plain.maxFrameBytes, undefined, 'the default frame size stays the default');
  assert.equal(plain.ringBytes, undefined);
});

test('a two-process cluster serves across nodes, survives a node being killed, and serves again after its restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-cluster-'));
  const spec: ClusterSpec = parseClusterSpec({
    schemaVersion: 1,
    nodes: [
      { id: 0, address: '127.0.0.1', port: await freeUdpPort(), nicCores: 1, hostCores: 1 },
      { id: 1, address: '127.0.0.1', port: await freeUdpPort(), nicCores: 1, hostCores: 1 },
    ],
    actors: [
      { name: 'front', module: MODULE, exportName: 'front', node: 0 },
      { name: 'ledger-far', module: MODULE, exportName: 'farLedger', node: 1 },
    ],
  });
  const file = join(dir, 'cluster.json');
  writeFileSync(file, JSON.stringify(spec));
  const cluster = await LocalCluster.launch({ file, spec });
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: spec.nodes[0]?.port as number,
    timeoutMs: 300,
    retries: 1,
  });
  const put = (amount: number) =>
    client.call(1, front.messages, front.replies as NonNullable<typeof front.replies>, {
      type: 'put',
      key: 1,
      amount,
      ask: false,
    });
  try {
    assert.equal(cluster.nodes.length, 2);
    assert.notEqual(cluster.node(0)?.pid, cluster.node(1)?.pid);
    assert.deepEqual(
      cluster.node(1)?.banner.actors.map((a) => a.name),
      ['ledger-far'],
    );
    assert.deepEqual(await put(5), { type: 'done', key: 1, total: 5 });
    assert.deepEqual(await put(2), { type: 'done', key: 1, total: 7 });
    await cluster.kill(1);
    await assert.rejects(put(1), /timed out|timeout/i, 'no answer while the ledger node is down');
    await cluster.start(1);
    // The restarted ledger has no persistence: it starts from zero, and the node serves again.
    assert.deepEqual(await put(3), { type: 'done', key: 1, total: 3 });
  } finally {
    await client.close();
    await cluster.stopAll();
  }
  for (const node of cluster.nodes) assert.equal(await node.exited, 0, `node ${node.nodeId} stopped cleanly`);
});
