/**
 * RTA's four actor definitions in one module (iPipe §5, "The applications": filter → counter →
 * ranker → aggregating ranker). This is the module a live node's catalog names: every core thread
 * imports it by path (`RTA_ACTORS_MODULE`) and finds each definition by its export name, so it
 * imports nothing heavier than the actors need (no file reading, no configuration schema).
 */

export { rtaAggregator } from './aggregator-actor.ts';
export { rtaCounter } from './counter-actor.ts';
export { rtaFilter } from './filter-actor.ts';
export { rtaRanker } from './ranker-actor.ts';
