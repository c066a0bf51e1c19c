/**
 * `redefineActor`: an actor with some handlers replaced keeps everything else — name, codecs,
 * placement, exec lock, its init and, when not replaced, its exec and cost (and a definition
 * without a cost hook still has none, so the simulator's default still applies).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages, redefineActor } from '../../src/actor/index.ts';
import { LocalRuntime } from '../../src/runtime/index.ts';

const counterMessages = messages({ add: { amount: field.f64() }, get: {} });
const counterReplies = messages({ total: { amount: field.f64() } });

function counter(withCost: boolean) {
  let total = 0;
  return defineActor({
    name: 'counter',
    messages: counterMessages,
    replies: counterReplies,
    placement: 'host',
    exclusive: true,
    init() {
      total = 0;
    },
    exec(ctx, message) {
      if (message.type === 'add') total += message.amount;
      else ctx.reply({ type: 'total', amount: total });
    },
    ...(withCost ? { cost: () => ({ instructions: 1_000 }) } : {}),
  });
}

test('the shape, init, exec and cost carry over unless replaced', () => {
  const original = counter(true);
  const copy = redefineActor(original, {});
  assert.deepEqual(
    [copy.name, copy.messages, copy.replies, copy.placement, copy.exclusive, copy.hasCost],
    [original.name, original.messages, original.replies, 'host', true, true],
  );
  assert.deepEqual(copy.cost({ type: 'get' }), { instructions: 1_000 });
  const runtime = new LocalRuntime();
  const ref = runtime.spawn(copy);
  runtime.tell(ref, { type: 'add', amount: 2 });
  runtime.request(ref, { type: 'get' }, 1);
  runtime.runUntilIdle();
  assert.deepEqual(runtime.replies[0]?.message, { type: 'total', amount: 2 });
  assert.equal(redefineActor(counter(false), {}).hasCost, false, 'no cost hook stays no cost hook');
});

test('a replaced exec wraps the original; a replaced cost answers instead', () => {
  const original = counter(true);
  const seen: string[] = [];
  const copy = redefineActor(original, {
    exec: (ctx, message) => {
      seen.push(message.type);
      original.exec(ctx, message.type === 'add' ? { type: 'add', amount: message.amount * 10 } : message);
    },
    cost: () => ({ instructions: 7 }),
  });
  assert.deepEqual(copy.cost({ type: 'get' }), { instructions: 7 });
  const runtime = new LocalRuntime();
  const ref = runtime.spawn(copy);
  runtime.tell(ref, { type: 'add', amount: 3 });
  runtime.request(ref, { type: 'get' }, 1);
  runtime.runUntilIdle();
  assert.deepEqual(seen, ['add', 'get']);
  assert.deepEqual(runtime.replies[0]?.message, { type: 'total', amount: 30 });
});
