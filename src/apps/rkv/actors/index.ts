/**
 * RKV's actors for the simulated platform (iPipe §5 "RKV": consensus and memtable on the NIC,
 * SSTable reader and compaction pinned to the host), their messages, the modelled disk and the
 * SimCluster deployment. docs/apps/rkv-sim.md describes them. Value exports first, then types.
 */

export type { ConsensusView } from './consensus-actor.ts';
export {
  DEFAULT_MAX_LOG_ENTRIES,
  inspectConsensus,
  rkvConsensus,
  rkvRef,
  UNSAFE_ANNOUNCE_BEFORE_SYNC,
  UNSAFE_CHOSEN_WITHOUT_MAJORITY,
  UNSAFE_INSTALL_PARTIAL_SNAPSHOT,
  UNSAFE_INSTALL_WITHOUT_SESSIONS,
  UNSAFE_NO_LEASE,
  UNSAFE_RECOVER_WITHOUT_LOG,
} from './consensus-actor.ts';
export { rkvLog, SNAPSHOT_CHUNK_BYTES } from './log-actor.ts';
export type { RkvMessage, RkvMsg } from './messages.ts';
export {
  MAX_KEY_BYTES,
  MAX_VALUE_BYTES,
  NO_LEADER,
  RKV_KEY_BYTES,
  rkvKey,
  rkvKeyIndex,
  rkvMessages,
} from './messages.ts';
export type { RkvActorRole, RkvSimDeployment, RkvSimOptions } from './sim-deployment.ts';
export {
  crashReplica,
  deployRkvOnSimCluster,
  loadMemtables,
  restartReplica,
  rkvInstanceName,
} from './sim-deployment.ts';
export type { DiskLookup, RunEntry } from './sim-disk.ts';
export {
  baseValue,
  decodeRun,
  encodeRun,
  registerSimDisk,
  SimDisk,
  simDisk,
  unregisterSimDisk,
} from './sim-disk.ts';
export type {
  Checkpoint,
  DurableEntry,
  DurableLogState,
  SnapshotChunk,
  SnapshotItem,
  SnapshotSession,
} from './sim-log.ts';
export { registerSimLog, SimLog, simLog, unregisterSimLog } from './sim-log.ts';
export {
  DISK_FSYNC_NS,
  DISK_WRITE_BYTES_PER_SEC,
  rkvCompaction,
  rkvMemtable,
  rkvSstableReader,
} from './storage-actors.ts';
