/**
 * Branded identifiers shared by every area (actors, DMOs, nodes).
 *
 * They are plain numbers at run time (cheap to store in typed arrays and to put on the wire) but
 * distinct types at compile time, so an object id can never be passed where an actor id is due.
 * Ids live at the top level, not in actor/ or dmo/, because both of those areas (and sched/) need
 * them and must not depend on each other.
 */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** An actor's id: unique within a cluster, stable across migration. A u32 below 2^21 (see ObjectId). */
export type ActorId = Brand<number, 'ActorId'>;
/** A node (one NIC + host pair) in a cluster. */
export type NodeId = Brand<number, 'NodeId'>;
/**
 * A distributed memory object's id. Encodes its owner so that an actor can be refused another
 * actor's ids without any lookup, and a generation so that a stale id (used after free, slot
 * reused) is detected instead of silently resolving to someone else's bytes:
 *
 *   id = ownerActorId · 2^32 + generation · 2^24 + slot      (generation: 8 bits, slot: 24 bits)
 *
 * All three parts fit exactly in a double (ownerActorId < 2^21), so ids are stored as float64 in
 * DMOs and on the wire. Slot 0 is never used, so 0 can mean "no object" in links.
 */
export type ObjectId = Brand<number, 'ObjectId'>;

/** Largest actor id that still leaves an ObjectId exact in a double. */
export const MAX_ACTOR_ID = 2 ** 21 - 1;
export const OBJECT_SLOT_BITS = 24;
export const MAX_OBJECT_SLOT = 2 ** OBJECT_SLOT_BITS - 1;
const GENERATION_MODULUS = 256;
const SLOT_MODULUS = 2 ** OBJECT_SLOT_BITS;
const OWNER_MULTIPLIER = 2 ** 32;

/** The id meaning "no object", used to terminate links inside collections. */
export const NO_OBJECT = 0 as ObjectId;

export function isValidActorId(value: number): value is ActorId {
  return Number.isInteger(value) && value >= 0 && value <= MAX_ACTOR_ID;
}

export function actorId(value: number): ActorId {
  if (!isValidActorId(value)) {
    throw new RangeError(`actor id must be an integer in [0, ${MAX_ACTOR_ID}], got ${value}`);
  }
  return value;
}

export function nodeId(value: number): NodeId {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw new RangeError(`node id must be a u32, got ${value}`);
  }
  return value as NodeId;
}

export function makeObjectId(owner: ActorId, generation: number, slot: number): ObjectId {
  return (owner * OWNER_MULTIPLIER + (generation % GENERATION_MODULUS) * SLOT_MODULUS + slot) as ObjectId;
}

export function objectOwner(id: ObjectId): ActorId {
  return Math.floor(id / OWNER_MULTIPLIER) as ActorId;
}

/** Low 32 bits: generation and slot. Callers split it with the two helpers below. */
function objectLow(id: ObjectId): number {
  return id % OWNER_MULTIPLIER;
}

export function objectSlot(id: ObjectId): number {
  return objectLow(id) % SLOT_MODULUS;
}

export function objectGeneration(id: ObjectId): number {
  return Math.floor(objectLow(id) / SLOT_MODULUS);
}
