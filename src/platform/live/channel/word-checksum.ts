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
 *   - each lane starts from its own seed (`RING_CHECKSUM_SEEDS`) and takes a word by
 *     `x = h ^ w; x ^= x >>> 15; h = imul(x, K[lane & 3])`;
 *   - each lane of accumulator k is rotated left by `RING_CHECKSUM_ROTATIONS[k]` (3k bits), the
 *     eight rotated lanes at position p (lanes p, p+4, …, p+28) are XORed into a root,
 *     each of the four roots and the scalar lane is finished by `fmix`, and the five are XORed,
 *     then mixed once more.
 *
 * What it guarantees — the same as the four-lane hash it replaces (layout version 2). Each step is
 * a bijection of the lane state for a fixed word (xor, xor-shift and a multiply by an odd constant
 * are all invertible) and of the word for a fixed state; a rotation is a bijection, so a changed
 * lane changes its root (the other seven terms are untouched); `fmix` and the last mix
 * are bijections; so a record whose bytes differ from what was sealed **in any one 32-bit word**
 * (any number of flipped bits in it) changes exactly one lane, that lane's root, and the seal: it
 * always fails the check. A changed length seeds the scalar lane differently and frames other
 * words. Damage spread over several words passes with probability ~2⁻³² (as a CRC's beyond its
 * burst length); the xor-shift is what makes it mix within a lane — a multiply alone only carries
 * a difference towards the high bits, so two flips of bit 31 in one lane would cancel. Identical
 * damage in two lanes of an all-equal record cannot cancel either: the lanes start from distinct
 * seeds, and the lanes that share a root are rotated by different amounts before the XOR (equal
 * differences then cancel only if rotation-periodic, like all-ones), each guard enough on its own
 * (test/platform/live/word-checksum.test.ts). The NIC↔host ring lives in process memory (Atomics
 * publish whole records), so the check is there to catch a stray write into shared memory, not
 * line noise; the UDP wire and the TCP channel, which do cross a wire, keep CRC-32C.
 *
 * Why this shape: with one multiply per word the old four-lane hash ran at the scalar multiplier's
 * throughput (one `imul` a cycle: ~150 ns per KiB in WebAssembly, docs/ring-throughput.md "Fourth
 * pass"); `i32x4.mul` multiplies four words at once, and eight accumulators keep eight of its
 * ~10-cycle multiplies in flight. The xor-shift replaces the rotation of the old step because SIMD
 * has no rotate (a rotate is three vector operations, a xor-shift two). The finish is short on
 * purpose: rotations and XORs, then four scalar `fmix` side by side — a producer pays the finish's
 * latency on every message (a first version, a three-level tree of vector multiplies and a vector
 * `fmix`, ~60 cycles deep, made 64-byte writes 20% slower; one vector multiply per lane instead of
 * the rotation, 8%).
 */

const K1 = 0x9e3779b1 | 0;
const K2 = 0x85ebca77 | 0;
const K3 = 0xc2b2ae3d | 0;
const K4 = 0x27d4eb2f | 0;

/** The step's xor-shift, and each lane's multiplier by its position in a 16-byte vector. */
export const RING_CHECKSUM_SHIFT = 15;
export const RING_CHECKSUM_MULTIPLIERS: readonly number[] = [K1, K2, K3, K4];
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

/**
 * Each accumulator's rotation before its lanes are XORed into the roots. Pairwise differences are
 * 3–21 bits, so two equal differences cancel only if rotation-periodic with a period of at most 4
 * bits (16 of the 2³² words).
 */
export const RING_CHECKSUM_ROTATIONS: readonly number[] = [0, 3, 6, 9, 12, 15, 18, 21];

/** The scalar lane's seed for a record of `length` bytes. */
export function scalarSeed(length: number): number {
  return Math.imul(length ^ K4, K2);
}

/** The rotated lanes 16–31 XORed at each position while they still hold their seeds (a record under 128 bytes). */
export const UPPER_HALF_OF_SEED_ROOTS: Int32Array = Int32Array.from({ length: 4 }, (_, position) =>
  seedRoot(position, 4, 8),
);

/** The XOR of the four finished roots while every lane holds its seed (a record under 16 bytes). */
export const SEED_ONLY_VECTOR_PART: number = [0, 1, 2, 3].reduce(
  (h, position) => h ^ fmix32(seedRoot(position, 0, 8)),
  0,
);

function seedRoot(position: number, fromAccumulator: number, toAccumulator: number): number {
  let root = 0;
  for (let accumulator = fromAccumulator; accumulator < toAccumulator; accumulator++) {
    root ^= rotateLeft(
      RING_CHECKSUM_SEEDS[accumulator * 4 + position]!,
      RING_CHECKSUM_ROTATIONS[accumulator]!,
    );
  }
  return root;
}

function rotateLeft(x: number, bits: number): number {
  return (x << bits) | (x >>> (32 - bits));
}

/** Lane states between the lane loops and the roots (one array per thread: the hash never re-enters). */
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
  // Two accumulators (eight lanes) at a time: eight independent multiplies in flight and half the
  // loop overhead of one at a time (20–30% faster at 256 B–1 KiB; a few values spill either way).
  // Below 128 bytes accumulators 4–7 keep their seeds (their part of each root is a constant),
  // below 16 all do.
  const accumulators = length < 16 ? 0 : length < 128 ? 4 : 8;
  for (let accumulator = 0; accumulator < accumulators; accumulator += 2) {
    const lane = accumulator << 2;
    let h0 = seeds[lane]!;
    let h1 = seeds[lane + 1]!;
    let h2 = seeds[lane + 2]!;
    let h3 = seeds[lane + 3]!;
    let h4 = seeds[lane + 4]!;
    let h5 = seeds[lane + 5]!;
    let h6 = seeds[lane + 6]!;
    let h7 = seeds[lane + 7]!;
    let word = base + lane;
    let x = 0;
    for (; word < blockEnd; word += 32) {
      x = h0 ^ words[word + 0]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
      x = h4 ^ words[word + 4]!;
      h4 = Math.imul(x ^ (x >>> 15), K1);
      x = h5 ^ words[word + 5]!;
      h5 = Math.imul(x ^ (x >>> 15), K2);
      x = h6 ^ words[word + 6]!;
      h6 = Math.imul(x ^ (x >>> 15), K3);
      x = h7 ^ words[word + 7]!;
      h7 = Math.imul(x ^ (x >>> 15), K4);
    }
    if (lane < 16 && (length & 64) !== 0) {
      word = part64 + lane;
      x = h0 ^ words[word + 0]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
      x = h4 ^ words[word + 4]!;
      h4 = Math.imul(x ^ (x >>> 15), K1);
      x = h5 ^ words[word + 5]!;
      h5 = Math.imul(x ^ (x >>> 15), K2);
      x = h6 ^ words[word + 6]!;
      h6 = Math.imul(x ^ (x >>> 15), K3);
      x = h7 ^ words[word + 7]!;
      h7 = Math.imul(x ^ (x >>> 15), K4);
    }
    if (lane < 8 && (length & 32) !== 0) {
      word = part32 + lane;
      x = h0 ^ words[word + 0]!;
      h0 = Math.imul(x ^ (x >>> 15), K1);
      x = h1 ^ words[word + 1]!;
      h1 = Math.imul(x ^ (x >>> 15), K2);
      x = h2 ^ words[word + 2]!;
      h2 = Math.imul(x ^ (x >>> 15), K3);
      x = h3 ^ words[word + 3]!;
      h3 = Math.imul(x ^ (x >>> 15), K4);
      x = h4 ^ words[word + 4]!;
      h4 = Math.imul(x ^ (x >>> 15), K1);
      x = h5 ^ words[word + 5]!;
      h5 = Math.imul(x ^ (x >>> 15), K2);
      x = h6 ^ words[word + 6]!;
      h6 = Math.imul(x ^ (x >>> 15), K3);
      x = h7 ^ words[word + 7]!;
      h7 = Math.imul(x ^ (x >>> 15), K4);
    }
    if (lane === 0 && (length & 16) !== 0) {
      word = part16;
      x = h0 ^ words[word + 0]!;
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
    lanes[lane + 4] = h4;
    lanes[lane + 5] = h5;
    lanes[lane + 6] = h6;
    lanes[lane + 7] = h7;
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
    let root = UPPER_HALF_OF_SEED_ROOTS[position]!;
    if (accumulators === 8) {
      const l4 = lanes[position + 16]!;
      const l5 = lanes[position + 20]!;
      const l6 = lanes[position + 24]!;
      const l7 = lanes[position + 28]!;
      root =
        ((l4 << 12) | (l4 >>> 20)) ^
        ((l5 << 15) | (l5 >>> 17)) ^
        ((l6 << 18) | (l6 >>> 14)) ^
        ((l7 << 21) | (l7 >>> 11));
    }
    const l1 = lanes[position + 4]!;
    const l2 = lanes[position + 8]!;
    const l3 = lanes[position + 12]!;
    root ^=
      lanes[position]! ^ ((l1 << 3) | (l1 >>> 29)) ^ ((l2 << 6) | (l2 >>> 26)) ^ ((l3 << 9) | (l3 >>> 23));
    h ^= fmix32(root);
  }
  h = Math.imul(h ^ (h >>> 16), K1);
  return (h ^ (h >>> 15)) | 0;
}
