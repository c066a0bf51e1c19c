/**
 * Seeded randomness for every part of ipipe that draws (the simulator, the load generator) (DESIGN.md: "Randomness is always seeded and printed; every
 * simulated run is reproducible from its seed").
 *
 * Generator: xoshiro128** (Blackman & Vigna, 2018) — 128 bits of state, period 2^128 − 1, passes
 * BigCrush, and every step is 32-bit integer work (`Math.imul`, shifts, xor) that V8 keeps in
 * registers, so a draw costs a few nanoseconds and allocates nothing. The state is expanded from
 * the seed with SplitMix64, as the xoshiro authors recommend, so nearby seeds (1, 2, 3) give
 * unrelated streams.
 *
 * Streams: `fork(label)` derives a child generator from this generator's *seed* and the label,
 * never from its current state. A component's randomness therefore depends only on the root seed
 * and its own label path ("nic0/core3"), not on what other components drew or in which order they
 * were created: adding a traffic source does not shift the service times every core draws. Labels
 * must be unique among a parent's children (the same label gives the same stream, by design).
 *
 * Seeds are integers in [0, 2^53), so they print, parse and store in JSON exactly.
 */

const U32 = 2 ** 32;
const INV_U32 = 1 / U32;
const INV_U53 = 1 / 2 ** 53;
const MASK64 = (1n << 64n) - 1n;
const MASK53 = (1n << 53n) - 1n;

/** SplitMix64's output function (Steele, Lea & Flood 2014): a strong 64-bit bit mixer. */
function mix64(value: bigint): bigint {
  let z = value & MASK64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

const GOLDEN_GAMMA = 0x9e3779b97f4a7c15n;

/** The first `count` outputs of SplitMix64 seeded with `seed` (exported for the reference test). */
export function splitMix64(seed: bigint, count: number): bigint[] {
  const out: bigint[] = [];
  let state = seed & MASK64;
  for (let i = 0; i < count; i++) {
    state = (state + GOLDEN_GAMMA) & MASK64;
    out.push(mix64(state));
  }
  return out;
}

/** FNV-1a over the label's UTF-16 code units, 64-bit. Only needs to separate labels, not resist attack. */
function hashLabel(label: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < label.length; i++) {
    hash ^= BigInt(label.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & MASK64;
  }
  return hash;
}

function checkSeed(seed: number): void {
  if (!(Number.isInteger(seed) && seed >= 0 && seed <= Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`seed must be an integer in [0, 2^53), got ${seed}`);
  }
}

/** A seed from the operating system's entropy, for runs given no `--seed` (print it!). */
export function freshSeed(): number {
  const words = globalThis.crypto.getRandomValues(new Uint32Array(2));
  return (words[0]! & 0x1fffff) * U32 + words[1]!;
}

export class Random {
  /** The seed this generator was made from; with `label`, all it takes to reproduce its stream. */
  readonly seed: number;
  /** The fork path from the root generator ("" for the root, "nic0/core3" for a grandchild). */
  readonly label: string;
  // xoshiro128** state as int32 (V8 keeps these as small integers, no boxing). Initialized here:
  // a field declared without a value is `undefined` first, and V8 then types it "any value", so
  // every read of the state in `nextU32` checked for a boxed number (see event-heap.ts).
  #s0 = 0;
  #s1 = 0;
  #s2 = 0;
  #s3 = 0;

  constructor(seed: number, label = '') {
    checkSeed(seed);
    this.seed = seed;
    this.label = label;
    const [first, second] = splitMix64(BigInt(seed), 2) as [bigint, bigint];
    this.#s0 = Number(first & 0xffffffffn) | 0;
    this.#s1 = Number(first >> 32n) | 0;
    this.#s2 = Number(second & 0xffffffffn) | 0;
    this.#s3 = Number(second >> 32n) | 0;
    // The all-zero state is xoshiro's one fixed point; SplitMix64 practically never yields it.
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** Builds a generator from an explicit xoshiro128** state (for reference-vector tests). */
  static fromState(s0: number, s1: number, s2: number, s3: number): Random {
    const random = new Random(0, '<state>');
    random.#s0 = s0 | 0;
    random.#s1 = s1 | 0;
    random.#s2 = s2 | 0;
    random.#s3 = s3 | 0;
    return random;
  }

  /**
   * An independent generator for a component, derived from this generator's seed and `label`
   * (not its state): forking never consumes from this stream, and the child's stream does not
   * depend on how much anyone else has drawn.
   */
  fork(label: string): Random {
    const childSeed = Number(mix64(BigInt(this.seed) ^ mix64(hashLabel(label) + GOLDEN_GAMMA)) & MASK53);
    return new Random(childSeed, this.label === '' ? label : `${this.label}/${label}`);
  }

  /** The next 32 uniformly random bits, as an integer in [0, 2^32). */
  nextU32(): number {
    const s0 = this.#s0;
    const s1 = this.#s1;
    const s2 = this.#s2 ^ s0;
    const s3 = this.#s3 ^ s1;
    const scrambled = Math.imul(s1, 5);
    const result = Math.imul((scrambled << 7) | (scrambled >>> 25), 9);
    this.#s0 = s0 ^ s3;
    this.#s1 = s1 ^ s2;
    this.#s2 = s2 ^ (s1 << 9);
    this.#s3 = (s3 << 11) | (s3 >>> 21);
    return result >>> 0;
  }

  /**
   * A uniform double in [0, 1) with 32 random bits (a multiple of 2^-32). The fast default: ample
   * for sampling delays and choices. Use `nextDouble` where 53 bits of resolution matter.
   */
  next(): number {
    return this.nextU32() * INV_U32;
  }

  /** A uniform double in [0, 1) with the full 53 bits (two draws). */
  nextDouble(): number {
    const high = this.nextU32() >>> 5;
    const low = this.nextU32() >>> 6;
    return (high * 67108864 + low) * INV_U53;
  }

  /**
   * A uniform integer in [lo, hi) — hi exclusive, like array bounds. Unbiased (rejection), for
   * ranges up to 2^53.
   */
  int(lo: number, hi: number): number {
    const range = hi - lo;
    if (!(Number.isSafeInteger(lo) && Number.isSafeInteger(hi) && range >= 1 && range <= 2 ** 53)) {
      throw new RangeError(`int(lo, hi) needs integers with lo < hi and hi − lo ≤ 2^53, got [${lo}, ${hi})`);
    }
    if (range <= U32) {
      // Reject the top (2^32 mod range) values so every residue is equally likely.
      const limit = U32 - (U32 % range);
      let draw = this.nextU32();
      while (draw >= limit) draw = this.nextU32();
      return lo + (draw % range);
    }
    const limit = 2 ** 53 - (2 ** 53 % range);
    for (;;) {
      const draw = (this.nextU32() >>> 11) * U32 + this.nextU32();
      if (draw < limit) return lo + (draw % range);
    }
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.nextU32() * INV_U32 < p;
  }
}
