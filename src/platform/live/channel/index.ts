/**
 * The live platform's NIC↔host message channel (iPipe §3 "Host–NIC messaging"): a shared-memory
 * ring per direction between worker threads, or TCP when the NIC domain runs elsewhere, behind one
 * `MessageChannel` interface.
 */

export {
  type ChannelStats,
  type ChannelWaitResult,
  createSharedChannelPair,
  type MessageChannel,
  type SharedChannelDescriptor,
  SharedChannelEndpoint,
  type SharedChannelOptions,
  type SharedChannelPair,
} from './channel.ts';
export {
  ChannelChecksumError,
  ChannelFrameError,
  ChannelMessageTooLargeError,
  type ChannelReceiveError,
  type ChannelTransport,
  isChannelReceiveError,
} from './channel-errors.ts';
export { crc32cWords } from './crc32c-words.ts';
export {
  DEFAULT_SPIN_ITERATIONS,
  RING_CONTROL_BYTES,
  RING_CORRUPT,
  RING_EMPTY,
  RING_MAX_CAPACITY_BYTES,
  RING_MIN_CAPACITY_BYTES,
  RING_TARGET_TOO_SMALL,
  type RingMemory,
  type RingPositions,
  type RingStats,
  type RingWaitResult,
  type RingWriteResult,
  SpscRing,
  type SpscRingAttachOptions,
  type SpscRingOptions,
} from './ring.ts';
export {
  connectTcpChannel,
  listenTcpChannel,
  type TcpAddressOptions,
  TcpChannel,
  type TcpChannelListener,
  type TcpChannelOptions,
} from './tcp-channel.ts';
export { encodeFrame, FRAME_HEADER_BYTES, FrameDecoder, frameChecksum, writeFrame } from './tcp-framing.ts';
