/**
 * RESP2 encoding: replies the server writes (simple strings, errors, integers, bulk strings with
 * the null bulk, arrays with the null array), and commands as a client writes them (for tests,
 * benchmarks and any ipipe tool that talks to a Redis-protocol server).
 *
 *     +OK\r\n   -ERR msg\r\n   :42\r\n   $3\r\nabc\r\n   $-1\r\n   *2\r\n…   *-1\r\n
 *
 * `ReplyWriter` is the server's hot path. It encodes into a slab (a 16 KiB buffer) and hands out
 * views of the bytes written since the last flush, then carries on after them in the same slab:
 * no per-reply allocation, no copy at flush. A slab handed to the socket is never written again,
 * so a view stays valid until the socket is done with it; a fresh slab is taken when one fills.
 * A bulk value larger than `COPY_MAX_BYTES` is not copied at all: the writer queues the value's
 * own buffer between its header and trailer (a GET of a large value costs no copy here).
 *
 * Text in simple strings and errors is a byte string: one char per byte, written as latin1, so an
 * error can quote a client's bytes exactly. `toByteString` turns arbitrary JS text (an exception
 * message) into that form. \r and \n in such text become spaces, as Redis does for errors, since
 * they would end the line early.
 */

const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;

/** Slab size; also the largest reply header or text written in one piece. */
const SLAB_BYTES = 16 * 1024;
/** Bulk values up to this size are copied into the slab; larger ones are queued as they are. */
export const COPY_MAX_BYTES = 1024;
/** Decimal digits, sign and "\r\n" of any safe integer, plus a type byte. */
const MAX_INTEGER_LINE_BYTES = 24;

const NULL_BULK = Buffer.from('$-1\r\n', 'latin1');
const NULL_ARRAY = Buffer.from('*-1\r\n', 'latin1');

/** Turns JS text into a byte string (its UTF-8 bytes, one char each) for simple strings and errors. */
export function toByteString(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: checking for non-ASCII is the point
  return /^[\x00-\x7f]*$/.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}

/** A RESP2 value, for code that builds replies as data (tests, prebuilt replies). */
export type RespValue =
  | { readonly type: 'simple'; readonly value: string }
  | { readonly type: 'error'; readonly value: string }
  | { readonly type: 'integer'; readonly value: number }
  | { readonly type: 'bulk'; readonly value: Buffer | null }
  | { readonly type: 'array'; readonly value: readonly RespValue[] | null };

/** Where a writer's output goes: `write` returns false when the consumer wants it to slow down. */
export interface ByteSink {
  write(chunk: Buffer): boolean;
}

/** Encodes replies into reusable slabs; `flushTo` hands what was written to a socket. */
export class ReplyWriter {
  #slab: Buffer = Buffer.allocUnsafe(SLAB_BYTES);
  /** First byte of the slab not yet handed out. */
  #start = 0;
  /** Next byte to write. */
  #position = 0;
  /** Views handed out but not yet flushed, in order (sealed slab parts and large bulk values). */
  #segments: Buffer[] = [];
  #segmentBytes = 0;

  /** Bytes written and not yet flushed. */
  get pendingBytes(): number {
    return this.#segmentBytes + this.#position - this.#start;
  }

  /** `+text\r\n` (text is a byte string; \r and \n become spaces). */
  simple(text: string): void {
    this.#line(0x2b, text);
  }

  /** `-text\r\n`, e.g. `ERR unknown command` (text is a byte string; \r and \n become spaces). */
  error(text: string): void {
    this.#line(0x2d, text);
  }

  /** `:n\r\n` for a safe integer. */
  integer(value: number): void {
    this.#reserve(MAX_INTEGER_LINE_BYTES);
    this.#slab[this.#position++] = 0x3a;
    this.#decimalLine(value);
  }

  /** `$len\r\nbytes\r\n`, or `$-1\r\n` for null. */
  bulk(value: Buffer | null): void {
    if (value === null) {
      this.#copy(NULL_BULK);
      return;
    }
    const length = value.length;
    this.#reserve(MAX_INTEGER_LINE_BYTES + (length <= COPY_MAX_BYTES ? length + 2 : 0));
    const slab = this.#slab;
    slab[this.#position++] = 0x24;
    this.#decimalLine(length);
    if (length <= COPY_MAX_BYTES) {
      value.copy(slab, this.#position);
      this.#position += length;
      slab[this.#position++] = CR;
      slab[this.#position++] = LF;
      return;
    }
    // Large: the value's own buffer goes out between the header and the trailer.
    this.#seal();
    this.#segments.push(value);
    this.#segmentBytes += length;
    this.#reserve(2);
    this.#slab[this.#position++] = CR;
    this.#slab[this.#position++] = LF;
  }

  /** A bulk string from a byte string (latin1), e.g. INFO text or an echoed name. */
  bulkText(text: string): void {
    this.bulk(Buffer.from(text, 'latin1'));
  }

  /** `*n\r\n`: the caller writes the n elements next. */
  arrayHeader(count: number): void {
    this.#reserve(MAX_INTEGER_LINE_BYTES);
    this.#slab[this.#position++] = 0x2a;
    this.#decimalLine(count);
  }

  /** `*-1\r\n`. */
  nullArray(): void {
    this.#copy(NULL_ARRAY);
  }

  /** An array of bulk strings (MGET's reply). */
  bulkArray(values: readonly (Buffer | null)[]): void {
    this.arrayHeader(values.length);
    for (const value of values) this.bulk(value);
  }

  /** Bytes already encoded (a prebuilt reply such as COMMAND's table). */
  raw(bytes: Buffer): void {
    if (bytes.length <= COPY_MAX_BYTES) {
      this.#copy(bytes);
      return;
    }
    this.#seal();
    this.#segments.push(bytes);
    this.#segmentBytes += bytes.length;
  }

  /** Any value, recursively. */
  value(reply: RespValue): void {
    switch (reply.type) {
      case 'simple':
        this.simple(reply.value);
        return;
      case 'error':
        this.error(reply.value);
        return;
      case 'integer':
        this.integer(reply.value);
        return;
      case 'bulk':
        this.bulk(reply.value);
        return;
      case 'array':
        if (reply.value === null) {
          this.nullArray();
          return;
        }
        this.arrayHeader(reply.value.length);
        for (const element of reply.value) this.value(element);
        return;
    }
  }

  /**
   * Hands everything written since the last flush to `sink`, in order, and forgets it. Returns
   * false when the sink asked to slow down (a socket whose buffer is over its high-water mark).
   */
  flushTo(sink: ByteSink): boolean {
    this.#seal();
    const segments = this.#segments;
    let ok = true;
    for (let index = 0; index < segments.length; index++) {
      ok = sink.write(segments[index]!) && ok;
    }
    segments.length = 0;
    this.#segmentBytes = 0;
    return ok;
  }

  /** Everything written since the last flush, as one buffer (tests, prebuilt replies). */
  takeBytes(): Buffer {
    this.#seal();
    const joined = Buffer.concat(this.#segments, this.#segmentBytes);
    this.#segments.length = 0;
    this.#segmentBytes = 0;
    return joined;
  }

  #line(type: number, text: string): void {
    const length = text.length;
    this.#reserve(length + 3);
    const slab = this.#slab;
    slab[this.#position++] = type;
    const from = this.#position;
    slab.write(text, from, length, 'latin1');
    const to = from + length;
    for (let index = from; index < to; index++) {
      const byte = slab[index]!;
      if (byte === CR || byte === LF) slab[index] = SPACE;
    }
    slab[to] = CR;
    slab[to + 1] = LF;
    this.#position = to + 2;
  }

  /** Writes a safe integer and \r\n at the position (room already reserved). */
  #decimalLine(value: number): void {
    const slab = this.#slab;
    let position = this.#position;
    let magnitude = value;
    if (value < 0) {
      slab[position++] = 0x2d;
      magnitude = -value;
    }
    if (magnitude < 10) {
      slab[position++] = 0x30 + magnitude;
    } else {
      // Digits from the least significant end, then reversed in place.
      const first = position;
      while (magnitude > 0) {
        const next = Math.floor(magnitude / 10);
        slab[position++] = 0x30 + (magnitude - next * 10);
        magnitude = next;
      }
      for (let low = first, high = position - 1; low < high; low++, high--) {
        const byte = slab[low]!;
        slab[low] = slab[high]!;
        slab[high] = byte;
      }
    }
    slab[position++] = CR;
    slab[position++] = LF;
    this.#position = position;
  }

  #copy(bytes: Buffer): void {
    this.#reserve(bytes.length);
    bytes.copy(this.#slab, this.#position);
    this.#position += bytes.length;
  }

  /** Ensures `bytes` of room, taking a fresh slab (never reusing one handed out) when short. */
  #reserve(bytes: number): void {
    if (this.#slab.length - this.#position >= bytes) return;
    this.#seal();
    this.#slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, bytes));
    this.#start = 0;
    this.#position = 0;
  }

  /** Turns the bytes written since the last seal into a segment. */
  #seal(): void {
    if (this.#position === this.#start) return;
    this.#segments.push(this.#slab.subarray(this.#start, this.#position));
    this.#segmentBytes += this.#position - this.#start;
    this.#start = this.#position;
  }
}

/** One value as bytes (tests and prebuilt replies; the server streams through a `ReplyWriter`). */
export function encodeValue(reply: RespValue): Buffer {
  const writer = new ReplyWriter();
  writer.value(reply);
  return writer.takeBytes();
}

/** A command as clients send it: an array of bulk strings (strings are encoded as UTF-8). */
export function encodeCommand(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`, 'latin1')];
  for (const arg of args) {
    const bytes = typeof arg === 'string' ? Buffer.from(arg, 'utf8') : arg;
    parts.push(Buffer.from(`$${bytes.length}\r\n`, 'latin1'), bytes, Buffer.from('\r\n', 'latin1'));
  }
  return Buffer.concat(parts);
}
