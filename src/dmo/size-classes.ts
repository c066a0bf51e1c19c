/**
 * The allocator's size classes (iPipe §3, "Distributed memory objects": `dmo_malloc` inside an
 * actor's fixed region; the paper leaves the allocator open, this is our choice).
 *
 * Blocks come in classes so that a freed block can be found again in O(1) by the next request of
 * the same class, without searching or splitting:
 *
 *   class  0..31   16, 32, 48, …, 512 bytes           (16-byte steps: small objects, list nodes)
 *   class 32..     four geometric steps per power of two above 512:
 *                  640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, …
 *
 * Internal fragmentation (block bytes wasted over requested bytes) is therefore below 16 bytes for
 * small objects and below 25 % of the request above 512 bytes. Every block size is a multiple of
 * 16, so every object starts 16-byte aligned (float64 fields at aligned offsets stay aligned).
 */

/** Smallest block: also the room a free block needs for its free-list link and its size. */
export const MIN_BLOCK_BYTES = 16;
const SMALL_LIMIT_BYTES = 512;
const SMALL_CLASS_COUNT = 32;
/** 2^9 = 512: the first power of two after which classes grow geometrically. */
const FIRST_GEOMETRIC_POWER = 9;
const STEPS_PER_DOUBLING = 4;

/** Largest class index any u32-sized block needs (2^32 falls in class 123); bitmap holds 128. */
export const MAX_CLASS_COUNT = 128;

/** Smallest class whose blocks hold `sizeBytes` (0 is treated as 1: even an empty object gets a block). */
export function classCeil(sizeBytes: number): number {
  if (sizeBytes <= SMALL_LIMIT_BYTES) {
    return sizeBytes <= MIN_BLOCK_BYTES ? 0 : ((sizeBytes + 15) >>> 4) - 1;
  }
  // 2^power < sizeBytes ≤ 2^(power+1), power ≥ 9. Plain arithmetic: 2^31 does not fit an int32.
  const power = 31 - Math.clz32(sizeBytes - 1);
  const stepBytes = 2 ** (power - 2);
  const step = Math.ceil((sizeBytes - 2 ** power) / stepBytes); // 1..4
  return SMALL_CLASS_COUNT + (power - FIRST_GEOMETRIC_POWER) * STEPS_PER_DOUBLING + (step - 1);
}

/** Block bytes of class `index`. */
export function classSize(index: number): number {
  if (index < SMALL_CLASS_COUNT) return (index + 1) * MIN_BLOCK_BYTES;
  const geometric = index - SMALL_CLASS_COUNT;
  const power = FIRST_GEOMETRIC_POWER + Math.floor(geometric / STEPS_PER_DOUBLING);
  const step = (geometric % STEPS_PER_DOUBLING) + 1;
  return 2 ** power + step * 2 ** (power - 2);
}

/**
 * Largest class whose block size is ≤ `blockBytes` (a multiple of 16, ≥ 16). A free block of any
 * size is filed under this class, so every block on class c's list holds at least classSize(c).
 */
export function classFloor(blockBytes: number): number {
  const index = classCeil(blockBytes);
  return classSize(index) === blockBytes ? index : index - 1;
}
