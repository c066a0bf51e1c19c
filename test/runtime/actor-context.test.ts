import assert from 'node:assert/strict';
import { test } from 'node:test';
import { narrowRef, refOf } from '../../src/actor/actor-ref.ts';
import { messages } from '../../src/actor/codec.ts';
import { field } from '../../src/actor/codec-fields.ts';
import { defineActor } from '../../src/actor/define-actor.ts';
import { isIpipeError } from '../../src/errors.ts';
import type { ActorId, ObjectId } from '../../src/ids.ts';
import { LocalRuntime } from '../../src/runtime/local-runtime.ts';

const counterMessages = messages({
  add: { amount: field.u32() },
  get: {},
  tick: {},
  arm: { delayNs: field.u32() },
  disarm: {},
});
const counterReplies = messages({ value: { total: field.u32(), ticks: field.u32() } });

/** Keeps a total and a tick count in one 8-byte DMO, found again through a root. */
const counter = defineActor({
  name: 'counter',
  messages: counterMessages,
  replies: counterReplies,
  init(ctx) {
    ctx.setRoot('state', ctx.dmo.allocate(8));
  },
  exec(ctx, message) {
    const state = ctx.root('state') as ObjectId;
    switch (message.type) {
      case 'add':
        ctx.dmo.writeU32(state, 0, ctx.dmo.readU32(state, 0) + message.amount);
        break;
      case 'get':
        ctx.reply({ type: 'value', total: ctx.dmo.readU32(state, 0), ticks: ctx.dmo.readU32(state, 4) });
        break;
      case 'tick':
        ctx.dmo.writeU32(state, 4, ctx.dmo.readU32(state, 4) + 1);
        break;
      case 'arm': {
        const id = ctx.setTimer(message.delayNs, { type: 'tick' });
        ctx.setRoot('timer', ctx.dmo.allocate(4));
        ctx.dmo.writeU32(ctx.root('timer') as ObjectId, 0, id);
        break;
      }
      case 'disarm':
        ctx.cancelTimer(ctx.dmo.readU32(ctx.root('timer') as ObjectId, 0) as never);
        break;
    }
  },
});

const frontMessages = messages({
  forward: { amount: field.u32() },
  ask: {},
  value: { total: field.u32(), ticks: field.u32() },
  stray: {},
});
const frontReplies = messages({ answer: { total: field.u32() } });

/** Forwards to the counter (inherit: the counter answers the client) or asks it (self). */
const front = defineActor({
  name: 'front',
  messages: frontMessages,
  replies: frontReplies,
  exec(ctx, message) {
    const target = narrowRef(ctx.lookup('counter'), counter);
    assert.ok(target, 'the counter is registered');
    if (message.type === 'forward') {
      ctx.send(target, { type: 'add', amount: message.amount });
      ctx.send(target, { type: 'get' });
    } else if (message.type === 'ask') {
      ctx.send(target, { type: 'get' }, { origin: 'self' });
    } else if (message.type === 'value') {
      // The counter's answer, handled under the client's origin the front had when it asked.
      assert.equal(ctx.origin.kind, 'client');
      ctx.reply({ type: 'answer', total: message.total * 10 });
    } else {
      ctx.reply({ type: 'answer', total: 0 });
    }
  },
});

function setup() {
  const runtime = new LocalRuntime();
  const counterRef = runtime.spawn(counter);
  const frontRef = runtime.spawn(front);
  return { runtime, counterRef, frontRef };
}

test('a sent message inherits its origin, so a downstream actor answers the client directly', () => {
  const { runtime, frontRef } = setup();
  runtime.request(frontRef, { type: 'forward', amount: 5 }, 41);
  runtime.runUntilIdle();
  assert.equal(runtime.replies.length, 1);
  const [reply] = runtime.replies;
  assert.equal(reply?.requestId, 41);
  assert.deepEqual(reply?.message, { type: 'value', total: 5, ticks: 0 });
  assert.deepEqual(
    counterReplies.decode(reply?.encoded as Uint8Array),
    reply?.message,
    'encoded with the replies codec',
  );
});

test('a request (origin self) returns the answer to the asker, which still answers its client', () => {
  const { runtime, counterRef, frontRef } = setup();
  runtime.tell(counterRef, { type: 'add', amount: 7 });
  runtime.request(frontRef, { type: 'ask' }, 9);
  runtime.runUntilIdle();
  assert.deepEqual(
    runtime.replies.map((r) => [r.requestId, r.from, r.message]),
    [[9, frontRef.id, { type: 'answer', total: 70 }]],
  );
});

test('reply with no one waiting is a typed error', () => {
  const { runtime, frontRef } = setup();
  runtime.tell(frontRef, { type: 'stray' });
  assert.throws(
    () => runtime.runUntilIdle(),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_ACTOR_NO_ORIGIN'),
  );
});

test('timers fire at their due time on the injected clock, and can be cancelled', () => {
  const { runtime, counterRef } = setup();
  runtime.tell(counterRef, { type: 'arm', delayNs: 1_000 });
  runtime.advanceTo(999);
  runtime.request(counterRef, { type: 'get' }, 1);
  runtime.advanceTo(1_000);
  runtime.request(counterRef, { type: 'get' }, 2);
  runtime.runUntilIdle();
  assert.deepEqual(
    runtime.replies.map((r) => (r.message as { ticks: number }).ticks),
    [0, 1],
  );
  runtime.tell(counterRef, { type: 'arm', delayNs: 500 });
  runtime.tell(counterRef, { type: 'disarm' });
  runtime.advanceTo(10_000);
  runtime.request(counterRef, { type: 'get' }, 3);
  runtime.runUntilIdle();
  assert.equal(
    (runtime.replies[2]?.message as { ticks: number } | undefined)?.ticks,
    1,
    'the cancelled timer never fired',
  );
});

test('state, roots and pending timers survive a relocation (the state half of migration)', () => {
  const { runtime, counterRef } = setup();
  runtime.tell(counterRef, { type: 'add', amount: 123 });
  runtime.tell(counterRef, { type: 'arm', delayNs: 5_000 });
  runtime.runUntilIdle();
  const rootBefore = runtime.instance(counterRef.id).root('state');
  runtime.relocate(counterRef.id);
  assert.equal(runtime.instance(counterRef.id).root('state'), rootBefore, 'object ids preserved');
  runtime.advanceTo(5_000);
  runtime.request(counterRef, { type: 'get' }, 1);
  runtime.runUntilIdle();
  assert.deepEqual(runtime.replies[0]?.message, { type: 'value', total: 123, ticks: 1 });
});

test("an actor cannot use another actor's object id, even if it learns it", () => {
  const { runtime, counterRef } = setup();
  runtime.tell(counterRef, { type: 'add', amount: 3 });
  runtime.runUntilIdle();
  const stolen = runtime.instance(counterRef.id).root('state') as ObjectId;
  const spyMessages = messages({ peek: { id: field.objectId() } });
  const spy = defineActor({
    name: 'spy',
    messages: spyMessages,
    exec(ctx, message) {
      ctx.dmo.writeU32(message.id, 0, 999_999);
    },
  });
  const spyRef = runtime.spawn(spy);
  runtime.tell(spyRef, { type: 'peek', id: stolen });
  assert.throws(
    () => runtime.runUntilIdle(),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_DMO_FOREIGN_OBJECT'),
  );
  runtime.request(counterRef, { type: 'get' }, 5);
  runtime.runUntilIdle();
  assert.equal(
    (runtime.replies[0]?.message as { total: number } | undefined)?.total,
    3,
    "the victim's state is intact",
  );
});

test('sends are checked: unknown targets and messages that break the schema are typed errors', () => {
  const { runtime, counterRef } = setup();
  const ghost = refOf(counter, 999 as ActorId);
  assert.throws(
    () => runtime.tell(ghost, { type: 'get' }) ?? runtime.runUntilIdle(),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_ACTOR_UNKNOWN'),
  );
  assert.throws(
    () => runtime.tell(counterRef, { type: 'add', amount: -1 }),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_CODEC_ENCODE'),
  );
});
