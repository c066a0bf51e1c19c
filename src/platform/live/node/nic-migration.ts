/**
 * What the NIC side of a live migration (§4.4's four phases) is the same for in both NIC
 * controllers — NicController (`ingress: 'controller'`) and SocketCoreController (`ingress:
 * 'core'`): the state each keeps of a migration under way, the host's image arriving for an actor
 * leaving the host (phases 2–3), and the record of a completed one (phase 4) in the domain's
 * history. How each starts a migration and hands its buffered requests over differs (the
 * scheduler runs on the main thread in one, in NIC core 0 in the other) and stays with each.
 */

import { performance } from 'node:perf_hooks';
import type { DmoDomain } from '../../../dmo/domain.ts';
import { ImageAssembler, type ImageProgress } from '../../../dmo/region-image.ts';
import type { ActorId } from '../../../ids.ts';
import type { Domain } from '../../../sched/types.ts';
import type { RecentLog } from './recent-log.ts';

/** One completed live migration, phase by phase. */
export interface LiveMigrationRecord {
  readonly actor: ActorId;
  readonly name: string;
  readonly from: Domain;
  readonly to: Domain;
  readonly trigger: string;
  readonly stateBytes: number;
  readonly bufferedRequests: number;
  readonly phasesMs: {
    readonly prepare: number;
    readonly ready: number;
    readonly gone: number;
    readonly clean: number;
  };
}

/** Completed migrations of one actor in one direction, over the node's life (for /metrics). */
export interface MigrationCount {
  readonly actor: string;
  readonly to: Domain;
  count: number;
}

/**
 * A migration under way, as both NIC controllers keep it (each adds its own fields). The times are
 * `performance.now()` readings at each phase's end, so the record's phases add up to the move.
 */
export interface NicMigration {
  readonly actor: ActorId;
  readonly from: Domain;
  readonly to: Domain;
  readonly trigger: string;
  readonly startedMs: number;
  /** When the scheduler buffered the actor: the end of Prepare, measured so /metrics is not 0 by fiat. */
  readonly preparedMs: number;
  readyMs: number;
  goneMs: number;
  stateBytes: number;
  /** The host's image being adopted (leaving the host), from its first chunk to its last. */
  assembler: ImageAssembler | null;
  readonly done: (record: LiveMigrationRecord) => void;
  /** A migration that cannot finish (its actor was deregistered meanwhile): the caller hears why. */
  readonly failed?: (error: Error) => void;
}

/** Where a NIC domain keeps its completed migrations (the controllers' public fields). */
export interface MigrationHistory {
  /** The last ones (/stats; a node serves for days: see RecentLog). */
  readonly migrations: RecentLog<LiveMigrationRecord>;
  /** By actor name and direction (`name/to`), over the node's life (/metrics). */
  readonly migrationCounts: Map<string, MigrationCount>;
}

/**
 * Leaving the host: one channel message of the actor's image. Its first bytes mark Ready (the host
 * sends the image only once nothing of the actor runs or waits there). 'adopted': the actor's
 * region is published in `domain`, `migration.stateBytes` says how big it was, and Gone is the
 * caller's to mark. 'failed': nothing was adopted and the host still holds the actor, so the
 * migration cannot complete (its requests stay buffered); a later image starts afresh.
 */
export function receiveHostImage(
  migration: NicMigration,
  chunks: Iterable<Uint8Array>,
  domain: DmoDomain,
  exclusive: boolean,
): ImageProgress {
  if (migration.assembler === null) {
    migration.readyMs = performance.now();
    migration.assembler = new ImageAssembler(domain, migration.actor, { exclusive });
  }
  const assembler = migration.assembler;
  const progress = assembler.accept(chunks);
  if (progress.kind === 'partial') return progress;
  migration.assembler = null;
  if (progress.kind === 'adopted') migration.stateBytes = assembler.receivedBytes;
  return progress;
}

/**
 * Phase 4, Clean, is over (the buffered requests went to the actor's new side): the migration's
 * record goes into `history` and to whoever awaits it. `bufferedRequests`: how many it held.
 */
export function completeMigration(
  history: MigrationHistory,
  migration: NicMigration,
  name: string,
  bufferedRequests: number,
): LiveMigrationRecord {
  const endMs = performance.now();
  const record: LiveMigrationRecord = {
    actor: migration.actor,
    name,
    from: migration.from,
    to: migration.to,
    trigger: migration.trigger,
    stateBytes: migration.stateBytes,
    bufferedRequests,
    phasesMs: {
      prepare: migration.preparedMs - migration.startedMs,
      ready: migration.readyMs - migration.preparedMs,
      gone: migration.goneMs - migration.readyMs,
      clean: endMs - migration.goneMs,
    },
  };
  history.migrations.push(record);
  const key = `${record.name}/${record.to}`;
  const counted = history.migrationCounts.get(key);
  if (counted === undefined)
    history.migrationCounts.set(key, { actor: record.name, to: record.to, count: 1 });
  else counted.count++;
  migration.done(record);
  return record;
}
