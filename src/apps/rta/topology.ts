/**
 * RTA's topology table (iPipe §5, "The applications": RTA after FlexStorm, whose workers route
 * each tuple to the next stage's worker by a hash of its key — Storm's "fields grouping").
 *
 * Each actor that feeds a next stage keeps that stage's actor ids, in index order, in one DMO
 * vector (a `TopologyTable`), filled once from instance names when the actor is configured. A key
 * goes to worker `routeKey(key, salt, n)`: FNV-1a over the key's UTF-16 code units, mixed with a
 * per-stage salt so the counter → ranker split is not the filter → counter split again (with equal
 * counts the two would otherwise pair counter i with ranker i and leave the other rankers idle).
 * Ids, not names, are stored: an actor id is stable across migration, and the runtime resolves
 * where the actor is now on every send.
 */

import { type ActorRef, narrowRef, refOf } from '../../actor/actor-ref.ts';
import type { ActorContext } from '../../actor/context.ts';
import type { ActorDefinition } from '../../actor/define-actor.ts';
import { DmoVector } from '../../dmo/index.ts';
import type { DmoHeap } from '../../dmo/types.ts';
import type { ActorId, ObjectId } from '../../ids.ts';
import { RtaTopologyError } from './errors.ts';

/** Salt of the filter → counter split. */
export const COUNTER_ROUTE_SALT = 0x2f6b1c35;
/** Salt of the counter → ranker split. */
export const RANKER_ROUTE_SALT = 0x7a3d9e11;

/** 32-bit FNV-1a of `key`'s UTF-16 code units, seeded with `salt`, finished with a murmur3 mix. */
export function keyHash(key: string, salt: number): number {
  let hash = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  // FNV's low bits are weak for short keys that differ in their last character; mix before `% n`.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

/** The worker (0..workers−1) of a stage that handles `key`. */
export function routeKey(key: string, salt: number, workers: number): number {
  return keyHash(key, salt) % workers;
}

/** The next stage's actor ids, in one DMO vector of u32. */
export class TopologyTable {
  readonly #vector: DmoVector;

  private constructor(vector: DmoVector) {
    this.#vector = vector;
  }

  /**
   * Resolves `names` through the actor table (each must be an instance of `definition`) and
   * stores their ids in a new vector. Throws RtaTopologyError naming the first missing instance.
   */
  static resolve<M, R, CM, CR>(
    ctx: ActorContext<CM, CR>,
    names: readonly string[],
    definition: ActorDefinition<M, R>,
    role: string,
  ): TopologyTable {
    const ids: ActorId[] = [];
    for (const name of names) {
      const ref = narrowRef(ctx.lookup(name), definition);
      if (ref === undefined) throw new RtaTopologyError(ctx.name, name, role);
      ids.push(ref.id);
    }
    const vector = DmoVector.create(ctx.dmo, { element: 'u32', initialCapacity: Math.max(1, ids.length) });
    for (const id of ids) vector.push(id);
    return new TopologyTable(vector);
  }

  static open(heap: DmoHeap, rootId: ObjectId): TopologyTable {
    return new TopologyTable(DmoVector.open(heap, rootId));
  }

  get rootId(): ObjectId {
    return this.#vector.rootId;
  }

  get size(): number {
    return this.#vector.length;
  }

  /** A typed handle on worker `index` (its id from the table; the location is the runtime's business). */
  ref<M, R>(index: number, definition: ActorDefinition<M, R>): ActorRef<M, R> {
    return refOf(definition, this.#vector.get(index) as ActorId);
  }
}
