/**
 * The live platform's network side (iPipe §3/§5: clients reach actors over UDP): the wire
 * protocol, the UDP client library, echo servers used as test doubles and baselines, and the load
 * generator with its command. Value exports first, then type exports, each named explicitly.
 */

// ---- values -----------------------------------------------------------------------------------

/** The UDP client. */
export { IpipeClient } from './client.ts';
/** Test doubles and baselines: the protocol echo server and the raw dgram reflector. */
export { startEchoServer, startRawEchoServer } from './echo-server.ts';
/** The client's errors (to move into src/errors.ts). */
export {
  ClientClosedError,
  isNetError,
  NET_ERROR_CODES,
  NetError,
  RemoteError,
  RequestTimeoutError,
} from './errors.ts';
/** Peer messages bigger than one datagram: the fragmenter and the reassembler. */
export {
  FRAGMENT_DROP_REASONS,
  FRAGMENT_HEADER_BYTES,
  fragmentCount,
  fragmentMessage,
  MAX_FRAGMENTS,
  maxPieceBytes,
  Reassembler,
} from './fragments.ts';
/** node:dgram's per-send address lookup without a tick for IPv4 literals. */
export { literalLookup } from './literal-lookup.ts';
/** The load generator. */
export { runLoad, splitHostPort } from './load.ts';
/** The frame format: encode, seal in place, validate, error bodies, drop counters. */
export {
  checkMaxFrameBytes,
  DEFAULT_MAX_FRAME_BYTES,
  DROP_REASONS,
  DropCounters,
  decodeErrorBody,
  decodeFrame,
  encodeErrorBody,
  encodeFrame,
  FLAG_ERROR,
  FLAG_FRAGMENT,
  FLAG_PEER,
  FLAG_REPLY,
  FLAG_REQUEST,
  FLAG_RETRANSMIT,
  FrameView,
  frameSize,
  HEADER_BYTES,
  MAX_ERROR_CODE_BYTES,
  MAX_UDP_PAYLOAD_BYTES,
  markRetransmit,
  maxPayloadBytes,
  readFrameInto,
  sealFrame,
  turnIntoReply,
  WIRE_DROP_REASONS,
  WIRE_MAGIC,
  WIRE_VERSION,
} from './wire.ts';

// ---- types ------------------------------------------------------------------------------------

export type { ClientOptions, ClientStats, RequestCompletion } from './client.ts';
export type {
  EchoBehaviour,
  EchoServer,
  EchoServerOptions,
  EchoServerStats,
  RawEchoServer,
} from './echo-server.ts';
export type { NetErrorCode } from './errors.ts';
export type {
  FragmentDropReason,
  FragmentedMessageFields,
  ReassembledMessage,
  ReassemblyLimits,
} from './fragments.ts';
export type { DgramLookup } from './literal-lookup.ts';
export type { LatencySummary, LoadMode, LoadOptions, LoadResult, MakePayload } from './load.ts';
export type {
  DecodeFrameResult,
  DropReason,
  ErrorBodyResult,
  Frame,
  FrameFields,
  FrameKind,
  WireDropReason,
} from './wire.ts';
