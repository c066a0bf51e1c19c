/**
 * At-most-once through a live node (its request dedup, request-dedup.ts): a retransmitted request
 * is answered from the cache with the very bytes of the first answer and never runs again; the
 * dedup key is the (client id, request id) pair, so another client's request with the same id is
 * a request of its own.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { decodeFrame, encodeFrame, frameSize } from '../../../../src/platform/live/net/wire.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { ledger } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const LEDGER = 1;

function request(message: Parameters<typeof ledger.messages.encode>[0], clientId: number, requestId: number) {
  const payload = ledger.messages.encode(message);
  const bytes = new Uint8Array(frameSize(payload.length));
  encodeFrame(bytes, { kind: 'request', targetActorId: LEDGER, requestId, clientId }, payload);
  return bytes;
}

// Both ingress modes: the controller's dedup, and NIC core 0's when it owns the socket.
for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: a retransmitted request is answered from the cache and runs once; ids are per client`, async () => {
    const node = await LiveNode.start({
      ingress,
      warmSpare: false, // only the watchdog needs it (socket-core.test.ts)
      catalog: [{ id: actorId(LEDGER), name: 'ledger', module: MODULE, exportName: 'ledger' }],
      nicCores: 1,
      hostCores: 1,
      placement: { ledger: 'nic' },
      scheduler: { enableMigration: false },
    });
    assert.equal(node.ingress, ingress);
    const socket = dgram.createSocket('udp4');
    try {
      await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
      const ask = async (bytes: Uint8Array): Promise<Uint8Array> => {
        const answer = once(socket, 'message');
        socket.send(bytes, node.address.port, '127.0.0.1');
        const [message] = (await answer) as [Buffer];
        return new Uint8Array(message);
      };
      const totalOf = (reply: Uint8Array) => {
        const frame = decodeFrame(reply);
        assert.ok(frame.ok && frame.frame.kind === 'reply', 'a reply frame');
        const replies = ledger.replies;
        assert.ok(replies);
        return replies.decode(frame.frame.payload).total;
      };

      const add = request({ type: 'add', key: 1, amount: 5, seq: 1 }, 42, 1_000);
      const first = await ask(add);
      assert.equal(totalOf(first), 5);
      const again = await ask(add);
      assert.deepEqual(again, first, 'the retransmission gets the first answer, byte for byte');
      assert.equal(totalOf(await ask(request({ type: 'get', key: 1 }, 42, 1_001))), 5, 'the add ran once');

      // Another client's request 1 000 is a different request: it runs.
      assert.equal(totalOf(await ask(request({ type: 'add', key: 1, amount: 5, seq: 1 }, 43, 1_000))), 10);

      const stats = node.stats();
      assert.equal(stats.duplicates, 1);
      assert.equal(stats.requests, 4);
      assert.equal(stats.executed['ledger']?.nic, 3);
    } finally {
      socket.close();
      await node.stop();
    }
  });
