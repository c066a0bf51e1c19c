/**
 * Ingress 'core': what a host actor sends a NIC actor survives a replacement of core 0 — once
 * each, in the order it sent it.
 *
 * 1. Per-sender order across a replacement mid-move. `tally` moves NIC → host while `pacer`, on the
 *    host, streams it numbered notes. Core 0 is made to spin in another actor's handler (runaway)
 *    just after it prepared the move, and the image leaves 150 ms later: the notes pacer sent
 *    meanwhile reach the spinning core (never taken), the host adopts tally and holds pacer's newer
 *    notes until LINK_DRAINED, and the core is killed by the watchdog with the adoption's IN_MOVED
 *    untaken. LINK_DRAINED must come after the replacement forwarded those older notes, not at the
 *    replacement (then the held notes ran first: 3 of 3 runs out of order before the fix).
 * 2. A host actor's messages the dying core had taken but not run: `burst` sends runaway its spin
 *    and then tally notes, from one handler; core 0 takes them together and spins in runaway's
 *    handler with the notes queued behind it. They must reach the replacement (they were lost).
 *
 * The hook for 1: the test wraps ChannelLink's `image` (the controller calls it on reading the
 * core's OUT_PREPARED) to start the spin there and send the image later; nothing else changes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { DmoHeap } from '../../../../src/dmo/index.ts';
import { type ActorId, actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { encodeFrame, frameSize } from '../../../../src/platform/live/net/wire.ts';
import { ChannelLink } from '../../../../src/platform/live/node/channel-link.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { runaway } from './fixtures/actors.ts';
import { tally } from './fixtures/order-actors.ts';
import { burst, pacer } from './fixtures/replace-order-actors.ts';

const fixture = (file: string) => new URL(`./fixtures/${file}`, import.meta.url).pathname;
const TALLY = actorId(1);
const SENDER = actorId(2);
const RUNAWAY = actorId(3);
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

/**
 * Sends `frames` in order to the node from another process (this thread's event loop is blocked
 * meanwhile: core 0, a thread of its own, receives them) and returns `waitMs` after the last left.
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

function spinFrame(): Uint8Array {
  const payload = runaway.messages.encode({ type: 'spin' });
  const frame = new Uint8Array(frameSize(payload.length));
  encodeFrame(frame, { kind: 'request', targetActorId: RUNAWAY, requestId: 1, clientId: 997 }, payload);
  return frame;
}

async function startNode(sender: 'pacer' | 'burst', watchdogMs: number): Promise<LiveNode> {
  return LiveNode.start({
    ingress: 'core',
    catalog: [
      { id: TALLY, name: 'tally', module: fixture('order-actors.ts'), exportName: 'tally' },
      { id: SENDER, name: sender, module: fixture('replace-order-actors.ts'), exportName: sender },
      { id: RUNAWAY, name: 'runaway', module: fixture('actors.ts'), exportName: 'runaway' },
    ],
    hostCores: 1,
    watchdogMs,
    placement: { tally: 'nic', runaway: 'nic' },
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
}

type Report = { last: number; disorder: number; count: number };

/** Tally's report once `expected` notes arrived, or once none arrived for a second. */
async function settledReport(client: IpipeClient, expected: number): Promise<Report> {
  const replies = tally.replies;
  assert.ok(replies);
  let report: Report = { last: 0, disorder: 0, count: 0 };
  let stillSinceMs = performance.now();
  for (const deadline = performance.now() + 30_000; performance.now() < deadline; ) {
    const next: Report = await client.call(TALLY, tally.messages, replies, { type: 'report' });
    if (next.count !== report.count) stillSinceMs = performance.now();
    report = next;
    if (report.count >= expected || performance.now() - stillSinceMs > 1_000) break;
    await sleep(20);
  }
  return report;
}

test('ingress core: a host sender’s notes keep their order across a core replacement in the middle of a move to the host', {
  timeout: 60_000,
}, async () => {
  const NOTES = 3_000;
  const node = await startNode('pacer', 500);
  const port = node.address.port;
  const client = await IpipeClient.connect({ host: '127.0.0.1', port, timeoutMs: 2_000, retries: 5 });
  const pacerReplies = pacer.replies;
  assert.ok(pacerReplies);
  const originalImage = ChannelLink.prototype.image;
  let armed = false;
  let imageSentMs = 0;
  /** Core replacements when the host's adoption moved tally's row: must be 0 (the case under test). */
  let replacedAtAdoption = -1;
  let adoptionPoll: NodeJS.Timeout | undefined;
  try {
    ChannelLink.prototype.image = function image(this: ChannelLink, actor: ActorId, heap: DmoHeap): number {
      if (!armed || actor !== TALLY) return originalImage.call(this, actor, heap);
      armed = false;
      // OUT_PREPARED was just read: core 0 buffers tally. It spins in runaway's handler from now…
      sendFromElsewhereAndWait([spinFrame()], port, 100);
      // …while pacer's notes keep coming (untaken by the spinning core) until the image leaves and
      // the host adopts tally; then the host holds pacer's newer notes. The watchdog fires later.
      setTimeout(() => {
        imageSentMs = performance.now();
        originalImage.call(this, actor, heap);
        adoptionPoll = setInterval(() => {
          // The table moves on the host's adoption (domainOf says 'migrating' until OUT_MOVED).
          if (node.nic.table.lookup(TALLY)?.location.domain !== 'host') return;
          replacedAtAdoption = node.nic.replacedCores;
          clearInterval(adoptionPoll);
        }, 1);
      }, 150);
      return 0;
    };
    // 3 notes a millisecond: ~1 s of notes, the move and the replacement inside it.
    await client.call(SENDER, pacer.messages, pacerReplies, { type: 'start', until: NOTES, perTick: 3 });
    const tallyReplies = tally.replies;
    assert.ok(tallyReplies);
    for (const deadline = performance.now() + 5_000; ; ) {
      const { count } = await client.call(TALLY, tally.messages, tallyReplies, { type: 'report' });
      if (count >= 100) break;
      assert.ok(performance.now() < deadline, 'the notes flow');
      await sleep(5);
    }
    armed = true;
    const record = await node.migrate(TALLY, 'host');
    assert.equal(record.to, 'host');
    assert.ok(imageSentMs > 0, 'the image went through the hook');
    assert.equal(node.nic.replacedCores, 1, 'core 0 was replaced during the move');
    assert.equal(replacedAtAdoption, 0, 'the host adopted tally before core 0 was replaced');
    assert.equal(node.domainOf(TALLY), 'host');
    const report = await settledReport(client, NOTES);
    assert.equal(
      report.disorder,
      0,
      `${report.disorder} notes ran after a later one (${JSON.stringify(report)})`,
    );
    assert.equal(report.count, NOTES, `every note ran once (${JSON.stringify(report)})`);
    assert.equal(report.last, NOTES);
  } finally {
    ChannelLink.prototype.image = originalImage;
    clearInterval(adoptionPoll);
    await client.close();
    await node.stop(500);
  }
});

test('ingress core: a host actor’s messages queued in a dying core 0 reach its replacement, once each', {
  timeout: 30_000,
}, async () => {
  const NOTES = 200;
  const node = await startNode('burst', 300);
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 2_000,
    retries: 5,
  });
  const burstReplies = burst.replies;
  assert.ok(burstReplies);
  try {
    await client.call(SENDER, burst.messages, burstReplies, { type: 'go', count: NOTES });
    for (const deadline = performance.now() + 10_000; node.nic.replacedCores < 1; await sleep(10))
      assert.ok(performance.now() < deadline, 'the watchdog replaced core 0');
    const report = await settledReport(client, NOTES);
    assert.equal(report.count, NOTES, `every note ran once (${JSON.stringify(report)})`);
    assert.equal(report.disorder, 0, `${report.disorder} notes ran after a later one`);
    assert.equal(report.last, NOTES);
  } finally {
    await client.close();
    await node.stop(500);
  }
});
