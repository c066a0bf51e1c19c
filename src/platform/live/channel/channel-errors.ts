/**
 * Errors of the NIC↔host message channel (iPipe §3 "Host–NIC messaging": a message whose checksum
 * fails is never delivered; the consumer is told, and a counter records it).
 * Codes IPIPE_ERR_CHANNEL_CHECKSUM, _FRAME and _MESSAGE_TOO_LARGE (docs/errors.md).
 */

import { IpipeError } from '../../../errors.ts';

/** Which transport raised a channel error. */
export type ChannelTransport = 'ring' | 'tcp';

/**
 * A message whose checksum (CRC-32C over TCP, the word checksum on a ring) does not match its bytes. The message was dropped (not delivered) and the
 * receiver's `checksumFailures` counter incremented. On a ring the channel goes on with the next
 * message; over TCP the byte stream cannot be trusted any more, so the connection is closed.
 */
export class ChannelChecksumError extends IpipeError {
  readonly reason = 'checksum' as const;
  readonly transport: ChannelTransport;
  readonly lengthBytes: number;
  readonly storedChecksum: number;
  readonly computedChecksum: number;
  constructor(
    transport: ChannelTransport,
    lengthBytes: number,
    storedChecksum: number,
    computedChecksum: number,
  ) {
    super(
      'IPIPE_ERR_CHANNEL_CHECKSUM',
      `${transport} message of ${lengthBytes} bytes failed its ${transport === 'tcp' ? 'CRC-32C' : 'checksum'} check (stored 0x${hex(storedChecksum)}, ` +
        `computed 0x${hex(computedChecksum)}); it was dropped — the sender's bytes were damaged in transit` +
        (transport === 'tcp' ? ' and the connection was closed; reconnect' : ''),
    );
    this.transport = transport;
    this.lengthBytes = lengthBytes;
    this.storedChecksum = storedChecksum;
    this.computedChecksum = computedChecksum;
  }
}

/**
 * A frame header that cannot be right: a length over the configured maximum (TCP), or a ring record
 * that runs past the published tail or the ring's end. Nothing after it can be framed, so the TCP
 * connection is closed, and a ring skips to the published tail (the dropped bytes are counted).
 */
export class ChannelFrameError extends IpipeError {
  readonly reason = 'frame' as const;
  readonly transport: ChannelTransport;
  readonly lengthBytes: number;
  readonly maxFrameBytes: number;
  constructor(transport: ChannelTransport, lengthBytes: number, maxFrameBytes: number, what: string) {
    super(
      'IPIPE_ERR_CHANNEL_FRAME',
      `${transport} frame header announces ${lengthBytes} bytes (${what}; at most ${maxFrameBytes} allowed); ` +
        (transport === 'tcp'
          ? 'the connection was closed — check that both ends use the same framing and maxFrameBytes'
          : 'the ring skipped to the published tail — the shared memory was overwritten'),
    );
    this.transport = transport;
    this.lengthBytes = lengthBytes;
    this.maxFrameBytes = maxFrameBytes;
  }
}

/** A send of a message that could never fit (over the ring's or the connection's maximum). */
export class ChannelMessageTooLargeError extends IpipeError {
  readonly reason = 'message-too-large' as const;
  readonly lengthBytes: number;
  readonly maxMessageBytes: number;
  constructor(lengthBytes: number, maxMessageBytes: number) {
    super(
      'IPIPE_ERR_CHANNEL_MESSAGE_TOO_LARGE',
      `a ${lengthBytes}-byte message exceeds the channel's maximum of ${maxMessageBytes} bytes: ` +
        'split it, or create the channel with a larger capacity (a ring takes messages up to half its size)',
    );
    this.lengthBytes = lengthBytes;
    this.maxMessageBytes = maxMessageBytes;
  }
}

/** Any error a channel reports about the bytes it received. */
export type ChannelReceiveError = ChannelChecksumError | ChannelFrameError;

/** Narrowing helper: `catch (e) { if (isChannelReceiveError(e)) … }`. */
export function isChannelReceiveError(value: unknown): value is ChannelReceiveError {
  return value instanceof ChannelChecksumError || value instanceof ChannelFrameError;
}

function hex(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}
