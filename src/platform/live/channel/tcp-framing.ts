/**
 * Framing of channel messages on a byte stream (the TCP transport of the NIC↔host channel, for a
 * NIC domain on a separate device; iPipe §3 "Host–NIC messaging": every message carries a 4-byte
 * checksum). The same record as the shared ring, without the padding:
 *
 *   +------------------+--------------------+-----------------+
 *   | u32 LE length n  | u32 LE CRC-32C     | payload, n bytes |
 *   +------------------+--------------------+-----------------+
 *
 * The CRC-32C covers the payload, continued from the length (`crc32c(payload, 0, n, n)`), exactly
 * as in the ring. A stream arrives in arbitrary pieces; `FrameDecoder` reassembles frames across
 * them and hands each payload over as its own copy. A length over the limit or a checksum mismatch
 * poisons the decoder: after it nothing can be trusted to be a frame boundary.
 */

import { crc32c } from '../../../dmo/crc32c.ts';
import { ChannelChecksumError, ChannelFrameError, type ChannelReceiveError } from './channel-errors.ts';

export const FRAME_HEADER_BYTES = 8;

/** The checksum a frame (and a ring record) carries for `payload`. */
export function frameChecksum(payload: Uint8Array): number {
  return crc32c(payload, 0, payload.length, payload.length);
}

/** Writes one frame for `payload` at `offset` of `target` (which must have room); returns the offset after it. */
export function writeFrame(target: Uint8Array, offset: number, payload: Uint8Array): number {
  const length = payload.length;
  writeU32(target, offset, length);
  writeU32(target, offset + 4, frameChecksum(payload));
  target.set(payload, offset + FRAME_HEADER_BYTES);
  return offset + FRAME_HEADER_BYTES + length;
}

/** One frame as a fresh byte array (tests, tools). */
export function encodeFrame(payload: Uint8Array): Uint8Array {
  const frame = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  writeFrame(frame, 0, payload);
  return frame;
}

/** Reassembles frames from stream pieces. */
export class FrameDecoder {
  readonly #maxFrameBytes: number;
  /** Pieces not yet consumed; `#offset` bytes of the first are already used. */
  #pieces: Uint8Array[] = [];
  #offset = 0;
  #bufferedBytes = 0;
  /** The current frame's header, once read (-1: not read yet). */
  #frameLength = -1;
  #frameChecksum = 0;
  #error: ChannelReceiveError | undefined = undefined;
  #checksumFailures = 0;
  #framingErrors = 0;

  constructor(maxFrameBytes: number) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** Bytes received but not yet part of a delivered frame. */
  get bufferedBytes(): number {
    return this.#bufferedBytes;
  }

  /** The error that stopped decoding, if one did. */
  get error(): ChannelReceiveError | undefined {
    return this.#error;
  }

  get checksumFailures(): number {
    return this.#checksumFailures;
  }

  get framingErrors(): number {
    return this.#framingErrors;
  }

  /**
   * Adds a piece of the stream and hands every complete, intact frame's payload to `onMessage`, in
   * order. Returns the error that stops decoding (frames before it were delivered; nothing after
   * it will be), or undefined. Each payload is a fresh copy; `piece` must not be modified
   * afterwards (the tail of a partial frame is kept by reference until the rest arrives).
   */
  push(piece: Uint8Array, onMessage: (payload: Uint8Array) => void): ChannelReceiveError | undefined {
    if (this.#error !== undefined) return this.#error;
    if (piece.length === 0) return undefined;
    this.#pieces.push(piece);
    this.#bufferedBytes += piece.length;
    for (;;) {
      if (this.#frameLength < 0) {
        if (this.#bufferedBytes < FRAME_HEADER_BYTES) return undefined;
        const header = this.#take(FRAME_HEADER_BYTES, undefined);
        const length = readU32(header, 0);
        this.#frameChecksum = readU32(header, 4);
        if (length > this.#maxFrameBytes) {
          this.#framingErrors++;
          return this.#fail(new ChannelFrameError('tcp', length, this.#maxFrameBytes, 'over the limit'));
        }
        this.#frameLength = length;
      }
      if (this.#bufferedBytes < this.#frameLength) return undefined;
      const length = this.#frameLength;
      // A copy, not a view of the socket's buffer: the message owns its bytes (a view would keep
      // the whole read buffer alive, and a Buffer's slice() does not copy — a trap for receivers).
      const payload = this.#take(length, new Uint8Array(length));
      const computed = crc32c(payload, 0, length, length);
      if (computed !== this.#frameChecksum) {
        this.#checksumFailures++;
        return this.#fail(new ChannelChecksumError('tcp', length, this.#frameChecksum, computed));
      }
      this.#frameLength = -1;
      onMessage(payload);
    }
  }

  #fail(error: ChannelReceiveError): ChannelReceiveError {
    this.#error = error;
    this.#pieces = [];
    this.#bufferedBytes = 0;
    return error;
  }

  /**
   * Removes the next `length` buffered bytes: into `copy` when given (its length must be `length`),
   * else as a view when they lie in one piece, else as a fresh copy.
   */
  #take(length: number, copyInto: Uint8Array | undefined): Uint8Array {
    if (length === 0) return copyInto ?? new Uint8Array(0);
    this.#bufferedBytes -= length;
    const first = this.#pieces[0]!;
    if (copyInto === undefined && first.length - this.#offset >= length) {
      const view = first.subarray(this.#offset, this.#offset + length);
      this.#offset += length;
      if (this.#offset === first.length) {
        this.#pieces.shift();
        this.#offset = 0;
      }
      return view;
    }
    const copy = copyInto ?? new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const piece = this.#pieces[0]!;
      const count = Math.min(piece.length - this.#offset, length - filled);
      copy.set(piece.subarray(this.#offset, this.#offset + count), filled);
      filled += count;
      this.#offset += count;
      if (this.#offset === piece.length) {
        this.#pieces.shift();
        this.#offset = 0;
      }
    }
    return copy;
  }
}

function writeU32(target: Uint8Array, offset: number, value: number): void {
  target[offset] = value & 0xff;
  target[offset + 1] = (value >>> 8) & 0xff;
  target[offset + 2] = (value >>> 16) & 0xff;
  target[offset + 3] = value >>> 24;
}

function readU32(source: Uint8Array, offset: number): number {
  return (
    (source[offset]! |
      (source[offset + 1]! << 8) |
      (source[offset + 2]! << 16) |
      (source[offset + 3]! << 24)) >>>
    0
  );
}
