/**
 * RKV's durable-log actor on the simulated platform (iPipe §5 "RKV": the consensus actor's state
 * is in NIC memory, which a crash loses; the host's disk is what survives — docs/apps/rkv-cluster.md
 * keeps the live PaxosReplica's log on the host the same way). One per replica, pinned to the
 * host, exclusive: the single writer of the replica's modelled log (sim-log.ts).
 *
 *   consensus ─log-write(promise, entries, truncate, forwards)─▶ log: write, fsync ─▶ each forward
 *             (promise, accepted, and log-synced(applied) back to the consensus actor)
 *   consensus ─log-read─▶ log ─recover(promise, snapshot, sessions, entries)─▶ consensus
 *
 * "Sync before you answer" without any waiting state in the consensus actor: the promise or
 * accepted message that announces a write travels inside the write and leaves from here, after the
 * write is durable. Writes from one consensus actor are handled in the order sent, so a forward
 * also vouches for every earlier write: the applied point an `accepted` reports is durable when
 * the leader reads it, and a `log-synced` forward tells the consensus actor itself which applied
 * point is durable (what its direct heartbeat-acks report).
 *
 * Declared work: per write, the base cost, the entries' bytes and a record operation each, one
 * send per forward; a write that changes the disk (a promise, entries or a truncation) also blocks
 * the host core for the bytes at the disk's write rate plus one fsync (DISK_FSYNC_NS).
 */

import type { ActorContext, HandlerWork } from '../../../actor/index.ts';
import { defineActor } from '../../../actor/index.ts';
import { DmoHashMap } from '../../../dmo/index.ts';
import { RKV_BASE_INSTRUCTIONS, rkvRef } from './consensus-actor.ts';
import { type RkvMessage, rkvMessages } from './messages.ts';
import { simLog } from './sim-log.ts';
import {
  DISK_FSYNC_NS,
  DISK_WRITE_BYTES_PER_SEC,
  loadSetup,
  refuseBeforeSetup,
  saveSetup,
} from './storage-actors.ts';

type RkvContext = ActorContext<RkvMessage, RkvMessage>;

function forward(ctx: RkvContext, to: string, message: RkvMessage): void {
  const ref = rkvRef(ctx, to);
  if (ref === undefined) {
    ctx.log.warn({ to, type: message.type }, 'rkv log: no such actor; forward dropped');
    return;
  }
  ctx.send(ref, message, { origin: 'none' });
}

/** The durable-log actor (one per replica, pinned to the host; see the header). */
export const rkvLog = defineActor({
  name: 'rkv-log',
  messages: rkvMessages,
  replies: rkvMessages,
  placement: 'host',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('setup', DmoHashMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    if (message.type === 'log-setup') return saveSetup(ctx, message);
    const setup = loadSetup(ctx, 'log-setup');
    if (setup === undefined) return refuseBeforeSetup(ctx, message);
    // A crashed incarnation's log actor finds no log: it must not write what its node lost.
    const log = simLog(setup.log);
    if (log === undefined) {
      ctx.log.error({ log: setup.log, type: message.type }, 'rkv log: the log is not registered; dropped');
      return;
    }
    switch (message.type) {
      case 'log-write': {
        if (message.promised > 0 || message.entries.length > 0) log.write(message.promised, message.entries);
        if (message.truncateThrough > 0) log.truncate(message.truncateThrough);
        for (const item of message.forwards) forward(ctx, item.to, rkvMessages.decode(item.message));
        return;
      }
      case 'log-read': {
        const state = log.read();
        forward(ctx, setup.consensus, {
          type: 'recover',
          promised: state.promised,
          truncated: state.truncated,
          empty: log.empty,
          sessions: [...state.sessions],
          snapshot: [...state.snapshot],
          entries: [...state.entries],
        });
        return;
      }
      default:
        ctx.log.warn({ type: message.type }, 'rkv log: not a log message; dropped');
    }
  },
  cost: logWork,
});

/** One record written or read (encode, checksum, append to the write buffer). */
const LOG_RECORD_INSTRUCTIONS = 300;
const SEND_INSTRUCTIONS = 250;
const PER_BYTE_INSTRUCTIONS = 1 / 8;

function logWork(message: RkvMessage): HandlerWork {
  const base = { ipc: 1.2, mpki: 3, workingSetBytes: 256 * 1024 };
  switch (message.type) {
    case 'log-write': {
      let bytes = 8;
      for (const entry of message.entries) bytes += 42 + entry.key.length + entry.value.length;
      let forwarded = 0;
      for (const item of message.forwards) forwarded += item.message.length;
      const writes = message.promised > 0 || message.entries.length > 0 || message.truncateThrough > 0;
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          message.entries.length * LOG_RECORD_INSTRUCTIONS +
          message.forwards.length * SEND_INSTRUCTIONS +
          (bytes + forwarded) * PER_BYTE_INSTRUCTIONS,
        // The host core waits for the write and its fsync (a truncation writes the snapshot's
        // changes: charged as one record's bytes, a bound the DST's small key sets stay under).
        ...(writes ? { fixedNs: (bytes / DISK_WRITE_BYTES_PER_SEC) * 1e9 + DISK_FSYNC_NS } : {}),
      };
    }
    case 'recover':
    case 'log-read':
      // Reading the log back: sequential, from the page cache or the disk (a restart's cost).
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + 64 * LOG_RECORD_INSTRUCTIONS };
    default:
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS };
  }
}
