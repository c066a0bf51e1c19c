/**
 * The header every DMO collection keeps at the start of its root object (iPipe §3: data
 * structures inside DMOs link by object id, so after migration an actor re-opens each collection
 * from the one root id it kept).
 *
 *   word 0  magic: which collection this root belongs to
 *   word 1  layout version
 *   …       the collection's own fields
 *
 * Opening checks the root's size, magic and version, so re-opening an id as the wrong kind of
 * collection (or a plain object as a collection) fails with DmoCollectionFormatError instead of
 * misreading bytes.
 */

import { DmoCollectionFormatError } from '../../errors.ts';
import type { ObjectId } from '../../ids.ts';
import type { Region } from '../region.ts';

/** Magic numbers (ASCII, little-endian) of the collection kinds. */
export const COLLECTION_MAGIC = {
  hashMap: 0x50414d48, // 'HMAP'
  numberMap: 0x50414d4e, // 'NMAP'
  skipList: 0x4c504b53, // 'SKPL'
  log: 0x474f4c44, // 'DLOG'
  vector: 0x43455644, // 'DVEC'
} as const;

/** The collection kinds, by their magic-number names. */
export type CollectionKind = keyof typeof COLLECTION_MAGIC;

/** Version of every collection's object layout (checked on open), unless the kind has its own below. */
export const COLLECTION_LAYOUT_VERSION = 1;

/**
 * Kinds whose layout changed since version 1. The hash map is at 2: its root holds slab free
 * lists and small entries live in per-map slabs (see hash-map.ts); a version-1 root is refused on
 * open rather than misread.
 */
const KIND_LAYOUT_VERSION: Partial<Record<CollectionKind, number>> = { hashMap: 2 };

/** The layout version `kind`'s roots carry. */
export function layoutVersionOf(kind: CollectionKind): number {
  return KIND_LAYOUT_VERSION[kind] ?? COLLECTION_LAYOUT_VERSION;
}

const KIND_NAMES: Record<CollectionKind, string> = {
  hashMap: 'DmoHashMap',
  numberMap: 'DmoNumberMap',
  skipList: 'DmoSkipList',
  log: 'DmoLog',
  vector: 'DmoVector',
};

/** Writes magic and version into a freshly allocated root; returns its start word. */
export function initRoot(region: Region, rootId: ObjectId, kind: CollectionKind): number {
  const word = region.startOf(rootId) >>> 2;
  region.u32[word] = COLLECTION_MAGIC[kind];
  region.u32[word + 1] = layoutVersionOf(kind);
  return word;
}

/** Checks that `rootId` is a root of `kind` with `rootBytes` bytes; throws otherwise. */
export function checkRoot(region: Region, rootId: ObjectId, kind: CollectionKind, rootBytes: number): void {
  const row = region.lookup(rootId);
  if (row < 0) region.failLookup(rootId);
  const name = KIND_NAMES[kind];
  const sizeBytes = region.rowSize(row);
  const word = region.rowStart(row) >>> 2;
  const magic = sizeBytes >= 8 ? region.u32[word]! : 0;
  if (magic !== COLLECTION_MAGIC[kind]) {
    const found = (Object.keys(COLLECTION_MAGIC) as CollectionKind[]).find(
      (k) => COLLECTION_MAGIC[k] === magic,
    );
    throw new DmoCollectionFormatError(
      `object ${rootId} is ${found === undefined ? 'not a collection root' : `the root of a ${KIND_NAMES[found]}`}, ` +
        `not of a ${name}: open it with the class that created it`,
    );
  }
  const version = layoutVersionOf(kind);
  if (region.u32[word + 1] !== version) {
    throw new DmoCollectionFormatError(
      `${name} at object ${rootId} has layout version ${region.u32[word + 1]}, this build reads ${version}: ` +
        'restore it with the build that wrote it',
    );
  }
  if (sizeBytes !== rootBytes) {
    throw new DmoCollectionFormatError(`${name} root ${rootId} is ${sizeBytes} bytes, expected ${rootBytes}`);
  }
}
