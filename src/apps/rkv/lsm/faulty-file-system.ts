/**
 * `FaultyFileSystem`: wraps any `LsmFileSystem` and makes its k-th mutating call (create, write,
 * sync, rename, remove, syncDirectory) fail — the LSM engine's crash tests on real files.
 *
 * With `fault: 'crash'` the call throws `SimulatedCrash` and so does every call after it, as if
 * the process had died there; `revive()` then releases the locks taken through this wrapper (the
 * OS would have) and lets a new store open the directory. What was written stays on disk, so this
 * is the "process crash" model; `MemoryFileSystem` adds power loss.
 *
 * With `fault: 'error'` only the k-th call throws an EIO-like system error and later calls work,
 * which is how a full disk or a flaky device looks to the engine: it must fail the operation
 * cleanly and keep serving.
 */

import type { LsmFile, LsmFileSystem, LsmLockResult } from './file-system.ts';
import { SimulatedCrash } from './memory-file-system.ts';

/** How the injected fault behaves. */
export type FaultKind = 'crash' | 'error';

/** A filesystem wrapper that fails its k-th mutating call. */
export class FaultyFileSystem implements LsmFileSystem {
  readonly #inner: LsmFileSystem;
  readonly #releases: (() => void)[] = [];
  #dead = false;
  /** Mutating calls so far. */
  mutatingOperations = 0;
  /** When set, the mutating call with this number (1-based) fails. */
  failAtOperation: number | undefined = undefined;
  fault: FaultKind = 'crash';

  constructor(inner: LsmFileSystem) {
    this.#inner = inner;
  }

  /** After a 'crash' fault: releases the dead "process's" locks and accepts calls again. */
  revive(): void {
    this.#dead = false;
    this.failAtOperation = undefined;
    for (const release of this.#releases.splice(0)) release();
  }

  makeDirectory(path: string): void {
    this.#alive('makeDirectory');
    this.#inner.makeDirectory(path);
  }
  list(directory: string): string[] {
    this.#alive('list');
    return this.#inner.list(directory);
  }
  openRead(path: string): LsmFile {
    this.#alive('openRead');
    return this.#wrap(this.#inner.openRead(path), path);
  }
  create(path: string): LsmFile {
    this.#mutate(`create ${path}`);
    return this.#wrap(this.#inner.create(path), path);
  }
  rename(from: string, to: string): void {
    this.#mutate(`rename ${from}`);
    this.#inner.rename(from, to);
  }
  remove(path: string): void {
    this.#mutate(`remove ${path}`);
    this.#inner.remove(path);
  }
  syncDirectory(path: string): void {
    this.#mutate(`syncDirectory ${path}`);
    this.#inner.syncDirectory(path);
  }
  lock(directory: string): LsmLockResult {
    this.#alive('lock');
    const result = this.#inner.lock(directory);
    if (result.kind === 'acquired') this.#releases.push(result.release);
    return result;
  }

  #alive(operation: string): void {
    if (this.#dead) throw new SimulatedCrash(`${operation} after the crash`);
  }

  #mutate(operation: string): void {
    this.#alive(operation);
    this.mutatingOperations++;
    if (this.failAtOperation === undefined || this.mutatingOperations !== this.failAtOperation) return;
    if (this.fault === 'crash') {
      this.#dead = true;
      throw new SimulatedCrash(operation);
    }
    throw Object.assign(new Error(`EIO: injected I/O error, ${operation}`), { code: 'EIO' });
  }

  #wrap(file: LsmFile, path: string): LsmFile {
    return {
      read: (target, offset, length, position) => {
        this.#alive(`read ${path}`);
        return file.read(target, offset, length, position);
      },
      write: (source, offset, length, position) => {
        this.#mutate(`write ${path}`);
        file.write(source, offset, length, position);
      },
      sync: () => {
        this.#mutate(`sync ${path}`);
        file.sync();
      },
      sizeBytes: () => file.sizeBytes(),
      // Closing is allowed even when "dead": it stands for the OS closing a dead process's files.
      close: () => file.close(),
    };
  }
}
