/**
 * The sequential specification of RKV's key-value interface (GET / PUT / DEL / conditional PUT,
 * Redis's SET NX and SET XX) for the
 * linearizability checker, partitioned per key (every operation touches one key, so the history
 * is linearizable iff each key's sub-history is — Herlihy & Wing's locality, Porcupine's
 * P-compositionality). Per key the state is the value, or null when absent. A conditional put
 * writes iff its condition holds in the state it is linearized at (`nx`: absent, `xx`: present)
 * and answers whether it wrote; one whose answer is unknown still does exactly that, if it happens.
 *
 * The shapes match `KvCommand` / `KvResult` of the replicated state machine
 * (src/apps/rkv/paxos/state-machine.ts), so a simulation's client history feeds in unchanged.
 */

import { type HistoryOp, type HistoryPartition, ILLEGAL, type Model } from './history.ts';

export type KvInput =
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

export type KvOutput =
  | { readonly op: 'get'; readonly value: string | null }
  | { readonly op: 'put' }
  | { readonly op: 'del'; readonly existed: boolean }
  | { readonly op: 'cput'; readonly written: boolean };

export type KvHistoryOp = HistoryOp<KvInput, KvOutput>;

function describeInput(input: KvInput): string {
  if (input.op === 'put') return `put(${input.key}, ${JSON.stringify(input.value)})`;
  if (input.op === 'cput') return `put-${input.condition}(${input.key}, ${JSON.stringify(input.value)})`;
  return `${input.op}(${input.key})`;
}

function describeOutput(output: KvOutput): string {
  if (output.op === 'get') return output.value === null ? 'null' : JSON.stringify(output.value);
  if (output.op === 'del') return output.existed ? 'existed' : 'absent';
  if (output.op === 'cput') return output.written ? 'ok' : 'nil';
  return 'ok';
}

/** GET/PUT/DEL/conditional PUT on independent keys. */
export const kvModel: Model<string | null, KvInput, KvOutput> = {
  name: 'kv',
  init: () => null,
  step(state, input, output) {
    switch (input.op) {
      case 'get':
        if (output === undefined) return state;
        return output.op === 'get' && output.value === state ? state : ILLEGAL;
      case 'put':
        return input.value;
      case 'del':
        if (output === undefined) return null;
        return output.op === 'del' && output.existed === (state !== null) ? null : ILLEGAL;
      case 'cput': {
        const holds = input.condition === 'nx' ? state === null : state !== null;
        if (output !== undefined && (output.op !== 'cput' || output.written !== holds)) return ILLEGAL;
        return holds ? input.value : state;
      }
    }
  },
  stateKey: (state) => (state === null ? '\u0000' : `=${state}`),
  partition(ops) {
    const byKey = new Map<string, KvHistoryOp[]>();
    for (const op of ops) {
      let list = byKey.get(op.input.key);
      if (list === undefined) {
        list = [];
        byKey.set(op.input.key, list);
      }
      list.push(op);
    }
    const parts: HistoryPartition<KvInput, KvOutput>[] = [];
    for (const [key, list] of [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      parts.push({ label: `key ${JSON.stringify(key)}`, ops: list });
    }
    return parts;
  },
  isReadOnly: (input) => input.op === 'get',
  describe(op) {
    const span = op.status === 'ok' ? `[${op.callAt}, ${op.returnAt}]` : `[${op.callAt}, ?)`;
    const result = op.status === 'ok' ? describeOutput(op.output) : 'unknown (timed out)';
    return `client ${op.clientId} ${span} ${describeInput(op.input)} → ${result}`;
  },
};
