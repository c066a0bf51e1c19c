/**
 * The sequential specification of RKV's key-value interface (GET / PUT / DEL / conditional PUT,
 * Redis's SET NX and SET XX, and one page of a range SCAN) for the linearizability checker.
 *
 * The state is the map of present keys to their values. A conditional put writes iff its condition
 * holds in the state it is linearized at (`nx`: absent, `xx`: present) and answers whether it
 * wrote; one whose answer is unknown still does exactly that, if it happens. A scan page answers
 * the live pairs of the range it covers — [start, next) when it names a next key, else
 * [start, end) — exactly, in key order, and at most `limit` of them: one read of every key in that
 * range at one point. A page that names a next key must move on (next > start): one that does not
 * would have its client read the same page for ever. Keys compare as their UTF-8 bytes do (code
 * point order, `compareKeyStrings`), as RKV orders keys (lsm/bytes.ts compareKeys) — not as JS
 * strings, whose UTF-16 order differs for characters above U+FFFF.
 *
 * Partitions (Herlihy & Wing's locality, Porcupine's P-compositionality): a history is
 * linearizable iff each part over disjoint keys is. A single-key operation touches its key; an
 * answered scan touches every key of the history in the range its page covers (it read them all:
 * absent ones too, which is why a key only written later still belongs to its part). Parts are
 * the connected components of that relation (union-find over keys), so without scans each key is
 * its own part, as before, and scans join exactly the keys they read. A scan whose range holds no
 * key of the history is a part of its own (its page must be empty). Unanswered scans change
 * nothing and are dropped before the search (`isReadOnly`).
 *
 * The shapes match `KvCommand` / `KvResult` of the replicated state machine
 * (src/apps/rkv/paxos/state-machine.ts), so a simulation's client history feeds in unchanged.
 */

import { type HistoryOp, type HistoryPartition, ILLEGAL, type Model } from './history.ts';

/** An operation on one key. */
export type KvKeyInput =
  | { readonly op: 'get'; readonly key: string }
  | { readonly op: 'put'; readonly key: string; readonly value: string }
  | { readonly op: 'del'; readonly key: string }
  | {
      readonly op: 'cput';
      readonly key: string;
      readonly value: string;
      /** `nx`: write only if the key is absent; `xx`: only if it is present. */
      readonly condition: 'nx' | 'xx';
    };

/** One page of a range scan: start ≤ key < end (null: no end), at most `limit` pairs. */
export interface KvScanInput {
  readonly op: 'scan';
  readonly start: string;
  readonly end: string | null;
  readonly limit: number;
}

export type KvInput = KvKeyInput | KvScanInput;

export type KvOutput =
  | { readonly op: 'get'; readonly value: string | null }
  | { readonly op: 'put' }
  | { readonly op: 'del'; readonly existed: boolean }
  | { readonly op: 'cput'; readonly written: boolean }
  | {
      readonly op: 'scan';
      readonly pairs: readonly (readonly [string, string])[];
      /** Where the next page starts (the page covers [start, next)); null: the range is done. */
      readonly next: string | null;
    };

export type KvHistoryOp = HistoryOp<KvInput, KvOutput>;

/** The model's state: the present keys and their values. */
export type KvState = ReadonlyMap<string, string>;

const NO_STATE: KvState = new Map();

function describeInput(input: KvInput): string {
  if (input.op === 'scan') return `scan([${input.start}, ${input.end ?? '∞'}), limit ${input.limit})`;
  if (input.op === 'put') return `put(${input.key}, ${JSON.stringify(input.value)})`;
  if (input.op === 'cput') return `put-${input.condition}(${input.key}, ${JSON.stringify(input.value)})`;
  return `${input.op}(${input.key})`;
}

function describeOutput(output: KvOutput): string {
  if (output.op === 'get') return output.value === null ? 'null' : JSON.stringify(output.value);
  if (output.op === 'del') return output.existed ? 'existed' : 'absent';
  if (output.op === 'cput') return output.written ? 'ok' : 'nil';
  if (output.op === 'scan')
    return `${JSON.stringify(output.pairs)}${output.next === null ? ' done' : ` next ${output.next}`}`;
  return 'ok';
}

/**
 * Two keys in the order of their UTF-8 bytes: code point order (UTF-8 keeps it), which JS's `<`
 * on strings breaks for surrogate pairs (UTF-16 units).
 */
export function compareKeyStrings(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(j) as number;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

/** The upper bound of the range an answered scan page read (undefined: none). */
function coveredEnd(input: KvScanInput, output: KvOutput): string | undefined {
  const next = output.op === 'scan' ? output.next : null;
  if (next === null) return input.end ?? undefined;
  return input.end !== null && compareKeyStrings(input.end, next) < 0 ? input.end : next;
}

function inRange(key: string, start: string, end: string | undefined): boolean {
  return compareKeyStrings(key, start) >= 0 && (end === undefined || compareKeyStrings(key, end) < 0);
}

function withKey(state: KvState, key: string, value: string | null): KvState {
  if (value === null && !state.has(key)) return state;
  const next = new Map(state);
  if (value === null) next.delete(key);
  else next.set(key, value);
  return next;
}

function scanStep(state: KvState, input: KvScanInput, output: KvOutput): KvState | typeof ILLEGAL {
  if (output.op !== 'scan' || output.pairs.length > input.limit) return ILLEGAL;
  if (output.next !== null && compareKeyStrings(output.next, input.start) <= 0) return ILLEGAL;
  const end = coveredEnd(input, output);
  const want = [...state].filter(([key]) => inRange(key, input.start, end));
  if (want.length !== output.pairs.length) return ILLEGAL;
  want.sort(([a], [b]) => compareKeyStrings(a, b));
  for (let i = 0; i < want.length; i++) {
    const [key, value] = want[i] as [string, string];
    const pair = output.pairs[i] as readonly [string, string];
    if (pair[0] !== key || pair[1] !== value) return ILLEGAL;
  }
  return state;
}

/** GET/PUT/DEL/conditional PUT, and SCAN pages, over a map of keys. */
export const kvModel: Model<KvState, KvInput, KvOutput> = {
  name: 'kv',
  init: () => NO_STATE,
  step(state, input, output) {
    if (input.op === 'scan') return output === undefined ? state : scanStep(state, input, output);
    const current = state.get(input.key) ?? null;
    switch (input.op) {
      case 'get':
        if (output === undefined) return state;
        return output.op === 'get' && output.value === current ? state : ILLEGAL;
      case 'put':
        return withKey(state, input.key, input.value);
      case 'del':
        if (output === undefined) return withKey(state, input.key, null);
        return output.op === 'del' && output.existed === (current !== null)
          ? withKey(state, input.key, null)
          : ILLEGAL;
      case 'cput': {
        const holds = input.condition === 'nx' ? current === null : current !== null;
        if (output !== undefined && (output.op !== 'cput' || output.written !== holds)) return ILLEGAL;
        return holds ? withKey(state, input.key, input.value) : state;
      }
    }
  },
  stateKey(state) {
    if (state.size === 0) return '\u0000';
    if (state.size === 1) {
      return JSON.stringify(state.entries().next().value);
    }
    return JSON.stringify([...state].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  },
  partition: partitionByKeysRead,
  isReadOnly: (input) => input.op === 'get' || input.op === 'scan',
  describe(op) {
    const span = op.status === 'ok' ? `[${op.callAt}, ${op.returnAt}]` : `[${op.callAt}, ?)`;
    const result = op.status === 'ok' ? describeOutput(op.output) : 'unknown (timed out)';
    return `client ${op.clientId} ${span} ${describeInput(op.input)} → ${result}`;
  },
};

/** See the header: the connected components of "an operation touches a key". */
function partitionByKeysRead(ops: readonly KvHistoryOp[]): HistoryPartition<KvInput, KvOutput>[] {
  const keys = [...new Set(ops.flatMap((op) => (op.input.op === 'scan' ? [] : [op.input.key])))].sort();
  const parent = new Map<string, string>(keys.map((key) => [key, key]));
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    parent.set(key, root);
    return root;
  };
  /** Per answered scan, the history's keys its page read. */
  const readBy = new Map<KvHistoryOp, string[]>();
  for (const op of ops) {
    if (op.input.op !== 'scan' || op.status !== 'ok') continue;
    const input = op.input;
    const end = coveredEnd(input, op.output);
    const read = keys.filter((key) => inRange(key, input.start, end));
    readBy.set(op, read);
    for (const key of read.slice(1)) parent.set(find(key), find(read[0] as string));
  }
  const parts = new Map<string, KvHistoryOp[]>();
  const add = (label: string, op: KvHistoryOp): void => {
    const list = parts.get(label);
    if (list === undefined) parts.set(label, [op]);
    else list.push(op);
  };
  const members = new Map<string, string[]>();
  for (const key of keys) {
    const root = find(key);
    const list = members.get(root);
    if (list === undefined) members.set(root, [key]);
    else list.push(key);
  }
  const labelOf = (root: string): string => {
    const list = members.get(root) as string[];
    return list.length === 1
      ? `key ${JSON.stringify(root)}`
      : `keys ${list.map((k) => JSON.stringify(k)).join(', ')}`;
  };
  let lone = 0;
  for (const op of ops) {
    if (op.input.op !== 'scan') add(labelOf(find(op.input.key)), op);
    else {
      const read = readBy.get(op);
      if (read === undefined) continue; // unanswered: reads change nothing
      if (read.length === 0) add(`scan #${lone++} of no written key`, op);
      else add(labelOf(find(read[0] as string)), op);
    }
  }
  return [...parts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, list]) => ({ label, ops: list }));
}
