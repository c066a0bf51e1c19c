/**
 * A three-replica RKV group on a bare SimCluster whose consensus actors the test sets up and feeds
 * by hand (accepts, promises, commits as messages from a "client"), to build a log state step by
 * step that seeded runs reach only by chance: phase-one.test.ts, lead-chosen-above-hole.test.ts,
 * lead-from.test.ts.
 */
import assert from 'node:assert/strict';
import type { ActorRef } from '../../../../src/actor/index.ts';
import {
  type ConsensusView,
  inspectConsensus,
  rkvConsensus,
} from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import type { RkvMessage, RkvMsg } from '../../../../src/apps/rkv/actors/messages.ts';
import { rkvInstanceName } from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { rkvMemtable } from '../../../../src/apps/rkv/actors/storage-actors.ts';
import { EventKernel } from '../../../../src/platform/sim/event-kernel.ts';
import { SimCluster } from '../../../../src/platform/sim/sim-cluster.ts';
import { testTiming } from '../../../platform/sim/test-timing.ts';

export type Ref = ActorRef<RkvMessage, RkvMessage>;

/**
 * Sends `message` to `ref` on `node` as a client and runs the kernel for `ns` (5 ms by default),
 * returning the answer if one came. Bounded: a request nobody answers (an accept from a client)
 * keeps the node's management core checking, so the kernel would never go idle.
 */
export function send(
  cluster: SimCluster,
  node: number,
  ref: Ref,
  message: RkvMessage,
  ns = 5_000_000,
): RkvMessage | undefined {
  let answer: RkvMessage | undefined;
  cluster.clientSend(node, ref, message, (_id, _latency, _ok, reply) => {
    answer = reply as RkvMessage;
  });
  cluster.kernel.run({ untilNs: cluster.kernel.now() + ns });
  return answer;
}

export interface HandBuiltGroup {
  readonly cluster: SimCluster;
  /** The consensus actors' names, by replica. */
  readonly names: readonly string[];
  readonly consensus: readonly Ref[];
  readonly memtables: readonly Ref[];
  /** Replica r's consensus state, read from its heap. */
  readonly view: (r: number) => ConsensusView;
  /** Replica r's consensus setup: static (no timers, no truncation) unless `overrides` say so. */
  readonly setup: (r: number, overrides?: Partial<RkvMsg<'consensus-setup'>>) => RkvMessage;
}

/** Three nodes, a consensus and a memtable actor on each; the memtables set up, the consensus actors not. */
export function handBuiltGroup(): HandBuiltGroup {
  const cluster = new SimCluster({ kernel: new EventKernel(), timing: testTiming(), nodes: 3 });
  const names = [0, 1, 2].map((r) => rkvInstanceName('consensus', r));
  const memtables = [0, 1, 2].map((r) =>
    cluster.register(r, rkvMemtable, { name: rkvInstanceName('memtable', r) }),
  );
  const consensus = [0, 1, 2].map((r) => cluster.register(r, rkvConsensus, { name: names[r] as string }));
  for (const r of [0, 1, 2]) {
    const ready = send(cluster, r, memtables[r] as Ref, {
      type: 'memtable-setup',
      limitBytes: 1 << 20,
      sstable: rkvInstanceName('sstable', r),
      compaction: rkvInstanceName('compaction', r),
    });
    assert.equal(ready?.type, 'ready');
  }
  const view = (r: number): ConsensusView => {
    const instance = cluster.node(r).instance((consensus[r] as Ref).id);
    const found = inspectConsensus(instance.heap, (n) => instance.root(n));
    assert.ok(found !== undefined, `replica ${r} has a consensus heap`);
    return found;
  };
  const setup = (r: number, overrides: Partial<RkvMsg<'consensus-setup'>> = {}): RkvMessage => ({
    type: 'consensus-setup',
    replica: r,
    leader: 0,
    replicas: names,
    memtable: rkvInstanceName('memtable', r),
    heartbeatNs: 0,
    electionTimeoutNs: 0,
    maxLogEntries: 0,
    unsafe: 0,
    log: '',
    preVote: false,
    ...overrides,
  });
  return { cluster, names, consensus, memtables, view, setup };
}
