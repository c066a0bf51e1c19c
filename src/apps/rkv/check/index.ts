/**
 * Correctness checking for RKV (issue 5, "Correctness"): a linearizability checker (Wing & Gong
 * with Lowe's memoisation, per-partition as in Porcupine) and the KV model it checks client
 * histories against.
 */

export type { HistoryOp, HistoryPartition, Model } from './history.ts';
export { ILLEGAL } from './history.ts';
export type { KvHistoryOp, KvInput, KvKeyInput, KvOutput, KvScanInput, KvState } from './kv-model.ts';
export { kvModel } from './kv-model.ts';
export type { CheckOptions, CheckResult } from './linearizability.ts';
export { checkLinearizability, describeCheckResult } from './linearizability.ts';
