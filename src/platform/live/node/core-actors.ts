/**
 * The node's actors as a core thread knows them (iPipe §4: any core runs any actor's handler over
 * the shared DMO heap) — a NIC or host core (core-worker.ts) or the socket-owning NIC core 0
 * (socket-core.ts): the catalog's definitions, imported in the thread, by id and by name; and the
 * ActorInstance the thread keeps for each actor it runs.
 *
 * An instance holds no state of its own (roots and timers live in the actor's heap, through
 * DmoStateStore), so the instances are a cache: one is made at the actor's first request on this
 * core and must be dropped (`forget`) once the heap it wraps moves or is replaced — a migration,
 * or a heap adopted back — else it would run handlers on a heap the domain no longer holds.
 */

import { type ActorRef, refOf } from '../../../actor/actor-ref.ts';
import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { DmoDomain } from '../../../dmo/domain.ts';
import type { ActorId } from '../../../ids.ts';
import { ActorInstance, type ActorPorts } from '../../../runtime/actor-instance.ts';
import { DmoStateStore } from '../../../runtime/dmo-state-store.ts';
import { type CatalogEntry, loadDefinitions } from './actor-catalog.ts';

/** A catalog entry with its definition imported in this thread. */
export interface CoreActor {
  readonly entry: CatalogEntry;
  readonly definition: AnyActorDefinition;
  /** Its position in the catalog (per-actor counters are laid out in catalog order). */
  readonly index: number;
}

/** The catalog's actors, imported in a core thread. */
export class CoreActors {
  readonly #byId = new Map<ActorId, CoreActor>();
  readonly #byName = new Map<string, ActorId>();

  private constructor(catalog: readonly CatalogEntry[], definitions: readonly AnyActorDefinition[]) {
    catalog.forEach((entry, index) => {
      this.#byId.set(entry.id, { entry, definition: definitions[index] as AnyActorDefinition, index });
      this.#byName.set(entry.name, entry.id);
    });
  }

  /** Imports every entry's module (a thread cannot be sent code, only where to import it from). */
  static async load(catalog: readonly CatalogEntry[]): Promise<CoreActors> {
    return new CoreActors(catalog, await loadDefinitions(catalog));
  }

  get(actor: ActorId): CoreActor | undefined {
    return this.#byId.get(actor);
  }

  has(actor: ActorId): boolean {
    return this.#byId.has(actor);
  }

  /** A reference to the actor named `name` (what a handler's `ctx.lookup` answers). */
  refByName(name: string): ActorRef<unknown, unknown> | undefined {
    const id = this.#byName.get(name);
    const known = id === undefined ? undefined : this.#byId.get(id);
    return known ? refOf(known.definition, known.entry.id, known.entry.name) : undefined;
  }
}

/** The ActorInstance a core thread keeps per actor over the domain's shared heaps (see the header). */
export class ActorInstances {
  readonly #instances = new Map<ActorId, ActorInstance>();
  readonly #domain: DmoDomain;
  readonly #actors: CoreActors;
  readonly #ports: ActorPorts;

  constructor(domain: DmoDomain, actors: CoreActors, ports: ActorPorts) {
    this.#domain = domain;
    this.#actors = actors;
    this.#ports = ports;
  }

  /** The actor's instance over its heap here; undefined if it is unknown or has no heap here. */
  get(actor: ActorId): ActorInstance | undefined {
    let instance = this.#instances.get(actor);
    if (instance) return instance;
    const known = this.#actors.get(actor);
    const heap = this.#domain.heapOf(actor);
    if (!known || !heap) return undefined;
    const store = DmoStateStore.open(heap, known.definition.messages);
    instance = new ActorInstance(known.definition, actor, known.entry.name, heap, this.#ports, store);
    instance.markReady();
    this.#instances.set(actor, instance);
    return instance;
  }

  /** Drops the cached instance (its heap moved or was replaced); the next `get` makes a fresh one. */
  forget(actor: ActorId): void {
    this.#instances.delete(actor);
  }

  /** The actor is deregistered: its instance, if one was made here, stops too (its timers). */
  deregister(actor: ActorId): void {
    this.#instances.get(actor)?.deregister();
    this.#instances.delete(actor);
  }
}
