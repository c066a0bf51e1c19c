/**
 * The ring's per-record checksum: a four-lane multiplicative word hash, 3–5× cheaper than CRC-32C in
 * JavaScript (CRC-32C by slicing-by-8 costs ~1.1 ns per byte here; on a 1 KiB record that was 90% of
 * each side's work, bench/RESULTS.md).
 *
 * What it guarantees. Each step `h = imul(rotl(h ^ w, r), K)` (K odd) is a bijection of `h` for a
 * fixed word `w`, and for a fixed `h` a bijection of `w`. So a record whose bytes differ from what
 * was sealed **in any one 32-bit word** (any number of flipped bits in it, or a changed length,
 * which seeds the hash) always fails the check; damage spread over several words passes with
 * probability ~2⁻³² — the same as a CRC's for errors beyond its burst length. (The rotation is what
 * makes multi-word damage mix: a multiply alone only carries a difference towards the high bits, so
 * two flips of bit 31 in one lane would cancel; the rotation brings it back down before the next
 * multiply spreads it. V8 compiles `(x << r) | (x >>> (32 − r))` to one rotate instruction, so a
 * step is xor, rotate, multiply — one operation fewer than the xor-shift mix it replaces.) The
 * NIC↔host ring lives in process memory (Atomics publish whole records), so the check is there to
 * catch a stray write into shared memory, not line noise; the UDP wire and the TCP channel, which
 * do cross a wire, keep CRC-32C.
 */

const K1 = 0x9e3779b1 | 0;
const K2 = 0x85ebca77 | 0;
const K3 = 0xc2b2ae3d | 0;
const K4 = 0x27d4eb2f | 0;

/**
 * Hash of `length` bytes at byte offset `start` (4-aligned) of the memory behind `words`/`bytes`,
 * seeded with the length. Four independent lanes take the words round-robin, so the multiplies
 * overlap instead of waiting on each other; a damaged word changes exactly one lane, and the lanes
 * are combined by XOR after a bijective finish each, so the damage still always shows.
 */
export function ringChecksum(words: Int32Array, bytes: Uint8Array, start: number, length: number): number {
  let h0 = Math.imul(length ^ K4, K2);
  let h1 = K1;
  let h2 = K3;
  let h3 = K4;
  let word = start >> 2;
  // Eight words a round, two per lane: fewer loop-control and bounds-check instructions per word.
  const octEnd = word + ((length >> 5) << 3);
  for (; word < octEnd; word += 8) {
    let x0 = h0 ^ (words[word] as number);
    let x1 = h1 ^ (words[word + 1] as number);
    let x2 = h2 ^ (words[word + 2] as number);
    let x3 = h3 ^ (words[word + 3] as number);
    x0 = Math.imul((x0 << 15) | (x0 >>> 17), K1) ^ (words[word + 4] as number);
    x1 = Math.imul((x1 << 13) | (x1 >>> 19), K2) ^ (words[word + 5] as number);
    x2 = Math.imul((x2 << 16) | (x2 >>> 16), K3) ^ (words[word + 6] as number);
    x3 = Math.imul((x3 << 17) | (x3 >>> 15), K1) ^ (words[word + 7] as number);
    h0 = Math.imul((x0 << 15) | (x0 >>> 17), K1);
    h1 = Math.imul((x1 << 13) | (x1 >>> 19), K2);
    h2 = Math.imul((x2 << 16) | (x2 >>> 16), K3);
    h3 = Math.imul((x3 << 17) | (x3 >>> 15), K1);
  }
  const quadEnd = octEnd + ((length >> 4) & 1) * 4;
  if (word < quadEnd) {
    const x0 = h0 ^ (words[word] as number);
    const x1 = h1 ^ (words[word + 1] as number);
    const x2 = h2 ^ (words[word + 2] as number);
    const x3 = h3 ^ (words[word + 3] as number);
    h0 = Math.imul((x0 << 15) | (x0 >>> 17), K1);
    h1 = Math.imul((x1 << 13) | (x1 >>> 19), K2);
    h2 = Math.imul((x2 << 16) | (x2 >>> 16), K3);
    h3 = Math.imul((x3 << 17) | (x3 >>> 15), K1);
    word = quadEnd;
  }
  const wordEnd = quadEnd + ((length >> 2) & 3);
  for (; word < wordEnd; word++) {
    const x0 = h0 ^ (words[word] as number);
    h0 = Math.imul((x0 << 15) | (x0 >>> 17), K1);
  }
  const rest = length & 3;
  if (rest !== 0) {
    // The last 1–3 bytes, as one word with zero padding (the ring's padding bytes are not sealed).
    let at = word << 2;
    let tail = bytes[at] as number;
    if (rest > 1) tail |= (bytes[++at] as number) << 8;
    if (rest > 2) tail |= (bytes[++at] as number) << 16;
    h0 = Math.imul(h0 ^ tail, K2);
    h0 ^= h0 >>> 13;
  }
  return finish(h0, h1, h2, h3);
}

/** Each lane is finished by a bijection before the XOR, so one lane's change cannot be cancelled. */
function finish(h0: number, h1: number, h2: number, h3: number): number {
  let h = fmix(h0) ^ fmix(Math.imul(h1, K3)) ^ fmix(Math.imul(h2, K1)) ^ fmix(Math.imul(h3, K2));
  h = Math.imul(h ^ (h >>> 16), K1);
  return (h ^ (h >>> 15)) | 0;
}

function fmix(h: number): number {
  let x = Math.imul(h ^ (h >>> 16), K2);
  x = Math.imul(x ^ (x >>> 13), K3);
  return x ^ (x >>> 16);
}
