/**
 * The module live nodes load RKV's actors from (`ipipe run --cluster`, actor-cluster.ts): the
 * simulator's four actors — consensus and memtable (NIC, migratable), SSTable reader and
 * compaction (host, pinned) — unchanged, with one difference. On the simulator the deployment
 * registers each replica's modelled disk before the actors run (sim-disk.ts); a live node's actors
 * run in worker threads that share no JS objects with anyone, so here the host actors create the
 * disk their setup names, in the worker that runs them, when the setup arrives. A replica's two
 * host actors are pinned to its host domain and share its one host core (the cluster gives each
 * node one), so they find the same disk.
 *
 * That disk is memory: a node process that dies loses its SSTables with it, as it loses its NIC
 * memory. The group survives a minority of such deaths (Multi-Paxos), but a dead replica cannot
 * come back with its data — see docs/apps/rkv-cluster.md, "RKV's actors on live nodes".
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import { redefineActor } from '../../../actor/index.ts';
import { rkvConsensus } from '../actors/consensus-actor.ts';
import type { RkvMessage } from '../actors/messages.ts';
import { registerSimDisk, SimDisk, simDisk } from '../actors/sim-disk.ts';
import { rkvCompaction, rkvMemtable, rkvSstableReader } from '../actors/storage-actors.ts';

/** The disk named `name` in this worker, created empty on first use. */
function ensureDisk(name: string): void {
  if (simDisk(name) === undefined) registerSimDisk(name, new SimDisk({ baseKeys: 0, valueBytes: 8 }));
}

/** `definition` with its setup message creating the disk it names first. */
function withDisk(definition: AnyActorDefinition): AnyActorDefinition {
  return redefineActor(definition, {
    exec: (ctx, message) => {
      const m = message as RkvMessage;
      if (m.type === 'sstable-setup' || m.type === 'compaction-setup') ensureDisk(m.disk);
      definition.exec(ctx, message);
    },
  });
}

export const liveRkvConsensus = rkvConsensus;
export const liveRkvMemtable = rkvMemtable;
export const liveRkvSstableReader: AnyActorDefinition = withDisk(
  rkvSstableReader as unknown as AnyActorDefinition,
);
export const liveRkvCompaction: AnyActorDefinition = withDisk(rkvCompaction as unknown as AnyActorDefinition);
