/**
 * Every message of the DT application as one tagged union with a binary codec (iPipe §5 "DT",
 * after FaSST's OCC + 2PC; iPipe §3 "Actors": porting an app means defining its request formats).
 *
 * One union for all roles keeps the pure protocol logic, the deterministic simulator and the
 * actors on the same types: the coordinator, participant and logging actors all use `dtMessages`
 * as their `messages` and `replies` codec, so a participant's `ctx.reply` to a coordinator request
 * is a coordinator message by construction. Each role's logic narrows to the variants it handles.
 *
 * The flow of one transaction (numbers are the paper's steps):
 *
 *   client ──read──────────▶ participant            execution: reads with versions (FaSST)
 *   client ──commit-request─▶ coordinator
 *            coordinator ──lock────▶ participants    (1) lock the write set, abort if locked
 *            coordinator ──validate─▶ participants   (2) re-read the read set's versions
 *            coordinator ──log-append─▶ logger       (3) the commit point: fsync'd record
 *            coordinator ──commit──▶ participants    (4) apply, bump versions, unlock, ack
 *   client ◀─txn-outcome── coordinator               after every commit-ack
 *
 * A lock is owned by (client, seq, epoch): `epoch` is the coordinator incarnation that took it, so a
 * decision from one incarnation never releases a lock another incarnation's attempt holds.
 */

import { field, type MessageOf, messages } from '../../actor/index.ts';

/** Longest key, UTF-8 bytes (FaSST uses 8-byte keys; we allow readable ones). */
export const MAX_KEY_BYTES = 64;
/** Largest value the wire format carries; a cluster may configure a lower limit. */
export const MAX_VALUE_BYTES = 4096;
/** Most keys in a transaction's read set or write set. */
export const MAX_TXN_ITEMS = 64;
/** Most entries in one recovery or checkpoint list. */
export const MAX_RECOVERY_ITEMS = 1 << 16;
/** Longest reason string in an outcome or reply. */
export const MAX_REASON_BYTES = 240;
/** Longest actor name or file path in a setup message. */
export const MAX_NAME_BYTES = 1024;

const KEY = field.string({ maxBytes: MAX_KEY_BYTES });
const VALUE = field.bytes({ maxBytes: MAX_VALUE_BYTES });
const REASON = field.string({ maxBytes: MAX_REASON_BYTES });
const NAME = field.string({ maxBytes: MAX_NAME_BYTES });
const U32 = field.u32();
const SHARD = field.u16();
/** Versions and nanosecond times: integers below 2^53 carried as f64 (no bigint on hot paths). */
const COUNT = field.f64();

const OWNER = { client: U32, seq: U32, epoch: U32 } as const;

const WRITE_ITEM = field.struct({ shard: SHARD, key: KEY, value: VALUE });
const READ_ITEM = field.struct({ shard: SHARD, key: KEY, version: COUNT });
const SHARD_WRITE = field.struct({ key: KEY, value: VALUE, version: COUNT });
const LOGGED_WRITE = field.struct({ shard: SHARD, key: KEY, value: VALUE, version: COUNT });
const CLIENT_SEQ = field.struct({ client: U32, seq: U32 });
const TXN_REF = field.struct({ client: U32, seq: U32, epoch: U32 });
const LOGGED_COMMIT = field.struct({
  client: U32,
  seq: U32,
  epoch: U32,
  writes: field.list(LOGGED_WRITE, { maxItems: MAX_TXN_ITEMS }),
});

/** The DT codec: every variant of every role, setup and timers included. */
export const dtMessages = messages({
  // ---- client ↔ participant: execution-phase reads ------------------------------------------
  read: { client: U32, seq: U32, shard: SHARD, key: KEY },
  'read-reply': {
    client: U32,
    seq: U32,
    shard: SHARD,
    key: KEY,
    status: field.oneOf(['ok', 'wrong-shard']),
    found: field.bool(),
    value: VALUE,
    version: COUNT,
    locked: field.bool(),
  },
  // ---- client ↔ coordinator -------------------------------------------------------------------
  'commit-request': {
    client: U32,
    seq: U32,
    reads: field.list(READ_ITEM, { maxItems: MAX_TXN_ITEMS }),
    writes: field.list(WRITE_ITEM, { maxItems: MAX_TXN_ITEMS }),
  },
  'txn-outcome': {
    client: U32,
    seq: U32,
    outcome: field.oneOf(['committed', 'aborted', 'invalid']),
    reason: REASON,
  },
  // ---- coordinator ↔ participant --------------------------------------------------------------
  lock: { ...OWNER, shard: SHARD, keys: field.list(KEY, { maxItems: MAX_TXN_ITEMS }) },
  'lock-reply': {
    ...OWNER,
    shard: SHARD,
    ok: field.bool(),
    reason: REASON,
    /** The version of each key at lock time, aligned with the request's keys (empty when !ok). */
    versions: field.list(COUNT, { maxItems: MAX_TXN_ITEMS }),
  },
  validate: {
    ...OWNER,
    shard: SHARD,
    keys: field.list(KEY, { maxItems: MAX_TXN_ITEMS }),
    /** The versions the client read, aligned with keys. */
    versions: field.list(COUNT, { maxItems: MAX_TXN_ITEMS }),
  },
  'validate-reply': { ...OWNER, shard: SHARD, ok: field.bool(), reason: REASON },
  commit: { ...OWNER, shard: SHARD, writes: field.list(SHARD_WRITE, { maxItems: MAX_TXN_ITEMS }) },
  'commit-ack': { ...OWNER, shard: SHARD },
  abort: { ...OWNER, shard: SHARD },
  'abort-ack': { ...OWNER, shard: SHARD },
  /** A participant whose lock outlived its lease asks the coordinator how the owner ended. */
  'status-query': { ...OWNER, shard: SHARD },
  /** The owner is at its commit point (logging) or the coordinator is recovering: ask again later. */
  'status-pending': { ...OWNER, shard: SHARD },
  // ---- coordinator ↔ logging actor ------------------------------------------------------------
  'log-append': { ...OWNER, writes: field.list(LOGGED_WRITE, { maxItems: MAX_TXN_ITEMS }) },
  'log-durable': { ...OWNER },
  /** The append came from an older coordinator incarnation (fenced by a newer epoch record). */
  'log-rejected': { ...OWNER, currentEpoch: U32 },
  'log-checkpoint': {
    epoch: U32,
    /** Latest committed seq of every client (the response cache's durable part). */
    clients: field.list(CLIENT_SEQ, { maxItems: MAX_RECOVERY_ITEMS }),
    /** Committed transactions every participant has acknowledged: their records may go. */
    finished: field.list(TXN_REF, { maxItems: MAX_RECOVERY_ITEMS }),
  },
  /** A (re)started coordinator asks for a new epoch and the log's contents; `nonce` names the incarnation. */
  'log-recover': { nonce: U32 },
  'log-recovered': {
    nonce: U32,
    epoch: U32,
    clients: field.list(CLIENT_SEQ, { maxItems: MAX_RECOVERY_ITEMS }),
    /** Every commit record the log still holds: committed, perhaps not yet applied everywhere. */
    pending: field.list(LOGGED_COMMIT, { maxItems: MAX_RECOVERY_ITEMS }),
  },
  // ---- timers (an actor's messages to itself) -------------------------------------------------
  'coordinator-tick': {},
  'participant-tick': {},
  /** Group commit: fsync if append number `upTo` is not yet durable, then acknowledge it. */
  'log-flush': { ...OWNER, upTo: COUNT },
  // ---- actor setup (sent once by whoever deploys the actors) ----------------------------------
  'coordinator-setup': {
    /** Participant actor names, index = shard. */
    participants: field.list(NAME, { maxItems: 1024 }),
    logger: NAME,
    retryNs: COUNT,
    txnTimeoutNs: COUNT,
    logLimitRecords: U32,
    maxValueBytes: U32,
    nonce: U32,
  },
  'participant-setup': { shard: SHARD, shardCount: SHARD, coordinator: NAME, leaseNs: COUNT },
  'logger-setup': {
    /** `file:<absolute path>` for a real file, `memory:<name>` for a registered in-memory disk. */
    storage: NAME,
    /** The coordinator's actor name (answers normally go back as replies; this is the fallback). */
    coordinator: NAME,
    groupCommitNs: COUNT,
    recovery: field.oneOf(['refuse-corruption', 'discard-after-corruption']),
  },
  'participant-load': {
    items: field.list(field.struct({ key: KEY, value: VALUE }), { maxItems: MAX_RECOVERY_ITEMS }),
  },
});

/** Any DT message. */
export type DtMessage = MessageOf<typeof dtMessages>;
/** The variant names. */
export type DtMessageType = DtMessage['type'];
/** The variant called `T`. */
export type DtMsg<T extends DtMessageType> = Extract<DtMessage, { type: T }>;

/** Messages a participant handles. */
export type ParticipantInput = DtMsg<
  | 'read'
  | 'lock'
  | 'validate'
  | 'commit'
  | 'abort'
  | 'status-pending'
  | 'participant-tick'
  | 'participant-load'
>;
/** Messages a coordinator handles. */
export type CoordinatorInput = DtMsg<
  | 'commit-request'
  | 'lock-reply'
  | 'validate-reply'
  | 'commit-ack'
  | 'abort-ack'
  | 'status-query'
  | 'log-durable'
  | 'log-rejected'
  | 'log-recovered'
  | 'coordinator-tick'
>;
/** Messages the logging actor handles. */
export type LoggerInput = DtMsg<'log-append' | 'log-checkpoint' | 'log-recover' | 'log-flush'>;
/** Messages a client receives. */
export type ClientInput = DtMsg<'read-reply' | 'txn-outcome'>;

const PARTICIPANT_TYPES: ReadonlySet<string> = new Set([
  'read',
  'lock',
  'validate',
  'commit',
  'abort',
  'status-pending',
  'participant-tick',
  'participant-load',
]);
const COORDINATOR_TYPES: ReadonlySet<string> = new Set([
  'commit-request',
  'lock-reply',
  'validate-reply',
  'commit-ack',
  'abort-ack',
  'status-query',
  'log-durable',
  'log-rejected',
  'log-recovered',
  'coordinator-tick',
]);
const LOGGER_TYPES: ReadonlySet<string> = new Set([
  'log-append',
  'log-checkpoint',
  'log-recover',
  'log-flush',
]);
const CLIENT_TYPES: ReadonlySet<string> = new Set(['read-reply', 'txn-outcome']);

/** True for the messages a participant handles. */
export function isParticipantInput(message: DtMessage): message is ParticipantInput {
  return PARTICIPANT_TYPES.has(message.type);
}
/** True for the messages a coordinator handles. */
export function isCoordinatorInput(message: DtMessage): message is CoordinatorInput {
  return COORDINATOR_TYPES.has(message.type);
}
/** True for the messages the logging actor handles. */
export function isLoggerInput(message: DtMessage): message is LoggerInput {
  return LOGGER_TYPES.has(message.type);
}
/** True for the messages a client handles. */
export function isClientInput(message: DtMessage): message is ClientInput {
  return CLIENT_TYPES.has(message.type);
}
