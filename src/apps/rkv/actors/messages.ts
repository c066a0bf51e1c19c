/**
 * The messages of RKV's four actors on the simulated platform (iPipe §5 "RKV": a consensus actor
 * and a memtable actor on the NIC, an SSTable reader and a compaction actor pinned to the host).
 * One codec for all of them, as DT's actors share one: any definition narrows any ref.
 *
 *   client ─put─▶ consensus(leader) ─accept─▶ consensus(followers) ─accepted─▶ leader
 *          leader: majority ⇒ chosen ⇒ ─apply(origin)─▶ memtable ─put-ok─▶ client   (and ─commit─▶ followers)
 *   client ─get─▶ memtable(leader): hit ─value─▶ client; miss ─get─▶ sstable reader ─value─▶ client
 *   memtable full ⇒ ─flush(run)─▶ compaction: level-0 table on the modelled disk ─flushed─▶ memtable
 *
 * Keys are 16 bytes (`rkvKey`: "k" and 15 decimal digits of the key's index), so a key names its
 * index in the pre-loaded data set (see sim-disk.ts).
 */

import { field, type MessageOf, messages } from '../../../actor/index.ts';

/** Bytes of every key of the workload (the paper's 16-byte keys). */
export const RKV_KEY_BYTES = 16;
/** Longest key the wire carries. */
export const MAX_KEY_BYTES = 64;
/** Largest value the wire carries. */
export const MAX_VALUE_BYTES = 8192;
/** Largest flushed memtable run one message carries (a frozen memtable, encoded). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;
/** Longest actor name in a setup message. */
const MAX_NAME_BYTES = 63;
/** Most replicas in a group (ballots reserve 1024 ids; the codec and bit masks keep ≤ 16). */
export const MAX_REPLICAS = 16;
/** Most entries one promise reports, or one load carries. */
const MAX_LIST_ITEMS = 1 << 16;

const KEY = field.bytes({ maxBytes: MAX_KEY_BYTES });
const VALUE = field.bytes({ maxBytes: MAX_VALUE_BYTES });
const NAME = field.string({ maxBytes: MAX_NAME_BYTES });
/** Slots, ballots and counts: integers below 2^53 carried as f64. */
const COUNT = field.f64();
const REPLICA = field.u8();
/** A client's origin, encoded (origin-codec.ts); empty when nobody waits. */
const ORIGIN = field.bytes({ maxBytes: 512 });

const PROMISED_ENTRY = field.struct({ slot: COUNT, ballot: COUNT, key: KEY, value: VALUE });
const ITEM = field.struct({ key: KEY, value: VALUE });

/** The RKV codec: clients, replicas, the memtable path, the storage path and setup. */
export const rkvMessages = messages({
  // ---- clients ------------------------------------------------------------------------------
  /** Read a key; sent to the leader's memtable actor (linearizable through the leader). */
  get: { key: KEY },
  /** Write a key; sent to the leader's consensus actor (committed through Multi-Paxos first). */
  put: { key: KEY, value: VALUE },
  /** A get's answer (from the memtable actor on a hit, the SSTable reader on a miss). */
  value: { found: field.bool(), value: VALUE },
  /** A put's answer, once the command is chosen and applied to the leader's memtable. */
  'put-ok': { slot: COUNT },
  /** A request refused (a put at a replica that does not lead, a get before setup). */
  refused: { reason: field.string({ maxBytes: 200 }) },

  // ---- setup (each answered with `ready`) --------------------------------------------------------
  'consensus-setup': {
    replica: REPLICA,
    leader: REPLICA,
    /** The consensus actors' instance names, by replica id. */
    replicas: field.list(NAME, { maxItems: MAX_REPLICAS }),
    memtable: NAME,
  },
  'memtable-setup': {
    /** Flush (minor compaction) once the active memtable holds this many bytes. */
    limitBytes: COUNT,
    sstable: NAME,
    compaction: NAME,
  },
  /** Pre-existing committed data loaded into the memtable before the run (every replica alike). */
  'memtable-load': { items: field.list(ITEM, { maxItems: MAX_LIST_ITEMS }), firstSequence: COUNT },
  'sstable-setup': { disk: NAME },
  'compaction-setup': { disk: NAME, memtable: NAME, level0Trigger: field.u8() },
  ready: {},

  // ---- Multi-Paxos between consensus actors ---------------------------------------------------
  /** Phase 1a. */
  prepare: { from: REPLICA, ballot: COUNT },
  /** Phase 1b: the acceptor's accepted, unapplied entries. */
  promise: {
    from: REPLICA,
    ballot: COUNT,
    entries: field.list(PROMISED_ENTRY, { maxItems: MAX_LIST_ITEMS }),
  },
  /** Phase 2a for one slot; piggybacks the leader's commit point. */
  accept: { from: REPLICA, ballot: COUNT, slot: COUNT, key: KEY, value: VALUE, commitThrough: COUNT },
  /** Phase 2b. */
  accepted: { from: REPLICA, ballot: COUNT, slot: COUNT },
  /** A prepare or accept below the acceptor's promise. */
  reject: { from: REPLICA, ballot: COUNT, promised: COUNT },
  /** The learn round: every slot ≤ commitThrough is chosen. */
  commit: { from: REPLICA, ballot: COUNT, commitThrough: COUNT },

  // ---- consensus → memtable -------------------------------------------------------------------
  /** One committed entry, in slot order; `origin` is the client to answer (leader only). */
  apply: { slot: COUNT, key: KEY, value: VALUE, origin: ORIGIN },

  // ---- the storage path -----------------------------------------------------------------------
  /** A frozen memtable, as a sorted run (sim-disk.ts encodeRun), for the compaction actor. */
  flush: { table: COUNT, entries: COUNT, run: field.bytes({ maxBytes: MAX_RUN_BYTES }) },
  /** The compaction actor wrote table `table`: the memtable may drop its frozen copy. */
  flushed: { table: COUNT },
});

/** Any RKV message. */
export type RkvMessage = MessageOf<typeof rkvMessages>;
/** One variant, by type. */
export type RkvMsg<T extends RkvMessage['type']> = Extract<RkvMessage, { type: T }>;

const encoder = new TextEncoder();

/** The 16-byte key of index `index` (0 … 10^15 − 1): "k" and 15 zero-padded digits. */
export function rkvKey(index: number): Uint8Array {
  if (!(Number.isSafeInteger(index) && index >= 0 && index < 1e15)) {
    throw new RangeError(`key index must be an integer in [0, 1e15), got ${index}`);
  }
  return encoder.encode(`k${String(index).padStart(RKV_KEY_BYTES - 1, '0')}`);
}

/** The index a workload key names, or undefined for a key not of the `rkvKey` form. */
export function rkvKeyIndex(key: Uint8Array): number | undefined {
  if (key.length !== RKV_KEY_BYTES || key[0] !== 0x6b) return undefined;
  let index = 0;
  for (let i = 1; i < RKV_KEY_BYTES; i++) {
    const digit = (key[i] as number) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    index = index * 10 + digit;
  }
  return index;
}
