/**
 * SCAN across shards (issue 5's wire protocol; actor-cluster.ts `RkvActorClient.scan`): keys are
 * hashed to shards (commands.ts `shardOf`), so one range lies in every shard. The client asks each
 * shard for a page from the same start key and merges them: shard s's page holds every live key
 * of [start, nextₛ) in that shard (or of [start, end) when done), so below the smallest nextₛ —
 * the bound — every shard's keys are all there, and the merged pairs below it, in key order, are
 * the range's. Above the bound a shard may still have keys the page has not seen: those pairs are
 * dropped (the next page asks for them again). The merged page is then cut to the caller's limit
 * and bytes like a shard's (messages.ts MAX_SCAN_PAGE_BYTES).
 *
 * Every shard's page is linearizable at its own point in its shard's log; the merged page is not
 * one snapshot across shards (nor are the pages of one scan; docs/apps/rkv-cluster.md).
 */

import { SCAN_PAIR_OVERHEAD_BYTES } from '../actors/messages.ts';
import { ClusterScanStalledError } from './errors.ts';

/** One key and its value, as a scan returns them. */
export interface RkvPair {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** A scan page: `pairs` in key order; `next` the key the next page starts at, null when done. */
export interface RkvScanPage {
  readonly pairs: readonly RkvPair[];
  readonly next: Uint8Array | null;
}

/** Unsigned byte order (keys sort as the LSM stores them). */
export function compareKeyBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/**
 * Merges one page of every shard, all from the same start key, into one page of at most `limit`
 * pairs and about `maxBytes` (at least one pair when any), in key order (see the header).
 */
export function mergeShardPages(pages: readonly RkvScanPage[], limit: number, maxBytes: number): RkvScanPage {
  let bound: Uint8Array | null = null;
  for (const page of pages) {
    if (page.next !== null && (bound === null || compareKeyBytes(page.next, bound) < 0)) bound = page.next;
  }
  const below = (key: Uint8Array): boolean => bound === null || compareKeyBytes(key, bound) < 0;
  const merged = pages
    .flatMap((page) => page.pairs)
    .filter((pair) => below(pair.key))
    .sort((a, b) => compareKeyBytes(a.key, b.key));
  const pairs: RkvPair[] = [];
  let bytes = 0;
  for (const pair of merged) {
    const size = pair.key.length + pair.value.length + SCAN_PAIR_OVERHEAD_BYTES;
    if (pairs.length >= limit || (pairs.length > 0 && bytes + size > maxBytes))
      return { pairs, next: pair.key };
    pairs.push(pair);
    bytes += size;
  }
  return { pairs, next: bound };
}

/**
 * Throws ClusterScanStalledError when `page` names a next key not past `start`: going on from it
 * would read the same page for ever (every page must move on; messages.ts `scan-page`).
 */
export function assertScanMovesOn(start: Uint8Array, page: RkvScanPage): void {
  if (page.next !== null && compareKeyBytes(page.next, start) <= 0)
    throw new ClusterScanStalledError(start, page.next);
}
