/**
 * RKV's consensus layer: a Multi-Paxos replica as platform-independent logic (paper, "The
 * applications": RKV's consensus actor), its durable storage (memory for simulation, checksummed
 * file for live), and the replicated KV state machine the tests drive. A host (the ipipe actor on
 * the NIC, the simulator, a test) feeds `PaxosReplica.handle` and carries out its outputs.
 */

export type { PaxosReplicaConfig, PaxosTestingBugs, ResolvedPaxosConfig } from './config.ts';
export { resolvePaxosConfig } from './config.ts';
export type { PaxosErrorCode } from './errors.ts';
export {
  HistoryError,
  PAXOS_ERROR_CODES,
  PaxosConfigError,
  PaxosError,
  PaxosSafetyError,
  PaxosSimulatedCrash,
  PaxosStorageCorruptError,
  PaxosStorageIoError,
  PaxosTimeError,
} from './errors.ts';
export type { RecoveryReport } from './file-storage.ts';
export { FilePaxosStorage } from './file-storage.ts';
export { MemoryPaxosStorage } from './memory-storage.ts';
export type { PaxosRandom, PaxosReplicaOptions } from './replica.ts';
export { PaxosReplica } from './replica.ts';
export type { KvCommand, KvResult, PaxosCodec, ReplicatedStateMachine } from './state-machine.ts';
export { KvStateMachine, kvCodec } from './state-machine.ts';
export type { DurableAccepted, PaxosStorage, PersistedState } from './storage.ts';
export type {
  AppliedEntry,
  Ballot,
  ClientId,
  ClientReply,
  ClientRequest,
  LogCommand,
  Outbound,
  PaxosInput,
  PaxosOutputs,
  PaxosRole,
  PeerMessage,
  PromiseEntry,
  ReplicaId,
  ReplicaStatus,
  SessionRecord,
  SlotCommand,
  Snapshot,
  Tick,
} from './types.ts';
export {
  BALLOT_REPLICA_SPACE,
  ballotLeader,
  ballotRound,
  clientId,
  commandIdentity,
  makeBallot,
  NO_BALLOT,
  replicaId,
} from './types.ts';
