/**
 * RKV's durable-log actor on the simulated platform (iPipe §5 "RKV": the consensus actor's state
 * is in NIC memory, which a crash loses; the host's disk is what survives — docs/apps/rkv-cluster.md
 * keeps the live PaxosReplica's log on the host the same way). One per replica, pinned to the
 * host, exclusive: the single writer of the replica's modelled log (sim-log.ts).
 *
 *   consensus ─log-write(promise, entries, truncate, forwards)─▶ log: write, fsync ─▶ each forward
 *             (promise, accepted, and log-synced(applied) back to the consensus actor)
 *   consensus ─log-read(part i)─▶ log ─recover(i of n: promise, then sessions, snapshot items,
 *             entries, cut into parts of at most the chunk budget)─▶ consensus (asks for i + 1)
 *   state transfer (consensus-actor.ts): a sender's consensus ─snapshot-read(to, slot, chunk)─▶
 *             log: checkpoint (sim-log.ts) ─snapshot-chunk─▶ the laggard's consensus actor `to`;
 *             the laggard's consensus ─log-install(chunk)─▶ its log: stage; all staged ⇒ switch,
 *             fsync ─snapshot-installed─▶ consensus
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
import { type RkvMessage, type RkvMsg, rkvMessages } from './messages.ts';
import {
  type DurableEntry,
  type DurableLogState,
  SNAPSHOT_SESSION_BYTES,
  type SnapshotItem,
  type SnapshotSession,
  simLog,
  snapshotItemBytes,
} from './sim-log.ts';
import { DISK_FSYNC_NS, DISK_WRITE_BYTES_PER_SEC, gateOnSetup } from './storage-actors.ts';

type RkvContext = ActorContext<RkvMessage, RkvMessage>;

/**
 * Default bytes of items and sessions per `snapshot-chunk`: with its header a chunk stays inside a
 * 9000-byte jumbo frame, and a single item of the largest size the wire carries (64-byte key,
 * 8 KiB value) still fits one chunk.
 */
export const SNAPSHOT_CHUNK_BYTES = 8 * 1024;

function forward(ctx: RkvContext, to: string, message: RkvMessage): void {
  const ref = rkvRef(ctx, to);
  if (ref === undefined) {
    ctx.log.warn({ to, type: message.type }, 'rkv log: no such actor; forward dropped');
    return;
  }
  ctx.send(ref, message, { origin: 'none' });
}

/** Bytes one log entry takes in a `recover` part's budget (its slot, ballot, session and lengths). */
const RECOVER_ENTRY_OVERHEAD_BYTES = 42;

/**
 * Part `part` of the durable state `state`, cut as `recover` describes (messages.ts): sessions,
 * then snapshot items, then entries, each part at most `budget` bytes or one item. The log does
 * not change while its consensus actor recovers (nothing else writes it), so every read cuts the
 * same parts; undefined when `part` is past the last.
 */
export function recoverPart(
  state: DurableLogState,
  empty: boolean,
  budget: number,
  part: number,
): RkvMsg<'recover'> | undefined {
  const items: { readonly kind: 0 | 1 | 2; readonly index: number; readonly bytes: number }[] = [];
  state.sessions.forEach((_s, index) => {
    items.push({ kind: 0, index, bytes: SNAPSHOT_SESSION_BYTES });
  });
  state.snapshot.forEach((item, index) => {
    items.push({ kind: 1, index, bytes: snapshotItemBytes(item) });
  });
  state.entries.forEach((entry, index) => {
    items.push({
      kind: 2,
      index,
      bytes: RECOVER_ENTRY_OVERHEAD_BYTES + entry.key.length + entry.value.length,
    });
  });
  // Part boundaries: a part closes when the next item would take it past the budget.
  const starts = [0];
  let bytes = 0;
  items.forEach((item, i) => {
    if (bytes > 0 && bytes + item.bytes > budget) {
      starts.push(i);
      bytes = 0;
    }
    bytes += item.bytes;
  });
  const parts = starts.length;
  const from = starts[part];
  if (!(Number.isSafeInteger(part) && part >= 0) || from === undefined) return undefined;
  const to = starts[part + 1] ?? items.length;
  const sessions: SnapshotSession[] = [];
  const snapshot: SnapshotItem[] = [];
  const entries: DurableEntry[] = [];
  for (const item of items.slice(from, to)) {
    if (item.kind === 0) sessions.push(state.sessions[item.index] as SnapshotSession);
    else if (item.kind === 1) snapshot.push(state.snapshot[item.index] as SnapshotItem);
    else entries.push(state.entries[item.index] as DurableEntry);
  }
  return {
    type: 'recover',
    part,
    parts,
    promised: state.promised,
    truncated: state.truncated,
    empty,
    sessions,
    snapshot,
    entries,
  };
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
    const setup = gateOnSetup(ctx, message, 'log-setup');
    if (setup === undefined) return;
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
        const budget = setup.snapshotChunkBytes > 0 ? setup.snapshotChunkBytes : SNAPSHOT_CHUNK_BYTES;
        const part = recoverPart(log.read(), log.empty, budget, message.part);
        if (part === undefined) {
          ctx.log.warn({ part: message.part }, 'rkv log: no such recovery part; dropped');
          return;
        }
        forward(ctx, setup.consensus, part);
        return;
      }
      case 'snapshot-read': {
        const budget = setup.snapshotChunkBytes > 0 ? setup.snapshotChunkBytes : SNAPSHOT_CHUNK_BYTES;
        const checkpoint = log.checkpoint(message.slot, message.atLeast, budget);
        if (checkpoint === undefined) {
          ctx.log.warn({ atLeast: message.atLeast }, 'rkv log: no state to checkpoint at that point yet');
          return;
        }
        // A chunk of another checkpoint than the one asked for starts the receiver over: chunk 0.
        const chunk = checkpoint.slot === message.slot ? message.chunk : 0;
        const content = checkpoint.chunks[chunk];
        if (content === undefined) return;
        forward(ctx, message.to, {
          type: 'snapshot-chunk',
          from: message.sender,
          slot: checkpoint.slot,
          chunk,
          chunks: checkpoint.chunks.length,
          items: [...content.items],
          sessions: [...content.sessions],
        });
        return;
      }
      case 'log-install': {
        const installed = log.stage(message.slot, message.chunk, message.chunks, message);
        if (installed !== undefined) {
          forward(ctx, setup.consensus, { type: 'snapshot-installed', slot: message.slot, ...installed });
        }
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
    case 'log-install': {
      // Staging a chunk: its bytes to the disk; the last one also writes the switch and syncs.
      let bytes = 8;
      for (const item of message.items) bytes += snapshotItemBytes(item);
      bytes += message.sessions.length * SNAPSHOT_SESSION_BYTES;
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS +
          (message.items.length + message.sessions.length) * LOG_RECORD_INSTRUCTIONS +
          bytes * PER_BYTE_INSTRUCTIONS,
        fixedNs: (bytes / DISK_WRITE_BYTES_PER_SEC) * 1e9 + DISK_FSYNC_NS,
      };
    }
    case 'snapshot-read':
      // A chunk read back (a new checkpoint folds the log's chosen prefix: amortised here).
      return {
        ...base,
        instructions:
          RKV_BASE_INSTRUCTIONS + 64 * LOG_RECORD_INSTRUCTIONS + SEND_INSTRUCTIONS + SNAPSHOT_CHUNK_BYTES / 8,
      };
    case 'recover':
    case 'log-read':
      // Reading the log back: sequential, from the page cache or the disk (a restart's cost).
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS + 64 * LOG_RECORD_INSTRUCTIONS };
    default:
      return { ...base, instructions: RKV_BASE_INSTRUCTIONS };
  }
}
