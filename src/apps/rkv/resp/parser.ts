/**
 * Streaming RESP2 request parser: what a Redis client sends, turned into commands (arrays of byte
 * strings) as bytes arrive (issue 5, §2 "a Redis-protocol front" and §6 "malformed RESP").
 *
 * Two request forms, chosen by a command's first byte, as in Redis:
 *
 *     *3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n      an array of bulk strings (every client library)
 *     SET k v\r\n                                    an inline command (telnet; see inline.ts)
 *
 * Streaming. `push(chunk)` takes whatever TCP delivered: many pipelined commands in one chunk, or
 * one command split across chunks at any byte (inside a length, between \r and \n, inside a bulk).
 * The state machine below keeps exactly what it needs between chunks: the state, the number being
 * read, the arguments of the command so far, and the pieces of a bulk string not yet complete.
 *
 *     START ─'*'─▶ COUNT ─\r─▶ COUNT_LF ─\n─▶ BULK_DOLLAR ─'$'─▶ BULK_LENGTH ─\r─▶ BULK_LENGTH_LF
 *       │                        │ n ≤ 0: empty, skipped       ▲                      │ \n
 *       │ other byte             ▼                             │ more arguments       ▼
 *       └──────────▶ INLINE    (START)              BULK_LF ◀─\r── BULK_CR ◀── BULK_DATA (length bytes)
 *                    (to \n)                          │ \n, last argument: emit the command, START
 *
 * Zero-copy where it matters: a bulk string wholly inside the chunk is handed out as a view
 * (`subarray`) of that chunk — no copy. Node gives every socket read its own exactly-sized
 * buffer, so a view pins only bytes that arrived on the wire. A bulk split across chunks is kept
 * as views of its pieces and joined once, when its last byte arrives. No per-byte allocation:
 * numbers are accumulated digit by digit into fields.
 *
 * Malformed input is an expected outcome, not an exception: `push` returns a `ProtocolViolation`
 * (a reason for the counters and the text of the `-ERR Protocol error: …` reply) and the parser
 * stays failed; nothing input can do makes it throw. Messages follow Redis's where Redis has one.
 *
 * Stricter than Redis in one respect, on purpose: Redis skips the two bytes after a bulk string
 * and after a header's \r without looking at them; here they must be \r\n, so a client that
 * miscounts a length is stopped at once instead of having its next bytes read as a command.
 */

import { splitInlineArguments as splitInline } from './inline.ts';
import type { RespLimits } from './limits.ts';

/** Why the parser gave up on a connection's input; one counter per reason in the server's stats. */
export type ProtocolViolationReason =
  /** `*<n>` where n is not an integer (Redis: "invalid multibulk length"). */
  | 'invalid-array-length'
  /** `*<n>` with n above `maxArrayLength`. */
  | 'array-too-long'
  /** An array element that is not a bulk string (Redis: "expected '$', got 'x'"). */
  | 'expected-bulk'
  /** `$<n>` where n is not a non-negative integer (Redis: "invalid bulk length"). */
  | 'invalid-bulk-length'
  /** `$<n>` with n above `maxBulkBytes`. */
  | 'bulk-too-long'
  /** A header line or a bulk string not followed by \r\n. */
  | 'missing-crlf'
  /** An inline line longer than `maxInlineBytes` (Redis: "too big inline request"). */
  | 'inline-too-long'
  /** An inline line with an unterminated quote (Redis: "unbalanced quotes in request"). */
  | 'unbalanced-quotes'
  /** One command would hold more than `maxPendingBytes` (Redis: client-query-buffer-limit). */
  | 'pending-too-large';

/** Every reason, for counters that start at zero. */
export const PROTOCOL_VIOLATION_REASONS: readonly ProtocolViolationReason[] = [
  'invalid-array-length',
  'array-too-long',
  'expected-bulk',
  'invalid-bulk-length',
  'bulk-too-long',
  'missing-crlf',
  'inline-too-long',
  'unbalanced-quotes',
  'pending-too-large',
];

/** Malformed input: the reason, and the error text to send (`Protocol error: …`, without `ERR `). */
export interface ProtocolViolation {
  readonly reason: ProtocolViolationReason;
  /** Bytes of the text as a latin1 string (it may quote a byte of the input). */
  readonly message: string;
}

/** Receives each complete command; `args[0]` is the command name. The array is the caller's to keep. */
export type RespCommandHandler = (args: Buffer[]) => void;

/** The parser's limits (a subset of `RespLimits`). */
export type RespParserLimits = Pick<
  RespLimits,
  'maxBulkBytes' | 'maxArrayLength' | 'maxInlineBytes' | 'maxPendingBytes'
>;

const CR = 0x0d;
const LF = 0x0a;
const STAR = 0x2a;
const DOLLAR = 0x24;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

// States (numbers, not strings: the switch below runs once per header byte).
const START = 0;
const COUNT = 1;
const COUNT_LF = 2;
const BULK_DOLLAR = 3;
const BULK_LENGTH = 4;
const BULK_LENGTH_LF = 5;
const BULK_DATA = 6;
const BULK_CR = 7;
const BULK_LF = 8;
const INLINE = 9;
const FAILED = 10;
const HALTED = 11;

/**
 * Digits beyond this make a length no limit can allow (limits are safe integers, < 2^53, 16 digits);
 * stopping there keeps the accumulator exact and rejects `*99999…` without waiting for its \r.
 */
const MAX_LENGTH_DIGITS = 16;

const EMPTY_CHUNKS: Buffer[] = [];

/**
 * One connection's parser. Feed it every chunk in order; it calls `onCommand` for each complete
 * command, synchronously, in order, and returns `null` — or the violation that stopped it.
 */
export class RespParser {
  readonly #onCommand: RespCommandHandler;
  readonly #maxBulkBytes: number;
  readonly #maxArrayLength: number;
  readonly #maxInlineBytes: number;
  readonly #maxPendingBytes: number;

  #state = START;
  #violation: ProtocolViolation | null = null;

  // The number being read (an array count or a bulk length), digit by digit.
  #number = 0;
  #numberDigits = 0;
  #numberNegative = false;
  #numberInvalid = false;

  // The command being assembled.
  #args: Buffer[] = EMPTY_CHUNKS;
  #argCount = 0;
  #argIndex = 0;
  // Wire bytes of the current command that arrived in earlier chunks (for maxPendingBytes).
  #pendingBytes = 0;

  // A bulk string (or an inline line) that spans chunks: views of its pieces, joined at the end.
  #bulkRemaining = 0;
  #pieces: Buffer[] = [];
  #piecesBytes = 0;

  constructor(limits: RespParserLimits, onCommand: RespCommandHandler) {
    this.#onCommand = onCommand;
    this.#maxBulkBytes = limits.maxBulkBytes;
    this.#maxArrayLength = limits.maxArrayLength;
    this.#maxInlineBytes = limits.maxInlineBytes;
    this.#maxPendingBytes = limits.maxPendingBytes;
  }

  /** The violation that stopped the parser, if one did. */
  get violation(): ProtocolViolation | null {
    return this.#violation;
  }

  /** True between commands: no partial command is held. */
  get idle(): boolean {
    return this.#state === START;
  }

  /**
   * Stops parsing for good (after QUIT, or when the server shuts a connection): the rest of the
   * current chunk and every later chunk are ignored. Safe to call from inside `onCommand`.
   */
  halt(): void {
    if (this.#state !== FAILED) this.#state = HALTED;
    this.#args = EMPTY_CHUNKS;
    this.#pieces = [];
  }

  /** Parses a chunk. Returns `null`, or the violation (now or earlier) that stopped the parser. */
  push(chunk: Buffer): ProtocolViolation | null {
    const end = chunk.length;
    let i = 0;
    // Where the current command began in this chunk (0 when it began in an earlier one).
    let commandStart = 0;
    while (i < end) {
      switch (this.#state) {
        case START: {
          commandStart = i;
          this.#pendingBytes = 0;
          if (chunk[i] === STAR) {
            this.#startNumber();
            this.#state = COUNT;
            i++;
          } else {
            this.#state = INLINE;
          }
          break;
        }

        case COUNT:
        case BULK_LENGTH: {
          // Header digits up to \r; anything else fails at once (Redis would wait for the \r).
          while (i < end) {
            const byte = chunk[i]!;
            i++;
            if (byte === CR) {
              this.#state = this.#state === COUNT ? COUNT_LF : BULK_LENGTH_LF;
              break;
            }
            this.#addDigit(byte);
            if (this.#numberInvalid) {
              return this.#state === COUNT
                ? this.#fail('invalid-array-length', 'invalid multibulk length')
                : this.#fail('invalid-bulk-length', 'invalid bulk length');
            }
          }
          break;
        }

        case COUNT_LF: {
          if (chunk[i] !== LF) return this.#fail('missing-crlf', 'expected \\r\\n after the array length');
          i++;
          if (this.#numberInvalid || this.#numberDigits === 0) {
            return this.#fail('invalid-array-length', 'invalid multibulk length');
          }
          const count = this.#numberNegative ? -this.#number : this.#number;
          if (count <= 0) {
            // `*0` and `*-1` are empty commands: Redis skips them, and so do we.
            this.#state = START;
            break;
          }
          if (count > this.#maxArrayLength) {
            return this.#fail(
              'array-too-long',
              `multibulk length ${count} exceeds the limit of ${this.#maxArrayLength} (maxArrayLength)`,
            );
          }
          this.#args = new Array<Buffer>(count);
          this.#argCount = count;
          this.#argIndex = 0;
          this.#state = BULK_DOLLAR;
          break;
        }

        case BULK_DOLLAR: {
          const byte = chunk[i]!;
          if (byte !== DOLLAR) {
            // Redis quotes the byte as is, with \r and \n turned into spaces.
            const shown = byte === CR || byte === LF ? ' ' : String.fromCharCode(byte);
            return this.#fail('expected-bulk', `expected '$', got '${shown}'`);
          }
          i++;
          this.#startNumber();
          this.#state = BULK_LENGTH;
          break;
        }

        case BULK_LENGTH_LF: {
          if (chunk[i] !== LF) return this.#fail('missing-crlf', 'expected \\r\\n after the bulk length');
          i++;
          if (this.#numberInvalid || this.#numberDigits === 0 || this.#numberNegative) {
            return this.#fail('invalid-bulk-length', 'invalid bulk length');
          }
          const length = this.#number;
          if (length > this.#maxBulkBytes) {
            return this.#fail(
              'bulk-too-long',
              `bulk length ${length} exceeds the limit of ${this.#maxBulkBytes} bytes (maxBulkBytes)`,
            );
          }
          // Refuse now what would overflow the budget, before the client sends it.
          if (this.#pendingBytes + (i - commandStart) + length + 2 > this.#maxPendingBytes) {
            return this.#fail(
              'pending-too-large',
              `command exceeds the limit of ${this.#maxPendingBytes} bytes (maxPendingBytes)`,
            );
          }
          // Fast path: the bulk string and its \r\n are all here — a view, no copy.
          if (end - i >= length + 2) {
            if (chunk[i + length] !== CR || chunk[i + length + 1] !== LF) {
              return this.#fail('missing-crlf', 'expected \\r\\n after the bulk string');
            }
            const arg = chunk.subarray(i, i + length);
            i += length + 2;
            if (this.#completeArgument(arg)) commandStart = i;
            break;
          }
          this.#bulkRemaining = length;
          this.#state = length === 0 ? BULK_CR : BULK_DATA;
          break;
        }

        case BULK_DATA: {
          const take = Math.min(end - i, this.#bulkRemaining);
          this.#pieces.push(chunk.subarray(i, i + take));
          this.#piecesBytes += take;
          this.#bulkRemaining -= take;
          i += take;
          if (this.#bulkRemaining === 0) this.#state = BULK_CR;
          break;
        }

        case BULK_CR: {
          if (chunk[i] !== CR) return this.#fail('missing-crlf', 'expected \\r\\n after the bulk string');
          i++;
          this.#state = BULK_LF;
          break;
        }

        case BULK_LF: {
          if (chunk[i] !== LF) return this.#fail('missing-crlf', 'expected \\r\\n after the bulk string');
          i++;
          if (this.#completeArgument(this.#joinPieces())) commandStart = i;
          break;
        }

        case INLINE: {
          const newline = chunk.indexOf(LF, i);
          const stop = newline === -1 ? end : newline;
          if (this.#piecesBytes + (stop - i) > this.#maxInlineBytes) {
            return this.#fail('inline-too-long', 'too big inline request');
          }
          if (stop > i) {
            this.#pieces.push(chunk.subarray(i, stop));
            this.#piecesBytes += stop - i;
          }
          if (newline === -1) {
            i = end;
            break;
          }
          i = newline + 1;
          commandStart = i;
          let line = this.#joinPieces();
          if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
          this.#state = START;
          const args = splitInline(line);
          if (args === null) return this.#fail('unbalanced-quotes', 'unbalanced quotes in request');
          if (args.length > 0) this.#onCommand(args);
          break;
        }

        case FAILED:
          return this.#violation;

        default:
          // HALTED: drop everything.
          return null;
      }
    }
    // A command still open at the end of the chunk: its bytes here count against the budget.
    if (this.#state !== START) this.#pendingBytes += end - commandStart;
    return this.#state === FAILED ? this.#violation : null;
  }

  /** Stores one argument; emits the command when it was the last. Returns true when emitted. */
  #completeArgument(arg: Buffer): boolean {
    this.#args[this.#argIndex++] = arg;
    if (this.#argIndex < this.#argCount) {
      this.#state = BULK_DOLLAR;
      return false;
    }
    const args = this.#args;
    this.#args = EMPTY_CHUNKS;
    this.#state = START;
    this.#onCommand(args);
    return true;
  }

  #joinPieces(): Buffer {
    const pieces = this.#pieces;
    const joined =
      pieces.length === 1
        ? pieces[0]!
        : pieces.length === 0
          ? Buffer.alloc(0)
          : Buffer.concat(pieces, this.#piecesBytes);
    pieces.length = 0;
    this.#piecesBytes = 0;
    return joined;
  }

  #startNumber(): void {
    this.#number = 0;
    this.#numberDigits = 0;
    this.#numberNegative = false;
    this.#numberInvalid = false;
  }

  /**
   * One byte of a length, with Redis's `string2ll` rules: an optional leading '-', then digits
   * with no leading zero (only "0" itself may start with 0).
   */
  #addDigit(byte: number): void {
    if (byte === MINUS && this.#numberDigits === 0 && !this.#numberNegative) {
      this.#numberNegative = true;
      return;
    }
    if (byte < ZERO || byte > NINE) {
      this.#numberInvalid = true;
      return;
    }
    if (this.#numberDigits > 0 && this.#number === 0) {
      this.#numberInvalid = true; // "00", "01", "-0…"
      return;
    }
    if (this.#numberDigits === 0 && byte === ZERO && this.#numberNegative) {
      this.#numberInvalid = true; // "-0"
      return;
    }
    this.#numberDigits++;
    if (this.#numberDigits > MAX_LENGTH_DIGITS) {
      this.#numberInvalid = true;
      return;
    }
    this.#number = this.#number * 10 + (byte - ZERO);
  }

  #fail(reason: ProtocolViolationReason, detail: string): ProtocolViolation {
    this.#violation = { reason, message: `Protocol error: ${detail}` };
    this.#state = FAILED;
    this.#args = EMPTY_CHUNKS;
    this.#pieces = [];
    this.#piecesBytes = 0;
    return this.#violation;
  }
}
