/**
 * A node stopping while a host core still runs a handler: the drain gives up, the NIC closes its
 * socket, and then the handler's message for another node reaches the NIC. It must be counted as
 * dropped (`socket-closed`), not thrown from inside the ring's listener — node:dgram throws
 * ERR_SOCKET_DGRAM_NOT_RUNNING on a closed socket, which took the whole process down mid-shutdown
 * (found running RKV's actors on live nodes and stopping them with SIGTERM).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode, type LiveNodeOptions } from '../../../../src/platform/live/node/live-node.ts';
import { freeUdpPort } from '../free-port.ts';
import { slowSender } from './fixtures/relay-actors.ts';

const MODULE = new URL('./fixtures/relay-actors.ts', import.meta.url).pathname;
const SLOW = 1;
const catalog = [
  { id: actorId(SLOW), name: 'slow-sender', module: MODULE, exportName: 'slowSender', node: 0 },
  { id: actorId(2), name: 'ledger-far', module: MODULE, exportName: 'farLedger', node: 1 },
];

test('a message for another node that arrives after the socket closed is dropped, not thrown', async () => {
  const ports = [await freeUdpPort(), await freeUdpPort()];
  const options = (id: number): LiveNodeOptions => ({
    catalog,
    nodeId: id,
    port: ports[id] as number,
    peers: { [1 - id]: { address: '127.0.0.1', port: ports[1 - id] as number } },
    nicCores: 1,
    hostCores: 1,
  });
  const nodes = await Promise.all([LiveNode.start(options(0)), LiveNode.start(options(1))]);
  const [first, second] = nodes as [LiveNode, LiveNode];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: ports[0] as number, timeoutMs: 2_000 });
  try {
    // No reply comes (the handler only sends); the call's rejection is not what is tested.
    const call = client.call(SLOW, slowSender.messages, slowSender.messages, { type: 'go', busyMs: 1500 });
    call.catch(() => {});
    // Long enough for the request to reach the host core even on a loaded machine (at 100 ms,
    // under a load average of 16, the handler had sometimes not started: nothing to drop).
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The handler runs for another ~1 s: a 20 ms drain gives up, the NIC stops first.
    await first.stop(20);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(uncaught, [], 'nothing was thrown out of the stopping node');
    assert.equal(first.stats().drops['socket-closed'], 1, JSON.stringify(first.stats().drops));
  } finally {
    process.off('uncaughtException', onUncaught);
    await client.close();
    await first.stop();
    await second.stop();
  }
});
