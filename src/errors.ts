/**
 * The one registry of ipipe's typed errors.
 *
 * Every error the library throws on purpose is an `IpipeError` with a stable machine code
 * `IPIPE_ERR_<AREA>_<WHAT>` (listed, with what to do about each, in docs/errors.md). Expected
 * outcomes (a full mailbox, an infeasible plan) are returned as discriminated unions instead;
 * these classes are for input the caller must fix and for invariants the caller broke.
 * A message says what was wrong and what to do, so the CLI can print it as is.
 */

/** Every code the library can throw. Keep in step with docs/errors.md (a test checks it). */
export const ERROR_CODES = [
  'IPIPE_ERR_CONFIG_INVALID',
  'IPIPE_ERR_ACTOR_INVALID_DEFINITION',
  'IPIPE_ERR_ACTOR_UNKNOWN',
  'IPIPE_ERR_ACTOR_DUPLICATE',
  'IPIPE_ERR_ACTOR_DEREGISTERED',
  'IPIPE_ERR_ACTOR_HANDLER_FAILED',
  'IPIPE_ERR_ACTOR_NO_ORIGIN',
  'IPIPE_ERR_ACTOR_IDS_EXHAUSTED',
  'IPIPE_ERR_CODEC_INVALID_SCHEMA',
  'IPIPE_ERR_CODEC_DECODE',
  'IPIPE_ERR_CODEC_ENCODE',
  'IPIPE_ERR_MAILBOX_FULL',
  'IPIPE_ERR_DMO_OUT_OF_BOUNDS',
  'IPIPE_ERR_DMO_FOREIGN_OBJECT',
  'IPIPE_ERR_DMO_UNKNOWN_OBJECT',
  'IPIPE_ERR_DMO_REGION_EXHAUSTED',
  'IPIPE_ERR_DMO_DOMAIN_FULL',
  'IPIPE_ERR_DMO_INVALID_SIZE',
  'IPIPE_ERR_DMO_CORRUPT_SNAPSHOT',
  'IPIPE_ERR_DMO_COLLECTION_FORMAT',
  'IPIPE_ERR_SCHED_INVALID_SETTINGS',
  'IPIPE_ERR_SCHED_INVALID_STATE',
  'IPIPE_ERR_SIM_INVALID_TIME',
  'IPIPE_ERR_SIM_INVALID_KIND',
  'IPIPE_ERR_NET_TIMEOUT',
  'IPIPE_ERR_NET_REMOTE',
  'IPIPE_ERR_NET_CLOSED',
  'IPIPE_ERR_NODE_OVERLOADED',
  'IPIPE_ERR_NODE_STOPPED',
  'IPIPE_ERR_NODE_HOST_UNREACHABLE',
  'IPIPE_ERR_NODE_PLACEMENT_MISMATCH',
  'IPIPE_ERR_CHANNEL_CHECKSUM',
  'IPIPE_ERR_CHANNEL_FRAME',
  'IPIPE_ERR_CHANNEL_MESSAGE_TOO_LARGE',
  'IPIPE_ERR_CLI_USAGE',
  'IPIPE_ERR_EXPERIMENT_SETUP',
  'IPIPE_ERR_EXPERIMENT_NO_CAPACITY',
  // applications (src/apps/*): each app's own errors.ts defines the classes
  'IPIPE_ERR_LSM_CLOSED',
  'IPIPE_ERR_LSM_CORRUPT_MANIFEST',
  'IPIPE_ERR_LSM_CORRUPT_TABLE',
  'IPIPE_ERR_LSM_INVALID_OPTIONS',
  'IPIPE_ERR_LSM_INVALID_SEQUENCE',
  'IPIPE_ERR_LSM_IO',
  'IPIPE_ERR_LSM_KEY_TOO_LARGE',
  'IPIPE_ERR_LSM_LOCKED',
  'IPIPE_ERR_LSM_MISSING_TABLE',
  'IPIPE_ERR_LSM_UNSORTED_INPUT',
  'IPIPE_ERR_LSM_VALUE_TOO_LARGE',
  'IPIPE_ERR_PAXOS_INVALID_CONFIG',
  'IPIPE_ERR_PAXOS_INVALID_HISTORY',
  'IPIPE_ERR_PAXOS_INVALID_TIME',
  'IPIPE_ERR_PAXOS_SAFETY_VIOLATION',
  'IPIPE_ERR_PAXOS_SIMULATED_CRASH',
  'IPIPE_ERR_PAXOS_STORAGE_CORRUPT',
  'IPIPE_ERR_PAXOS_STORAGE_IO',
  'IPIPE_ERR_RESP_INVALID_LIMITS',
  'IPIPE_ERR_RESP_LISTEN',
  'IPIPE_ERR_RESP_NOT_LEADER',
  'IPIPE_ERR_RESP_UNAVAILABLE',
  'IPIPE_ERR_RESP_CLIENT',
  'IPIPE_ERR_RESP_UNSUPPORTED',
  'IPIPE_ERR_RESP_SCAN_CURSOR_EXPIRED',
  'IPIPE_ERR_CLUSTER_INVALID_OPTIONS',
  'IPIPE_ERR_CLUSTER_DATA_DIR_IN_USE',
  'IPIPE_ERR_CLUSTER_START_FAILED',
  'IPIPE_ERR_CLUSTER_STORAGE',
  'IPIPE_ERR_CLUSTER_UNAVAILABLE',
  'IPIPE_ERR_CLUSTER_SCAN_STALLED',
  'IPIPE_ERR_CLUSTER_NOT_RUNNING',
  'IPIPE_ERR_CLUSTER_FRAME',
  'IPIPE_ERR_DT_INVALID_TRANSACTION',
  'IPIPE_ERR_DT_LOG_CORRUPT',
  'IPIPE_ERR_DT_LOG_IO',
  'IPIPE_ERR_DT_TRANSACTION_STATE',
  'IPIPE_ERR_RTA_BAD_CONFIG',
  'IPIPE_ERR_RTA_BAD_PATTERN',
  'IPIPE_ERR_RTA_INPUT',
  'IPIPE_ERR_RTA_NOT_CONFIGURED',
  'IPIPE_ERR_RTA_NO_VALID_TUPLES',
  'IPIPE_ERR_RTA_TOPOLOGY',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Base class: `instanceof IpipeError` catches everything ipipe throws deliberately. */
export class IpipeError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A user-supplied configuration (settings, profile, CLI option file) failed validation. */
export class ConfigError extends IpipeError {
  /** Where in the input the problem is, e.g. `scheduler.alpha`. */
  readonly path: string;
  constructor(path: string, message: string, options?: ErrorOptions) {
    super('IPIPE_ERR_CONFIG_INVALID', path ? `${path}: ${message}` : message, options);
    this.path = path;
  }
}

/** An actor definition that cannot be registered (bad name, missing handler, bad hints). */
export class ActorDefinitionError extends IpipeError {
  constructor(actorName: string, message: string) {
    super('IPIPE_ERR_ACTOR_INVALID_DEFINITION', `actor "${actorName}": ${message}`);
  }
}

/** A message addressed to an actor id that no table knows. */
export class UnknownActorError extends IpipeError {
  readonly actorId: number;
  constructor(actorId: number, hint = 'register the actor first, or check the id the sender used') {
    super('IPIPE_ERR_ACTOR_UNKNOWN', `unknown actor id ${actorId}: ${hint}`);
    this.actorId = actorId;
  }
}

/** Two actors registered under the same id or name. */
export class DuplicateActorError extends IpipeError {
  constructor(what: string) {
    super('IPIPE_ERR_ACTOR_DUPLICATE', `${what} is already registered: pick another name or id`);
  }
}

/** The actor was stopped (watchdog, isolation violation, or explicit delete) and takes no more work. */
export class ActorDeregisteredError extends IpipeError {
  readonly actorId: number;
  constructor(actorId: number, reason: string) {
    super(
      'IPIPE_ERR_ACTOR_DEREGISTERED',
      `actor ${actorId} was deregistered (${reason}); its requests are refused`,
    );
    this.actorId = actorId;
  }
}

/** `reply()` while handling a message that has no requester (a timer, an init-time send). */
export class NoOriginError extends IpipeError {
  constructor(actorName: string, message: string) {
    super('IPIPE_ERR_ACTOR_NO_ORIGIN', `actor "${actorName}": ${message}`);
  }
}

/** Every actor id is taken. */
export class ActorIdsExhaustedError extends IpipeError {
  constructor(range: string) {
    super(
      'IPIPE_ERR_ACTOR_IDS_EXHAUSTED',
      `no free actor id in ${range}: remove actors before registering more`,
    );
  }
}

/** A message schema that cannot be built (bad limit, reserved name, too many variants). */
export class SchemaError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_CODEC_INVALID_SCHEMA', `invalid message schema: ${message}`);
  }
}

/** Bytes that do not decode as a message of the expected codec. */
export class DecodeError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_CODEC_DECODE', `cannot decode message: ${message}`);
  }
}

/** A value that does not fit its declared field type (wrong type, out of range, too long). */
export class EncodeError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_CODEC_ENCODE', `cannot encode message: ${message}`);
  }
}

/** A bounded mailbox refused a push. Thrown only by the throwing variant; `tryPush` returns false. */
export class MailboxFullError extends IpipeError {
  constructor(capacity: number) {
    super(
      'IPIPE_ERR_MAILBOX_FULL',
      `mailbox full (capacity ${capacity}): slow the sender or raise the capacity`,
    );
  }
}

/** A read or write outside an object's bytes. */
export class DmoOutOfBoundsError extends IpipeError {
  constructor(objectId: number, offset: number, length: number, size: number) {
    super(
      'IPIPE_ERR_DMO_OUT_OF_BOUNDS',
      `access [${offset}, ${offset + length}) is outside object ${objectId} of ${size} bytes: ` +
        'check the offset and length, or allocate a larger object',
    );
  }
}

/** An actor tried to use an object id that belongs to another actor. */
export class DmoForeignObjectError extends IpipeError {
  constructor(objectId: number, ownerActorId: number, callerActorId: number) {
    super(
      'IPIPE_ERR_DMO_FOREIGN_OBJECT',
      `object ${objectId} belongs to actor ${ownerActorId}, not to actor ${callerActorId}: ` +
        'actors share no memory; send the data in a message instead',
    );
  }
}

/** An object id that names no live object (never allocated, freed, or a stale id after reuse). */
export class DmoUnknownObjectError extends IpipeError {
  constructor(objectId: number, why: string) {
    super(
      'IPIPE_ERR_DMO_UNKNOWN_OBJECT',
      `object ${objectId} is not live (${why}): do not use ids after free`,
    );
  }
}

/** The actor's region has no room for the allocation. */
export class DmoRegionExhaustedError extends IpipeError {
  readonly requestedBytes: number;
  constructor(actorId: number, requestedBytes: number, regionBytes: number, freeBytes: number) {
    super(
      'IPIPE_ERR_DMO_REGION_EXHAUSTED',
      `actor ${actorId} cannot allocate ${requestedBytes} bytes: its ${regionBytes}-byte region has ` +
        `${freeBytes} bytes free in total; free objects or give actors larger regions`,
    );
    this.requestedBytes = requestedBytes;
  }
}

/** Every region of a side's DMO memory is held by an actor. */
export class DmoDomainFullError extends IpipeError {
  constructor(maxActors: number) {
    super(
      'IPIPE_ERR_DMO_DOMAIN_FULL',
      `all ${maxActors} DMO regions are in use: release a heap or create the domain with more regions`,
    );
  }
}

/** A size or count that is not a usable non-negative integer. */
export class DmoInvalidSizeError extends IpipeError {
  constructor(what: string, value: number) {
    super('IPIPE_ERR_DMO_INVALID_SIZE', `${what} must be a non-negative integer within limits, got ${value}`);
  }
}

/** Snapshot bytes that fail their checksum or structure checks; nothing is restored from them. */
export class DmoCorruptSnapshotError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_DMO_CORRUPT_SNAPSHOT', `snapshot rejected: ${message}`);
  }
}

/** A collection header in a DMO that is not the collection the caller opened it as. */
export class DmoCollectionFormatError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_DMO_COLLECTION_FORMAT', message);
  }
}

/** Scheduler settings that break a stated constraint (e.g. α outside (0, 1)). */
export class SchedulerSettingsError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_SCHED_INVALID_SETTINGS', `invalid scheduler settings: ${message}`);
  }
}

/** The platform drove the scheduler in a way its state machine forbids (a bug in the driver). */
export class SchedulerStateError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_SCHED_INVALID_STATE', `scheduler misuse: ${message}`);
  }
}

/** A simulated time that is in the past, fractional, NaN or beyond exact representation. */
export class SimTimeError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_SIM_INVALID_TIME', message);
  }
}

/** An event kind the simulation kernel was never told about. */
export class SimKindError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_SIM_INVALID_KIND', message);
  }
}

/** A command-line argument the CLI cannot accept. */
export class UsageError extends IpipeError {
  constructor(message: string) {
    super('IPIPE_ERR_CLI_USAGE', message);
  }
}

/**
 * An application experiment could not set its deployment up: an actor refused (or never
 * answered) one of the app's own setup messages before any load was offered.
 */
export class ExperimentSetupError extends IpipeError {
  /** The actor instance whose setup message failed. */
  readonly actor: string;
  constructor(actor: string, why: string) {
    super(
      'IPIPE_ERR_EXPERIMENT_SETUP',
      `setting up actor "${actor}" for the experiment failed: ${why}; this is a bug in the app's ` +
        'experiment hook or its configuration — rerun with the same --seed and report it',
    );
    this.actor = actor;
  }
}

/**
 * An application experiment's capacity probe answered no request at all for one placement, so
 * there is no load to offer: the deployment collapsed (e.g. retransmission storms under too many
 * requests in flight) or the probe was shorter than one answer's latency.
 */
export class ExperimentNoCapacityError extends IpipeError {
  readonly placement: string;
  readonly packetBytes: number;
  constructor(app: string, placement: string, packetBytes: number) {
    super(
      'IPIPE_ERR_EXPERIMENT_NO_CAPACITY',
      `${app}: the ${placement} deployment answered nothing during its capacity probe at ${packetBytes}-byte ` +
        'packets; lower --outstanding or lengthen --probe-duration and --warmup',
    );
    this.placement = placement;
    this.packetBytes = packetBytes;
  }
}

/**
 * A cluster member process (an RKV replica, or a node of an RTA/DT cluster) exited or did not
 * report ready in time while the cluster was starting. The message says which one and where its
 * log or stderr is; `member` is its replica or node id.
 */
export class ClusterStartError extends IpipeError {
  readonly member: number;
  constructor(member: number, message: string) {
    super('IPIPE_ERR_CLUSTER_START_FAILED', message);
    this.member = member;
  }
}

/** Narrowing helper for catch blocks: `if (isIpipeError(e, 'IPIPE_ERR_DMO_OUT_OF_BOUNDS'))`. */
export function isIpipeError(value: unknown, code?: ErrorCode): value is IpipeError {
  return value instanceof IpipeError && (code === undefined || value.code === code);
}
