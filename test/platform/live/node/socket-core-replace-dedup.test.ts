/**
 * Ingress 'core': at-most-once across a core replacement. A request answered by core 0 just before
 * the watchdog replaced it must, when its client retransmits it to the replacement core, be
 * answered from the dedup memory with the very bytes of the first answer — not run again (the
 * ledger's total, a DMO counter, would then count the add twice). The dedup entries and reply
 * bytes live in shared memory the controller hands to every core (shared-request-dedup.ts).
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import type { AnyActorDefinition } from '../../../../src/actor/define-actor.ts';
import { actorId } from '../../../../src/ids.ts';
import {
  decodeErrorBody,
  decodeFrame,
  encodeFrame,
  frameSize,
} from '../../../../src/platform/live/net/wire.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { ledger, runaway } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const LEDGER = 1;
const RUNAWAY = 2;

function request(
  definition: AnyActorDefinition,
  target: number,
  message: unknown,
  clientId: number,
  requestId: number,
): Uint8Array {
  const payload = definition.messages.encode(message as never);
  const bytes = new Uint8Array(frameSize(payload.length));
  encodeFrame(bytes, { kind: 'request', targetActorId: target, requestId, clientId }, payload);
  return bytes;
}

test('ingress core: a request answered before a core replacement is answered from dedup after it, and runs once', {
  timeout: 25_000,
}, async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    catalog: [
      { id: actorId(LEDGER), name: 'ledger', module: MODULE, exportName: 'ledger' },
      { id: actorId(RUNAWAY), name: 'runaway', module: MODULE, exportName: 'runaway' },
    ],
    hostCores: 1,
    watchdogMs: 200,
    placement: { ledger: 'nic', runaway: 'nic' },
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const socket = dgram.createSocket('udp4');
  try {
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const ask = async (bytes: Uint8Array, tries = 5, timeoutMs = 2_000): Promise<Uint8Array> => {
      for (let attempt = 0; attempt < tries; attempt++) {
        const answer = once(socket, 'message', { signal: AbortSignal.timeout(timeoutMs) }).then(
          ([message]) => new Uint8Array(message as Buffer),
          () => undefined,
        );
        socket.send(bytes, node.address.port, '127.0.0.1');
        const got = await answer;
        if (got !== undefined) return got;
      }
      throw new Error(`no answer after ${tries} tries`);
    };
    const totalOf = (reply: Uint8Array) => {
      const frame = decodeFrame(reply);
      assert.ok(frame.ok && frame.frame.kind === 'reply', 'a reply frame');
      const replies = ledger.replies;
      assert.ok(replies);
      return replies.decode(frame.frame.payload).total;
    };

    // Some traffic first, so the answered request sits among other entries and replies.
    for (let i = 0; i < 50; i++)
      totalOf(await ask(request(ledger, LEDGER, { type: 'add', key: 2, amount: 1, seq: i }, 7, i)));
    const add = request(ledger, LEDGER, { type: 'add', key: 1, amount: 5, seq: 1 }, 42, 1_000);
    const first = await ask(add);
    assert.equal(totalOf(first), 5);

    // Another client makes core 0 spin: the watchdog kills the thread; the warm spare takes over.
    // Sent once: its answer (an error) comes through the replacement core.
    const spin = await ask(request(runaway, RUNAWAY, { type: 'spin' }, 43, 1), 1, 5_000);
    const spinFrame = decodeFrame(spin);
    assert.ok(spinFrame.ok && spinFrame.frame.kind === 'error', 'the spin is answered with an error');
    const body = decodeErrorBody(spinFrame.frame.payload);
    assert.ok(body.ok);
    assert.equal(body.code, 'IPIPE_ERR_ACTOR_DEREGISTERED');
    assert.equal(node.nic.replacedCores, 1, 'core 0 was replaced');

    // The client never saw the first answer (say) and retransmits: the replacement core answers it
    // from the dedup memory, byte for byte, and the handler does not run again.
    const again = await ask(add);
    assert.deepEqual(again, first, 'the retransmission gets the first answer, byte for byte');
    assert.equal(
      totalOf(await ask(request(ledger, LEDGER, { type: 'get', key: 1 }, 42, 1_001))),
      5,
      'the add ran once',
    );
    // An old request from before the replacement, too.
    const old = await ask(request(ledger, LEDGER, { type: 'add', key: 2, amount: 1, seq: 10 }, 7, 10));
    assert.equal(totalOf(old), 11);
    assert.equal(
      totalOf(await ask(request(ledger, LEDGER, { type: 'get', key: 2 }, 7, 1_000))),
      50,
      'none of the early adds ran twice',
    );
    const stats = node.stats();
    assert.equal(stats.duplicates, 2);
    // 50 early adds, the add, the get of key 1, the get of key 2; the spin counted as executed.
    assert.equal(stats.executed['ledger']?.nic, 53);
  } finally {
    socket.close();
    await node.stop(500);
  }
});
