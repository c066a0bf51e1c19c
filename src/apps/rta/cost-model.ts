/**
 * The declared work of RTA's handlers, for the simulator (iPipe §5 "The applications"; Table 3
 * for the kind of rates such code runs at; src/actor/cost.ts says how work becomes time on a core).
 *
 * Every figure is built from what the handler really does to the message it gets — decode so
 * many entries, match so many bytes, probe so many hash-map slots, compare so many entries in a
 * quicksort — times a per-step instruction count for a C implementation of that step on an
 * in-order NIC core (the constants below, each an assumption stated next to it). Nothing is backed
 * out of a published latency: a handler that does twice the steps declares twice the work, and the
 * ranker's sort grows as m·log2 m. The IPC and MPKI figures are rates, taken from Table 3's
 * measurements of the same kind of code (sorting a small array: top-ranker; hash-map updates:
 * kv-cache; streaming over packet bytes: the packet-processing tasks).
 *
 * What a cost hook cannot see, because it gets only the message (define-actor.ts): the ranker's
 * held top n (the default n stands in), how many counters a filter feeds (the default topology
 * stands in), and a counter's pane state — which is why the counter's `tick` message carries the
 * entry counts its window close will touch, measured when the tick was armed.
 */

import type { HandlerWork } from '../../actor/cost.ts';
import { DEFAULT_COUNTERS, DEFAULT_RANKERS, DEFAULT_TOP_N } from './limits.ts';
import type { AggregatorMessage, CounterMessage, FilterMessage, RankerMessage } from './messages.ts';

/** Per-step instruction counts (a C implementation of the step on an in-order MIPS/ARM core). */
export const RTA_STEP_INSTRUCTIONS = Object.freeze({
  /** Dispatch, message header, the actor's root lookups through the DMO object table. */
  handlerFixed: 600,
  /** Decoding one fixed-size field (bounds check, load, store). */
  decodeField: 12,
  /** Copying one string byte out of (or into) a message. */
  copyByte: 1,
  /** Regular-expression matching, per text byte: a backtracking matcher's first-character scan
   *  and occasional partial match on short ASCII text. */
  regexByte: 12,
  /** FNV-1a / xxHash, per key byte (xor + multiply, or a word step). */
  hashByte: 4,
  /** A hash finish (murmur mix) plus the modulo that picks a worker. */
  hashFinish: 12,
  /** One hash-map probe: load the slot, compare the cached hash, compare the key words. */
  probe: 40,
  /** Read-modify-write of a count in place. */
  increment: 12,
  /** Appending an entry to an outgoing batch (bounds check, two stores). */
  append: 20,
  /** Advancing a hash-map iterator by one entry. */
  iterate: 25,
  /** Building and enqueuing one outgoing message (header, checksum, ring slot or queue). */
  send: 400,
  /** One comparison in the sort: two counts loaded and compared, a key compare on a tie. */
  compare: 20,
  /** One exchange of two 56-byte ranking entries (by index, as the C code would sort indices). */
  swap: 12,
  /** Reading or writing one ranking entry of the rankings object (count, length, key bytes). */
  rankingEntry: 30,
});

/** Average hashtag bytes assumed where the message does not carry the keys (the tick). */
export const ASSUMED_KEY_BYTES = 8;

const S = RTA_STEP_INSTRUCTIONS;

/** Rates: sorting a small array in L1 (Table 3 top-ranker's IPC 1.7, MPKI 0.1). */
const SORT_RATES = { ipc: 1.7, mpki: 0.1 } as const;
/** Rates: hash-map updates in DMO memory (Table 3 kv-cache's IPC 1.2, MPKI 0.9). */
const MAP_RATES = { ipc: 1.2, mpki: 0.9 } as const;
/** Rates: streaming over packet bytes with small tables. */
const STREAM_RATES = { ipc: 1.3, mpki: 0.4 } as const;

/** A small bookkeeping handler (configure, stats, status, advance, a query). */
const SMALL_HANDLER: HandlerWork = Object.freeze({
  instructions: S.handlerFixed + S.send,
  ...STREAM_RATES,
  mpki: 0.6,
});

/**
 * Expected comparisons of the rankers' quicksort (quicksort.ts: median-of-three pivots,
 * insertion sort below 13 items) on m entries in no particular order: ≈ 1.1·m·log2 m, what that
 * sort makes on ranking entries (counted: 1.03 at m = 24 … 1.13 at m = 4000, per m·log2 m;
 * textbook median-of-three is 1.19·m·log2 m − 2.3·m). test/apps/rta/cost-model.test.ts counts the
 * real comparisons and checks this estimate within 15%.
 */
export function quicksortComparisons(m: number): number {
  if (m < 2) return 0;
  return 1.1 * m * Math.log2(m);
}

/** Instructions of quicksorting m entries: comparisons, and a swap per two comparisons at most. */
export function sortInstructions(m: number): number {
  return Math.round(quicksortComparisons(m) * (S.compare + S.swap / 2));
}

/**
 * Work of one merge into a rankings object: read the `held` entries, decode `incoming` ones with
 * `incomingKeyBytes` of keys between them, quicksort all of them and write the top `held` back.
 */
export function sortWork(
  incoming: number,
  held = DEFAULT_TOP_N,
  incomingKeyBytes = incoming * ASSUMED_KEY_BYTES,
): HandlerWork {
  const m = incoming + held;
  const instructions =
    S.handlerFixed +
    held * S.rankingEntry + // read the held top n
    incoming * 2 * S.decodeField +
    incomingKeyBytes * S.copyByte +
    sortInstructions(m) +
    held * (S.rankingEntry + ASSUMED_KEY_BYTES * S.copyByte); // write the top n back
  return { instructions, ...SORT_RATES };
}

function keyBytesOf(entries: readonly { readonly key: string }[]): number {
  let bytes = 0;
  for (const entry of entries) bytes += entry.key.length;
  return bytes;
}

/**
 * The filter: per tuple, decode its four fields and copy its strings, run the pattern over its
 * text, hash its hashtag to pick a counter and append (time, key) to that counter's batch; then
 * one `keys` message per counter.
 */
export function filterWork(message: FilterMessage): HandlerWork {
  switch (message.type) {
    case 'ingest': {
      let instructions = S.handlerFixed + DEFAULT_COUNTERS * S.send;
      for (const tuple of message.tuples) {
        const tagBytes = tuple.hashtag.length;
        const textBytes = tuple.text.length;
        instructions +=
          4 * S.decodeField +
          (tagBytes + textBytes) * S.copyByte +
          textBytes * S.regexByte +
          tagBytes * S.hashByte +
          S.hashFinish +
          S.append +
          tagBytes * S.copyByte;
      }
      return { instructions, ...STREAM_RATES };
    }
    case 'advance':
      return { ...SMALL_HANDLER, instructions: S.handlerFixed + DEFAULT_COUNTERS * S.send };
    default:
      // configure: compile the pattern (a few instructions per pattern byte) and resolve names.
      return { ...SMALL_HANDLER, instructions: SMALL_HANDLER.instructions + 40 * message.pattern.length };
  }
}

/**
 * The counter. `keys`: per entry, decode it, hash its key, probe the pane's map and increment (or
 * insert). `tick`: merge two panes into the running totals (a probe and an update per entry),
 * then walk the totals, hash each key to its ranker and append it to a chunk; a send per chunk.
 */
export function counterWork(message: CounterMessage): HandlerWork {
  switch (message.type) {
    case 'keys': {
      const keyBytes = keyBytesOf(message.entries);
      const instructions =
        S.handlerFixed +
        message.entries.length * (2 * S.decodeField + S.hashFinish + S.probe + S.increment) +
        keyBytes * (S.copyByte + S.hashByte);
      return { instructions, ...MAP_RATES };
    }
    case 'tick': {
      const perMerge = S.iterate + S.probe + S.increment + ASSUMED_KEY_BYTES * S.hashByte;
      const perEmit = S.iterate + ASSUMED_KEY_BYTES * (S.hashByte + 2 * S.copyByte) + S.hashFinish + S.append;
      const chunks = Math.ceil(message.emitEntries / 60) + DEFAULT_RANKERS; // + progress
      const instructions =
        S.handlerFixed + message.mergeEntries * perMerge + message.emitEntries * perEmit + chunks * S.send;
      return { instructions, ...MAP_RATES };
    }
    default:
      return SMALL_HANDLER;
  }
}

/**
 * The ranker. `counts`: merge the chunk into the window's rankings object (sortWork). `progress`:
 * usually hands one window on — read its top n, encode it, send — and sends its own progress.
 */
export function rankerWork(message: RankerMessage): HandlerWork {
  switch (message.type) {
    case 'counts':
      return sortWork(message.entries.length, DEFAULT_TOP_N, keyBytesOf(message.entries));
    case 'progress':
      return {
        instructions: S.handlerFixed + DEFAULT_TOP_N * 2 * S.rankingEntry + 2 * S.send,
        ...SORT_RATES,
      };
    default:
      return SMALL_HANDLER;
  }
}

/** The aggregating ranker: a ranker's top n merged into the window's global top n (sortWork). */
export function aggregatorWork(message: AggregatorMessage): HandlerWork {
  if (message.type === 'ranked') {
    return sortWork(message.entries.length, DEFAULT_TOP_N, keyBytesOf(message.entries));
  }
  if (message.type === 'query') {
    return { ...SMALL_HANDLER, instructions: SMALL_HANDLER.instructions + DEFAULT_TOP_N * S.rankingEntry };
  }
  return SMALL_HANDLER;
}
