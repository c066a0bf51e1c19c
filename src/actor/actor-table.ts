/**
 * The actor table (iPipe §3 "Actors": each actor's runtime info holds its id, its port and "the
 * actor table with other actors' addresses"; Table 4's `actor_register` / `actor_delete` /
 * `actor_migrate` update it). The runtime consults it on every send to decide whether the target
 * runs here (NIC or host domain of this node) or on another node.
 *
 * Pure data: no platform code, no I/O, no clock. Entries are frozen and replaced (never mutated)
 * on a move, so an entry a caller holds is a consistent snapshot. Names and ids are both unique.
 */

import {
  ActorDefinitionError,
  ActorIdsExhaustedError,
  ConfigError,
  DuplicateActorError,
  UnknownActorError,
} from '../errors.ts';
import { type ActorId, isValidActorId, MAX_ACTOR_ID, type NodeId } from '../ids.ts';
import { type ActorRef, refOf } from './actor-ref.ts';
import {
  type AnyActorDefinition,
  isActorDefinition,
  isValidActorName,
  type Placement,
} from './define-actor.ts';
import type { NetworkEndpoint } from './envelope.ts';

/** On this node: in its NIC domain or its host domain. */
export interface LocalLocation {
  readonly domain: 'nic' | 'host';
  readonly node: NodeId;
}

/** On another node of the cluster (which of its domains is that node's business). */
export interface RemoteLocation {
  readonly domain: 'remote';
  readonly node: NodeId;
}

/** Where an actor runs, as this node's table sees it. Narrow on `domain`. */
export type ActorLocation = LocalLocation | RemoteLocation;

/** One row of the table: an actor instance and its runtime info. */
export interface ActorTableEntry {
  readonly id: ActorId;
  /** Instance name, unique in the table (a definition may have several instances). */
  readonly name: string;
  readonly definition: AnyActorDefinition;
  readonly location: ActorLocation;
  /** The network address and port where clients reach it, when it serves clients directly. */
  readonly endpoint: NetworkEndpoint | undefined;
  /** A handle to send to it (same id, name and codecs for the entry's whole life). */
  readonly ref: ActorRef<unknown, unknown>;
  /** How many times it has moved (0 on registration); a cheap staleness check for caches. */
  readonly moves: number;
}

/** What `register` takes. Omitted `id`: the table allocates one; omitted `name`: the definition's. */
export interface ActorRegistration {
  readonly definition: AnyActorDefinition;
  readonly location: ActorLocation;
  readonly id?: ActorId;
  readonly name?: string;
  readonly endpoint?: NetworkEndpoint;
}

/** Options of a new table. */
export interface ActorTableOptions {
  /**
   * The first id the allocator hands out (default 1: 0 stays unused by allocation so that a
   * zeroed id field in a dump or a wire header never names a live actor by accident).
   */
  readonly firstId?: number;
}

/** True when an actor with `placement` may be at `location` (pinned actors stay in their domain). */
export function placementAllows(placement: Placement, location: ActorLocation): boolean {
  return placement === 'any' || location.domain === 'remote' || location.domain === placement;
}

const DOMAINS: ReadonlySet<string> = new Set(['nic', 'host', 'remote']);

function checkLocation(location: unknown): ActorLocation {
  if (typeof location !== 'object' || location === null) {
    throw new ConfigError('location', "expected { domain: 'nic' | 'host' | 'remote', node }");
  }
  const { domain, node } = location as { readonly domain?: unknown; readonly node?: unknown };
  if (typeof domain !== 'string' || !DOMAINS.has(domain)) {
    throw new ConfigError('location.domain', `must be 'nic', 'host' or 'remote', got ${String(domain)}`);
  }
  if (typeof node !== 'number' || !Number.isInteger(node) || node < 0 || node > 0xffff_ffff) {
    throw new ConfigError('location.node', `must be a node id (a u32), got ${String(node)}`);
  }
  return Object.freeze({ domain, node }) as ActorLocation;
}

function checkEndpoint(endpoint: unknown): NetworkEndpoint | undefined {
  if (endpoint === undefined) return undefined;
  if (typeof endpoint !== 'object' || endpoint === null) {
    throw new ConfigError('endpoint', 'expected { address, port }');
  }
  const { address, port } = endpoint as { readonly address?: unknown; readonly port?: unknown };
  if (typeof address !== 'string' || address === '') {
    throw new ConfigError('endpoint.address', `must be a non-empty string, got ${String(address)}`);
  }
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError('endpoint.port', `must be an integer in [0, 65535], got ${String(port)}`);
  }
  return Object.freeze({ address, port });
}

function sameLocation(a: ActorLocation, b: ActorLocation): boolean {
  return a.domain === b.domain && a.node === b.node;
}

/** The table of actors one node knows: ids, names, definitions, locations, endpoints. */
export class ActorTable implements Iterable<ActorTableEntry> {
  readonly #byId = new Map<ActorId, ActorTableEntry>();
  readonly #idByName = new Map<string, ActorId>();
  // Ids removed and not reused, only so `require` can say "removed" rather than "never known".
  readonly #removed = new Set<ActorId>();
  // `= 0` where declared, the constructor sets the value: a field that starts `undefined` is typed
  // "any value" by V8, so its numbers are boxed and each read checks (see event-heap.ts).
  readonly #firstId: number = 0;
  #nextId: number = 0;

  constructor(options: ActorTableOptions = {}) {
    const firstId = options.firstId ?? 1;
    if (!isValidActorId(firstId)) {
      throw new ConfigError('firstId', `must be an integer in [0, ${MAX_ACTOR_ID}], got ${firstId}`);
    }
    this.#firstId = firstId;
    this.#nextId = firstId;
  }

  /** Number of registered actors. */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * The next id no registered actor holds, scanning upward from the last one handed out and
   * wrapping to `firstId` after MAX_ACTOR_ID (so ids are not reused until they must be). It does
   * not reserve the id: register it before allocating another.
   */
  allocateId(): ActorId {
    const span = MAX_ACTOR_ID - this.#firstId + 1;
    let candidate = this.#nextId;
    for (let tried = 0; tried < span; tried++) {
      const id = candidate as ActorId;
      candidate = candidate === MAX_ACTOR_ID ? this.#firstId : candidate + 1;
      if (!this.#byId.has(id)) {
        this.#nextId = candidate;
        return id;
      }
    }
    throw new ActorIdsExhaustedError(`[${this.#firstId}, ${MAX_ACTOR_ID}]`);
  }

  /**
   * Adds an actor. Throws DuplicateActorError for a taken id or name, ActorDefinitionError for a
   * definition not made by defineActor, a bad instance name, or a location its placement forbids,
   * and ConfigError for a malformed location or endpoint.
   */
  register(registration: ActorRegistration): ActorTableEntry {
    const { definition } = registration;
    if (!isActorDefinition(definition)) {
      throw new ActorDefinitionError(
        String(registration.name ?? '(unknown)'),
        'register needs a definition made by defineActor',
      );
    }
    const name = registration.name ?? definition.name;
    if (!isValidActorName(name)) {
      throw new ActorDefinitionError(
        String(name),
        'instance names follow the actor name rule (/^[a-z][a-z0-9-]{0,62}$/)',
      );
    }
    const location = checkLocation(registration.location);
    const endpoint = checkEndpoint(registration.endpoint);
    this.#checkPlacement(name, definition.placement, location);
    const holder = this.#idByName.get(name);
    if (holder !== undefined) throw new DuplicateActorError(`actor name "${name}" (id ${holder})`);
    let id: ActorId;
    if (registration.id === undefined) {
      id = this.allocateId();
    } else {
      id = registration.id;
      if (!isValidActorId(id))
        throw new ConfigError('id', `must be an integer in [0, ${MAX_ACTOR_ID}], got ${id}`);
      const taken = this.#byId.get(id);
      if (taken !== undefined) throw new DuplicateActorError(`actor id ${id} (held by "${taken.name}")`);
    }
    const entry: ActorTableEntry = Object.freeze({
      id,
      name,
      definition,
      location,
      endpoint,
      ref: refOf(definition, id, name),
      moves: 0,
    });
    this.#byId.set(id, entry);
    this.#idByName.set(name, id);
    this.#removed.delete(id);
    return entry;
  }

  /** True when `id` is registered. */
  has(id: ActorId): boolean {
    return this.#byId.has(id);
  }

  /** The entry for `id`, or undefined. */
  lookup(id: ActorId): ActorTableEntry | undefined {
    return this.#byId.get(id);
  }

  /** The entry for `id`; throws UnknownActorError (saying whether it was removed) when there is none. */
  require(id: ActorId): ActorTableEntry {
    const entry = this.#byId.get(id);
    if (entry === undefined) throw this.#unknown(id);
    return entry;
  }

  /** The id registered under `name`, or undefined. */
  idOf(name: string): ActorId | undefined {
    return this.#idByName.get(name);
  }

  /** The entry registered under `name`, or undefined. */
  lookupName(name: string): ActorTableEntry | undefined {
    const id = this.#idByName.get(name);
    return id === undefined ? undefined : this.#byId.get(id);
  }

  /**
   * Records that `id` now runs at `location` (migration's phase 3, or another node announcing a
   * move) and returns the new entry. Moving to where it already is changes nothing. A pinned
   * actor cannot change domain (ActorDefinitionError).
   */
  move(id: ActorId, location: ActorLocation): ActorTableEntry {
    const entry = this.require(id);
    const next = checkLocation(location);
    if (sameLocation(entry.location, next)) return entry;
    this.#checkPlacement(entry.name, entry.definition.placement, next);
    const moved: ActorTableEntry = Object.freeze({ ...entry, location: next, moves: entry.moves + 1 });
    this.#byId.set(id, moved);
    return moved;
  }

  /** Sets (or with undefined clears) the endpoint where clients reach `id`; returns the new entry. */
  setEndpoint(id: ActorId, endpoint: NetworkEndpoint | undefined): ActorTableEntry {
    const entry = this.require(id);
    const updated: ActorTableEntry = Object.freeze({ ...entry, endpoint: checkEndpoint(endpoint) });
    this.#byId.set(id, updated);
    return updated;
  }

  /** Removes `id` (actor_delete, or a deregistration) and returns its last entry. */
  remove(id: ActorId): ActorTableEntry {
    const entry = this.require(id);
    this.#byId.delete(id);
    this.#idByName.delete(entry.name);
    this.#removed.add(id);
    return entry;
  }

  /** Entries in registration order. */
  values(): IterableIterator<ActorTableEntry> {
    return this.#byId.values();
  }

  [Symbol.iterator](): IterableIterator<ActorTableEntry> {
    return this.#byId.values();
  }

  #checkPlacement(name: string, placement: Placement, location: ActorLocation): void {
    if (!placementAllows(placement, location)) {
      throw new ActorDefinitionError(
        name,
        `is pinned to the ${placement} (placement '${placement}') and cannot run in the ${location.domain} domain; ` +
          "use placement 'any' for an actor that may move",
      );
    }
  }

  #unknown(id: ActorId): UnknownActorError {
    if (this.#removed.has(id)) {
      return new UnknownActorError(id, 'it was removed from the actor table (deleted or deregistered)');
    }
    const known = [...this.#byId.keys()].slice(0, 8).join(', ');
    const more = this.#byId.size > 8 ? ', ...' : '';
    return new UnknownActorError(
      id,
      this.#byId.size === 0
        ? 'the actor table is empty; register the actor first'
        : `no actor has this id (registered: ${known}${more}); register it first or check the sender's id`,
    );
  }
}
