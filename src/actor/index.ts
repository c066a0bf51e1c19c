/**
 * The actor programming model (iPipe §3 "Actors" and Table 4's actor and messaging API): message
 * codecs, actor definitions, the context handlers get, typed refs, envelopes and origins, the
 * actor table and the mailbox. No platform code: runtimes build on these.
 *
 * Value exports first, then type exports, each named explicitly.
 */

// ---- values -----------------------------------------------------------------------------------

/** Typed handles: make one from a definition and an id, or narrow one found by name. */
export { narrowRef, refOf } from './actor-ref.ts';
/** The node's actor table, and the placement rule it enforces. */
export { ActorTable, placementAllows } from './actor-table.ts';
/** Builds the codec of a tagged message union from its schema; `MAX_VARIANTS` caps its variants. */
export { isMessageCodec, MAX_VARIANTS, messages } from './codec.ts';
/** The codec's errors: decode failures with a reason, encode failures with a path, schema mistakes. */
export { CodecDecodeError, CodecEncodeError, MessageSchemaError } from './codec-errors.ts';
/** True for fields built by `field.*`. */
export { isField } from './codec-field-base.ts';
/** Field constructors for message schemas (`field.u32()`, `field.string({ maxBytes })`, ...). */
export { field } from './codec-fields.ts';
/** UTF-8 byte length of a string (what a string field's maxBytes counts), -1 for lone surrogates. */
export { utf8ByteLength } from './codec-text.ts';
/** The error `ctx.reply` raises when nobody waits for an answer. */
export { ReplyWithoutOriginError } from './context.ts';
/** Accelerator kinds of Table 3 and the validation of a cost hook's answer. */
export { ACCELERATOR_KINDS, handlerWorkProblems, isAcceleratorKind, validateHandlerWork } from './cost.ts';
/** Declares an actor; validates and freezes the definition. */
export {
  ACTOR_NAME_PATTERN,
  declaredWork,
  defineActor,
  isActorDefinition,
  isValidActorName,
  PLACEMENTS,
  redefineActor,
} from './define-actor.ts';
/** Origins and their propagation rule across sends and replies. */
export { NO_ORIGIN, originForSend, originOfReply } from './envelope.ts';
/** An actor's FIFO mailbox (growable ring buffer, optional bound). */
export { Mailbox } from './mailbox.ts';

// ---- types ------------------------------------------------------------------------------------

/** A typed handle on an actor. */
export type { ActorRef } from './actor-ref.ts';
/** Actor table rows, locations and registrations. */
export type {
  ActorLocation,
  ActorRegistration,
  ActorTableEntry,
  ActorTableOptions,
  LocalLocation,
  RemoteLocation,
} from './actor-table.ts';
/** Codec types: the codec interface, the union a schema describes, decode results. */
export type { DecodeResult, MessageCodec, MessageOf, MessageSchema, MessageUnion } from './codec.ts';
/** Field types: a field, its kind and value type, limits, and a struct's value type. */
export type {
  DecodeFailureReason,
  Field,
  FieldKind,
  FieldSpec,
  FieldValue,
  OptionalField,
  StructValue,
} from './codec-field-base.ts';
/** Options of the string, bytes and list field constructors. */
export type { LengthLimit, ListLimit } from './codec-fields.ts';
/** What handlers can do, and the data shapes of timers, logs and send options. */
export type {
  ActorContext,
  ActorLogger,
  PendingTimer,
  RequestOptions,
  SendOptions,
  TimerId,
  TimerOptions,
} from './context.ts';
/** The declared work of a handler invocation, for the simulator's cost model. */
export type { AcceleratorKind, AcceleratorUse, HandlerWork } from './cost.ts';
/** Definition types: what defineActor takes and returns, and where an actor may run. */
export type { ActorDefinition, ActorSpec, AnyActorDefinition, Placement } from './define-actor.ts';
/** A message in flight and who waits for its answer. */
export type {
  ActorOrigin,
  ClientOrigin,
  Envelope,
  NetworkEndpoint,
  NoOrigin,
  Origin,
  SendOriginMode,
} from './envelope.ts';
