/**
 * RTA's configuration (iPipe §5, "The applications": the filter's pattern, the counters' sliding
 * window, the rankers' n, and how many workers of each kind the topology has).
 *
 * `parseRtaConfig` validates a user's configuration (a partial one is merged onto the defaults)
 * and compiles the filter's regular expression, so a bad pattern is refused at start-up with the
 * pattern and the problem named (RtaFilterPatternError) — not when the first tuple reaches a NIC
 * core. The actors receive their part of it in a `configure` message and keep it in their DMOs.
 */

import { z } from 'zod';
import { RtaConfigError } from './errors.ts';
import {
  DEFAULT_COUNTERS,
  DEFAULT_RANKERS,
  DEFAULT_TOP_N,
  MAX_INSTANCES,
  MAX_PANES_PER_WINDOW,
  MAX_TOP_N,
} from './limits.ts';
import { compileFilterPattern, type FilterMode } from './pattern.ts';

export type { FilterMode };

/** The filter stage: a JavaScript regular expression over each tuple's text. */
export interface RtaFilterConfig {
  /** The pattern source, without slashes. */
  readonly pattern: string;
  /** RegExp flags from `d i m s u v` (not `g` or `y`: they make matching stateful). */
  readonly flags: string;
  readonly mode: FilterMode;
}

/** The counters' event-time sliding window. */
export interface RtaWindowConfig {
  /** Window length, ms; a whole multiple of slideMs. */
  readonly windowMs: number;
  /** Slide (and pane) length, ms: a window ends at every multiple of it. */
  readonly slideMs: number;
  /**
   * How far behind a source's newest tuple another tuple may still arrive and be counted, ms. A
   * window closes once every source has moved this far past its end; later tuples for it are late
   * (counted and dropped).
   */
  readonly latenessMs: number;
  /** How often a counter with closable windows emits them, ms of the platform's clock. */
  readonly tickMs: number;
}

/** The whole application's configuration. */
export interface RtaConfig {
  readonly filter: RtaFilterConfig;
  readonly window: RtaWindowConfig;
  /** Entries in each ranking (1..MAX_TOP_N). */
  readonly topN: number;
  /** Filter instances (sources; each forwards its tuples' watermark to every counter). */
  readonly filters: number;
  readonly counters: number;
  readonly rankers: number;
  /** Completed windows the aggregating ranker keeps for queries (oldest evicted first). */
  readonly retainWindows: number;
}

/** A configuration as a user may write it: any part may be left out. */
export interface RtaConfigInput {
  readonly filter?: Partial<RtaFilterConfig>;
  readonly window?: Partial<RtaWindowConfig>;
  readonly topN?: number;
  readonly filters?: number;
  readonly counters?: number;
  readonly rankers?: number;
  readonly retainWindows?: number;
}

/**
 * The defaults: drop retweets, count hashtags over 10 s windows sliding by 1 s, rank the top 10,
 * one filter feeding two counters and two rankers (the paper runs one worker per server).
 */
export const DEFAULT_RTA_CONFIG: RtaConfig = Object.freeze({
  filter: Object.freeze({ pattern: '^RT @', flags: '', mode: 'drop-matching' as const }),
  window: Object.freeze({ windowMs: 10_000, slideMs: 1_000, latenessMs: 1_000, tickMs: 10 }),
  topN: DEFAULT_TOP_N,
  filters: 1,
  counters: DEFAULT_COUNTERS,
  rankers: DEFAULT_RANKERS,
  retainWindows: 4096,
});

const count = (max: number) => z.number().int().min(1).max(max);
const wholeMs = z
  .number()
  .int()
  .positive()
  .max(2 ** 40);

const configSchema = z
  .object({
    filter: z
      .object({
        pattern: z.string(),
        flags: z.string().max(8),
        mode: z.enum(['keep-matching', 'drop-matching']),
      })
      .strict(),
    window: z
      .object({
        windowMs: wholeMs,
        slideMs: wholeMs,
        latenessMs: z.number().finite().nonnegative(),
        tickMs: z.number().finite().positive().max(3_600_000),
      })
      .strict(),
    topN: count(MAX_TOP_N),
    filters: count(MAX_INSTANCES),
    counters: count(MAX_INSTANCES),
    rankers: count(MAX_INSTANCES),
    retainWindows: count(1_000_000),
  })
  .strict();

/**
 * Validates `input` (an RtaConfigInput, typically parsed from a user's JSON) merged onto `base` (DEFAULT_RTA_CONFIG) and compiles the filter pattern.
 * Throws RtaConfigError naming the first bad field, or RtaFilterPatternError.
 */
export function parseRtaConfig(input: unknown = {}, base: RtaConfig = DEFAULT_RTA_CONFIG): RtaConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RtaConfigError('(config)', 'must be an object like { "filter": { "pattern": "..." } }');
  }
  const given = input as Record<string, unknown>;
  const section = (name: 'filter' | 'window'): Record<string, unknown> => {
    const value = given[name];
    if (value === undefined) return {};
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new RtaConfigError(name, 'must be an object');
    }
    return value as Record<string, unknown>;
  };
  const merged = {
    ...base,
    ...given,
    filter: { ...base.filter, ...section('filter') },
    window: { ...base.window, ...section('window') },
  };
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RtaConfigError(issue?.path.join('.') || '(config)', issue?.message ?? 'invalid');
  }
  const config = parsed.data;
  const { windowMs, slideMs } = config.window;
  if (windowMs % slideMs !== 0) {
    throw new RtaConfigError(
      'window.windowMs',
      `must be a whole multiple of slideMs (${slideMs}), got ${windowMs}`,
    );
  }
  if (windowMs / slideMs > MAX_PANES_PER_WINDOW) {
    throw new RtaConfigError(
      'window.slideMs',
      `a window of ${windowMs} ms would hold ${windowMs / slideMs} slides; at most ${MAX_PANES_PER_WINDOW}`,
    );
  }
  compileFilterPattern(config.filter.pattern, config.filter.flags);
  return Object.freeze({
    ...config,
    filter: Object.freeze({ ...config.filter }),
    window: Object.freeze({ ...config.window }),
  });
}

/** Instance names of every actor the configuration asks for. */
export interface RtaInstanceNames {
  readonly filters: readonly string[];
  readonly counters: readonly string[];
  readonly rankers: readonly string[];
  readonly aggregator: string;
}

/** The instance names RTA registers its actors under (`rta-filter-0`, `rta-counter-1`, ...). */
export function rtaInstanceNames(config: RtaConfig): RtaInstanceNames {
  const names = (kind: string, n: number) => Array.from({ length: n }, (_, i) => `rta-${kind}-${i}`);
  return Object.freeze({
    filters: Object.freeze(names('filter', config.filters)),
    counters: Object.freeze(names('counter', config.counters)),
    rankers: Object.freeze(names('ranker', config.rankers)),
    aggregator: 'rta-aggregator',
  });
}
