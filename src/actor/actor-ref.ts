/**
 * Typed actor handles (iPipe §3 "Actors": actors address each other by id through the actor
 * table; a sender never knows whether its target is on the same core, across PCIe or on
 * another node).
 *
 * An `ActorRef<M, R>` is just an id with the codecs that make `ctx.send(ref, message)` type-check
 * and let the runtime encode the message. It holds no location, so it never goes stale when the
 * target migrates; the runtime resolves the location per send through the actor table.
 */

import { ActorDefinitionError, UnknownActorError } from '../errors.ts';
import { type ActorId, isValidActorId, MAX_ACTOR_ID } from '../ids.ts';
import type { MessageCodec } from './codec.ts';
import { type ActorDefinition, isActorDefinition, isValidActorName } from './define-actor.ts';

/** A typed handle on an actor: send it `M`; when asked (origin `self`) it answers with `R`. */
export interface ActorRef<M, R = unknown> {
  readonly id: ActorId;
  /** The instance name it is registered under. */
  readonly name: string;
  readonly codec: MessageCodec<M>;
  /** Codec of its replies; undefined when it never replies. */
  readonly replies: MessageCodec<R> | undefined;
}

/**
 * A handle on the instance of `definition` registered as `id` (under `name`, by default the
 * definition's name). Throws UnknownActorError for an id outside the valid range.
 */
export function refOf<M, R>(definition: ActorDefinition<M, R>, id: ActorId, name?: string): ActorRef<M, R> {
  if (!isActorDefinition(definition)) {
    throw new ActorDefinitionError(
      '(unknown)',
      'refOf(definition, id) needs a definition made by defineActor',
    );
  }
  if (!isValidActorId(id)) throw new UnknownActorError(id, `actor ids are integers in [0, ${MAX_ACTOR_ID}]`);
  const instanceName = name ?? definition.name;
  if (!isValidActorName(instanceName)) {
    throw new ActorDefinitionError(
      String(instanceName),
      'instance names follow the same rule as actor names',
    );
  }
  return Object.freeze({ id, name: instanceName, codec: definition.messages, replies: definition.replies });
}

/**
 * `ref` typed as an instance of `definition` when its codecs are that definition's codecs, else
 * undefined. This is how a handler turns `ctx.lookup(name)` into something it can send typed
 * messages to, checked at run time rather than cast.
 */
export function narrowRef<M, R>(
  ref: ActorRef<unknown, unknown> | undefined,
  definition: ActorDefinition<M, R>,
): ActorRef<M, R> | undefined {
  if (ref === undefined) return undefined;
  // Same codec objects ⇒ the same message and reply types, whatever the definition object is.
  if (ref.codec !== definition.messages || ref.replies !== definition.replies) return undefined;
  return ref as ActorRef<unknown, unknown> as ActorRef<M, R>;
}
