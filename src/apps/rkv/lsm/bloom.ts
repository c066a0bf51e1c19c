/**
 * The Bloom filter each SSTable carries, so a point read skips tables that cannot hold the key
 * without touching their index or data blocks (RKV's SSTable reader, iPipe §5: a memtable miss
 * would otherwise cost one block read per level).
 *
 * Sizing: `bitsPerKey` bits per key (m = n·bitsPerKey, at least 64) and k = round(bitsPerKey·ln 2)
 * probes (1..30), the k that minimises the false-positive rate for that size. The expected rate is
 *
 *     p ≈ (1 − e^(−k·n/m))^k        e.g. 10 bits/key → k = 7, p ≈ 0.82 %;  8 → 2.2 %;  16 → 0.046 %
 *
 * (`bloomFalsePositiveRate`; bloom.test.ts measures it). There are no false negatives: every added
 * key sets all k of its bits.
 *
 * Probes use double hashing (Kirsch & Mitzenmacher): bit_i = (h1 + i·h2) mod m, with h1 the key's
 * xxHash32 and h2 a second, independent-looking hash derived from it by murmur3's finaliser, so one
 * pass over the key bytes serves all probes. Hash both once per lookup and reuse them for every
 * table (`BloomHash`).
 *
 * Filter block payload: [k u8][m/8 bytes of bits, bit j at byte j>>3, mask 1<<(j&7)].
 */

import { hashBytes, mix32 } from '../../../dmo/hash.ts';

const HASH_SEED = 0x6c736d62; // 'bmsl'
const MIN_BITS = 64;
const MAX_PROBES = 30;

/** A key's two probe hashes, computed once and checked against many filters. */
export interface BloomHash {
  h1: number;
  h2: number;
}

/** Fills `out` with the probe hashes of `key`. */
export function bloomHash(key: Uint8Array, out: BloomHash): BloomHash {
  const h1 = hashBytes(key, 0, key.length, HASH_SEED);
  out.h1 = h1;
  // Odd, so successive probes never repeat before m of them when m is a power of two.
  out.h2 = (mix32(h1 ^ 0x9e3779b9) | 1) >>> 0;
  return out;
}

/** Probes per key for `bitsPerKey` bits per key (0 when there is no filter). */
export function bloomProbes(bitsPerKey: number): number {
  if (bitsPerKey <= 0) return 0;
  return Math.max(1, Math.min(MAX_PROBES, Math.round(bitsPerKey * Math.LN2)));
}

/** The expected false-positive rate of a filter with `bitsPerKey` bits per key (1 with none). */
export function bloomFalsePositiveRate(bitsPerKey: number): number {
  const probes = bloomProbes(bitsPerKey);
  if (probes === 0) return 1;
  return (1 - Math.exp(-probes / bitsPerKey)) ** probes;
}

/** Collects key hashes while a table is written, then builds its filter. */
export class BloomBuilder {
  readonly #bitsPerKey: number;
  #hashes = new Uint32Array(1024);
  #count = 0;
  readonly #scratch: BloomHash = { h1: 0, h2: 0 };

  constructor(bitsPerKey: number) {
    this.#bitsPerKey = bitsPerKey;
  }

  add(key: Uint8Array): void {
    if (this.#bitsPerKey <= 0) return;
    if (this.#count === this.#hashes.length) {
      const grown = new Uint32Array(this.#hashes.length * 2);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    // Only h1 is kept: h2 is derived from it, so the keys themselves need not be held.
    this.#hashes[this.#count++] = bloomHash(key, this.#scratch).h1;
  }

  /** The filter block payload for the keys added. */
  finish(): Uint8Array {
    const probes = bloomProbes(this.#bitsPerKey);
    if (probes === 0) return new Uint8Array([0]);
    const bitCount = Math.max(MIN_BITS, Math.ceil((this.#count * this.#bitsPerKey) / 8) * 8);
    const payload = new Uint8Array(1 + bitCount / 8);
    payload[0] = probes;
    const hash = this.#scratch;
    for (let i = 0; i < this.#count; i++) {
      hash.h1 = this.#hashes[i]!;
      hash.h2 = (mix32(hash.h1 ^ 0x9e3779b9) | 1) >>> 0;
      let bit = hash.h1 % bitCount;
      const step = hash.h2 % bitCount;
      for (let probe = 0; probe < probes; probe++) {
        payload[1 + (bit >>> 3)]! |= 1 << (bit & 7);
        bit += step;
        if (bit >= bitCount) bit -= bitCount;
      }
    }
    return payload;
  }
}

/** A table's filter, read back from its filter block payload. */
export class BloomFilter {
  readonly #bits: Uint8Array;
  readonly #bitCount: number;
  readonly #probes: number;

  /** Throws RangeError on a payload that is not a filter (the table reader reports it). */
  constructor(payload: Uint8Array) {
    if (payload.length < 1) throw new RangeError('empty filter block');
    this.#probes = payload[0]!;
    this.#bits = payload.subarray(1);
    this.#bitCount = this.#bits.length * 8;
    if (this.#probes > MAX_PROBES || (this.#probes > 0 && this.#bitCount < MIN_BITS)) {
      throw new RangeError(`filter with ${this.#probes} probes over ${this.#bitCount} bits`);
    }
  }

  /** False only when the key was certainly never added. */
  mayContain(hash: BloomHash): boolean {
    const probes = this.#probes;
    if (probes === 0) return true;
    const bitCount = this.#bitCount;
    const bits = this.#bits;
    let bit = hash.h1 % bitCount;
    const step = hash.h2 % bitCount;
    for (let probe = 0; probe < probes; probe++) {
      if ((bits[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
      bit += step;
      if (bit >= bitCount) bit -= bitCount;
    }
    return true;
  }

  /** Bytes of the bit array (memory the filter holds while its table is open). */
  get sizeBytes(): number {
    return this.#bits.length;
  }
}
