/**
 * RTA's counter (iPipe §5, "The applications": "counter (sliding window, periodic emit)"): counts
 * each hashtag it owns over an event-time sliding window and, on a timer, emits every window that
 * can no longer change to the rankers.
 *
 * Panes. A window of `windowMs` slides by `slideMs`; time is cut into panes of one slide, and the
 * window ending at (e + 1)·slide is the sum of panes e − k + 1 … e (k = windowMs / slideMs) — the
 * pane-based sliding window of Storm's rolling counter, over event time so the counts depend only
 * on the tuples, never on when they arrived or how the platform scheduled the counter.
 *
 * Closing. Each source (filter) reports its watermark, the newest event time it has sent; a window
 * can close once every source is `latenessMs` past its end. A tuple that arrives for a window
 * already closed is late: counted in `late` and dropped, so the emitted counts never change after
 * the fact. When something can close, the counter arms one timer (`tickMs`); each tick closes the
 * next window, sends its counts to the rankers as `counts` chunks (keys routed by hash) and tells
 * every ranker how far it has closed (`progress`), and re-arms at once while more can close — one
 * bounded handler per window rather than one long one per backlog, so other requests interleave.
 * With nothing to close no timer is pending, so an idle pipeline is silent and a simulation ends.
 *
 * Running totals. The counter keeps the counts of the last closed window in one DMO hash map
 * (`totals`, Storm's rolling count); closing window e adds pane e and subtracts pane e − k, which
 * then expires (freed), so a close costs O(entries of two panes + keys in the window), not k
 * panes' worth. A window whose totals are empty and which has no pane is skipped for free.
 *
 * DMO layout (roots):
 *   config    the configure message (dmo-records.ts)
 *   topology  the rankers' actor ids (topology.ts)
 *   links     DmoNumberMap ranker index → next sequence number on that link (in-order.ts)
 *   state     f64 × 5: closedThroughMs, timerArmed, counted, late, windowsEmitted
 *   sources   DmoNumberMap source index → watermarkMs
 *   panes     DmoNumberMap pane index (⌊t / slide⌋) → root id of the pane's DmoHashMap
 *   each pane DmoHashMap hashtag (UTF-8) → u32 count (little-endian)
 *   totals    DmoHashMap hashtag → u32 count over the panes of the last closed window
 *             (closedThroughMs / slide − k … closedThroughMs / slide − 1)
 */

import type { ActorContext } from '../../actor/context.ts';
import { defineActor } from '../../actor/index.ts';
import { DmoHashMap, DmoNumberMap } from '../../dmo/index.ts';
import type { DmoHeap } from '../../dmo/types.ts';
import type { ObjectId } from '../../ids.ts';
import { counterWork } from './cost-model.ts';
import { F64Record, loadConfig, storeConfig } from './dmo-records.ts';
import { RtaConfigError, RtaNotConfiguredError } from './errors.ts';
import { LinkSequencer } from './in-order.ts';
import {
  COUNT_CHUNK_BYTES,
  type CounterMessage,
  type CounterReply,
  countEntryBytes,
  counterMessages,
  counterReplies,
  MAX_COUNT_ENTRIES,
  type RankerMessage,
} from './messages.ts';
import { rtaRanker } from './ranker-actor.ts';
import type { RankedEntry } from './rankings.ts';
import { RANKER_ROUTE_SALT, routeKey, TopologyTable } from './topology.ts';
import { MAX_HASHTAG_BYTES } from './tuple.ts';

type CounterConfigure = Extract<CounterMessage, { type: 'configure' }>;
type CountEntry = Extract<RankerMessage, { type: 'counts' }>['entries'][number];

const STATE = { closedThroughMs: 0, timerArmed: 1, counted: 2, late: 3, windowsEmitted: 4 } as const;
const STATE_SLOTS = 5;

const NS_PER_MS = 1_000_000;
const ONE = Uint8Array.of(1, 0, 0, 0);
const keyEncoder = new TextEncoder();
const keyDecoder = new TextDecoder('utf-8', { fatal: true });
/** Scratch for encoding one key (a hashtag is at most MAX_HASHTAG_BYTES). */
const keyScratch = new Uint8Array(MAX_HASHTAG_BYTES);

function isConfigure(message: CounterMessage): message is CounterConfigure {
  return message.type === 'configure';
}

function readU32(bytes: Uint8Array): number {
  return (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24)) >>> 0;
}

function writeU32(bytes: Uint8Array, value: number): void {
  bytes[0] = value & 0xff;
  bytes[1] = (value >>> 8) & 0xff;
  bytes[2] = (value >>> 16) & 0xff;
  bytes[3] = (value >>> 24) & 0xff;
}

/** Rounds `ms` down to a multiple of `slideMs`; ±Infinity stay as they are. */
function floorToSlide(ms: number, slideMs: number): number {
  return Number.isFinite(ms) ? Math.floor(ms / slideMs) * slideMs : ms;
}

function rootOf(id: ObjectId | undefined, actor: string, needed: string): ObjectId {
  if (id === undefined) throw new RtaNotConfiguredError(actor, needed);
  return id;
}

/** The window end every source has passed by `latenessMs`, rounded down to a slide boundary. */
function closableThroughMs(config: CounterConfigure, sources: DmoNumberMap): number {
  let lowest = Number.POSITIVE_INFINITY;
  for (let source = 0; source < config.filters; source++) {
    lowest = Math.min(lowest, sources.get(source) ?? Number.NEGATIVE_INFINITY);
  }
  return floorToSlide(lowest - config.latenessMs, config.slideMs);
}

/** The RTA counter. Register `rta-counter-<i>` for each counter the configuration names. */
export const rtaCounter = defineActor({
  name: 'rta-counter',
  messages: counterMessages,
  replies: counterReplies,
  placement: 'any',
  exclusive: true,
  init(ctx) {
    const state = F64Record.allocate(ctx.dmo, STATE_SLOTS);
    state.set(STATE.closedThroughMs, Number.NEGATIVE_INFINITY);
    ctx.setRoot('state', state.id);
    ctx.setRoot('sources', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('panes', DmoNumberMap.create(ctx.dmo).rootId);
    ctx.setRoot('links', LinkSequencer.create(ctx.dmo).rootId);
    ctx.setRoot('totals', DmoHashMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const heap = ctx.dmo;
    const state = new F64Record(heap, rootOf(ctx.root('state'), ctx.name, message.type));
    if (message.type === 'configure') {
      if (!(message.filters >= 1)) throw new RtaConfigError('counter.filters', 'must be at least 1');
      if (!(message.slideMs > 0 && message.windowMs % message.slideMs === 0 && message.windowMs > 0)) {
        throw new RtaConfigError(
          'counter.windowMs',
          `must be a positive multiple of slideMs (${message.slideMs}), got ${message.windowMs}`,
        );
      }
      if (message.rankers.length === 0)
        throw new RtaConfigError('counter.rankers', 'name at least one ranker');
      const topology = TopologyTable.resolve(ctx, message.rankers, rtaRanker, 'ranker');
      const old = ctx.root('topology');
      ctx.setRoot('topology', topology.rootId);
      if (old !== undefined) heap.free(old);
      storeConfig(ctx, counterMessages, message);
      if (ctx.origin.kind !== 'none') ctx.reply({ type: 'configured', instance: ctx.name });
      return;
    }
    const sources = DmoNumberMap.open(heap, rootOf(ctx.root('sources'), ctx.name, message.type));
    const panes = DmoNumberMap.open(heap, rootOf(ctx.root('panes'), ctx.name, message.type));
    if (message.type === 'stats') {
      if (ctx.origin.kind === 'none') return;
      ctx.reply({
        type: 'counterStats',
        counted: state.get(STATE.counted),
        late: state.get(STATE.late),
        openPanes: panes.size,
        closedThroughMs: state.get(STATE.closedThroughMs),
        windowsEmitted: state.get(STATE.windowsEmitted),
      });
      return;
    }
    const config = loadConfig(ctx, counterMessages, isConfigure, message.type);

    const totals = DmoHashMap.open(heap, rootOf(ctx.root('totals'), ctx.name, message.type));

    if (message.type === 'tick') {
      state.set(STATE.timerArmed, 0);
      const closedMs = state.get(STATE.closedThroughMs);
      const targetMs = closableThroughMs(config, sources);
      if (!(targetMs > closedMs)) return;
      const rankers = TopologyTable.open(heap, rootOf(ctx.root('topology'), ctx.name, 'tick'));
      const links = LinkSequencer.open(heap, rootOf(ctx.root('links'), ctx.name, 'tick'));
      const next = nextWindow(panes, totals, config, closedMs, targetMs);
      let nowClosedMs = targetMs;
      if (next !== undefined) {
        const emitted = closeWindow(
          heap,
          panes,
          totals,
          config,
          next,
          rankers.size,
          (rankerIndex, entries) => {
            ctx.send(
              rankers.ref(rankerIndex, rtaRanker),
              {
                type: 'counts',
                counter: config.index,
                seq: links.take(rankerIndex),
                windowEndMs: (next + 1) * config.slideMs,
                entries,
              },
              { origin: 'none' },
            );
          },
        );
        if (emitted) state.add(STATE.windowsEmitted, 1);
        nowClosedMs = (next + 1) * config.slideMs;
      }
      state.set(STATE.closedThroughMs, nowClosedMs);
      for (let i = 0; i < rankers.size; i++) {
        ctx.send(
          rankers.ref(i, rtaRanker),
          { type: 'progress', counter: config.index, seq: links.take(i), closedThroughMs: nowClosedMs },
          { origin: 'none' },
        );
      }
      // More to close (a backlog, or the end of stream): the next window at once.
      if (targetMs > nowClosedMs) armTick(ctx, state, panes, totals, config, nowClosedMs, targetMs, 0);
      return;
    }

    if (!(message.source < config.filters)) {
      throw new RtaConfigError(
        `${ctx.name}.source`,
        `source ${message.source} is not one of the ${config.filters} filter(s) this counter was configured with`,
      );
    }
    if (message.type === 'keys') {
      const closedMs = state.get(STATE.closedThroughMs);
      const open = new Map<number, DmoHashMap>();
      let counted = 0;
      let late = 0;
      for (const entry of message.entries) {
        if (!(entry.timestampMs >= closedMs)) {
          late++;
          continue;
        }
        const slot = Math.floor(entry.timestampMs / config.slideMs);
        let pane = open.get(slot);
        if (pane === undefined) {
          const paneId = panes.get(slot);
          if (paneId === undefined) {
            pane = DmoHashMap.create(heap);
            panes.set(slot, pane.rootId);
          } else pane = DmoHashMap.open(heap, paneId as ObjectId);
          open.set(slot, pane);
        }
        const keyBytes = keyScratch.subarray(0, keyEncoder.encodeInto(entry.key, keyScratch).written);
        const held = pane.getView(keyBytes);
        if (held === undefined) pane.set(keyBytes, ONE);
        else writeU32(held, readU32(held) + 1);
        counted++;
      }
      state.add(STATE.counted, counted);
      if (late > 0) state.add(STATE.late, late);
    }
    const previous = sources.get(message.source) ?? Number.NEGATIVE_INFINITY;
    if (message.watermarkMs > previous) sources.set(message.source, message.watermarkMs);

    // Arm one tick when a window can close and none is pending.
    const closedMs = state.get(STATE.closedThroughMs);
    const targetMs = closableThroughMs(config, sources);
    if (state.get(STATE.timerArmed) === 0 && targetMs > closedMs) {
      armTick(ctx, state, panes, totals, config, closedMs, targetMs, config.tickMs * NS_PER_MS);
    }
  },
  cost: counterWork,
});

/** Entries of pane `slot` (0 when it has none). */
function paneSize(heap: DmoHeap, panes: DmoNumberMap, slot: number): number {
  const id = panes.get(slot);
  return id === undefined ? 0 : DmoHashMap.open(heap, id as ObjectId).size;
}

/**
 * The index e of the next window to close (it ends at (e + 1)·slide ≤ targetMs), or undefined
 * when no window in (closedMs, targetMs] has data. With running totals the next window is simply
 * the one after the last closed; with empty totals every pane is at or after closedMs (a late
 * tuple is refused, and the panes of the closed windows were subtracted), so the windows before
 * the first pane hold nothing and are skipped.
 */
function nextWindow(
  panes: DmoNumberMap,
  totals: DmoHashMap,
  config: CounterConfigure,
  closedMs: number,
  targetMs: number,
): number | undefined {
  let window: number;
  if (totals.size > 0) window = closedMs / config.slideMs;
  else {
    let first = Number.POSITIVE_INFINITY;
    for (const slot of panes.keys()) if (slot < first) first = slot;
    if (first === Number.POSITIVE_INFINITY) return undefined;
    window = first;
  }
  return (window + 1) * config.slideMs <= targetMs ? window : undefined;
}

/**
 * Arms the tick that closes the next window, after `delayNs`, declaring that window's work in the
 * message (see `tick` in messages.ts). With no window holding data the tick only moves the
 * closed mark (and costs a small handler).
 */
function armTick(
  ctx: ActorContext<CounterMessage, CounterReply>,
  state: F64Record,
  panes: DmoNumberMap,
  totals: DmoHashMap,
  config: CounterConfigure,
  closedMs: number,
  targetMs: number,
  delayNs: number,
): void {
  const heap = ctx.dmo;
  const next = nextWindow(panes, totals, config, closedMs, targetMs);
  let mergeEntries = 0;
  let emitEntries = 0;
  if (next !== undefined) {
    const added = paneSize(heap, panes, next);
    mergeEntries = added + paneSize(heap, panes, next - config.windowMs / config.slideMs);
    emitEntries = totals.size + added;
  }
  ctx.setTimer(delayNs, { type: 'tick', mergeEntries, emitEntries });
  state.set(STATE.timerArmed, 1);
}

/** Adds (sign 1) or subtracts (sign −1) pane `slot` into the totals; a count reaching 0 is deleted. */
function mergePane(heap: DmoHeap, panes: DmoNumberMap, totals: DmoHashMap, slot: number, sign: 1 | -1): void {
  const id = panes.get(slot);
  if (id === undefined) return;
  const pane = DmoHashMap.open(heap, id as ObjectId);
  for (const [key, value] of pane.entries()) {
    const count = readU32(value);
    const held = totals.getView(key);
    if (sign === 1) {
      if (held === undefined) totals.set(key, value);
      else writeU32(held, readU32(held) + count);
    } else if (held !== undefined) {
      const left = readU32(held) - count;
      if (left === 0) totals.delete(key);
      else writeU32(held, left);
    }
  }
}

/**
 * Closes window `window` (panes window − k + 1 … window): adds its newest pane to the running
 * totals, subtracts and frees the pane that just left it, and sends the totals to the rankers in
 * chunks. Returns whether the window had any data.
 */
function closeWindow(
  heap: DmoHeap,
  panes: DmoNumberMap,
  totals: DmoHashMap,
  config: CounterConfigure,
  window: number,
  rankerCount: number,
  send: (rankerIndex: number, entries: CountEntry[]) => void,
): boolean {
  const expired = window - config.windowMs / config.slideMs;
  mergePane(heap, panes, totals, window, 1);
  mergePane(heap, panes, totals, expired, -1);
  const expiredId = panes.get(expired);
  if (expiredId !== undefined) {
    DmoHashMap.open(heap, expiredId as ObjectId).destroy();
    panes.delete(expired);
  }
  if (totals.size === 0) return false;
  const perRanker: RankedEntry[][] = Array.from({ length: rankerCount }, () => []);
  for (const [keyBytes, value] of totals.entries()) {
    const key = keyDecoder.decode(keyBytes);
    perRanker[routeKey(key, RANKER_ROUTE_SALT, rankerCount)]!.push({ key, count: readU32(value) });
  }
  for (let ranker = 0; ranker < rankerCount; ranker++) {
    let chunk: CountEntry[] = [];
    let chunkBytes = 0;
    for (const entry of perRanker[ranker]!) {
      const bytes = countEntryBytes(keyEncoder.encodeInto(entry.key, keyScratch).written);
      if (chunk.length > 0 && (chunkBytes + bytes > COUNT_CHUNK_BYTES || chunk.length >= MAX_COUNT_ENTRIES)) {
        send(ranker, chunk);
        chunk = [];
        chunkBytes = 0;
      }
      chunk.push(entry);
      chunkBytes += bytes;
    }
    if (chunk.length > 0) send(ranker, chunk);
  }
  return true;
}
