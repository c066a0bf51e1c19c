/**
 * One running actor: its definition, its DMO heap, its named roots and pending timers, and the
 * `ActorContext` its handlers see (iPipe §3, "Actors"; Table 4's actor_init and msg_write).
 *
 * Both platforms host actors through this class; what differs is the `ActorPorts` a platform
 * gives it (how a message is routed, how a timer is armed, what "now" is). Everything an actor
 * must find again after migration is data held here or in its heap — roots, timers with their
 * messages, id counters — and `exportState` / `ActorInstance.restore` carry it across (the
 * non-DMO half of migration phase 3; the DMO half is dmo/snapshot.ts).
 */

import type { ActorRef } from '../actor/actor-ref.ts';
import type { MessageCodec } from '../actor/codec.ts';
import type {
  ActorContext,
  ActorLogger,
  PendingTimer,
  SendOptions,
  TimerId,
  TimerOptions,
} from '../actor/context.ts';
import { ReplyWithoutOriginError } from '../actor/context.ts';
import type { AnyActorDefinition } from '../actor/define-actor.ts';
import { type ClientOrigin, NO_ORIGIN, type Origin, originForSend } from '../actor/envelope.ts';
import type { DmoHeap } from '../dmo/types.ts';
import { ActorDeregisteredError, ConfigError } from '../errors.ts';
import type { ActorId, ObjectId } from '../ids.ts';
import { type ActorStateRecord, type ActorStateStore, MemoryStateStore } from './actor-state.ts';

/** What an actor instance needs from the node that hosts it. Implemented per platform. */
export interface ActorPorts {
  /** The platform clock, ns. */
  now(): number;
  /**
   * Routes `message` (decoded; its encoded size is `sizeBytes` under the target's codec) to
   * actor `target`, wherever it runs; the receiver handles it under `origin`.
   */
  route(from: ActorId, target: ActorId, message: unknown, sizeBytes: number, origin: Origin): void;
  /**
   * Answers an external client with `message`, a value of the replying actor's `replies` codec
   * (passed along: a live platform encodes it onto the wire, the simulator only needs its size).
   */
  replyToClient(from: ActorId, origin: ClientOrigin, message: unknown, codec: MessageCodec<unknown>): void;
  /** The messages codec of an actor (for sizing a reply sent to an asking actor). */
  codecOf(target: ActorId): { sizeOf(message: unknown): number } | undefined;
  /** Arms a timer: at `timer.dueAtNs` the platform calls `instance.fireTimer(timer.id)`. */
  armTimer(actor: ActorId, timer: PendingTimer<unknown>): void;
  lookup(name: string): ActorRef<unknown, unknown> | undefined;
  log: ActorLogger;
}

export type InstanceState = 'created' | 'ready' | 'deregistered';

/** The context handed to handlers: one per instance, its origin swapped per message (no churn). */
class InstanceContext implements ActorContext<unknown, unknown> {
  readonly #instance: ActorInstance;
  readonly self: ActorId;
  readonly name: string;
  readonly dmo: DmoHeap;
  readonly log: ActorLogger;
  origin: Origin = NO_ORIGIN;

  constructor(instance: ActorInstance) {
    this.#instance = instance;
    this.self = instance.id;
    this.name = instance.name;
    this.dmo = instance.heap;
    this.log = instance.ports.log;
  }

  now(): number {
    return this.#instance.ports.now();
  }

  send(
    to: ActorRef<unknown, unknown>,
    message: unknown,
    options?: SendOptions | { readonly origin: 'self' },
  ): void {
    const mode = options?.origin ?? 'inherit';
    const instance = this.#instance;
    const requestId = mode === 'self' ? instance.store.allocateRequestId() : 0;
    const origin = originForSend(this.origin, mode, this.self, requestId);
    // sizeOf validates the message against the target's schema, exactly as encoding would, so a
    // message the live platform would refuse is refused in simulation too.
    instance.ports.route(this.self, to.id, message, to.codec.sizeOf(message), origin);
  }

  reply(message: unknown): void {
    this.replyTo(this.origin, message);
  }

  replyTo(origin: Origin, message: unknown): void {
    const instance = this.#instance;
    const replies = instance.definition.replies;
    if (origin.kind === 'none') throw new ReplyWithoutOriginError(this.name);
    if (replies === undefined) {
      throw new ConfigError(`actor ${this.name}`, 'reply() needs a `replies` codec in the actor definition');
    }
    if (origin.kind === 'client') {
      instance.ports.replyToClient(this.self, origin, message, replies);
      return;
    }
    // An actor asked (send with origin 'self'): it handles the answer as one of its own
    // messages, under the origin it had when it asked.
    const codec = instance.ports.codecOf(origin.actor);
    const sizeBytes = codec ? codec.sizeOf(message) : replies.sizeOf(message);
    instance.ports.route(this.self, origin.actor, message, sizeBytes, origin.parent);
  }

  setTimer(delayNs: number, message: unknown, options?: TimerOptions): TimerId {
    if (!(Number.isFinite(delayNs) && delayNs >= 0)) {
      throw new ConfigError('setTimer.delayNs', `must be a non-negative number of ns, got ${delayNs}`);
    }
    const instance = this.#instance;
    instance.definition.messages.sizeOf(message); // validate now, not when it fires
    const timer: PendingTimer<unknown> = {
      id: instance.store.allocateTimerId(),
      dueAtNs: instance.ports.now() + Math.round(delayNs),
      message,
      origin: options?.origin === 'inherit' ? this.origin : NO_ORIGIN,
    };
    instance.addTimer(timer);
    return timer.id;
  }

  cancelTimer(id: TimerId): boolean {
    return this.#instance.store.removeTimer(id);
  }

  root(name: string): ObjectId | undefined {
    return this.#instance.store.root(name);
  }

  setRoot(name: string, id: ObjectId | undefined): void {
    if (id !== undefined && !this.dmo.has(id)) {
      throw new ConfigError(`setRoot("${name}")`, `object ${id} is not a live object of this actor`);
    }
    this.#instance.store.setRoot(name, id);
  }

  lookup(name: string): ActorRef<unknown, unknown> | undefined {
    return this.#instance.ports.lookup(name);
  }
}

export class ActorInstance {
  readonly definition: AnyActorDefinition;
  readonly id: ActorId;
  readonly name: string;
  readonly heap: DmoHeap;
  readonly ports: ActorPorts;
  /** Roots, timers and counters: in memory (sim, local) or in the actor's heap (live). */
  readonly store: ActorStateStore;
  readonly #context: InstanceContext;
  #state: InstanceState = 'created';
  /** Messages handled since creation on this side (reports, tests). */
  handled = 0;
  /** Cost-hook results the platform has validated so far (the simulator checks the first few). */
  costChecks = 0;

  constructor(
    definition: AnyActorDefinition,
    id: ActorId,
    name: string,
    heap: DmoHeap,
    ports: ActorPorts,
    store: ActorStateStore = new MemoryStateStore(),
  ) {
    this.store = store;
    this.definition = definition;
    this.id = id;
    this.name = name;
    this.heap = heap;
    this.ports = ports;
    this.#context = new InstanceContext(this);
  }

  get state(): InstanceState {
    return this.#state;
  }

  /**
   * An instance opened on state another thread (or the other side) already initialised: ready
   * without running `init` again.
   */
  markReady(): void {
    if (this.#state === 'created') this.#state = 'ready';
  }

  /** actor_init: runs `init` once, with no origin. */
  init(): void {
    if (this.#state !== 'created') return;
    const context = this.#context;
    context.origin = NO_ORIGIN;
    this.definition.init(context);
    this.#state = 'ready';
  }

  /**
   * Handles one message under `origin` (run to completion). This is every platform's per-request
   * path: no closure, and the context's origin is simply replaced — handlers never nest (a
   * handler's sends are delivered later), so there is no previous origin to restore.
   */
  exec(message: unknown, origin: Origin): void {
    if (this.#state === 'deregistered') throw new ActorDeregisteredError(this.id, 'it runs no more handlers');
    const context = this.#context;
    context.origin = origin;
    try {
      this.definition.exec(context, message);
    } finally {
      context.origin = NO_ORIGIN;
    }
    this.handled++;
  }

  /**
   * A timer came due: removes it and handles its message. Returns false (and does nothing) if it
   * was cancelled meanwhile — platforms may not be able to withdraw an armed timer.
   */
  fireTimer(id: TimerId): boolean {
    const timer = this.store.takeTimer(id);
    if (!timer) return false;
    this.exec(timer.message, timer.origin);
    return true;
  }

  /** Stops the actor for good (watchdog, isolation, delete); its timers are dropped. */
  deregister(): void {
    this.#state = 'deregistered';
    this.store.clearTimers();
  }

  pendingTimers(): PendingTimer<unknown>[] {
    return this.store.timers();
  }

  /** The root object stored under `name` (tests, tools). */
  root(name: string): ObjectId | undefined {
    return this.store.root(name);
  }

  /**
   * The non-DMO state that must travel with the actor when it migrates (memory-held state; a
   * heap-held store travels inside the heap snapshot and exports an empty record).
   */
  exportState(): ActorStateRecord {
    const store = this.store;
    if (store instanceof MemoryStateStore) return store.record();
    return { roots: [], timers: [], nextTimerId: 0, nextRequestId: 0 };
  }

  /**
   * Recreates an actor on its new side from its restored heap and exported state; pending timers
   * are re-armed there at their original due times (no `init`: the state is already built).
   */
  static restore(
    definition: AnyActorDefinition,
    id: ActorId,
    name: string,
    heap: DmoHeap,
    ports: ActorPorts,
    record: ActorStateRecord,
  ): ActorInstance {
    const instance = new ActorInstance(definition, id, name, heap, ports, MemoryStateStore.from(record));
    instance.#state = 'ready';
    for (const timer of record.timers) ports.armTimer(id, timer);
    return instance;
  }

  /** @internal used by the context: records a timer and asks the platform to arm it. */
  addTimer(timer: PendingTimer<unknown>): void {
    this.store.addTimer(timer);
    this.ports.armTimer(this.id, timer);
  }
}
