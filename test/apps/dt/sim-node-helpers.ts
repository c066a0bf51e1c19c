/**
 * Shared pieces of the DT SimNode tests: a node with the Stingray PS225 timing, and a recorder of
 * the coordinator's `committed` events (published on the diagnostics channel by the actors).
 */

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { DT_EVENT_CHANNEL, type DtActorEvent } from '../../../src/apps/dt/actors.ts';
import type { LoggedWrite } from '../../../src/apps/dt/types.ts';
import { getNicProfile, hostOf } from '../../../src/hw/index.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { timingFor } from '../../../src/platform/sim/hardware-timing.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';

/** A transaction that passed its commit point. */
export interface Committed {
  readonly id: string;
  readonly writes: readonly LoggedWrite[];
}

/** Collects every `committed` event the coordinator publishes while `body` runs. */
export function recordCommits<T>(body: () => T): { value: T; committed: Map<string, Committed> } {
  const committed = new Map<string, Committed>();
  const listener = (message: unknown): void => {
    const { event } = message as DtActorEvent;
    if (event.kind !== 'committed') return;
    const key = `${event.owner.client}:${event.owner.seq}`;
    committed.set(key, { id: `${key}@${event.owner.epoch}`, writes: event.writes });
  };
  subscribe(DT_EVENT_CHANNEL, listener);
  try {
    return { value: body(), committed };
  } finally {
    unsubscribe(DT_EVENT_CHANNEL, listener);
  }
}

/** A SimNode with the Stingray PS225's timing, on its own kernel. */
export function makeNode(): { kernel: EventKernel; node: SimNode } {
  const nic = getNicProfile('stingray-ps225');
  const kernel = new EventKernel();
  return { kernel, node: new SimNode({ timing: timingFor(nic, hostOf(nic)), kernel }) };
}
