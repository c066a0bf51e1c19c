/**
 * A tiny RESP2 client for the live cluster tests: one TCP connection, pipelined commands answered
 * in order, a rejected promise for every command outstanding when the connection dies (a killed
 * replica). Independent of the server's encoder, so the two check each other.
 */

import net from 'node:net';

/** A decoded reply: simple strings and bulk strings as strings, errors as `{ error }`. */
export type Reply = string | number | null | { readonly error: string } | Reply[];

function decodeOne(bytes: Buffer, at: number): { value: Reply; end: number } | null {
  if (at >= bytes.length) return null;
  const cr = bytes.indexOf('\r\n', at + 1, 'latin1');
  if (cr === -1) return null;
  const type = String.fromCharCode(bytes[at]!);
  const line = bytes.toString('latin1', at + 1, cr);
  const next = cr + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: { error: line }, end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length === -1) return { value: null, end: next };
      if (bytes.length < next + length + 2) return null;
      return { value: bytes.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count === -1) return { value: null, end: next };
      const items: Reply[] = [];
      let position = next;
      for (let index = 0; index < count; index++) {
        const item = decodeOne(bytes, position);
        if (item === null) return null;
        items.push(item.value);
        position = item.end;
      }
      return { value: items, end: position };
    }
    default:
      throw new Error(`not a RESP reply: ${JSON.stringify(bytes.toString('latin1', at, at + 40))}`);
  }
}

function encode(args: readonly string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(arg);
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

export class RespClient {
  readonly #socket: net.Socket;
  readonly #waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void }[] = [];
  #buffer = Buffer.alloc(0);
  #closed = false;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on('data', (chunk) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      let used = 0;
      for (;;) {
        const decoded = decodeOne(this.#buffer, used);
        if (decoded === null) break;
        used = decoded.end;
        this.#waiting.shift()?.resolve(decoded.value);
      }
      this.#buffer = this.#buffer.subarray(used);
    });
    const fail = (): void => {
      this.#closed = true;
      for (const waiter of this.#waiting.splice(0)) waiter.reject(new Error('connection closed'));
    };
    socket.on('error', fail);
    socket.on('close', fail);
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RespClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host, noDelay: true });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RespClient(socket));
      });
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  command(...args: string[]): Promise<Reply> {
    if (this.#closed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#socket.write(encode(args));
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** `INFO ipipe` as a map of its fields. */
export async function infoFields(client: RespClient): Promise<Map<string, string>> {
  const reply = await client.command('INFO', 'ipipe');
  if (typeof reply !== 'string') throw new Error(`INFO answered ${JSON.stringify(reply)}`);
  const fields = new Map<string, string>();
  for (const line of reply.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}
