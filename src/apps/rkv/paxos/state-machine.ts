/**
 * The replicated state machine behind the Multi-Paxos log (paper, "The applications": RKV's
 * consensus actor hands every committed entry to the memtable). The replica only needs `apply`,
 * `snapshot` and `restore`, so RKV's memtable/LSM plugs in by implementing this interface; the
 * `KvStateMachine` here (a plain Map with GET/PUT/DEL) is what the simulation tests replicate.
 *
 * Determinism is the contract: `apply` must depend only on the state and the command (no clock,
 * no randomness, no I/O whose result can differ between replicas), or replicas diverge.
 */

import { ByteReader, ByteWriter } from './bytes.ts';

/** A deterministic state machine that a Paxos log drives. */
export interface ReplicatedStateMachine<C, R> {
  /** Applies one committed command and returns its result (sent to the client by the leader). */
  apply(command: C): R;
  /** The whole state as bytes (taken after applying slot N; the log ≤ N is then dropped). */
  snapshot(): Uint8Array;
  /** Replaces the whole state with a snapshot's bytes (catch-up by snapshot transfer, recovery). */
  restore(snapshot: Uint8Array): void;
}

/** How commands and results become bytes, for durable records and snapshots' session tables. */
export interface PaxosCodec<C, R> {
  encodeCommand(command: C): Uint8Array;
  decodeCommand(bytes: Uint8Array): C;
  encodeResult(result: R): Uint8Array;
  decodeResult(bytes: Uint8Array): R;
}

/** The KV commands of the simulated store (RKV's GET/PUT/DEL). */
export type KvCommand =
  | { readonly op: 'get'; readonly key: string }
  | { readonly op: 'put'; readonly key: string; readonly value: string }
  | { readonly op: 'del'; readonly key: string };

/** Their results. `del` says whether the key existed, so a checker can verify deletes too. */
export type KvResult =
  | { readonly op: 'get'; readonly value: string | null }
  | { readonly op: 'put' }
  | { readonly op: 'del'; readonly existed: boolean };

/** A Map-backed KV store as a replicated state machine. */
export class KvStateMachine implements ReplicatedStateMachine<KvCommand, KvResult> {
  #map = new Map<string, string>();

  apply(command: KvCommand): KvResult {
    switch (command.op) {
      case 'get':
        return { op: 'get', value: this.#map.get(command.key) ?? null };
      case 'put':
        this.#map.set(command.key, command.value);
        return { op: 'put' };
      case 'del':
        return { op: 'del', existed: this.#map.delete(command.key) };
    }
  }

  /** Keys in sorted order, so equal states have equal bytes (replicas can be compared by bytes). */
  snapshot(): Uint8Array {
    const writer = new ByteWriter();
    const keys = [...this.#map.keys()].sort();
    writer.u32(keys.length);
    for (const key of keys) writer.string(key).string(this.#map.get(key) ?? '');
    return writer.finish();
  }

  restore(snapshot: Uint8Array): void {
    const reader = new ByteReader(snapshot);
    const count = reader.u32();
    const map = new Map<string, string>();
    for (let i = 0; i < count; i++) map.set(reader.string(), reader.string());
    this.#map = map;
  }

  get(key: string): string | undefined {
    return this.#map.get(key);
  }

  get size(): number {
    return this.#map.size;
  }
}

const OP_CODE = { get: 0, put: 1, del: 2 } as const;

/** Binary codec for `KvCommand` / `KvResult`. */
export const kvCodec: PaxosCodec<KvCommand, KvResult> = {
  encodeCommand(command) {
    const writer = new ByteWriter().u8(OP_CODE[command.op]).string(command.key);
    if (command.op === 'put') writer.string(command.value);
    return writer.finish();
  },
  decodeCommand(bytes) {
    const reader = new ByteReader(bytes);
    const op = reader.u8();
    const key = reader.string();
    if (op === OP_CODE.get) return { op: 'get', key };
    if (op === OP_CODE.put) return { op: 'put', key, value: reader.string() };
    if (op === OP_CODE.del) return { op: 'del', key };
    throw new RangeError(`unknown KV op code ${op}`);
  },
  encodeResult(result) {
    const writer = new ByteWriter().u8(OP_CODE[result.op]);
    if (result.op === 'get') {
      writer.u8(result.value === null ? 0 : 1);
      if (result.value !== null) writer.string(result.value);
    } else if (result.op === 'del') writer.u8(result.existed ? 1 : 0);
    return writer.finish();
  },
  decodeResult(bytes) {
    const reader = new ByteReader(bytes);
    const op = reader.u8();
    if (op === OP_CODE.get) return { op: 'get', value: reader.u8() === 1 ? reader.string() : null };
    if (op === OP_CODE.put) return { op: 'put' };
    if (op === OP_CODE.del) return { op: 'del', existed: reader.u8() === 1 };
    throw new RangeError(`unknown KV op code ${op}`);
  },
};
