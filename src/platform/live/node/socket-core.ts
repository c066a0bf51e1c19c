/**
 * NIC core 0 owning the node's UDP socket (`LiveNodeOptions.ingress: 'core'`; iPipe §4.2: the
 * management core pulls requests from the traffic manager and runs them to completion). One
 * worker thread receives each datagram, checks it (wire format, CRC-32C), finds its client and
 * dedup entry, puts it through the HybridScheduler's data path, runs the NIC-resident actor's
 * handler inline on the shared DMO heap, and encodes, seals and sends the reply — no other thread
 * on a request's path (docs/live-echo-path.md: the controller's hand-off was ~40% of the node's
 * per-request CPU). The controller (main thread) keeps the host channel, migration and the admin
 * side; the two talk over the rings of socket-core-protocol.ts, and the core's counters are a
 * SharedArrayBuffer the controller reads.
 *
 * The thread lives in libuv's poll on the socket, so it cannot block in `Atomics.wait` for its
 * work ring: it watches it with `Atomics.waitAsync` (one promise per wake-up, paid by the host
 * path and control messages only).
 */

import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { MessageCodec } from '../../../actor/codec.ts';
import type { ActorLogger, PendingTimer, TimerId } from '../../../actor/context.ts';
import type { ClientOrigin, Origin } from '../../../actor/envelope.ts';
import { DmoDomain } from '../../../dmo/domain.ts';
import { IpipeError } from '../../../errors.ts';
import type { ActorId } from '../../../ids.ts';
import type { ActorPorts } from '../../../runtime/actor-instance.ts';
import { HybridScheduler, type SchedulerPolicy } from '../../../sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../../../sched/settings.ts';
import type { Decision, Domain } from '../../../sched/types.ts';
import { RING_CORRUPT, RING_EMPTY, type RingMemory, SpscRing } from '../channel/ring.ts';
import { literalLookup } from '../net/literal-lookup.ts';
import { encodeErrorBody, FrameView, HEADER_BYTES, readFrameInto, sealFrame } from '../net/wire.ts';
import type { CatalogEntry } from './actor-catalog.ts';
import { ClientDirectory, endpointKey } from './client-directory.ts';
import { runAtWallNs, wallNs, wallNsAt } from './clock.ts';
import { ActorInstances, CoreActors } from './core-actors.ts';
import { DECODE_FAILED, FrameBuilder, FrameReader } from './core-protocol.ts';
import { type LiveClient, LiveRequest } from './live-request.ts';
import {
  NOT_FOUND,
  PHASE_STARTED,
  type SharedDedupMemory,
  SharedRequestDedup,
} from './shared-request-dedup.ts';
import {
  dropSlot,
  IN_ARRIVE,
  IN_CLOSE,
  IN_DEREGISTER,
  IN_HOST_DONE,
  IN_MOVED,
  IN_PREPARE,
  IN_REPLY,
  IN_STOPPING,
  ipv4ToU32,
  markSettled,
  OUT_DECISION,
  OUT_FORWARD,
  OUT_LATENCY,
  OUT_MOVED,
  OUT_PREPARED,
  OUT_REFUSED,
  SLOT_DRR_CORES,
  SLOT_DUPLICATES,
  SLOT_ERROR_REPLIES,
  SLOT_EXECUTED,
  SLOT_FORWARDS,
  SLOT_HANDLER_NS,
  SLOT_HELD,
  SLOT_METRICS_ON,
  SLOT_REPLIES,
  SLOT_REQUESTS,
  SLOT_RUNNING_ACTOR,
  SLOT_RUNNING_ADDRESS,
  SLOT_RUNNING_CLIENT,
  SLOT_RUNNING_GENERATION,
  SLOT_RUNNING_PORT,
  SLOT_RUNNING_REQUEST,
  SLOT_RUNNING_SINCE_MS,
  SLOT_WORK_CONSUMED,
  TO_HOST,
  TO_NIC,
} from './socket-core-protocol.ts';

export interface SocketCoreData {
  readonly entry: string;
  readonly domainBuffer: SharedArrayBuffer;
  readonly workRing: RingMemory;
  readonly resultRing: RingMemory;
  readonly counters: SharedArrayBuffer;
  /** The dedup entries and remembered replies, shared by core 0 and its replacements. */
  readonly dedup: SharedDedupMemory;
  /** The message ledger (socket-core-protocol.ts), shared by core 0 and its replacements. */
  readonly messageLedger: SharedArrayBuffer;
  readonly catalog: readonly CatalogEntry[];
  readonly policy: SchedulerPolicy;
  readonly scheduler: Partial<SchedulerSettings>;
  readonly address: string;
  readonly maxFrameBytes: number;
  readonly ingressLimit: number;
  /** How to start serving; undefined for a warm spare, which is sent it when it takes over. */
  readonly activation: SocketCoreActivation | undefined;
}

/**
 * What a core needs to start serving. A warm spare (a core thread started beside core 0, its
 * imports done, idle) gets it only when it replaces core 0, so it starts from the node's state then.
 */
export interface SocketCoreActivation {
  /**
   * Where each of this node's actors runs now; for one in `migrating`, where its move began (the
   * host may have adopted it already: its IN_MOVED comes again, behind what the core gets first).
   */
  readonly domains: readonly (readonly [ActorId, Domain])[];
  /** Actors the node deregistered (a replacement core starts without them). */
  readonly deregistered: readonly ActorId[];
  /**
   * Migrations that outlive the core they began on (a replacement): the controller had sent the
   * image or LINK_MIGRATE, so the actor's requests are buffered here from the start, as in phase 1,
   * until IN_MOVED.
   */
  readonly migrating: readonly (readonly [ActorId, Domain])[];
  /** The node is stopping (a core replaced during `stop` refuses new requests too). */
  readonly stopping: boolean;
  readonly port: number;
  /**
   * Attempts to bind, BIND_RETRY_MS apart: 1 at start (a taken port fails at once), more for a
   * replacement, which may find the terminated thread's socket not closed yet.
   */
  readonly bindTries: number;
  /**
   * Re-arm the pending timers of the actors on the NIC (a replacement: the timers the old thread
   * had armed died with it; each actor's timers are in its heap, DmoStateStore).
   */
  readonly rearmTimers: boolean;
  /**
   * Forwards the controller had read from the previous core (0 for the first): entries of
   * requests forwarded past it never reached the host, and are forgotten (SharedRequestDedup).
   */
  readonly forwardsRead: number;
}

/** The core's first message: the port it bound, or why it could not; a spare says it is ready. */
export type SocketCoreHello =
  | { readonly kind: 'ready'; readonly address: string; readonly port: number }
  | { readonly kind: 'bind-failed'; readonly message: string }
  | { readonly kind: 'spare' };

/** Management tick while idle / busy (ms), as NicController's. */
const MANAGE_IDLE_MS = 1;
const MANAGE_BUSY_MS = 10;
const BIND_RETRY_MS = 5;

const data = workerData as SocketCoreData;
const domain = DmoDomain.attach(data.domainBuffer);
const work = SpscRing.attach(data.workRing, { spinIterations: 0 });
const results = SpscRing.attach(data.resultRing, { spinIterations: 0 });
const counters = new Float64Array(data.counters);
const ledger = new Int32Array(data.messageLedger);
const actors = await CoreActors.load(data.catalog);
const maxFrameBytes = data.maxFrameBytes;

let activation = data.activation;
if (activation === undefined) {
  // A warm spare: the costly part of starting (tsx, the actor modules) is done; wait, idle in the
  // event loop (no CPU), until told to take over.
  activation = await new Promise<SocketCoreActivation>((resolve) => {
    parentPort?.once('message', (message: SocketCoreActivation) => resolve(message));
    const hello: SocketCoreHello = { kind: 'spare' };
    parentPort?.postMessage(hello);
  });
}
const start: SocketCoreActivation = activation;

const scheduler = new HybridScheduler<LiveRequest>({
  cores: 1,
  policy: data.policy,
  settings: data.scheduler,
  nameOf: (id) => actors.get(id)?.entry.name ?? `actor ${id}`,
});
for (const [id, where] of start.domains) {
  const known = actors.get(id);
  if (!known) continue;
  scheduler.addActor({
    id,
    placement: known.definition.placement,
    exclusive: known.definition.exclusive,
    domain: where,
  });
}
for (const id of start.deregistered) scheduler.removeActor(id);
for (const [id, to] of start.migrating) {
  if (actors.has(id) && scheduler.modeOf(id) !== 'deregistered') scheduler.prepareMigration(id, to, wallNs());
}

const log: ActorLogger = {
  debug() {},
  info() {},
  warn(fields, message) {
    process.stderr.write(`${JSON.stringify({ level: 'warn', core: 0, ...fields, msg: message })}\n`);
  },
  error(fields, message) {
    process.stderr.write(`${JSON.stringify({ level: 'error', core: 0, ...fields, msg: message })}\n`);
  },
};

// ── counters ─────────────────────────────────────────────────────────────────────────────────

function drop(reason: string, count = 1): void {
  counters[dropSlot(reason)]! += count;
}

/**
 * A message from the controller is done with here (`forwardNumber` 0: run or refused; else the
 * number of its OUT_FORWARD): the controller lets go of its copy, and a replacement never gets it.
 */
function settled(request: LiveRequest, forwardNumber = 0): void {
  if (request.messageId !== 0) markSettled(ledger, request.messageId, forwardNumber);
}

// ── the socket and replies ─────────────────────────────────────────────────────────────────────

function newSocket(): Socket {
  const socket = createSocket({ type: 'udp4', recvBufferSize: 1 << 22, lookup: literalLookup() });
  socket.on('message', onDatagram);
  socket.on('error', (error) => process.stderr.write(`ipipe: UDP socket error: ${error.message}\n`));
  return socket;
}

let socket = newSocket();
let socketClosed = false;
let stopping = start.stopping;
const clients = new ClientDirectory();
// The dead core's entries and replies, if this core replaces one: a retransmission of a request
// it answered is answered from them (at-most-once across a replacement).
const dedup = SharedRequestDedup.attach(data.dedup, start.forwardsRead);

function send(bytes: Uint8Array, port: number, address: string): void {
  if (socketClosed) {
    drop('socket-closed');
    return;
  }
  socket.send(bytes, port, address);
}

/**
 * `size` bytes for a reply frame, in the shared dedup's arena: the frame is written where it is
 * remembered (no copy), and a replacement core finds it there.
 */
function replyFrame(size: number): Uint8Array {
  return dedup.replyFrame(size);
}

/**
 * Seals the reply frame whose body is already at `frame[HEADER_BYTES…]`, caches it against
 * retransmissions, counts it, sends it. `client`: the record of the request's own client, when the
 * caller has it (its endpoint key is then not rebuilt).
 */
function sendReply(
  frame: Uint8Array,
  bodyBytes: number,
  origin: ClientOrigin,
  actor: ActorId,
  kind: 'reply' | 'error',
  client: LiveClient | undefined,
  knownClientId = 0,
): void {
  let clientId = knownClientId;
  if (clientId === 0) {
    const key =
      client !== undefined && client.endpoint === origin.endpoint ? client.key : endpointKey(origin.endpoint);
    clientId = clients.clientIdAt(key);
  }
  sealFrame(
    frame,
    { kind, targetActorId: actor, requestId: origin.requestId, clientId },
    bodyBytes,
    0,
    Math.max(maxFrameBytes, frame.length),
  );
  if (kind === 'reply') counters[SLOT_REPLIES]! += 1;
  else counters[SLOT_ERROR_REPLIES]! += 1;
  const entry = dedup.find(clientId, origin.requestId);
  if (entry !== NOT_FOUND) {
    dedup.setReply(entry, frame);
    const arrivalNs = dedup.takeArrivalNs(entry);
    if (arrivalNs >= 0 && counters[SLOT_METRICS_ON] === 1) noteLatency(actor, (wallNs() - arrivalNs) / 1e9);
  }
  send(frame, origin.endpoint.port, origin.endpoint.address);
}

/** `clientId`: the client's id when the caller knows it (0: as the endpoint's directory entry says). */
function replyBytes(
  origin: ClientOrigin,
  actor: ActorId,
  body: Uint8Array,
  kind: 'reply' | 'error',
  clientId = 0,
): void {
  const frame = replyFrame(HEADER_BYTES + body.length);
  frame.set(body, HEADER_BYTES);
  sendReply(frame, body.length, origin, actor, kind, undefined, clientId);
}

const errorBody = new Uint8Array(1024);

function errorToClient(origin: Origin, actor: ActorId, code: string, message: string): void {
  if (origin.kind !== 'client') return;
  const room = Math.min(errorBody.length, maxFrameBytes - HEADER_BYTES);
  const safeCode = /^[\x21-\x7e]{1,255}$/.test(code) ? code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED';
  const length = encodeErrorBody(errorBody.subarray(0, room), 0, safeCode, message);
  replyBytes(origin, actor, errorBody.subarray(0, length), 'error');
}

// ── results to the controller ───────────────────────────────────────────────────────────────────

const out = new FrameBuilder();

let flushScheduled = false;
const flushResults = (): void => {
  flushScheduled = false;
  results.flush();
};

/**
 * Writes `out` to the result ring. `soon`: published by the end of this event-loop turn (one
 * doorbell for every record of the datagrams a poll phase delivered, not one per record: each
 * wakes the controller's thread); otherwise with the next such flush or the management tick.
 */
function publish(soon = true): void {
  if (!results.tryWrite(out.frame)) {
    // The controller is behind: wait for room rather than lose a forward or a decision (the
    // controller never blocks on this core, so it will make room). A handler blocked here (its
    // reply's latency record) waits for the controller, not runs away: its watchdog clock stops.
    const sinceMs = counters[SLOT_RUNNING_SINCE_MS] as number;
    counters[SLOT_RUNNING_SINCE_MS] = 0;
    const blockedMs = performance.now();
    results.write(out.frame);
    if (sinceMs !== 0) counters[SLOT_RUNNING_SINCE_MS] = sinceMs + (performance.now() - blockedMs);
  }
  if (soon && !flushScheduled) {
    flushScheduled = true;
    setImmediate(flushResults);
  }
}

function forward(request: LiveRequest): void {
  // The k-th forward (k = FORWARDS after it): a replacement keeps its dedup entry only if the
  // controller read it (SocketCoreActivation.forwardsRead); a message is re-sent to it if not.
  settled(request, (counters[SLOT_FORWARDS] as number) + 1);
  if (request.dedupEntry >= 0 && request.client !== undefined && request.origin.kind === 'client')
    dedup.setPhase(
      request.dedupEntry,
      request.client.clientId,
      request.origin.requestId,
      (counters[SLOT_FORWARDS] as number) + 1,
    );
  out.reset();
  out.u8(OUT_FORWARD);
  out.u32(request.actor);
  out.u32(request.timerId);
  // The host's reply comes back with it (IN_REPLY): a replacement core's directory is empty.
  out.u32(request.client?.clientId ?? 0);
  out.origin(request.origin);
  out.bytesField(request.payload);
  publish();
  counters[SLOT_FORWARDS]! += 1;
}

function noteLatency(actor: ActorId, seconds: number): void {
  out.reset();
  out.u8(OUT_LATENCY);
  out.u32(actor);
  out.f64(seconds);
  // Published with the next forward or by the management tick: one doorbell per tick, not per reply.
  publish(false);
}

function decided(decisions: readonly Decision[]): void {
  for (const decision of decisions) {
    out.reset();
    out.u8(OUT_DECISION);
    out.text(JSON.stringify(decision), 2);
    publish();
    // The scheduler lives here, so Prepare is taken here too, at once, as NicController takes it
    // on the decision; the controller carries out the rest.
    if (decision.kind === 'migrate') prepare(decision.actor, decision.to, 0);
  }
}

/**
 * Phase 1 here: the actor's requests are buffered from now on; tells the controller. `sequence`
 * is the controller's IN_PREPARE number (0: this core's own decision), echoed so that a refusal
 * fails only the migration that asked (a forced move racing this core's own decision must not
 * fail the one already under way).
 */
function prepare(actor: ActorId, to: Domain, sequence: number): void {
  let refused: string | undefined;
  try {
    const mode = scheduler.modeOf(actor);
    // The scheduler's own words ("scheduler misuse: …") are for its callers, not for an operator.
    if (mode === 'migrating') refused = 'already migrating';
    else if (mode === 'deregistered') refused = 'deregistered';
    else scheduler.prepareMigration(actor, to, wallNs());
  } catch (error) {
    refused = error instanceof Error ? error.message.replace(/^scheduler misuse: /, '') : String(error);
  }
  out.reset();
  if (refused === undefined) {
    out.u8(OUT_PREPARED);
    out.u32(actor);
    out.u8(to === 'host' ? TO_HOST : TO_NIC);
    out.u32(sequence);
  } else {
    out.u8(OUT_REFUSED);
    out.u32(actor);
    out.u32(sequence);
    out.text(refused, 2);
  }
  publish();
}

// ── running actors inline ──────────────────────────────────────────────────────────────────────

/** The request whose handler is running (handlers run to completion and never nest). */
let running: LiveRequest | undefined;

const ports: ActorPorts = {
  now: wallNs,
  route(_from, target, message, _sizeBytes, origin: Origin) {
    const known = actors.get(target);
    if (!known) {
      drop('unknown-actor');
      return;
    }
    // Delivered after this handler returns: the scheduler queues it, the pump runs it.
    scheduler.arrive(new LiveRequest(target, origin, known.definition.messages.encode(message), 0), wallNs());
  },
  replyToClient(from, origin: ClientOrigin, message, codec: MessageCodec<unknown>) {
    const size = codec.sizeOf(message);
    const frame = replyFrame(HEADER_BYTES + size);
    codec.encodeInto(message, frame, HEADER_BYTES);
    const request = running;
    sendReply(frame, size, origin, from, 'reply', request?.origin === origin ? request.client : undefined);
  },
  codecOf(target) {
    return actors.get(target)?.definition.messages;
  },
  armTimer(actor, timer: PendingTimer<unknown>) {
    const id = timer.id;
    runAtWallNs(timer.dueAtNs, () => {
      scheduler.arrive(LiveRequest.timer(actor, id), wallNs());
      pump();
    });
  },
  lookup: (name) => actors.refByName(name),
  log,
};

const instances = new ActorInstances(domain, actors, ports);

/** Runs one request the scheduler gave core 0, then completes it there. */
function run(request: LiveRequest): void {
  const actor = request.actor;
  const origin = request.origin;
  const startedMs = performance.now();
  // What the controller's watchdog needs to answer this request if the thread has to be killed.
  counters[SLOT_RUNNING_GENERATION]! += 1; // odd: being written
  if (origin.kind === 'client') {
    counters[SLOT_RUNNING_REQUEST] = origin.requestId;
    counters[SLOT_RUNNING_CLIENT] = request.client?.clientId ?? 0;
    counters[SLOT_RUNNING_ADDRESS] = ipv4ToU32(origin.endpoint.address);
    counters[SLOT_RUNNING_PORT] = origin.endpoint.port;
  } else counters[SLOT_RUNNING_PORT] = 0;
  counters[SLOT_RUNNING_ACTOR] = actor;
  counters[SLOT_RUNNING_SINCE_MS] = wallNsAt(startedMs) / 1e6;
  counters[SLOT_RUNNING_GENERATION]! += 1;
  // Counted before the handler runs: its reply leaves from inside it, and whoever has the reply
  // in hand and reads the stats must find the execution counted (a failed handler counts too).
  const known = actors.get(actor);
  if (known) counters[SLOT_EXECUTED + known.index]! += 1;
  // From here the request counts as run: a replacement never runs it again.
  if (request.dedupEntry >= 0 && origin.kind === 'client' && request.client !== undefined)
    dedup.setPhase(request.dedupEntry, request.client.clientId, origin.requestId, PHASE_STARTED);
  settled(request);
  running = request;
  try {
    const instance = instances.get(actor);
    if (!instance) throw new IpipeError('IPIPE_ERR_ACTOR_UNKNOWN', `actor ${actor} has no heap on the NIC`);
    if (request.timerId !== 0) instance.fireTimer(request.timerId as TimerId);
    else instance.exec(instance.definition.messages.decode(request.payload), origin);
  } catch (error) {
    const code = error instanceof IpipeError ? error.code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED';
    const message = error instanceof Error ? error.message : String(error);
    if (code === DECODE_FAILED && request.timerId === 0) {
      // Bytes its codec refused never reached the handler: a drop, not an execution (as
      // NicController counts it), else random bytes sent at an actor would count as served.
      if (known) counters[SLOT_EXECUTED + known.index]! -= 1;
      drop('decode');
    }
    if (origin.kind === 'client') errorToClient(origin, actor, code, message);
    else {
      // Nobody waits for an actor's message or a timer: log it, count it (as NicController does).
      drop('handler-failed');
      log.error(
        {
          actor: actors.get(actor)?.entry.name ?? actor,
          work: request.timerId !== 0 ? 'timer' : 'message',
          code,
        },
        `a handler failed with no client to tell, its outputs dropped: ${message}`,
      );
    }
  } finally {
    running = undefined;
    counters[SLOT_RUNNING_SINCE_MS] = 0;
    counters[SLOT_RUNNING_GENERATION]! += 2;
  }
  const endMs = performance.now();
  const ranNs = (endMs - startedMs) * 1e6;
  counters[SLOT_HANDLER_NS]! += ranNs;
  const decisions = scheduler.complete(0, wallNsAt(endMs), ranNs);
  managementCompletions++;
  if (decisions.length > 0) decided(decisions);
}

/** Runs what the scheduler has for core 0, inline, until it has nothing. */
function pump(): void {
  while (scheduler.hasQueuedWork()) {
    const now = wallNs();
    const work = scheduler.roleOf(0) === 'fcfs' ? scheduler.takeFcfs(0, now) : scheduler.takeDrr(0, now);
    if (!work) return;
    if (work.kind === 'exec') run(work.request);
    else if (work.kind === 'forward') forward(work.request);
    else if (work.kind === 'drop') {
      drop(work.reason);
      settled(work.request);
      errorToClient(
        work.request.origin,
        work.request.actor,
        'IPIPE_ERR_ACTOR_DEREGISTERED',
        `actor ${actors.get(work.request.actor)?.entry.name ?? work.request.actor} is not serving`,
      );
    }
  }
}

// ── the wire ────────────────────────────────────────────────────────────────────────────────────

const frame = new FrameView();

function onDatagram(message: Buffer, remote: RemoteInfo): void {
  // node:dgram gives each datagram a buffer of its own: the payload stays where it arrived.
  const bytes = new Uint8Array(message.buffer, message.byteOffset, message.byteLength);
  const refused = readFrameInto(bytes, frame, maxFrameBytes);
  if (refused !== undefined) {
    drop(refused);
    return;
  }
  if (frame.kind !== 'request') {
    // This mode serves no peers (refused at start): a peer's frame is from an unknown peer.
    drop(frame.kind === 'peer' || frame.kind === 'fragment' ? 'peer-unknown' : 'unexpected-kind');
    return;
  }
  counters[SLOT_REQUESTS]! += 1;
  const target = frame.targetActorId as ActorId;
  const nowMs = performance.now();
  const client = clients.ownClient(frame.clientId, remote.address, remote.port, nowMs);
  const origin: ClientOrigin = { kind: 'client', endpoint: client.endpoint, requestId: frame.requestId };
  // A retransmission of a request already here: answer from the cache, never run it twice.
  const seen = dedup.find(frame.clientId, frame.requestId);
  if (seen !== NOT_FOUND) {
    counters[SLOT_DUPLICATES]! += 1;
    const cached = dedup.reply(seen);
    if (cached) send(cached, remote.port, remote.address);
    // Answered so long ago that newer replies overwrote it: nothing to resend, and it never runs
    // again (at-most-once); its client times out.
    else if (dedup.replyExpired(seen)) drop('reply-expired');
    return;
  }
  if (stopping) {
    errorToClient(origin, target, 'IPIPE_ERR_NODE_STOPPED', 'the node is shutting down');
    return;
  }
  if (!actors.has(target)) {
    drop('unknown-actor');
    errorToClient(origin, target, 'IPIPE_ERR_ACTOR_UNKNOWN', `no actor ${target} on this node`);
    return;
  }
  if (scheduler.heldRequests() >= data.ingressLimit) {
    drop('ingress-full');
    errorToClient(origin, target, 'IPIPE_ERR_NODE_OVERLOADED', 'the NIC queue is full; retry later');
    return;
  }
  const payload = bytes.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
  const request = new LiveRequest(target, origin, payload, 0, client, wallNsAt(nowMs));
  request.dedupEntry = dedup.add(frame.clientId, frame.requestId, request.arrivalNs);
  scheduler.arrive(request, request.arrivalNs);
  pump();
}

// ── the work ring: what the controller asks ────────────────────────────────────────────────────

const reader = new FrameReader();

function onWork(start: number, end: number): boolean {
  reader.resetWindow(work.bytes, start, end);
  const kind = reader.u8();
  switch (kind) {
    case IN_REPLY: {
      const actor = reader.u32() as ActorId;
      const isError = reader.u8() === 1;
      const clientId = reader.u32();
      const origin = reader.origin();
      const body = reader.bytesField();
      if (reader.ok && origin.kind === 'client')
        replyBytes(origin, actor, body, isError ? 'error' : 'reply', clientId);
      break;
    }
    case IN_ARRIVE: {
      const actor = reader.u32() as ActorId;
      const timerId = reader.u32();
      const messageId = reader.f64();
      const origin = reader.origin();
      const message = reader.bytesField().slice(); // the ring slot is reused after this
      if (reader.ok) {
        const request = new LiveRequest(actor, origin, message, timerId);
        request.messageId = messageId;
        scheduler.arrive(request, wallNs());
      }
      break;
    }
    case IN_HOST_DONE: {
      const actor = reader.u32() as ActorId;
      const execNs = reader.f64();
      if (scheduler.modeOf(actor) !== 'deregistered') scheduler.recordHostExecution(actor, execNs);
      break;
    }
    case IN_PREPARE: {
      const actor = reader.u32() as ActorId;
      const to: Domain = reader.u8() === TO_HOST ? 'host' : 'nic';
      prepare(actor, to, reader.u32());
      break;
    }
    case IN_MOVED: {
      const actor = reader.u32() as ActorId;
      const to: Domain = reader.u8() === TO_HOST ? 'host' : 'nic';
      moved(actor, to);
      break;
    }
    case IN_DEREGISTER: {
      const actor = reader.u32() as ActorId;
      deregister(actor, reader.text(2));
      break;
    }
    case IN_STOPPING:
      stopping = true;
      break;
    case IN_CLOSE:
      return false;
    default:
      drop('other');
  }
  return true;
}

/** Phases 3–4 done on the controller: the actor serves from `to`; its buffer follows it. */
function moved(actor: ActorId, to: Domain): void {
  // The heap moved (or came back as a new heap): no cached instance may outlive that.
  instances.forget(actor);
  let buffered = 0;
  try {
    const handed = scheduler.finishMigration(actor, wallNs());
    // To the host: forwarded in order, ahead of anything newer (the result ring and the channel
    // are FIFO). To the NIC: queued here ahead of newer arrivals; the pump runs them.
    for (const request of handed) forward(request);
    buffered =
      to === 'host'
        ? handed.length
        : (scheduler.view().actors.find((a) => a.id === actor)?.mailboxLength ?? 0);
  } catch (error) {
    log.error(
      { actor },
      `finishing a migration failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  out.reset();
  out.u8(OUT_MOVED);
  out.u32(actor);
  out.u8(to === 'host' ? TO_HOST : TO_NIC);
  out.u32(buffered);
  publish();
}

function deregister(actor: ActorId, reason: string): void {
  if (scheduler.modeOf(actor) === 'deregistered') return;
  instances.deregister(actor);
  const message = `actor ${actors.get(actor)?.entry.name ?? actor} was deregistered: ${reason}`;
  for (const orphan of scheduler.removeActor(actor)) {
    settled(orphan);
    errorToClient(orphan.origin, actor, 'IPIPE_ERR_ACTOR_DEREGISTERED', message);
  }
}

let closing = false;

async function watchWork(): Promise<void> {
  for (;;) {
    const length = work.peek();
    if (length === RING_EMPTY) {
      if ((await work.waitForDataAsync()) === 'closed') return;
      continue;
    }
    if (length === RING_CORRUPT) {
      work.consume();
      continue;
    }
    const keepGoing = onWork(work.peekOffset, work.peekOffset + length);
    work.consume();
    // Counted after the item took effect: if the watchdog kills this thread, the controller re-posts
    // every item past this count to the replacement (the ring's head is published lazily: no use).
    counters[SLOT_WORK_CONSUMED]! += 1;
    if (!keepGoing) {
      close();
      return;
    }
    if (!work.hasData()) pump();
  }
}

// ── the management core's checks ───────────────────────────────────────────────────────────────

let managementCompletions = 0;
let manageTimer: NodeJS.Timeout | undefined;

function manageTick(): void {
  if (closing) return;
  const busy = managementCompletions > 0;
  managementCompletions = 0;
  clients.sweep(performance.now());
  if (!busy) {
    const decisions = scheduler.manage(wallNs());
    if (decisions.length > 0) decided(decisions);
    pump();
  }
  counters[SLOT_HELD] = scheduler.heldRequests();
  counters[SLOT_DRR_CORES] = scheduler.roleOf(0) === 'drr' ? 1 : 0;
  results.flush(); // latencies written since the last flush
  manageTimer = setTimeout(manageTick, busy ? MANAGE_BUSY_MS : MANAGE_IDLE_MS);
}

function close(): void {
  closing = true;
  if (manageTimer !== undefined) clearTimeout(manageTimer);
  counters[SLOT_HELD] = scheduler.heldRequests();
  results.close();
  socketClosed = true;
  socket.close(() => process.exit(0));
}

// ── start ───────────────────────────────────────────────────────────────────────────────────────

/** Binds `socket` (a fresh one per attempt); undefined when bound, else the last error's message. */
async function bind(): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    const candidate = attempt === 1 ? socket : newSocket();
    try {
      await new Promise<void>((resolve, reject) => {
        candidate.once('error', reject);
        candidate.bind(start.port, data.address, () => {
          candidate.off('error', reject);
          resolve();
        });
      });
      socket = candidate;
      return undefined;
    } catch (error) {
      candidate.close();
      if (attempt >= start.bindTries) return (error as Error).message;
      await new Promise((resolve) => setTimeout(resolve, BIND_RETRY_MS));
    }
  }
}

if (start.rearmTimers) {
  for (const [id, where] of start.domains) {
    // A migrating actor's timers are re-armed wherever its heap is adopted.
    if (where !== 'nic' || scheduler.modeOf(id) === 'deregistered' || scheduler.modeOf(id) === 'migrating')
      continue;
    const instance = instances.get(id);
    for (const timer of instance?.pendingTimers() ?? []) ports.armTimer(id, timer);
  }
}

const bindFailure = await bind();
if (bindFailure !== undefined) {
  const hello: SocketCoreHello = { kind: 'bind-failed', message: bindFailure };
  parentPort?.postMessage(hello);
  process.exit(0);
}
const bound = socket.address();
const hello: SocketCoreHello = { kind: 'ready', address: bound.address, port: bound.port };
parentPort?.postMessage(hello);
manageTimer = setTimeout(manageTick, MANAGE_IDLE_MS);
void watchWork();
