/**
 * Settings of one Multi-Paxos replica (timeouts, batching, snapshot cadence), their defaults and
 * validation. Times are virtual or real nanoseconds, whichever clock the host passes to `handle`.
 */

import { PaxosConfigError } from './errors.ts';
import { BALLOT_REPLICA_SPACE, type ReplicaId } from './types.ts';

/**
 * Deliberately broken variants, for proving that the simulation tests catch real bugs
 * (test/apps/rkv/paxos/dst-catches-bugs.test.ts). Never set outside tests.
 */
export interface PaxosTestingBugs {
  /** The leader counts a slot chosen as soon as it accepted it itself (quorum of one). */
  readonly commitWithoutMajority?: boolean;
  /** Promises and accepts are never written to storage (a restart forgets them). */
  readonly skipPersistence?: boolean;
  /** A new leader fills every unchosen slot with a no-op instead of re-proposing accepted values. */
  readonly ignorePromisedValues?: boolean;
}

export interface PaxosReplicaConfig {
  readonly replicaId: ReplicaId;
  /** Replicas in the group, ids 0 … replicaCount − 1. A majority is ⌊n/2⌋ + 1. */
  readonly replicaCount: number;
  /** How often a leader sends heartbeats (and retransmits unacknowledged accepts). */
  readonly heartbeatIntervalNs: number;
  /**
   * A follower that hears nothing from a leader for a random time in [min, max) starts an election.
   * Randomising (with the injected random source) keeps two followers from colliding forever.
   */
  readonly electionTimeoutMinNs: number;
  readonly electionTimeoutMaxNs: number;
  /** Resend interval for prepares, unacknowledged accepts and catch-up requests. Default: heartbeat. */
  readonly retransmitIntervalNs?: number;
  /** Take a snapshot and truncate the log every this many applied entries; 0 never. Default 1000. */
  readonly snapshotEveryEntries?: number;
  /** Commands per accept / catch-up message. Default 64. */
  readonly maxBatchEntries?: number;
  /** A leader refuses (drops) new client commands beyond this many unchosen proposals. Default 1024. */
  readonly maxInflightProposals?: number;
  /**
   * A follower that heard from its leader within `electionTimeoutMinNs`, and a leader that heard
   * from a majority within it, ignore higher prepares, so a replica that was cut off cannot depose
   * a working leader when it comes back (the pre-vote problem). Liveness only. Default true.
   */
  readonly leaderStickiness?: boolean;
  /** A leader that has not heard from a majority for `electionTimeoutMaxNs` steps down. Default true. */
  readonly checkQuorum?: boolean;
  readonly unsafeTestingBugs?: PaxosTestingBugs;
}

/** The configuration with every default filled in. */
export interface ResolvedPaxosConfig {
  readonly replicaId: ReplicaId;
  readonly replicaCount: number;
  readonly majority: number;
  readonly heartbeatIntervalNs: number;
  readonly electionTimeoutMinNs: number;
  readonly electionTimeoutMaxNs: number;
  readonly retransmitIntervalNs: number;
  readonly snapshotEveryEntries: number;
  readonly maxBatchEntries: number;
  readonly maxInflightProposals: number;
  readonly leaderStickiness: boolean;
  readonly checkQuorum: boolean;
  readonly bugs: PaxosTestingBugs;
}

function positiveInteger(name: string, value: number): number {
  if (!(Number.isSafeInteger(value) && value > 0)) {
    throw new PaxosConfigError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

export function resolvePaxosConfig(config: PaxosReplicaConfig): ResolvedPaxosConfig {
  const replicaCount = positiveInteger('replicaCount', config.replicaCount);
  if (replicaCount > BALLOT_REPLICA_SPACE) {
    throw new PaxosConfigError(`replicaCount must be at most ${BALLOT_REPLICA_SPACE}, got ${replicaCount}`);
  }
  if (!(Number.isInteger(config.replicaId) && config.replicaId >= 0 && config.replicaId < replicaCount)) {
    throw new PaxosConfigError(`replicaId must be in [0, ${replicaCount}), got ${config.replicaId}`);
  }
  const heartbeatIntervalNs = positiveInteger('heartbeatIntervalNs', config.heartbeatIntervalNs);
  const electionTimeoutMinNs = positiveInteger('electionTimeoutMinNs', config.electionTimeoutMinNs);
  const electionTimeoutMaxNs = positiveInteger('electionTimeoutMaxNs', config.electionTimeoutMaxNs);
  if (electionTimeoutMaxNs <= electionTimeoutMinNs) {
    throw new PaxosConfigError(
      `electionTimeoutMaxNs (${electionTimeoutMaxNs}) must exceed electionTimeoutMinNs (${electionTimeoutMinNs}) ` +
        'so replicas draw different timeouts',
    );
  }
  if (heartbeatIntervalNs * 2 > electionTimeoutMinNs) {
    throw new PaxosConfigError(
      `heartbeatIntervalNs (${heartbeatIntervalNs}) must be at most half of electionTimeoutMinNs ` +
        `(${electionTimeoutMinNs}), or one lost heartbeat starts an election`,
    );
  }
  const snapshotEveryEntries = config.snapshotEveryEntries ?? 1000;
  if (!(Number.isSafeInteger(snapshotEveryEntries) && snapshotEveryEntries >= 0)) {
    throw new PaxosConfigError(
      `snapshotEveryEntries must be a non-negative integer, got ${snapshotEveryEntries}`,
    );
  }
  return {
    replicaId: config.replicaId,
    replicaCount,
    majority: Math.floor(replicaCount / 2) + 1,
    heartbeatIntervalNs,
    electionTimeoutMinNs,
    electionTimeoutMaxNs,
    retransmitIntervalNs: positiveInteger(
      'retransmitIntervalNs',
      config.retransmitIntervalNs ?? heartbeatIntervalNs,
    ),
    snapshotEveryEntries,
    maxBatchEntries: positiveInteger('maxBatchEntries', config.maxBatchEntries ?? 64),
    maxInflightProposals: positiveInteger('maxInflightProposals', config.maxInflightProposals ?? 1024),
    leaderStickiness: config.leaderStickiness ?? true,
    checkQuorum: config.checkQuorum ?? true,
    bugs: config.unsafeTestingBugs ?? {},
  };
}
