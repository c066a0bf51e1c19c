/**
 * SCAN cursors for the RESP front's backends (issue 5's SCAN; Redis's `SCAN cursor [MATCH p]
 * [COUNT n]`). Redis clients treat the cursor as an unsigned 64-bit decimal (`redis-cli --scan`
 * parses it with strtoull and stops at 0), but a scan of RKV continues from a key — up to 64
 * bytes, which no 64-bit number holds. So a backend keeps the continuation key here and hands the
 * client a number that names it: opaque, as Redis's own cursors are. "0" starts a scan and ends
 * one. The table keeps the newest MAX_OPEN_SCAN_CURSORS continuations; an older cursor is refused
 * (`ScanCursorExpiredError`: restart the scan from 0) rather than silently restarted, and one this
 * front never gave is refused too (`BackendUnsupportedError`).
 */

import { BackendUnsupportedError, ScanCursorExpiredError } from './errors.ts';

/** Continuations kept per backend: far more than the scans a front runs at once. */
export const MAX_OPEN_SCAN_CURSORS = 4096;

const START = new Uint8Array(0);

/** The table of open cursors of one backend. */
export class ScanCursors {
  readonly #open = new Map<string, Uint8Array>();
  #next = 1n;

  /** The key a cursor continues from (empty for "0"); throws for an unknown or expired cursor. */
  resume(cursor: string): Uint8Array {
    if (cursor === '0') return START;
    const key = this.#open.get(cursor);
    if (key === undefined) {
      // Cursors are numbered in order: one below the next number was given here, and evicted.
      if (/^[1-9][0-9]*$/.test(cursor) && BigInt(cursor) < this.#next)
        throw new ScanCursorExpiredError(cursor, MAX_OPEN_SCAN_CURSORS);
      throw new BackendUnsupportedError(
        `invalid SCAN cursor ${cursor}: this front never gave it; start the scan again from cursor 0`,
      );
    }
    return key;
  }

  /** A new cursor for a scan that continues at `key`; "0" when `key` is null (the scan is done). */
  open(key: Uint8Array | null): string {
    if (key === null) return '0';
    const cursor = String(this.#next++);
    this.#open.set(cursor, key.slice());
    if (this.#open.size > MAX_OPEN_SCAN_CURSORS) {
      const [oldest] = this.#open.keys();
      if (oldest !== undefined) this.#open.delete(oldest);
    }
    return cursor;
  }
}
