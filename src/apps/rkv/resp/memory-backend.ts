/**
 * An in-memory `KvBackend`: one `Map`, no replication. The RESP front's tests and its benchmark
 * use it, so the front can be measured against `redis-server` without a Paxos round in the way,
 * and it is the reference the replicated backend's answers are compared with.
 *
 * It is asynchronous like every backend (each call resolves a promise), so the front's ordering
 * and queueing are exercised exactly as behind the real store.
 */

import type { InfoFields, KvBackend, KvBackendInfo, KvScanPage, SetCondition } from './backend.ts';
import { ScanCursors } from './scan-cursors.ts';

/** Options of `MemoryKvBackend`. */
export interface MemoryKvBackendOptions {
  /** INFO's role (default `standalone`). */
  readonly role?: KvBackendInfo['role'];
  /** Extra `# Ipipe` INFO lines. */
  readonly ipipe?: InfoFields;
}

/**
 * Keys are held as latin1 strings (one char per byte, so any binary key maps 1:1 and compares by
 * bytes); values are copied on SET because the front hands out views of socket buffers.
 */
export class MemoryKvBackend implements KvBackend {
  readonly #entries = new Map<string, Buffer>();
  readonly #role: KvBackendInfo['role'];
  readonly #ipipe: InfoFields;
  readonly #cursors = new ScanCursors();

  constructor(options: MemoryKvBackendOptions = {}) {
    this.#role = options.role ?? 'standalone';
    this.#ipipe = options.ipipe ?? [];
  }

  /** Number of keys, synchronously (tests). */
  get size(): number {
    return this.#entries.size;
  }

  get(key: Buffer): Promise<Buffer | null> {
    return Promise.resolve(this.#entries.get(key.toString('latin1')) ?? null);
  }

  set(key: Buffer, value: Buffer, condition: SetCondition): Promise<boolean> {
    const name = key.toString('latin1');
    if (condition !== 'always' && this.#entries.has(name) !== (condition === 'if-present')) {
      return Promise.resolve(false);
    }
    this.#entries.set(name, Buffer.from(value));
    return Promise.resolve(true);
  }

  del(keys: readonly Buffer[]): Promise<number> {
    let deleted = 0;
    for (const key of keys) if (this.#entries.delete(key.toString('latin1'))) deleted++;
    return Promise.resolve(deleted);
  }

  exists(keys: readonly Buffer[]): Promise<number> {
    let found = 0;
    for (const key of keys) if (this.#entries.has(key.toString('latin1'))) found++;
    return Promise.resolve(found);
  }

  mget(keys: readonly Buffer[]): Promise<ReadonlyArray<Buffer | null>> {
    const values = new Array<Buffer | null>(keys.length);
    for (let index = 0; index < keys.length; index++) {
      values[index] = this.#entries.get(keys[index]!.toString('latin1')) ?? null;
    }
    return Promise.resolve(values);
  }

  dbsize(): Promise<number> {
    return Promise.resolve(this.#entries.size);
  }

  /**
   * SCAN: `count` keys from the cursor's key in byte order (a sort of every key per page: a test
   * backend); keys written meanwhile behind the cursor are not seen, as with any ordered scan.
   */
  scan(cursor: string, count: number): Promise<KvScanPage> {
    const from = Buffer.from(this.#cursors.resume(cursor)).toString('latin1');
    const names = [...this.#entries.keys()].filter((name) => name >= from).sort();
    const page = names.slice(0, count);
    const next = names[count];
    return Promise.resolve({
      cursor: this.#cursors.open(next === undefined ? null : Buffer.from(next, 'latin1')),
      keys: page.map((name) => Buffer.from(name, 'latin1')),
    });
  }

  info(): Promise<KvBackendInfo> {
    return Promise.resolve({
      role: this.#role,
      ipipe: [['ipipe_backend', 'memory'], ...this.#ipipe],
    });
  }
}
