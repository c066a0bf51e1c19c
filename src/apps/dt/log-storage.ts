/**
 * Where the coordinator log lives (iPipe §5 "DT": "a logging actor pinned to the host writes the
 * log to persistent storage"; DESIGN.md's `storage`: real files live, a modelled disk in sim).
 *
 * `LogStorage` is an append-only byte file with an explicit `sync` (fsync): bytes appended but not
 * synced may be lost — or partly kept, or kept as garbage — by a crash; synced bytes survive.
 * Two implementations:
 *
 * - `FileLogStorage`: a real file. Appends with O_APPEND, `sync` is fsync(2), truncation is
 *   ftruncate + fsync, and `replace` (compaction) writes a temporary file, fsyncs it, renames it
 *   over the log and fsyncs the directory, so a crash leaves either the old or the new file whole.
 * - `MemoryLogStorage`: the simulator's disk, with a crash model: `crash(random)` keeps the synced
 *   bytes, a random prefix of the unsynced ones (writes reach the medium in order), and with some
 *   probability scribbles over the end of what it kept (a torn sector). Deterministic per seed.
 *
 * Calls are synchronous: an actor handler runs to completion, and the logging actor is pinned to
 * a host core where blocking on the disk is what the paper's design puts there.
 */

import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../../errors.ts';
import type { Random } from '../../random.ts';
import { DtLogIoError } from './errors.ts';

/** An append-only file with explicit durability. */
export interface LogStorage {
  /** What it is, for messages ("file:/var/lib/dt/coordinator.log", "memory:node0"). */
  readonly name: string;
  /** Appends `bytes` at the end; not durable until `sync`. */
  append(bytes: Uint8Array): void;
  /** Makes everything appended so far durable (fsync). */
  sync(): void;
  /** The whole content as this process sees it (synced or not). */
  readAll(): Uint8Array;
  /** Bytes in the file. */
  size(): number;
  /** Cuts the file to `sizeBytes`, durably (used to drop a torn tail before appending again). */
  truncate(sizeBytes: number): void;
  /** Replaces the content atomically and durably (compaction). */
  replace(bytes: Uint8Array): void;
  /** Releases the file (further calls reopen it for a file; a memory disk stays usable). */
  close(): void;
}

/** What a simulated crash did to the unsynced tail. */
export interface CrashReport {
  readonly unsyncedBytes: number;
  readonly keptBytes: number;
  readonly garbledBytes: number;
}

/** How a simulated crash treats unsynced bytes. */
export interface CrashModel {
  /** Probability that a crash keeps any unsynced bytes at all (default 0.5). */
  readonly keepProbability?: number;
  /** Probability that the last kept bytes are garbage (default 0.3). */
  readonly garbleProbability?: number;
}

/** The simulator's disk: a byte file in memory with a crash model (see the header). */
export class MemoryLogStorage implements LogStorage {
  readonly name: string;
  #bytes = new Uint8Array(4096);
  #size = 0;
  #syncedSize = 0;
  #syncs = 0;

  constructor(name = 'memory') {
    this.name = `memory:${name}`;
  }

  /** How many times `sync` ran (group commit shows as fewer syncs than appends). */
  get syncCount(): number {
    return this.#syncs;
  }

  /** Bytes that a crash now could lose. */
  get unsyncedBytes(): number {
    return this.#size - this.#syncedSize;
  }

  append(bytes: Uint8Array): void {
    this.#reserve(this.#size + bytes.length);
    this.#bytes.set(bytes, this.#size);
    this.#size += bytes.length;
  }

  sync(): void {
    this.#syncs++;
    this.#syncedSize = this.#size;
  }

  readAll(): Uint8Array {
    return this.#bytes.slice(0, this.#size);
  }

  size(): number {
    return this.#size;
  }

  truncate(sizeBytes: number): void {
    if (!(Number.isInteger(sizeBytes) && sizeBytes >= 0 && sizeBytes <= this.#size)) {
      throw new RangeError(`truncate(${sizeBytes}) outside [0, ${this.#size}]`);
    }
    this.#size = sizeBytes;
    this.#syncedSize = sizeBytes;
  }

  replace(bytes: Uint8Array): void {
    this.#bytes = new Uint8Array(Math.max(4096, bytes.length * 2));
    this.#bytes.set(bytes);
    this.#size = bytes.length;
    this.#syncedSize = bytes.length;
  }

  close(): void {}

  /** Overwrites one byte (tests: damage in the middle of synced data). */
  corrupt(offset: number, xorMask = 0xff): void {
    if (!(offset >= 0 && offset < this.#size)) throw new RangeError(`corrupt(${offset}) outside the file`);
    this.#bytes[offset] = this.#bytes[offset]! ^ (xorMask & 0xff || 1);
  }

  /**
   * A power failure: synced bytes stay; of the unsynced ones a random prefix may stay, and its
   * last few bytes may be garbage. Everything that remains counts as on the medium afterwards.
   */
  crash(random: Random, model: CrashModel = {}): CrashReport {
    const unsynced = this.#size - this.#syncedSize;
    let kept = 0;
    let garbled = 0;
    if (unsynced > 0 && random.chance(model.keepProbability ?? 0.5)) {
      kept = random.int(0, unsynced + 1);
      if (kept > 0 && random.chance(model.garbleProbability ?? 0.3)) {
        garbled = random.int(1, Math.min(kept, 16) + 1);
        const start = this.#syncedSize + kept - garbled;
        for (let i = 0; i < garbled; i++) this.#bytes[start + i] = random.int(0, 256);
      }
    }
    this.#size = this.#syncedSize + kept;
    this.#syncedSize = this.#size;
    return { unsyncedBytes: unsynced, keptBytes: kept, garbledBytes: garbled };
  }

  #reserve(bytes: number): void {
    if (bytes <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(bytes, this.#bytes.length * 2));
    grown.set(this.#bytes.subarray(0, this.#size));
    this.#bytes = grown;
  }
}

/** A real file (see the header for what each call does to the disk). */
export class FileLogStorage implements LogStorage {
  readonly name: string;
  readonly path: string;
  #fd: number | undefined;

  constructor(path: string) {
    this.path = path;
    this.name = `file:${path}`;
    this.#open();
  }

  append(bytes: Uint8Array): void {
    const fd = this.#open();
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (error) {
      throw new DtLogIoError(this.path, 'append', error);
    }
  }

  sync(): void {
    const fd = this.#open();
    try {
      fsyncSync(fd);
    } catch (error) {
      throw new DtLogIoError(this.path, 'fsync', error);
    }
  }

  readAll(): Uint8Array {
    const fd = this.#open();
    try {
      const size = fstatSync(fd).size;
      const out = new Uint8Array(size);
      let read = 0;
      while (read < size) {
        const got = readSync(fd, out, read, size - read, read);
        if (got === 0) break;
        read += got;
      }
      return read === size ? out : out.slice(0, read);
    } catch (error) {
      throw new DtLogIoError(this.path, 'read', error);
    }
  }

  size(): number {
    try {
      return fstatSync(this.#open()).size;
    } catch (error) {
      throw new DtLogIoError(this.path, 'stat', error);
    }
  }

  truncate(sizeBytes: number): void {
    const fd = this.#open();
    try {
      ftruncateSync(fd, sizeBytes);
      fsyncSync(fd);
    } catch (error) {
      throw new DtLogIoError(this.path, 'truncate', error);
    }
  }

  replace(bytes: Uint8Array): void {
    const temporary = `${this.path}.compact`;
    try {
      const fd = openSync(temporary, 'w');
      try {
        let written = 0;
        while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      this.close();
      renameSync(temporary, this.path);
      syncDirectory(this.path);
    } catch (error) {
      throw new DtLogIoError(this.path, 'compaction (write, fsync, rename)', error);
    }
    this.#open();
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      closeSync(fd);
    } catch (error) {
      throw new DtLogIoError(this.path, 'close', error);
    }
  }

  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    const created = !existsSync(this.path);
    try {
      // 'a+': O_APPEND | O_CREAT | O_RDWR — appends always land at the end, reads see the file.
      this.#fd = openSync(this.path, 'a+');
      // A new file's directory entry must be durable too, or a crash could lose the whole file.
      if (created) syncDirectory(this.path);
    } catch (error) {
      throw new DtLogIoError(this.path, 'open', error);
    }
    return this.#fd;
  }
}

function syncDirectory(path: string): void {
  const fd = openSync(dirname(path), 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/*
 * Named storages for the logging actor. Its setup message names its storage as text, because an
 * actor's state must be data in its DMOs (so it can migrate, and so every worker thread can find
 * it): `file:<absolute path>` opens (and caches, per thread) a FileLogStorage; `memory:<name>`
 * finds a MemoryLogStorage registered in this thread with `registerMemoryLogStorage` (tests and
 * single-threaded runtimes). The cache holds open file descriptors only; the truth is the file.
 */
const memoryStorages = new Map<string, MemoryLogStorage>();
const fileStorages = new Map<string, { storage: FileLogStorage; generation: number }>();

/** Makes `storage` reachable as `memory:<name>` from a logging actor in this thread. */
export function registerMemoryLogStorage(name: string, storage: MemoryLogStorage): void {
  memoryStorages.set(name, storage);
}

/** Forgets a registered memory storage. */
export function unregisterMemoryLogStorage(name: string): void {
  memoryStorages.delete(name);
}

/**
 * Opens the storage a logger setup names. Throws ConfigError for an unknown scheme or name.
 * `generation` counts compactions (kept in the logger's DMO state): a descriptor cached in this
 * thread before another thread renamed a compacted file over the log would point at the old,
 * unlinked file, so a cached descriptor of an older generation is reopened. `fresh` always reopens
 * (the logger's start-up: the file may have been replaced since anything here opened it).
 */
export function openLogStorage(spec: string, generation = 0, fresh = false): LogStorage {
  if (spec.startsWith('memory:')) {
    const storage = memoryStorages.get(spec.slice('memory:'.length));
    if (!storage) {
      throw new ConfigError(
        'logger-setup.storage',
        `no memory log storage is registered as ${JSON.stringify(spec)} in this thread: call registerMemoryLogStorage first`,
      );
    }
    return storage;
  }
  if (spec.startsWith('file:')) {
    const path = spec.slice('file:'.length);
    if (!path.startsWith('/')) {
      throw new ConfigError(
        'logger-setup.storage',
        `file: needs an absolute path, got ${JSON.stringify(path)}`,
      );
    }
    const cached = fileStorages.get(path);
    if (cached && cached.generation === generation && !fresh) return cached.storage;
    cached?.storage.close();
    const storage = new FileLogStorage(path);
    fileStorages.set(path, { storage, generation });
    return storage;
  }
  throw new ConfigError(
    'logger-setup.storage',
    `expected "file:<absolute path>" or "memory:<name>", got ${JSON.stringify(spec)}`,
  );
}
