/**
 * Snapshot and restore of one actor's heap: phase 3 ("Gone") of iPipe's actor migration (§3,
 * "Actor migration": collect the actor's objects, send their bytes across, recreate them in the
 * other side's object table, drop the old entries).
 *
 * Object ids are preserved — slot and generation of every row, free rows included — so every id
 * the actor stored (collection roots, links inside collections) resolves the same way after the
 * move. Data is re-laid out compactly in the target region (a migration also defragments).
 *
 * Format (little-endian):
 *
 *   0   magic 'IPDS'          u32
 *   4   format version        u32
 *   8   owner actor id        u32
 *   12  slotCount             u32        rows 1..slotCount follow
 *   16  liveObjects           u32
 *   20  dataBytes             u32        sum of live objects' sizes
 *   24  CRC-32C               u32        over every byte of the snapshot except these four
 *   28  layout epoch          u32        the source region's; restore sets epoch + 1
 *   32  rows: slotCount × [meta u32 (generation | LIVE), sizeBytes u32]
 *   …   data: the live objects' bytes, in slot order, unpadded
 *
 * The actor must not run while its heap is snapshotted (migration's phase 2, "Ready", guarantees
 * that); nothing here locks against a concurrent writer.
 *
 * Restore validates everything (length, magic, version, owner, checksum, row sanity, fit in the
 * target region) before it claims a region, so a bad snapshot leaves the target domain untouched.
 *
 * This path costs per-object work and a CRC over every byte; between domains whose regions have
 * the same size, region-image.ts moves the region as one image at close to memcpy speed.
 */

import { DmoCorruptSnapshotError, DmoInvalidSizeError, DmoRegionExhaustedError } from '../errors.ts';
import { type ActorId, isValidActorId, MAX_OBJECT_SLOT } from '../ids.ts';
import { crc32c } from './crc32c.ts';
import type { DmoDomain, DmoHeapOptions } from './domain.ts';
import { copyBytes } from './hash.ts';
import { regionOf } from './heap.ts';
import { GENERATION_MASK, ROW_LIVE, ROW_WORD } from './layout.ts';
import { MAX_OBJECT_BYTES, restoreFootprintBytes } from './region.ts';
import type { DmoHeap } from './types.ts';

const SNAPSHOT_MAGIC = 0x53445049; // 'IPDS'
const SNAPSHOT_VERSION = 1;
const HEADER_BYTES = 32;
const ROW_SNAPSHOT_BYTES = 8;
const CHECKSUM_OFFSET = 24;
const LAYOUT_EPOCH_OFFSET = 28;

/** Bytes `snapshotHeapInto` will write for `heap` as it is now. */
export function snapshotSize(heap: DmoHeap): number {
  const region = regionOf(heap);
  let dataBytes = 0;
  for (let slot = 1; slot <= region.slotCount; slot++) {
    if ((region.slotMeta(slot) & ROW_LIVE) !== 0)
      dataBytes += region.u32[region.slotRow(slot) + ROW_WORD.sizeBytes]!;
  }
  return HEADER_BYTES + region.slotCount * ROW_SNAPSHOT_BYTES + dataBytes;
}

/** All of `heap`'s live objects and table rows, checksummed, as a fresh byte array. */
export function snapshotHeap(heap: DmoHeap): Uint8Array {
  const target = new Uint8Array(snapshotSize(heap));
  snapshotHeapInto(heap, target, 0);
  return target;
}

/**
 * Writes the snapshot into `target` at `offset` (so migration can fill a preallocated channel
 * buffer). Returns the bytes written. Throws DmoInvalidSizeError, writing nothing, if it does not fit.
 */
export function snapshotHeapInto(heap: DmoHeap, target: Uint8Array, offset: number): number {
  const region = regionOf(heap);
  const totalBytes = snapshotSize(heap);
  if (offset >>> 0 !== offset || offset + totalBytes > target.length) {
    throw new DmoInvalidSizeError(
      `snapshot target (needs ${totalBytes} bytes at offset ${offset}, has ${target.length})`,
      target.length,
    );
  }
  const out = new DataView(target.buffer, target.byteOffset + offset, totalBytes);
  const slotCount = region.slotCount;
  const u32 = region.u32;
  const u8 = region.u8;
  let live = 0;
  let dataBytes = 0;
  let dataAt = offset + HEADER_BYTES + slotCount * ROW_SNAPSHOT_BYTES;
  for (let slot = 1; slot <= slotCount; slot++) {
    const row = region.slotRow(slot);
    const meta = u32[row + ROW_WORD.meta]!;
    const rowAt = HEADER_BYTES + (slot - 1) * ROW_SNAPSHOT_BYTES;
    if ((meta & ROW_LIVE) !== 0) {
      const sizeBytes = u32[row + ROW_WORD.sizeBytes]!;
      const start = region.rowStart(row);
      out.setUint32(rowAt, meta, true);
      out.setUint32(rowAt + 4, sizeBytes, true);
      copyBytes(u8, start, sizeBytes, target, dataAt);
      dataAt += sizeBytes;
      dataBytes += sizeBytes;
      live++;
    } else {
      out.setUint32(rowAt, meta & GENERATION_MASK, true);
      out.setUint32(rowAt + 4, 0, true);
    }
  }
  out.setUint32(0, SNAPSHOT_MAGIC, true);
  out.setUint32(4, SNAPSHOT_VERSION, true);
  out.setUint32(8, region.owner, true);
  out.setUint32(12, slotCount, true);
  out.setUint32(16, live, true);
  out.setUint32(20, dataBytes, true);
  out.setUint32(LAYOUT_EPOCH_OFFSET, region.layoutEpoch(), true);
  out.setUint32(CHECKSUM_OFFSET, checksum(target, offset, totalBytes), true);
  return totalBytes;
}

/** The actor a snapshot belongs to (after checking its header and checksum). */
export function snapshotOwner(bytes: Uint8Array): ActorId {
  return parse(bytes).owner;
}

/**
 * Recreates a snapshot's heap in a fresh region of `domain` for `actor` (which must be the actor
 * the snapshot was taken of: ids encode their owner). Every object keeps its id, size and bytes.
 * Throws DmoCorruptSnapshotError (nothing restored) for damaged bytes, DmoRegionExhaustedError if
 * the objects do not fit the domain's region size, DuplicateActorError if the actor already has a
 * heap there. `options` are the new heap's (as for `DmoDomain.createHeap`).
 */
export function restoreHeap(
  domain: DmoDomain,
  actor: ActorId,
  bytes: Uint8Array,
  options: DmoHeapOptions = {},
): DmoHeap {
  const parsed = parse(bytes);
  if (parsed.owner !== actor) {
    throw new DmoCorruptSnapshotError(
      `it holds actor ${parsed.owner}'s objects, not actor ${actor}'s: restore it under actor ${parsed.owner}`,
    );
  }
  const footprintBytes = restoreFootprintBytes(domain.regionBytes, parsed.slotCount, liveSizes(parsed));
  if (footprintBytes > domain.regionBytes) {
    throw new DmoRegionExhaustedError(actor, footprintBytes, domain.regionBytes, 0);
  }
  const heap = domain.createHeap(actor, options);
  const region = regionOf(heap);
  // Objects move, so the epoch advances: collections re-translate their cached offsets.
  const starts = region.layOutRestoredTable(parsed.metas, parsed.sizes, (parsed.layoutEpoch + 1) >>> 0 || 1);
  let dataAt = parsed.dataStart;
  for (let slot = 1; slot <= parsed.slotCount; slot++) {
    if ((parsed.metas[slot - 1]! & ROW_LIVE) === 0) continue;
    const sizeBytes = parsed.sizes[slot - 1]!;
    copyBytes(bytes, dataAt, sizeBytes, region.u8, starts[slot - 1]!);
    dataAt += sizeBytes;
  }
  return heap;
}

interface ParsedSnapshot {
  readonly owner: ActorId;
  readonly slotCount: number;
  readonly metas: Uint32Array;
  readonly sizes: Uint32Array;
  /** Offset in the snapshot bytes where object data begins. */
  readonly dataStart: number;
  readonly layoutEpoch: number;
}

function* liveSizes(parsed: ParsedSnapshot): IterableIterator<number> {
  for (let i = 0; i < parsed.slotCount; i++) {
    if ((parsed.metas[i]! & ROW_LIVE) !== 0) yield parsed.sizes[i]!;
  }
}

function parse(bytes: Uint8Array): ParsedSnapshot {
  if (bytes.length < HEADER_BYTES)
    throw new DmoCorruptSnapshotError(`${bytes.length} bytes is shorter than a header`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== SNAPSHOT_MAGIC)
    throw new DmoCorruptSnapshotError('bad magic: not a DMO snapshot');
  const version = view.getUint32(4, true);
  if (version !== SNAPSHOT_VERSION) {
    throw new DmoCorruptSnapshotError(`format version ${version}; this build reads ${SNAPSHOT_VERSION}`);
  }
  const owner = view.getUint32(8, true);
  const slotCount = view.getUint32(12, true);
  const liveObjects = view.getUint32(16, true);
  const dataBytes = view.getUint32(20, true);
  if (!isValidActorId(owner)) throw new DmoCorruptSnapshotError(`owner ${owner} is not an actor id`);
  if (slotCount > MAX_OBJECT_SLOT)
    throw new DmoCorruptSnapshotError(`${slotCount} slots is more than ids can name`);
  const dataStart = HEADER_BYTES + slotCount * ROW_SNAPSHOT_BYTES;
  if (bytes.length !== dataStart + dataBytes) {
    throw new DmoCorruptSnapshotError(
      `length ${bytes.length} does not match its header (${dataStart + dataBytes}): truncated or padded`,
    );
  }
  if (view.getUint32(CHECKSUM_OFFSET, true) !== checksum(bytes, 0, bytes.length)) {
    throw new DmoCorruptSnapshotError('checksum mismatch: the bytes were damaged');
  }
  const metas = new Uint32Array(slotCount);
  const sizes = new Uint32Array(slotCount);
  let live = 0;
  let sum = 0;
  for (let i = 0; i < slotCount; i++) {
    const meta = view.getUint32(HEADER_BYTES + i * ROW_SNAPSHOT_BYTES, true);
    const sizeBytes = view.getUint32(HEADER_BYTES + i * ROW_SNAPSHOT_BYTES + 4, true);
    if ((meta & ~(GENERATION_MASK | ROW_LIVE)) !== 0)
      throw new DmoCorruptSnapshotError(`row ${i + 1} has bad flags`);
    if ((meta & ROW_LIVE) === 0 && sizeBytes !== 0)
      throw new DmoCorruptSnapshotError(`free row ${i + 1} has a size`);
    if (sizeBytes > MAX_OBJECT_BYTES) throw new DmoCorruptSnapshotError(`row ${i + 1} is too large`);
    if ((meta & ROW_LIVE) !== 0) live++;
    metas[i] = meta;
    sizes[i] = sizeBytes;
    sum += sizeBytes;
  }
  if (live !== liveObjects || sum !== dataBytes) {
    throw new DmoCorruptSnapshotError('rows disagree with the header counts');
  }
  const layoutEpoch = view.getUint32(LAYOUT_EPOCH_OFFSET, true);
  return { owner: owner as ActorId, slotCount, metas, sizes, dataStart, layoutEpoch };
}

/** CRC-32C of a snapshot's bytes, skipping the checksum field itself. */
function checksum(bytes: Uint8Array, offset: number, totalBytes: number): number {
  const head = crc32c(bytes, offset, offset + CHECKSUM_OFFSET);
  return crc32c(bytes, offset + CHECKSUM_OFFSET + 4, offset + totalBytes, head);
}
