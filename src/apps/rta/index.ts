/**
 * Real-time analytics on ipipe (iPipe §5, "The applications": RTA after FlexStorm — filter
 * (pattern matching, stateless) → counter (sliding window, periodic emit) → ranker (quicksort,
 * top-n in one DMO) → an aggregating ranker; under load the ranker migrates to the host).
 *
 * Value exports first, then types, each named explicitly.
 */

// ---- values -----------------------------------------------------------------------------------

/** The four actors (also exported alone by actors.ts, the module live nodes load). */
export { rtaAggregator, rtaCounter, rtaFilter, rtaRanker } from './actors.ts';
/** Configuration: defaults, validation (bad pattern → RtaFilterPatternError), instance names. */
export { DEFAULT_RTA_CONFIG, parseRtaConfig, rtaInstanceNames } from './config.ts';
/** The handlers' declared work for the simulator. */
export {
  ASSUMED_KEY_BYTES,
  aggregatorWork,
  counterWork,
  filterWork,
  quicksortComparisons,
  RTA_STEP_INSTRUCTIONS,
  rankerWork,
  sortInstructions,
  sortWork,
} from './cost-model.ts';
/** Typed errors and their codes (registered in src/errors.ts, documented in docs/errors.md). */
export {
  RTA_ERROR_CODES,
  RtaConfigError,
  RtaError,
  RtaFilterPatternError,
  RtaInputError,
  RtaNotConfiguredError,
  RtaNoValidTuplesError,
  RtaTopologyError,
} from './errors.ts';
/** The experiment hook: RTA on a SimNode for a packet size, driven by callbacks. */
export { compareWithReference, registerRtaOnSimNode } from './experiment-hook.ts';
/** The seeded tweet generator with drifting Zipf hashtag popularity. */
export { DEFAULT_GENERATOR_OPTIONS, hashtagName, TweetGenerator } from './generator.ts';
/** Size limits shared by the schemas, the configuration and the actors. */
export {
  DEFAULT_COUNTERS,
  DEFAULT_RANKERS,
  DEFAULT_TOP_N,
  MAX_INSTANCES,
  MAX_PANES_PER_WINDOW,
  MAX_PATTERN_BYTES,
  MAX_TOP_N,
} from './limits.ts';
/** Message schemas of every actor. */
export {
  aggregatorMessages,
  aggregatorReplies,
  COUNT_CHUNK_BYTES,
  counterMessages,
  counterReplies,
  filterMessages,
  filterReplies,
  MAX_COUNT_ENTRIES,
  MAX_WINDOWS_PER_REPLY,
  rankerMessages,
  rankerReplies,
} from './messages.ts';
/** The filter's pattern compiler. */
export { compileFilterPattern } from './pattern.ts';
/** The hand-written quicksort the rankers use. */
export { quicksort } from './quicksort.ts';
/** The rankers' order and the one-object top-n layout. */
export { compareRanked, RANKING_ENTRY_BYTES, RANKINGS_HEADER_BYTES } from './rankings.ts';
/** Reading a user's NDJSON or CSV tuples. */
export { describeReadResult, parseTuples, readTupleFile, splitCsvLine, TupleLineParser } from './reader.ts';
/** The reference computation the tests compare against. */
export { referenceRta } from './reference.ts';
/** Key routing between stages. */
export { COUNTER_ROUTE_SALT, keyHash, RANKER_ROUTE_SALT, routeKey } from './topology.ts';
/** Tuples: limits, the wire field, packing per packet size. */
export {
  MAX_HASHTAG_BYTES,
  MAX_TEXT_BYTES,
  MAX_TUPLES_PER_REQUEST,
  packTuples,
  requestFrameBytes,
  tupleField,
  tupleProblem,
  tupleWireBytes,
} from './tuple.ts';
/** The workload description for experiments and clusters. */
export { RTA_ACTORS_MODULE, RTA_PACKET_SIZES, rtaWorkload } from './workload.ts';

// ---- types ------------------------------------------------------------------------------------

export type {
  FilterMode,
  RtaConfig,
  RtaConfigInput,
  RtaFilterConfig,
  RtaInstanceNames,
  RtaWindowConfig,
} from './config.ts';
export type { MalformedLine, RtaErrorCode } from './errors.ts';
export type { RtaDone, RtaOnSimNode, RtaReportedWindow, RtaSimOptions } from './experiment-hook.ts';
export type { TweetGeneratorOptions } from './generator.ts';
export type {
  AggregatorMessage,
  AggregatorReply,
  CounterMessage,
  CounterReply,
  FilterMessage,
  FilterReply,
  RankerMessage,
  RankerReply,
} from './messages.ts';
export type { RankedEntry, RankingSnapshot } from './rankings.ts';
export type { TupleFormat, TupleReadOptions, TupleReadResult } from './reader.ts';
export type { ReferenceWindow } from './reference.ts';
export type { RtaTuple } from './tuple.ts';
export type {
  RtaActorPlan,
  RtaRequest,
  RtaRequestStream,
  RtaRole,
  RtaSend,
  RtaWorkload,
  RtaWorkloadOptions,
} from './workload.ts';
