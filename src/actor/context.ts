/**
 * What an actor's handlers can do: the `ActorContext` a runtime hands to `init` and `exec`
 * (iPipe §3 "Actors" and Table 4's messaging and DMO calls, in TypeScript's idiom: `msg_write`
 * becomes `send`, `dmo_malloc` and friends live on `dmo`, the actor table is behind `lookup`).
 *
 * Interface only: the sim and live runtimes implement it. Everything an actor needs to find again
 * after a migration is reachable from here as data — DMOs by object id, named roots, pending
 * timers holding messages (not closures) — because an actor's JS closures and module variables do
 * not move between NIC and host; only its DMOs do.
 */

import type { DmoHeap } from '../dmo/types.ts';
import { NoOriginError } from '../errors.ts';
import type { ActorId, ObjectId } from '../ids.ts';
import type { ActorRef } from './actor-ref.ts';
import type { Origin } from './envelope.ts';

declare const timerBrand: unique symbol;

/**
 * A pending timer's id, unique within its actor (not across actors), so it stays valid when the
 * actor and its timers migrate together.
 */
export type TimerId = number & { readonly [timerBrand]: 'TimerId' };

/**
 * A timer as the runtime stores it: a message to deliver to the actor itself at `dueAtNs`.
 * Plain data, so migration moves pending timers with the actor's DMOs and re-arms them on the
 * other side (`dueAtNs` is on the cluster clock, so the remaining delay carries over).
 */
export interface PendingTimer<M> {
  readonly id: TimerId;
  readonly dueAtNs: number;
  readonly message: M;
  /** The origin the delivery is handled under (`none` unless the timer was set with `inherit`). */
  readonly origin: Origin;
}

/** Options of `setTimer`. */
export interface TimerOptions {
  /**
   * `none` (default): the delivery has no origin — right for timeouts, ticks and retransmits.
   * `inherit`: it keeps the current message's origin, so a handler can defer its answer (a
   * rate limiter that releases a request later, a batcher that answers when the batch fills).
   */
  readonly origin?: 'none' | 'inherit';
}

/** The subset of a structured logger (pino's call shape) a handler may use; fields first, then text. */
export interface ActorLogger {
  debug(fields: Readonly<Record<string, unknown>>, message: string): void;
  info(fields: Readonly<Record<string, unknown>>, message: string): void;
  warn(fields: Readonly<Record<string, unknown>>, message: string): void;
  error(fields: Readonly<Record<string, unknown>>, message: string): void;
}

/** Options of an ordinary send. */
export interface SendOptions {
  /**
   * `inherit` (default): the message carries the current message's origin, so the receiver can
   * `reply` straight to whoever is waiting. `none`: the receiver cannot reply.
   */
  readonly origin?: 'inherit' | 'none';
}

/**
 * Options of a send that asks for an answer: the receiver's `reply` comes back to this actor as
 * one of its own messages (hence the `TR extends M` check on that overload of `send`).
 */
export interface RequestOptions {
  readonly origin: 'self';
}

/**
 * The handle a handler gets. `M` is the actor's message union, `R` what `reply` sends back
 * (`never` for an actor with no `replies` codec, so `reply` cannot be called).
 *
 * Handlers are synchronous and run to completion: an exec that needs to wait sends a message or
 * sets a timer and returns, and continues when that message arrives.
 */
export interface ActorContext<M, R = never> {
  /** This actor's id (stable across migration). */
  readonly self: ActorId;
  /** This actor's registered (instance) name. */
  readonly name: string;
  /** The actor's own DMO heap: its only state that survives migration, with the roots below. */
  readonly dmo: DmoHeap;
  /**
   * Who waits for an answer to the message being handled (`none` in `init` and for timer
   * deliveries). Check `origin.kind` before `reply` when a handler serves both.
   */
  readonly origin: Origin;
  /** Structured log lines tagged with this actor (to stderr via the runtime's logger). */
  readonly log: ActorLogger;

  /** Now in ns on the runtime's injected clock (virtual in sim, monotonic in live). */
  now(): number;

  /**
   * Sends `message` to `to` asynchronously, wherever `to` runs (same core, across PCIe, another
   * node): the runtime resolves the location through the actor table. Fire and forget; a refused
   * delivery (target deregistered, mailbox bound) is reported as an inspection event, not here.
   */
  send<T>(to: ActorRef<T, unknown>, message: NoInfer<T>, options?: SendOptions): void;
  /** Sends a request whose reply (type `TR`, one of this actor's messages) comes back to this actor. */
  send<T, TR extends M>(to: ActorRef<T, TR>, message: NoInfer<T>, options: RequestOptions): void;

  /**
   * Answers the origin of the message being handled: a datagram to the waiting client, or a
   * message to the waiting actor. Throws ReplyWithoutOriginError when the origin is `none`.
   */
  reply(message: R): void;

  /**
   * Answers an origin remembered from an earlier message (`ctx.origin`, kept in the actor's DMOs
   * with `encodeOrigin`): for an actor that answers only once a later event completes the work —
   * a consensus leader replying when a command it accepted is chosen, a batch flushed on a timer.
   * The same rules as `reply`: a client gets a datagram, an asking actor a message. Throws
   * ReplyWithoutOriginError for the `none` origin.
   */
  replyTo(origin: Origin, message: R): void;

  /**
   * Delivers `message` to this actor after `delayNs` (≥ 0), by default with origin `none`.
   * Timers are data (see PendingTimer), so they survive migration.
   */
  setTimer(delayNs: number, message: M, options?: TimerOptions): TimerId;
  /** Cancels a pending timer; false when it already fired or was cancelled. */
  cancelTimer(id: TimerId): boolean;

  /** The object id stored under `name` (how an actor finds its collections again after a move). */
  root(name: string): ObjectId | undefined;
  /** Stores `id` under `name`; `undefined` removes the root. Roots migrate with the actor. */
  setRoot(name: string, id: ObjectId | undefined): void;

  /** The actor registered under `name` in the actor table; narrow it with `narrowRef` to send typed. */
  lookup(name: string): ActorRef<unknown, unknown> | undefined;
}

/**
 * `reply` was called while handling a message nobody waits for (a timer delivery, a send made
 * during init, or one sent with `origin: 'none'`). A bug in the handler, so it carries the
 * definition error code until the registry has a dedicated one.
 */
export class ReplyWithoutOriginError extends NoOriginError {
  constructor(actorName: string) {
    super(
      actorName,
      'reply() was called while handling a message with no origin (timer, init-time send or ' +
        "origin: 'none'); check ctx.origin.kind before replying",
    );
  }
}
