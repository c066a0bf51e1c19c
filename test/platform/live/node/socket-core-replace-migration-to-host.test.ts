/**
 * Ingress 'core': core 0 dies while an actor is moving from the NIC to the host — after the core
 * prepared the move (its scheduler's own decision) and before the host's LINK_ADOPTED came back.
 * The decision observer runs on the controller between reading the core's OUT_PREPARED and
 * sending the image, so the test kills the core there: a helper process sends the exiter its
 * `exit` (after a request of another client, which the prepared core buffers) and waits while the
 * core dies, then the image leaves. The migration must finish (the actor served by the host), and
 * every request be answered once — the buffered one, lost with the dead core, when its client
 * retransmits it (the replacement forgets the dedup entry of a request that never ran) — and none
 * run twice.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { decodeFrame, encodeFrame, frameSize } from '../../../../src/platform/live/net/wire.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { exiter, staller } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const entry = (id: number, name: string) => ({ id: actorId(id), name, module: MODULE, exportName: name });

/**
 * Sends `frames` in order to the node from another process (this thread's event loop is blocked
 * meanwhile) and returns `waitMs` after the last left.
 */
function sendFromElsewhereAndWait(frames: readonly Uint8Array[], port: number, waitMs: number): void {
  const hex = JSON.stringify(frames.map((frame) => Buffer.from(frame).toString('hex')));
  const script =
    "const s = require('node:dgram').createSocket('udp4');" +
    `const frames = ${hex};` +
    'const next = (i) => i === frames.length ? setTimeout(() => s.close(), ' +
    `${waitMs}) : s.send(Buffer.from(frames[i], 'hex'), ${port}, '127.0.0.1', () => next(i + 1));` +
    'next(0);';
  const result = spawnSync(process.execPath, ['-e', script], { timeout: 10_000 });
  assert.equal(result.status, 0, String(result.stderr));
}

test('ingress core: a NIC -> host migration caught by a core replacement finishes; each request answered once', {
  timeout: 40_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [entry(1, 'staller'), entry(2, 'exiter')],
    hostCores: 1,
    placement: { staller: 'nic', exiter: 'nic' },
    // As socket-core.test.ts: thresholds far below a 2 ms handler, so the scheduler pushes the
    // staller to the host soon after its warm-up.
    scheduler: {
      enableMigration: true,
      enableDowngrade: false,
      enableAutoscale: false,
      meanThreshNs: 100_000,
      tailThreshNs: 400_000,
      pushWarmupCompletions: 8,
      settleNs: 1_000_000,
    },
  });
  const port = node.address.port;
  const exitPayload = exiter.messages.encode({ type: 'exit' });
  const exitFrame = new Uint8Array(frameSize(exitPayload.length));
  encodeFrame(exitFrame, { kind: 'request', targetActorId: 2, requestId: 1, clientId: 999 }, exitPayload);
  // A request of another client that reaches the core after it prepared the move: buffered there,
  // lost with the thread, then retransmitted below — it must run once.
  const bufferedPayload = staller.messages.encode({ type: 'stall', id: 1_000, ms: 1 });
  const bufferedFrame = new Uint8Array(frameSize(bufferedPayload.length));
  encodeFrame(
    bufferedFrame,
    { kind: 'request', targetActorId: 1, requestId: 1, clientId: 998 },
    bufferedPayload,
  );
  let killedDuringMigration = false;
  node.nic.onDecision = (decision) => {
    if (killedDuringMigration || decision.kind !== 'migrate' || decision.to !== 'host') return;
    // OUT_PREPARED was read, the image not yet sent: core 0 dies now.
    assert.equal(node.domainOf(actorId(1)), 'migrating');
    killedDuringMigration = true;
    sendFromElsewhereAndWait([bufferedFrame, exitFrame], port, 300);
  };
  const replies = staller.replies;
  assert.ok(replies);
  const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 500, retries: 10 });
  try {
    let sent = 0;
    const deadline = performance.now() + 20_000;
    while (!killedDuringMigration || node.domainOf(actorId(1)) !== 'host') {
      assert.ok(performance.now() < deadline, `still ${node.domainOf(actorId(1))} after ${sent} requests`);
      const reply: { id: number } = await client.call(1, staller.messages, replies, {
        type: 'stall',
        id: sent,
        ms: 2,
      });
      assert.equal(reply.id, sent, 'each answer is its own request’s');
      sent++;
    }
    assert.equal(node.nic.replacedCores, 1, 'core 0 was replaced');
    for (let i = 0; i < 5; i++, sent++) {
      const reply: { id: number } = await client.call(1, staller.messages, replies, {
        type: 'stall',
        id: sent,
        ms: 1,
      });
      assert.equal(reply.id, sent);
    }
    // The buffered request's client retransmits it: the replacement forgot its entry (it never
    // ran), so it runs now, once, on the host.
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    try {
      let answer: Uint8Array | undefined;
      for (let attempt = 0; attempt < 10 && answer === undefined; attempt++) {
        const got = once(socket, 'message', { signal: AbortSignal.timeout(1_000) }).then(
          ([message]) => new Uint8Array(message as Buffer),
          () => undefined,
        );
        socket.send(bufferedFrame, port, '127.0.0.1');
        answer = await got;
      }
      assert.ok(answer, 'the retransmission of the buffered request is answered');
      const frame = decodeFrame(answer);
      assert.ok(frame.ok && frame.frame.kind === 'reply', 'a reply, not an error');
      assert.deepEqual(replies.decode(frame.frame.payload), { type: 'done', id: 1_000 });
      sent++;
    } finally {
      socket.close();
    }
    const stats = node.stats();
    const migration = stats.migrations.find((m) => m.to === 'host');
    assert.ok(migration, 'the migration to the host finished');
    assert.notEqual(migration.trigger, 'forced');
    assert.equal(stats.drops['stray-image'], undefined);
    const executed = stats.executed['staller'];
    assert.ok(executed && executed.host >= 5, 'served by the host now');
    // Each request ran exactly once, wherever it ran (none lost: each was answered above).
    assert.equal(executed.nic + executed.host, sent, `nic ${executed.nic} + host ${executed.host}`);
  } finally {
    await client.close();
    await node.stop(500);
  }
});
