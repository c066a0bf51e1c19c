/**
 * defineActor: every validation error names the actor and says what to fix; defaults
 * (placement 'any', exclusive true, no-op init, no cost) are filled in; the definition is frozen;
 * exec, send and reply are typed from the codecs (checked at compile time).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ActorContext,
  type ActorDefinition,
  type AnyActorDefinition,
  declaredWork,
  defineActor,
  field,
  isActorDefinition,
  messages,
  NO_ORIGIN,
  narrowRef,
  refOf,
  type TimerId,
} from '../../src/actor/index.ts';
import type { DmoHeap } from '../../src/dmo/types.ts';
import { ActorDefinitionError, isIpipeError } from '../../src/errors.ts';
import { actorId } from '../../src/ids.ts';

const counterMessages = messages({
  add: { amount: field.u32() },
  get: {},
  reset: {},
});
const counterReplies = messages({ value: { count: field.u32() } });

const counter = defineActor({
  name: 'counter',
  messages: counterMessages,
  replies: counterReplies,
  exec(ctx, message) {
    switch (message.type) {
      case 'add':
        ctx.log.info({ amount: message.amount }, 'add'); // `amount` is known to be a number here
        break;
      case 'get':
        ctx.reply({ type: 'value', count: 0 });
        break;
      case 'reset':
        break;
    }
  },
  cost(message) {
    return message.type === 'add' ? { instructions: 1200, ipc: 1.4, mpki: 0.6 } : { instructions: 300 };
  },
});

// ---- compile-time checks ------------------------------------------------------------------------

// A definition of any message types fits where tables and runtimes store definitions.
const stored: AnyActorDefinition = counter;
const typed: ActorDefinition<
  { type: 'add'; amount: number } | { type: 'get' } | { type: 'reset' },
  { type: 'value'; count: number }
> = counter;

const pongMessages = messages({ pong: { count: field.u32() }, tick: {} });

// Never called: the bodies only have to (fail to) type-check.
export function handlersAreTyped(): void {
  defineActor({
    name: 'typed-exec',
    messages: counterMessages,
    exec(ctx, message) {
      // @ts-expect-error — `amount` exists only on 'add' messages: narrow on `type` first
      void message.amount;
      if (message.type === 'add') {
        const amount: number = message.amount;
        void amount;
      }
      // @ts-expect-error — an actor without a replies codec cannot reply
      ctx.reply({ type: 'value', count: 1 });
      // @ts-expect-error — timers carry this actor's own messages
      ctx.setTimer(10, { type: 'pong', count: 1 });
    },
  });

  defineActor({
    name: 'sender',
    messages: pongMessages,
    exec(ctx) {
      const counterRef = refOf(counter, actorId(1));
      ctx.send(counterRef, { type: 'add', amount: 1 });
      ctx.send(counterRef, { type: 'get' }, { origin: 'none' });
      // @ts-expect-error — not one of the counter's messages
      ctx.send(counterRef, { type: 'pong', count: 1 });
      // @ts-expect-error — the counter's replies ({ type: 'value' }) are not messages this actor handles
      ctx.send(counterRef, { type: 'get' }, { origin: 'self' });
      const found = narrowRef(ctx.lookup('counter'), counter);
      if (found !== undefined) ctx.send(found, { type: 'reset' });
      // @ts-expect-error — an unnarrowed ref from lookup needs narrowRef first for a request
      ctx.send(ctx.lookup('counter')!, { type: 'get' }, { origin: 'self' });
    },
  });

  // An actor whose messages include the counter's replies may ask it and get the answer back.
  const askerMessages = messages({ value: { count: field.u32() }, start: {} });
  defineActor({
    name: 'asker',
    messages: askerMessages,
    exec(ctx, message) {
      if (message.type === 'start') ctx.send(refOf(counter, actorId(1)), { type: 'get' }, { origin: 'self' });
    },
  });
}

// ---- run-time checks ----------------------------------------------------------------------------

function expectDefinitionError(spec: unknown, ...patterns: RegExp[]): ActorDefinitionError {
  let caught: unknown;
  try {
    defineActor(spec as never);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ActorDefinitionError, `expected ActorDefinitionError, got ${String(caught)}`);
  assert.ok(isIpipeError(caught, 'IPIPE_ERR_ACTOR_INVALID_DEFINITION'));
  for (const pattern of patterns) assert.match(caught.message, pattern);
  return caught;
}

const minimal = { name: 'ok', messages: counterMessages, exec() {} };

/** A context that records what a handler does (no runtime involved). */
function recordingContext<M, R>(): { ctx: ActorContext<M, R>; sent: unknown[]; replies: unknown[] } {
  const sent: unknown[] = [];
  const replies: unknown[] = [];
  const ctx: ActorContext<M, R> = {
    self: actorId(9),
    name: 'probe',
    dmo: {} as DmoHeap, // unused by these handlers
    origin: NO_ORIGIN,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    now: () => 0,
    send: (to: unknown, message: unknown) => {
      sent.push({ to, message });
    },
    reply: (message: R) => {
      replies.push(message);
    },
    replyTo: (_origin, message: R) => {
      replies.push(message);
    },
    setTimer: () => 1 as TimerId,
    cancelTimer: () => false,
    root: () => undefined,
    setRoot() {},
    lookup: () => undefined,
  };
  return { ctx, sent, replies };
}

describe('defineActor', () => {
  it('fills in defaults and freezes the definition', () => {
    const definition = defineActor(minimal);
    assert.equal(definition.placement, 'any');
    assert.equal(definition.exclusive, true);
    assert.equal(definition.replies, undefined);
    assert.equal(definition.hasCost, false);
    assert.equal(definition.cost({ type: 'get' }), undefined);
    assert.doesNotThrow(() => definition.init(recordingContext().ctx));
    assert.ok(Object.isFrozen(definition));
    assert.ok(isActorDefinition(definition));
    assert.ok(!isActorDefinition({ ...definition }), 'a copy is not a validated definition');
    assert.throws(() => {
      (definition as { placement: string }).placement = 'nic';
    }, TypeError);
  });

  it('keeps the given placement, exclusivity and handlers', () => {
    const init = () => {};
    const definition = defineActor({ ...minimal, placement: 'nic', exclusive: false, init });
    assert.equal(definition.placement, 'nic');
    assert.equal(definition.exclusive, false);
    assert.equal(definition.init, init);
    assert.equal(defineActor({ ...minimal, placement: 'host' }).placement, 'host');
    assert.equal(stored.name, 'counter');
    assert.equal(typed.replies, counterReplies);
  });

  it('runs exec with the typed message; reply goes to the context', () => {
    const { ctx, replies } = recordingContext<
      { type: 'add'; amount: number } | { type: 'get' } | { type: 'reset' },
      { type: 'value'; count: number }
    >();
    counter.exec(ctx, { type: 'get' });
    assert.deepStrictEqual(replies, [{ type: 'value', count: 0 }]);
  });

  it('refuses bad names, saying the rule', () => {
    for (const name of [
      'Counter',
      '1counter',
      '',
      'a'.repeat(64),
      'with space',
      'under_score',
      42,
      undefined,
    ]) {
      expectDefinitionError({ ...minimal, name }, /name must match/);
    }
    for (const name of ['a', 'a-b', 'x9', 'a'.repeat(63)])
      assert.equal(defineActor({ ...minimal, name }).name, name);
  });

  it('refuses a missing or non-function exec', () => {
    const { exec: _exec, ...withoutExec } = minimal;
    expectDefinitionError(withoutExec, /actor "ok"/, /exec must be a function/);
    expectDefinitionError({ ...minimal, exec: 'run' }, /exec must be a function/);
  });

  it('refuses codecs not built by messages()', () => {
    expectDefinitionError({ ...minimal, messages: undefined }, /messages must be a codec/);
    expectDefinitionError({ ...minimal, messages: { encode() {}, decode() {} } }, /messages must be a codec/);
    expectDefinitionError({ ...minimal, replies: {} }, /replies must be a codec/);
  });

  it('refuses unknown placements and non-boolean exclusivity', () => {
    expectDefinitionError({ ...minimal, placement: 'gpu' }, /placement must be one of 'nic', 'host', 'any'/);
    expectDefinitionError({ ...minimal, exclusive: 'yes' }, /exclusive must be a boolean/);
  });

  it('refuses non-function init and cost', () => {
    expectDefinitionError({ ...minimal, init: {} }, /init must be a function/);
    expectDefinitionError({ ...minimal, cost: 1200 }, /cost must be a function/);
  });

  it('refuses unknown keys, catching typos', () => {
    expectDefinitionError({ ...minimal, placment: 'nic' }, /unknown key "placment"/);
  });

  it('lists every problem at once', () => {
    const error = expectDefinitionError({ name: 'Bad', messages: null, exec: null }, /actor "Bad"/);
    assert.match(error.message, /name must match.*messages must be a codec.*exec must be a function/);
  });

  it('refuses a non-object spec', () => {
    expectDefinitionError(null, /needs a spec object/);
    expectDefinitionError('counter', /needs a spec object/);
  });

  it('declaredWork validates what the cost hook returns', () => {
    assert.deepStrictEqual(declaredWork(counter, { type: 'add', amount: 1 }), {
      instructions: 1200,
      ipc: 1.4,
      mpki: 0.6,
    });
    assert.equal(declaredWork(defineActor(minimal), { type: 'get' }), undefined);
    const broken = defineActor({ ...minimal, name: 'broken', cost: () => ({ instructions: -1 }) });
    assert.throws(
      () => declaredWork(broken, { type: 'get' }),
      (error: unknown) =>
        error instanceof ActorDefinitionError && /actor "broken".*instructions/.test(error.message),
    );
  });
});
