/**
 * The stores the deterministic simulation gives each role: plain Maps (fast, the default) or the
 * DMO-backed stores the actors use (dmo-stores.ts), so the simulator can also show that the
 * actors' state layer behaves exactly like the reference one under the same faults.
 *
 * Crash semantics follow the roles' durability model: a participant's store survives its crash
 * (the same object is handed to the restarted logic), a coordinator's store does not (a restart
 * gets a fresh one — in DMO mode the old heap is released).
 */

import { DmoDomain } from '../../../dmo/domain.ts';
import type { DmoHeap } from '../../../dmo/types.ts';
import { actorId } from '../../../ids.ts';
import { type CoordinatorStore, MemoryCoordinatorStore } from '../coordinator-logic.ts';
import { DmoCoordinatorStore, DmoParticipantStore } from '../dmo-stores.ts';
import { MemoryParticipantStore, type ParticipantStore } from '../participant-logic.ts';

/** Store factory for one simulation run. */
export interface DtSimulationStores {
  participantStore(shard: number): ParticipantStore;
  coordinatorStore(): CoordinatorStore;
  /** The coordinator crashed: its store is gone. */
  releaseCoordinatorStore(): void;
  dispose(): void;
}

/** Stores of the given kind. */
export function createStores(kind: 'memory' | 'dmo'): DtSimulationStores {
  if (kind === 'memory') {
    return {
      participantStore: () => new MemoryParticipantStore(),
      coordinatorStore: () => new MemoryCoordinatorStore(),
      releaseCoordinatorStore: () => {},
      dispose: () => {},
    };
  }
  const domain = DmoDomain.create({ regionBytes: 1024 * 1024, maxActors: 8 });
  let nextActor = 1;
  let coordinatorHeap: DmoHeap | undefined;
  return {
    participantStore: () => DmoParticipantStore.create(domain.createHeap(actorId(nextActor++))),
    coordinatorStore: () => {
      coordinatorHeap = domain.createHeap(actorId(nextActor++));
      return DmoCoordinatorStore.create(coordinatorHeap);
    },
    releaseCoordinatorStore: () => {
      if (coordinatorHeap) domain.releaseHeap(coordinatorHeap.owner);
      coordinatorHeap = undefined;
    },
    dispose: () => {},
  };
}
