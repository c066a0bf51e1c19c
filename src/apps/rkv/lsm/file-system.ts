/**
 * The filesystem seam of the LSM engine: every byte the engine persists goes through an
 * `LsmFileSystem`, so the same engine runs on real files (`NodeFileSystem`, the live platform's
 * host storage), on an in-memory disk that can lose power (`MemoryFileSystem`, for crash tests and
 * the simulated platform's modelled disk), or behind a fault injector (`FaultyFileSystem`).
 *
 * The interface is synchronous on purpose: an RKV actor's handler runs to completion on its core,
 * and compaction is made interruptible by stepping it (compaction.ts), not by awaiting I/O.
 *
 * Durability is explicit, as in POSIX: `write` reaches the disk only at `sync`, and a `create`,
 * `rename` or `remove` only at `syncDirectory` of the directory holding it. The engine follows
 * write-to-temp → sync → rename → sync directory for every file it publishes.
 *
 * Locking: `lock(directory)` gives one holder at a time. `NodeFileSystem` implements it with a
 * LOCK file holding the owner's pid (Node has no flock): a LOCK whose pid no longer runs is stale
 * and is taken over, so a crashed store does not stay locked forever.
 */

import * as fs from 'node:fs';
import { join } from 'node:path';

/** An open file. Positions are absolute byte offsets (no implicit file pointer). */
export interface LsmFile {
  /** Reads up to `length` bytes at `position` into `target[offset…]`; returns the bytes read. */
  read(target: Uint8Array, offset: number, length: number, position: number): number;
  /** Writes `source[offset, offset + length)` at `position`, all of it. */
  write(source: Uint8Array, offset: number, length: number, position: number): void;
  /** Makes the file's written bytes durable (fsync). */
  sync(): void;
  sizeBytes(): number;
  close(): void;
}

/** The outcome of `lock`: acquired (with its release), or held by someone else. */
export type LsmLockResult =
  | { readonly kind: 'acquired'; readonly release: () => void }
  | { readonly kind: 'held'; readonly holderPid: number; readonly thisProcess: boolean };

/** What the engine needs from a filesystem. Paths are joined with `/`. */
export interface LsmFileSystem {
  /** Creates the directory (and its parents) if missing. */
  makeDirectory(path: string): void;
  /** Names in a directory (not paths). */
  list(directory: string): string[];
  /** Opens an existing file for reading. */
  openRead(path: string): LsmFile;
  /** Creates (or truncates) a file for writing. */
  create(path: string): LsmFile;
  /** Atomically replaces `to` with `from`. */
  rename(from: string, to: string): void;
  remove(path: string): void;
  /** Makes creates, renames and removes in the directory durable (fsync of the directory). */
  syncDirectory(path: string): void;
  /** Exclusive lock on a directory, held until `release` (or the process ends). */
  lock(directory: string): LsmLockResult;
}

/** The LOCK file's name in a data directory. */
export const LOCK_FILE = 'LOCK';

class NodeFile implements LsmFile {
  readonly #fd: number;
  constructor(fd: number) {
    this.#fd = fd;
  }
  read(target: Uint8Array, offset: number, length: number, position: number): number {
    let done = 0;
    while (done < length) {
      const got = fs.readSync(this.#fd, target, offset + done, length - done, position + done);
      if (got === 0) break;
      done += got;
    }
    return done;
  }
  write(source: Uint8Array, offset: number, length: number, position: number): void {
    let done = 0;
    while (done < length) {
      done += fs.writeSync(this.#fd, source, offset + done, length - done, position + done);
    }
  }
  sync(): void {
    fs.fsyncSync(this.#fd);
  }
  sizeBytes(): number {
    return fs.fstatSync(this.#fd).size;
  }
  close(): void {
    fs.closeSync(this.#fd);
  }
}

/**
 * Directories this process has locked (by real path). A LOCK file naming this process's own pid
 * but absent here is stale: left by an earlier process that had the same pid (pids are reused,
 * in containers especially).
 */
const lockedByThisProcess = new Set<string>();

/** Real files through node:fs (synchronous calls). */
export class NodeFileSystem implements LsmFileSystem {
  makeDirectory(path: string): void {
    fs.mkdirSync(path, { recursive: true });
  }
  list(directory: string): string[] {
    return fs.readdirSync(directory);
  }
  openRead(path: string): LsmFile {
    return new NodeFile(fs.openSync(path, 'r'));
  }
  create(path: string): LsmFile {
    return new NodeFile(fs.openSync(path, 'w'));
  }
  rename(from: string, to: string): void {
    fs.renameSync(from, to);
  }
  remove(path: string): void {
    fs.unlinkSync(path);
  }
  syncDirectory(path: string): void {
    const fd = fs.openSync(path, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  lock(directory: string): LsmLockResult {
    const realDirectory = fs.realpathSync(directory);
    const lockPath = join(realDirectory, LOCK_FILE);
    if (lockedByThisProcess.has(realDirectory)) {
      return { kind: 'held', holderPid: process.pid, thisProcess: true };
    }
    // The LOCK appears complete (pid inside) or not at all: write a private file, then hard-link
    // it into place, which fails if a LOCK exists. A half-written LOCK is never seen by a rival.
    const candidate = join(realDirectory, `${LOCK_FILE}.${process.pid}.${Date.now()}.tmp`);
    fs.writeFileSync(candidate, `${process.pid}\n`);
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          fs.linkSync(candidate, lockPath);
          lockedByThisProcess.add(realDirectory);
          let released = false;
          return {
            kind: 'acquired',
            release: () => {
              if (released) return;
              released = true;
              lockedByThisProcess.delete(realDirectory);
              try {
                fs.unlinkSync(lockPath);
              } catch {
                // Already gone (removed by hand): nothing to release.
              }
            },
          };
        } catch (error) {
          if (!isCode(error, 'EEXIST')) throw error;
        }
        const holderPid = readLockPid(lockPath);
        if (holderPid === undefined) continue; // vanished between link and read: try again
        if (holderPid !== process.pid && processIsAlive(holderPid)) {
          return { kind: 'held', holderPid, thisProcess: false };
        }
        // Stale: its process is gone. Move it aside (atomic; only one taker succeeds) and check
        // that what we moved is still the stale lock we judged, not a rival's fresh one.
        const aside = join(realDirectory, `${LOCK_FILE}.stale.${process.pid}.${attempt}`);
        try {
          fs.renameSync(lockPath, aside);
        } catch (error) {
          if (isCode(error, 'ENOENT')) continue;
          throw error;
        }
        const movedPid = readLockPid(aside);
        if (movedPid !== holderPid && movedPid !== undefined && processIsAlive(movedPid)) {
          // A rival took over between our read and our rename: give its lock back.
          try {
            fs.linkSync(aside, lockPath);
          } catch {
            // Someone else has locked meanwhile; the rival's lock is lost either way.
          }
          fs.unlinkSync(aside);
          return { kind: 'held', holderPid: movedPid, thisProcess: false };
        }
        fs.unlinkSync(aside);
      }
      throw new Error(`could not take the lock ${lockPath} after 5 attempts (contended)`);
    } finally {
      fs.rmSync(candidate, { force: true });
    }
  }
}

function readLockPid(path: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  const pid = Number.parseInt(text.trim(), 10);
  // Unreadable content cannot name a live holder (LOCKs appear complete): treat it as stale.
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
export function processIsAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isCode(error, 'EPERM');
  }
}

/** True when `error` is a Node system error with `code`. */
export function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
