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
 * With a data directory the deployment names files (`file:<path>`): the SSTables are then the
 * real LSM engine in a directory (LsmDisk) and the durable log (the simulator's log actor,
 * `liveRkvLog`) a journaled file (FileLog; file-storage.ts), both reopened by a restarted node's
 * workers, so the replica recovers and rejoins. Without one they are memory, and a node process that dies takes its replica's state
 * with it (docs/apps/rkv-cluster.md, "RKV's actors on live nodes").
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import { redefineActor } from '../../../actor/index.ts';
import { rkvConsensus } from '../actors/consensus-actor.ts';
import { rkvLog } from '../actors/log-actor.ts';
import type { RkvMessage } from '../actors/messages.ts';
import { registerSimDisk, SimDisk, simDisk } from '../actors/sim-disk.ts';
import { registerSimLog, simLog } from '../actors/sim-log.ts';
import { rkvCompaction, rkvMemtable, rkvSstableReader } from '../actors/storage-actors.ts';
import { FileLog, LsmDisk } from './file-storage.ts';

/** Storage names of the form `file:<path>` are files (file-storage.ts); any other name is memory. */
const FILE_PREFIX = 'file:';

/** The disk named `name` in this worker, created empty on first use. */
function ensureDisk(name: string): void {
  if (simDisk(name) !== undefined) return;
  registerSimDisk(
    name,
    name.startsWith(FILE_PREFIX)
      ? LsmDisk.open(name.slice(FILE_PREFIX.length))
      : new SimDisk({ baseKeys: 0, valueBytes: 8 }),
  );
}

/** The durable log named `name` in this worker: a file, opened (and replayed) on first use. */
function ensureLog(name: string): void {
  if (simLog(name) !== undefined || !name.startsWith(FILE_PREFIX)) return;
  registerSimLog(name, FileLog.open(name.slice(FILE_PREFIX.length)));
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
/** The durable-log actor (host, pinned) over a file: its setup opens the file in this worker. */
const logDefinition = rkvLog as unknown as AnyActorDefinition;
export const liveRkvLog: AnyActorDefinition = redefineActor(logDefinition, {
  exec: (ctx, message) => {
    const m = message as RkvMessage;
    if (m.type === 'log-setup') ensureLog(m.log);
    logDefinition.exec(ctx, message);
  },
});

export const liveRkvCompaction: AnyActorDefinition = withDisk(rkvCompaction as unknown as AnyActorDefinition);
