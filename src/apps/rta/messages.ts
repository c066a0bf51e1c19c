/**
 * RTA's message schemas (iPipe §3 "Actors": porting an application means defining its request
 * formats; §5 "The applications": filter → counter → ranker → aggregating ranker).
 *
 *   client ──ingest{tuples}──▶ filter ──keys{source, watermark, (ts, key)…}──▶ counter (by key hash)
 *   client ──advance{wm}────▶ filter ──advance{source, wm}─────────────────▶ every counter
 *   counter ──counts{counter, seq, window, (key, count)…}──▶ ranker (by key hash)   on a timer tick,
 *   counter ──progress{counter, seq, closedThrough}──────▶ every ranker             per closed window
 *   ranker ──ranked{ranker, seq, window, totals, top n}──▶ aggregator  when every counter has
 *   ranker ──progress{ranker, seq, closedThrough}───────▶ aggregator   closed the window
 *   client ──query{window} / windows / status──────▶ aggregator
 *
 * Every actor also takes `configure` (its part of RtaConfig, kept in its DMOs) and answers it with
 * `configured` when someone waits. Stage-to-stage sends carry no origin: only clients get replies.
 * `seq` numbers each link's messages so the receiver applies them in the order sent (in-order.ts).
 * Limits keep every message inside one datagram and one ring slot (≤ 1472 bytes): ingest is
 * bounded by the packet, a `counts` chunk by COUNT_CHUNK_BYTES, a ranking by MAX_TOP_N.
 */

import { field, type MessageOf, messages } from '../../actor/index.ts';
import { MAX_INSTANCES, MAX_PATTERN_BYTES, MAX_TOP_N } from './limits.ts';
import { MAX_HASHTAG_BYTES, MAX_TUPLES_PER_REQUEST, tupleField } from './tuple.ts';

/** Longest instance name (the actor table's limit). */
const instanceName = field.string({ maxBytes: 63 });

/** A key and its count in a window. */
export const countEntryField = field.struct({
  key: field.string({ maxBytes: MAX_HASHTAG_BYTES }),
  count: field.u32(),
});

/** Bytes of one count entry on the wire: u32 length + key + u32 count. */
export function countEntryBytes(keyUtf8Bytes: number): number {
  return 8 + keyUtf8Bytes;
}

/** Most bytes of entries one `counts` message carries (the rest of the window goes in further chunks). */
export const COUNT_CHUNK_BYTES = 1024;
/** Most entries one `counts` message carries. */
export const MAX_COUNT_ENTRIES = 128;

const configured = { configured: { instance: instanceName } } as const;

/** What a client (or the deployment) sends the filter. */
export const filterMessages = messages({
  configure: {
    /** This filter's source index among the filters (0..filters−1). */
    index: field.u16(),
    pattern: field.string({ maxBytes: MAX_PATTERN_BYTES }),
    flags: field.string({ maxBytes: 8 }),
    mode: field.oneOf(['keep-matching', 'drop-matching']),
    /** The counters' instance names, in routing order. */
    counters: field.list(instanceName, { maxItems: MAX_INSTANCES }),
  },
  /** A batch of tuples, in event-time order. */
  ingest: { tuples: field.list(tupleField, { maxItems: MAX_TUPLES_PER_REQUEST }) },
  /** The source promises no tuple older than `watermarkMs` − lateness will follow (Infinity: end of stream). */
  advance: { watermarkMs: field.f64() },
});
export type FilterMessage = MessageOf<typeof filterMessages>;

export const filterReplies = messages({
  ...configured,
  ingested: { received: field.u32(), passed: field.u32() },
  advanced: { watermarkMs: field.f64() },
});
export type FilterReply = MessageOf<typeof filterReplies>;

/** The filter's projection of a tuple: its event time and key. */
export const keyEntryField = field.struct({
  timestampMs: field.f64(),
  key: field.string({ maxBytes: MAX_HASHTAG_BYTES }),
});

export const counterMessages = messages({
  configure: {
    index: field.u16(),
    /** How many sources feed this counter (its watermark is their minimum). */
    filters: field.u16(),
    windowMs: field.f64(),
    slideMs: field.f64(),
    latenessMs: field.f64(),
    tickMs: field.f64(),
    rankers: field.list(instanceName, { maxItems: MAX_INSTANCES }),
  },
  /** Tuples of one filter batch routed here (possibly none), with the batch's watermark. */
  keys: {
    source: field.u16(),
    watermarkMs: field.f64(),
    entries: field.list(keyEntryField, { maxItems: MAX_TUPLES_PER_REQUEST }),
  },
  advance: { source: field.u16(), watermarkMs: field.f64() },
  /**
   * The counter's own timer: close the next window that can close. It carries the work that
   * window takes, measured when the timer was armed (the cost hook sees only the message): pane
   * entries merged into and out of the running window totals, and the totals' size once merged
   * (an upper bound on the count entries sent).
   */
  tick: { mergeEntries: field.u32(), emitEntries: field.u32() },
  stats: {},
});
export type CounterMessage = MessageOf<typeof counterMessages>;

export const counterReplies = messages({
  ...configured,
  counterStats: {
    counted: field.f64(),
    late: field.f64(),
    openPanes: field.u32(),
    closedThroughMs: field.f64(),
    windowsEmitted: field.f64(),
  },
});
export type CounterReply = MessageOf<typeof counterReplies>;

export const rankerMessages = messages({
  configure: {
    index: field.u16(),
    /** How many counters feed this ranker (a window completes when all have closed it). */
    counters: field.u16(),
    topN: field.u8(),
    aggregator: instanceName,
  },
  /** Part of one counter's counts for one window (keys this ranker owns). */
  counts: {
    counter: field.u16(),
    /** Position on the counter → ranker link (in-order.ts): counts and progress share it. */
    seq: field.u32(),
    windowEndMs: field.f64(),
    entries: field.list(countEntryField, { maxItems: MAX_COUNT_ENTRIES }),
  },
  /** The counter has sent everything for every window ending at or before `closedThroughMs`. */
  progress: { counter: field.u16(), seq: field.u32(), closedThroughMs: field.f64() },
  stats: {},
});
export type RankerMessage = MessageOf<typeof rankerMessages>;

export const rankerReplies = messages({
  ...configured,
  rankerStats: {
    openWindows: field.u32(),
    closedThroughMs: field.f64(),
    windowsRanked: field.f64(),
    entriesSorted: field.f64(),
    lateParts: field.f64(),
    /** Messages that arrived ahead of their turn on a link and were held (in-order.ts). */
    reordered: field.f64(),
    duplicates: field.f64(),
  },
});
export type RankerReply = MessageOf<typeof rankerReplies>;

export const aggregatorMessages = messages({
  configure: { rankers: field.u16(), topN: field.u8(), retainWindows: field.u32() },
  /** One ranker's top n of one window, with the window's totals over that ranker's keys. */
  ranked: {
    ranker: field.u16(),
    /** Position on the ranker → aggregator link (in-order.ts): ranked and progress share it. */
    seq: field.u32(),
    windowEndMs: field.f64(),
    totalCount: field.f64(),
    distinctKeys: field.u32(),
    entries: field.list(countEntryField, { maxItems: MAX_TOP_N }),
  },
  progress: { ranker: field.u16(), seq: field.u32(), closedThroughMs: field.f64() },
  /** The global top n of the window ending at `windowEndMs`. */
  query: { windowEndMs: field.f64() },
  /** Completed windows that had data, ending after `afterMs`, ascending, at most `limit` (≤ 128). */
  windows: { afterMs: field.f64(), limit: field.u16() },
  status: {},
});
export type AggregatorMessage = MessageOf<typeof aggregatorMessages>;

/** Most window ends one `windowList` reply carries. */
export const MAX_WINDOWS_PER_REPLY = 128;

export const aggregatorReplies = messages({
  ...configured,
  ranking: {
    windowEndMs: field.f64(),
    /**
     * complete: every ranker has closed the window (no entries: it had no tuples);
     * pending: not yet (entries so far); evicted: older than the retained windows.
     */
    state: field.oneOf(['complete', 'pending', 'evicted']),
    totalCount: field.f64(),
    distinctKeys: field.u32(),
    entries: field.list(countEntryField, { maxItems: MAX_TOP_N }),
  },
  windowList: {
    windowEndsMs: field.list(field.f64(), { maxItems: MAX_WINDOWS_PER_REPLY }),
    more: field.bool(),
  },
  status: {
    closedThroughMs: field.f64(),
    windowsCompleted: field.f64(),
    retained: field.u32(),
    lateReports: field.f64(),
    reordered: field.f64(),
    duplicates: field.f64(),
  },
});
export type AggregatorReply = MessageOf<typeof aggregatorReplies>;
