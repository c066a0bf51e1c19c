/**
 * `ctx.replyTo(origin, …)`: an actor keeps the origins of requests it cannot answer yet (encoded in
 * its DMOs, so they would migrate with it) and answers them when a later message completes the
 * work — here a batcher that answers every waiting client when its batch fills.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReplyWithoutOriginError } from '../../src/actor/context.ts';
import { NO_ORIGIN } from '../../src/actor/envelope.ts';
import { defineActor, field, messages } from '../../src/actor/index.ts';
import { DmoVector } from '../../src/dmo/index.ts';
import type { ObjectId } from '../../src/ids.ts';
import { EventKernel } from '../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../src/platform/sim/sim-node.ts';
import { LocalRuntime } from '../../src/runtime/local-runtime.ts';
import { encodeOrigin, readOrigin } from '../../src/runtime/origin-codec.ts';
import { testTiming } from '../platform/sim/test-timing.ts';

const BATCH = 4;

const batcher = defineActor({
  name: 'batcher',
  messages: messages({ add: { value: field.u32() }, bad: {} }),
  replies: messages({ sum: { total: field.u32(), position: field.u32() } }),
  placement: 'any',
  init(ctx) {
    ctx.setRoot('waiting', DmoVector.create(ctx.dmo, { element: 'bytes', elementBytes: 64 }).rootId);
  },
  exec(ctx, message) {
    if (message.type === 'bad') {
      ctx.replyTo(NO_ORIGIN, { type: 'sum', total: 0, position: 0 });
      return;
    }
    const waiting = DmoVector.open(ctx.dmo, ctx.root('waiting') as ObjectId);
    // One fixed-size element per waiting request: [origin bytes …][value]; origins decode by length.
    const entry = new Uint8Array(64);
    const origin = encodeOrigin(ctx.origin);
    entry.set(origin);
    entry[origin.length] = message.value;
    waiting.pushBytes(entry);
    if (waiting.length < BATCH) return;
    let total = 0;
    const held = [];
    for (let i = 0; i < waiting.length; i++) {
      const bytes = waiting.getBytes(i);
      const decoded = readOrigin(bytes, 0);
      assert.ok(decoded);
      total += bytes[decoded.next] as number;
      held.push(decoded.origin);
    }
    waiting.clear();
    held.forEach((origin, position) => {
      ctx.replyTo(origin, { type: 'sum', total, position });
    });
  },
});

test('LocalRuntime: stored origins are answered when the batch fills, each with its own request id', () => {
  const runtime = new LocalRuntime();
  const ref = runtime.spawn(batcher);
  for (let i = 1; i <= BATCH - 1; i++) runtime.request(ref, { type: 'add', value: i }, 100 + i);
  runtime.runUntilIdle();
  assert.equal(runtime.replies.length, 0, 'nobody is answered before the batch fills');
  runtime.request(ref, { type: 'add', value: 10 }, 104);
  runtime.runUntilIdle();
  assert.deepEqual(
    runtime.replies.map((r) => [r.requestId, r.message]),
    [101, 102, 103, 104].map((id, position) => [id, { type: 'sum', total: 16, position }]),
  );
});

test('SimNode: the same actor answers every stored client over the modelled wire', () => {
  const kernel = new EventKernel();
  const node = new SimNode({ timing: testTiming(), kernel });
  const ref = node.register(batcher);
  const answers: { id: number; reply: unknown }[] = [];
  for (let i = 1; i <= BATCH; i++) {
    node.clientSend(ref, { type: 'add', value: i }, (id, _latency, ok, reply) => {
      assert.ok(ok);
      answers.push({ id, reply });
    });
  }
  kernel.run({ untilNs: 10_000_000 });
  assert.equal(answers.length, BATCH);
  assert.deepEqual(
    answers.map((a) => (a.reply as { total: number }).total),
    [10, 10, 10, 10],
  );
});

test('replyTo the none origin is a handler bug: ReplyWithoutOriginError', () => {
  const runtime = new LocalRuntime();
  const ref = runtime.spawn(batcher);
  runtime.request(ref, { type: 'bad' }, 1);
  assert.throws(() => runtime.runUntilIdle(), ReplyWithoutOriginError);
});
