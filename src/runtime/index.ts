/**
 * The node runtime's platform-independent parts. Value exports first, then types.
 */

export type { ActorPorts, InstanceState } from './actor-instance.ts';
/** One hosted actor: its context, roots, timers, and the state that migrates with it. */
export { ActorInstance } from './actor-instance.ts';
export type { ActorStateRecord, ActorStateStore } from './actor-state.ts';
/** Actor state (roots, timers, counters) held in JS memory, for one-thread hosts. */
export { MemoryStateStore } from './actor-state.ts';
export type { ClientReply, LocalRuntimeOptions } from './local-runtime.ts';
/** A single-threaded host for actors with an injected clock (tests, embedding). */
export { LocalRuntime } from './local-runtime.ts';
/** An origin as bytes (to keep in DMOs for a later `ctx.replyTo`), and back. */
export { encodeOrigin, originSize, readOrigin } from './origin-codec.ts';
