/**
 * `MemoryFileSystem`: an in-memory disk that can crash — the LSM engine's test bench for crash
 * consistency, and a modelled disk for the simulated platform (DESIGN.md: "storage (host only):
 * real files live, a modelled disk in sim").
 *
 * It keeps two states, as a real disk with a page cache does:
 *
 *   volatile  what reads see now: every write, create, rename and remove so far
 *   durable   what survives power loss: a file's bytes as of its last `sync`, a directory's
 *             entries as of its last `syncDirectory`
 *
 * and between them the pending changes: per file, the writes since its last sync (in order); per
 * directory, the entry changes since its last sync (create / rename / remove).
 *
 * `crash('power', random)` models losing power: each file keeps its durable bytes plus a random
 * prefix of its pending writes, the last of which may be torn part-way; each directory keeps its
 * durable entries plus a random subset of its pending changes (POSIX promises no order between
 * them without a directory sync, so neither does this model). A store that syncs a file before
 * renaming it into place and syncs the directory before relying on the rename survives every such
 * outcome; one that skips a sync is caught by it. `crash('process')` models only the process dying:
 * the OS keeps everything, but open files and locks vanish.
 *
 * Fault injection: `failAtOperation = k` makes the k-th mutating call (create, write, sync, rename,
 * remove, syncDirectory; counted from 1 in `mutatingOperations`) throw `SimulatedCrash` — a write
 * is first applied half way, a torn write — and every call after it throw too, as a dead process
 * would. Then call `crash(...)` and reopen.
 */

import type { LsmFile, LsmFileSystem, LsmLockResult } from './file-system.ts';

/** What a crash loses: power (unsynced bytes and entries) or only the process (nothing on disk). */
export type CrashMode = 'power' | 'process';

/** Thrown by a MemoryFileSystem at its injected fault, and by every call until `crash()`. */
export class SimulatedCrash extends Error {
  constructor(operation: string) {
    super(`simulated crash at ${operation}`);
    this.name = 'SimulatedCrash';
  }
}

interface PendingWrite {
  readonly position: number;
  readonly bytes: Uint8Array;
}

class Inode {
  data = new Uint8Array(0);
  length = 0;
  durable = new Uint8Array(0);
  pending: PendingWrite[] = [];

  write(source: Uint8Array, position: number): void {
    const end = position + source.length;
    if (end > this.data.length) {
      const grown = new Uint8Array(Math.max(end, this.data.length * 2, 256));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    this.data.set(source, position);
    if (end > this.length) this.length = end;
  }

  sync(): void {
    this.durable = this.data.slice(0, this.length);
    this.pending = [];
  }
}

type DirectoryChange =
  | { readonly kind: 'set'; readonly name: string; readonly inode: Inode }
  | { readonly kind: 'remove'; readonly name: string }
  | { readonly kind: 'rename'; readonly from: string; readonly to: string; readonly inode: Inode };

class Directory {
  entries = new Map<string, Inode>();
  durable = new Map<string, Inode>();
  pending: DirectoryChange[] = [];

  sync(): void {
    this.durable = new Map(this.entries);
    this.pending = [];
  }
}

function split(path: string): [string, string] {
  const slash = path.lastIndexOf('/');
  if (slash < 0) return ['.', path];
  return [slash === 0 ? '/' : path.slice(0, slash), path.slice(slash + 1)];
}

function noEntry(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, '${path}'`), { code: 'ENOENT' });
}

/** An in-memory filesystem with explicit durability, crash simulation and fault injection. */
export class MemoryFileSystem implements LsmFileSystem {
  readonly #directories = new Map<string, Directory>();
  readonly #locks = new Set<string>();
  /** Bumped by every crash: files opened before it stop working. */
  #incarnation = 0;
  #dead = false;
  /** Mutating calls so far (create, write, sync, rename, remove, syncDirectory). */
  mutatingOperations = 0;
  /** When set, the mutating call with this number (1-based) crashes. */
  failAtOperation: number | undefined = undefined;

  /** Whether an injected fault has fired and `crash()` has not been called since. */
  get dead(): boolean {
    return this.#dead;
  }

  makeDirectory(path: string): void {
    this.#alive('makeDirectory');
    // Directories appear durable at once: the engine never depends on a new directory's creation
    // surviving a crash (it is re-created at open), so modelling its durability adds nothing.
    if (!this.#directories.has(path)) this.#directories.set(path, new Directory());
  }

  list(directory: string): string[] {
    this.#alive('list');
    return [...this.#directory(directory).entries.keys()];
  }

  openRead(path: string): LsmFile {
    this.#alive('openRead');
    const [directory, name] = split(path);
    const inode = this.#directory(directory).entries.get(name);
    if (inode === undefined) throw noEntry(path);
    return this.#file(inode, path, false);
  }

  create(path: string): LsmFile {
    this.#mutate(`create ${path}`);
    const [directoryPath, name] = split(path);
    const directory = this.#directory(directoryPath);
    const inode = new Inode();
    directory.entries.set(name, inode);
    directory.pending.push({ kind: 'set', name, inode });
    return this.#file(inode, path, true);
  }

  rename(from: string, to: string): void {
    this.#mutate(`rename ${from}`);
    const [fromDirectoryPath, fromName] = split(from);
    const [toDirectoryPath, toName] = split(to);
    if (fromDirectoryPath !== toDirectoryPath)
      throw new Error('MemoryFileSystem renames within a directory only');
    const directory = this.#directory(fromDirectoryPath);
    const inode = directory.entries.get(fromName);
    if (inode === undefined) throw noEntry(from);
    directory.entries.delete(fromName);
    directory.entries.set(toName, inode);
    directory.pending.push({ kind: 'rename', from: fromName, to: toName, inode });
  }

  remove(path: string): void {
    this.#mutate(`remove ${path}`);
    const [directoryPath, name] = split(path);
    const directory = this.#directory(directoryPath);
    if (!directory.entries.delete(name)) throw noEntry(path);
    directory.pending.push({ kind: 'remove', name });
  }

  syncDirectory(path: string): void {
    this.#mutate(`syncDirectory ${path}`);
    this.#directory(path).sync();
  }

  lock(directory: string): LsmLockResult {
    this.#alive('lock');
    if (this.#locks.has(directory)) return { kind: 'held', holderPid: process.pid, thisProcess: true };
    this.#locks.add(directory);
    const incarnation = this.#incarnation;
    return {
      kind: 'acquired',
      release: () => {
        if (this.#incarnation === incarnation) this.#locks.delete(directory);
      },
    };
  }

  /**
   * Ends the "process": open files and locks vanish; with 'power', unsynced data and directory
   * changes are partly lost as described above (choices drawn from `random`, in [0, 1)).
   */
  crash(mode: CrashMode, random: () => number = Math.random): void {
    this.#incarnation++;
    this.#dead = false;
    this.failAtOperation = undefined;
    this.#locks.clear();
    if (mode === 'process') return;
    const inodes = new Set<Inode>();
    for (const directory of this.#directories.values()) {
      const entries = new Map(directory.durable);
      for (const change of directory.pending) {
        if (random() < 0.5) continue; // this change did not reach the disk
        if (change.kind === 'set') entries.set(change.name, change.inode);
        else if (change.kind === 'remove') entries.delete(change.name);
        else {
          entries.delete(change.from);
          entries.set(change.to, change.inode);
        }
      }
      directory.entries = entries;
      directory.sync();
      for (const inode of entries.values()) inodes.add(inode);
    }
    for (const inode of inodes) {
      const kept = Math.floor(random() * (inode.pending.length + 1));
      const pending = inode.pending;
      inode.data = new Uint8Array(0);
      inode.length = 0;
      inode.write(inode.durable, 0);
      for (let i = 0; i < kept && i < pending.length; i++)
        inode.write(pending[i]!.bytes, pending[i]!.position);
      const torn = pending[kept];
      if (torn !== undefined && random() < 0.5) {
        inode.write(torn.bytes.subarray(0, Math.floor(random() * torn.bytes.length)), torn.position);
      }
      inode.sync();
    }
  }

  // ---- test helpers: direct access to the durable bytes -------------------------------------

  /** A copy of a file's current bytes. */
  readFile(path: string): Uint8Array {
    const [directory, name] = split(path);
    const inode = this.#directory(directory).entries.get(name);
    if (inode === undefined) throw noEntry(path);
    return inode.data.slice(0, inode.length);
  }

  /** Replaces a file's bytes (durably, as if written and synced): for corrupting files in tests. */
  writeFile(path: string, bytes: Uint8Array): void {
    const [directoryPath, name] = split(path);
    const directory = this.#directory(directoryPath);
    let inode = directory.entries.get(name);
    if (inode === undefined) {
      inode = new Inode();
      directory.entries.set(name, inode);
      directory.sync();
    }
    inode.data = new Uint8Array(0);
    inode.length = 0;
    inode.write(bytes, 0);
    inode.sync();
  }

  #alive(operation: string): void {
    if (this.#dead) throw new SimulatedCrash(`${operation} after the crash`);
  }

  #mutate(operation: string): void {
    this.#alive(operation);
    this.mutatingOperations++;
    if (this.failAtOperation !== undefined && this.mutatingOperations >= this.failAtOperation) {
      this.#dead = true;
      throw new SimulatedCrash(operation);
    }
  }

  #directory(path: string): Directory {
    const directory = this.#directories.get(path);
    if (directory === undefined) throw noEntry(path);
    return directory;
  }

  #file(inode: Inode, path: string, writable: boolean): LsmFile {
    const incarnation = this.#incarnation;
    let closed = false;
    const check = (operation: string): void => {
      this.#alive(operation);
      if (closed || this.#incarnation !== incarnation) throw new Error(`${path} is not open`);
    };
    return {
      read: (target, offset, length, position) => {
        check('read');
        const available = Math.max(0, Math.min(length, inode.length - position));
        target.set(inode.data.subarray(position, position + available), offset);
        return available;
      },
      write: (source, offset, length, position) => {
        check('write');
        if (!writable) throw new Error(`${path} is open for reading`);
        const bytes = source.slice(offset, offset + length);
        try {
          this.#mutate(`write ${path}`);
        } catch (error) {
          // The crash lands in the middle of this write: half of it reached the page cache.
          const half = bytes.subarray(0, bytes.length >>> 1);
          inode.write(half, position);
          inode.pending.push({ position, bytes: half.slice() });
          throw error;
        }
        inode.write(bytes, position);
        inode.pending.push({ position, bytes });
      },
      sync: () => {
        check('sync');
        this.#mutate(`sync ${path}`);
        inode.sync();
      },
      sizeBytes: () => {
        check('size');
        return inode.length;
      },
      close: () => {
        closed = true;
      },
    };
  }
}
