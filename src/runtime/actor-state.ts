/**
 * Where an actor's non-DMO runtime state lives: its named roots (how it finds its collections
 * again), its pending timers (messages to itself, as data), and its id counters. The simulator
 * and the one-thread runtime keep it in JS memory (`MemoryStateStore`) and carry it across a
 * migration as a record; the live platform keeps it inside the actor's own DMO heap, so that any
 * worker thread of a domain can run the actor and a heap snapshot carries everything.
 */

import type { PendingTimer, TimerId } from '../actor/context.ts';
import type { ObjectId } from '../ids.ts';

export interface ActorStateStore {
  root(name: string): ObjectId | undefined;
  setRoot(name: string, id: ObjectId | undefined): void;
  rootEntries(): [string, ObjectId][];
  addTimer(timer: PendingTimer<unknown>): void;
  /** Removes a pending timer; false when it was not pending. */
  removeTimer(id: TimerId): boolean;
  /** Removes and returns a pending timer (it is firing), or undefined when it was cancelled. */
  takeTimer(id: TimerId): PendingTimer<unknown> | undefined;
  timers(): PendingTimer<unknown>[];
  clearTimers(): void;
  allocateTimerId(): TimerId;
  allocateRequestId(): number;
}

/** The non-DMO state of an actor that migrates with it, as plain data. */
export interface ActorStateRecord {
  readonly roots: readonly (readonly [string, ObjectId])[];
  readonly timers: readonly PendingTimer<unknown>[];
  readonly nextTimerId: number;
  readonly nextRequestId: number;
}

/** State in JS memory: for one-thread hosts (the simulator, LocalRuntime). */
export class MemoryStateStore implements ActorStateStore {
  readonly #roots = new Map<string, ObjectId>();
  readonly #timers = new Map<number, PendingTimer<unknown>>();
  #nextTimerId = 1;
  #nextRequestId = 1;

  static from(record: ActorStateRecord): MemoryStateStore {
    const store = new MemoryStateStore();
    for (const [name, id] of record.roots) store.#roots.set(name, id);
    for (const timer of record.timers) store.#timers.set(timer.id, timer);
    store.#nextTimerId = record.nextTimerId;
    store.#nextRequestId = record.nextRequestId;
    return store;
  }

  record(): ActorStateRecord {
    return {
      roots: this.rootEntries(),
      timers: this.timers(),
      nextTimerId: this.#nextTimerId,
      nextRequestId: this.#nextRequestId,
    };
  }

  root(name: string): ObjectId | undefined {
    return this.#roots.get(name);
  }

  setRoot(name: string, id: ObjectId | undefined): void {
    if (id === undefined) this.#roots.delete(name);
    else this.#roots.set(name, id);
  }

  rootEntries(): [string, ObjectId][] {
    return [...this.#roots.entries()];
  }

  addTimer(timer: PendingTimer<unknown>): void {
    this.#timers.set(timer.id, timer);
  }

  removeTimer(id: TimerId): boolean {
    return this.#timers.delete(id);
  }

  takeTimer(id: TimerId): PendingTimer<unknown> | undefined {
    const timer = this.#timers.get(id);
    if (timer) this.#timers.delete(id);
    return timer;
  }

  timers(): PendingTimer<unknown>[] {
    return [...this.#timers.values()];
  }

  clearTimers(): void {
    this.#timers.clear();
  }

  allocateTimerId(): TimerId {
    return this.#nextTimerId++ as TimerId;
  }

  allocateRequestId(): number {
    return this.#nextRequestId++;
  }
}
