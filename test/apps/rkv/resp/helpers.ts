/**
 * Test helpers for the RESP front: a reply decoder (the client side of RESP2, written here
 * independently of the server's encoder so the two check each other) and a raw TCP client that
 * sends exact bytes and reads replies, for what a library client cannot do (garbage, split
 * writes, half-closed sockets).
 */

import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { RespValue } from '../../../../src/apps/rkv/resp/index.ts';

/** Decodes complete replies from `bytes`; returns them and how many bytes they used. */
export function decodeReplies(bytes: Buffer): { values: RespValue[]; used: number } {
  const values: RespValue[] = [];
  let used = 0;
  for (;;) {
    const decoded = decodeOne(bytes, used);
    if (decoded === null) return { values, used };
    values.push(decoded.value);
    used = decoded.end;
  }
}

function decodeOne(bytes: Buffer, at: number): { value: RespValue; end: number } | null {
  if (at >= bytes.length) return null;
  const type = String.fromCharCode(bytes[at]!);
  const cr = bytes.indexOf('\r\n', at + 1, 'latin1');
  if (cr === -1) return null;
  const line = bytes.toString('latin1', at + 1, cr);
  const next = cr + 2;
  switch (type) {
    case '+':
      return { value: { type: 'simple', value: line }, end: next };
    case '-':
      return { value: { type: 'error', value: line }, end: next };
    case ':':
      return { value: { type: 'integer', value: Number(line) }, end: next };
    case '$': {
      const length = Number(line);
      if (length === -1) return { value: { type: 'bulk', value: null }, end: next };
      if (bytes.length < next + length + 2) return null;
      if (bytes.toString('latin1', next + length, next + length + 2) !== '\r\n') {
        throw new Error(`bulk at ${at} not followed by CRLF`);
      }
      return {
        value: { type: 'bulk', value: Buffer.from(bytes.subarray(next, next + length)) },
        end: next + length + 2,
      };
    }
    case '*': {
      const count = Number(line);
      if (count === -1) return { value: { type: 'array', value: null }, end: next };
      const items: RespValue[] = [];
      let position = next;
      for (let index = 0; index < count; index++) {
        const item = decodeOne(bytes, position);
        if (item === null) return null;
        items.push(item.value);
        position = item.end;
      }
      return { value: { type: 'array', value: items }, end: position };
    }
    default:
      throw new Error(
        `not a RESP reply at byte ${at}: ${JSON.stringify(bytes.toString('latin1', at, at + 40))}`,
      );
  }
}

/** A reply as plain JS, for short assertions: bulk → string (latin1), null bulk/array → null. */
export type Plain = string | number | null | { error: string } | Plain[];

export function plain(value: RespValue): Plain {
  switch (value.type) {
    case 'simple':
      return value.value;
    case 'error':
      return { error: value.value };
    case 'integer':
      return value.value;
    case 'bulk':
      return value.value === null ? null : value.value.toString('latin1');
    case 'array':
      return value.value === null ? null : value.value.map(plain);
  }
}

/** A raw RESP client: exact bytes out, decoded replies in. */
export class RawClient {
  readonly socket: net.Socket;
  /** Bytes received live in `#buffer[0, #length)`; capacity doubles, so appends stay linear. */
  #buffer = Buffer.alloc(64 * 1024);
  #length = 0;
  #used = 0;
  #closed = false;
  #waiters: (() => void)[] = [];
  readonly closedPromise: Promise<void>;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#append(chunk);
      this.#wake();
    });
    this.closedPromise = new Promise((resolve) => {
      socket.on('close', () => {
        this.#closed = true;
        this.#wake();
        resolve();
      });
    });
    socket.on('error', () => {});
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host, noDelay: true });
      socket.once('connect', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Everything received so far. */
  get received(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }

  #append(chunk: Buffer): void {
    const needed = this.#length + chunk.length;
    if (needed > this.#buffer.length) {
      let capacity = this.#buffer.length * 2;
      while (capacity < needed) capacity *= 2;
      const grown = Buffer.alloc(capacity);
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    chunk.copy(this.#buffer, this.#length);
    this.#length = needed;
  }

  send(bytes: Buffer | string): void {
    this.socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  }

  /** Resolves with the next `count` replies (rejects on close or timeout before they arrive). */
  async replies(count: number, timeoutMs = 5000): Promise<RespValue[]> {
    const deadline = Date.now() + timeoutMs;
    const values: RespValue[] = [];
    for (;;) {
      while (values.length < count) {
        const one = decodeOne(this.received, this.#used);
        if (one === null) break;
        values.push(one.value);
        this.#used = one.end;
      }
      if (values.length === count) return values;
      if (this.#closed) throw new Error(`connection closed after ${values.length} of ${count} replies`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${count} replies (got ${values.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Plain forms of the next `count` replies. */
  async plainReplies(count: number, timeoutMs?: number): Promise<Plain[]> {
    return (await this.replies(count, timeoutMs)).map(plain);
  }

  /** Sends a command (array of bulk strings) and returns its plain reply. */
  async call(...args: (string | Buffer)[]): Promise<Plain> {
    this.send(encodeArgs(args));
    const [reply] = await this.plainReplies(1);
    return reply!;
  }

  /** Resolves once the server closed the connection (rejects after the timeout). */
  async waitClosed(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.closedPromise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('connection still open')), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  close(): void {
    this.socket.destroy();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** A command as an array of bulk strings (strings as UTF-8), written independently of the encoder. */
export function encodeArgs(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = typeof arg === 'string' ? Buffer.from(arg) : arg;
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The absolute path of an executable found on PATH, or null (tests skip on null). */
export function findExecutable(name: string): string | null {
  for (const directory of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** What a finished child process left. */
export interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a program to completion without blocking the event loop (the server under test lives in
 * this process, so `spawnSync` would deadlock it). Kills it after `timeoutMs`.
 */
export function runProcess(
  file: string,
  args: readonly string[],
  options: { readonly input?: string | Buffer; readonly timeoutMs?: number } = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
