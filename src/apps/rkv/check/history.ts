/**
 * Concurrent histories and sequential models, the input of the linearizability checker
 * (Herlihy & Wing 1990: a history is linearizable when each operation can be given a point
 * between its call and its return such that the operations, in that order, are a legal run of the
 * sequential model).
 *
 * An operation whose outcome is unknown (the client timed out, or the run ended first) "may or
 * may not have happened": it is given an infinitely late return, so it may take effect anywhere
 * after its call — or, by being placed after everything else, effectively never.
 */

/** One operation of a concurrent history. Times: any totally ordered numbers (ns, logical). */
export type HistoryOp<I, O> =
  | {
      readonly clientId: number;
      readonly input: I;
      readonly callAt: number;
      readonly status: 'ok';
      readonly output: O;
      readonly returnAt: number;
    }
  | {
      readonly clientId: number;
      readonly input: I;
      readonly callAt: number;
      /** Timed out / never answered: the effect may or may not have happened. */
      readonly status: 'unknown';
    };

/** `step` returns this when the output is impossible from the state. */
export const ILLEGAL: unique symbol = Symbol('illegal');

/** One independent part of a history (P-compositionality: checked on its own). */
export interface HistoryPartition<I, O> {
  readonly label: string;
  readonly ops: readonly HistoryOp<I, O>[];
}

/**
 * A sequential specification. `step` must be pure. `output` is `undefined` for an operation whose
 * outcome is unknown: the step may take effect but its output constrains nothing.
 */
export interface Model<S, I, O> {
  readonly name: string;
  init(): S;
  step(state: S, input: I, output: O | undefined): S | typeof ILLEGAL;
  /** Equal states must give equal keys (memoisation of visited (linearized set, state) pairs). */
  stateKey(state: S): string;
  /**
   * Splits a history into independent parts (Porcupine's P-compositionality, e.g. per key for a
   * KV store). Default: one part.
   */
  partition?(ops: readonly HistoryOp<I, O>[]): HistoryPartition<I, O>[];
  /** An input that never changes the state: unknown-outcome ones can be dropped before search. */
  isReadOnly?(input: I): boolean;
  /** For counterexamples. */
  describe?(op: HistoryOp<I, O>): string;
}
