/**
 * A straightforward reference computation of what RTA must report (iPipe §5, "The applications":
 * RTA's output is, per sliding window, the counts of each hashtag and their top n). Plain Maps and
 * Array.prototype.sort over all the tuples at once — no panes, no watermarks, no routing, no
 * quicksort — so the tests compare the distributed pipeline with an independent computation.
 *
 * Assumes no tuple was late (every source sent in event-time order within the lateness bound);
 * the pipeline's counters report their late tuples, and the tests check there were none.
 */

import type { RtaConfig } from './config.ts';
import type { RtaTuple } from './tuple.ts';

/** The expected result of one window. */
export interface ReferenceWindow {
  /** The window is [windowEndMs − windowMs, windowEndMs). */
  readonly windowEndMs: number;
  /** Tuples the filter kept in the window. */
  readonly totalCount: number;
  /** Distinct hashtags in the window. */
  readonly distinctKeys: number;
  /** Every hashtag's count. */
  readonly counts: ReadonlyMap<string, number>;
  /** The top n: count descending, then hashtag ascending (UTF-16 code units). */
  readonly top: readonly { readonly key: string; readonly count: number }[];
}

/** Per window that holds at least one kept tuple (ascending by end), what RTA must report. */
export function referenceRta(
  tuples: readonly RtaTuple[],
  config: Pick<RtaConfig, 'filter' | 'window' | 'topN'>,
): ReferenceWindow[] {
  const regex = new RegExp(config.filter.pattern, config.filter.flags);
  const keepMatching = config.filter.mode === 'keep-matching';
  const { windowMs, slideMs } = config.window;
  const perWindow = new Map<number, Map<string, number>>();
  for (const tuple of tuples) {
    if (regex.test(tuple.text) !== keepMatching) continue;
    // The windows containing t end at the slide multiples in (t, t + windowMs].
    const firstEnd = (Math.floor(tuple.timestampMs / slideMs) + 1) * slideMs;
    for (let end = firstEnd; end <= tuple.timestampMs + windowMs; end += slideMs) {
      let counts = perWindow.get(end);
      if (counts === undefined) {
        counts = new Map();
        perWindow.set(end, counts);
      }
      counts.set(tuple.hashtag, (counts.get(tuple.hashtag) ?? 0) + 1);
    }
  }
  const windows: ReferenceWindow[] = [];
  for (const [windowEndMs, counts] of [...perWindow].sort((a, b) => a[0] - b[0])) {
    let totalCount = 0;
    for (const count of counts.values()) totalCount += count;
    const top = [...counts]
      .map(([key, count]) => ({ key, count }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, config.topN);
    windows.push({ windowEndMs, totalCount, distinctKeys: counts.size, counts, top });
  }
  return windows;
}
