/**
 * The Redis-protocol (RESP2) front of the replicated KV store (issue 5, §2): server, parser,
 * encoder, the backend interface and an in-memory backend. Values and types are exported apart.
 */

export type { InfoFields, KvBackend, KvBackendInfo, SetCondition } from './backend.ts';
export type { RespClientOptions, RespReply } from './client.ts';
export { RespClient, respInfoFields } from './client.ts';
export type { CommandSpec } from './commands.ts';
export { COMMANDS } from './commands.ts';
export type { ProtocolErrorEvent } from './connection.ts';
export { protocolErrorChannel } from './connection.ts';
export type { ByteSink, RespValue } from './encoder.ts';
export { encodeCommand, encodeValue, ReplyWriter, toByteString } from './encoder.ts';
export type { RespClientFailure, RespErrorCode } from './errors.ts';
export {
  BackendUnavailableError,
  BackendUnsupportedError,
  NotLeaderError,
  RESP_ERROR_CODES,
  RespClientError,
  RespError,
  RespLimitsError,
  RespListenError,
  ScanCursorExpiredError,
} from './errors.ts';
export type { InfoSection } from './info.ts';
export { INFO_SECTIONS, REDIS_COMPATIBLE_VERSION } from './info.ts';
export { splitInlineArguments } from './inline.ts';
export type { RespLimits, RespLimitsInput } from './limits.ts';
export { DEFAULT_RESP_LIMITS, resolveRespLimits } from './limits.ts';
export type { MemoryKvBackendOptions } from './memory-backend.ts';
export { MemoryKvBackend } from './memory-backend.ts';
export type {
  ProtocolViolation,
  ProtocolViolationReason,
  RespCommandHandler,
  RespParserLimits,
} from './parser.ts';
export { PROTOCOL_VIOLATION_REASONS, RespParser } from './parser.ts';
export type {
  RespCloseOptions,
  RespServerAddress,
  RespServerHandle,
  RespServerOptions,
} from './server.ts';
export { startRespServer } from './server.ts';
export type { ProtocolErrorReason, RespServerStats } from './stats.ts';
export { PROTOCOL_ERROR_REASONS } from './stats.ts';
