/**
 * RTA's aggregating ranker (iPipe §5, "The applications": "→ an aggregating ranker"; Storm's total
 * rankings bolt). It merges every ranker's top n of a window into the global top n — keys are
 * disjoint between rankers, so the global top n is the top n of their union — and, once every
 * ranker has closed the window, keeps the result for clients to query.
 *
 * DMO layout (roots):
 *   config    the configure message (dmo-records.ts)
 *   state     f64 × 6: closedThroughMs, windowsCompleted, lateReports, evictedThroughMs, reordered,
 *             duplicates
 *   progress  DmoNumberMap ranker index → closedThroughMs
 *   open      DmoNumberMap windowEndMs → rankings object of a window still being merged
 *   results   DmoNumberMap windowEndMs → rankings object of a completed window (at most
 *             retainWindows; the oldest is freed first)
 *   inbox, held   the in-order inbox of the ranker links (in-order.ts): a ranker's `progress`
 *             is applied only after every `ranked` it sent before it
 */

import type { ActorContext } from '../../actor/context.ts';
import { defineActor } from '../../actor/index.ts';
import { DmoNumberMap } from '../../dmo/index.ts';
import type { ObjectId } from '../../ids.ts';
import { aggregatorWork } from './cost-model.ts';
import { F64Record, loadConfig, lowestProgress, storeConfig, windowsThrough } from './dmo-records.ts';
import { RtaConfigError, RtaNotConfiguredError } from './errors.ts';
import { InOrderInbox } from './in-order.ts';
import { MAX_TOP_N } from './limits.ts';
import {
  type AggregatorMessage,
  type AggregatorReply,
  aggregatorMessages,
  aggregatorReplies,
  MAX_WINDOWS_PER_REPLY,
} from './messages.ts';
import { allocateRankings, mergeRankings, readRankings } from './rankings.ts';

type AggregatorConfigure = Extract<AggregatorMessage, { type: 'configure' }>;
type LinkMessage = Extract<AggregatorMessage, { type: 'ranked' | 'progress' }>;
type Context = ActorContext<AggregatorMessage, AggregatorReply>;

const STATE = {
  closedThroughMs: 0,
  windowsCompleted: 1,
  lateReports: 2,
  evictedThroughMs: 3,
  reordered: 4,
  duplicates: 5,
} as const;
const STATE_SLOTS = 6;

function isConfigure(message: AggregatorMessage): message is AggregatorConfigure {
  return message.type === 'configure';
}

function root(id: ObjectId | undefined, actor: string, needed: string): ObjectId {
  if (id === undefined) throw new RtaNotConfiguredError(actor, needed);
  return id;
}

/** Applies one ranker message, in its link's order. */
function apply(
  ctx: Context,
  config: AggregatorConfigure,
  state: F64Record,
  open: DmoNumberMap,
  results: DmoNumberMap,
  message: LinkMessage,
): void {
  const heap = ctx.dmo;
  if (message.type === 'ranked') {
    if (message.windowEndMs <= state.get(STATE.closedThroughMs)) {
      state.add(STATE.lateReports, 1);
      ctx.log.warn(
        { ranker: message.ranker, windowEndMs: message.windowEndMs },
        'a ranking for a window already completed; dropped',
      );
      return;
    }
    let id = open.get(message.windowEndMs) as ObjectId | undefined;
    if (id === undefined) {
      id = allocateRankings(heap, message.windowEndMs, config.topN);
      open.set(message.windowEndMs, id);
    }
    mergeRankings(heap, id, message.entries, message.totalCount, message.distinctKeys);
    return;
  }
  const progress = DmoNumberMap.open(heap, root(ctx.root('progress'), ctx.name, message.type));
  if (message.closedThroughMs > (progress.get(message.ranker) ?? Number.NEGATIVE_INFINITY)) {
    progress.set(message.ranker, message.closedThroughMs);
  }
  const throughMs = lowestProgress(progress, config.rankers);
  if (!(throughMs > state.get(STATE.closedThroughMs))) return;
  for (const end of windowsThrough(open, throughMs)) {
    results.set(end, open.get(end) as number);
    open.delete(end);
    state.add(STATE.windowsCompleted, 1);
  }
  state.set(STATE.closedThroughMs, throughMs);
  // Keep the newest retainWindows results: free the oldest beyond that.
  while (results.size > config.retainWindows) {
    let oldest = Number.POSITIVE_INFINITY;
    for (const end of results.keys()) if (end < oldest) oldest = end;
    heap.free(results.get(oldest) as ObjectId);
    results.delete(oldest);
    if (oldest > state.get(STATE.evictedThroughMs)) state.set(STATE.evictedThroughMs, oldest);
  }
}

/** The RTA aggregating ranker. Register one instance, `rta-aggregator`. */
export const rtaAggregator = defineActor({
  name: 'rta-aggregator',
  messages: aggregatorMessages,
  replies: aggregatorReplies,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    const state = F64Record.allocate(ctx.dmo, STATE_SLOTS);
    state.set(STATE.closedThroughMs, Number.NEGATIVE_INFINITY);
    state.set(STATE.evictedThroughMs, Number.NEGATIVE_INFINITY);
    ctx.setRoot('state', state.id);
    ctx.setRoot('progress', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('open', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('results', DmoNumberMap.create(ctx.dmo).rootId);
    const inbox = InOrderInbox.create(ctx.dmo, aggregatorMessages);
    ctx.setRoot('inbox', inbox.expectedRootId);
    ctx.setRoot('held', inbox.heldRootId);
  },
  exec(ctx, message) {
    const heap = ctx.dmo;
    const state = new F64Record(heap, root(ctx.root('state'), ctx.name, message.type));
    const open = DmoNumberMap.open(heap, root(ctx.root('open'), ctx.name, message.type));
    const results = DmoNumberMap.open(heap, root(ctx.root('results'), ctx.name, message.type));
    switch (message.type) {
      case 'configure': {
        if (!(message.topN >= 1 && message.topN <= MAX_TOP_N)) {
          throw new RtaConfigError('aggregator.topN', `must be in [1, ${MAX_TOP_N}], got ${message.topN}`);
        }
        if (!(message.rankers >= 1)) throw new RtaConfigError('aggregator.rankers', 'must be at least 1');
        if (!(message.retainWindows >= 1))
          throw new RtaConfigError('aggregator.retainWindows', 'must be at least 1');
        storeConfig(ctx, aggregatorMessages, message);
        if (ctx.origin.kind !== 'none') ctx.reply({ type: 'configured', instance: ctx.name });
        return;
      }
      case 'ranked':
      case 'progress': {
        const config = loadConfig(ctx, aggregatorMessages, isConfigure, message.type);
        const inbox = InOrderInbox.open(
          heap,
          root(ctx.root('inbox'), ctx.name, message.type),
          root(ctx.root('held'), ctx.name, message.type),
          aggregatorMessages,
        );
        const outcome = inbox.accept(message.ranker, message.seq, message, (next) =>
          apply(ctx, config, state, open, results, next as LinkMessage),
        );
        if (outcome.held) state.add(STATE.reordered, 1);
        if (outcome.duplicate) state.add(STATE.duplicates, 1);
        return;
      }
      case 'query': {
        if (ctx.origin.kind === 'none') return;
        const end = message.windowEndMs;
        const done = results.get(end) as ObjectId | undefined;
        const pending = open.get(end) as ObjectId | undefined;
        const id = done ?? pending;
        if (id !== undefined) {
          const ranking = readRankings(heap, id);
          ctx.reply({
            type: 'ranking',
            windowEndMs: end,
            state: done !== undefined ? 'complete' : 'pending',
            totalCount: ranking.totalCount,
            distinctKeys: ranking.distinctKeys,
            entries: ranking.entries,
          });
          return;
        }
        const state_ =
          end <= state.get(STATE.evictedThroughMs)
            ? 'evicted'
            : end <= state.get(STATE.closedThroughMs)
              ? 'complete'
              : 'pending';
        ctx.reply({
          type: 'ranking',
          windowEndMs: end,
          state: state_,
          totalCount: 0,
          distinctKeys: 0,
          entries: [],
        });
        return;
      }
      case 'windows': {
        if (ctx.origin.kind === 'none') return;
        const ends: number[] = [];
        for (const end of results.keys()) if (end > message.afterMs) ends.push(end);
        ends.sort((a, b) => a - b);
        const limit = Math.min(Math.max(1, message.limit), MAX_WINDOWS_PER_REPLY);
        ctx.reply({ type: 'windowList', windowEndsMs: ends.slice(0, limit), more: ends.length > limit });
        return;
      }
      case 'status':
        if (ctx.origin.kind === 'none') return;
        ctx.reply({
          type: 'status',
          closedThroughMs: state.get(STATE.closedThroughMs),
          windowsCompleted: state.get(STATE.windowsCompleted),
          retained: results.size,
          lateReports: state.get(STATE.lateReports),
          reordered: state.get(STATE.reordered),
          duplicates: state.get(STATE.duplicates),
        });
        return;
    }
  },
  cost: aggregatorWork,
});
