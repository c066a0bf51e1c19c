/**
 * Byte hashing and comparison for the DMO collections (the hash map's buckets, the skip list's
 * key order). Not from the paper, which leaves the structures' internals to the application.
 *
 * Hash: xxHash32 (Collet), seeded. It reads four bytes at a time into four independent lanes, so
 * a 16-byte key costs four parallel multiply rounds plus the avalanche — measured here at about a
 * third of byte-serial FNV-1a's time for such keys — and its avalanche mixes the low bits that the
 * hash map's power-of-two table indexes by. No allocation. Not cryptographic: a map that takes keys
 * from adversarial clients should be created with a secret seed.
 */

// xxHash32's primes. Node's V8 does not fold module-level constants: each use re-loads the value,
// and three of the five are above 2^31, so V8 handles them as doubles and turns the additions
// around them into float64 arithmetic. The per-stripe hot code (round, hashWords16) therefore
// spells them as literals, named in comments; every use is modulo 2^32 (Math.imul or `| 0`).
const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;

/** murmur3's 32-bit finaliser: a bijection on u32 with full avalanche (for numeric keys). */
export function mix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Little-endian u32 at `bytes[i, i + 4)` (keys are arbitrary byte arrays, so no aligned view). */
function word(bytes: Uint8Array, i: number): number {
  return bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
}

function round(accumulator: number, lane: number): number {
  const sum = (accumulator + Math.imul(lane, 0x85ebca77 /* PRIME32_2 */)) | 0;
  return Math.imul((sum << 13) | (sum >>> 19), 0x9e3779b1 /* PRIME32_1 */);
}

/** xxHash32 of `bytes[start, end)` under `seed`, as a u32 (bit-exact with the reference). */
export function hashBytes(bytes: Uint8Array, start: number, end: number, seed: number): number {
  const length = end - start;
  let i = start;
  let h: number;
  if (length >= 16) {
    // Four independent lanes: the CPU overlaps their multiplies, unlike FNV's serial chain.
    let v1 = (seed + PRIME32_1 + PRIME32_2) | 0;
    let v2 = (seed + PRIME32_2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME32_1) | 0;
    for (const limit = end - 16; i <= limit; i += 16) {
      v1 = round(v1, word(bytes, i));
      v2 = round(v2, word(bytes, i + 4));
      v3 = round(v3, word(bytes, i + 8));
      v4 = round(v4, word(bytes, i + 12));
    }
    h =
      (((v1 << 1) | (v1 >>> 31)) +
        ((v2 << 7) | (v2 >>> 25)) +
        ((v3 << 12) | (v3 >>> 20)) +
        ((v4 << 18) | (v4 >>> 14))) |
      0;
  } else {
    h = (seed + PRIME32_5) | 0;
  }
  h = (h + length) | 0;
  for (; i + 4 <= end; i += 4) {
    h = (h + Math.imul(word(bytes, i), PRIME32_3)) | 0;
    h = Math.imul((h << 17) | (h >>> 15), PRIME32_4);
  }
  for (; i < end; i++) {
    h = (h + Math.imul(bytes[i]!, PRIME32_5)) | 0;
    h = Math.imul((h << 11) | (h >>> 21), PRIME32_1);
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME32_2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME32_3);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * xxHash32 of the `byteLength` bytes packed little-endian into `words` (the last word zero-padded),
 * equal to `hashBytes` over the same bytes. The hash map packs a key into words once and then
 * hashes and compares it a word at a time.
 */
export function hashWords(words: Uint32Array, byteLength: number, seed: number): number {
  let w = 0;
  let h: number;
  if (byteLength >= 16) {
    let v1 = (seed + PRIME32_1 + PRIME32_2) | 0;
    let v2 = (seed + PRIME32_2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME32_1) | 0;
    for (const stripes = byteLength >>> 4; w < stripes * 4; w += 4) {
      v1 = round(v1, words[w]!);
      v2 = round(v2, words[w + 1]!);
      v3 = round(v3, words[w + 2]!);
      v4 = round(v4, words[w + 3]!);
    }
    h =
      (((v1 << 1) | (v1 >>> 31)) +
        ((v2 << 7) | (v2 >>> 25)) +
        ((v3 << 12) | (v3 >>> 20)) +
        ((v4 << 18) | (v4 >>> 14))) |
      0;
  } else {
    h = (seed + PRIME32_5) | 0;
  }
  h = (h + byteLength) | 0;
  const fullWords = byteLength >>> 2;
  for (; w < fullWords; w++) {
    h = (h + Math.imul(words[w]!, PRIME32_3)) | 0;
    h = Math.imul((h << 17) | (h >>> 15), PRIME32_4);
  }
  const tailBytes = byteLength & 3;
  if (tailBytes !== 0) {
    const tail = words[w]!;
    for (let b = 0; b < tailBytes; b++) {
      h = (h + Math.imul((tail >>> (8 * b)) & 0xff, PRIME32_5)) | 0;
      h = Math.imul((h << 11) | (h >>> 21), PRIME32_1);
    }
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME32_2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME32_3);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * xxHash32 of a 16-byte key given as its four little-endian words `w0…w3`, equal to
 * `hashWords` (and `hashBytes`) over the same 16 bytes. The hash map's common case (16-byte keys:
 * ids, UUIDs, fixed-width keys) reads the key straight into four locals and hashes them here —
 * one stripe, no loops, no scratch array — which V8 inlines into the lookup.
 */
export function hashWords16(w0: number, w1: number, w2: number, w3: number, seed: number): number {
  // One stripe of four rounds, written out (each is round() above) so that it costs V8 less of
  // the inlining budget of the lookup it is inlined into. The lane seeds are taken modulo 2^32 with
  // int32 literals (2^32 − PRIME32_1 = 1640531535, 2^32 − PRIME32_2 = 2048144777), so V8 adds
  // integers rather than doubles.
  let v1 = (seed - 1640531535 - 2048144777 + Math.imul(w0, 0x85ebca77)) | 0; // seed + P1 + P2
  let v2 = (seed - 2048144777 + Math.imul(w1, 0x85ebca77)) | 0; // seed + P2
  let v3 = (seed + Math.imul(w2, 0x85ebca77)) | 0; // seed
  let v4 = (seed + 1640531535 + Math.imul(w3, 0x85ebca77)) | 0; // seed − P1
  v1 = Math.imul((v1 << 13) | (v1 >>> 19), 0x9e3779b1);
  v2 = Math.imul((v2 << 13) | (v2 >>> 19), 0x9e3779b1);
  v3 = Math.imul((v3 << 13) | (v3 >>> 19), 0x9e3779b1);
  v4 = Math.imul((v4 << 13) | (v4 >>> 19), 0x9e3779b1);
  let h =
    (((v1 << 1) | (v1 >>> 31)) +
      ((v2 << 7) | (v2 >>> 25)) +
      ((v3 << 12) | (v3 >>> 20)) +
      ((v4 << 18) | (v4 >>> 14)) +
      16) |
    0;
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca77 /* PRIME32_2 */);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae3d /* PRIME32_3 */);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Packs `bytes[0, byteLength)` little-endian into `words` from `firstWord` on (it must hold
 * ⌈byteLength / 4⌉ words there), zero-padding the last word.
 */
export function packWords(bytes: Uint8Array, byteLength: number, words: Uint32Array, firstWord = 0): void {
  let i = 0;
  let w = firstWord;
  for (; i + 4 <= byteLength; i += 4) {
    words[w++] = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
  }
  if (i < byteLength) {
    let last = 0;
    for (let shift = 0; i < byteLength; i++, shift += 8) last |= bytes[i]! << shift;
    words[w] = last;
  }
}

/** Lexicographic order of `a` and `memory[start, start + length)`: negative, 0 or positive. */
export function compareBytes(a: Uint8Array, memory: Uint8Array, start: number, length: number): number {
  const common = Math.min(a.length, length);
  for (let i = 0; i < common; i++) {
    const difference = a[i]! - memory[start + i]!;
    if (difference !== 0) return difference;
  }
  return a.length - length;
}

/** Copies `source[start, start + length)` to `target` at `targetOffset` without making a view. */
export function copyBytes(
  source: Uint8Array,
  start: number,
  length: number,
  target: Uint8Array,
  targetOffset: number,
): void {
  if (length <= 64) {
    for (let i = 0; i < length; i++) target[targetOffset + i] = source[start + i]!;
  } else {
    target.set(source.subarray(start, start + length), targetOffset);
  }
}

/**
 * Copies `source[0, length)` into memory starting at word `word`: whole words through `u32` (one
 * store per 4 bytes instead of four) and the last `length % 4` bytes through `u8`, so nothing past
 * the value's last byte is written. `u8` and `u32` view the same buffer. The main loop moves 16
 * bytes per iteration as straight-line code (measured: a 16-byte value costs a third less than a
 * word-at-a-time loop, whose per-iteration checks dominate at this size).
 */
export function copyBytesToWords(
  source: Uint8Array,
  length: number,
  u8: Uint8Array,
  u32: Uint32Array,
  word: number,
): void {
  let i = 0;
  let w = word;
  for (; i + 16 <= length; i += 16, w += 4) {
    u32[w] = source[i]! | (source[i + 1]! << 8) | (source[i + 2]! << 16) | (source[i + 3]! << 24);
    u32[w + 1] = source[i + 4]! | (source[i + 5]! << 8) | (source[i + 6]! << 16) | (source[i + 7]! << 24);
    u32[w + 2] = source[i + 8]! | (source[i + 9]! << 8) | (source[i + 10]! << 16) | (source[i + 11]! << 24);
    u32[w + 3] = source[i + 12]! | (source[i + 13]! << 8) | (source[i + 14]! << 16) | (source[i + 15]! << 24);
  }
  for (; i + 4 <= length; i += 4, w++) {
    u32[w] = source[i]! | (source[i + 1]! << 8) | (source[i + 2]! << 16) | (source[i + 3]! << 24);
  }
  if (i < length) {
    const tail = 4 * w;
    for (let b = 0; i < length; i++, b++) u8[tail + b] = source[i]!;
  }
}

/**
 * Copies `length` bytes stored from word `word` of `u32` into `target` at `targetOffset`, reading a
 * word at a time, 16 bytes per iteration as straight-line code (the caller has checked both
 * ranges).
 */
export function copyWordsToBytes(
  u32: Uint32Array,
  word: number,
  length: number,
  target: Uint8Array,
  targetOffset: number,
): void {
  let i = targetOffset;
  let w = word;
  const end = targetOffset + length;
  for (; i + 16 <= end; i += 16, w += 4) {
    const a = u32[w]!;
    const b = u32[w + 1]!;
    const c = u32[w + 2]!;
    const d = u32[w + 3]!;
    target[i] = a;
    target[i + 1] = a >>> 8;
    target[i + 2] = a >>> 16;
    target[i + 3] = a >>> 24;
    target[i + 4] = b;
    target[i + 5] = b >>> 8;
    target[i + 6] = b >>> 16;
    target[i + 7] = b >>> 24;
    target[i + 8] = c;
    target[i + 9] = c >>> 8;
    target[i + 10] = c >>> 16;
    target[i + 11] = c >>> 24;
    target[i + 12] = d;
    target[i + 13] = d >>> 8;
    target[i + 14] = d >>> 16;
    target[i + 15] = d >>> 24;
  }
  for (; i + 4 <= end; i += 4, w++) {
    const bytes = u32[w]!;
    target[i] = bytes;
    target[i + 1] = bytes >>> 8;
    target[i + 2] = bytes >>> 16;
    target[i + 3] = bytes >>> 24;
  }
  if (i < end) {
    for (let bytes = u32[w]!; i < end; i++, bytes >>>= 8) target[i] = bytes;
  }
}
