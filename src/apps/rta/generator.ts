/**
 * A seeded generator of tweet-like tuples (iPipe §5, "The applications": RTA runs on tuples from a
 * Twitter data set; this stands in for it when no data set is given).
 *
 * Popularity. Hashtags are ranked; rank k is drawn with Zipf probability ∝ (k + 1)^−s (the
 * project's rejection-inversion ZipfSampler, s = 0.99 by default, the skew the paper uses for
 * keys). A permutation maps ranks to hashtags, and it drifts: every `driftEveryMs` of event time
 * `driftSwaps` random hashtags are swapped into random places among the top `driftTopRanks` ranks
 * — a tail hashtag suddenly trending — so the top-n the pipeline reports changes over time the
 * way a real trending list does, and a ranker that stopped updating would be caught by a test.
 *
 * Time. Tuples arrive as a Poisson process of `tuplesPerSecond` in event time, from `startMs`;
 * timestamps are whole milliseconds and never decrease, so a source that sends the tuples in
 * order has no late tuples.
 *
 * Determinism: everything comes from the seed through `Random.fork` streams (arrivals, ranks,
 * drift, text), so the same options give the same tuples, and changing, say, the text vocabulary
 * does not move which hashtags are drawn.
 */

import { ZipfSampler } from '../../platform/sim/distributions.ts';
import { Random } from '../../random.ts';
import { RtaConfigError } from './errors.ts';
import type { RtaTuple } from './tuple.ts';

/** How the generator draws. Every field but `seed` has a default. */
export interface TweetGeneratorOptions {
  readonly seed: number;
  /** Distinct hashtags (default 1000). */
  readonly hashtags?: number;
  /** Zipf exponent s of hashtag popularity (default 0.99). */
  readonly zipfExponent?: number;
  /** Mean tuples per second of event time (default 1000). */
  readonly tuplesPerSecond?: number;
  /** Event time of the stream's start, ms (default 0). */
  readonly startMs?: number;
  /** Event time between two drift steps, ms (default 1000). */
  readonly driftEveryMs?: number;
  /** Hashtags moved into the top ranks per drift step (default 2; 0 turns drift off). */
  readonly driftSwaps?: number;
  /** How deep into the ranking a drifting hashtag lands (default 10). */
  readonly driftTopRanks?: number;
  /** Distinct authors (default 100 000). */
  readonly users?: number;
  /** Share of tuples that are retweets, whose text starts with "RT @" (default 0.2). */
  readonly retweetShare?: number;
}

/** The defaults, as one value (reports print it next to the seed). */
export const DEFAULT_GENERATOR_OPTIONS = Object.freeze({
  hashtags: 1000,
  zipfExponent: 0.99,
  tuplesPerSecond: 1000,
  startMs: 0,
  driftEveryMs: 1000,
  driftSwaps: 2,
  driftTopRanks: 10,
  users: 100_000,
  retweetShare: 0.2,
});

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vi',
  'zo',
  'be',
  'da',
  'fi',
  'go',
  'hu',
  'je',
  'ps',
  'wy',
];

/**
 * The name of hashtag `index`: '#' and its base-16 digits spelt as syllables, at least three
 * (so 4096 names of 7 bytes; more hashtags get longer names). Distinct indices, distinct names.
 */
export function hashtagName(index: number): string {
  let name = '';
  let rest = index;
  let digits = 0;
  do {
    name = SYLLABLES[rest % 16]! + name;
    rest = Math.floor(rest / 16);
    digits++;
  } while (rest > 0 || digits < 3);
  return `#${name}`;
}

const WORDS = [
  'the',
  'new',
  'game',
  'tonight',
  'love',
  'this',
  'so',
  'good',
  'watch',
  'live',
  'best',
  'ever',
  'big',
  'news',
  'today',
  'music',
  'video',
  'free',
  'vote',
  'team',
  'win',
  'happy',
  'day',
  'check',
  'out',
  'my',
  'first',
  'time',
  'cannot',
  'wait',
  'for',
  'more',
  'great',
  'show',
  'just',
  'now',
  'open',
  'world',
  'city',
  'fans',
  'photo',
  'who',
  'else',
  'here',
  'again',
  'look',
  'back',
  'next',
  'week',
  'still',
];

function checkCount(path: string, value: number, min: number): void {
  if (!(Number.isSafeInteger(value) && value >= min)) {
    throw new RtaConfigError(`generator.${path}`, `must be an integer ≥ ${min}, got ${value}`);
  }
}

function checkPositive(path: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RtaConfigError(`generator.${path}`, `must be a positive number, got ${value}`);
  }
}

/** An endless, seeded stream of tweet-like tuples with drifting hashtag popularity. */
export class TweetGenerator {
  /** The options in force, defaults filled in. */
  readonly options: Required<TweetGeneratorOptions>;
  readonly #arrivals: Random;
  readonly #ranks: Random;
  readonly #drift: Random;
  readonly #text: Random;
  readonly #zipf: ZipfSampler;
  readonly #meanGapMs: number;
  /** rank → hashtag index. */
  readonly #rankToTag: Int32Array;
  readonly #names: string[];
  #clockMs: number;
  #driftStep: number;
  #generated = 0;

  constructor(options: TweetGeneratorOptions) {
    const o = { ...DEFAULT_GENERATOR_OPTIONS, ...options };
    checkCount('seed', o.seed, 0);
    checkCount('hashtags', o.hashtags, 1);
    checkPositive('zipfExponent', o.zipfExponent);
    checkPositive('tuplesPerSecond', o.tuplesPerSecond);
    checkPositive('driftEveryMs', o.driftEveryMs);
    checkCount('driftSwaps', o.driftSwaps, 0);
    checkCount('driftTopRanks', o.driftTopRanks, 1);
    checkCount('users', o.users, 1);
    if (!Number.isFinite(o.startMs))
      throw new RtaConfigError('generator.startMs', `must be finite, got ${o.startMs}`);
    if (!(o.retweetShare >= 0 && o.retweetShare <= 1)) {
      throw new RtaConfigError('generator.retweetShare', `must be in [0, 1], got ${o.retweetShare}`);
    }
    this.options = Object.freeze(o);
    const root = new Random(o.seed);
    this.#arrivals = root.fork('rta/arrivals');
    this.#ranks = root.fork('rta/ranks');
    this.#drift = root.fork('rta/drift');
    this.#text = root.fork('rta/text');
    this.#zipf = new ZipfSampler(o.hashtags, o.zipfExponent);
    this.#meanGapMs = 1000 / o.tuplesPerSecond;
    this.#names = Array.from({ length: o.hashtags }, (_, i) => hashtagName(i));
    // Which hashtag starts at which rank is itself seeded (Fisher–Yates), so seeds differ in
    // their trending lists from the first tuple on.
    this.#rankToTag = new Int32Array(o.hashtags);
    for (let i = 0; i < o.hashtags; i++) this.#rankToTag[i] = i;
    const shuffle = root.fork('rta/initial-ranks');
    for (let i = o.hashtags - 1; i > 0; i--) this.#swapRanks(i, shuffle.int(0, i + 1));
    this.#clockMs = o.startMs;
    this.#driftStep = 0;
  }

  /** Tuples generated so far. */
  get generated(): number {
    return this.#generated;
  }

  /** The hashtag currently at `rank` (0 = most popular) — what the generator is drawing from now. */
  hashtagAtRank(rank: number): string {
    const index = this.#rankToTag[rank];
    if (index === undefined)
      throw new RangeError(`rank must be in [0, ${this.options.hashtags}), got ${rank}`);
    return this.#names[index]!;
  }

  /** The next tuple. */
  next(): RtaTuple {
    this.#clockMs += -Math.log(1 - this.#arrivals.next()) * this.#meanGapMs;
    this.#applyDrift();
    const rank = this.#zipf.sample(this.#ranks);
    const hashtag = this.#names[this.#rankToTag[rank]!]!;
    const userId = this.#text.int(0, this.options.users);
    this.#generated++;
    return {
      timestampMs: Math.floor(this.#clockMs),
      userId,
      hashtag,
      text: this.#compose(hashtag, userId),
    };
  }

  /** The next `count` tuples. */
  take(count: number): RtaTuple[] {
    const out: RtaTuple[] = [];
    for (let i = 0; i < count; i++) out.push(this.next());
    return out;
  }

  /** Every tuple up to (excluding) event time `endMs`; the first one past it is kept for the next call. */
  takeUntil(endMs: number): RtaTuple[] {
    const out: RtaTuple[] = [];
    for (;;) {
      const tuple = this.#pending ?? this.next();
      this.#pending = undefined;
      if (tuple.timestampMs >= endMs) {
        this.#pending = tuple;
        return out;
      }
      out.push(tuple);
    }
  }

  #pending: RtaTuple | undefined;

  #applyDrift(): void {
    const o = this.options;
    const step = Math.floor((this.#clockMs - o.startMs) / o.driftEveryMs);
    // Catch up one step at a time: a long gap between tuples drifts as much as a busy stream.
    while (this.#driftStep < step) {
      this.#driftStep++;
      const top = Math.min(o.driftTopRanks, o.hashtags);
      for (let i = 0; i < o.driftSwaps; i++) {
        this.#swapRanks(this.#drift.int(0, top), this.#drift.int(0, o.hashtags));
      }
    }
  }

  #swapRanks(a: number, b: number): void {
    const ranks = this.#rankToTag;
    const held = ranks[a]!;
    ranks[a] = ranks[b]!;
    ranks[b] = held;
  }

  #compose(hashtag: string, userId: number): string {
    const random = this.#text;
    const words = random.int(3, 10);
    const at = random.int(0, words + 1);
    const parts: string[] = [];
    for (let i = 0; i < words; i++) {
      if (i === at) parts.push(hashtag);
      parts.push(WORDS[random.int(0, WORDS.length)]!);
    }
    if (at === words) parts.push(hashtag);
    const body = parts.join(' ');
    return random.chance(this.options.retweetShare) ? `RT @user${userId % 10_000}: ${body}` : body;
  }
}
