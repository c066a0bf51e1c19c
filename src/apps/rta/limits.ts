/**
 * RTA's size limits (iPipe §5, "The applications": RTA), in one place so the message schemas, the
 * configuration and the actors agree. They keep every message inside one datagram and one ring
 * slot of the live platform (≤ 1472 bytes).
 */

/** Most entries a ranking holds: a `ranking` reply of 20 × (48-byte key + 8) still fits one datagram. */
export const MAX_TOP_N = 20;
/** The default n of the rankings (also what the ranker's cost hook assumes it holds). */
export const DEFAULT_TOP_N = 10;
/** Most panes (slides per window) a counter keeps per window. */
export const MAX_PANES_PER_WINDOW = 1000;
/** Longest filter pattern, in UTF-8 bytes (what the configure message carries). */
export const MAX_PATTERN_BYTES = 256;
/** Most instances of one kind (filters, counters, rankers). */
export const MAX_INSTANCES = 64;
/** Default counters and rankers of the topology (also what cost hooks assume a filter and a tick feed). */
export const DEFAULT_COUNTERS = 2;
export const DEFAULT_RANKERS = 2;
