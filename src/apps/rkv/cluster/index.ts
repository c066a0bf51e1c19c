/**
 * RKV's live cluster (paper, "The applications": RKV, a Multi-Paxos replicated LSM store): one
 * process per replica on loopback, a Paxos group per shard, the LSM engine as each group's state
 * machine, a RESP front on every replica. `ClusterSupervisor` starts and stops the processes
 * (`ipipe cluster up rkv`), `ClusterReplica` is one replica (what each process runs), and the
 * rest are its parts. docs/apps/rkv-cluster.md describes the design and its limits.
 */

// ---- values ---------------------------------------------------------------------------------

/** The log's commands: codec (for storage) and key → shard placement. */
export { clusterCodec, shardOf } from './commands.ts';
/** The cluster's typed errors (codes IPIPE_ERR_CLUSTER_*). */
export {
  ClusterDataDirInUseError,
  ClusterFrameError,
  ClusterNotRunningError,
  ClusterOptionsError,
  ClusterStartError,
} from './errors.ts';
/** Group commit over a file Paxos log: one fsync per event-loop turn. */
export { GroupCommitStorage } from './group-commit-storage.ts';
/** A shard's LSM engine as a Paxos state machine (apply index ↔ LSM sequence). */
export { LsmKvStateMachine, MAX_KEYS_PER_COMMAND, SEQUENCES_PER_COMMAND } from './lsm-state-machine.ts';
/** The replicas' TCP mesh. */
export { PeerMesh } from './peer-transport.ts';
/** The replica wire: framing with CRC-32, message codec. */
export { encodeWireMessage, FrameDecoder, MAX_FRAME_BYTES } from './peer-wire.ts';
/** One replica: shards, mesh, RESP front. */
export { ClusterReplica, DEFAULT_CLUSTER_TIMING, MAX_REPLICAS } from './replica-host.ts';
/** Starting, following and stopping replica processes; stopping a cluster by its data directory. */
export { ClusterSupervisor, clusterDown, readClusterState } from './supervisor.ts';

// ---- types ----------------------------------------------------------------------------------

export type { ClusterCommand, ClusterResult, ClusterSetCondition } from './commands.ts';
export type { LsmKvStateMachineOptions, LsmKvStateMachineStats } from './lsm-state-machine.ts';
export type { PeerAddress, PeerMeshOptions, PeerMeshStats } from './peer-transport.ts';
export type { WireMessage } from './peer-wire.ts';
export type {
  ClusterReplicaConfig,
  ClusterTiming,
  ReplicaAddresses,
  ShardView,
} from './replica-host.ts';
export type { ReplicaReport } from './replica-main.ts';
export type {
  ClusterDownReport,
  ClusterEvent,
  ClusterStateFile,
  ClusterUpOptions,
  ReplicaEntry,
} from './supervisor.ts';
