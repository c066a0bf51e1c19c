/**
 * A linearizability checker: Wing & Gong's search (1993) with Lowe's just-in-time linearization
 * and memoisation ("Testing for linearizability", 2017) — the algorithm Porcupine implements —
 * applied per partition (P-compositionality: a KV history is linearizable iff each key's is).
 *
 * The history becomes a doubly linked list of call and return events in time order (a call
 * before a return at equal times: such operations count as concurrent). The search walks it:
 *
 *   at a call:   try to linearize that operation now (model step from the current state). If the
 *                step is legal and the pair (set of linearized ops, new state) was never seen,
 *                push (op, old state), unlink the call and its return, restart at the head.
 *                Otherwise move on to the next event.
 *   at a return: that operation must have been linearized already but was not, so the last choice
 *                was wrong: pop it, relink it, continue after its call.
 *
 * The list empties iff the history is linearizable. The memo of visited (bitset, state) pairs —
 * keyed by an incremental Zobrist hash of the bitset and the model's state key — is what keeps it
 * from re-exploring equivalent interleavings (Lowe's improvement), so histories of a few thousand
 * operations with modest concurrency check in milliseconds.
 *
 * The search is exponential in the worst case, so it is bounded: after `maxStepsPerPartition`
 * loop iterations (deterministic) or `timeLimitMs` (wall clock, optional) it answers "unknown"
 * instead of hanging.
 */

import { HistoryError } from '../paxos/errors.ts';
import { type HistoryOp, type HistoryPartition, ILLEGAL, type Model } from './history.ts';

export interface CheckOptions {
  /** Search iterations per partition before answering "unknown". Default 5,000,000. */
  readonly maxStepsPerPartition?: number;
  /** Wall-clock budget for the whole check, in ms; unset = none (results stay deterministic). */
  readonly timeLimitMs?: number;
}

/** The checker's answer; narrow on `verdict` before reading. */
export type CheckResult<I, O> =
  | { readonly verdict: 'linearizable'; readonly partitions: number; readonly steps: number }
  | {
      readonly verdict: 'not-linearizable';
      /** The first partition found to be non-linearizable. */
      readonly partition: string;
      /** That partition's operations. */
      readonly ops: readonly HistoryOp<I, O>[];
      /** The longest sequence of its operations the search could linearize, in order. */
      readonly longestLinearization: readonly HistoryOp<I, O>[];
      readonly steps: number;
    }
  | {
      readonly verdict: 'unknown';
      readonly partition: string;
      readonly reason: string;
      readonly steps: number;
    };

const DEFAULT_MAX_STEPS = 5_000_000;

/** Checks a history against a model (see the header for the method). */
export function checkLinearizability<S, I, O>(
  model: Model<S, I, O>,
  history: readonly HistoryOp<I, O>[],
  options: CheckOptions = {},
): CheckResult<I, O> {
  for (const op of history) validate(op);
  const maxSteps = options.maxStepsPerPartition ?? DEFAULT_MAX_STEPS;
  const deadline =
    options.timeLimitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeLimitMs;
  const droppable = model.isReadOnly;
  const kept =
    droppable === undefined ? history : history.filter((op) => op.status === 'ok' || !droppable(op.input));
  const partitions: HistoryPartition<I, O>[] = model.partition?.(kept) ?? [{ label: 'all', ops: kept }];
  let steps = 0;
  let unknown: CheckResult<I, O> | null = null;
  for (const part of partitions) {
    const outcome = searchPartition(model, part.ops, maxSteps, deadline);
    steps += outcome.steps;
    if (outcome.kind === 'fail') {
      return {
        verdict: 'not-linearizable',
        partition: part.label,
        ops: part.ops,
        longestLinearization: outcome.longest.map((index) => part.ops[index]!),
        steps,
      };
    }
    if (outcome.kind === 'budget' && unknown === null) {
      unknown = { verdict: 'unknown', partition: part.label, reason: outcome.reason, steps: 0 };
    }
  }
  if (unknown !== null) return { ...unknown, steps };
  return { verdict: 'linearizable', partitions: partitions.length, steps };
}

function validate<I, O>(op: HistoryOp<I, O>): void {
  if (!Number.isFinite(op.callAt)) throw new HistoryError(`call time ${op.callAt} is not a finite number`);
  if (op.status === 'ok') {
    if (!Number.isFinite(op.returnAt)) {
      throw new HistoryError(
        `return time ${op.returnAt} is not finite: mark unanswered operations 'unknown'`,
      );
    }
    if (op.returnAt < op.callAt) {
      throw new HistoryError(
        `an operation of client ${op.clientId} returns (${op.returnAt}) before its call (${op.callAt})`,
      );
    }
  }
}

type SearchOutcome =
  | { readonly kind: 'ok'; readonly steps: number }
  | { readonly kind: 'fail'; readonly steps: number; readonly longest: number[] }
  | { readonly kind: 'budget'; readonly steps: number; readonly reason: string };

/** xorshift32 for Zobrist keys: fixed seed, so the memo (and the step count) is deterministic. */
function zobristKeys(count: number): Uint32Array {
  const keys = new Uint32Array(count);
  let x = 0x9e3779b9;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    keys[i] = x >>> 0;
  }
  return keys;
}

function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

interface MemoEntry {
  readonly bits: Uint32Array;
  readonly stateKey: string;
}

function searchPartition<S, I, O>(
  model: Model<S, I, O>,
  ops: readonly HistoryOp<I, O>[],
  maxSteps: number,
  deadline: number,
): SearchOutcome {
  const n = ops.length;
  if (n === 0) return { kind: 'ok', steps: 0 };

  // Events 0..2n-1: event 2i is op i's call, 2i+1 its return. Sorted by time, calls first on ties.
  const times = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    const op = ops[i]!;
    times[2 * i] = op.callAt;
    times[2 * i + 1] = op.status === 'ok' ? op.returnAt : Number.POSITIVE_INFINITY;
  }
  const order = Array.from({ length: 2 * n }, (_, event) => event);
  order.sort((a, b) => times[a]! - times[b]! || (a & 1) - (b & 1) || a - b);

  // Linked list over events, with a head sentinel at index 2n; -1 ends the list.
  const head = 2 * n;
  const next = new Int32Array(2 * n + 1);
  const prev = new Int32Array(2 * n + 1);
  let last = head;
  for (const event of order) {
    next[last] = event;
    prev[event] = last;
    last = event;
  }
  next[last] = -1;

  const lift = (call: number): void => {
    const ret = call + 1;
    next[prev[call]!] = next[call]!;
    if (next[call]! >= 0) prev[next[call]!] = prev[call]!;
    next[prev[ret]!] = next[ret]!;
    if (next[ret]! >= 0) prev[next[ret]!] = prev[ret]!;
  };
  const unlift = (call: number): void => {
    const ret = call + 1;
    next[prev[ret]!] = ret;
    if (next[ret]! >= 0) prev[next[ret]!] = ret;
    next[prev[call]!] = call;
    if (next[call]! >= 0) prev[next[call]!] = call;
  };

  const words = Math.ceil(n / 32);
  const linearized = new Uint32Array(words);
  const zobrist = zobristKeys(n);
  let bitsHash = 0;
  const memo = new Map<number, MemoEntry[]>();
  const seen = (hash: number, stateKey: string): boolean => {
    const bucket = memo.get(hash);
    if (bucket === undefined) return false;
    outer: for (const entry of bucket) {
      if (entry.stateKey !== stateKey) continue;
      for (let w = 0; w < words; w++) if (entry.bits[w] !== linearized[w]) continue outer;
      return true;
    }
    return false;
  };
  const remember = (hash: number, stateKey: string): void => {
    const entry = { bits: linearized.slice(), stateKey };
    const bucket = memo.get(hash);
    if (bucket === undefined) memo.set(hash, [entry]);
    else bucket.push(entry);
  };

  const stackOps: number[] = [];
  const stackStates: S[] = [];
  // The deepest stack seen, kept in sync lazily: only entries from `longestDirtyFrom` up (those
  // a backtrack may have changed since the last copy) are rewritten when the stack beats it.
  const longest: number[] = [];
  let longestDirtyFrom = 0;
  let state = model.init();
  let event = next[head]!;
  let steps = 0;

  while (next[head]! !== -1) {
    if (++steps > maxSteps) {
      return { kind: 'budget', steps, reason: `search exceeded ${maxSteps} steps` };
    }
    if ((steps & 4095) === 0 && Date.now() > deadline) {
      return { kind: 'budget', steps, reason: 'time limit reached' };
    }
    if (event === -1) {
      // Walked past the end without meeting a return: only unknown-outcome calls remain and
      // none could be linearized from here; backtrack like at a return.
      event = head; // handled below as a dead end
    }
    if (event !== head && (event & 1) === 0) {
      const opIndex = event >> 1;
      const op = ops[opIndex]!;
      const output = op.status === 'ok' ? op.output : undefined;
      const nextState = model.step(state, op.input, output);
      if (nextState !== ILLEGAL) {
        const word = opIndex >> 5;
        const bit = 1 << (opIndex & 31);
        linearized[word]! |= bit;
        const stateKey = model.stateKey(nextState);
        const hash = (bitsHash ^ zobrist[opIndex]! ^ hashString(stateKey)) >>> 0;
        if (!seen(hash, stateKey)) {
          remember(hash, stateKey);
          bitsHash = (bitsHash ^ zobrist[opIndex]!) >>> 0;
          stackOps.push(opIndex);
          stackStates.push(state);
          if (stackOps.length > longest.length) {
            for (let i = longestDirtyFrom; i < stackOps.length; i++) longest[i] = stackOps[i]!;
            longestDirtyFrom = stackOps.length;
          }
          state = nextState;
          lift(event);
          event = next[head]!;
          continue;
        }
        linearized[word]! &= ~bit;
      }
      event = next[event]!;
      continue;
    }
    // A return (or the end): the op it closes was not linearized in time — undo the last choice.
    const opIndex = stackOps.pop();
    if (opIndex === undefined) return { kind: 'fail', steps, longest };
    if (stackOps.length < longestDirtyFrom) longestDirtyFrom = stackOps.length;
    state = stackStates.pop() as S;
    linearized[opIndex >> 5]! &= ~(1 << (opIndex & 31));
    bitsHash = (bitsHash ^ zobrist[opIndex]!) >>> 0;
    const call = opIndex * 2;
    unlift(call);
    event = next[call]!;
  }
  return { kind: 'ok', steps };
}

/** A readable account of a non-linearizable result, for test failure messages. */
export function describeCheckResult<S, I, O>(model: Model<S, I, O>, result: CheckResult<I, O>): string {
  if (result.verdict === 'linearizable') return `linearizable (${result.partitions} partition(s))`;
  if (result.verdict === 'unknown') return `unknown in partition ${result.partition}: ${result.reason}`;
  const describe = model.describe ?? ((op: HistoryOp<I, O>) => JSON.stringify(op));
  const lines = [`not linearizable: partition ${result.partition} (${result.ops.length} ops)`];
  lines.push('  longest linearizable prefix:');
  for (const op of result.longestLinearization) lines.push(`    ${describe(op)}`);
  lines.push('  operations (by call time):');
  const sorted = [...result.ops].sort((a, b) => a.callAt - b.callAt);
  for (const op of sorted.slice(0, 200)) lines.push(`    ${describe(op)}`);
  if (sorted.length > 200) lines.push(`    … ${sorted.length - 200} more`);
  return lines.join('\n');
}
