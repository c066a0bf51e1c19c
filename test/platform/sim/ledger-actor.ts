/** A test actor that answers every message: per-key totals in a DMO map, plus a per-key op count. */
import { defineActor, field, messages } from '../../../src/actor/index.ts';
import { DmoNumberMap } from '../../../src/dmo/index.ts';
import type { ObjectId } from '../../../src/ids.ts';

const ledgerMessages = messages({
  add: { key: field.u32(), amount: field.u32(), seq: field.u32() },
  get: { key: field.u32() },
});
const ledgerReplies = messages({ total: { key: field.u32(), total: field.f64(), seq: field.u32() } });

export const ledger = defineActor({
  name: 'ledger',
  messages: ledgerMessages,
  replies: ledgerReplies,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('totals', DmoNumberMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const totals = DmoNumberMap.open(ctx.dmo, ctx.root('totals') as ObjectId);
    if (message.type === 'add') {
      const total = totals.increment(message.key, message.amount);
      ctx.reply({ type: 'total', key: message.key, total, seq: message.seq });
    } else {
      ctx.reply({ type: 'total', key: message.key, total: totals.get(message.key) ?? 0, seq: 0 });
    }
  },
  cost: (message) => ({ instructions: 0, fixedNs: message.type === 'add' ? 3_000 : 1_000 }),
});
