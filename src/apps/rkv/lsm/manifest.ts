/**
 * The manifest: which SSTables make up the store, in which level — the one file whose atomic
 * replacement commits every flush and compaction (iPipe §5, RKV's compaction actor; LevelDB's
 * MANIFEST, here a whole snapshot per commit rather than an edit log, since a store has at most a
 * few thousand tables and a snapshot needs no replay or log compaction).
 *
 *   ┌─ magic "IPIPEMAN" ─┬─ version u32 ─┬─ payloadLength u32 ─┬─ payload ─┬─ crc32c u32 ─┐
 *   payload: levelCount, nextFileNumber, flushedSequence, tableCount (varints), then per table:
 *            level, fileNumber, sizeBytes, entryCount, tombstoneCount, smallestSequence,
 *            largestSequence (varints), smallestKey, largestKey (varint length + bytes)
 *
 * The checksum covers everything before it, so a torn or bit-flipped manifest is refused
 * (`LsmCorruptManifestError`) — never read as a smaller store.
 *
 * Commit protocol (`writeManifest`): write MANIFEST.tmp, fsync it, rename over MANIFEST, fsync the
 * directory. A crash before the rename leaves the old manifest (the temp file is removed at the
 * next open); after it, the new one. The tables a new manifest names were synced, renamed into
 * place and their directory synced before it was written.
 */

import { crc32c } from '../../../dmo/crc32c.ts';
import { ByteReader, ByteWriter, compareKeys, FormatError } from './bytes.ts';
import { LsmCorruptManifestError } from './errors.ts';
import type { LsmFileSystem } from './file-system.ts';
import type { TableInfo } from './table-format.ts';
import { io, removeBestEffort } from './table-writer.ts';

export const MANIFEST_FILE = 'MANIFEST';
export const MANIFEST_TEMP_FILE = 'MANIFEST.tmp';
const MAGIC = Uint8Array.from([0x49, 0x50, 0x49, 0x50, 0x45, 0x4d, 0x41, 0x4e]); // IPIPEMAN
const VERSION = 1;
const HEADER_BYTES = 16;

/** What a manifest records. */
export interface ManifestState {
  readonly levelCount: number;
  /** The next table file number to hand out (every number below it may be taken). */
  readonly nextFileNumber: number;
  /** The largest sequence number whose write is in a table (0: none). */
  readonly flushedSequence: number;
  /**
   * Tables per level. Level 0: newest first (tables may overlap). Deeper levels: by key, with
   * disjoint key ranges.
   */
  readonly levels: readonly (readonly TableInfo[])[];
}

export function encodeManifest(state: ManifestState): Uint8Array {
  const writer = new ByteWriter(1024);
  writer.bytes(MAGIC);
  writer.u32(VERSION);
  writer.u32(0); // payload length, patched below
  writer.varint(state.levelCount);
  writer.varint(state.nextFileNumber);
  writer.varint(state.flushedSequence);
  let tableCount = 0;
  for (const level of state.levels) tableCount += level.length;
  writer.varint(tableCount);
  state.levels.forEach((tables, level) => {
    for (const table of tables) {
      writer.varint(level);
      writer.varint(table.fileNumber);
      writer.varint(table.sizeBytes);
      writer.varint(table.entryCount);
      writer.varint(table.tombstoneCount);
      writer.varint(table.smallestSequence);
      writer.varint(table.largestSequence);
      writer.lengthPrefixed(table.smallestKey);
      writer.lengthPrefixed(table.largestKey);
    }
  });
  writer.patchU32(12, writer.length - HEADER_BYTES);
  const bytes = writer.view();
  writer.u32(crc32c(bytes, 0, bytes.length));
  return writer.view().slice();
}

/** Parses and checks a manifest; throws LsmCorruptManifestError naming `path`. */
export function decodeManifest(bytes: Uint8Array, path: string): ManifestState {
  const corrupt = (what: string): LsmCorruptManifestError => new LsmCorruptManifestError(path, what);
  if (bytes.length < HEADER_BYTES + 4) throw corrupt(`${bytes.length} bytes is too short`);
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) throw corrupt('no manifest magic');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  const payloadBytes = view.getUint32(12, true);
  if (HEADER_BYTES + payloadBytes + 4 !== bytes.length) {
    throw corrupt(
      `it has ${bytes.length} bytes where its header implies ${HEADER_BYTES + payloadBytes + 4} (truncated?)`,
    );
  }
  const stored = view.getUint32(bytes.length - 4, true);
  if (stored !== crc32c(bytes, 0, bytes.length - 4)) throw corrupt('checksum mismatch');
  if (version !== VERSION) throw corrupt(`unknown manifest version ${version}`);
  try {
    const reader = new ByteReader(bytes, HEADER_BYTES, bytes.length - 4);
    const levelCount = reader.varint();
    const nextFileNumber = reader.varint();
    const flushedSequence = reader.varint();
    const tableCount = reader.varint();
    if (levelCount < 2 || levelCount > 64) throw corrupt(`level count ${levelCount}`);
    if (tableCount > payloadBytes) throw corrupt(`${tableCount} tables in ${payloadBytes} bytes`);
    const levels: TableInfo[][] = Array.from({ length: levelCount }, () => []);
    const fileNumbers = new Set<number>();
    for (let i = 0; i < tableCount; i++) {
      const level = reader.varint();
      const table: TableInfo = {
        fileNumber: reader.varint(),
        sizeBytes: reader.varint(),
        entryCount: reader.varint(),
        tombstoneCount: reader.varint(),
        smallestSequence: reader.varint(),
        largestSequence: reader.varint(),
        smallestKey: reader.lengthPrefixed(),
        largestKey: reader.lengthPrefixed(),
      };
      if (level >= levelCount) throw corrupt(`table ${table.fileNumber} in level ${level} of ${levelCount}`);
      if (table.fileNumber >= nextFileNumber || fileNumbers.has(table.fileNumber)) {
        throw corrupt(`table number ${table.fileNumber} repeated or not below ${nextFileNumber}`);
      }
      if (compareKeys(table.smallestKey, table.largestKey) > 0)
        throw corrupt(`table ${table.fileNumber} key range inverted`);
      fileNumbers.add(table.fileNumber);
      levels[level]!.push(table);
    }
    if (reader.remaining !== 0) throw corrupt(`${reader.remaining} stray bytes`);
    for (let level = 1; level < levelCount; level++) {
      const tables = levels[level]!;
      for (let i = 1; i < tables.length; i++) {
        if (compareKeys(tables[i - 1]!.largestKey, tables[i]!.smallestKey) >= 0) {
          throw corrupt(
            `level ${level} tables ${tables[i - 1]!.fileNumber} and ${tables[i]!.fileNumber} overlap`,
          );
        }
      }
    }
    return { levelCount, nextFileNumber, flushedSequence, levels };
  } catch (error) {
    if (error instanceof FormatError) throw corrupt(error.message);
    throw error;
  }
}

/** Reads the manifest of `directory`, or undefined when there is none. */
export function readManifest(fileSystem: LsmFileSystem, directory: string): ManifestState | undefined {
  const path = `${directory}/${MANIFEST_FILE}`;
  if (!io('list', directory, () => fileSystem.list(directory)).includes(MANIFEST_FILE)) return undefined;
  const file = io('open', path, () => fileSystem.openRead(path));
  try {
    const sizeBytes = io('stat', path, () => file.sizeBytes());
    const bytes = new Uint8Array(sizeBytes);
    const got = io('read', path, () => file.read(bytes, 0, sizeBytes, 0));
    if (got !== sizeBytes) throw new LsmCorruptManifestError(path, `read ${got} of ${sizeBytes} bytes`);
    return decodeManifest(bytes, path);
  } finally {
    file.close();
  }
}

/**
 * Replaces the manifest of `directory` atomically and durably (see the header); returns the bytes
 * written.
 *
 * What a failure means depends on where it happens, and the caller must know which (LsmTree does):
 *
 *   create / write / fsync of MANIFEST.tmp, or the rename    the old manifest is still the one in
 *                                                            place (POSIX: a failed rename changes
 *                                                            neither name), so nothing changed;
 *                                                            the temp file is removed (best effort)
 *   fsync of the directory after the rename                  the new manifest is what reads see,
 *                                                            but power loss may bring back the old
 *                                                            one: the state is uncertain
 *
 * `onRenamed` is called right after the rename succeeds, so a caller that catches the error can
 * tell the second case from the first.
 */
export function writeManifest(
  fileSystem: LsmFileSystem,
  directory: string,
  state: ManifestState,
  onRenamed?: () => void,
): number {
  const bytes = encodeManifest(state);
  const tempPath = `${directory}/${MANIFEST_TEMP_FILE}`;
  try {
    const file = io('create', tempPath, () => fileSystem.create(tempPath));
    try {
      io('write', tempPath, () => file.write(bytes, 0, bytes.length, 0));
      io('fsync', tempPath, () => file.sync());
    } finally {
      file.close();
    }
    io('rename', tempPath, () => fileSystem.rename(tempPath, `${directory}/${MANIFEST_FILE}`));
  } catch (error) {
    // Not created, or the disk refuses: the next open removes a leftover MANIFEST.tmp.
    let leftover = true;
    try {
      leftover = fileSystem.list(directory).includes(MANIFEST_TEMP_FILE);
    } catch {
      // Cannot tell: try the removal anyway.
    }
    if (leftover) removeBestEffort(fileSystem, tempPath);
    throw error;
  }
  onRenamed?.();
  io('fsync', directory, () => fileSystem.syncDirectory(directory));
  return bytes.length;
}
