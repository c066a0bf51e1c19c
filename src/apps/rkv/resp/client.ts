/**
 * A small RESP2 client: what `ipipe load --app rkv` drives an RKV cluster with, and what the live
 * cluster tests talk to replicas through. One TCP connection, commands pipelined and answered in
 * order, every command outstanding rejected with a `RespClientError` when the connection dies (a
 * killed replica) or a reply is late. Requests go out through the front's own `encodeCommand`;
 * replies are decoded here, apart from the server's encoder, so the two check each other.
 */

import net from 'node:net';
import { encodeCommand } from './encoder.ts';
import { RespClientError } from './errors.ts';

/** A decoded reply: simple and bulk strings as strings (UTF-8), errors as `{ error }`, nil as null. */
export type RespReply = string | number | null | { readonly error: string } | RespReply[];

export interface RespClientOptions {
  readonly host?: string;
  /**
   * A command unanswered this long fails with `RespClientError` ('timeout') and the connection is
   * closed (replies come in order, so a late one could not be matched any more). Default: none.
   */
  readonly timeoutMs?: number;
}

interface Waiter {
  readonly resolve: (reply: RespReply) => void;
  readonly reject: (error: Error) => void;
  readonly sentAt: number;
}

/** Thrown inside the decoder; turned into a 'protocol' failure of the connection. */
class NotResp extends Error {}

/** One reply starting at `at`, or null when `bytes` does not hold all of it yet. */
function decodeReply(bytes: Buffer, at: number): { value: RespReply; end: number } | null {
  if (at >= bytes.length) return null;
  const cr = bytes.indexOf('\r\n', at + 1, 'latin1');
  if (cr === -1) return null;
  const type = bytes[at];
  const line = bytes.toString('latin1', at + 1, cr);
  const next = cr + 2;
  switch (type) {
    case 0x2b /* + */:
      return { value: line, end: next };
    case 0x2d /* - */:
      return { value: { error: line }, end: next };
    case 0x3a /* : */:
      {
        const value = Number(line);
        if (!Number.isFinite(value)) throw new NotResp(`integer reply ${JSON.stringify(line)}`);
        return { value, end: next };
      }
    case 0x24 /* $ */:
      {
        const length = Number(line);
        if (length === -1) return { value: null, end: next };
        if (!(Number.isSafeInteger(length) && length >= 0))
          throw new NotResp(`bulk length ${JSON.stringify(line)}`);
        if (bytes.length < next + length + 2) return null;
        return { value: bytes.toString('utf8', next, next + length), end: next + length + 2 };
      }
    case 0x2a /* * */:
      {
        const count = Number(line);
        if (count === -1) return { value: null, end: next };
        if (!(Number.isSafeInteger(count) && count >= 0))
          throw new NotResp(`array length ${JSON.stringify(line)}`);
        const items: RespReply[] = [];
        let position = next;
        for (let index = 0; index < count; index++) {
          const item = decodeReply(bytes, position);
          if (item === null) return null;
          items.push(item.value);
          position = item.end;
        }
        return { value: items, end: position };
      }
    default:
      throw new NotResp(`reply starting ${JSON.stringify(bytes.toString('latin1', at, at + 24))}`);
  }
}

export class RespClient {
  readonly #socket: net.Socket;
  readonly #endpoint: string;
  readonly #timeoutMs: number | undefined;
  readonly #waiting: Waiter[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  private constructor(socket: net.Socket, endpoint: string, timeoutMs: number | undefined) {
    this.#socket = socket;
    this.#endpoint = endpoint;
    this.#timeoutMs = timeoutMs;
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) =>
      this.#fail(new RespClientError('closed', endpoint, error.message, { cause: error })),
    );
    socket.on('close', () => this.#fail(new RespClientError('closed', endpoint, 'connection closed')));
  }

  /** Connects; rejects with `RespClientError` ('connect') when nothing answers there. */
  static connect(port: number, options: RespClientOptions = {}): Promise<RespClient> {
    const host = options.host ?? '127.0.0.1';
    const endpoint = `${host}:${port}`;
    const timeoutMs = options.timeoutMs;
    if (timeoutMs !== undefined && !(timeoutMs > 0)) {
      throw new RangeError(`RespClient timeoutMs must be > 0, got ${timeoutMs}`);
    }
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host, noDelay: true });
      const refused = (error: Error) =>
        reject(new RespClientError('connect', endpoint, error.message, { cause: error }));
      socket.once('error', refused);
      socket.once('connect', () => {
        socket.off('error', refused);
        resolve(new RespClient(socket, endpoint, timeoutMs));
      });
    });
  }

  /** `host:port` as connected. */
  get endpoint(): string {
    return this.#endpoint;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Commands sent and not answered yet. */
  get pending(): number {
    return this.#waiting.length;
  }

  /** Sends one command; resolves with its reply (an error reply resolves as `{ error }`). */
  command(...args: readonly (string | Buffer)[]): Promise<RespReply> {
    if (this.#closed) {
      return Promise.reject(new RespClientError('closed', this.#endpoint, 'the client is closed'));
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject, sentAt: performance.now() });
      this.#socket.write(encodeCommand(args));
      if (this.#timeoutMs !== undefined && this.#timer === undefined) this.#armTimer();
    });
  }

  close(): void {
    this.#fail(new RespClientError('closed', this.#endpoint, 'closed by the client'));
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    let used = 0;
    try {
      for (;;) {
        const decoded = decodeReply(this.#buffer, used);
        if (decoded === null) break;
        used = decoded.end;
        const waiter = this.#waiting.shift();
        if (waiter === undefined) throw new NotResp('a reply to no command');
        waiter.resolve(decoded.value);
      }
    } catch (error) {
      if (!(error instanceof NotResp)) throw error;
      this.#fail(new RespClientError('protocol', this.#endpoint, `not RESP2: ${error.message}`));
      return;
    }
    this.#buffer = used === this.#buffer.length ? Buffer.alloc(0) : this.#buffer.subarray(used);
  }

  /** One timer for the oldest command: replies come in order, so it is the first to be late. */
  #armTimer(): void {
    const oldest = this.#waiting[0];
    const limit = this.#timeoutMs;
    if (oldest === undefined || limit === undefined || this.#closed) {
      this.#timer = undefined;
      return;
    }
    const dueIn = Math.max(0, oldest.sentAt + limit - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const first = this.#waiting[0];
      if (first === undefined) return;
      if (performance.now() - first.sentAt >= limit) {
        this.#fail(new RespClientError('timeout', this.#endpoint, `no reply within ${limit} ms`));
      } else this.#armTimer();
    }, dueIn);
    this.#timer.unref();
  }

  #fail(error: RespClientError): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiting = this.#waiting.splice(0);
    if (!this.#closed) {
      this.#closed = true;
      this.#socket.destroy();
    }
    for (const waiter of waiting) waiter.reject(error);
  }
}

/** `INFO <section>` as a map of its `field:value` lines. */
export async function respInfoFields(client: RespClient, section = 'ipipe'): Promise<Map<string, string>> {
  const reply = await client.command('INFO', section);
  if (typeof reply !== 'string') {
    throw new RespClientError(
      'protocol',
      client.endpoint,
      `INFO answered ${JSON.stringify(reply)}, not a bulk string`,
    );
  }
  const fields = new Map<string, string>();
  for (const line of reply.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}
