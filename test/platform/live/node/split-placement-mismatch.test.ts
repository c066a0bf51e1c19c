/**
 * A split node whose two processes disagree about placement (the NIC domain places an actor on the
 * host, the host domain was started without it): the host sends each request for that actor back,
 * and the NIC used to forward it again — a request bouncing between the domains for ever, the
 * client timing out, nothing counted. Now the NIC refuses it with a typed error and counts the
 * drop, and everything else keeps serving.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { connectTcpChannel, listenTcpChannel } from '../../../../src/platform/live/channel/tcp-channel.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { startHostDomain, startNicDomain } from '../../../../src/platform/live/node/live-node.ts';
import { ledger } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

test('split node, placements that disagree: refused with IPIPE_ERR_NODE_PLACEMENT_MISMATCH, counted, the rest served', async () => {
  const catalog = [
    { id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' },
    { id: actorId(2), name: 'echo', module: MODULE, exportName: 'echo' },
  ];
  const common = { catalog, nicCores: 1, hostCores: 1, scheduler: { enableMigration: false } };
  const listener = await listenTcpChannel({ port: 0 });
  const [nicChannel, hostChannel] = await Promise.all([
    listener.accept(),
    connectTcpChannel({ port: listener.port }),
  ]);
  // The host process was started without `--place echo=host`; the NIC process with it.
  const host = await startHostDomain({ ...common, placement: { echo: 'nic' as const } }, hostChannel);
  const nic = await startNicDomain({ ...common, placement: { echo: 'host' as const } }, nicChannel);
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: nic.address.port, timeoutMs: 3_000 });
  const replies = ledger.replies;
  assert.ok(replies);
  try {
    for (let i = 0; i < 3; i++) {
      const startedMs = performance.now();
      await assert.rejects(
        client.request(2, new Uint8Array([0, 3, 0, 0, 0, 7, 8, 9])),
        (error: unknown) =>
          (error as { remoteCode?: string }).remoteCode === 'IPIPE_ERR_NODE_PLACEMENT_MISMATCH',
      );
      // Answered, not timed out: the refusal comes back at once.
      assert.ok(performance.now() - startedMs < 2_000);
    }
    assert.equal(nic.drops.get('placement-mismatch'), 3);
    // The NIC's own actor is untouched.
    const reply: { total: number } = await client.call(1, ledger.messages, replies, {
      type: 'add',
      key: 1,
      amount: 5,
      seq: 1,
    });
    assert.equal(reply.total, 5);
  } finally {
    await client.close();
    await nic.stop();
    await host.stop();
    await Promise.all([nicChannel.close(), hostChannel.close(), listener.close()]);
  }
});
