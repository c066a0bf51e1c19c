/**
 * Creating an actor on its starting side of a live node: its heap in the domain's shared memory,
 * its heap-held runtime state (DmoStateStore, the heap's first object), and its `init` — run once
 * on the controller's thread at start-up. What init sends or arms is returned for the controller
 * to route like any handler output.
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { DmoDomain } from '../../../dmo/domain.ts';
import { ConfigError } from '../../../errors.ts';
import type { ActorId } from '../../../ids.ts';
import { ActorInstance, type ActorPorts } from '../../../runtime/actor-instance.ts';
import { DmoStateStore } from '../../../runtime/dmo-state-store.ts';
import { wallNs } from './clock.ts';
import type { CoreOutput } from './core-protocol.ts';

export function initialiseActor(
  domain: DmoDomain,
  actor: ActorId,
  name: string,
  definition: AnyActorDefinition,
  definitions: ReadonlyMap<ActorId, AnyActorDefinition>,
): CoreOutput[] {
  const heap = domain.createHeap(actor, { exclusive: definition.exclusive });
  const store = DmoStateStore.create(heap, definition.messages);
  const outputs: CoreOutput[] = [];
  const ports: ActorPorts = {
    now: wallNs,
    route: (_from, target, message, _size, origin) => {
      const codec = definitions.get(target)?.messages;
      outputs.push({
        kind: 'send',
        target,
        origin,
        message: codec ? codec.encode(message) : new Uint8Array(0),
      });
    },
    replyToClient: () => {
      throw new ConfigError(`actor ${name}`, 'init has no client to reply to');
    },
    codecOf: (target) => definitions.get(target)?.messages,
    armTimer: (owner, timer) =>
      outputs.push({ kind: 'timer', actor: owner, timerId: timer.id, dueAtNs: timer.dueAtNs }),
    lookup: () => undefined,
    log: { debug() {}, info() {}, warn() {}, error() {} },
  };
  new ActorInstance(definition, actor, name, heap, ports, store).init();
  return outputs;
}
