/**
 * Region images: phase 3 ("Gone") of iPipe's actor migration (§3, "Actor migration") done as a
 * copy of the actor's whole region instead of object by object.
 *
 * A region is position independent — every offset in its header, its object-table rows and its
 * free lists is relative to the region's start, and rows are addressed from the region's end — so
 * its used bytes can be moved as one image into a free region of another domain (the other side's
 * SharedArrayBuffer, possibly in another process) and work there with the same object ids. Only
 * the words that belong to the domain rather than to the actor are rewritten on arrival: owner tag
 * and incarnation (so old handles of that region stay dead), lock word, flags, region size.
 * `snapshotHeap` / `restoreHeap` remain for moves between domains of different region sizes and
 * when a compacting re-layout is wanted; this path is for speed: measured in
 * bench/migration-copy.bench.ts against a plain `Uint8Array.set` of the same bytes.
 *
 * Image (little-endian):
 *
 *   image offset  0                64                 64 + dataTop              imageBytes
 *                 | image header   | region [0, dataTop)  | region [R − 16·slots, R) |
 *                 | (16 u32 words) | header, class heads, | object-table rows        |
 *                 |                | data blocks (bumped) | slot n … slot 1          |
 *
 *   image header word  0 magic 'IPRI'        1 format version       2 owner actor id
 *                      3 flags (bit 0: word 4 holds a CRC-32C)     4 CRC-32C
 *                      5 imageBytes          6 source regionBytes   7 region header bytes
 *                      8 dataTop             9 slotCount            10–15 zero
 *
 *   The CRC-32C, when present, covers every image byte except word 4 itself.
 *
 * What an adoption checks — O(image header + region header + table rows), never the data bytes
 * unless `verify: 'crc32c'` is asked for:
 *   • image header: magic, version, owner, flags, sizes consistent with each other and with the
 *     source region size; the image length;
 *   • target domain: same region header geometry (header bytes and class count) and room for the
 *     data prefix and the rows;
 *   • region header: magic, version, owner tag, fields agreeing with the image header, every class
 *     list head inside the data area and the class bitmap agreeing with the heads;
 *   • every row: flag bits; a live row's block 16-aligned inside [header, dataTop) and at least its
 *     size; a free row empty; live count and used bytes equal to the header's; the free-slot FIFO
 *     visits exactly the free rows and ends at its tail (so no cycle and no live row on it).
 * Together these keep every later allocation, free and lookup inside the region and off the
 * table. Not checked (it would cost O(data)): the free-list links past each list's head (the
 * allocator checks each block as it pops it, see Region#popFree), the bytes inside objects, and
 * whether two live blocks overlap — damage that the actor's own code could cause as well, which
 * stays inside the actor's region. Any failure is DmoCorruptSnapshotError with no region claimed.
 *
 * Streaming: `regionImageChunks` yields views of the source (no copies) for transports with
 * bounded messages; an `ImageAssembler` claims the target region as soon as the image header has
 * arrived and copies every later chunk straight to its final place in that region, so the image
 * never exists as a whole anywhere on the receiving side.
 */

import {
  ActorDeregisteredError,
  ConfigError,
  DmoCorruptSnapshotError,
  DmoInvalidSizeError,
  DmoRegionExhaustedError,
} from '../errors.ts';
import { type ActorId, isValidActorId, MAX_OBJECT_SLOT } from '../ids.ts';
import { crc32c } from './crc32c.ts';
import {
  cancelReservation,
  type DmoDomain,
  type DmoHeapOptions,
  domainMemory,
  publishRegion,
  reserveRegion,
} from './domain.ts';
import { regionOf } from './heap.ts';
import {
  GENERATION_MASK,
  isHeldOwnerTag,
  MIN_REGION_BYTES,
  REGION_FLAG_EXCLUSIVE,
  REGION_LAYOUT_VERSION,
  REGION_MAGIC,
  REGION_WORD,
  ROW_BYTES,
  ROW_LIVE,
  ROW_WORD,
  tagActor,
} from './layout.ts';
import { type Region, regionClassCount, regionHeaderBytes } from './region.ts';
import { classSize, MAX_CLASS_COUNT, MIN_BLOCK_BYTES } from './size-classes.ts';
import type { DmoHeap } from './types.ts';

/** 'IPRI' — marks a region image. */
const IMAGE_MAGIC = 0x49525049;
const IMAGE_VERSION = 1;
/** Bytes of the image header in front of the region's bytes. */
export const REGION_IMAGE_HEADER_BYTES = 64;
const IMAGE_WORD = {
  magic: 0,
  version: 1,
  owner: 2,
  flags: 3,
  checksum: 4,
  imageBytes: 5,
  regionBytes: 6,
  headerBytes: 7,
  dataTop: 8,
  slotCount: 9,
} as const;
/** In image header word 3: word 4 holds a CRC-32C of the image. */
const IMAGE_FLAG_CHECKSUM = 1;
const CHECKSUM_BYTE = IMAGE_WORD.checksum * 4;

/** How an image is written. */
export interface RegionImageWriteOptions {
  /**
   * 'crc32c' stores a CRC-32C of the whole image in its header (costs one pass over the bytes,
   * ~1 ms per MiB here); 'none' (default) leaves it out: a memory-to-memory copy needs none, and
   * the TCP transport checksums its own frames.
   */
  readonly checksum?: 'crc32c' | 'none';
}

/** How an image is adopted: the new heap's options (as for `DmoDomain.createHeap`) plus `verify`. */
export interface RegionImageAdoptOptions extends DmoHeapOptions {
  /**
   * 'crc32c' checks the image's CRC-32C before anything is published (the image must have been
   * written with `checksum: 'crc32c'`); 'none' (default) checks structure only, in
   * O(header + rows).
   */
  readonly verify?: 'crc32c' | 'none';
}

/** What an image header says (from its first 64 bytes). */
export interface RegionImageHeader {
  /** The actor whose heap the image holds: adopt it under this id (ids encode their owner). */
  readonly owner: ActorId;
  /** Total bytes of the image, header included. */
  readonly imageBytes: number;
  /** Region size of the domain the image was taken from. */
  readonly sourceRegionBytes: number;
  /** Bytes the image needs in the target region: the data prefix plus the table rows. */
  readonly footprintBytes: number;
  readonly slotCount: number;
  /** True when the image carries a CRC-32C (`verify: 'crc32c'` can check it). */
  readonly checksummed: boolean;
}

interface ImageFields extends RegionImageHeader {
  readonly flags: number;
  readonly checksum: number;
  readonly headerBytes: number;
  readonly dataTop: number;
}

// ---- writing ----------------------------------------------------------------------------------

/** Bytes `writeRegionImage` writes for `heap` as it is now: 64 + used data prefix + rows in use. */
export function regionImageSize(heap: DmoHeap): number {
  const region = currentRegion(heap);
  return REGION_IMAGE_HEADER_BYTES + region.dataTop() + region.slotCount * ROW_BYTES;
}

/**
 * Copies `heap`'s region image into `target` at `offset` (e.g. a staging SharedArrayBuffer or a
 * ring slot) and returns the bytes written: two `Uint8Array.set` calls, no per-object work, no
 * allocation beyond a few views.
 *
 * The actor must be quiescent — not running on any thread, no allocate/free/write in its heap —
 * from the call until it returns (migration's phase 2, "Ready", guarantees it). Nothing here locks:
 * a lock could keep the allocator's metadata whole but not the bytes of an object being written.
 * Throws DmoInvalidSizeError, writing nothing, if the image does not fit; ActorDeregisteredError if
 * the heap was released.
 */
export function writeRegionImage(
  heap: DmoHeap,
  target: Uint8Array,
  offset: number,
  options: RegionImageWriteOptions = {},
): number {
  const region = currentRegion(heap);
  const dataTop = region.dataTop();
  const tableBytes = region.slotCount * ROW_BYTES;
  const imageBytes = REGION_IMAGE_HEADER_BYTES + dataTop + tableBytes;
  if (offset >>> 0 !== offset || offset + imageBytes > target.length) {
    throw new DmoInvalidSizeError(
      `region image target (needs ${imageBytes} bytes at offset ${offset}, has ${target.length})`,
      target.length,
    );
  }
  const checksummed = options.checksum === 'crc32c';
  writeImageHeader(target, offset, region, checksummed);
  const regionStart = region.base;
  const regionEnd = region.base + region.regionBytes;
  target.set(region.u8.subarray(regionStart, regionStart + dataTop), offset + REGION_IMAGE_HEADER_BYTES);
  target.set(
    region.u8.subarray(regionEnd - tableBytes, regionEnd),
    offset + REGION_IMAGE_HEADER_BYTES + dataTop,
  );
  if (checksummed) {
    const head = crc32c(target, offset, offset + CHECKSUM_BYTE);
    const crc = crc32c(target, offset + CHECKSUM_BYTE + 4, offset + imageBytes, head);
    writeU32(target, offset + CHECKSUM_BYTE, crc);
  }
  return imageBytes;
}

/**
 * `heap`'s region image as views of at most `chunkBytes` each, in image order, for a transport
 * with bounded messages (a DMA ring's slots). The first is a fresh 64-byte image header; the
 * rest are views of the heap's own memory, split also where the image's parts meet (so there are
 * at most two more chunks than ⌈size / chunkBytes⌉). Nothing is copied: the actor must stay
 * quiescent (see writeRegionImage) until the last chunk has been consumed. The image's sizes are
 * fixed when this is called; `checksum: 'crc32c'` reads the whole region once, here.
 */
export function regionImageChunks(
  heap: DmoHeap,
  chunkBytes: number,
  options: RegionImageWriteOptions = {},
): IterableIterator<Uint8Array> {
  if (!Number.isInteger(chunkBytes) || chunkBytes < 1 || chunkBytes > 0xffff_ffff) {
    throw new DmoInvalidSizeError('region image chunk bytes', chunkBytes);
  }
  const region = currentRegion(heap);
  const checksummed = options.checksum === 'crc32c';
  const header = new Uint8Array(REGION_IMAGE_HEADER_BYTES);
  writeImageHeader(header, 0, region, checksummed);
  const dataTop = region.dataTop();
  const regionEnd = region.base + region.regionBytes;
  const tableStart = regionEnd - region.slotCount * ROW_BYTES;
  if (checksummed) {
    let crc = crc32c(header, 0, CHECKSUM_BYTE);
    crc = crc32c(header, CHECKSUM_BYTE + 4, REGION_IMAGE_HEADER_BYTES, crc);
    crc = crc32c(region.u8, region.base, region.base + dataTop, crc);
    crc = crc32c(region.u8, tableStart, regionEnd, crc);
    writeU32(header, CHECKSUM_BYTE, crc);
  }
  return chunksOf(header, region.u8, region.base, region.base + dataTop, tableStart, regionEnd, chunkBytes);
}

function* chunksOf(
  header: Uint8Array,
  u8: Uint8Array,
  dataStart: number,
  dataEnd: number,
  tableStart: number,
  tableEnd: number,
  chunkBytes: number,
): IterableIterator<Uint8Array> {
  for (let at = 0; at < header.length; at += chunkBytes) {
    yield header.subarray(at, at + chunkBytes);
  }
  for (let at = dataStart; at < dataEnd; at += chunkBytes) {
    yield u8.subarray(at, Math.min(at + chunkBytes, dataEnd));
  }
  for (let at = tableStart; at < tableEnd; at += chunkBytes) {
    yield u8.subarray(at, Math.min(at + chunkBytes, tableEnd));
  }
}

function currentRegion(heap: DmoHeap): Region {
  const region = regionOf(heap);
  if (!region.isCurrent()) throw new ActorDeregisteredError(region.owner, 'its DMO heap was released');
  return region;
}

function writeImageHeader(target: Uint8Array, offset: number, region: Region, checksummed: boolean): void {
  const dataTop = region.dataTop();
  const slotCount = region.slotCount;
  target.fill(0, offset, offset + REGION_IMAGE_HEADER_BYTES);
  writeU32(target, offset + 4 * IMAGE_WORD.magic, IMAGE_MAGIC);
  writeU32(target, offset + 4 * IMAGE_WORD.version, IMAGE_VERSION);
  writeU32(target, offset + 4 * IMAGE_WORD.owner, region.owner);
  writeU32(target, offset + 4 * IMAGE_WORD.flags, checksummed ? IMAGE_FLAG_CHECKSUM : 0);
  writeU32(
    target,
    offset + 4 * IMAGE_WORD.imageBytes,
    REGION_IMAGE_HEADER_BYTES + dataTop + slotCount * ROW_BYTES,
  );
  writeU32(target, offset + 4 * IMAGE_WORD.regionBytes, region.regionBytes);
  writeU32(target, offset + 4 * IMAGE_WORD.headerBytes, regionHeaderBytes(region.regionBytes));
  writeU32(target, offset + 4 * IMAGE_WORD.dataTop, dataTop);
  writeU32(target, offset + 4 * IMAGE_WORD.slotCount, slotCount);
}

// ---- reading ----------------------------------------------------------------------------------

/**
 * Parses and checks an image's header (its first 64 bytes), so a receiver can learn the owner and
 * the size from the first chunk. Throws DmoCorruptSnapshotError.
 */
export function readRegionImageHeader(bytes: Uint8Array): RegionImageHeader {
  const { owner, imageBytes, sourceRegionBytes, footprintBytes, slotCount, checksummed } =
    parseImageHeader(bytes);
  return { owner, imageBytes, sourceRegionBytes, footprintBytes, slotCount, checksummed };
}

/**
 * Adopts a region image into a free region of `domain` as `actor`'s heap (`actor` must be the
 * image's owner: ids encode it) and returns the heap: the same object ids, sizes, bytes, free
 * lists and statistics; collections re-open by the same root ids. Copies the image with three
 * `Uint8Array.set` calls (region header aside, data prefix, rows) and checks it in O(header + rows) (see the file comment); `verify:
 * 'crc32c'` also checks its checksum. The layout epoch advances, so collections re-translate
 * their cached offsets once (see adoptedHeader).
 *
 * Throws, with no region claimed: DmoCorruptSnapshotError for a damaged, truncated or padded
 * image; ConfigError when the domain's regions have a different header layout (another
 * regionBytes: use snapshotHeap / restoreHeap); DmoRegionExhaustedError when the image does not
 * fit a region; DuplicateActorError when the actor already has a heap there; DmoDomainFullError
 * when every region is taken. The source heap is untouched: release it once the move is final.
 */
export function adoptRegionImage(
  domain: DmoDomain,
  actor: ActorId,
  image: Uint8Array,
  options: RegionImageAdoptOptions = {},
): DmoHeap {
  // Length first, so a truncated or padded image never claims a region or costs a copy.
  const fields = parseImageHeader(image);
  if (image.length !== fields.imageBytes) {
    throw new DmoCorruptSnapshotError(
      `region image is ${image.length} bytes but its header says ${fields.imageBytes}: truncated or padded`,
    );
  }
  const assembler = new ImageAssembler(domain, actor, options);
  assembler.push(image);
  return assembler.finish();
}

type AssemblerState = 'header' | 'body' | 'finished' | 'failed';

/**
 * Where an image stands after `ImageAssembler.accept`: bytes still to come, adopted (the heap is
 * published), or failed — damaged or refused, nothing adopted, the region given back.
 */
export type ImageProgress =
  | { readonly kind: 'partial' }
  | { readonly kind: 'adopted'; readonly heap: DmoHeap }
  | { readonly kind: 'failed'; readonly error: Error };

/**
 * Receives a region image in pieces (any sizes, in order) and adopts it, copying each piece
 * straight to its place in the target region — no buffer the size of the image on this side.
 *
 * The target region is claimed (reserved: no heap yet, invisible to heapOf) as soon as the 64-byte
 * image header is complete and checked; `finish()` checks the rest and publishes the heap. Any
 * failure — in `push` or `finish` — frees the region again and leaves the assembler failed;
 * `abort()` does the same for a transfer that broke off. An assembler that is neither finished nor
 * aborted keeps its region reserved.
 *
 *   new ImageAssembler(host, actor)        for each chunk off the ring: assembler.push(chunk)
 *   const heap = assembler.finish()        (push copies: the ring slot may be reused at once)
 */
export class ImageAssembler {
  readonly #domain: DmoDomain;
  readonly #actor: ActorId;
  readonly #options: RegionImageAdoptOptions;
  readonly #imageHeader = new Uint8Array(REGION_IMAGE_HEADER_BYTES);
  #state: AssemblerState = 'header';
  #received = 0;
  #fields: ImageFields | undefined;
  /** The region header's bytes, held aside until finish (see #routeHeader). */
  #regionHeader = new Uint8Array(0);
  #target: Uint8Array = new Uint8Array(0);
  /** Absolute base of the reserved region, −1 before it is reserved. */
  #base = -1;
  /** Absolute start of the rows in the reserved region. */
  #tableStart = 0;

  constructor(domain: DmoDomain, actor: ActorId, options: RegionImageAdoptOptions = {}) {
    this.#domain = domain;
    this.#actor = actor;
    this.#options = options;
  }

  /** Bytes received so far. */
  get receivedBytes(): number {
    return this.#received;
  }

  /** The image's total bytes, once its header has arrived. */
  get expectedBytes(): number | undefined {
    return this.#fields?.imageBytes;
  }

  /** Copies the next piece of the image into place (the caller may reuse `chunk` afterwards). */
  push(chunk: Uint8Array): void {
    this.#checkOpen('push');
    try {
      let from = 0;
      while (from < chunk.length) from += this.#route(chunk, from);
    } catch (error) {
      this.#fail();
      throw error;
    }
  }

  /** Checks the assembled image and publishes it as the actor's heap in the domain. */
  finish(): DmoHeap {
    this.#checkOpen('finish');
    try {
      const fields = this.#fields;
      if (fields === undefined || this.#received !== fields.imageBytes) {
        throw new DmoCorruptSnapshotError(
          `region image truncated: ${this.#received} of ${fields?.imageBytes ?? REGION_IMAGE_HEADER_BYTES} bytes arrived`,
        );
      }
      if (this.#options.verify === 'crc32c') this.#verifyChecksum(fields);
      const header = new Uint32Array(this.#regionHeader.buffer);
      checkRegionHeader(header, fields);
      checkRows(domainMemory(this.#domain).u32, this.#tableStart, header, fields);
      const heap = publishRegion(this.#domain, this.#base, this.#actor, adoptedHeader(header, this.#options));
      this.#state = 'finished';
      return heap;
    } catch (error) {
      this.#fail();
      throw error;
    }
  }

  /**
   * Pushes the chunks one message of a transfer carries and, once the whole image has arrived,
   * finishes it. For a receiver on a channel (the live node's controllers): a damaged image is an
   * outcome there, not an exception to escape the channel's listener, and it leaves the sender
   * holding the actor — so any failure is returned, with the region given back (`abort`).
   */
  accept(chunks: Iterable<Uint8Array>): ImageProgress {
    try {
      for (const chunk of chunks) this.push(chunk);
      const expected = this.expectedBytes;
      if (expected === undefined || this.#received < expected) return { kind: 'partial' };
      return { kind: 'adopted', heap: this.finish() };
    } catch (error) {
      this.abort();
      return { kind: 'failed', error: error instanceof Error ? error : new Error(String(error)) };
    }
  }

  /** Gives the reserved region back (a transfer that will not complete). Safe to call twice. */
  abort(): void {
    if (this.#state === 'finished') return;
    this.#fail();
  }

  /** Copies from `chunk[from…]` into the image part the next byte belongs to; returns bytes taken. */
  #route(chunk: Uint8Array, from: number): number {
    const at = this.#received;
    const fields = this.#fields;
    if (fields === undefined) {
      const take = Math.min(chunk.length - from, REGION_IMAGE_HEADER_BYTES - at);
      this.#imageHeader.set(chunk.subarray(from, from + take), at);
      this.#received += take;
      if (this.#received === REGION_IMAGE_HEADER_BYTES) this.#claim();
      return take;
    }
    const left = chunk.length - from;
    const bodyAt = at - REGION_IMAGE_HEADER_BYTES;
    let take: number;
    if (bodyAt < fields.headerBytes) {
      // The region header waits aside: its owner-tag word must not land in the reserved region
      // (another thread's heapOf would see the source's tag), and until finish the region's own
      // header keeps the previous incarnation that the new one must follow.
      take = Math.min(left, fields.headerBytes - bodyAt);
      this.#regionHeader.set(chunk.subarray(from, from + take), bodyAt);
    } else if (bodyAt < fields.dataTop) {
      take = Math.min(left, fields.dataTop - bodyAt);
      this.#target.set(chunk.subarray(from, from + take), this.#base + bodyAt);
    } else {
      const tableAt = bodyAt - fields.dataTop;
      const tableBytes = fields.slotCount * ROW_BYTES;
      if (tableAt >= tableBytes) {
        throw new DmoCorruptSnapshotError(
          `region image padded: more than the ${fields.imageBytes} bytes its header announced arrived`,
        );
      }
      take = Math.min(left, tableBytes - tableAt);
      this.#target.set(chunk.subarray(from, from + take), this.#tableStart + tableAt);
    }
    this.#received += take;
    return take;
  }

  /** The image header is complete: check it against the domain and reserve the target region. */
  #claim(): void {
    const fields = parseImageHeader(this.#imageHeader);
    if (fields.owner !== this.#actor) {
      throw new DmoCorruptSnapshotError(
        `it holds actor ${fields.owner}'s objects, not actor ${this.#actor}'s: adopt it under actor ${fields.owner}`,
      );
    }
    const regionBytes = this.#domain.regionBytes;
    if (
      fields.headerBytes !== regionHeaderBytes(regionBytes) ||
      regionClassCount(fields.sourceRegionBytes) !== regionClassCount(regionBytes)
    ) {
      throw new ConfigError(
        'regionBytes',
        `a region image from ${fields.sourceRegionBytes}-byte regions does not match this domain's ` +
          `${regionBytes}-byte regions (different header layout): move the heap with snapshotHeap/restoreHeap`,
      );
    }
    if (fields.footprintBytes > regionBytes) {
      throw new DmoRegionExhaustedError(this.#actor, fields.footprintBytes, regionBytes, 0);
    }
    const base = reserveRegion(this.#domain, this.#actor);
    this.#base = base;
    this.#fields = fields;
    this.#target = domainMemory(this.#domain).u8;
    this.#tableStart = base + regionBytes - fields.slotCount * ROW_BYTES;
    this.#regionHeader = new Uint8Array(fields.headerBytes);
    this.#state = 'body';
  }

  #verifyChecksum(fields: ImageFields): void {
    if (!fields.checksummed) {
      throw new DmoCorruptSnapshotError(
        "verify: 'crc32c' was asked for but the image carries no checksum: write it with checksum: 'crc32c'",
      );
    }
    const target = this.#target;
    let crc = crc32c(this.#imageHeader, 0, CHECKSUM_BYTE);
    crc = crc32c(this.#imageHeader, CHECKSUM_BYTE + 4, REGION_IMAGE_HEADER_BYTES, crc);
    crc = crc32c(this.#regionHeader, 0, fields.headerBytes, crc);
    crc = crc32c(target, this.#base + fields.headerBytes, this.#base + fields.dataTop, crc);
    crc = crc32c(target, this.#tableStart, this.#tableStart + fields.slotCount * ROW_BYTES, crc);
    if (crc !== fields.checksum) {
      throw new DmoCorruptSnapshotError('region image checksum mismatch: the bytes were damaged in transit');
    }
  }

  #checkOpen(what: string): void {
    if (this.#state === 'finished' || this.#state === 'failed') {
      // Misuse, not bad input: the caller holds an assembler whose transfer is over.
      throw new Error(`ImageAssembler.${what}: this transfer already ${this.#state}; start a new assembler`);
    }
  }

  #fail(): void {
    if (this.#base >= 0 && this.#state !== 'finished') cancelReservation(this.#domain, this.#base);
    this.#base = -1;
    this.#state = 'failed';
  }
}

/**
 * The region header words to publish: the image's, with what belongs to the new domain replaced
 * (flags from the adoption's options; lock, incarnation, size and owner are set by publishRegion).
 *
 * The layout epoch advances although no object moved (offsets are region-relative): collections
 * then re-check each cached offset against the object table on their first operation, once. The
 * data bytes were not checked on arrival (no checksum by default), so this is the cheap point to
 * stop trusting translations that came with them.
 */
function adoptedHeader(imageHeader: Uint32Array, options: RegionImageAdoptOptions): Uint32Array {
  const header = imageHeader.slice();
  header[REGION_WORD.layoutEpoch] = (header[REGION_WORD.layoutEpoch]! + 1) >>> 0 || 1;
  header[REGION_WORD.flags] = options.exclusive === true ? REGION_FLAG_EXCLUSIVE : 0;
  // Words past the class heads are alignment padding: zero, as Region.initialise leaves them.
  header.fill(0, REGION_WORD.classHeads + header[REGION_WORD.classCount]!);
  return header;
}

// ---- checks -----------------------------------------------------------------------------------

function parseImageHeader(bytes: Uint8Array): ImageFields {
  if (bytes.length < REGION_IMAGE_HEADER_BYTES) {
    throw new DmoCorruptSnapshotError(`${bytes.length} bytes is shorter than a region image header`);
  }
  if (readU32(bytes, 4 * IMAGE_WORD.magic) !== IMAGE_MAGIC) {
    throw new DmoCorruptSnapshotError('bad magic: not a DMO region image');
  }
  const version = readU32(bytes, 4 * IMAGE_WORD.version);
  if (version !== IMAGE_VERSION) {
    throw new DmoCorruptSnapshotError(`region image version ${version}; this build reads ${IMAGE_VERSION}`);
  }
  const owner = readU32(bytes, 4 * IMAGE_WORD.owner);
  const flags = readU32(bytes, 4 * IMAGE_WORD.flags);
  const imageBytes = readU32(bytes, 4 * IMAGE_WORD.imageBytes);
  const regionBytes = readU32(bytes, 4 * IMAGE_WORD.regionBytes);
  const headerBytes = readU32(bytes, 4 * IMAGE_WORD.headerBytes);
  const dataTop = readU32(bytes, 4 * IMAGE_WORD.dataTop);
  const slotCount = readU32(bytes, 4 * IMAGE_WORD.slotCount);
  if (!isValidActorId(owner)) throw new DmoCorruptSnapshotError(`owner ${owner} is not an actor id`);
  if ((flags & ~IMAGE_FLAG_CHECKSUM) !== 0) throw new DmoCorruptSnapshotError(`unknown image flags ${flags}`);
  if (
    regionBytes < MIN_REGION_BYTES ||
    regionBytes % 16 !== 0 ||
    headerBytes !== regionHeaderBytes(regionBytes)
  ) {
    throw new DmoCorruptSnapshotError(
      `region size ${regionBytes} with a ${headerBytes}-byte header is not a DMO region`,
    );
  }
  const footprintBytes = dataTop + slotCount * ROW_BYTES;
  if (
    dataTop % 16 !== 0 ||
    dataTop < headerBytes ||
    slotCount > MAX_OBJECT_SLOT ||
    footprintBytes > regionBytes ||
    imageBytes !== REGION_IMAGE_HEADER_BYTES + footprintBytes
  ) {
    throw new DmoCorruptSnapshotError(
      `data top ${dataTop}, ${slotCount} rows and ${imageBytes} image bytes do not fit a ${regionBytes}-byte region`,
    );
  }
  return {
    owner: owner as ActorId,
    imageBytes,
    sourceRegionBytes: regionBytes,
    footprintBytes,
    slotCount,
    checksummed: (flags & IMAGE_FLAG_CHECKSUM) !== 0,
    flags,
    checksum: readU32(bytes, CHECKSUM_BYTE),
    headerBytes,
    dataTop,
  };
}

/** The region header words against the image header, and the class list heads against the data. */
function checkRegionHeader(header: Uint32Array, fields: ImageFields): void {
  const tag = header[REGION_WORD.ownerTag]!;
  const classCount = header[REGION_WORD.classCount]!;
  if (
    header[REGION_WORD.magic] !== REGION_MAGIC ||
    header[REGION_WORD.version] !== REGION_LAYOUT_VERSION ||
    !isHeldOwnerTag(tag) ||
    tagActor(tag) !== fields.owner ||
    header[REGION_WORD.regionBytes] !== fields.sourceRegionBytes ||
    header[REGION_WORD.headerBytes] !== fields.headerBytes ||
    header[REGION_WORD.dataTop] !== fields.dataTop ||
    header[REGION_WORD.slotCount] !== fields.slotCount ||
    classCount !== regionClassCount(fields.sourceRegionBytes)
  ) {
    throw new DmoCorruptSnapshotError('the region header does not match the image header');
  }
  const head = header[REGION_WORD.freeSlotHead]!;
  const tail = header[REGION_WORD.freeSlotTail]!;
  if (head > fields.slotCount || tail > fields.slotCount || (head === 0) !== (tail === 0)) {
    throw new DmoCorruptSnapshotError(
      `free-slot queue ${head}…${tail} is outside the ${fields.slotCount} rows`,
    );
  }
  for (let sizeClass = 0; sizeClass < MAX_CLASS_COUNT; sizeClass++) {
    const bit = (header[REGION_WORD.bitmap + (sizeClass >>> 5)]! >>> (sizeClass & 31)) & 1;
    const offset = sizeClass < classCount ? header[REGION_WORD.classHeads + sizeClass]! : 0;
    // A non-empty list has its bit set and its head block inside the data area (the links past
    // the head are checked by the allocator as it pops them).
    const plausible =
      offset === 0 ||
      (offset % 16 === 0 && offset >= fields.headerBytes && offset + classSize(sizeClass) <= fields.dataTop);
    if (!plausible || bit !== (offset === 0 ? 0 : 1)) {
      throw new DmoCorruptSnapshotError(`free list of size class ${sizeClass} is damaged`);
    }
  }
}

/**
 * Every row of the adopted table (already in the reserved region at `tableStart`), the header's
 * counts, and the free-slot FIFO. O(rows).
 */
function checkRows(u32: Uint32Array, tableStart: number, header: Uint32Array, fields: ImageFields): void {
  const slotCount = fields.slotCount;
  const endWord = (tableStart >>> 2) + slotCount * 4;
  const headerBytes = fields.headerBytes;
  const dataTop = fields.dataTop;
  let live = 0;
  let usedBytes = 0;
  for (let slot = 1; slot <= slotCount; slot++) {
    const row = endWord - (slot << 2);
    const meta = u32[row + ROW_WORD.meta]!;
    const offset = u32[row + ROW_WORD.offset]!;
    const sizeBytes = u32[row + ROW_WORD.sizeBytes]!;
    const blockBytes = u32[row + ROW_WORD.blockBytes]!;
    if ((meta & ROW_LIVE) !== 0) {
      if (
        (meta & ~(GENERATION_MASK | ROW_LIVE)) !== 0 ||
        offset % 16 !== 0 ||
        blockBytes % 16 !== 0 ||
        offset < headerBytes ||
        blockBytes < MIN_BLOCK_BYTES ||
        sizeBytes > blockBytes ||
        offset + blockBytes > dataTop
      ) {
        throw new DmoCorruptSnapshotError(
          `row ${slot} (offset ${offset}, ${blockBytes} block bytes) points outside the region's data`,
        );
      }
      live++;
      usedBytes += blockBytes;
    } else if ((meta & ~GENERATION_MASK) !== 0 || sizeBytes !== 0 || blockBytes !== 0 || offset > slotCount) {
      throw new DmoCorruptSnapshotError(`free row ${slot} is damaged`);
    }
  }
  if (live !== header[REGION_WORD.liveObjects] || usedBytes !== header[REGION_WORD.usedBytes]) {
    throw new DmoCorruptSnapshotError('rows disagree with the region header counts');
  }
  // Every free row is on the FIFO exactly once (the allocator reuses slots only from it): walk it,
  // at most as many steps as there are free rows, so a cycle cannot keep us here.
  const freeRows = slotCount - live;
  let visited = 0;
  let last = 0;
  for (let slot = header[REGION_WORD.freeSlotHead]!; slot !== 0; visited++) {
    if (visited === freeRows) throw new DmoCorruptSnapshotError('the free-slot queue has a cycle');
    const row = endWord - (slot << 2);
    if ((u32[row + ROW_WORD.meta]! & ROW_LIVE) !== 0) {
      throw new DmoCorruptSnapshotError(`the free-slot queue holds live row ${slot}`);
    }
    last = slot;
    slot = u32[row + ROW_WORD.offset]!;
  }
  if (visited !== freeRows || last !== header[REGION_WORD.freeSlotTail]) {
    throw new DmoCorruptSnapshotError('the free-slot queue does not hold exactly the free rows');
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function writeU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = value >>> 24;
}
