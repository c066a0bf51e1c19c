/**
 * The codec's public errors (iPipe §3 "Host–NIC messaging": bytes that arrive over a ring or a
 * wire may be truncated or corrupted, and the receiver must say precisely why it refused them).
 *
 * Both extend classes of src/errors.ts, so `instanceof DecodeError` and the stable codes keep
 * working; they add the machine-readable detail a hot path or a test needs without parsing text.
 */

import { DecodeError, EncodeError, SchemaError } from '../errors.ts';

/** Why a decode failed: one stable word per cause, so callers can count and test them. */
export type DecodeFailureReason =
  | 'truncated'
  | 'unknown-tag'
  | 'trailing-bytes'
  | 'too-long'
  | 'invalid-utf8'
  | 'out-of-range';

/**
 * Bytes that do not decode as a message of the codec. `reason` is one stable word per cause;
 * `offset` is where in the input the problem was found; `path` names the field (e.g.
 * `put.entries[3].key`, empty when the problem is in the frame itself: tag, length, trailing bytes).
 */
export class CodecDecodeError extends DecodeError {
  readonly reason: DecodeFailureReason;
  readonly offset: number;
  readonly path: string;
  constructor(reason: DecodeFailureReason, offset: number, path: string, detail: string) {
    super(`${reason} at byte ${offset}${path === '' ? '' : ` in ${path}`}: ${detail}`);
    this.reason = reason;
    this.offset = offset;
    this.path = path;
  }
}

/**
 * A message value that does not fit its schema: unknown type, wrong value type, out of range, over
 * a limit, or a target buffer too small. `path` names the field (`put.entries[3].key`), empty when
 * the problem is the message as a whole.
 */
export class CodecEncodeError extends EncodeError {
  readonly path: string;
  constructor(path: string, detail: string) {
    super(path === '' ? detail : `${path}: ${detail}`);
    this.path = path;
  }
}

/**
 * A message schema (or field) that cannot be built: a bad limit, a reserved field name, too many
 * variants. Raised once, when the module defining the schema loads.
 */
export class MessageSchemaError extends SchemaError {}
