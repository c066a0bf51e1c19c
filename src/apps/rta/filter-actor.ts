/**
 * RTA's filter (iPipe §5, "The applications": "filter (pattern matching, stateless)"): the first
 * stage, where client requests land. It matches each tuple's text against the configured regular
 * expression, projects the tuples it keeps to (event time, hashtag), and routes each to the
 * counter that owns its hashtag (topology.ts). Every counter gets a `keys` message per request —
 * empty if no tuple is for it — because the message also carries the batch's watermark, and a
 * counter can only close a window once every source has moved past it.
 *
 * Stateless in the paper's sense: no per-tuple state survives a request. What it keeps in DMOs
 * is its configuration (the configure message) and its topology table, both written once; so it
 * is not exclusive — any number of cores may run it at once.
 *
 * The compiled RegExp is cached in a module-level map keyed by (flags, pattern). That cache is a
 * pure function of the DMO-held configuration, so it is safe on any core, thread or side of a
 * migration: a core that has not seen the pattern compiles it again.
 */

import { defineActor } from '../../actor/index.ts';
import type { ObjectId } from '../../ids.ts';
import { filterWork } from './cost-model.ts';
import { rtaCounter } from './counter-actor.ts';
import { loadConfig, storeConfig } from './dmo-records.ts';
import { RtaNotConfiguredError } from './errors.ts';
import { type CounterMessage, type FilterMessage, filterMessages, filterReplies } from './messages.ts';
import { compileFilterPattern } from './pattern.ts';
import { COUNTER_ROUTE_SALT, routeKey, TopologyTable } from './topology.ts';

type FilterConfigure = Extract<FilterMessage, { type: 'configure' }>;
type KeyEntry = Extract<CounterMessage, { type: 'keys' }>['entries'][number];

const compiled = new Map<string, RegExp>();
/** Patterns cached per thread; a deployment uses one or two, so the bound only stops a leak. */
const MAX_COMPILED = 64;

function patternOf(config: FilterConfigure): RegExp {
  const cacheKey = `${config.flags}\u0000${config.pattern}`;
  let regex = compiled.get(cacheKey);
  if (regex === undefined) {
    regex = compileFilterPattern(config.pattern, config.flags);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(cacheKey, regex);
  }
  return regex;
}

function isConfigure(message: FilterMessage): message is FilterConfigure {
  return message.type === 'configure';
}

/** The RTA filter. Register one instance per source (`rta-filter-<i>`); configure before ingesting. */
export const rtaFilter = defineActor({
  name: 'rta-filter',
  messages: filterMessages,
  replies: filterReplies,
  placement: 'any',
  exclusive: false,
  exec(ctx, message) {
    if (message.type === 'configure') {
      // Refuse a bad pattern before storing anything (the deployment checked it too, at start-up).
      compileFilterPattern(message.pattern, message.flags);
      const topology = TopologyTable.resolve(ctx, message.counters, rtaCounter, 'counter');
      const old = ctx.root('topology');
      ctx.setRoot('topology', topology.rootId);
      if (old !== undefined) ctx.dmo.free(old);
      storeConfig(ctx, filterMessages, message);
      if (ctx.origin.kind !== 'none') ctx.reply({ type: 'configured', instance: ctx.name });
      return;
    }
    const config = loadConfig(ctx, filterMessages, isConfigure, message.type);
    const topologyId = ctx.root('topology');
    if (topologyId === undefined) throw new RtaNotConfiguredError(ctx.name, message.type);
    const counters = TopologyTable.open(ctx.dmo, topologyId as ObjectId);

    if (message.type === 'advance') {
      for (let i = 0; i < counters.size; i++) {
        ctx.send(
          counters.ref(i, rtaCounter),
          { type: 'advance', source: config.index, watermarkMs: message.watermarkMs },
          { origin: 'none' },
        );
      }
      if (ctx.origin.kind !== 'none') ctx.reply({ type: 'advanced', watermarkMs: message.watermarkMs });
      return;
    }

    const regex = patternOf(config);
    const keep = config.mode === 'keep-matching';
    const routed: KeyEntry[][] = Array.from({ length: counters.size }, () => []);
    let watermarkMs = Number.NEGATIVE_INFINITY;
    let passed = 0;
    for (const tuple of message.tuples) {
      // The source's progress counts every tuple, kept or not: filtering must not stall windows.
      if (tuple.timestampMs > watermarkMs) watermarkMs = tuple.timestampMs;
      if (regex.test(tuple.text) !== keep) continue;
      passed++;
      routed[routeKey(tuple.hashtag, COUNTER_ROUTE_SALT, counters.size)]!.push({
        timestampMs: tuple.timestampMs,
        key: tuple.hashtag,
      });
    }
    if (message.tuples.length > 0) {
      for (let i = 0; i < counters.size; i++) {
        ctx.send(
          counters.ref(i, rtaCounter),
          { type: 'keys', source: config.index, watermarkMs, entries: routed[i]! },
          { origin: 'none' },
        );
      }
    }
    if (ctx.origin.kind !== 'none') {
      ctx.reply({ type: 'ingested', received: message.tuples.length, passed });
    }
  },
  cost: filterWork,
});
