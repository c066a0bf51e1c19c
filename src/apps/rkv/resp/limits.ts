/**
 * The limits of the RESP front, their defaults, and their validation (issue 5, §6 "bad input").
 *
 * Two layers, on purpose:
 *   - protocol limits (`maxBulkBytes`, `maxArrayLength`, `maxInlineBytes`, `maxPendingBytes`)
 *     guard the parser: breaking one is a protocol error — `-ERR Protocol error: …` and the
 *     connection closed, as Redis does — because past them the byte stream cannot be trusted or
 *     costs too much memory to follow;
 *   - command limits (`maxKeyBytes`, `maxValueBytes`) are what the store accepts: breaking one
 *     gets a plain `-ERR` reply for that command and the connection goes on. They sit below the
 *     protocol limits so an oversized value is refused cleanly rather than dropping the client.
 * The last three bound resources, not input: connections (Redis's `maxclients`), and commands
 * awaiting the backend per connection (past it the server stops reading that socket until replies
 * drain — back-pressure, not an error).
 */

import { RespLimitsError } from './errors.ts';

/** Every limit, resolved. See `DEFAULT_RESP_LIMITS` for the defaults and why. */
export interface RespLimits {
  /** Longest bulk string (`$<n>`) the parser accepts, in bytes. Redis: proto-max-bulk-len. */
  readonly maxBulkBytes: number;
  /** Most elements in one command array (`*<n>`). */
  readonly maxArrayLength: number;
  /** Longest inline command line (typed into telnet), in bytes. Redis: 64 KiB. */
  readonly maxInlineBytes: number;
  /**
   * Most bytes of one not-yet-complete command a connection may hold (counted as they arrive on
   * the wire, headers included). Redis: client-query-buffer-limit. Checked as soon as a bulk
   * header announces its length, so a client cannot make the server wait for bytes it will refuse.
   */
  readonly maxPendingBytes: number;
  /** Longest key a command may name, in bytes: longer gets `-ERR key … exceeds …`. */
  readonly maxKeyBytes: number;
  /** Longest value SET may store, in bytes: longer gets `-ERR value … exceeds …`. */
  readonly maxValueBytes: number;
  /** Most open client connections; one more is told `-ERR max number of clients reached`. */
  readonly maxConnections: number;
  /** Commands of one connection awaiting the backend before the server stops reading it. */
  readonly maxInflightCommands: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * The defaults. Redis's own are larger (512 MiB bulks, a 1 GiB query buffer, keys as large as
 * values); RKV keeps a shard's memtable in SmartNIC memory (the paper uses 16-byte keys and values
 * up to 1 KiB), so values are capped at 1 MiB, like memcached's default item size, and keys at
 * 4 KiB. A 16 MiB bulk ceiling leaves room to refuse an oversized value with a clean `-ERR`.
 */
export const DEFAULT_RESP_LIMITS: RespLimits = Object.freeze({
  maxBulkBytes: 16 * MIB,
  maxArrayLength: 65_536,
  maxInlineBytes: 64 * KIB,
  maxPendingBytes: 32 * MIB,
  maxKeyBytes: 4 * KIB,
  maxValueBytes: 1 * MIB,
  maxConnections: 10_000,
  maxInflightCommands: 1024,
});

/** Caller's overrides; every key optional. */
export type RespLimitsInput = { readonly [K in keyof RespLimits]?: number };

const NAMES = Object.keys(DEFAULT_RESP_LIMITS) as (keyof RespLimits)[];

/**
 * Fills defaults and checks the result: each limit a positive safe integer, and the layers in
 * order (a key or value the store accepts must fit in a bulk, and a bulk in the pending budget).
 * Throws `RespLimitsError` naming the limit at fault.
 */
export function resolveRespLimits(input: RespLimitsInput = {}): RespLimits {
  for (const name of Object.keys(input)) {
    if (!(NAMES as string[]).includes(name)) {
      throw new RespLimitsError(name, `unknown limit; the limits are ${NAMES.join(', ')}`);
    }
  }
  const limits: RespLimits = { ...DEFAULT_RESP_LIMITS, ...input };
  for (const name of NAMES) {
    const value = limits[name];
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RespLimitsError(name, `must be a positive integer, got ${String(value)}`);
    }
  }
  const order: [keyof RespLimits, keyof RespLimits][] = [
    ['maxKeyBytes', 'maxBulkBytes'],
    ['maxValueBytes', 'maxBulkBytes'],
    ['maxBulkBytes', 'maxPendingBytes'],
    ['maxInlineBytes', 'maxPendingBytes'],
  ];
  for (const [small, large] of order) {
    if (limits[small] > limits[large]) {
      throw new RespLimitsError(
        small,
        `${limits[small]} exceeds ${large} (${limits[large]}): raise ${large} or lower ${small}`,
      );
    }
  }
  return Object.freeze(limits);
}
