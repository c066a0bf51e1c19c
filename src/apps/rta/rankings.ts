/**
 * A window's top-n in one DMO object (iPipe §5, "The applications": the ranker keeps "all top-n
 * tuples in one DMO object", so migrating the ranker moves its rankings as one contiguous copy).
 *
 * Layout (little-endian; `capacity` = the configured n):
 *
 *   0   f64  windowEndMs      the window [end − windowMs, end) these counts are for
 *   8   f64  totalCount       sum of every count merged in (all keys, not only the top n)
 *   16  u32  distinctKeys     keys merged in (keys are disjoint between inputs, so this adds up)
 *   20  u32  length           entries held, ≤ capacity
 *   24  u32  capacity
 *   28  u32  (reserved)
 *   32  entries × capacity, each ENTRY_BYTES = 56:
 *         +0 u32 count | +4 u8 key length | +5..+7 pad | +8 48 bytes of UTF-8 key
 *
 * `mergeRankings` is the ranker's one expensive step: read the held entries, append the incoming
 * ones, quicksort the lot by (count desc, key asc) and keep the first n.
 */

import type { DmoHeap } from '../../dmo/types.ts';
import type { ObjectId } from '../../ids.ts';
import { quicksort } from './quicksort.ts';
import { MAX_HASHTAG_BYTES } from './tuple.ts';

/** One ranked key. */
export interface RankedEntry {
  readonly key: string;
  readonly count: number;
}

/** A ranking as read back from its object. */
export interface RankingSnapshot {
  readonly windowEndMs: number;
  readonly totalCount: number;
  readonly distinctKeys: number;
  /** Sorted: count descending, then key ascending. */
  readonly entries: readonly RankedEntry[];
}

export const RANKINGS_HEADER_BYTES = 32;
export const RANKING_ENTRY_BYTES = 8 + MAX_HASHTAG_BYTES;

const AT = { windowEndMs: 0, totalCount: 8, distinctKeys: 16, length: 20, capacity: 24 } as const;

/**
 * The rankers' order: higher count first, then the key in UTF-16 code-unit order. A total order
 * on entries with distinct keys, so every correct sort gives the same ranking.
 */
export function compareRanked(a: RankedEntry, b: RankedEntry): number {
  if (a.count !== b.count) return b.count - a.count;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

const keyEncoder = new TextEncoder();
const keyDecoder = new TextDecoder('utf-8', { fatal: true });

/** Allocates an empty ranking for `windowEndMs` holding up to `capacity` entries. */
export function allocateRankings(heap: DmoHeap, windowEndMs: number, capacity: number): ObjectId {
  const id = heap.allocate(RANKINGS_HEADER_BYTES + capacity * RANKING_ENTRY_BYTES);
  heap.writeF64(id, AT.windowEndMs, windowEndMs);
  heap.writeU32(id, AT.capacity, capacity);
  return id;
}

function readEntries(heap: DmoHeap, id: ObjectId, into: RankedEntry[]): void {
  const length = heap.readU32(id, AT.length);
  const bytes = heap.bytes(id);
  for (let i = 0; i < length; i++) {
    const at = RANKINGS_HEADER_BYTES + i * RANKING_ENTRY_BYTES;
    const keyLength = bytes[at + 4]!;
    into.push({
      count: heap.readU32(id, at),
      key: keyDecoder.decode(bytes.subarray(at + 8, at + 8 + keyLength)),
    });
  }
}

/** The ranking held in object `id`. */
export function readRankings(heap: DmoHeap, id: ObjectId): RankingSnapshot {
  const entries: RankedEntry[] = [];
  readEntries(heap, id, entries);
  return {
    windowEndMs: heap.readF64(id, AT.windowEndMs),
    totalCount: heap.readF64(id, AT.totalCount),
    distinctKeys: heap.readU32(id, AT.distinctKeys),
    entries,
  };
}

/**
 * Merges `incoming` (keys not yet in this ranking) into object `id`: adds `addTotal` and
 * `addDistinct` to the window's totals, quicksorts held + incoming and keeps the top `capacity`.
 * Returns how many entries were sorted (what the cost model charges for).
 */
export function mergeRankings(
  heap: DmoHeap,
  id: ObjectId,
  incoming: readonly RankedEntry[],
  addTotal: number,
  addDistinct: number,
): number {
  const candidates: RankedEntry[] = [];
  readEntries(heap, id, candidates);
  for (const entry of incoming) candidates.push(entry);
  quicksort(candidates, compareRanked);
  const capacity = heap.readU32(id, AT.capacity);
  const kept = Math.min(capacity, candidates.length);
  const bytes = heap.bytes(id);
  for (let i = 0; i < kept; i++) {
    const entry = candidates[i]!;
    const at = RANKINGS_HEADER_BYTES + i * RANKING_ENTRY_BYTES;
    heap.writeU32(id, at, entry.count);
    const written = keyEncoder.encodeInto(
      entry.key,
      bytes.subarray(at + 8, at + 8 + MAX_HASHTAG_BYTES),
    ).written;
    bytes[at + 4] = written;
  }
  heap.writeU32(id, AT.length, kept);
  heap.writeF64(id, AT.totalCount, heap.readF64(id, AT.totalCount) + addTotal);
  heap.writeU32(id, AT.distinctKeys, heap.readU32(id, AT.distinctKeys) + addDistinct);
  return candidates.length;
}
