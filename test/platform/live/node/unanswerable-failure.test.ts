/**
 * A handler that fails on a message from another actor (or a timer) has no client to answer: the
 * failure used to vanish — an RKV replica whose recovery answer was too large for the ring stayed
 * "recovering" for good with nothing in its log. Now the core logs it (actor, code, message) and
 * the controller counts it as dropped (`handler-failed`); the node keeps serving.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { fragile, fragileReplies, provoker, provokerReplies } from './fixtures/relay-actors.ts';

const MODULE = new URL('./fixtures/relay-actors.ts', import.meta.url).pathname;
const PROVOKER = 1;
const FRAGILE = 2;

test('a failed handler with no client to tell is logged and counted, and the node keeps serving', async () => {
  const node = await LiveNode.start({
    catalog: [
      { id: actorId(PROVOKER), name: 'provoker', module: MODULE, exportName: 'provoker' },
      { id: actorId(FRAGILE), name: 'fragile', module: MODULE, exportName: 'fragile' },
    ],
    nicCores: 1,
    hostCores: 1,
    placement: { provoker: 'nic', fragile: 'nic' },
    scheduler: { enableMigration: false },
  });
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  // The cores are worker threads: their stderr reaches this process's stderr stream.
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: node.address.port, timeoutMs: 2_000 });
  try {
    const sent = await client.call(PROVOKER, provoker.messages, provokerReplies, { type: 'go' });
    assert.equal(sent.type, 'sent');
    const deadline = performance.now() + 3_000;
    while ((node.stats().drops['handler-failed'] ?? 0) === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(node.stats().drops['handler-failed'], 1, JSON.stringify(node.stats().drops));
    while (!written.some((line) => line.includes('fragile: boom')) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const logged = written.find((line) => line.includes('fragile: boom'));
    assert.ok(logged, `no log line for the failure in: ${written.join('')}`);
    assert.match(logged, /"actor":"fragile"/);
    assert.match(logged, /no client to tell/);
    // Still serving: the same actor answers a message that does not fail.
    const fine = await client.call(FRAGILE, fragile.messages, fragileReplies, { type: 'fine' });
    assert.equal(fine.type, 'ok');
  } finally {
    process.stderr.write = write;
    await client.close();
    await node.stop();
  }
});
