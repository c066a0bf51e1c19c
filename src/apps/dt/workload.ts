/**
 * DT workloads (iPipe §5: "DT: each transaction reads 2 keys and writes 1", FaSST's object-store
 * benchmark; keys uniform or Zipf-skewed) and a bank-transfer variant whose invariant — the total
 * balance never changes — makes lost updates and partial commits visible.
 *
 * A workload only *chooses*: which keys a transaction reads, and how the values it read become the
 * values it writes. The client (interactive library or simulator) runs the transaction. Choices
 * draw from the `Random` passed in, so a seeded run is reproducible.
 */

import { type Sampler, UniformSampler, ZipfSampler } from '../../platform/sim/distributions.ts';
import type { Random } from '../../random.ts';

/** How keys are drawn. */
export type KeyDistribution =
  | { readonly kind: 'uniform' }
  | { readonly kind: 'zipf'; readonly exponent: number };

/** One transaction's plan: read `reads`, then write `writeKeys` with values computed from the reads. */
export interface TxnPlan {
  readonly reads: readonly string[];
  readonly writeKeys: readonly string[];
  /** The values to write, given what was read (undefined for an absent key), aligned with writeKeys. */
  compute(values: readonly (Uint8Array | undefined)[]): Uint8Array[];
}

/** A source of transaction plans over a fixed key space. */
export interface DtWorkload {
  readonly name: string;
  /** Every key with its initial value (to load the participants). */
  initialData(): { key: string; value: Uint8Array }[];
  next(random: Random): TxnPlan;
}

/** The key name of index `i` (fixed width, so keys sort and size predictably). */
export function keyName(prefix: string, index: number): string {
  return `${prefix}${index.toString().padStart(8, '0')}`;
}

class KeyPicker {
  readonly #sampler: Sampler;
  readonly #count: number;
  constructor(count: number, distribution: KeyDistribution) {
    if (!(Number.isInteger(count) && count >= 3))
      throw new RangeError(`key count must be an integer ≥ 3, got ${count}`);
    this.#count = count;
    this.#sampler =
      distribution.kind === 'zipf'
        ? new ZipfSampler(count, distribution.exponent)
        : new UniformSampler(0, count);
  }
  /** `n` distinct key indices. */
  distinct(random: Random, n: number): number[] {
    const picked: number[] = [];
    while (picked.length < n) {
      const index = Math.min(this.#count - 1, Math.floor(this.#sampler.sample(random)));
      if (!picked.includes(index)) picked.push(index);
    }
    return picked;
  }
}

/** Options of the FaSST workload. */
export interface FasstWorkloadOptions {
  readonly keys: number;
  readonly distribution?: KeyDistribution;
  /** Bytes of every value (default 16). */
  readonly valueBytes?: number;
}

/**
 * FaSST's object-store transaction: read 2 keys, write a third, distinct key with a value derived
 * from the two it read (so the write depends on the reads, and validation matters).
 */
export function fasstWorkload(options: FasstWorkloadOptions): DtWorkload {
  const valueBytes = options.valueBytes ?? 16;
  if (!(Number.isInteger(valueBytes) && valueBytes >= 1)) {
    throw new RangeError(`valueBytes must be an integer ≥ 1, got ${valueBytes}`);
  }
  const picker = new KeyPicker(options.keys, options.distribution ?? { kind: 'uniform' });
  const key = (index: number): string => keyName('k', index);
  return {
    name: 'fasst',
    initialData: () =>
      Array.from({ length: options.keys }, (_, index) => ({
        key: key(index),
        value: new Uint8Array(valueBytes),
      })),
    next(random) {
      const [a, b, c] = picker.distinct(random, 3) as [number, number, number];
      return {
        reads: [key(a), key(b)],
        writeKeys: [key(c)],
        compute(values) {
          const out = new Uint8Array(valueBytes);
          for (const value of values) {
            if (!value) continue;
            for (let i = 0; i < out.length && i < value.length; i++)
              out[i] = (out[i]! + value[i]! + 1) & 0xff;
          }
          return [out];
        },
      };
    },
  };
}

/** A balance as stored: a little-endian float64 holding an integer (exact below 2^53). */
export function encodeBalance(amount: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, amount, true);
  return out;
}

/** The balance `bytes` hold (0 for an absent or malformed value). */
export function decodeBalance(bytes: Uint8Array | undefined): number {
  if (bytes?.length !== 8) return 0;
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true);
}

/** Options of the bank workload. */
export interface BankWorkloadOptions {
  readonly accounts: number;
  readonly initialBalance?: number;
  readonly maxTransfer?: number;
  readonly distribution?: KeyDistribution;
}

/** The account key of index `i`. */
export function accountKey(index: number): string {
  return keyName('acct-', index);
}

/**
 * Bank transfers: read two accounts, move a random amount (at most what the source holds) from
 * one to the other, write both. Total balance is `accounts × initialBalance` forever.
 */
export function bankWorkload(options: BankWorkloadOptions): DtWorkload & { readonly totalBalance: number } {
  const initialBalance = options.initialBalance ?? 1000;
  const maxTransfer = options.maxTransfer ?? 100;
  const picker = new KeyPicker(options.accounts, options.distribution ?? { kind: 'uniform' });
  return {
    name: 'bank',
    totalBalance: options.accounts * initialBalance,
    initialData: () =>
      Array.from({ length: options.accounts }, (_, index) => ({
        key: accountKey(index),
        value: encodeBalance(initialBalance),
      })),
    next(random) {
      const [from, to] = picker.distinct(random, 2) as [number, number];
      const wanted = random.int(1, maxTransfer + 1);
      return {
        reads: [accountKey(from), accountKey(to)],
        writeKeys: [accountKey(from), accountKey(to)],
        compute(values) {
          const source = decodeBalance(values[0]);
          const target = decodeBalance(values[1]);
          const amount = Math.max(0, Math.min(wanted, source));
          return [encodeBalance(source - amount), encodeBalance(target + amount)];
        },
      };
    },
  };
}
