/**
 * The smallest complete host for actors: one thread, one DMO domain, an injected clock, FIFO
 * delivery and timers — no cores, no scheduler, no cost model. It exists so an application's
 * actors can be unit-tested and embedded (a protocol step by step, a snapshot round trip) with
 * exactly the ActorInstance/ActorContext the simulated and live platforms use.
 *
 * Delivery order is deterministic: messages are handled in the order they were sent, timers in
 * (due time, arming order). `advanceTo(t)` moves a manual clock and fires what came due.
 */

import { type ActorRef, refOf } from '../actor/actor-ref.ts';
import { ActorTable } from '../actor/actor-table.ts';
import type { ActorLogger, PendingTimer, TimerId } from '../actor/context.ts';
import type { ActorDefinition, AnyActorDefinition } from '../actor/define-actor.ts';
import type { ClientOrigin, NetworkEndpoint, Origin } from '../actor/envelope.ts';
import { Mailbox } from '../actor/mailbox.ts';
import { DmoDomain } from '../dmo/domain.ts';
import { restoreHeap, snapshotHeap } from '../dmo/snapshot.ts';
import { UnknownActorError } from '../errors.ts';
import { type ActorId, nodeId } from '../ids.ts';
import { ActorInstance, type ActorPorts } from './actor-instance.ts';

export interface LocalRuntimeOptions {
  /** Bytes of each actor's DMO region (default 1 MiB). */
  readonly regionBytes?: number;
  readonly maxActors?: number;
  readonly log?: ActorLogger;
}

/** An answer an actor sent to a (simulated) external client. */
export interface ClientReply {
  readonly from: ActorId;
  readonly requestId: number;
  readonly endpoint: NetworkEndpoint;
  readonly message: unknown;
  readonly encoded: Uint8Array;
}

interface Delivery {
  readonly target: ActorId;
  readonly message: unknown;
  readonly origin: Origin;
}

interface ArmedTimer {
  readonly dueAtNs: number;
  readonly order: number;
  readonly actor: ActorId;
  readonly id: TimerId;
}

const SILENT_LOG: ActorLogger = { debug() {}, info() {}, warn() {}, error() {} };
const TEST_CLIENT: NetworkEndpoint = Object.freeze({ address: '127.0.0.1', port: 0 });

export class LocalRuntime {
  readonly table = new ActorTable();
  readonly domain: DmoDomain;
  readonly replies: ClientReply[] = [];
  readonly #instances = new Map<ActorId, ActorInstance>();
  readonly #queue = new Mailbox<Delivery>();
  readonly #timers: ArmedTimer[] = [];
  readonly #ports: ActorPorts;
  #nowNs = 0;
  #timerOrder = 0;

  constructor(options: LocalRuntimeOptions = {}) {
    this.domain = DmoDomain.create({
      regionBytes: options.regionBytes ?? 1024 * 1024,
      maxActors: options.maxActors ?? 16,
    });
    const log = options.log ?? SILENT_LOG;
    this.#ports = {
      now: () => this.#nowNs,
      route: (_from, target, message, _size, origin) => {
        if (!this.table.has(target)) throw new UnknownActorError(target);
        this.#queue.push({ target, message, origin });
      },
      replyToClient: (from, origin: ClientOrigin, message, codec) => {
        const encoded = codec.encode(message);
        this.replies.push({ from, requestId: origin.requestId, endpoint: origin.endpoint, message, encoded });
      },
      codecOf: (target) => this.table.lookup(target)?.definition.messages,
      armTimer: (actor, timer: PendingTimer<unknown>) => this.#arm(actor, timer),
      lookup: (name) => {
        const entry = this.table.lookupName(name);
        return entry ? refOf(entry.definition, entry.id, entry.name) : undefined;
      },
      log,
    };
  }

  now(): number {
    return this.#nowNs;
  }

  /** Registers and initialises an actor; returns a typed handle to it. */
  spawn<M, R>(definition: ActorDefinition<M, R>, name?: string): ActorRef<M, R> {
    const entry = this.table.register({
      definition: definition as unknown as AnyActorDefinition,
      location: { domain: 'host', node: nodeId(0) },
      ...(name === undefined ? {} : { name }),
    });
    const heap = this.domain.createHeap(entry.id);
    const instance = new ActorInstance(entry.definition, entry.id, entry.name, heap, this.#ports);
    this.#instances.set(entry.id, instance);
    instance.init();
    return refOf(definition, entry.id, entry.name);
  }

  instance(id: ActorId): ActorInstance {
    const instance = this.#instances.get(id);
    if (!instance) throw new UnknownActorError(id);
    return instance;
  }

  /** A request from an external client, answered into `replies` with `requestId`. */
  request<M>(to: ActorRef<M, unknown>, message: M, requestId: number): void {
    to.codec.sizeOf(message);
    this.#queue.push({
      target: to.id,
      message,
      origin: { kind: 'client', endpoint: TEST_CLIENT, requestId },
    });
  }

  /** A message with no origin (nobody waits for an answer). */
  tell<M>(to: ActorRef<M, unknown>, message: M): void {
    to.codec.sizeOf(message);
    this.#queue.push({ target: to.id, message, origin: { kind: 'none' } });
  }

  /** Handles queued messages until none is left (timers do not fire: time stands still). */
  runUntilIdle(maxMessages = 1_000_000): number {
    let handled = 0;
    while (!this.#queue.isEmpty()) {
      if (handled >= maxMessages)
        throw new Error(`still busy after ${maxMessages} messages: a message loop?`);
      const delivery = this.#queue.shift() as Delivery;
      this.instance(delivery.target).exec(delivery.message, delivery.origin);
      handled++;
    }
    return handled;
  }

  /** Moves the clock to `atNs`, firing timers that come due (in order) and handling what they send. */
  advanceTo(atNs: number): void {
    this.runUntilIdle();
    for (;;) {
      const next = this.#timers[0];
      if (!next || next.dueAtNs > atNs) break;
      this.#timers.shift();
      this.#nowNs = Math.max(this.#nowNs, next.dueAtNs);
      this.#instances.get(next.actor)?.fireTimer(next.id);
      this.runUntilIdle();
    }
    this.#nowNs = Math.max(this.#nowNs, atNs);
  }

  /**
   * Moves an actor's state through a snapshot into a fresh domain and back into a new instance —
   * the state half of migration (phase 3), usable to check an actor survives a move.
   */
  relocate(id: ActorId): void {
    const old = this.instance(id);
    const snapshot = snapshotHeap(old.heap);
    const state = old.exportState();
    this.#timers.splice(0, this.#timers.length, ...this.#timers.filter((t) => t.actor !== id));
    this.domain.releaseHeap(id);
    const heap = restoreHeap(this.domain, id, snapshot);
    const restored = ActorInstance.restore(old.definition, id, old.name, heap, this.#ports, state);
    this.#instances.set(id, restored);
  }

  #arm(actor: ActorId, timer: PendingTimer<unknown>): void {
    const entry = { dueAtNs: timer.dueAtNs, order: this.#timerOrder++, actor, id: timer.id };
    let index = this.#timers.length;
    while (index > 0) {
      const before = this.#timers[index - 1] as ArmedTimer;
      if (before.dueAtNs < entry.dueAtNs || (before.dueAtNs === entry.dueAtNs && before.order < entry.order))
        break;
      index--;
    }
    this.#timers.splice(index, 0, entry);
  }
}
