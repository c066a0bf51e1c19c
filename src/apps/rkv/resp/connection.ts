/**
 * One client connection of the RESP front: parse, dispatch, and reply in order (issue 5, §2).
 *
 * Ordering. RESP has no request ids: a client matches replies to requests by position, so every
 * connection must answer in request order even though the backend answers out of order (a read
 * served by the memtable on the NIC can finish before an earlier write's Paxos round). Replies
 * therefore pass through a FIFO of slots:
 *
 *     slots:  [ done ][ done ][ waiting ][ done ][ waiting ]
 *              ▲ head                                        ◀── a new command's slot
 *     written to the socket: every done slot from the head up to the first waiting one.
 *
 * While the FIFO is empty a reply that is ready at once (PING, an arity error) is encoded
 * straight into the writer; otherwise it gets a slot like everyone else. The writer's bytes go out
 * once per event-loop turn (the server batches flushes), so a pipeline of N commands read in one
 * chunk is answered with one write, as Redis does.
 *
 * Back-pressure. Reading stops (socket.pause) while more than `maxInflightCommands` replies are
 * awaited, or while the socket's send buffer is over its high-water mark (a client that pipelines
 * without reading its replies), and resumes once both have drained. Redis instead disconnects
 * such a client past its output-buffer limit; pausing loses nothing and bounds memory the same.
 *
 * Closing. Malformed input, QUIT, the peer's FIN and a server shutdown all take one path: stop
 * taking commands (the parser is halted; later input is read and dropped), let the replies already
 * owed go out, then end the socket. Dropping input instead of ceasing to read matters: closing a
 * socket with unread input makes the kernel send a reset, which can destroy the final error reply
 * before the client reads it. A client that never closes its side is cut off after `LINGER_MS`.
 */

import diagnosticsChannel from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { KvBackend } from './backend.ts';
import {
  arityHolds,
  type CommandContext,
  findCommand,
  isCrossProtocolAttack,
  unknownCommandError,
} from './commands.ts';
import { ReplyWriter, type RespValue, toByteString } from './encoder.ts';
import {
  BackendUnavailableError,
  BackendUnsupportedError,
  NotLeaderError,
  ScanCursorExpiredError,
} from './errors.ts';
import type { InfoServerView } from './info.ts';
import type { RespLimits } from './limits.ts';
import { type ProtocolViolation, RespParser } from './parser.ts';
import type { ProtocolErrorReason, RespCounters } from './stats.ts';

/** Published on each connection closed for malformed input (nothing is built when no one listens). */
export const protocolErrorChannel = diagnosticsChannel.channel('ipipe:resp:protocol-error');

/** What `protocolErrorChannel` publishes. */
export interface ProtocolErrorEvent {
  readonly connectionId: number;
  readonly remoteAddress: string;
  readonly reason: ProtocolErrorReason;
}

/** How long a connection we have ended may stay half-open before it is destroyed. */
const LINGER_MS = 2000;

/** What the connection needs from its server. */
export interface ConnectionHost {
  readonly backend: KvBackend;
  readonly limits: RespLimits;
  readonly counters: RespCounters;
  readonly view: InfoServerView;
  /** Call `flush()` on this connection later in this event-loop turn. */
  requestFlush(connection: RespConnection): void;
  /** The socket is gone. */
  closed(connection: RespConnection): void;
}

/** A reply position in the FIFO. */
interface ReplySlot {
  readonly done: boolean;
  writeTo(writer: ReplyWriter): void;
}

/** A reply known at once, queued behind earlier ones. */
class ReadySlot implements ReplySlot {
  readonly done = true;
  readonly #reply: RespValue;
  constructor(reply: RespValue) {
    this.#reply = reply;
  }
  writeTo(writer: ReplyWriter): void {
    writer.value(this.#reply);
  }
}

/** A reply waiting for the backend. */
class DeferredSlot<T> implements ReplySlot {
  done = false;
  readonly #connection: RespConnection;
  readonly #encode: (writer: ReplyWriter, value: T) => void;
  #value: T | undefined;
  #errorText: string | null = null;

  constructor(connection: RespConnection, encode: (writer: ReplyWriter, value: T) => void) {
    this.#connection = connection;
    this.#encode = encode;
  }

  // Methods, not arrow-function fields: a field would build (and, under tsx/esbuild's keepNames,
  // name with a defineProperty call) two closures per command — a third of the front's CPU at
  // -P 16 in a profile. `defer` passes two anonymous arrows instead.
  resolve(value: T): void {
    this.#value = value;
    this.done = true;
    this.#connection.settled();
  }

  reject(error: unknown): void {
    this.#errorText = this.#connection.backendErrorText(error);
    this.done = true;
    this.#connection.settled();
  }

  writeTo(writer: ReplyWriter): void {
    if (this.#errorText !== null) writer.error(this.#errorText);
    else this.#encode(writer, this.#value as T);
  }
}

// Lifecycle: OPEN → DRAINING (no more commands; owed replies still go out) → ENDED (FIN sent) → CLOSED.
const OPEN = 0;
const DRAINING = 1;
const ENDED = 2;
const CLOSED = 3;

/** One client connection; created by the server for each accepted socket. */
export class RespConnection implements CommandContext {
  readonly connectionId: number;
  readonly backend: KvBackend;
  readonly limits: RespLimits;
  readonly server: InfoServerView;
  clientName: Buffer | null = null;

  readonly #socket: Socket;
  readonly #host: ConnectionHost;
  readonly #counters: RespCounters;
  readonly #parser: RespParser;
  readonly #writer = new ReplyWriter();
  readonly #maxInflight: number;

  #slots: ReplySlot[] = [];
  #head = 0;
  #state = OPEN;
  #paused = false;
  #writeBlocked = false;
  #flushRequested = false;
  #lingerTimer: NodeJS.Timeout | undefined;

  constructor(connectionId: number, socket: Socket, host: ConnectionHost) {
    this.connectionId = connectionId;
    this.backend = host.backend;
    this.limits = host.limits;
    this.server = host.view;
    this.#socket = socket;
    this.#host = host;
    this.#counters = host.counters;
    this.#maxInflight = host.limits.maxInflightCommands;
    this.#parser = new RespParser(host.limits, this.#onCommand);
    socket.setNoDelay(true);
    socket.on('data', this.#onData);
    socket.on('drain', this.#onDrain);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    socket.on('close', this.#onClose);
  }

  /** Replies owed and not yet written. */
  get inflight(): number {
    return this.#slots.length - this.#head;
  }

  // ---- CommandContext: replies ----------------------------------------------------------------

  simple(text: string): void {
    if (this.#slots.length === this.#head) {
      this.#writer.simple(text);
      this.#requestFlush();
    } else this.#enqueue(new ReadySlot({ type: 'simple', value: text }));
  }

  error(text: string): void {
    this.#counters.errorReplies++;
    this.#replyError(text);
  }

  /** An error reply already counted (backendErrorText counts its own). */
  #replyError(text: string): void {
    if (this.#slots.length === this.#head) {
      this.#writer.error(text);
      this.#requestFlush();
    } else this.#enqueue(new ReadySlot({ type: 'error', value: text }));
  }

  integer(value: number): void {
    if (this.#slots.length === this.#head) {
      this.#writer.integer(value);
      this.#requestFlush();
    } else this.#enqueue(new ReadySlot({ type: 'integer', value }));
  }

  bulk(value: Buffer | null): void {
    if (this.#slots.length === this.#head) {
      this.#writer.bulk(value);
      this.#requestFlush();
    } else this.#enqueue(new ReadySlot({ type: 'bulk', value }));
  }

  raw(bytes: Buffer): void {
    if (this.#slots.length === this.#head) {
      this.#writer.raw(bytes);
      this.#requestFlush();
    } else {
      this.#enqueue({ done: true, writeTo: (writer) => writer.raw(bytes) });
    }
  }

  defer<T>(work: Promise<T>, encode: (writer: ReplyWriter, value: T) => void): void {
    const slot = new DeferredSlot<T>(this, encode);
    this.#enqueue(slot);
    work.then(
      (value) => slot.resolve(value),
      (error: unknown) => slot.reject(error),
    );
  }

  quit(): void {
    this.simple('OK');
    this.#drain();
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** Graceful shutdown: take no more commands, answer those taken, then close. */
  shutdown(): void {
    this.#drain();
  }

  /** Closes at once (shutdown timeout). */
  destroy(): void {
    this.#socket.destroy();
  }

  /** Writes what the writer holds to the socket (called by the server once per loop turn). */
  flush(): void {
    this.#flushRequested = false;
    if (this.#state === CLOSED) return;
    const bytes = this.#writer.pendingBytes;
    if (bytes === 0 || this.#socket.destroyed || !this.#socket.writable) return;
    this.#counters.bytesSent += bytes;
    this.#socket.cork();
    const ok = this.#writer.flushTo(this.#socket);
    this.#socket.uncork();
    if (!ok && !this.#writeBlocked) {
      this.#writeBlocked = true;
      this.#updateReading();
    }
  }

  /** A deferred slot completed: write every completed reply from the head of the FIFO. */
  settled(): void {
    if (this.#state === CLOSED) return;
    const slots = this.#slots;
    let head = this.#head;
    if (head === slots.length || !slots[head]!.done) return;
    while (head < slots.length && slots[head]!.done) slots[head++]!.writeTo(this.#writer);
    if (head === slots.length) {
      slots.length = 0;
      head = 0;
    }
    this.#head = head;
    this.#requestFlush();
    if (this.#paused) this.#updateReading();
    if (this.#state === DRAINING && head === slots.length) this.#end();
  }

  /** The reply text for a backend rejection (see errors.ts for the mapping); counts the reply. */
  backendErrorText(error: unknown): string {
    this.#counters.errorReplies++;
    if (error instanceof NotLeaderError) {
      this.#counters.notLeaderReplies++;
      return `READONLY ${toByteString(error.message)}`;
    }
    if (error instanceof BackendUnavailableError) {
      this.#counters.unavailableReplies++;
      return `TRYAGAIN ${toByteString(error.message)}`;
    }
    if (error instanceof BackendUnsupportedError || error instanceof ScanCursorExpiredError)
      return `ERR ${toByteString(error.message)}`;
    this.#counters.backendErrors++;
    const message = error instanceof Error ? error.message : String(error);
    return `ERR internal error: ${toByteString(message)}`;
  }

  // ---- input ----------------------------------------------------------------------------------

  readonly #onData = (chunk: Buffer): void => {
    this.#counters.bytesReceived += chunk.length;
    if (this.#state !== OPEN) return; // draining: read and drop
    const violation = this.#parser.push(chunk);
    if (violation !== null) this.#protocolError(violation);
    else if (!this.#paused && this.inflight > this.#maxInflight) this.#updateReading();
  };

  readonly #onCommand = (args: Buffer[]): void => {
    if (this.#state !== OPEN) return;
    this.#counters.commandsProcessed++;
    const name = args[0]!;
    const entry = findCommand(name);
    if (entry === undefined) {
      if (isCrossProtocolAttack(name)) {
        this.#closeForInput('cross-protocol');
        return;
      }
      this.#counters.unknownCommands++;
      this.error(unknownCommandError(args));
      return;
    }
    if (!arityHolds(this, entry, args.length)) return;
    try {
      entry.run(this, args);
    } catch (error) {
      // A backend that throws instead of rejecting: the same reply a rejection would get.
      this.#replyError(this.backendErrorText(error));
    }
  };

  #protocolError(violation: ProtocolViolation): void {
    this.error(`ERR ${violation.message}`);
    this.#closeForInput(violation.reason);
  }

  #closeForInput(reason: ProtocolErrorReason): void {
    this.#counters.protocolErrors[reason]++;
    if (protocolErrorChannel.hasSubscribers) {
      const event: ProtocolErrorEvent = {
        connectionId: this.connectionId,
        remoteAddress: `${this.#socket.remoteAddress ?? '?'}:${this.#socket.remotePort ?? 0}`,
        reason,
      };
      protocolErrorChannel.publish(event);
    }
    this.#drain();
  }

  // ---- output and flow control ----------------------------------------------------------------

  #enqueue(slot: ReplySlot): void {
    this.#slots.push(slot);
  }

  #requestFlush(): void {
    if (this.#flushRequested) return;
    this.#flushRequested = true;
    this.#host.requestFlush(this);
  }

  /** Pauses or resumes reading to match the back-pressure conditions. */
  #updateReading(): void {
    const shouldPause =
      this.#state === OPEN &&
      (this.#writeBlocked ||
        this.inflight > this.#maxInflight ||
        // resume only once the FIFO is down to half, so a busy client does not flap
        (this.#paused && this.inflight > this.#maxInflight >> 1));
    if (shouldPause && !this.#paused) {
      this.#paused = true;
      this.#counters.readPauses++;
      this.#socket.pause();
    } else if (!shouldPause && this.#paused) {
      this.#paused = false;
      this.#socket.resume();
    }
  }

  readonly #onDrain = (): void => {
    this.#writeBlocked = false;
    if (this.#paused) this.#updateReading();
  };

  /** Stop taking commands; close once the replies owed are out. */
  #drain(): void {
    if (this.#state !== OPEN) return;
    this.#state = DRAINING;
    this.#parser.halt();
    if (this.#paused) {
      // Keep reading (and dropping) so unread input cannot turn our close into a reset.
      this.#paused = false;
      this.#socket.resume();
    }
    if (this.inflight === 0) this.#end();
  }

  #end(): void {
    if (this.#state >= ENDED) return;
    this.#state = ENDED;
    this.flush();
    this.#socket.end();
    this.#lingerTimer = setTimeout(() => this.#socket.destroy(), LINGER_MS);
    this.#lingerTimer.unref();
  }

  /** The peer sent FIN: answer what it asked (Redis would drop it), then close. */
  readonly #onEnd = (): void => {
    this.#drain();
  };

  readonly #onError = (): void => {
    // Resets and broken pipes: counted; 'close' follows and cleans up.
    this.#counters.socketErrors++;
  };

  readonly #onClose = (): void => {
    this.#state = CLOSED;
    if (this.#lingerTimer !== undefined) clearTimeout(this.#lingerTimer);
    this.#slots = [];
    this.#head = 0;
    this.#host.closed(this);
  };
}
