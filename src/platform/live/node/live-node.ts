/**
 * A live iPipe node (§3–4): a NIC domain and a host domain, each a set of worker-thread cores
 * over its own shared DMO memory, joined by a message channel, serving real UDP clients.
 *
 *   UDP ─▶ NIC controller (main thread): wire checks, dedup, HybridScheduler ─▶ NIC cores (workers)
 *                  │ forward (actor on the host)                     ▲ results (time, messages)
 *                  ▼ channel (SPSC rings; TCP when split)            │
 *          host controller: per-core queues, steered by actor ─▶ host cores (workers)
 *
 * The scheduler is the same object the simulator drives; the controller supplies real cores and
 * the wall clock and carries out its decisions, including migration in the paper's four phases:
 * Prepare (the scheduler buffers the actor's requests), Ready (nothing of it runs or waits on its
 * side), Gone (its DMO region crosses the channel as an image and is adopted on the other side),
 * Clean (the buffered requests go to the new side). Both domain controllers run on the main
 * thread's event loop; their cores are separate threads.
 */

import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { ActorTable } from '../../../actor/actor-table.ts';
import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { ClientOrigin, Origin } from '../../../actor/envelope.ts';
import { Mailbox } from '../../../actor/mailbox.ts';
import { DmoDomain } from '../../../dmo/domain.ts';
import { restoreHeap, snapshotHeapInto, snapshotSize } from '../../../dmo/snapshot.ts';
import { ConfigError, IpipeError } from '../../../errors.ts';
import { type ActorId, nodeId } from '../../../ids.ts';
import { ActorInstance, type ActorPorts } from '../../../runtime/actor-instance.ts';
import { DmoStateStore } from '../../../runtime/dmo-state-store.ts';
import { HybridScheduler, type SchedulerPolicy } from '../../../sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../../../sched/settings.ts';
import type { Decision, Domain, SchedRequest } from '../../../sched/types.ts';
import { createSharedChannelPair, type SharedChannelEndpoint } from '../channel/channel.ts';
import { RING_CORRUPT, RING_EMPTY } from '../channel/ring.ts';
import {
  DEFAULT_MAX_FRAME_BYTES,
  encodeErrorBody,
  encodeFrame,
  FrameView,
  HEADER_BYTES,
  readFrameInto,
} from '../net/wire.ts';
import { type CatalogEntry, loadDefinitions } from './actor-catalog.ts';
import { wallNs } from './clock.ts';
import {
  type CoreOutput,
  FrameBuilder,
  FrameReader,
  RESULT_DONE,
  RESULT_FAILED,
  readOutputs,
  WORK_EXEC,
  WORK_TIMER,
} from './core-protocol.ts';
import { DomainCores } from './domain-cores.ts';

export interface LiveNodeOptions {
  readonly catalog: readonly CatalogEntry[];
  readonly nicCores?: number;
  readonly hostCores?: number;
  /** UDP port (0: any free port) and address to bind. */
  readonly port?: number;
  readonly address?: string;
  readonly policy?: SchedulerPolicy;
  readonly scheduler?: Partial<SchedulerSettings>;
  readonly regionBytes?: number;
  readonly maxActors?: number;
  /** A handler running longer than this gets its actor deregistered and its core replaced. */
  readonly watchdogMs?: number;
  /** Requests the NIC holds (queued or buffered) before it refuses new ones. */
  readonly ingressLimit?: number;
  readonly maxFrameBytes?: number;
  /** Bytes of each ring: core work/result rings and the NIC↔host channel. */
  readonly ringBytes?: number;
  /** Where each actor starts (default: host-pinned on the host, the rest on the NIC). */
  readonly placement?: Readonly<Record<string, Domain>>;
}

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

export interface LiveNodeStats {
  readonly requests: number;
  readonly replies: number;
  readonly errorReplies: number;
  readonly duplicates: number;
  readonly drops: Readonly<Record<string, number>>;
  readonly executed: Readonly<Record<string, { readonly nic: number; readonly host: number }>>;
  readonly migrations: readonly LiveMigrationRecord[];
  readonly decisions: readonly Decision[];
  readonly watchdogKills: number;
  readonly channel: { readonly toHostBytes: number; readonly toNicBytes: number };
}

/** A request inside the node: what the scheduler queues plus what a core needs to run it. */
class LiveRequest implements SchedRequest {
  actor: ActorId;
  readonly sizeBytes: number;
  arrivalNs: number;
  readonly origin: Origin;
  readonly payload: Uint8Array;
  readonly timerId: number;
  /** Dedup key of the client request it came from ('' for internal messages). */
  readonly dedupKey: string;

  constructor(actor: ActorId, origin: Origin, payload: Uint8Array, timerId: number, dedupKey: string) {
    this.actor = actor;
    this.sizeBytes = HEADER_BYTES + payload.length;
    this.arrivalNs = wallNs();
    this.origin = origin;
    this.payload = payload;
    this.timerId = timerId;
    this.dedupKey = dedupKey;
  }
}

// NIC↔host channel messages.
const CH_REQUEST = 1; // [1][actor u32][timer u32][origin…][payload]
const CH_REPLY = 2; // host → NIC: [2][actor u32][origin…][reply bytes]
const CH_ERROR = 3; // host → NIC: [3][origin…][code][message]
const CH_MIGRATE_OUT = 4; // NIC → host: [4][actor u32]  (host → NIC migration: prepare on the host)
const CH_IMAGE = 5; // either way: [5][actor u32][total u32][offset u32][chunk bytes]
const CH_ADOPTED = 6; // either way: [6][actor u32]

const DEDUP_ENTRIES = 65_536;

export class LiveNode {
  readonly table = new ActorTable();
  readonly scheduler: HybridScheduler<LiveRequest>;
  readonly nicDomain: DmoDomain;
  readonly hostDomain: DmoDomain;
  /** Frames and requests refused, by reason (wire reasons from net/wire.ts, and the node's own). */
  readonly drops = new Map<string, number>();
  readonly #options: Required<Omit<LiveNodeOptions, 'placement' | 'scheduler' | 'policy'>> & LiveNodeOptions;
  readonly #definitions = new Map<ActorId, AnyActorDefinition>();
  #socket: Socket | undefined;
  #nicCores: DomainCores | undefined;
  #hostCores: DomainCores | undefined;
  readonly #nicEnd: SharedChannelEndpoint;
  readonly #hostEnd: SharedChannelEndpoint;
  readonly #running: (LiveRequest | null)[] = [];
  readonly #hostRunning: (LiveRequest | null)[] = [];
  readonly #hostQueues: Mailbox<LiveRequest>[] = [];
  readonly #hostPending = new Map<ActorId, number>();
  readonly #clientIds = new Map<string, number>();
  readonly #dedup = new Map<string, Uint8Array | null>();
  readonly #work = new FrameBuilder();
  readonly #channelOut = new FrameBuilder();
  readonly #reader = new FrameReader();
  readonly #frame = new FrameView();
  #stopping = false;
  #manageTimer: NodeJS.Timeout | undefined;
  #requests = 0;
  #replies = 0;
  #errorReplies = 0;
  #duplicates = 0;
  readonly #executed = new Map<ActorId, { nic: number; host: number }>();
  readonly #migrations: LiveMigrationRecord[] = [];
  readonly #decisions: Decision[] = [];
  readonly #migrating = new Map<ActorId, MigrationState>();
  #toHostBytes = 0;
  #toNicBytes = 0;

  private constructor(options: LiveNodeOptions) {
    this.#options = {
      nicCores: 2,
      hostCores: 2,
      port: 0,
      address: '127.0.0.1',
      regionBytes: 4 * 1024 * 1024,
      maxActors: 32,
      watchdogMs: 1_000,
      ingressLimit: 65_536,
      maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
      ringBytes: 1 << 21,
      ...options,
    };
    const o = this.#options;
    if (!Number.isInteger(o.nicCores) || o.nicCores < 1)
      throw new ConfigError('nicCores', 'must be a positive integer');
    if (!Number.isInteger(o.hostCores) || o.hostCores < 1)
      throw new ConfigError('hostCores', 'must be a positive integer');
    this.nicDomain = DmoDomain.create({ regionBytes: o.regionBytes, maxActors: o.maxActors, shared: true });
    this.hostDomain = DmoDomain.create({ regionBytes: o.regionBytes, maxActors: o.maxActors, shared: true });
    this.scheduler = new HybridScheduler<LiveRequest>({
      cores: o.nicCores,
      policy: options.policy ?? 'hybrid',
      settings: options.scheduler ?? {},
      nameOf: (id) => this.table.lookup(id)?.name ?? `actor ${id}`,
    });
    const pair = createSharedChannelPair({ capacityBytes: o.ringBytes });
    this.#nicEnd = pair.nic;
    this.#hostEnd = pair.host;
    for (let core = 0; core < o.nicCores; core++) this.#running.push(null);
    for (let core = 0; core < o.hostCores; core++) {
      this.#hostRunning.push(null);
      this.#hostQueues.push(new Mailbox<LiveRequest>());
    }
  }

  /** Loads the actors, initialises them on their starting side, starts the cores and the UDP socket. */
  static async start(options: LiveNodeOptions): Promise<LiveNode> {
    const node = new LiveNode(options);
    await node.#start();
    return node;
  }

  /** The UDP address the node serves. */
  get address(): { readonly address: string; readonly port: number } {
    const bound = this.#socket?.address();
    return { address: bound?.address ?? this.#options.address, port: bound?.port ?? 0 };
  }

  actorId(name: string): ActorId {
    const entry = this.table.lookupName(name);
    if (!entry) throw new ConfigError('actor', `no actor named "${name}" on this node`);
    return entry.id;
  }

  domainOf(actor: ActorId): Domain | 'migrating' {
    const mode = this.scheduler.modeOf(actor);
    return mode === 'migrating' ? 'migrating' : mode === 'host' ? 'host' : 'nic';
  }

  stats(): LiveNodeStats {
    const executed: Record<string, { nic: number; host: number }> = {};
    for (const [id, counts] of this.#executed)
      executed[this.table.lookup(id)?.name ?? String(id)] = { ...counts };
    return {
      requests: this.#requests,
      replies: this.#replies,
      errorReplies: this.#errorReplies,
      duplicates: this.#duplicates,
      drops: Object.fromEntries(this.drops),
      executed,
      migrations: [...this.#migrations],
      decisions: [...this.#decisions],
      watchdogKills: (this.#nicCores?.replacedCores ?? 0) + (this.#hostCores?.replacedCores ?? 0),
      channel: { toHostBytes: this.#toHostBytes, toNicBytes: this.#toNicBytes },
    };
  }

  /**
   * Moves an actor to `to` in four phases (forced; the scheduler's own decisions take the same
   * path). Resolves with the phase timings once its buffered requests have been handed over.
   */
  migrate(actor: ActorId, to: Domain, trigger = 'forced'): Promise<LiveMigrationRecord> {
    return new Promise((resolve, reject) => {
      try {
        this.#beginMigration(actor, to, trigger, resolve);
      } catch (error) {
        reject(error);
      }
    });
  }

  /** Stops intake, lets queued work finish (up to `drainMs`), stops the cores and closes the socket. */
  async stop(drainMs = 2_000): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    const deadline = performance.now() + drainMs;
    while (performance.now() < deadline && (this.scheduler.heldRequests() > 0 || this.#hostBusy())) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (this.#manageTimer) clearInterval(this.#manageTimer);
    await Promise.all([this.#nicCores?.stop(), this.#hostCores?.stop()]);
    await Promise.all([this.#nicEnd.close(), this.#hostEnd.close()]);
    await new Promise<void>((resolve) => {
      if (this.#socket) this.#socket.close(() => resolve());
      else resolve();
    });
  }

  // ── start-up ─────────────────────────────────────────────────────────────────────────────────

  async #start(): Promise<void> {
    const o = this.#options;
    const definitions = await loadDefinitions(o.catalog);
    o.catalog.forEach((entry, index) => {
      const definition = definitions[index] as AnyActorDefinition;
      const domain = o.placement?.[entry.name] ?? (definition.placement === 'host' ? 'host' : 'nic');
      this.table.register({
        definition,
        location: { domain, node: nodeId(0) },
        id: entry.id,
        name: entry.name,
      });
      this.#definitions.set(entry.id, definition);
      this.scheduler.addActor({
        id: entry.id,
        placement: definition.placement,
        exclusive: definition.exclusive,
        domain,
      });
      this.#initialise(entry.id, entry.name, definition, domain === 'nic' ? this.nicDomain : this.hostDomain);
    });
    const common = { catalog: o.catalog, ringBytes: o.ringBytes, watchdogMs: o.watchdogMs };
    this.#nicCores = new DomainCores({
      ...common,
      domain: 'nic',
      cores: o.nicCores,
      domainBuffer: this.nicDomain.buffer as SharedArrayBuffer,
      onResult: (core, reader) => this.#nicResult(core, reader),
      onWatchdog: (core, tag) => this.#watchdog('nic', core, tag),
      onCoreReady: () => this.#pumpNic(),
    });
    this.#hostCores = new DomainCores({
      ...common,
      domain: 'host',
      cores: o.hostCores,
      domainBuffer: this.hostDomain.buffer as SharedArrayBuffer,
      onResult: (core, reader) => this.#hostResult(core, reader),
      onWatchdog: (core, tag) => this.#watchdog('host', core, tag),
      onCoreReady: (core) => this.#pumpHost(core),
    });
    await Promise.all([this.#nicCores.start(), this.#hostCores.start()]);
    this.#hostEnd.onReadable(() => this.#drainChannel('host'));
    this.#nicEnd.onReadable(() => this.#drainChannel('nic'));
    this.#manageTimer = setInterval(() => {
      this.#apply(this.scheduler.manage(wallNs()));
      this.#pumpNic();
    }, 1);
    this.#manageTimer.unref();
    const socket = createSocket('udp4');
    this.#socket = socket;
    socket.on('message', (message, remote) => this.#onDatagram(message, remote));
    socket.on('error', (error) => process.stderr.write(`ipipe: UDP socket error: ${error.message}\n`));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(o.port, o.address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
  }

  /** Lays out the actor's heap-held state and runs its init on the main thread (start-up only). */
  #initialise(actor: ActorId, name: string, definition: AnyActorDefinition, domain: DmoDomain): void {
    const heap = domain.createHeap(actor, { exclusive: definition.exclusive });
    const store = DmoStateStore.create(heap, definition.messages);
    const pending: CoreOutput[] = [];
    const ports: ActorPorts = {
      now: wallNs,
      route: (_from, target, message, _size, origin) => {
        const codec = this.#definitions.get(target)?.messages;
        pending.push({
          kind: 'send',
          target,
          origin,
          message: codec ? codec.encode(message) : new Uint8Array(0),
        });
      },
      replyToClient: () => {
        throw new ConfigError(`actor ${name}`, 'init has no client to reply to');
      },
      codecOf: (target) => this.#definitions.get(target)?.messages,
      armTimer: (owner, timer) =>
        pending.push({ kind: 'timer', actor: owner, timerId: timer.id, dueAtNs: timer.dueAtNs }),
      lookup: () => undefined,
      log: { debug() {}, info() {}, warn() {}, error() {} },
    };
    new ActorInstance(definition, actor, name, heap, ports, store).init();
    queueMicrotask(() => {
      for (const output of pending) this.#routeOutput(output, 'nic', actor);
    });
  }

  // ── the wire ─────────────────────────────────────────────────────────────────────────────────

  #onDatagram(message: Buffer, remote: RemoteInfo): void {
    const bytes = new Uint8Array(message.buffer, message.byteOffset, message.byteLength);
    const frame = this.#frame;
    const result = readFrameInto(bytes, frame, this.#options.maxFrameBytes);
    if (result !== undefined) {
      this.#drop(result);
      return;
    }
    if (frame.kind !== 'request') {
      this.#drop('unexpected-kind');
      return;
    }
    const target = frame.targetActorId as ActorId;
    const payload = bytes.slice(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
    this.#requests++;
    const endpointKey = `${remote.address}:${remote.port}`;
    this.#clientIds.set(endpointKey, frame.clientId);
    const dedupKey = `${frame.clientId}/${frame.requestId}`;
    if (this.#dedup.has(dedupKey)) {
      this.#duplicates++;
      const cached = this.#dedup.get(dedupKey);
      if (cached) this.#socket?.send(cached, remote.port, remote.address);
      return;
    }
    const origin: ClientOrigin = {
      kind: 'client',
      endpoint: { address: remote.address, port: remote.port },
      requestId: frame.requestId,
    };
    if (this.#stopping) {
      this.#errorToClient(origin, target, 'IPIPE_ERR_NODE_STOPPED', 'the node is shutting down');
      return;
    }
    if (!this.table.has(target)) {
      this.#drop('unknown-actor');
      this.#errorToClient(origin, target, 'IPIPE_ERR_ACTOR_UNKNOWN', `no actor ${target} on this node`);
      return;
    }
    if (this.scheduler.heldRequests() >= this.#options.ingressLimit) {
      this.#drop('ingress-full');
      this.#errorToClient(origin, target, 'IPIPE_ERR_NODE_OVERLOADED', 'the NIC queue is full; retry later');
      return;
    }
    this.#remember(dedupKey, null);
    const request = new LiveRequest(target, origin, payload, 0, dedupKey);
    this.scheduler.arrive(request, request.arrivalNs);
    this.#pumpNic();
  }

  #drop(reason: string): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1);
  }

  #remember(key: string, reply: Uint8Array | null): void {
    this.#dedup.set(key, reply);
    if (this.#dedup.size > DEDUP_ENTRIES) {
      const oldest = this.#dedup.keys().next().value;
      if (oldest !== undefined) this.#dedup.delete(oldest);
    }
  }

  #replyToClient(
    origin: ClientOrigin,
    actor: ActorId,
    reply: Uint8Array,
    kind: 'reply' | 'error' = 'reply',
  ): void {
    const clientId = this.#clientIds.get(`${origin.endpoint.address}:${origin.endpoint.port}`) ?? 0;
    const frame = new Uint8Array(HEADER_BYTES + reply.length);
    const size = encodeFrame(
      frame,
      { kind, targetActorId: actor, requestId: origin.requestId, clientId },
      reply,
      0,
      Math.max(this.#options.maxFrameBytes, frame.length),
    );
    if (kind === 'reply') this.#replies++;
    else this.#errorReplies++;
    const key = `${clientId}/${origin.requestId}`;
    if (this.#dedup.has(key)) this.#dedup.set(key, frame.subarray(0, size));
    this.#socket?.send(frame.subarray(0, size), origin.endpoint.port, origin.endpoint.address);
  }

  #errorToClient(origin: Origin, actor: ActorId, code: string, message: string): void {
    if (origin.kind !== 'client') return;
    const body = new Uint8Array(Math.min(1024, this.#options.maxFrameBytes - HEADER_BYTES));
    const length = encodeErrorBody(
      body,
      0,
      /^[\x21-\x7e]{1,255}$/.test(code) ? code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED',
      message,
    );
    this.#replyToClient(origin, actor, body.subarray(0, length), 'error');
  }

  // ── NIC side ─────────────────────────────────────────────────────────────────────────────────

  #pumpNic(): void {
    const cores = this.#nicCores;
    if (!cores) return;
    const now = wallNs();
    for (let core = 0; core < this.#running.length; core++) {
      if (!this.scheduler.hasQueuedWork()) return;
      while (this.#running[core] === null && cores.isAvailable(core)) {
        const role = this.scheduler.roleOf(core);
        const work = role === 'fcfs' ? this.scheduler.takeFcfs(core, now) : this.scheduler.takeDrr(core, now);
        if (!work) break;
        if (work.kind === 'exec') {
          this.#running[core] = work.request;
          if (!cores.send(core, core, this.#workFrame(work.request))) {
            // The ring is full only if the core is wedged; the watchdog will deal with it.
            this.#drop('core-ring-full');
          }
        } else if (work.kind === 'forward') this.#forwardToHost(work.request);
        else if (work.kind === 'drop') {
          this.#drop(work.reason);
          this.#errorToClient(
            work.request.origin,
            work.request.actor,
            'IPIPE_ERR_ACTOR_DEREGISTERED',
            `actor ${work.request.actor} is not serving`,
          );
        }
      }
    }
  }

  #workFrame(request: LiveRequest): Uint8Array {
    const frame = this.#work.reset();
    if (request.timerId !== 0) {
      frame.u8(WORK_TIMER);
      frame.u32(0);
      frame.u32(request.actor);
      frame.u32(request.timerId);
    } else {
      frame.u8(WORK_EXEC);
      frame.u32(0);
      frame.u32(request.actor);
      frame.origin(request.origin);
      frame.bytesField(request.payload);
    }
    return frame.frame;
  }

  #nicResult(core: number, reader: FrameReader): void {
    const request = this.#running[core];
    this.#running[core] = null;
    this.#nicCores?.release(core);
    if (!request) return;
    const kind = reader.u8();
    reader.u32();
    const execNs = reader.f64();
    const now = wallNs();
    this.#apply(this.scheduler.complete(core, now, execNs));
    this.#count(request.actor, 'nic');
    this.#finish(request, kind, reader, 'nic');
    this.#progressMigrations();
    this.#pumpNic();
  }

  /** Routes a handler's outputs, or answers its client with the error it failed with. */
  #finish(request: LiveRequest, kind: number, reader: FrameReader, side: Domain): void {
    if (kind === RESULT_FAILED) {
      const code = reader.text(1);
      const message = reader.text(2);
      this.#sendError(request.origin, request.actor, code, message, side);
      return;
    }
    if (kind !== RESULT_DONE) return;
    const outputs = readOutputs(reader, reader.u16());
    if (!outputs) {
      this.#drop('malformed-result');
      return;
    }
    for (const output of outputs) this.#routeOutput(output, side, request.actor);
  }

  #routeOutput(output: CoreOutput, side: Domain, from: ActorId): void {
    if (output.kind === 'timer') {
      const delayMs = Math.max(0, (output.dueAtNs - wallNs()) / 1e6);
      setTimeout(
        () =>
          this.#deliver(
            new LiveRequest(output.actor, { kind: 'none' }, new Uint8Array(0), output.timerId, ''),
            side,
          ),
        delayMs,
      ).unref();
      return;
    }
    if (output.kind === 'reply') {
      if (output.origin.kind !== 'client') return;
      if (side === 'nic') this.#replyToClient(output.origin, from, output.message);
      else this.#channelSend('host', CH_REPLY, from, 0, output.origin, output.message);
      return;
    }
    if (!this.table.has(output.target)) {
      this.#drop('unknown-actor');
      return;
    }
    this.#deliver(new LiveRequest(output.target, output.origin, output.message, 0, ''), side);
  }

  /** A message produced on `side` for its target actor, wherever that actor is. */
  #deliver(request: LiveRequest, side: Domain): void {
    if (
      side === 'nic' ||
      this.scheduler.modeOf(request.actor) !== 'host' ||
      this.#migrating.has(request.actor)
    ) {
      if (side === 'nic') {
        this.scheduler.arrive(request, request.arrivalNs);
        this.#pumpNic();
      } else
        this.#channelSend(
          'host',
          CH_REQUEST,
          request.actor,
          request.timerId,
          request.origin,
          request.payload,
        );
      return;
    }
    this.#enqueueHost(request);
  }

  #sendError(origin: Origin, actor: ActorId, code: string, message: string, side: Domain): void {
    if (origin.kind !== 'client') return;
    if (side === 'nic') this.#errorToClient(origin, actor, code, message);
    else {
      const out = this.#channelOut.reset();
      out.u8(CH_ERROR);
      out.origin(origin);
      out.u32(actor);
      out.text(code, 1);
      out.text(message, 2);
      this.#hostEnd.send(out.frame);
      this.#hostEnd.flush();
    }
  }

  #forwardToHost(request: LiveRequest): void {
    this.#hostPending.set(request.actor, (this.#hostPending.get(request.actor) ?? 0) + 1);
    this.#channelSend('nic', CH_REQUEST, request.actor, request.timerId, request.origin, request.payload);
  }

  // ── the channel ──────────────────────────────────────────────────────────────────────────────

  #channelSend(
    from: Domain,
    kind: number,
    actor: ActorId,
    timerId: number,
    origin: Origin,
    payload: Uint8Array,
  ): void {
    const out = this.#channelOut.reset();
    out.u8(kind);
    out.u32(actor);
    if (kind === CH_REQUEST) out.u32(timerId);
    out.origin(origin);
    out.bytesField(payload);
    this.#sendFrame(from, out.frame);
  }

  #sendFrame(from: Domain, frame: Uint8Array): void {
    const end = from === 'nic' ? this.#nicEnd : this.#hostEnd;
    if (from === 'nic') this.#toHostBytes += frame.length;
    else this.#toNicBytes += frame.length;
    if (!end.send(frame)) {
      // Back-pressure: the other side is behind. The message must not be lost: wait for room.
      end.sendRing.flush();
      if (end.sendRing.write(frame, 1_000) !== 'ok') this.#drop('channel-full');
    }
    end.flush();
  }

  #drainChannel(side: Domain): void {
    const end = side === 'host' ? this.#hostEnd : this.#nicEnd;
    const ring = end.receiveRing;
    const reader = this.#reader;
    for (;;) {
      const length = ring.peek();
      if (length === RING_EMPTY) return;
      if (length === RING_CORRUPT) {
        this.#drop('channel-checksum');
        ring.consume();
        continue;
      }
      reader.reset(ring.bytes.subarray(ring.peekOffset, ring.peekOffset + length));
      try {
        if (side === 'host') this.#onHostMessage(reader);
        else this.#onNicMessage(reader);
      } finally {
        ring.consume();
      }
    }
  }

  /** The host controller receives from the NIC. */
  #onHostMessage(reader: FrameReader): void {
    const kind = reader.u8();
    const actor = reader.u32() as ActorId;
    if (kind === CH_REQUEST) {
      const timerId = reader.u32();
      const origin = reader.origin();
      const payload = reader.bytesField().slice();
      this.#enqueueHost(new LiveRequest(actor, origin, payload, timerId, ''), true);
    } else if (kind === CH_MIGRATE_OUT) {
      const migration = this.#migrating.get(actor);
      if (migration) migration.hostPrepared = true;
      this.#progressMigrations();
    } else if (kind === CH_IMAGE) this.#receiveImage(reader, actor, 'host');
    else if (kind === CH_ADOPTED) this.#imageAdopted(actor);
  }

  /** The NIC controller receives from the host. */
  #onNicMessage(reader: FrameReader): void {
    const kind = reader.u8();
    if (kind === CH_ERROR) {
      const origin = reader.origin();
      const actor = reader.u32() as ActorId;
      this.#errorToClient(origin, actor, reader.text(1), reader.text(2));
      return;
    }
    const actor = reader.u32() as ActorId;
    if (kind === CH_REPLY) {
      const origin = reader.origin();
      const reply = reader.bytesField().slice();
      if (origin.kind === 'client') this.#replyToClient(origin, actor, reply);
    } else if (kind === CH_REQUEST) {
      const timerId = reader.u32();
      const origin = reader.origin();
      const request = new LiveRequest(actor, origin, reader.bytesField().slice(), timerId, '');
      this.scheduler.arrive(request, request.arrivalNs);
      this.#pumpNic();
    } else if (kind === CH_IMAGE) this.#receiveImage(reader, actor, 'nic');
    else if (kind === CH_ADOPTED) this.#imageAdopted(actor);
  }

  // ── host side ────────────────────────────────────────────────────────────────────────────────

  /** NIC-side steering onto a host core's queue: exclusive actors to a fixed core, others to the shortest. */
  #enqueueHost(request: LiveRequest, fromChannel = false): void {
    if (!fromChannel) this.#hostPending.set(request.actor, (this.#hostPending.get(request.actor) ?? 0) + 1);
    const definition = this.#definitions.get(request.actor);
    let core = request.actor % this.#hostQueues.length;
    if (definition && !definition.exclusive) {
      let shortest = Number.POSITIVE_INFINITY;
      for (let c = 0; c < this.#hostQueues.length; c++) {
        const length = (this.#hostQueues[c] as Mailbox<LiveRequest>).length + (this.#hostRunning[c] ? 1 : 0);
        if (length < shortest) {
          shortest = length;
          core = c;
        }
      }
    }
    (this.#hostQueues[core] as Mailbox<LiveRequest>).push(request);
    this.#pumpHost(core);
  }

  #pumpHost(core: number): void {
    const cores = this.#hostCores;
    if (!cores || this.#hostRunning[core] || !cores.isAvailable(core)) return;
    const request = (this.#hostQueues[core] as Mailbox<LiveRequest>).shift();
    if (!request) return;
    if (this.scheduler.modeOf(request.actor) === 'deregistered') {
      this.#settleHost(request.actor);
      this.#sendError(
        request.origin,
        request.actor,
        'IPIPE_ERR_ACTOR_DEREGISTERED',
        `actor ${request.actor} was stopped`,
        'host',
      );
      this.#pumpHost(core);
      return;
    }
    this.#hostRunning[core] = request;
    cores.send(core, core, this.#workFrame(request));
  }

  #hostResult(core: number, reader: FrameReader): void {
    const request = this.#hostRunning[core];
    this.#hostRunning[core] = null;
    this.#hostCores?.release(core);
    if (!request) return;
    const kind = reader.u8();
    reader.u32();
    const execNs = reader.f64();
    this.scheduler.recordHostExecution(request.actor, execNs);
    this.#count(request.actor, 'host');
    this.#finish(request, kind, reader, 'host');
    this.#settleHost(request.actor);
    this.#progressMigrations();
    this.#pumpHost(core);
  }

  #settleHost(actor: ActorId): void {
    const left = (this.#hostPending.get(actor) ?? 1) - 1;
    if (left <= 0) this.#hostPending.delete(actor);
    else this.#hostPending.set(actor, left);
  }

  #hostBusy(): boolean {
    return this.#hostRunning.some((r) => r !== null) || this.#hostQueues.some((q) => !q.isEmpty());
  }

  // ── isolation ────────────────────────────────────────────────────────────────────────────────

  /** A handler overran its watchdog: deregister its actor, answer everything it held with an error. */
  #watchdog(side: Domain, core: number, _tag: number): void {
    const running = side === 'nic' ? this.#running : this.#hostRunning;
    const request = running[core];
    running[core] = null;
    if (!request) return;
    const actor = request.actor;
    const name = this.table.lookup(actor)?.name ?? String(actor);
    this.#drop('watchdog');
    const reason = `its handler ran past the ${this.#options.watchdogMs} ms watchdog`;
    this.#sendError(
      request.origin,
      actor,
      'IPIPE_ERR_ACTOR_DEREGISTERED',
      `actor ${name} was deregistered: ${reason}`,
      side,
    );
    if (side === 'nic') {
      // The scheduler still counts the core as running the actor: complete it, then remove the actor.
      this.scheduler.complete(core, wallNs(), this.#options.watchdogMs * 1e6);
    } else this.#settleHost(actor);
    if (this.scheduler.modeOf(actor) !== 'deregistered') {
      for (const orphan of this.scheduler.removeActor(actor)) {
        this.#sendError(
          orphan.origin,
          actor,
          'IPIPE_ERR_ACTOR_DEREGISTERED',
          `actor ${name} was deregistered: ${reason}`,
          'nic',
        );
      }
    }
    process.stderr.write(`ipipe: actor ${name} deregistered (${reason}); ${side} core ${core} replaced\n`);
    this.#pumpNic();
    if (side === 'host') this.#pumpHost(core);
  }

  // ── scheduler decisions and migration ────────────────────────────────────────────────────────

  #apply(decisions: readonly Decision[]): void {
    for (const decision of decisions) {
      this.#decisions.push(decision);
      if (decision.kind === 'migrate')
        this.#beginMigration(decision.actor, decision.to, decision.trigger, () => {});
    }
  }

  /** Phase 1, Prepare. */
  #beginMigration(
    actor: ActorId,
    to: Domain,
    trigger: string,
    done: (record: LiveMigrationRecord) => void,
  ): void {
    if (this.#migrating.has(actor)) throw new ConfigError('migrate', `actor ${actor} is already migrating`);
    const from: Domain = this.scheduler.modeOf(actor) === 'host' ? 'host' : 'nic';
    this.scheduler.prepareMigration(actor, to, wallNs());
    const now = performance.now();
    this.#migrating.set(actor, {
      actor,
      from,
      to,
      trigger,
      startedMs: now,
      preparedMs: now,
      readyMs: -1,
      goneMs: -1,
      stateBytes: 0,
      hostPrepared: from === 'nic',
      imageSent: false,
      assembly: null,
      done,
    });
    // Host → NIC: the host must see the marker after every request already forwarded to it.
    if (from === 'host') this.#sendFrame('nic', this.#control(CH_MIGRATE_OUT, actor));
    this.#progressMigrations();
  }

  #control(kind: number, actor: ActorId): Uint8Array {
    const out = this.#channelOut.reset();
    out.u8(kind);
    out.u32(actor);
    return out.frame;
  }

  /** Phase 2, Ready: nothing of the actor runs or waits on its old side. Then phase 3 starts. */
  #progressMigrations(): void {
    for (const migration of this.#migrating.values()) {
      if (migration.imageSent) continue;
      const actor = migration.actor;
      if (!this.scheduler.isQuiescent(actor)) continue;
      if (migration.from === 'host' && (!migration.hostPrepared || (this.#hostPending.get(actor) ?? 0) > 0))
        continue;
      migration.readyMs = performance.now();
      migration.imageSent = true;
      this.#sendImage(migration);
    }
  }

  /** Phase 3, Gone: the actor's region crosses the channel as an image, in ring-sized chunks. */
  #sendImage(migration: MigrationState): void {
    const source = migration.from === 'nic' ? this.nicDomain : this.hostDomain;
    const heap = source.heapOf(migration.actor);
    if (!heap)
      throw new ConfigError('migrate', `actor ${migration.actor} has no heap on the ${migration.from}`);
    const total = snapshotSize(heap);
    const image = new Uint8Array(total);
    snapshotHeapInto(heap, image, 0);
    migration.stateBytes = total;
    const chunkBytes = Math.max(4096, Math.floor(this.#nicEnd.maxMessageBytes) - 64);
    for (let offset = 0; offset < total; offset += chunkBytes) {
      const chunk = image.subarray(offset, Math.min(total, offset + chunkBytes));
      const out = this.#channelOut.reset();
      out.u8(CH_IMAGE);
      out.u32(migration.actor);
      out.u32(total);
      out.u32(offset);
      out.bytesField(chunk);
      this.#sendFrame(migration.from, out.frame);
    }
  }

  #receiveImage(reader: FrameReader, actor: ActorId, side: Domain): void {
    const migration = this.#migrating.get(actor);
    const total = reader.u32();
    const offset = reader.u32();
    const chunk = reader.bytesField();
    if (!migration || !reader.ok) {
      this.#drop('stray-image');
      return;
    }
    if (!migration.assembly) migration.assembly = new Uint8Array(total);
    migration.assembly.set(chunk, offset);
    if (offset + chunk.length < total) return;
    // The last chunk: adopt the region on this side, then tell the old side to let go.
    const target = side === 'nic' ? this.nicDomain : this.hostDomain;
    restoreHeap(target, actor, migration.assembly);
    migration.assembly = null;
    this.#sendFrame(side, this.#control(CH_ADOPTED, actor));
  }

  /** Phases 3 → 4: the new side holds the actor; the old side releases it and hands over the buffer. */
  #imageAdopted(actor: ActorId): void {
    const migration = this.#migrating.get(actor);
    if (!migration) return;
    const source = migration.from === 'nic' ? this.nicDomain : this.hostDomain;
    source.releaseHeap(actor);
    (migration.from === 'nic' ? this.#nicCores : this.#hostCores)?.forget(actor);
    this.table.move(actor, { domain: migration.to, node: nodeId(0) });
    migration.goneMs = performance.now();
    // Phase 4, Clean.
    const buffered = this.scheduler.finishMigration(actor, wallNs());
    for (const request of buffered) this.#forwardToHost(request);
    this.#migrating.delete(actor);
    const endMs = performance.now();
    const record: LiveMigrationRecord = {
      actor,
      name: this.table.lookup(actor)?.name ?? String(actor),
      from: migration.from,
      to: migration.to,
      trigger: migration.trigger,
      stateBytes: migration.stateBytes,
      bufferedRequests: buffered.length,
      phasesMs: {
        prepare: migration.preparedMs - migration.startedMs,
        ready: migration.readyMs - migration.preparedMs,
        gone: migration.goneMs - migration.readyMs,
        clean: endMs - migration.goneMs,
      },
    };
    this.#migrations.push(record);
    migration.done(record);
    this.#pumpNic();
  }

  #count(actor: ActorId, side: Domain): void {
    let counts = this.#executed.get(actor);
    if (!counts) {
      counts = { nic: 0, host: 0 };
      this.#executed.set(actor, counts);
    }
    counts[side]++;
  }
}

interface MigrationState {
  readonly actor: ActorId;
  readonly from: Domain;
  readonly to: Domain;
  readonly trigger: string;
  readonly startedMs: number;
  readonly preparedMs: number;
  readyMs: number;
  goneMs: number;
  stateBytes: number;
  hostPrepared: boolean;
  imageSent: boolean;
  assembly: Uint8Array | null;
  readonly done: (record: LiveMigrationRecord) => void;
}

export { IpipeError };
