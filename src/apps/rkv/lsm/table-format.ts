/**
 * The SSTable file layout and its metadata blocks (RKV's on-disk tables, iPipe §5: "SSTables …
 * sorted, with an index block and a Bloom filter per table, checksummed").
 *
 *   ┌───────────────┬─────┬───────────────┬──────────────┬─────────────┬──────────────────┬────────┐
 *   │ data block 0  │ ... │ data block n−1│ filter block │ index block │ properties block │ footer │
 *   └───────────────┴─────┴───────────────┴──────────────┴─────────────┴──────────────────┴────────┘
 *   each block: payload · type u8 · crc32c u32 (block.ts)                                    64 B
 *
 * Index payload:      count varint, then per data block: lastKey (varint length + bytes),
 *                     offset varint, length varint (the block's bytes, trailer included)
 * Properties payload: entryCount, tombstoneCount, dataBlockCount, smallestSequence,
 *                     largestSequence (varints), smallestKey, largestKey (length-prefixed),
 *                     keyBytes, valueBytes (varints)
 * Footer (64 bytes, little-endian):
 *
 *    0  magic "IPIPESST"          8
 *    8  format version u32        4
 *   12  reserved u32 (0)          4
 *   16  filter     offset u64, length u32
 *   28  index      offset u64, length u32
 *   40  properties offset u64, length u32
 *   52  reserved (0)              8
 *   60  crc32c of bytes 0..60     4
 *
 * The footer is found from the file's end, so a truncated file loses it (or fails its checksum)
 * and is refused; the manifest also records each table's exact size.
 */

import { crc32c } from '../../../dmo/crc32c.ts';
import { ByteReader, type ByteWriter, FormatError, readU64, writeU64 } from './bytes.ts';

export const TABLE_MAGIC = Uint8Array.from([0x49, 0x50, 0x49, 0x50, 0x45, 0x53, 0x53, 0x54]); // IPIPESST
export const TABLE_FORMAT_VERSION = 1;
export const FOOTER_BYTES = 64;

/** Where a block lies in its file (length includes the trailer). */
export interface BlockHandle {
  readonly offset: number;
  readonly length: number;
}

/** A table's description: what the manifest records and what its properties block repeats. */
export interface TableInfo {
  /** Names the file: `<fileNumber padded to 6>.sst`. */
  readonly fileNumber: number;
  readonly sizeBytes: number;
  readonly entryCount: number;
  readonly tombstoneCount: number;
  readonly smallestKey: Uint8Array;
  readonly largestKey: Uint8Array;
  readonly smallestSequence: number;
  readonly largestSequence: number;
}

/** The properties block's contents. */
export interface TableProperties {
  readonly entryCount: number;
  readonly tombstoneCount: number;
  readonly dataBlockCount: number;
  readonly smallestSequence: number;
  readonly largestSequence: number;
  readonly smallestKey: Uint8Array;
  readonly largestKey: Uint8Array;
  readonly keyBytes: number;
  readonly valueBytes: number;
}

/** The footer's block handles. */
export interface Footer {
  readonly filter: BlockHandle;
  readonly index: BlockHandle;
  readonly properties: BlockHandle;
}

/** `000042.sst` */
export function tableFileName(fileNumber: number): string {
  return `${String(fileNumber).padStart(6, '0')}.sst`;
}

/** The file number in a table file's name, or undefined when the name is not one. */
export function parseTableFileName(name: string): number | undefined {
  const match = /^(\d{6,16})\.sst$/.exec(name);
  return match === null ? undefined : Number(match[1]);
}

export function encodeFooter(footer: Footer): Uint8Array {
  const bytes = new Uint8Array(FOOTER_BYTES);
  const view = new DataView(bytes.buffer);
  bytes.set(TABLE_MAGIC, 0);
  view.setUint32(8, TABLE_FORMAT_VERSION, true);
  let offset = 16;
  for (const handle of [footer.filter, footer.index, footer.properties]) {
    writeU64(view, offset, handle.offset);
    view.setUint32(offset + 8, handle.length, true);
    offset += 12;
  }
  view.setUint32(60, crc32c(bytes, 0, 60), true);
  return bytes;
}

/** Parses and checks a footer; `dataEnd` is where the footer starts (handles must lie before). */
export function decodeFooter(bytes: Uint8Array, dataEnd: number): Footer {
  if (bytes.length !== FOOTER_BYTES) throw new FormatError(`footer of ${bytes.length} bytes`);
  for (let i = 0; i < TABLE_MAGIC.length; i++) {
    if (bytes[i] !== TABLE_MAGIC[i])
      throw new FormatError('no SSTable magic in the footer (not a table, or truncated)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stored = view.getUint32(60, true);
  if (stored !== crc32c(bytes, 0, 60)) throw new FormatError('footer checksum mismatch');
  const version = view.getUint32(8, true);
  if (version !== TABLE_FORMAT_VERSION) throw new FormatError(`unknown table format version ${version}`);
  const handles: BlockHandle[] = [];
  for (let offset = 16; offset < 52; offset += 12) {
    const handle = { offset: readU64(view, offset), length: view.getUint32(offset + 8, true) };
    if (handle.offset + handle.length > dataEnd) {
      throw new FormatError(
        `block handle [${handle.offset}, +${handle.length}) past the data end ${dataEnd}`,
      );
    }
    handles.push(handle);
  }
  return { filter: handles[0]!, index: handles[1]!, properties: handles[2]! };
}

/** One index entry per data block. */
export interface IndexEntry {
  readonly lastKey: Uint8Array;
  readonly handle: BlockHandle;
}

export function encodeIndex(writer: ByteWriter, entries: readonly IndexEntry[]): void {
  writer.varint(entries.length);
  for (const entry of entries) {
    writer.lengthPrefixed(entry.lastKey);
    writer.varint(entry.handle.offset);
    writer.varint(entry.handle.length);
  }
}

export function decodeIndex(payload: Uint8Array): IndexEntry[] {
  const reader = new ByteReader(payload);
  const count = reader.varint();
  if (count > payload.length) throw new FormatError(`index of ${count} entries in ${payload.length} bytes`);
  const entries: IndexEntry[] = [];
  for (let i = 0; i < count; i++) {
    const lastKey = reader.lengthPrefixed();
    entries.push({ lastKey, handle: { offset: reader.varint(), length: reader.varint() } });
  }
  if (reader.remaining !== 0) throw new FormatError(`${reader.remaining} stray bytes after the index`);
  return entries;
}

export function encodeProperties(writer: ByteWriter, properties: TableProperties): void {
  writer.varint(properties.entryCount);
  writer.varint(properties.tombstoneCount);
  writer.varint(properties.dataBlockCount);
  writer.varint(properties.smallestSequence);
  writer.varint(properties.largestSequence);
  writer.lengthPrefixed(properties.smallestKey);
  writer.lengthPrefixed(properties.largestKey);
  writer.varint(properties.keyBytes);
  writer.varint(properties.valueBytes);
}

export function decodeProperties(payload: Uint8Array): TableProperties {
  const reader = new ByteReader(payload);
  const properties: TableProperties = {
    entryCount: reader.varint(),
    tombstoneCount: reader.varint(),
    dataBlockCount: reader.varint(),
    smallestSequence: reader.varint(),
    largestSequence: reader.varint(),
    smallestKey: reader.lengthPrefixed(),
    largestKey: reader.lengthPrefixed(),
    keyBytes: reader.varint(),
    valueBytes: reader.varint(),
  };
  if (reader.remaining !== 0) throw new FormatError(`${reader.remaining} stray bytes after the properties`);
  return properties;
}
