/**
 * Two UDP echo servers on `node:dgram`, *only* as test doubles and benchmark baselines for the
 * client library and the load generator (the live node is elsewhere; this is not it):
 *
 *   startEchoServer     speaks the wire protocol (wire.ts): validates every datagram with the full
 *                       frame checks and CRC-32C, counts drops by reason, and answers a request by
 *                       rewriting its header into a reply in the received buffer and re-checksumming
 *                       it (no payload copy). Test behaviours: drop each request's first copy
 *                       (answers only retransmissions), never answer, error replies for actors it
 *                       does not host.
 *   startRawEchoServer  no protocol at all: sends every datagram straight back. The baseline a
 *                       protocol server is measured against ("a bare node:dgram echo does
 *                       ~110 k req/s with 64 outstanding here").
 */

import dgram from 'node:dgram';
import { ConfigError } from '../../../errors.ts';
import {
  checkMaxFrameBytes,
  DEFAULT_MAX_FRAME_BYTES,
  DropCounters,
  encodeErrorBody,
  FrameView,
  HEADER_BYTES,
  readFrameInto,
  turnIntoReply,
} from './wire.ts';

/** How the protocol echo server treats well-formed requests. */
export type EchoBehaviour =
  /** Answer every request (and every copy of it) with its payload. */
  | 'echo'
  /** Ignore the first copy of each (client id, request id); answer retransmissions. */
  | 'answer-retransmits-only'
  /** Validate and count, never answer. */
  | 'silent';

/** Options of `startEchoServer`. */
export interface EchoServerOptions {
  /** Address to bind (default 127.0.0.1). */
  readonly host?: string;
  /** Port to bind (default 0: an ephemeral port, see `address`). */
  readonly port?: number;
  /** Frame size limit, header included (default 1472). */
  readonly maxFrameBytes?: number;
  readonly behaviour?: EchoBehaviour;
  /**
   * Actor ids this server hosts. Requests for any other id get an error reply with code
   * IPIPE_ERR_ACTOR_UNKNOWN, as a node would send. Default: every id is hosted.
   */
  readonly actorIds?: readonly number[];
  /** SO_RCVBUF in bytes (default: the OS's). */
  readonly receiveBufferBytes?: number;
}

/** Counters of a protocol echo server. */
export interface EchoServerStats {
  /** Datagrams received, valid or not. */
  readonly datagrams: number;
  /** Well-formed requests (every copy). */
  readonly requests: number;
  /** Of those, copies flagged RETRANSMIT. */
  readonly retransmits: number;
  readonly replies: number;
  readonly errorReplies: number;
  /** Requests deliberately left unanswered by the behaviour. */
  readonly ignored: number;
}

/** A running server: where it listens, what it counted, and how to stop it. */
export interface EchoServer {
  readonly address: { readonly address: string; readonly port: number; readonly family: string };
  /** Dropped datagrams by reason (wire reasons, and 'unexpected-kind' for replies sent to it). */
  readonly drops: DropCounters;
  stats(): EchoServerStats;
  close(): Promise<void>;
}

function bindSocket(
  host: string,
  port: number,
  receiveBufferBytes: number | undefined,
): Promise<dgram.Socket> {
  const socket = dgram.createSocket({
    type: host.includes(':') ? 'udp6' : 'udp4',
    ...(receiveBufferBytes === undefined ? {} : { recvBufferSize: receiveBufferBytes }),
  });
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      socket.close();
      reject(error);
    };
    socket.once('error', onError);
    socket.bind({ address: host, port }, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

function closeSocket(socket: dgram.Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve(); // already closed
    }
  });
}

/** Starts the protocol echo server and resolves once it listens. */
export async function startEchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  const host = options.host ?? '127.0.0.1';
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  try {
    checkMaxFrameBytes(maxFrameBytes);
  } catch (error) {
    throw new ConfigError('maxFrameBytes', (error as Error).message);
  }
  const behaviour = options.behaviour ?? 'echo';
  const hosted = options.actorIds === undefined ? undefined : new Set(options.actorIds);
  const socket = await bindSocket(host, options.port ?? 0, options.receiveBufferBytes);
  const drops = new DropCounters();
  const view = new FrameView();
  // (client id → request ids seen): which requests already had their first copy ignored.
  const seen = new Map<number, Set<number>>();
  let datagrams = 0;
  let requests = 0;
  let retransmits = 0;
  let replies = 0;
  let errorReplies = 0;
  let ignored = 0;

  const sendError = (request: Buffer, port: number, address: string, code: string, text: string) => {
    // The error body may be longer than the request's payload: build it in a fresh buffer.
    const reply = Buffer.allocUnsafe(maxFrameBytes);
    request.copy(reply, 0, 0, HEADER_BYTES);
    const bodyBytes = encodeErrorBody(reply, HEADER_BYTES, code, text, maxFrameBytes - HEADER_BYTES);
    const size = turnIntoReply(reply, 'error', bodyBytes, maxFrameBytes);
    errorReplies++;
    socket.send(reply, 0, size, port, address);
  };

  const firstCopy = (clientId: number, requestId: number): boolean => {
    let ids = seen.get(clientId);
    if (ids === undefined) {
      ids = new Set();
      seen.set(clientId, ids);
    }
    if (ids.has(requestId)) return false;
    // A test double: bound the memory without an LRU.
    if (ids.size >= 1_000_000) ids.clear();
    ids.add(requestId);
    return true;
  };

  socket.on('message', (message: Buffer, remote: dgram.RemoteInfo) => {
    datagrams++;
    const reason = readFrameInto(message, view, maxFrameBytes);
    if (reason !== undefined) {
      drops.add(reason);
      return;
    }
    if (view.kind !== 'request') {
      drops.add('unexpected-kind');
      return;
    }
    requests++;
    if (view.retransmit) retransmits++;
    if (
      behaviour === 'silent' ||
      (behaviour === 'answer-retransmits-only' && firstCopy(view.clientId, view.requestId))
    ) {
      ignored++;
      return;
    }
    if (hosted !== undefined && !hosted.has(view.targetActorId)) {
      sendError(
        message,
        remote.port,
        remote.address,
        'IPIPE_ERR_ACTOR_UNKNOWN',
        `unknown actor id ${view.targetActorId}: this echo server hosts ${[...hosted].join(', ')}`,
      );
      return;
    }
    // The datagram buffer is ours alone: answer in it.
    const size = turnIntoReply(message, 'reply', view.payloadLength, maxFrameBytes);
    replies++;
    socket.send(message, 0, size, remote.port, remote.address);
  });
  // A send to a vanished client can surface as an error event; a server keeps serving.
  socket.on('error', () => {});

  const bound = socket.address();
  return {
    address: Object.freeze({ address: bound.address, port: bound.port, family: bound.family }),
    drops,
    stats: () => ({ datagrams, requests, retransmits, replies, errorReplies, ignored }),
    close: () => closeSocket(socket),
  };
}

/** A running protocol-less echo server. */
export interface RawEchoServer {
  readonly address: { readonly address: string; readonly port: number; readonly family: string };
  /** Datagrams received (and sent back). */
  datagrams(): number;
  close(): Promise<void>;
}

/** Starts an echo server with no protocol: every datagram goes straight back to its sender. */
export async function startRawEchoServer(
  options: { readonly host?: string; readonly port?: number; readonly receiveBufferBytes?: number } = {},
): Promise<RawEchoServer> {
  const socket = await bindSocket(options.host ?? '127.0.0.1', options.port ?? 0, options.receiveBufferBytes);
  let datagrams = 0;
  socket.on('message', (message: Buffer, remote: dgram.RemoteInfo) => {
    datagrams++;
    socket.send(message, 0, message.length, remote.port, remote.address);
  });
  socket.on('error', () => {});
  const bound = socket.address();
  return {
    address: Object.freeze({ address: bound.address, port: bound.port, family: bound.family }),
    datagrams: () => datagrams,
    close: () => closeSocket(socket),
  };
}
