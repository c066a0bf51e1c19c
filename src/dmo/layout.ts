/**
 * Where everything lives inside a DMO domain's buffer (iPipe §3, "Distributed memory objects":
 * per-actor equal-sized regions and the side's object table).
 *
 * All state — the allocator's metadata and the object table — is inside the buffer, never in JS
 * objects, so that a SharedArrayBuffer handed to another worker thread carries every heap with it
 * (`DmoDomain.attach`) and a region can be copied or snapshotted as plain bytes.
 *
 * The domain:
 *
 *   0            64                64 + R              64 + 2R                    64 + N·R
 *   | domain hdr | region 0 (R bytes) | region 1 (R bytes) | …  | region N-1 (R bytes) |
 *
 * One region (all offsets inside it are relative to the region's start, so a region is position
 * independent and could be copied to another region as is):
 *
 *   0                 headerBytes          dataTop ->        <- tableBottom        R
 *   | region header   | data blocks, bump-allocated upward |  free gap  | rows ... row 2 | row 1 |
 *   | (fixed fields + |                                    |            |                        |
 *   |  class heads)   |                                    |            |   object table rows    |
 *
 * Data grows upward from the header, object-table rows grow downward from the region's end (slot s
 * is the 16 bytes ending at R − 16·(s − 1)); the region is exhausted when the two would cross.
 *
 * A row (4 × u32), the paper's (object id, actor id, start, size) with the id split into slot (the
 * row's position) and generation, the actor id implied by the region:
 *
 *   word 0  live: data offset in the region      free: next slot in the free-slot FIFO (0 = end)
 *   word 1  requested size in bytes
 *   word 2  block bytes (the size class it came from, or a split remainder)
 *   word 3  generation (bits 0–7) | LIVE (bit 8)
 *
 * A free data block (never handed out) keeps its free-list link in its own first bytes:
 *
 *   word 0  next free block's region offset in the same class list (0 = end of list)
 *   word 1  block bytes
 *
 * Numbers are stored in the platform's byte order through typed arrays; every machine that runs
 * Node's supported CPUs is little-endian, and `createDomainMemory` refuses a big-endian one.
 */

/** 'IPDM' — marks a buffer laid out as a DMO domain. */
export const DOMAIN_MAGIC = 0x4d445049;
/** Bumped when the domain or region layout changes incompatibly (attach refuses others). */
export const DOMAIN_LAYOUT_VERSION = 1;
/** The domain header; regions start right after it (64 keeps them 16-byte aligned). */
export const DOMAIN_HEADER_BYTES = 64;

/** u32 word indices of the domain header. */
export const DOMAIN_WORD = {
  magic: 0,
  version: 1,
  regionBytes: 2,
  maxActors: 3,
  /** i32 spin lock serialising region creation and release across threads. */
  lock: 4,
  /** DOMAIN_FLAG_* bits, fixed at creation (0 in a shared domain, as in domains made before it). */
  flags: 5,
} as const;

/**
 * The domain was created without `shared: true`: its allocator takes no locks, so no second view
 * may attach to its buffer (which is a SharedArrayBuffer all the same; see domain.ts for why).
 */
export const DOMAIN_FLAG_PRIVATE = 1;

/** 'IPRG' — marks a region header (checked on attach). */
export const REGION_MAGIC = 0x47525049;
/** Version of the region header and row layout. */
export const REGION_LAYOUT_VERSION = 1;

/** u32 word indices of a region header, relative to the region's first word. */
export const REGION_WORD = {
  magic: 0,
  version: 1,
  /**
   * 0 when the region is free, else ownerTag(actor, incarnation): checked on every access (one
   * load), so a handle from before a release — even one of the same actor — stops resolving.
   */
  ownerTag: 2,
  /** i32 spin lock around allocate/free when the domain is shared between threads. */
  lock: 3,
  /** Bumped each time the region is handed to an actor, so stale heap handles can be told apart. */
  incarnation: 4,
  /** Region offset of the first never-used data byte (the bump pointer). */
  dataTop: 5,
  /** Rows carved from the region's end; slots 1..slotCount exist. */
  slotCount: 6,
  freeSlotHead: 7,
  freeSlotTail: 8,
  liveObjects: 9,
  /** Block bytes held by live objects. */
  usedBytes: 10,
  /** Block bytes sitting on the class free lists. */
  freeListBytes: 11,
  classCount: 12,
  /** Region offset where data starts (header size, 16-aligned). */
  headerBytes: 13,
  regionBytes: 14,
  /**
   * Changes exactly when objects move: 1 for a new heap, the snapshot's epoch + 1 on restore.
   * Collections that cache object offsets compare it with the epoch they cached them under.
   */
  layoutEpoch: 15,
  /** Four words: bit c set when class c's free list is non-empty. */
  bitmap: 16,
  /** REGION_FLAG_* bits, fixed when the region is handed out. */
  flags: 20,
  /**
   * Bumped (mod 2^32) by every allocate and free. A collection that caches what it validated
   * about its own objects (DmoHashMap: its root and table) re-validates when this or the owner
   * tag changed: no object can be freed, reused or replaced without changing it. 0 in a fresh
   * region.
   */
  mutations: 21,
  /**
   * The actor the region was last handed to (kept after release; 0 if never handed out). A
   * released region is given back to this actor first, because a `bytes()` / `getView()` view
   * it kept still reaches the region's memory (see DmoDomain.releaseHeap). Word 23 is reserved (0).
   */
  lastOwner: 22,
  /** First class list head; class c's head is word classHeads + c. */
  classHeads: 24,
} as const;

/** Bytes of the region header before the class list heads. */
export const REGION_FIXED_HEADER_BYTES = REGION_WORD.classHeads * 4;

/**
 * The owner never runs on two threads at once (it holds iPipe's exec lock), so its allocator
 * skips the futex lock even in a shared domain.
 */
export const REGION_FLAG_EXCLUSIVE = 1;

/** One object-table row: four u32 words (see the diagram above). */
export const ROW_BYTES = 16;
/** Word indices within a row. */
export const ROW_WORD = { offset: 0, sizeBytes: 1, blockBytes: 2, meta: 3 } as const;
/** In row word 3: set while the slot holds a live object. */
export const ROW_LIVE = 0x100;
/** In row word 3: the slot's 8-bit generation (the id's generation while live). */
export const GENERATION_MASK = 0xff;

/** Smallest region we accept: room for the header, a few objects and their rows. */
export const MIN_REGION_BYTES = 1024;
/** Offsets are u32 and typed-array indices are taken with `>>> 2`: keep the whole buffer below 4 GiB. */
export const MAX_DOMAIN_BYTES = 2 ** 32 - 64;

const ACTOR_BITS = 21;
const ACTOR_MASK = 2 ** ACTOR_BITS - 1;
const INCARNATION_TAG_MODULUS = 2 ** (32 - ACTOR_BITS);

/**
 * The owner tag of a region held by `actor` in its `incarnation`: actor id in the low 21 bits and
 * the incarnation's low 11 bits above them. Never 0, because incarnations skip multiples of 2^11
 * (see nextIncarnation).
 */
export function ownerTag(actor: number, incarnation: number): number {
  return ((incarnation % INCARNATION_TAG_MODULUS) * 2 ** ACTOR_BITS + actor) >>> 0;
}

/** The incarnation after `previous`, skipping those whose tag bits would be 0. */
export function nextIncarnation(previous: number): number {
  const next = (previous + 1) >>> 0;
  return next % INCARNATION_TAG_MODULUS === 0 ? next + 1 : next;
}

/** The actor id in a non-zero owner tag. */
export function tagActor(tag: number): number {
  return tag & ACTOR_MASK;
}

/**
 * Owner tag of a region claimed by an image adoption that has not finished (region-image.ts):
 * createHeap passes over it (it is not 0) and no actor's lookup matches it, because real tags
 * always have non-zero incarnation bits (see nextIncarnation) and this one has none. The region's
 * header words stay as the previous owner left them until the adoption publishes, so the next
 * incarnation still follows the last one.
 */
export const RESERVED_OWNER_TAG = 1;

/** True when `tag` names an actor holding the region (not free, not reserved). */
export function isHeldOwnerTag(tag: number): boolean {
  return tag >>> ACTOR_BITS !== 0;
}

/** `value` rounded up to a multiple of `alignment`. */
export function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}
