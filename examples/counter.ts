/**
 * The README's example actor: per-key counters in a DMO-backed map. test/examples runs it, so the
 * README's code is known to work.
 */

import { defineActor, field, messages } from '../src/actor/index.ts';
import { DmoNumberMap } from '../src/dmo/index.ts';
import type { ObjectId } from '../src/ids.ts';

const counterMessages = messages({
  add: { key: field.u32(), amount: field.f64() },
  get: { key: field.u32() },
});
const counterReplies = messages({ value: { amount: field.f64() } });

export const counter = defineActor({
  name: 'counter',
  messages: counterMessages,
  replies: counterReplies,
  placement: 'any',
  init(ctx) {
    ctx.setRoot('counts', DmoNumberMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const counts = DmoNumberMap.open(ctx.dmo, ctx.root('counts') as ObjectId);
    if (message.type === 'add') counts.increment(message.key, message.amount);
    else ctx.reply({ type: 'value', amount: counts.get(message.key) ?? 0 });
  },
  cost: () => ({ instructions: 4_000, ipc: 1.2, mpki: 0.9 }),
});
