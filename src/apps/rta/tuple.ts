/**
 * RTA's input tuple and its wire form (iPipe §5, "The applications": RTA processes tuples from a
 * Twitter data set; "tuples per request grow with packet size").
 *
 * A tuple is a tweet reduced to what the pipeline needs: its event time, its author, one hashtag
 * (the key the counters count) and its text (what the filter's regular expression matches).
 * A request carries a batch of them in one `ingest` message:
 *
 *   ingest = tag u8 | count u32 | tuple × count
 *   tuple  = timestampMs f64 | userId u32 | hashtag (u32 length, UTF-8) | text (u32 length, UTF-8)
 *
 * so a tuple costs 20 bytes plus its hashtag and text. `packTuples` fills each request up to the
 * packet size the experiment runs at (64/256/512/1024 B): one tuple per 64-byte packet (the frame
 * is padded to the minimum), about 2, 6 and 14 generated tuples at 256, 512 and 1024 bytes.
 */

import { field, utf8ByteLength } from '../../actor/index.ts';

/** One tweet-like tuple. */
export interface RtaTuple {
  /** Event time in ms (any epoch; the windows are aligned to multiples of the slide). */
  readonly timestampMs: number;
  readonly userId: number;
  /** The key: counted, ranked. At most MAX_HASHTAG_BYTES of UTF-8. */
  readonly hashtag: string;
  /** What the filter matches. At most MAX_TEXT_BYTES of UTF-8. */
  readonly text: string;
}

/** Longest hashtag, in UTF-8 bytes (the ranking records reserve this much per entry). */
export const MAX_HASHTAG_BYTES = 48;
/** Longest tweet text, in UTF-8 bytes (280 characters of mostly 2-byte script). */
export const MAX_TEXT_BYTES = 560;
/** Most tuples one ingest request may carry (a 1472-byte datagram holds far fewer). */
export const MAX_TUPLES_PER_REQUEST = 256;

/** Ethernet 14 + IPv4 20 + UDP 8 + ipipe wire header 24 (as the simulator's FRAME_OVERHEAD_BYTES). */
export const REQUEST_OVERHEAD_BYTES = 66;
/** Bytes of an ingest message before its tuples: the variant tag and the list count. */
export const INGEST_HEADER_BYTES = 5;
/** Fixed bytes of one tuple on the wire: f64 + u32 + two u32 string lengths. */
export const TUPLE_FIXED_BYTES = 20;

/** The tuple as a codec field (used by the filter's `ingest` message). */
export const tupleField = field.struct({
  timestampMs: field.f64(),
  userId: field.u32(),
  hashtag: field.string({ maxBytes: MAX_HASHTAG_BYTES }),
  text: field.string({ maxBytes: MAX_TEXT_BYTES }),
});

/** Bytes `tuple` takes inside an ingest message (its hashtag and text must be encodable). */
export function tupleWireBytes(tuple: RtaTuple): number {
  return TUPLE_FIXED_BYTES + utf8ByteLength(tuple.hashtag) + utf8ByteLength(tuple.text);
}

/**
 * Why `tuple` cannot travel, or undefined when it can: the checks the codec would make, done up
 * front so a reader can report the line instead of a request failing later.
 */
export function tupleProblem(tuple: RtaTuple): string | undefined {
  if (!Number.isFinite(tuple.timestampMs))
    return `timestampMs must be a finite number, got ${tuple.timestampMs}`;
  if (!(Number.isInteger(tuple.userId) && tuple.userId >= 0 && tuple.userId <= 0xffff_ffff)) {
    return `userId must be an integer in [0, 2^32), got ${tuple.userId}`;
  }
  const tagBytes = utf8ByteLength(tuple.hashtag);
  if (tagBytes <= 0) return tagBytes === 0 ? 'hashtag is empty' : 'hashtag holds a lone UTF-16 surrogate';
  if (tagBytes > MAX_HASHTAG_BYTES) {
    return `hashtag is ${tagBytes} UTF-8 bytes, over the limit of ${MAX_HASHTAG_BYTES}`;
  }
  const textBytes = utf8ByteLength(tuple.text);
  if (textBytes < 0) return 'text holds a lone UTF-16 surrogate';
  if (textBytes > MAX_TEXT_BYTES)
    return `text is ${textBytes} UTF-8 bytes, over the limit of ${MAX_TEXT_BYTES}`;
  return undefined;
}

/**
 * Splits `tuples` (in order) into requests whose frame fits `packetBytes`: each request takes as
 * many tuples as fit, and at least one (a tuple larger than the packet travels alone, in a larger
 * frame — the simulator charges the real frame size). Order is kept, so a source that sends the
 * batches in order delivers its tuples in event-time order.
 */
export function packTuples(
  tuples: readonly RtaTuple[],
  packetBytes: number,
  maxTuples = MAX_TUPLES_PER_REQUEST,
): RtaTuple[][] {
  const budget = packetBytes - REQUEST_OVERHEAD_BYTES - INGEST_HEADER_BYTES;
  const batches: RtaTuple[][] = [];
  let current: RtaTuple[] = [];
  let used = 0;
  for (const tuple of tuples) {
    const bytes = tupleWireBytes(tuple);
    if (current.length > 0 && (used + bytes > budget || current.length >= maxTuples)) {
      batches.push(current);
      current = [];
      used = 0;
    }
    current.push(tuple);
    used += bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** The request frame's size on the wire for a batch (at least Ethernet's 64-byte minimum). */
export function requestFrameBytes(batch: readonly RtaTuple[]): number {
  let bytes = REQUEST_OVERHEAD_BYTES + INGEST_HEADER_BYTES;
  for (const tuple of batch) bytes += tupleWireBytes(tuple);
  return Math.max(64, bytes);
}
