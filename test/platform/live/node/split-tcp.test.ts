/**
 * A split node (issue 4): the NIC domain and the host domain as separate controllers joined by a
 * TCP channel — how a DPU whose cores run Linux hosts the NIC domain. Requests reach actors on
 * either side, and an actor migrates across the TCP channel both ways with its state.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { connectTcpChannel, listenTcpChannel } from '../../../../src/platform/live/channel/tcp-channel.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { startHostDomain, startNicDomain } from '../../../../src/platform/live/node/live-node.ts';
import { ledger } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

test('NIC and host domains over TCP: requests on both sides, migration both ways', async () => {
  const options = {
    catalog: [
      { id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' },
      { id: actorId(2), name: 'echo', module: MODULE, exportName: 'echo' },
    ],
    nicCores: 1,
    hostCores: 1,
    placement: { echo: 'host' as const },
    scheduler: { enableMigration: false },
  };
  const listener = await listenTcpChannel({ port: 0 });
  const [nicChannel, hostChannel] = await Promise.all([
    listener.accept(),
    connectTcpChannel({ port: listener.port }),
  ]);
  const host = await startHostDomain(options, hostChannel);
  const nic = await startNicDomain(options, nicChannel);
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: nic.address.port, timeoutMs: 3_000 });
  const replies = ledger.replies;
  assert.ok(replies);
  try {
    const echoed = await client.request(2, new Uint8Array([0, 3, 0, 0, 0, 7, 8, 9]));
    assert.deepEqual([...echoed], [0, 3, 0, 0, 0, 7, 8, 9], 'the host-side echo answered through the NIC');
    let total = 0;
    for (let i = 1; i <= 50; i++) {
      const reply: { total: number } = await client.call(1, ledger.messages, replies, {
        type: 'add',
        key: 1,
        amount: i,
        seq: i,
      });
      total += i;
      assert.equal(reply.total, total);
      if (i === 20) assert.equal((await nic.migrate(actorId(1), 'host')).to, 'host');
      if (i === 35) assert.equal((await nic.migrate(actorId(1), 'nic')).to, 'nic');
    }
    assert.deepEqual(nic.executed.get(actorId(1)), { nic: 35, host: 15 });
    assert.equal(host.executed.get(actorId(1)), 15);
    assert.equal(nic.migrations.total, 2);
    assert.ok(nic.migrations.recent().every((m) => m.stateBytes > 0));
  } finally {
    await client.close();
    await nic.stop();
    await host.stop();
    await Promise.all([nicChannel.close(), hostChannel.close(), listener.close()]);
  }
});
