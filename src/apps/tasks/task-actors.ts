/**
 * Four of the paper's offloaded task kinds (Table 3) as real actors with their state in DMOs —
 * the cast of the showcase. Each does the work its name says (a hash-table cache, a count-min
 * sketch, a quicksort ranker, a naive-Bayes classifier) and declares the work Table 3 measured
 * for it (src/hw/task-kinds.ts), so the simulator charges each core type what the task costs.
 */

import type { HandlerWork } from '../../actor/cost.ts';
import { defineActor, field, messages } from '../../actor/index.ts';
import { DmoHashMap, DmoNumberMap, DmoVector } from '../../dmo/index.ts';
import { TASK_KINDS } from '../../hw/task-kinds.ts';
import type { ObjectId } from '../../ids.ts';

const done = messages({ ok: { value: field.f64() } });

/** Table 3 kv-cache: a hash table of 16-byte keys to values (get / put). */
export const kvCache = defineActor({
  name: 'kv-cache',
  messages: messages({
    get: { key: field.bytes({ maxBytes: 64 }) },
    put: { key: field.bytes({ maxBytes: 64 }), value: field.bytes({ maxBytes: 1024 }) },
  }),
  replies: done,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('table', DmoHashMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const table = DmoHashMap.open(ctx.dmo, ctx.root('table') as ObjectId);
    if (message.type === 'put') {
      table.set(message.key, message.value);
      ctx.reply({ type: 'ok', value: table.size });
    } else ctx.reply({ type: 'ok', value: table.get(message.key)?.length ?? -1 });
  },
  cost: () => TASK_KINDS['kv-cache'],
});

const SKETCH_ROWS = 4;
const SKETCH_WIDTH = 1024;

/** Table 3 flow-monitor: a count-min sketch (4 × 1024 counters in one DMO vector). */
export const flowMonitor = defineActor({
  name: 'flow-monitor',
  messages: messages({ observe: { flow: field.u32() } }),
  replies: done,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    const sketch = DmoVector.create(ctx.dmo, { element: 'u32', initialCapacity: SKETCH_ROWS * SKETCH_WIDTH });
    for (let i = 0; i < SKETCH_ROWS * SKETCH_WIDTH; i++) sketch.push(0);
    ctx.setRoot('sketch', sketch.rootId);
  },
  exec(ctx, message) {
    const sketch = DmoVector.open(ctx.dmo, ctx.root('sketch') as ObjectId);
    let estimate = Number.POSITIVE_INFINITY;
    for (let row = 0; row < SKETCH_ROWS; row++) {
      const index = row * SKETCH_WIDTH + (Math.imul(message.flow ^ (row * 0x9e3779b9), 0x85ebca6b) >>> 22);
      const count = sketch.get(index) + 1;
      sketch.set(index, count);
      estimate = Math.min(estimate, count);
    }
    ctx.reply({ type: 'ok', value: estimate });
  },
  cost: () => TASK_KINDS['flow-monitor'],
});

/** Entries a 1 KB Table 3 top-ranker request ranks (16-byte tuples). */
const RANKER_BASE_ENTRIES = 64;

/**
 * Table 3 top-ranker: counts per key in a DMO map; a `rank` request quicksorts the current
 * counts and answers the top-n. Its cost grows as n·log n of the entries ranked, from Table 3's
 * 34 µs for a 1 KB request's 64 entries — so a ranker over a large window is an expensive,
 * high-dispersion actor, the kind the hybrid scheduler moves to DRR.
 */
export const topRanker = defineActor({
  name: 'top-ranker',
  messages: messages({
    count: { key: field.u32() },
    rank: { entries: field.u32(), top: field.u32() },
  }),
  replies: done,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('counts', DmoNumberMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const counts = DmoNumberMap.open(ctx.dmo, ctx.root('counts') as ObjectId);
    if (message.type === 'count') {
      ctx.reply({ type: 'ok', value: counts.increment(message.key) });
      return;
    }
    const values: number[] = [];
    for (const [, count] of counts.entries()) {
      values.push(count);
      if (values.length >= message.entries) break;
    }
    values.sort((a, b) => b - a);
    ctx.reply({ type: 'ok', value: values[Math.min(message.top, values.length) - 1] ?? 0 });
  },
  cost: (message): HandlerWork => {
    if (message.type === 'count') return TASK_KINDS['kv-cache'];
    const n = Math.max(2, message.entries);
    const scale = (n * Math.log2(n)) / (RANKER_BASE_ENTRIES * Math.log2(RANKER_BASE_ENTRIES));
    const base = TASK_KINDS['top-ranker'];
    return { ...base, instructions: base.instructions * scale };
  },
});

const CLASSES = 4;
const FEATURES = 16;
const BINS = 16;

/** Table 3 flow-classifier: naive Bayes over a 2-D table of log-likelihoods in one DMO. */
export const flowClassifier = defineActor({
  name: 'flow-classifier',
  messages: messages({ classify: { features: field.bytes({ maxBytes: FEATURES }) } }),
  replies: done,
  placement: 'any',
  exclusive: false,
  init(ctx) {
    const table = ctx.dmo.allocate(CLASSES * FEATURES * BINS * 8);
    for (let i = 0; i < CLASSES * FEATURES * BINS; i++) {
      ctx.dmo.writeF64(table, i * 8, -Math.log(2 + ((i * 2654435761) % 97)));
    }
    ctx.setRoot('likelihoods', table);
  },
  exec(ctx, message) {
    const table = ctx.root('likelihoods') as ObjectId;
    let best = 0;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < CLASSES; c++) {
      let score = 0;
      for (let f = 0; f < message.features.length; f++) {
        const bin = (message.features[f] as number) % BINS;
        score += ctx.dmo.readF64(table, ((c * FEATURES + f) * BINS + bin) * 8);
      }
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    ctx.reply({ type: 'ok', value: best });
  },
  cost: () => TASK_KINDS['flow-classifier'],
});
