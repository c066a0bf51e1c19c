/**
 * Distributed memory objects — the public surface of src/dmo (iPipe §3, "Distributed memory
 * objects", and phase 3 of §3's actor migration).
 *
 * A `DmoDomain` is one side's memory (NIC or host) carved into equal per-actor regions; each
 * actor reaches its own region only through a `DmoHeap` of object ids. The collections keep whole
 * data structures inside an actor's objects, linked by id, so that `snapshotHeap` /
 * `restoreHeap` — or, faster, a region image (`writeRegionImage` / `adoptRegionImage`) — can move
 * an actor's state across PCIe and the actor re-opens its collections by their root ids on the
 * other side.
 */

// ---- values ---------------------------------------------------------------------------------

/** A byte-string → byte-string hash map in DMOs (open addressing, string-key helpers). */
export { DmoHashMap } from './collections/hash-map.ts';
/** An append-only log of byte records with prefix/suffix truncation (Paxos / coordinator logs). */
export { DmoLog } from './collections/log.ts';
/** A number → number hash map in one DMO table (counters). */
export { DmoNumberMap } from './collections/number-map.ts';
/** An ordered byte-string map in DMOs (the memtable's skip list). */
export { DmoSkipList } from './collections/skip-list.ts';
/** A growable vector of fixed-size elements (u32, i32, f64 or fixed-width bytes). */
export { DmoVector } from './collections/vector.ts';
/** CRC-32C (Castagnoli), the checksum snapshots carry; exported for channels that want the same. */
export { crc32c } from './crc32c.ts';
/** One side's DMO memory: create it, attach to it from another thread, hand out heaps. */
export { DmoDomain } from './domain.ts';
/**
 * Migration phase 3 by region image: copy an actor's used region bytes to another domain and
 * adopt them there with the same object ids (one or a few `Uint8Array.set` calls, O(rows) checks).
 */
export {
  adoptRegionImage,
  ImageAssembler,
  REGION_IMAGE_HEADER_BYTES,
  readRegionImageHeader,
  regionImageChunks,
  regionImageSize,
  writeRegionImage,
} from './region-image.ts';
/** Migration phase 3: serialise an actor's heap, and recreate it with the same object ids. */
export { restoreHeap, snapshotHeap, snapshotHeapInto, snapshotOwner, snapshotSize } from './snapshot.ts';

// ---- types ----------------------------------------------------------------------------------

/** Options of `DmoHashMap.create`. */
export type { DmoHashMapOptions } from './collections/hash-map.ts';
/** Options of `DmoLog.create`. */
export type { DmoLogOptions } from './collections/log.ts';
/** Options of `DmoNumberMap.create`. */
export type { DmoNumberMapOptions } from './collections/number-map.ts';
/** Options of `DmoSkipList.create` and `DmoSkipList.open`. */
export type { DmoSkipListOpenOptions, DmoSkipListOptions } from './collections/skip-list.ts';
/** Options of `DmoVector.create`, and its element kinds. */
export type { DmoVectorElement, DmoVectorOptions } from './collections/vector.ts';
/** Options of `DmoDomain.create`, and of `createHeap` / `restoreHeap`. */
export type { DmoDomainOptions, DmoHeapOptions } from './domain.ts';
/** The buffer a domain lives in (a SharedArrayBuffer where the runtime has one). */
export type { DomainBuffer } from './memory.ts';
/**
 * Options of `writeRegionImage` / `regionImageChunks` and `adoptRegionImage` / `ImageAssembler`, an
 * image header, and where a chunked transfer stands (`ImageAssembler.accept`).
 */
export type {
  ImageProgress,
  RegionImageAdoptOptions,
  RegionImageHeader,
  RegionImageWriteOptions,
} from './region-image.ts';
/** The DMO API an actor uses, its statistics, and a row of a side's object table. */
export type { DmoHeap, DmoHeapStats, ObjectTableRow } from './types.ts';
