import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, test } from 'node:test';
import { ConfigError } from '../../../../src/errors.ts';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { RemoteError } from '../../../../src/platform/live/net/errors.ts';
import { encodeFrame, frameSize } from '../../../../src/platform/live/net/wire.ts';
import { LiveNode, type LiveNodeOptions } from '../../../../src/platform/live/node/live-node.ts';
import { encodeOrigin } from '../../../../src/runtime/origin-codec.ts';
import { freeUdpPort } from '../free-port.ts';
import { farLedger, front } from './fixtures/relay-actors.ts';

const MODULE = new URL('./fixtures/relay-actors.ts', import.meta.url).pathname;
const FRONT = 1;
const LEDGER = 2;
const catalog = [
  { id: actorId(FRONT), name: 'front', module: MODULE, exportName: 'front', node: 0 },
  { id: actorId(LEDGER), name: 'ledger-far', module: MODULE, exportName: 'farLedger', node: 1 },
];

let nodes: LiveNode[] = [];
let ports: number[] = [];

before(async () => {
  ports = [await freeUdpPort(), await freeUdpPort()];
  const options = (id: number): LiveNodeOptions => ({
    catalog,
    nodeId: id,
    port: ports[id] as number,
    peers: { [1 - id]: { address: '127.0.0.1', port: ports[1 - id] as number } },
    nicCores: 1,
    hostCores: 1,
  });
  nodes = await Promise.all([LiveNode.start(options(0)), LiveNode.start(options(1))]);
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop(500)));
});

test('a handler sends to an actor on another node; that node answers the client through the first', async () => {
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: ports[0] as number });
  const model = new Map<number, number>();
  try {
    for (let i = 1; i <= 200; i++) {
      const key = i % 4;
      model.set(key, (model.get(key) ?? 0) + i);
      const reply = await client.call(
        FRONT,
        front.messages,
        front.replies as NonNullable<typeof front.replies>,
        {
          type: 'put',
          key,
          amount: i,
          ask: i % 2 === 0,
        },
      );
      assert.deepEqual(reply, { type: 'done', key, total: model.get(key) });
    }
  } finally {
    await client.close();
  }
  const [first, second] = nodes.map((node) => node.stats()) as [
    ReturnType<LiveNode['stats']>,
    ReturnType<LiveNode['stats']>,
  ];
  // Every put crossed to node 1; the 100 asks came back to node 0's front as actor messages …
  assert.equal(first.peer.sent, 200);
  assert.equal(second.peer.received, 200);
  assert.equal(second.peer.sent, 100);
  assert.equal(first.peer.received, 100);
  // … and the 100 the ledger answered itself reached the client through node 0.
  assert.equal(first.peer.relayedReplies, 100);
  // (the scheduler may have moved it to node 1's host meanwhile: count both sides)
  const ran = second.executed['ledger-far'];
  assert.equal((ran?.nic ?? 0) + (ran?.host ?? 0), 200);
  assert.equal(first.executed['ledger-far'], undefined, 'the ledger never ran on node 0');
});

test("a client's request for an actor on another node is refused with where it lives", async () => {
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: ports[0] as number, timeoutMs: 3_000 });
  try {
    await assert.rejects(
      client.call(LEDGER, farLedger.messages, farLedger.replies as NonNullable<typeof farLedger.replies>, {
        type: 'add',
        key: 1,
        amount: 1,
      }),
      (error: unknown) =>
        error instanceof RemoteError &&
        error.remoteCode === 'IPIPE_ERR_ACTOR_UNKNOWN' &&
        error.remoteMessage.includes(`lives on node 1 at 127.0.0.1:${ports[1]}`),
    );
  } finally {
    await client.close();
  }
  assert.ok((nodes[0]?.stats().drops['remote-actor'] ?? 0) >= 1);
});

test('peer frames from strangers and for actors that are not local are dropped and counted', async () => {
  const stranger = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => stranger.bind(0, '127.0.0.1', resolve));
  const payload = new Uint8Array([
    ...encodeOrigin({ kind: 'none' }),
    ...farLedger.messages.encode({ type: 'add', key: 1, amount: 1 }),
  ]);
  const bytes = new Uint8Array(frameSize(payload.length));
  encodeFrame(bytes, { kind: 'peer', targetActorId: LEDGER, requestId: 0, clientId: 0 }, payload);
  await new Promise<void>((resolve) =>
    stranger.send(bytes, ports[1] as number, '127.0.0.1', () => resolve()),
  );
  const before = nodes[1]?.stats().drops['peer-unknown'] ?? 0;
  const deadline = Date.now() + 2_000;
  while ((nodes[1]?.stats().drops['peer-unknown'] ?? 0) === before && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(nodes[1]?.stats().drops['peer-unknown'], 1);
  await new Promise<void>((resolve) => stranger.close(() => resolve()));
});

test('an actor placed on a node no peer address names is refused at start with a ConfigError', async () => {
  await assert.rejects(
    LiveNode.start({ catalog, nodeId: 0, port: 0, nicCores: 1, hostCores: 1 }),
    (error: unknown) =>
      error instanceof ConfigError && /no peer address is configured for node 1/.test(error.message),
  );
});

test('a node whose port is taken fails to start with a ConfigError and leaves no cores running', async () => {
  await assert.rejects(
    LiveNode.start({
      catalog,
      nodeId: 0,
      port: ports[0] as number,
      peers: { 1: { address: '127.0.0.1', port: 9 } },
      nicCores: 1,
      hostCores: 1,
    }),
    (error: unknown) =>
      error instanceof ConfigError && /cannot listen on 127\.0\.0\.1:\d+/.test(error.message),
  );
});
