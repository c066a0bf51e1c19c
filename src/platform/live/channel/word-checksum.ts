/**
 * The ring's per-record checksum (iPipe §3 "Host–NIC messaging": a 4-byte checksum on every
 * message, sealed by the producer and verified by the consumer): a 33-lane multiplicative word hash
 * whose 32 vector lanes are laid out for WebAssembly SIMD (word-checksum-wasm.ts runs them as eight
 * `i32x4` accumulators; this file is the same function in JavaScript, for a ring side that has only
 * the SharedArrayBuffer — the two agree bit for bit, test/platform/live/word-checksum-wasm.test.ts).
 *
 * The function (ring layout version 3). A record of `length` bytes is read as little-endian 32-bit
 * words; its whole 16-byte vectors go to the 32 vector lanes, the 0–3 words after them and the
 * zero-padded 1–3 byte tail to one scalar lane seeded with the length:
 *
 *   - 128-byte blocks: word j of each block (j = 0..31) goes to lane j;
 *   - then, of the 0–127 bytes left, a 64-byte part (if there is one) goes to lanes 0–15, then a
 *     32-byte part to lanes 0–7, then a 16-byte part to lanes 0–3 — each part word j to lane j;
 *   - each lane starts from its own seed (`SEEDS`) and takes a word by
 *     `x = h ^ w; x ^= x >>> 15; h = imul(x, K[lane & 3])`;
 *   - the eight lanes at position p of the eight accumulators (lanes p, p+4, …, p+28) are combined
 *     by a tree `pair(a, b) = imul(a, K) ^ b` (three levels, K2, K3, K1), the root is finished by
 *     `fmix`, and the four roots and `fmix` of the scalar lane are XORed, then mixed once more.
 *
 * What it guarantees — the same as the four-lane hash it replaces (layout version 2). Each step is
 * a bijection of the lane state for a fixed word (xor, xor-shift and a multiply by an odd constant
 * are all invertible) and of the word for a fixed state; `pair` is a bijection of either argument
 * when the other is fixed; `fmix` and the last mix are bijections; so a record whose bytes differ
 * from what was sealed **in any one 32-bit word** (any number of flipped bits in it) changes exactly
 * one lane, that lane's root, and the seal: it always fails the check. A changed length seeds the
 * scalar lane differently and frames other words. Damage spread over several words passes with
 * probability ~2⁻³² (as a CRC's beyond its burst length); the xor-shift is what makes it mix
 * within a lane — a multiply alone only carries a difference towards the high bits, so two flips of
 * bit 31 in one lane would cancel. Identical damage in two lanes of an all-equal record cannot
 * cancel either: the lanes start from distinct seeds, and `pair` is lopsided (a multiply on one
 * side only), each enough on its own (test/platform/live/word-checksum.test.ts). The NIC↔host ring lives in process memory
 * (Atomics publish whole records), so the check is there to catch a stray write into shared memory,
 * not line noise; the UDP wire and the TCP channel, which do cross a wire, keep CRC-32C.
 *
 * Why this shape: with one multiply per word the old four-lane hash ran at the scalar multiplier's
 * throughput (one `imul` a cycle: ~150 ns per KiB in WebAssembly, docs/ring-throughput.md "Fourth
 * pass"); `i32x4.mul` multiplies four words at once, and eight accumulators keep eight of its
 * ~10-cycle multiplies in flight. The xor-shift replaces the rotation of the old step because SIMD
 * has no rotate (a rotate is three vector operations, a xor-shift two).
 */

const K1 = 0x9e3779b1 | 0;
const K2 = 0x85ebca77 | 0;
const K3 = 0xc2b2ae3d | 0;
const K4 = 0x27d4eb2f | 0;

/** The step's xor-shift, and each lane's multiplier by its position in a 16-byte vector. */
export const RING_CHECKSUM_SHIFT = 15;
export const RING_CHECKSUM_MULTIPLIERS: readonly number[] = [K1, K2, K3, K4];
/** The tree's multipliers, level by level (pairs of accumulators, pairs of pairs, the root). */
export const RING_CHECKSUM_TREE_MULTIPLIERS: readonly number[] = [K2, K3, K1];
/** Vector lanes: eight accumulators of four. */
export const RING_CHECKSUM_LANES = 32;

/** `fmix` of MurmurHash3: a bijection of 32-bit words that spreads every bit over the word. */
export function fmix32(h: number): number {
  let x = Math.imul(h ^ (h >>> 16), K2);
  x = Math.imul(x ^ (x >>> 13), K3);
  return x ^ (x >>> 16);
}

/** Each vector lane's starting state: distinct, so equal words in two lanes do not leave them in equal states. */
export const RING_CHECKSUM_SEEDS: Int32Array = Int32Array.from({ length: RING_CHECKSUM_LANES }, (_, lane) =>
  fmix32(Math.imul(lane + 1, K1) ^ K3),
);

/** The scalar lane's seed for a record of `length` bytes. */
export function scalarSeed(length: number): number {
  return Math.imul(length ^ K4, K2);
}

/**
 * The tree's upper half — pair(pair(lane 16 + p, lane 20 + p), pair(lane 24 + p, lane 28 + p)) —
 * at each position p while accumulators 4–7 still hold their seeds (a record under 128 bytes).
 */
export const UPPER_HALF_OF_SEED_TREE: Int32Array = Int32Array.from({ length: 4 }, (_, position) => {
  const seeds = RING_CHECKSUM_SEEDS;
  const b2 = Math.imul(seeds[16 + position]!, K2) ^ seeds[20 + position]!;
  const b3 = Math.imul(seeds[24 + position]!, K2) ^ seeds[28 + position]!;
  return Math.imul(b2, K3) ^ b3;
});

/** The XOR of the four finished roots while every accumulator holds its seeds (a record under 16 bytes). */
export const SEED_ONLY_VECTOR_PART: number = [0, 1, 2, 3].reduce((h, position) => {
  const seeds = RING_CHECKSUM_SEEDS;
  const b0 = Math.imul(seeds[position]!, K2) ^ seeds[position + 4]!;
  const b1 = Math.imul(seeds[position + 8]!, K2) ^ seeds[position + 12]!;
  return h ^ fmix32(Math.imul(Math.imul(b0, K3) ^ b1, K1) ^ UPPER_HALF_OF_SEED_TREE[position]!);
}, 0);

/** Lane states between the lane loops and the tree (one array per thread: the hash never re-enters). */
const lanes = new Int32Array(RING_CHECKSUM_LANES);

/**
 * The seal of `length` bytes at byte offset `start` (4-aligned) of the memory behind
 * `words`/`bytes`; see the module comment for the function and what it guarantees.
 */
export function ringChecksum(words: Int32Array, bytes: Uint8Array, start: number, length: number): number {
  const base = start >> 2;
  const blockEnd = base + ((length >> 7) << 5);
  // Where the 64-, 32- and 16-byte parts after the blocks start (each is there or not).
  const part64 = blockEnd;
  const part32 = part64 + ((length >> 2) & 16);
  const part16 = part32 + ((length >> 2) & 8);
  const seeds = RING_CHECKSUM_SEEDS;
  // One accumulator (four lanes) at a time: four independent multiplies in flight, as many live
  // values as the registers hold (eight lanes at once spill).
  // Below 128 bytes accumulators 4–7 keep their seeds: their half of the tree is a constant.
  const accumulators = length < 16 ? 0 : length < 128 ? 4 : 8;
  for (let accumulator = 0; accumulator < accumulators; accumulator++) {
    const lane = accumulator << 2;
    let h0 = seeds[lane]!;
    let h1 = seeds[lane + 1]!;
    let h2 = seeds[lane + 2]!;
    let h3 = seeds[lane + 3]!;
    let word = base + lane;
    let x = 0;
    for (; word < blockEnd; word += 32) {
      x = h0 ^ words[word]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
    }
    // The parts after the blocks: the 64-byte one reaches accumulators 0–3, the 32-byte one 0–1,
    // the 16-byte one accumulator 0. (Written out: a loop over the parts was 1.6× slower at 16 B.)
    if (lane < 16 && (length & 64) !== 0) {
      word = part64 + lane;
      x = h0 ^ words[word]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
    }
    if (lane < 8 && (length & 32) !== 0) {
      word = part32 + lane;
      x = h0 ^ words[word]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
    }
    if (lane < 4 && (length & 16) !== 0) {
      word = part16 + lane;
      x = h0 ^ words[word]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
    }
    lanes[lane] = h0;
    lanes[lane + 1] = h1;
    lanes[lane + 2] = h2;
    lanes[lane + 3] = h3;
  }
  // The scalar lane: the 0–3 words after the last whole vector, then the 1–3 byte tail as one
  // zero-padded word (the ring's padding bytes are not sealed).
  let scalar = scalarSeed(length);
  let word = base + ((length >> 4) << 2);
  const wordEnd = word + ((length >> 2) & 3);
  for (; word < wordEnd; word++) {
    const x = scalar ^ words[word]!;
    scalar = Math.imul(x ^ (x >>> 15), K2);
  }
  const rest = length & 3;
  if (rest !== 0) {
    let at = word << 2;
    let tail = bytes[at]!;
    if (rest > 1) tail |= bytes[++at]! << 8;
    if (rest > 2) tail |= bytes[++at]! << 16;
    const x = scalar ^ tail;
    scalar = Math.imul(x ^ (x >>> 15), K2);
  }
  let h = fmix32(scalar);
  if (accumulators === 0) h ^= SEED_ONLY_VECTOR_PART;
  for (let position = 0; accumulators !== 0 && position < 4; position++) {
    const b0 = Math.imul(lanes[position]!, K2) ^ lanes[position + 4]!;
    const b1 = Math.imul(lanes[position + 8]!, K2) ^ lanes[position + 12]!;
    let upper = UPPER_HALF_OF_SEED_TREE[position]!;
    if (accumulators === 8) {
      const b2 = Math.imul(lanes[position + 16]!, K2) ^ lanes[position + 20]!;
      const b3 = Math.imul(lanes[position + 24]!, K2) ^ lanes[position + 28]!;
      upper = Math.imul(b2, K3) ^ b3;
    }
    h ^= fmix32(Math.imul(Math.imul(b0, K3) ^ b1, K1) ^ upper);
  }
  h = Math.imul(h ^ (h >>> 16), K1);
  return (h ^ (h >>> 15)) | 0;
}
