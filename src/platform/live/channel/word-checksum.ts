/**
 * The ring's per-record checksum: a multiplicative word hash, ~4× cheaper than CRC-32C in
 * JavaScript (CRC-32C by slicing-by-8 costs ~1.1 ns per byte here; on a 1 KiB record that was 90% of
 * each side's work, bench/RESULTS.md).
 *
 * What it guarantees. Each step `h = imul(h ^ w, K); h ^= h >>> 15` is a bijection of `h` for a
 * fixed word `w`, and for a fixed `h` a bijection of `w`. So a record whose bytes differ from what
 * was sealed **in any one 32-bit word** (any number of flipped bits in it, or a changed length,
 * which seeds the hash) always fails the check; damage spread over several words passes with
 * probability ~2⁻³² — the same as a CRC's for errors beyond its burst length. The NIC↔host ring
 * lives in process memory (Atomics publish whole records), so the check is there to catch a
 * stray write into shared memory, not line noise; the UDP wire and the TCP channel, which do cross
 * a wire, keep CRC-32C.
 */

const K1 = 0x9e3779b1 | 0;
const K2 = 0x85ebca77 | 0;
const K3 = 0xc2b2ae3d | 0;
const K4 = 0x27d4eb2f | 0;

/**
 * Hash of `length` bytes at byte offset `start` (4-aligned) of the memory behind `words`/`bytes`,
 * seeded with the length. Four independent lanes take the words round-robin, so the multiplies
 * overlap instead of waiting on each other (one lane alone ran at ~0.57 ns/byte, latency-bound);
 * a damaged word changes exactly one lane, and the lanes are combined by XOR before a bijective
 * final mix, so the damage still always shows.
 */
export function ringChecksum(words: Int32Array, bytes: Uint8Array, start: number, length: number): number {
  let h0 = Math.imul(length ^ K4, K2);
  let h1 = K1;
  let h2 = K3;
  let h3 = K4;
  let word = start >> 2;
  const quadEnd = word + ((length >> 4) << 2);
  for (; word < quadEnd; word += 4) {
    h0 = Math.imul(h0 ^ (words[word] as number), K1);
    h1 = Math.imul(h1 ^ (words[word + 1] as number), K2);
    h2 = Math.imul(h2 ^ (words[word + 2] as number), K3);
    h3 = Math.imul(h3 ^ (words[word + 3] as number), K1);
    h0 ^= h0 >>> 15;
    h1 ^= h1 >>> 13;
    h2 ^= h2 >>> 16;
    h3 ^= h3 >>> 15;
  }
  let at = word << 2;
  const end = start + length;
  for (; end - at >= 4; at += 4, word++) {
    h0 = Math.imul(h0 ^ (words[word] as number), K1);
    h0 ^= h0 >>> 15;
  }
  if (at < end) {
    // The last 1–3 bytes, as one word with zero padding (the ring's padding bytes are not sealed).
    let tail = 0;
    for (let shift = 0; at < end; at++, shift += 8) tail |= (bytes[at] as number) << shift;
    h0 = Math.imul(h0 ^ tail, K2);
    h0 ^= h0 >>> 13;
  }
  // Each lane is finished by a bijection before the XOR, so one lane's change cannot be cancelled.
  let h = fmix(h0) ^ fmix(Math.imul(h1, K3)) ^ fmix(Math.imul(h2, K1)) ^ fmix(Math.imul(h3, K2));
  h = Math.imul(h ^ (h >>> 16), K1);
  return (h ^ (h >>> 15)) | 0;
}

function fmix(h: number): number {
  let x = Math.imul(h ^ (h >>> 16), K2);
  x = Math.imul(x ^ (x >>> 13), K3);
  return x ^ (x >>> 16);
}
