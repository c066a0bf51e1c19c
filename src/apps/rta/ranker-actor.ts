/**
 * RTA's ranker (iPipe §5, "The applications": "ranker (quicksort, top-n in one DMO)"; Storm's
 * intermediate rankings bolt). It receives, for each window, the counts of the keys it owns from
 * every counter, keeps the window's top n in one DMO object, re-sorting held + incoming entries
 * with quicksort on every chunk, and hands the window's top n to the aggregating ranker once every
 * counter has closed the window.
 *
 * It is RTA's expensive actor: a window closing sends each ranker a burst of count chunks, each a
 * sort. On a loaded NIC those bursts hold cores long enough to starve packet receipt, so its
 * placement is 'any' — the hybrid scheduler pushes it to the host (§4.2), and the migration moves
 * its rankings objects with it.
 *
 * Completeness needs each counter's messages applied in the order sent — a counter's `progress`
 * follows all its chunks for the windows it covers — which the runtime does not promise across
 * migrations; the ranker restores it per link with sequence numbers (in-order.ts). A chunk for a
 * window already handed on would still mean a broken protocol: it is counted in `lateParts` and
 * logged, never silently merged.
 *
 * DMO layout (roots):
 *   config    the configure message (dmo-records.ts)
 *   topology  the aggregator's actor id (one entry)
 *   state     f64 × 6: closedThroughMs, windowsRanked, entriesSorted, lateParts, reordered, duplicates
 *   progress  DmoNumberMap counter index → closedThroughMs
 *   open      DmoNumberMap windowEndMs → id of the window's rankings object (rankings.ts)
 *   inbox, held   the in-order inbox of the counter links (in-order.ts)
 *   links     the sequence numbers of its link to the aggregator
 */

import type { ActorContext } from '../../actor/context.ts';
import { defineActor } from '../../actor/index.ts';
import { DmoNumberMap } from '../../dmo/index.ts';
import type { ObjectId } from '../../ids.ts';
import { rtaAggregator } from './aggregator-actor.ts';
import { rankerWork } from './cost-model.ts';
import { F64Record, loadConfig, lowestProgress, storeConfig, windowsThrough } from './dmo-records.ts';
import { RtaConfigError, RtaNotConfiguredError } from './errors.ts';
import { InOrderInbox, LinkSequencer } from './in-order.ts';
import { MAX_TOP_N } from './limits.ts';
import { type RankerMessage, type RankerReply, rankerMessages, rankerReplies } from './messages.ts';
import { allocateRankings, mergeRankings, readRankings } from './rankings.ts';
import { TopologyTable } from './topology.ts';

type RankerConfigure = Extract<RankerMessage, { type: 'configure' }>;
type LinkMessage = Extract<RankerMessage, { type: 'counts' | 'progress' }>;
type Context = ActorContext<RankerMessage, RankerReply>;

const STATE = {
  closedThroughMs: 0,
  windowsRanked: 1,
  entriesSorted: 2,
  lateParts: 3,
  reordered: 4,
  duplicates: 5,
} as const;
const STATE_SLOTS = 6;

function isConfigure(message: RankerMessage): message is RankerConfigure {
  return message.type === 'configure';
}

function root(ctx: Context, name: string, needed: string): ObjectId {
  const id = ctx.root(name);
  if (id === undefined) throw new RtaNotConfiguredError(ctx.name, needed);
  return id;
}

/** Applies one counter message, in its link's order. */
function apply(
  ctx: Context,
  config: RankerConfigure,
  state: F64Record,
  open: DmoNumberMap,
  message: LinkMessage,
): void {
  const heap = ctx.dmo;
  if (message.type === 'counts') {
    if (message.windowEndMs <= state.get(STATE.closedThroughMs)) {
      state.add(STATE.lateParts, 1);
      ctx.log.warn(
        { counter: message.counter, windowEndMs: message.windowEndMs },
        'counts for a window already ranked; dropped',
      );
      return;
    }
    let id = open.get(message.windowEndMs) as ObjectId | undefined;
    if (id === undefined) {
      id = allocateRankings(heap, message.windowEndMs, config.topN);
      open.set(message.windowEndMs, id);
    }
    let total = 0;
    for (const entry of message.entries) total += entry.count;
    state.add(STATE.entriesSorted, mergeRankings(heap, id, message.entries, total, message.entries.length));
    return;
  }
  const progress = DmoNumberMap.open(heap, root(ctx, 'progress', message.type));
  if (message.closedThroughMs > (progress.get(message.counter) ?? Number.NEGATIVE_INFINITY)) {
    progress.set(message.counter, message.closedThroughMs);
  }
  const throughMs = lowestProgress(progress, config.counters);
  if (!(throughMs > state.get(STATE.closedThroughMs))) return;
  const aggregator = TopologyTable.open(heap, root(ctx, 'topology', message.type)).ref(0, rtaAggregator);
  const links = LinkSequencer.open(heap, root(ctx, 'links', message.type));
  for (const windowEndMs of windowsThrough(open, throughMs)) {
    const id = open.get(windowEndMs) as ObjectId;
    const ranking = readRankings(heap, id);
    ctx.send(
      aggregator,
      {
        type: 'ranked',
        ranker: config.index,
        seq: links.take(0),
        windowEndMs,
        totalCount: ranking.totalCount,
        distinctKeys: ranking.distinctKeys,
        entries: ranking.entries,
      },
      { origin: 'none' },
    );
    heap.free(id);
    open.delete(windowEndMs);
    state.add(STATE.windowsRanked, 1);
  }
  state.set(STATE.closedThroughMs, throughMs);
  ctx.send(
    aggregator,
    { type: 'progress', ranker: config.index, seq: links.take(0), closedThroughMs: throughMs },
    { origin: 'none' },
  );
}

/** The RTA ranker. Register `rta-ranker-<i>` for each ranker the configuration names. */
export const rtaRanker = defineActor({
  name: 'rta-ranker',
  messages: rankerMessages,
  replies: rankerReplies,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    const state = F64Record.allocate(ctx.dmo, STATE_SLOTS);
    state.set(STATE.closedThroughMs, Number.NEGATIVE_INFINITY);
    ctx.setRoot('state', state.id);
    ctx.setRoot('progress', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('open', DmoNumberMap.create(ctx.dmo).rootId);
    const inbox = InOrderInbox.create(ctx.dmo, rankerMessages);
    ctx.setRoot('inbox', inbox.expectedRootId);
    ctx.setRoot('held', inbox.heldRootId);
    ctx.setRoot('links', LinkSequencer.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const heap = ctx.dmo;
    const state = new F64Record(heap, root(ctx, 'state', message.type));
    const open = DmoNumberMap.open(heap, root(ctx, 'open', message.type));
    switch (message.type) {
      case 'configure': {
        if (!(message.topN >= 1 && message.topN <= MAX_TOP_N)) {
          throw new RtaConfigError('ranker.topN', `must be in [1, ${MAX_TOP_N}], got ${message.topN}`);
        }
        if (!(message.counters >= 1)) throw new RtaConfigError('ranker.counters', 'must be at least 1');
        const topology = TopologyTable.resolve(ctx, [message.aggregator], rtaAggregator, 'aggregator');
        const old = ctx.root('topology');
        ctx.setRoot('topology', topology.rootId);
        if (old !== undefined) heap.free(old);
        storeConfig(ctx, rankerMessages, message);
        if (ctx.origin.kind !== 'none') ctx.reply({ type: 'configured', instance: ctx.name });
        return;
      }
      case 'stats':
        if (ctx.origin.kind === 'none') return;
        ctx.reply({
          type: 'rankerStats',
          openWindows: open.size,
          closedThroughMs: state.get(STATE.closedThroughMs),
          windowsRanked: state.get(STATE.windowsRanked),
          entriesSorted: state.get(STATE.entriesSorted),
          lateParts: state.get(STATE.lateParts),
          reordered: state.get(STATE.reordered),
          duplicates: state.get(STATE.duplicates),
        });
        return;
      default: {
        const config = loadConfig(ctx, rankerMessages, isConfigure, message.type);
        const inbox = InOrderInbox.open(
          heap,
          root(ctx, 'inbox', message.type),
          root(ctx, 'held', message.type),
          rankerMessages,
        );
        const outcome = inbox.accept(message.counter, message.seq, message, (next) =>
          apply(ctx, config, state, open, next as LinkMessage),
        );
        if (outcome.held) state.add(STATE.reordered, 1);
        if (outcome.duplicate) state.add(STATE.duplicates, 1);
      }
    }
  },
  cost: rankerWork,
});
