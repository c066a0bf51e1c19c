/**
 * Distributed transactions on ipipe (iPipe §5 "DT", after FaSST: OCC + two-phase commit with a
 * coordinator log; coordinator and participants on the NIC, a logging actor pinned to the host).
 * Design notes: docs/apps/dt.md.
 *
 * Value exports first, then types, each named explicitly.
 */

// ---- values -----------------------------------------------------------------------------------

/** The three actors, the event channels they publish on, and the fsync cost they declare. */
export {
  DT_EVENT_CHANNEL,
  DT_LOG_RECOVERY_CHANNEL,
  dtCoordinator,
  dtLogger,
  dtParticipant,
  FSYNC_NS,
} from './actors.ts';
/** The interactive client: a synchronous session and a promise API over any transport. */
export { DtClient, DtClientSession, DtTransaction } from './client.ts';
/** The protocol logic the actors and the simulator host. */
export { CoordinatorLogic, MemoryCoordinatorStore } from './coordinator-logic.ts';
/** The deterministic simulation with faults, and the command that reproduces a seed. */
export { DEFAULT_FAULTS, reproduceCommand, runDtSimulation } from './dst/simulation.ts';
/** Typed errors (registered in src/errors.ts, documented in docs/errors.md). */
export {
  DT_ERROR_CODES,
  DtInvalidTransactionError,
  DtLogCorruptError,
  DtLogIoError,
  DtTransactionStateError,
  describeTxnProblem,
} from './errors.ts';
/** The coordinator log: record format, scan, replay, and where it is stored. */
export { encodeLogRecord, replayLog, scanLog } from './log-format.ts';
export {
  FileLogStorage,
  MemoryLogStorage,
  openLogStorage,
  registerMemoryLogStorage,
  unregisterMemoryLogStorage,
} from './log-storage.ts';
export { describeLogRecovery, initialLoggerState, LoggerLogic } from './logger-logic.ts';
/** The message codec of every role. */
export { dtMessages } from './messages.ts';
export { MemoryParticipantStore, ParticipantLogic } from './participant-logic.ts';
/** The conflict-serializability checker. */
export { checkSerializable, describeViolation } from './serializability.ts';
/** The experiment hook: DT actors on a SimNode, with clients. */
export { DtSimClient, deployDtOnSimNode } from './sim-deployment.ts';
export { hashShardMap } from './types.ts';
export { findTxnProblem, validateTransaction } from './validation.ts';
/** Workloads: FaSST's read-2-write-1 and bank transfers, uniform or Zipf keys. */
export { accountKey, bankWorkload, decodeBalance, encodeBalance, fasstWorkload } from './workload.ts';

// ---- types ------------------------------------------------------------------------------------

export type { DtActorEvent } from './actors.ts';
export type { ClientCompletion, DtClientOptions, DtClientTransport, ReadResult } from './client.ts';
export type { CoordinatorConfig, CoordinatorStore } from './coordinator-logic.ts';
export type { DtFaultOptions, DtSimulationOptions, DtSimulationResult } from './dst/simulation.ts';
export type { TxnProblem } from './errors.ts';
export type { LogRecord, LogScan } from './log-format.ts';
export type { LogStorage } from './log-storage.ts';
export type { LoggerConfig, LogRecoveryPolicy, LogRecoveryReport } from './logger-logic.ts';
export type { DtMessage } from './messages.ts';
export type { ParticipantConfig, ParticipantStore } from './participant-logic.ts';
export type { HistoryTxn, SerializabilityResult, Violation } from './serializability.ts';
export type { DtClosedLoopOptions, DtSimDeployment, DtSimOptions, DtSimTxnResult } from './sim-deployment.ts';
export type { DtEvent, DtOutput, ShardMap, TxnId, TxnOutcome } from './types.ts';
export type { DtWorkload, KeyDistribution, TxnPlan } from './workload.ts';
