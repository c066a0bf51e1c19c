/**
 * The replica-to-replica wire of RKV's live cluster: checksummed frames over TCP carrying Paxos
 * peer messages, client commands a follower forwards to its shard's leader, and the leader's
 * replies routed back (paper, "The applications": RKV's consensus actors talk over the network).
 *
 *   frame   = length u32 LE (payload bytes) │ crc32 u32 LE (of the payload) │ payload
 *   payload = kind u8 │ from u32 (sending replica) │ shard u32 │ body
 *     kind 1  peer message    type u8, then the fields of `PeerMessage` in declaration order
 *     kind 2  client request  clientId f64 │ seq f64 │ command
 *     kind 3  client reply    1 reply: clientId f64 │ seq f64 │ result
 *                             2 redirect: clientId f64 │ seq f64 │ hint u8 (0 none | 1 + u32)
 *
 * TCP already checksums segments; the CRC here (zlib's CRC-32, like the Paxos file log) catches
 * what TCP's 16-bit sum and a buggy peer miss, and a length over `MAX_FRAME_BYTES` means the
 * stream lost framing. Either way the receiver drops the connection (`ClusterFrameError`) and the
 * sender dials again; Paxos retransmits whatever was lost.
 */

import { crc32 } from 'node:zlib';
import { ByteReader, ByteWriter } from '../paxos/bytes.ts';
import type {
  Ballot,
  ClientId,
  ClientReply,
  ClientRequest,
  LogCommand,
  PeerMessage,
  PromiseEntry,
  ReplicaId,
  SessionRecord,
  SlotCommand,
  Snapshot,
} from '../paxos/types.ts';
import {
  type ClusterCommand,
  type ClusterResult,
  readCommand,
  readResult,
  writeCommand,
  writeResult,
} from './commands.ts';
import { ClusterFrameError } from './errors.ts';

/** A frame longer than this means lost framing (snapshots of big shards stay below it). */
export const MAX_FRAME_BYTES = 1 << 30;
const HEADER_BYTES = 8;

type Peer = PeerMessage<ClusterCommand, ClusterResult>;

/** One decoded frame. */
export type WireMessage =
  | { readonly kind: 'peer'; readonly from: number; readonly shard: number; readonly message: Peer }
  | {
      readonly kind: 'request';
      readonly from: number;
      readonly shard: number;
      readonly request: ClientRequest<ClusterCommand>;
    }
  | {
      readonly kind: 'reply';
      readonly from: number;
      readonly shard: number;
      readonly reply: ClientReply<ClusterResult>;
    };

const KIND = { peer: 1, request: 2, reply: 3 } as const;
const PEER_TYPES = [
  'prepare',
  'promise',
  'accept',
  'accepted',
  'reject',
  'commit',
  'heartbeat',
  'heartbeatAck',
  'catchupRequest',
  'catchup',
] as const satisfies readonly Peer['type'][];

function writeLogCommand(writer: ByteWriter, command: LogCommand<ClusterCommand>): void {
  if (command.kind === 'noop') {
    writer.u8(0);
    return;
  }
  writer.u8(1).f64(command.clientId).f64(command.seq);
  writeCommand(writer, command.payload);
}

function readLogCommand(reader: ByteReader): LogCommand<ClusterCommand> {
  const kind = reader.u8();
  if (kind === 0) return { kind: 'noop' };
  if (kind !== 1) throw new RangeError(`bad log command kind ${kind}`);
  const clientId = reader.count() as ClientId;
  const seq = reader.count();
  return { kind: 'request', clientId, seq, payload: readCommand(reader) };
}

function writeSnapshot(writer: ByteWriter, snapshot: Snapshot<ClusterResult>): void {
  writer.f64(snapshot.lastIncludedSlot).bytes(snapshot.state).u32(snapshot.sessions.length);
  for (const session of snapshot.sessions) {
    writer.f64(session.clientId).f64(session.seq);
    writeResult(writer, session.result);
  }
}

function readSnapshot(reader: ByteReader): Snapshot<ClusterResult> {
  const lastIncludedSlot = reader.count();
  const state = reader.bytes();
  const count = reader.u32();
  const sessions: SessionRecord<ClusterResult>[] = [];
  for (let index = 0; index < count; index++) {
    const clientId = reader.count() as ClientId;
    const seq = reader.count();
    sessions.push({ clientId, seq, result: readResult(reader) });
  }
  return { lastIncludedSlot, state, sessions };
}

function writePeer(writer: ByteWriter, message: Peer): void {
  writer.u8(PEER_TYPES.indexOf(message.type)).u32(message.from);
  switch (message.type) {
    case 'prepare':
      writer.f64(message.ballot).f64(message.fromSlot);
      return;
    case 'promise':
      writer.f64(message.ballot).f64(message.truncatedThrough).u32(message.entries.length);
      for (const entry of message.entries) {
        writer
          .f64(entry.slot)
          .f64(entry.ballot)
          .u8(entry.chosen ? 1 : 0);
        writeLogCommand(writer, entry.command);
      }
      return;
    case 'accept':
      writer.f64(message.ballot).f64(message.commitThrough).u32(message.entries.length);
      for (const entry of message.entries) {
        writer.f64(entry.slot);
        writeLogCommand(writer, entry.command);
      }
      return;
    case 'accepted':
      writer.f64(message.ballot).u32(message.slots.length);
      for (const slot of message.slots) writer.f64(slot);
      return;
    case 'reject':
      writer.f64(message.ballot).f64(message.promised);
      return;
    case 'commit':
    case 'heartbeat':
      writer.f64(message.ballot).f64(message.commitThrough);
      return;
    case 'heartbeatAck':
      writer.f64(message.ballot).f64(message.appliedThrough);
      return;
    case 'catchupRequest':
      writer.f64(message.fromSlot);
      return;
    case 'catchup':
      if (message.snapshot === null) writer.u8(0);
      else {
        writer.u8(1);
        writeSnapshot(writer, message.snapshot);
      }
      writer.u32(message.entries.length);
      for (const entry of message.entries) {
        writer.f64(entry.slot);
        writeLogCommand(writer, entry.command);
      }
      return;
  }
}

function readPeer(reader: ByteReader): Peer {
  const type = PEER_TYPES[reader.u8()];
  const from = reader.u32() as ReplicaId;
  switch (type) {
    case 'prepare':
      return { type, from, ballot: reader.count() as Ballot, fromSlot: reader.count() };
    case 'promise': {
      const ballot = reader.count() as Ballot;
      const truncatedThrough = reader.count();
      const count = reader.u32();
      const entries: PromiseEntry<ClusterCommand>[] = [];
      for (let index = 0; index < count; index++) {
        const slot = reader.count();
        const entryBallot = reader.count() as Ballot;
        const chosen = reader.u8() === 1;
        entries.push({ slot, ballot: entryBallot, chosen, command: readLogCommand(reader) });
      }
      return { type, from, ballot, truncatedThrough, entries };
    }
    case 'accept': {
      const ballot = reader.count() as Ballot;
      const commitThrough = reader.count();
      return { type, from, ballot, commitThrough, entries: readSlotCommands(reader) };
    }
    case 'accepted': {
      const ballot = reader.count() as Ballot;
      const count = reader.u32();
      const slots: number[] = [];
      for (let index = 0; index < count; index++) slots.push(reader.count());
      return { type, from, ballot, slots };
    }
    case 'reject':
      return { type, from, ballot: reader.count() as Ballot, promised: reader.count() as Ballot };
    case 'commit':
    case 'heartbeat':
      return { type, from, ballot: reader.count() as Ballot, commitThrough: reader.count() };
    case 'heartbeatAck':
      return { type, from, ballot: reader.count() as Ballot, appliedThrough: reader.count() };
    case 'catchupRequest':
      return { type, from, fromSlot: reader.count() };
    case 'catchup': {
      const snapshot = reader.u8() === 1 ? readSnapshot(reader) : null;
      return { type, from, snapshot, entries: readSlotCommands(reader) };
    }
    default:
      throw new RangeError('unknown peer message type');
  }
}

function readSlotCommands(reader: ByteReader): SlotCommand<ClusterCommand>[] {
  const count = reader.u32();
  const entries: SlotCommand<ClusterCommand>[] = [];
  for (let index = 0; index < count; index++) {
    const slot = reader.count();
    entries.push({ slot, command: readLogCommand(reader) });
  }
  return entries;
}

/** One framed message (header and payload) ready for `socket.write`. */
export function encodeWireMessage(message: WireMessage): Uint8Array {
  const writer = new ByteWriter(64);
  writer.u32(0).u32(0); // header, patched below
  writer.u8(KIND[message.kind]).u32(message.from).u32(message.shard);
  switch (message.kind) {
    case 'peer':
      writePeer(writer, message.message);
      break;
    case 'request':
      writer.f64(message.request.clientId).f64(message.request.seq);
      writeCommand(writer, message.request.command);
      break;
    case 'reply': {
      const reply = message.reply;
      writer
        .u8(reply.type === 'reply' ? 1 : 2)
        .f64(reply.clientId)
        .f64(reply.seq);
      if (reply.type === 'reply') writeResult(writer, reply.result);
      else if (reply.leaderHint === null) writer.u8(0);
      else writer.u8(1).u32(reply.leaderHint);
      break;
    }
  }
  const frame = writer.finish();
  const payload = frame.subarray(HEADER_BYTES);
  const header = new DataView(frame.buffer, frame.byteOffset, HEADER_BYTES);
  header.setUint32(0, payload.length, true);
  header.setUint32(4, crc32(payload), true);
  return frame;
}

function decodePayload(payload: Uint8Array): WireMessage {
  const reader = new ByteReader(payload);
  const kind = reader.u8();
  const from = reader.u32();
  const shard = reader.u32();
  let message: WireMessage;
  if (kind === KIND.peer) message = { kind: 'peer', from, shard, message: readPeer(reader) };
  else if (kind === KIND.request) {
    const clientId = reader.count() as ClientId;
    const seq = reader.count();
    message = {
      kind: 'request',
      from,
      shard,
      request: { type: 'request', clientId, seq, command: readCommand(reader) },
    };
  } else if (kind === KIND.reply) {
    const type = reader.u8();
    const clientId = reader.count() as ClientId;
    const seq = reader.count();
    if (type === 1)
      message = {
        kind: 'reply',
        from,
        shard,
        reply: { type: 'reply', clientId, seq, result: readResult(reader) },
      };
    else if (type === 2) {
      const leaderHint = reader.u8() === 1 ? (reader.u32() as ReplicaId) : null;
      message = { kind: 'reply', from, shard, reply: { type: 'redirect', clientId, seq, leaderHint } };
    } else throw new RangeError(`bad reply type ${type}`);
  } else throw new RangeError(`unknown frame kind ${kind}`);
  if (reader.remaining !== 0) throw new RangeError(`${reader.remaining} trailing byte(s)`);
  return message;
}

/**
 * Splits a TCP byte stream into messages. `push` returns the messages completed by a chunk and
 * throws `ClusterFrameError` on a bad length, checksum or body (the caller drops the connection).
 */
export class FrameDecoder {
  #buffer: Uint8Array = new Uint8Array(0);

  push(chunk: Uint8Array): WireMessage[] {
    let bytes: Uint8Array;
    if (this.#buffer.length === 0) bytes = chunk;
    else {
      bytes = new Uint8Array(this.#buffer.length + chunk.length);
      bytes.set(this.#buffer);
      bytes.set(chunk, this.#buffer.length);
    }
    const messages: WireMessage[] = [];
    let offset = 0;
    while (bytes.length - offset >= HEADER_BYTES) {
      const view = new DataView(bytes.buffer, bytes.byteOffset + offset, HEADER_BYTES);
      const length = view.getUint32(0, true);
      const checksum = view.getUint32(4, true);
      if (length === 0 || length > MAX_FRAME_BYTES) {
        throw new ClusterFrameError(`implausible frame length ${length}`);
      }
      if (bytes.length - offset - HEADER_BYTES < length) break;
      const payload = bytes.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length);
      if (crc32(payload) !== checksum)
        throw new ClusterFrameError(`CRC-32 mismatch on a ${length}-byte frame`);
      try {
        messages.push(decodePayload(payload));
      } catch (error) {
        throw new ClusterFrameError(
          `undecodable frame (${error instanceof Error ? error.message : String(error)})`,
        );
      }
      offset += HEADER_BYTES + length;
    }
    this.#buffer = offset === bytes.length ? new Uint8Array(0) : bytes.slice(offset);
    return messages;
  }

  /** Bytes held waiting for the rest of a frame. */
  get buffered(): number {
    return this.#buffer.length;
  }
}
