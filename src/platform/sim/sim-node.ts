/**
 * A simulated iPipe node (§3–4): a SmartNIC domain and a host domain joined by a PCIe channel,
 * driven by the discrete-event kernel. The actors really run — their handlers execute and change
 * their DMOs — and only time is modelled: each step costs what the hardware models (SimTiming)
 * say for its declared work and message sizes.
 *
 *   clients ─wire─▶ NIC: shared queue ─▶ FCFS/DRR cores (HybridScheduler) ─▶ actor.exec ─▶ reply ─wire─▶
 *                         │ forward (actor on host)                    ▲
 *                         ▼                                            │ (on-path: host egress via a NIC core)
 *                   PCIe channel ──▶ host core queues (steered by actor) ─▶ actor.exec ─▶ reply
 *
 * The scheduler is the same object the live platform drives; this node supplies its cores and
 * clock, carries out its decisions (including the four-phase migration, which moves an actor's
 * DMOs by snapshot/restore across the modelled PCIe), and measures what clients see.
 */

import { type ActorRef, refOf } from '../../actor/actor-ref.ts';
import { ActorTable } from '../../actor/actor-table.ts';
import type { MessageCodec } from '../../actor/codec.ts';
import type { ActorLogger, PendingTimer } from '../../actor/context.ts';
import type { HandlerWork } from '../../actor/cost.ts';
import { type ActorDefinition, type AnyActorDefinition, declaredWork } from '../../actor/define-actor.ts';
import type { NetworkEndpoint, Origin } from '../../actor/envelope.ts';
import { Mailbox } from '../../actor/mailbox.ts';
import { DmoDomain } from '../../dmo/domain.ts';
import { restoreHeap, snapshotHeap } from '../../dmo/snapshot.ts';
import { ConfigError, SchedulerStateError, UnknownActorError } from '../../errors.ts';
import { type ActorId, type NodeId, nodeId } from '../../ids.ts';
import { ActorInstance, type ActorPorts } from '../../runtime/actor-instance.ts';
import { publishDecision, publishDrop, publishMigrationPhase } from '../../runtime/diagnostics.ts';
import { HybridScheduler, type SchedulerPolicy } from '../../sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../../sched/settings.ts';
import type { Decision, Domain } from '../../sched/types.ts';
import { ClientTable, type ReplySink } from './client-table.ts';

export type { ReplySink } from './client-table.ts';

import type { EventKernel, EventKind } from './event-kernel.ts';
import { SimRequest } from './sim-request.ts';
import type { SimTiming } from './timing.ts';

// This module's per-packet code reads these private constants, never the exports below: V8 reads
// an exported binding through a cell, with a check for the not-yet-initialized hole; a private
// constant is folded into the instruction.
const OVERHEAD_BYTES = 66;
const MIN_BYTES = 64;
/** Frame bytes around a message: Ethernet 14 + IPv4 20 + UDP 8 + ipipe wire header 24. */
export const FRAME_OVERHEAD_BYTES = OVERHEAD_BYTES;
/** Ethernet's minimum frame. */
export const MIN_FRAME_BYTES = MIN_BYTES;

/** Handler work assumed for an actor that declares none: the paper's echo task (Table 3). */
const DEFAULT_WORK: HandlerWork = Object.freeze({ instructions: 3_142, ipc: 1.4, mpki: 0.6 });

export interface SimNodeOptions {
  readonly id?: number;
  readonly timing: SimTiming;
  readonly kernel: EventKernel;
  /** Cores of the NIC the scheduler may use (default: all the profile has). */
  readonly nicCores?: number;
  readonly hostCores?: number;
  readonly policy?: SchedulerPolicy;
  readonly scheduler?: Partial<SchedulerSettings>;
  /** Bytes of each actor's DMO region on either side (default 4 MiB). */
  readonly regionBytes?: number;
  readonly maxActors?: number;
  /** Packets the NIC's ingress queue holds before it drops (the traffic manager's buffer). */
  readonly ingressQueuePackets?: number;
  /** A handler running longer than this on a NIC core gets its actor deregistered (iPipe's DoS timer). */
  readonly watchdogNs?: number;
  /**
   * The first client request id (default 1). SimCluster.restart continues a crashed node's
   * counter, so an answer meant for the dead incarnation never matches a new request.
   */
  readonly firstRequestId?: number;
  /** How often the management core checks while idle. */
  readonly manageEveryNs?: number;
  readonly log?: ActorLogger;
}

/**
 * What a node in a SimCluster hands to the cluster's network: frames for actors on other nodes,
 * and answers for clients attached to other nodes. `atPortNs` is when the frame has left this
 * node's port and crossed the switch, i.e. when it reaches the far side's port.
 */
export interface SimNetworkPort {
  transmit(from: SimNode, frame: SimFrame, atPortNs: number): void;
  answerClient(from: SimNode, frame: SimFrame, atClientNs: number, ok: boolean): void;
}

/** A message crossing the modelled network between nodes (plain data, as on a real wire). */
export interface SimFrame {
  readonly target: ActorId;
  readonly message: unknown;
  /** Bytes on the wire (frameBytes of the message). */
  readonly sizeBytes: number;
  readonly origin: Origin;
}

/** One completed migration, phase by phase (the paper's Fig 17 breakdown). */
export interface MigrationRecord {
  readonly actor: ActorId;
  readonly name: string;
  readonly from: Domain;
  readonly to: Domain;
  readonly trigger: string;
  readonly stateBytes: number;
  readonly bufferedRequests: number;
  readonly phasesNs: {
    readonly prepare: number;
    readonly ready: number;
    readonly gone: number;
    readonly clean: number;
  };
  readonly startedAtNs: number;
  readonly endedAtNs: number;
}

/**
 * A migration that did not finish: its actor was deregistered (a NIC handler overran the watchdog
 * while Ready waited for it) before the move completed. The live platform rejects `migrate()` with
 * the same reason.
 */
export interface AbortedMigrationRecord {
  readonly actor: ActorId;
  readonly name: string;
  readonly from: Domain;
  readonly to: Domain;
  readonly trigger: string;
  /** The phase it had reached: 'ready' (waiting for the old side to finish), 'gone' or 'clean'. */
  readonly phase: 'ready' | 'gone' | 'clean';
  readonly why: string;
  readonly startedAtNs: number;
  readonly endedAtNs: number;
}

/** An actor's off-path steering while its older frames leave the NIC's path (SimNode #steerGates). */
interface SteerGate {
  readonly untilNs: number;
  onNicPath: number;
  readonly held: SimRequest[];
}

interface Outbound {
  readonly kind: 'send' | 'reply';
  readonly target: ActorId;
  readonly message: unknown;
  readonly sizeBytes: number;
  readonly origin: Origin;
}

/** How a simulated client sends. */
export interface ClientSendOptions {
  /** Send at this (future) time instead of now; sources that send ahead must do so in time order. */
  readonly atNs?: number;
  /**
   * The sink only records (no follow-up send): it is told of the answer when the answer leaves
   * the NIC, with its arrival latency, saving the delivery event. Closed-loop clients must not
   * set it.
   */
  readonly passive?: boolean;
}

interface ActiveMigration {
  readonly actor: ActorId;
  /** Which migration of the node this is: a hand-over event names it, so a later one ignores it. */
  readonly serial: number;
  readonly from: Domain;
  readonly to: Domain;
  readonly trigger: string;
  readonly startedAtNs: number;
  readyAtNs: number;
  goneAtNs: number;
  stateBytes: number;
  bufferedRequests: number;
  phase: 'ready' | 'gone' | 'clean';
  /**
   * Clean (to the host): the requests still to hand over, oldest first, and how many are sent.
   * NIC-side arrivals for the actor join the end until the last is sent (its order is kept).
   */
  handOver: SimRequest[];
  handedOver: number;
}

/** Cost-hook results validated in full per actor before the simulator trusts the hook. */
const VALIDATED_COST_CALLS = 64;

/** An empty hand-over list, shared (never pushed to: `#joinsHandOver` checks the index first). */
const NO_REQUESTS: SimRequest[] = [];

const SILENT_LOG: ActorLogger = { debug() {}, info() {}, warn() {}, error() {} };
const CLIENT_ADDRESS = 'client';

// Fields start with a value of their final kind (an empty table, 0), not `undefined`: V8 types a
// field by its first value, and `undefined` then a number or table makes it "any value" — boxed
// numbers, a type check per read (see event-heap.ts).
const EMPTY_FLOAT64 = new Float64Array(0);

export class SimNode {
  readonly id: NodeId;
  readonly timing: SimTiming;
  readonly kernel: EventKernel;
  readonly table: ActorTable;
  readonly scheduler: HybridScheduler<SimRequest>;
  readonly nicDomain: DmoDomain;
  readonly hostDomain: DmoDomain;
  readonly migrations: MigrationRecord[] = [];
  /** Migrations ended by their actor's deregistration, oldest first. */
  readonly abortedMigrations: AbortedMigrationRecord[] = [];
  readonly decisions: (Decision & { readonly node: number })[] = [];
  /** Requests refused, by reason. */
  readonly drops = new Map<string, number>();
  readonly nicCores: number;
  readonly hostCores: number;

  readonly #instances = new Map<ActorId, ActorInstance>();
  /** The instance last found by `#instanceOf` (runs mostly see one actor at a time). */
  #lastInstanceId = -1;
  #lastInstance: ActorInstance | undefined = undefined;
  readonly #ports: ActorPorts;
  readonly #ingressLimit: number = 0;
  readonly #watchdogNs: number = 0;
  readonly #manageEveryNs: number = 0;
  /** Frames from the wire go straight to the cores' queue: on-path, or no software dispatcher. */
  readonly #wireToCores: boolean;

  // NIC cores
  readonly #nicBusy: boolean[];
  /** How many NIC cores are not busy: under load it is 0 on most arrivals, and the pump stops at once. */
  #nicIdleCores: number = 0;
  /** Bit i set: NIC core i (i < 32) is not busy. Mirrors #nicBusy for the pump's find-first-set. */
  #nicIdleMask: number = 0;
  /**
   * The actor whose request each NIC core runs (all `#nicDone` needs of it). A number in a typed
   * table rather than the request object: storing a new object into an old array costs a write
   * barrier's slow path per packet.
   */
  readonly #nicActor: Float64Array = EMPTY_FLOAT64;
  readonly #nicOutbox: Outbox[];
  readonly #nicBusyNs: Float64Array = EMPTY_FLOAT64;
  /** The declared handler time of what each NIC core runs (for the watchdog at completion). */
  readonly #nicHandlerNs: Float64Array = EMPTY_FLOAT64;
  /**
   * The request whose handler each NIC core was stopped in by the watchdog (set only then, so the
   * common path stores no object): #nicDone refuses it to its sender, which would otherwise wait
   * for ever (nothing else holds it).
   */
  readonly #nicRunaway: (SimRequest | null)[];
  readonly #egress = new Mailbox<Outbound>();
  #outbox: Outbox | null = null;

  // host cores: one queue each, requests steered by actor id
  readonly #hostQueues: Mailbox<SimRequest>[];
  readonly #hostBusy: boolean[];
  readonly #hostRequest: (SimRequest | null)[];
  readonly #hostOutbox: Outbox[];
  readonly #hostBusyNs: Float64Array = EMPTY_FLOAT64;
  readonly #hostPending = new Map<ActorId, number>();
  /**
   * Actors just moved to the host whose buffered requests are still crossing the channel
   * (`buffered`), with the messages host actors and timers sent them meanwhile (`held`, in order):
   * delivered at once, those would overtake their senders' earlier messages among the buffered
   * ones, or still on their way through the NIC (#hostToNic: sent while it migrated; the live
   * channel is FIFO, so there they reach the NIC before it learns of the adoption, but here the NIC
   * finishes on its own). The held ones go to the host queue when the last of both has arrived
   * (the live host holds them until the NIC's LINK_DRAINED; channel-link.ts "Per-sender order").
   */
  readonly #draining = new Map<
    ActorId,
    { readonly buffered: Set<SimRequest>; readonly held: SimRequest[] }
  >();
  /** Per actor, host actors' messages to it on their way through the NIC (SimRequest.viaNic). */
  readonly #hostToNic = new Map<ActorId, number>();
  /**
   * Off-path: actors just moved to the host whose older frames may still be on the NIC's path —
   * buffered and being handed over (Clean), in the software dispatcher, or in the shared queue.
   * The switch steers their new frames past all that, so sent on at once those overtook the same
   * sender's older ones (a client's requests ran out of order in every run of
   * test/platform/sim/off-path-steering-order.test.ts). They are held (`held`, in order) and enter
   * the PCIe channel, a FIFO, behind the last older one: when the move has ended, the frames
   * counted in the shared queue have left it (`onNicPath`, SimRequest.gated), and the dispatcher
   * has let out what it held when the move ended (`untilNs`). Sending them through the NIC's path
   * instead never let go under load: each extended the wait for the next (RTA's capacity on the
   * Stingray fell 3×).
   */
  readonly #steerGates = new Map<ActorId, SteerGate>();

  // the link: each direction a FIFO at line rate
  #ingressFreeAtNs = 0;
  #egressFreeAtNs = 0;

  // The timing of the last frame size seen on each path. SimTiming's methods are pure functions of
  // their arguments, and a run sends a handful of sizes — mostly one request and one answer size —
  // so each path remembers its last size's figures: a compare instead of a call per figure.
  #rxLastBytes = -1;
  #rxFrameNs = 0;
  #rxPipelineNs = 0;
  #txLastBytes = -1;
  #txFrameNs = 0;
  #txPipelineNs = 0;
  #execLastBytes = -1;
  #execLastAddedNs = -1;
  #execPacketNs = 0;
  // The same for `timing.nicHandlerNs`, keyed by the fields of the last work declared without
  // accelerators (a cost hook returns a new object per request, mostly with the same figures).
  #workLastValid = false;
  #workLastInstructions: number | undefined = undefined;
  #workLastIpc: number | undefined = undefined;
  #workLastMpki: number | undefined = undefined;
  #workLastMemoryAccesses: number | undefined = undefined;
  #workLastWorkingSetBytes: number | undefined = undefined;
  #workLastFixedNs: number | undefined = undefined;
  #workLastNs = 0;

  // off-path software dispatcher: when each dispatcher core is next free, and frames inside it
  readonly #dispatcherFreeAtNs: number[];
  #dispatching = 0;

  // PCIe channel (each direction a FIFO server)
  #toHostFreeAtNs = 0;
  #toNicFreeAtNs = 0;

  // clients
  readonly #clientPending = new ClientTable();
  readonly #clientEndpoint: NetworkEndpoint;
  #nextRequestId = 1;

  // migration
  readonly #active = new Map<ActorId, ActiveMigration>();
  #migrationSerial = 0;
  #manageArmed = false;

  #network: SimNetworkPort | null = null;

  readonly #kind: {
    portArrive: EventKind;
    nicDone: EventKind;
    nicFree: EventKind;
    hostDone: EventKind;
    arrive: EventKind;
    dispatched: EventKind;
    toHost: EventKind;
    toNic: EventKind;
    toClient: EventKind;
    timer: EventKind;
    manage: EventKind;
    migrationGone: EventKind;
    migrationClean: EventKind;
    migrationHandOver: EventKind;
    steerGate: EventKind;
  };
  /** Payloads of in-flight events, by slot (events carry only numbers). */
  readonly #inFlight: unknown[] = [];
  /** Freed slots of #inFlight, a stack (typed: `Array#push`/`pop` were builtin calls per packet). */
  #freeSlots = new Int32Array(64);
  #freeSlotCount = 0;

  constructor(options: SimNodeOptions) {
    const timing = options.timing;
    this.id = nodeId(options.id ?? 0);
    this.timing = timing;
    this.kernel = options.kernel;
    this.nicCores = options.nicCores ?? timing.nicCores;
    this.hostCores = options.hostCores ?? timing.hostCores;
    if (!Number.isInteger(this.nicCores) || this.nicCores < 1 || this.nicCores > timing.nicCores) {
      throw new ConfigError(
        'nicCores',
        `must be an integer in [1, ${timing.nicCores}] for ${timing.label}, got ${this.nicCores}`,
      );
    }
    if (!Number.isInteger(this.hostCores) || this.hostCores < 1) {
      throw new ConfigError('hostCores', `must be a positive integer, got ${this.hostCores}`);
    }
    this.#ingressLimit = options.ingressQueuePackets ?? 4096;
    this.#clientEndpoint = Object.freeze({ address: CLIENT_ADDRESS, port: this.id });
    this.#watchdogNs = options.watchdogNs ?? 10_000_000;
    const firstRequestId = options.firstRequestId ?? 1;
    if (!Number.isSafeInteger(firstRequestId) || firstRequestId < 1) {
      throw new ConfigError('firstRequestId', `must be a positive integer, got ${firstRequestId}`);
    }
    this.#nextRequestId = firstRequestId;
    this.#manageEveryNs = options.manageEveryNs ?? 20_000;
    this.#wireToCores = timing.placement === 'on-path' || timing.dispatcherCores === 0;
    this.table = new ActorTable();
    const regionBytes = options.regionBytes ?? 4 * 1024 * 1024;
    const maxActors = options.maxActors ?? 16;
    this.nicDomain = DmoDomain.create({ regionBytes, maxActors });
    this.hostDomain = DmoDomain.create({ regionBytes, maxActors });
    this.scheduler = new HybridScheduler<SimRequest>({
      cores: this.nicCores,
      policy: options.policy ?? 'hybrid',
      settings: {
        meanThreshNs: timing.meanThreshNs,
        tailThreshNs: timing.tailThreshNs,
        ...options.scheduler,
      },
      headroomNs: (bytes) => timing.headroomNs(bytes),
      nameOf: (id) => this.table.lookup(id)?.name ?? `actor ${id}`,
    });

    this.#nicBusy = new Array<boolean>(this.nicCores).fill(false);
    this.#nicIdleCores = this.nicCores;
    this.#nicIdleMask = this.nicCores >= 32 ? -1 : (1 << this.nicCores) - 1;
    this.#nicActor = new Float64Array(this.nicCores);
    this.#nicOutbox = Array.from({ length: this.nicCores }, () => new Outbox());
    this.#nicBusyNs = new Float64Array(this.nicCores);
    this.#nicHandlerNs = new Float64Array(this.nicCores);
    this.#nicRunaway = new Array<SimRequest | null>(this.nicCores).fill(null);
    this.#hostQueues = Array.from({ length: this.hostCores }, () => new Mailbox<SimRequest>());
    this.#hostBusy = new Array<boolean>(this.hostCores).fill(false);
    this.#hostRequest = new Array<SimRequest | null>(this.hostCores).fill(null);
    this.#hostOutbox = Array.from({ length: this.hostCores }, () => new Outbox());
    this.#hostBusyNs = new Float64Array(this.hostCores);
    this.#dispatcherFreeAtNs = new Array<number>(timing.dispatcherCores).fill(0);

    const log = options.log ?? SILENT_LOG;
    this.#ports = {
      now: () => this.kernel.now(),
      route: (_from, target, message, sizeBytes, origin) => {
        this.#emit({ kind: 'send', target, message, sizeBytes, origin });
      },
      replyToClient: (from, origin, message, codec: MessageCodec<unknown>) => {
        const sizeBytes = wireBytes(codec.sizeOf(message));
        this.#emit({ kind: 'reply', target: from, message, sizeBytes, origin });
      },
      codecOf: (target) => this.table.lookup(target)?.definition.messages,
      armTimer: (actor, timer: PendingTimer<unknown>) => {
        this.kernel.post(this.#kind.timer, Math.max(this.kernel.now(), timer.dueAtNs), actor, timer.id);
      },
      lookup: (name) => {
        const entry = this.table.lookupName(name);
        return entry ? refOf(entry.definition, entry.id, entry.name) : undefined;
      },
      log,
    };

    const k = this.kernel;
    this.#kind = {
      portArrive: k.registerKind(
        (_k, slot) => this.#arriveAtPort(this.#take(slot) as SimFrame),
        'port-arrive',
      ),
      nicDone: k.registerKind((_k, core) => this.#nicDone(core), 'nic-core-done'),
      nicFree: k.registerKind((_k, core) => this.#nicFree(core), 'nic-core-free'),
      hostDone: k.registerKind((_k, core) => this.#hostDone(core), 'host-core-done'),
      arrive: k.registerKind(
        (_k, slot) => this.#arriveFromWire(this.#take(slot) as SimRequest),
        'nic-arrive',
      ),
      dispatched: k.registerKind((_k, slot) => {
        this.#dispatching--;
        this.#arriveAtNic(this.#take(slot) as SimRequest);
      }, 'dispatcher-done'),
      toHost: k.registerKind(
        (_k, slot) => this.#crossedToHost(this.#take(slot) as SimRequest),
        'pcie-to-host',
      ),
      toNic: k.registerKind((_k, slot) => this.#arriveFromHost(this.#take(slot) as Outbound), 'pcie-to-nic'),
      toClient: k.registerKind(
        (_k, slot) => this.#deliverToClient(this.#take(slot) as Outbound),
        'wire-to-client',
      ),
      timer: k.registerKind((_k, actor, timerId) => this.#timerDue(actor as ActorId, timerId), 'timer'),
      manage: k.registerKind(() => this.#manageTick(), 'manage'),
      migrationGone: k.registerKind((_k, actor) => this.#migrationGone(actor as ActorId), 'migration-gone'),
      migrationClean: k.registerKind((_k, actor, serial) => {
        // Only for the migration that posted it: a forced move may have closed it and begun another.
        if (this.#active.get(actor as ActorId)?.serial === serial) this.#migrationClean(actor as ActorId);
      }, 'migration-clean'),
      migrationHandOver: k.registerKind(
        (_k, actor, serial) => this.#handOverNext(actor as ActorId, serial),
        'migration-hand-over',
      ),
      steerGate: k.registerKind((_k, actor) => this.#openSteerGate(actor as ActorId), 'steer-gate'),
    };
    this.#armManage();
  }

  // ── actors ───────────────────────────────────────────────────────────────────────────────────

  /**
   * Registers an actor and runs its init on the side it starts on: host-pinned actors on the
   * host, everything else on the NIC unless `domain` says otherwise.
   */
  register<M, R>(
    definition: ActorDefinition<M, R>,
    options: { readonly name?: string; readonly domain?: Domain; readonly id?: ActorId } = {},
  ): ActorRef<M, R> {
    const any = definition as unknown as AnyActorDefinition;
    const domain = options.domain ?? (any.placement === 'host' ? 'host' : 'nic');
    const entry = this.table.register({
      definition: any,
      location: { domain, node: this.id },
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.id === undefined ? {} : { id: options.id }),
    });
    const heap = (domain === 'nic' ? this.nicDomain : this.hostDomain).createHeap(entry.id);
    const instance = new ActorInstance(any, entry.id, entry.name, heap, this.#ports);
    this.#instances.set(entry.id, instance);
    this.#lastInstanceId = -1;
    this.scheduler.addActor({ id: entry.id, placement: any.placement, exclusive: any.exclusive, domain });
    const sent = new Outbox();
    this.#outbox = sent;
    instance.init();
    this.#outbox = null;
    for (let i = 0; i < sent.length; i++) this.#dispatchOutbound(sent.at(i), domain);
    return refOf(definition, entry.id, entry.name);
  }

  /**
   * Records an actor that lives on another node of the cluster (same id and name there), so
   * handlers here can address it; sends to it leave through this node's port.
   */
  registerRemote(
    definition: AnyActorDefinition,
    options: { readonly id: ActorId; readonly name: string; readonly node: NodeId },
  ): void {
    this.table.register({
      definition,
      id: options.id,
      name: options.name,
      location: { domain: 'remote', node: options.node },
    });
  }

  /** Joins a cluster's network (SimCluster does this); without one, remote targets are refused. */
  attachNetwork(network: SimNetworkPort): void {
    this.#network = network;
  }

  /**
   * Schedules `frame`'s arrival at this node's port (the network's latency already added): there
   * it queues for the ingress link, then the receive pipeline, then enters like any packet.
   */
  deliverFrameAt(frame: SimFrame, atNs: number): void {
    this.kernel.post(
      this.#kind.portArrive,
      Math.max(this.kernel.now(), Math.round(atNs)),
      this.#park(frame),
      0,
    );
  }

  /**
   * An answer for a client attached to this node, sent by another node, reaches the client at
   * `atClientNs` (or, `ok` false, the refusal of a request another node dropped).
   */
  deliverClientAnswer(frame: SimFrame, atClientNs: number, ok: boolean): void {
    const origin = frame.origin;
    if (origin.kind !== 'client') return;
    const clients = this.#clientPending;
    const slot = clients.find(origin.requestId);
    if (slot < 0) return;
    if (clients.passiveOf(slot) || !ok) {
      const sink = clients.sinkOf(slot);
      const sentAtNs = clients.sentAtNsOf(slot);
      clients.remove(slot);
      sink(origin.requestId, atClientNs - sentAtNs, ok, frame.message, sentAtNs);
      return;
    }
    this.kernel.post(
      this.#kind.toClient,
      Math.max(this.kernel.now(), Math.round(atClientNs)),
      this.#park({
        kind: 'reply',
        target: frame.target,
        message: frame.message,
        sizeBytes: frame.sizeBytes,
        origin,
      }),
      0,
    );
  }

  #arriveAtPort(frame: SimFrame): void {
    const bytes = frame.sizeBytes;
    const start = Math.max(this.kernel.now(), this.#ingressFreeAtNs);
    if (bytes !== this.#rxLastBytes) this.#rememberRx(bytes);
    this.#ingressFreeAtNs = start + this.#rxFrameNs;
    const atNs = Math.round(this.#ingressFreeAtNs + this.#rxPipelineNs);
    const request = new SimRequest(frame.target, bytes, 0, frame.message, frame.origin, true);
    this.kernel.post(this.#kind.arrive, atNs, this.#park(request), 0);
  }

  /** True when `target` lives on another node (its table row says remote). */
  #isRemote(target: ActorId): boolean {
    return this.table.lookup(target)?.location.domain === 'remote';
  }

  /** True when an answer's client is attached to another node of the cluster. */
  #isForeignClient(origin: Origin): boolean {
    return origin.kind === 'client' && origin.endpoint.port !== this.id && this.#network !== null;
  }

  instance(id: ActorId): ActorInstance {
    const instance = this.#instances.get(id);
    if (!instance) throw new UnknownActorError(id);
    return instance;
  }

  domainOf(id: ActorId): Domain | 'migrating' {
    const mode = this.scheduler.modeOf(id);
    if (mode === 'migrating') return 'migrating';
    return mode === 'host' ? 'host' : 'nic';
  }

  // ── clients ──────────────────────────────────────────────────────────────────────────────────

  /** The id the next client request gets (a restarted node in a SimCluster starts from here). */
  get nextRequestId(): number {
    return this.#nextRequestId;
  }

  /**
   * A client sends `message` to `target` in a frame of `packetBytes` (at least the encoded
   * message plus headers); `sink` hears the answer. Returns the request id.
   */
  clientSend<M>(
    target: ActorRef<M, unknown>,
    message: M,
    sink: ReplySink,
    packetBytes?: number,
    options: ClientSendOptions = {},
  ): number {
    const messageBytes = target.codec.sizeOf(message);
    const bytes = Math.max(packetBytes ?? 0, wireBytes(messageBytes));
    const requestId = this.#nextRequestId++;
    const sentAtNs = options.atNs ?? this.kernel.now();
    if (!(sentAtNs >= this.kernel.now())) {
      throw new ConfigError(
        'clientSend.atNs',
        `a send cannot be in the past (now ${this.kernel.now()} ns, got ${sentAtNs})`,
      );
    }
    this.#clientPending.add(requestId, sentAtNs, sink, options.passive === true);
    const origin: Origin = { kind: 'client', endpoint: this.#clientEndpoint, requestId };
    const request = new SimRequest(target.id, bytes, 0, message, origin, true);
    // The switch port toward the NIC is a FIFO at line rate; then the NIC's receive pipeline.
    // Sends must reach this FIFO in time order: a source that sends ahead (atNs) does so in order.
    const start = Math.max(sentAtNs + this.timing.wireLatencyNs, this.#ingressFreeAtNs);
    if (bytes !== this.#rxLastBytes) this.#rememberRx(bytes);
    this.#ingressFreeAtNs = start + this.#rxFrameNs;
    const atNs = Math.round(this.#ingressFreeAtNs + this.#rxPipelineNs);
    this.kernel.post(this.#kind.arrive, atNs, this.#park(request), 0);
    return requestId;
  }

  // ── migration ────────────────────────────────────────────────────────────────────────────────

  /** Forces a migration (the API/CLI path); the scheduler's own decisions use the same steps. */
  migrate(id: ActorId, to: Domain, trigger = 'forced'): void {
    this.#beginMigration(id, to, trigger);
  }

  // ── measurement ──────────────────────────────────────────────────────────────────────────────

  /** Busy nanoseconds per NIC core and host core since the node started. */
  busyNs(): { readonly nic: Float64Array; readonly host: Float64Array } {
    return { nic: this.#nicBusyNs, host: this.#hostBusyNs };
  }

  /** Requests still inside the node (queues, cores, channel, buffers) plus unanswered clients. */
  outstandingClients(): number {
    return this.#clientPending.size;
  }

  // ── NIC side ─────────────────────────────────────────────────────────────────────────────────

  /**
   * A frame from the wire reaches the NIC. On-path, the traffic manager queues it for the cores
   * at no core cost. Off-path, the NIC switch steers frames for host actors straight to the host,
   * and the rest pass the software dispatcher core(s) before the shared queue.
   */
  #arriveFromWire(request: SimRequest): void {
    if (this.#wireToCores) {
      this.#arriveAtNic(request);
      return;
    }
    const now = this.kernel.now();
    if (this.scheduler.modeOf(request.actor) === 'host' && this.table.has(request.actor)) {
      request.received = true;
      request.arrivalNs = now;
      if (this.#steerGates.size !== 0) {
        const gate = this.#steerGates.get(request.actor);
        if (gate !== undefined) {
          gate.held.push(request);
          return;
        }
      }
      this.scheduler.noteSteeredArrival(request);
      this.#armManage();
      this.#sendToHost(request, now);
      return;
    }
    this.#enterDispatcher(request, now);
  }

  /** Off-path: a frame the switch did not steer queues for the software dispatcher core(s). */
  #enterDispatcher(request: SimRequest, now: number): void {
    if (this.#dispatching >= this.#ingressLimit) {
      this.#drop(request, 'nic-queue-full');
      return;
    }
    let server = 0;
    for (let i = 1; i < this.#dispatcherFreeAtNs.length; i++) {
      if ((this.#dispatcherFreeAtNs[i] as number) < (this.#dispatcherFreeAtNs[server] as number)) server = i;
    }
    const start = Math.max(now, this.#dispatcherFreeAtNs[server] as number);
    const doneNs = start + this.timing.dispatcherNs(request.sizeBytes);
    this.#dispatcherFreeAtNs[server] = doneNs;
    this.#dispatching++;
    this.kernel.post(this.#kind.dispatched, Math.round(doneNs), this.#park(request), 0);
  }

  #arriveAtNic(request: SimRequest): void {
    const now = this.kernel.now();
    if (request.fromWire && this.scheduler.sharedQueueLength >= this.#ingressLimit) {
      this.#drop(request, 'nic-queue-full');
      return;
    }
    request.arrivalNs = now;
    if (this.#steerGates.size !== 0 && request.fromWire) {
      const gate = this.#steerGates.get(request.actor);
      if (gate !== undefined) {
        gate.onNicPath++;
        request.gated = true;
      }
    }
    this.scheduler.arrive(request, now);
    this.#armManage();
    this.#pumpNic();
  }

  /**
   * Ends `actor`'s steering gate once nothing older of it can still be on the NIC's path: the
   * frames held meanwhile enter the channel now, in order, behind the last of those (and are
   * counted as steered arrivals), and its later frames go straight through.
   */
  #openSteerGate(actor: ActorId): void {
    const gate = this.#steerGates.get(actor);
    if (gate === undefined || gate.onNicPath > 0 || this.#active.has(actor)) return;
    const now = this.kernel.now();
    if (now < gate.untilNs) return;
    this.#steerGates.delete(actor);
    for (const request of gate.held) {
      this.scheduler.noteSteeredArrival(request);
      this.#sendToHost(request, now);
    }
    if (gate.held.length > 0) this.#armManage();
  }

  /**
   * `actor` leaves the host (or is deregistered) before its gate opened: its held frames are no
   * longer steered. Moving to the NIC, they take the dispatcher, behind the older frames still on
   * that path (one dispatcher core is a FIFO); deregistered, they are refused.
   */
  #closeSteerGate(actor: ActorId, refuse: boolean): void {
    const gate = this.#steerGates.get(actor);
    if (gate === undefined) return;
    this.#steerGates.delete(actor);
    const now = this.kernel.now();
    for (const request of gate.held) {
      if (refuse) this.#drop(request, 'deregistered');
      else {
        request.received = false;
        this.#enterDispatcher(request, now);
      }
    }
  }

  /**
   * Every idle NIC core takes one piece of work, while there is any. Cores are visited in
   * ascending order, each idle one at the moment it is reached (`#nextIdleNicCore`).
   *
   * One piece, not "until busy": forwarding a packet to the host, passing host egress to the wire
   * or pushing a request into a mailbox occupies the core for its cost (`overheadNs`) just as a
   * handler does. A core that went on taking work would claim, now, packets it can only start
   * `overheadNs` later, while the cores after it sit idle — one core draining a queue of k
   * packets serially (k × 2.5 µs for a 512 B forward on the CN2350) and reserving the PCIe FIFO
   * that far ahead, so every other core's forward then waited behind it. After any burst that
   * kept the queue filling, and a reply burst from that FIFO started the next (RTA offloaded sat
   * at ~41 µs instead of ~10 µs, test/platform/sim/nic-core-pump.test.ts).
   * Only a drop, which costs the core nothing, lets it take the next piece at once.
   */
  #pumpNic(): void {
    if (this.#nicIdleCores === 0) return;
    const scheduler = this.scheduler;
    // Idle cores find nothing once the queues are empty: stop asking. (Most calls, e.g. a core
    // finishing with nothing queued behind it; there is an idle core, so the loop would stop at it.)
    if (!scheduler.hasQueuedWork() && this.#egress.isEmpty()) return;
    const now = this.kernel.now();
    // The queues are checked before moving to each next idle core (for the first, just above).
    for (let core = this.#nextIdleNicCore(0); core >= 0; ) {
      let overheadNs = 0;
      while (!this.#nicBusy[core] && overheadNs === 0) {
        const role = scheduler.roleOf(core);
        if (role === 'fcfs' && !this.#egress.isEmpty()) {
          // On-path: host egress passes through a NIC core on its way to the wire.
          const out = this.#egress.shift() as Outbound;
          overheadNs += this.timing.nicPacketNs(out.sizeBytes, 0);
          this.#toWire(out, overheadNs);
          continue;
        }
        const work = role === 'fcfs' ? scheduler.takeFcfs(core, now) : scheduler.takeDrr(core, now);
        if (!work) break;
        // A frame counted on a gated actor's NIC path left the shared queue: after this step has
        // sent it on (forwarded, or joined the hand-over), the held ones may follow.
        let gatedActor = -1;
        if (work.request.gated) {
          work.request.gated = false;
          const gate = this.#steerGates.get(work.request.actor);
          if (gate !== undefined && --gate.onNicPath === 0) gatedActor = work.request.actor;
        }
        switch (work.kind) {
          case 'exec':
            this.#startNicExec(core, work.request, overheadNs);
            overheadNs = 0;
            break;
          case 'forward': {
            const request = work.request;
            if (this.#active.size !== 0 && this.#joinsHandOver(request)) {
              const dispatchNs = this.timing.nicDispatchNs;
              overheadNs += this.#receivesPacket(request)
                ? this.timing.nicPacketNs(request.sizeBytes, dispatchNs)
                : dispatchNs;
              break;
            }
            const sendNs = this.timing.nicToHostSendNs(request.sizeBytes);
            overheadNs += this.#receivesPacket(request)
              ? this.timing.nicPacketNs(request.sizeBytes, sendNs)
              : sendNs;
            this.#sendToHost(request, now + overheadNs);
            break;
          }
          case 'mailbox':
          case 'buffered': {
            const request = work.request;
            const dispatchNs = this.timing.nicDispatchNs;
            overheadNs += this.#receivesPacket(request)
              ? this.timing.nicPacketNs(request.sizeBytes, dispatchNs)
              : dispatchNs;
            break;
          }
          case 'drop':
            this.#drop(work.request, work.reason);
            break;
        }
        if (gatedActor >= 0) this.#openSteerGate(gatedActor as ActorId);
      }
      if (overheadNs > 0) {
        scheduler.recordOverhead(core, overheadNs);
        this.#nicBusyNs[core] = (this.#nicBusyNs[core] as number) + overheadNs;
        this.#setNicBusy(core);
        this.kernel.postAfter(this.#kind.nicFree, Math.round(overheadNs), core, 0);
      }
      if (!scheduler.hasQueuedWork() && this.#egress.isEmpty()) break;
      core = this.#nextIdleNicCore(core + 1);
    }
  }

  #startNicExec(core: number, request: SimRequest, overheadNs: number): void {
    this.#settleViaNic(request);
    const instance = this.#instanceOf(request.actor);
    if (!instance)
      throw new SchedulerStateError(`NIC core ${core} got work for unknown actor ${request.actor}`);
    const handlerNs = this.#nicHandlerNsOf(this.#workOf(instance, request));
    this.#nicHandlerNs[core] = handlerNs;
    // A packet taken straight off the wire pays the forwarding model's per-packet occupancy; one
    // popped from a mailbox (DRR) or sent by another actor was received by another core already.
    let busyNs = this.#receivesPacket(request)
      ? this.#execPacketNsOf(request.sizeBytes, handlerNs)
      : handlerNs + this.timing.nicDispatchNs;
    const outbox = this.#nicOutbox[core] as Outbox;
    if (handlerNs > this.#watchdogNs) {
      // The handler would overrun its watchdog: the core is stopped at the limit and the actor is
      // deregistered (in #nicDone) without its handler's effects (iPipe §4.4: the DoS timer).
      busyNs = this.#watchdogNs;
      this.#nicRunaway[core] = request;
    } else {
      this.#outbox = outbox;
      this.#runHandler(instance, request);
      this.#outbox = null;
    }
    this.#nicActor[core] = request.actor;
    this.#setNicBusy(core);
    this.#nicBusyNs[core] = (this.#nicBusyNs[core] as number) + overheadNs + busyNs;
    this.kernel.postAfter(this.#kind.nicDone, Math.max(1, Math.round(overheadNs + busyNs)), core, 0);
  }

  #nicDone(core: number): void {
    const now = this.kernel.now();
    const actor = this.#nicActor[core] as ActorId;
    this.#setNicIdle(core);
    const outbox = this.#nicOutbox[core] as Outbox;
    const decisions = this.scheduler.complete(core, now);
    // By index, to the current length: a message dispatched here can restart this core, whose
    // handler appends to this same outbox, and those are dispatched now too (then all cleared).
    for (let i = 0; i < outbox.length; i++) {
      const out = outbox.at(i);
      // An answer from a NIC core goes straight to the wire (what #dispatchOutbound does with it),
      // without the call: most handlers send just their answer.
      if (out.kind === 'reply') this.#toWire(out, 0);
      else this.#dispatchOutbound(out, 'nic');
    }
    outbox.clear();
    const runaway = this.#nicRunaway[core] as SimRequest | null;
    if (runaway !== null) {
      this.#nicRunaway[core] = null;
      // Its sender hears first (its request is the oldest), then the requests it still held.
      this.#drop(runaway, 'deregistered');
      if (this.#instances.get(actor)?.state === 'ready') this.#deregister(actor, 'watchdog');
    }
    this.#apply(decisions);
    if (this.#active.size !== 0) this.#progressMigrations();
    // The pump's own first test, made here: a finishing core is idle, and under this load there
    // is mostly nothing queued behind it, so the call would return at once.
    if (this.scheduler.hasQueuedWork() || !this.#egress.isEmpty()) this.#pumpNic();
  }

  #nicFree(core: number): void {
    this.#setNicIdle(core);
    this.#pumpNic();
  }

  #setNicBusy(core: number): void {
    if (this.#nicBusy[core]) return;
    this.#nicBusy[core] = true;
    this.#nicIdleCores--;
    if (core < 32) this.#nicIdleMask &= ~(1 << core);
  }

  #setNicIdle(core: number): void {
    if (!this.#nicBusy[core]) return;
    this.#nicBusy[core] = false;
    this.#nicIdleCores++;
    if (core < 32) this.#nicIdleMask |= 1 << core;
  }

  /**
   * The lowest-numbered idle NIC core at or above `from`, or −1. Cores 0–31 are found in the idle
   * mask with a find-first-set (under load an arrival would otherwise test most cores one by one);
   * cores above 31, where a profile has them, by a scan.
   */
  #nextIdleNicCore(from: number): number {
    if (from < 32) {
      const bits = this.#nicIdleMask & (-1 << from);
      if (bits !== 0) return 31 - Math.clz32(bits & -bits);
      from = 32;
    }
    for (let core = from; core < this.nicCores; core++) if (!this.#nicBusy[core]) return core;
    return -1;
  }

  // ── host side ────────────────────────────────────────────────────────────────────────────────

  #sendToHost(request: SimRequest, readyAtNs: number): void {
    const bytes = request.sizeBytes;
    const start = Math.max(readyAtNs, this.#toHostFreeAtNs);
    this.#toHostFreeAtNs = start + this.#channelSerialNs(bytes);
    this.#hostPending.set(request.actor, (this.#hostPending.get(request.actor) ?? 0) + 1);
    this.kernel.post(
      this.#kind.toHost,
      Math.round(start + this.timing.channelNs(bytes, 'to-host')),
      this.#park(request),
      0,
    );
  }

  /** A request reaches the host over the channel; the last one a draining actor waits for releases what was held. */
  #crossedToHost(request: SimRequest): void {
    this.#arriveAtHost(request);
    this.#draining.get(request.actor)?.buffered.delete(request);
    this.#settleViaNic(request);
    this.#releaseDrained(request.actor);
  }

  /** A host actor's message through the NIC ran there, was dropped or reached the host: no longer awaited. */
  #settleViaNic(request: SimRequest): void {
    if (!request.viaNic) return;
    request.viaNic = false;
    const left = (this.#hostToNic.get(request.actor) ?? 1) - 1;
    if (left <= 0) this.#hostToNic.delete(request.actor);
    else this.#hostToNic.set(request.actor, left);
    this.#releaseDrained(request.actor);
  }

  /** Once nothing older is on its way to a just-moved actor, the host messages held for it follow. */
  #releaseDrained(actor: ActorId): void {
    const draining = this.#draining.get(actor);
    if (draining === undefined || draining.buffered.size > 0 || this.#hostToNic.has(actor)) return;
    this.#draining.delete(actor);
    for (const held of draining.held) this.#arriveAtHost(held);
  }

  /** A request from this side's own actors or timers: held while its target's buffer crosses (#draining). */
  #arriveAtHostLocal(request: SimRequest): void {
    const draining = this.#draining.get(request.actor);
    if (draining !== undefined) draining.held.push(request);
    else this.#arriveAtHost(request);
  }

  /**
   * NIC-side steering to a host core's queue: an exclusive actor always to the same core (its exec
   * lock for free); a non-exclusive one to the shortest queue, so it can use every host core.
   */
  #arriveAtHost(request: SimRequest): void {
    let core = request.actor % this.hostCores;
    if (!this.#instanceOf(request.actor)?.definition.exclusive) {
      let shortest = Number.POSITIVE_INFINITY;
      for (let c = 0; c < this.hostCores; c++) {
        const length = (this.#hostQueues[c] as Mailbox<SimRequest>).length + (this.#hostBusy[c] ? 1 : 0);
        if (length < shortest) {
          shortest = length;
          core = c;
        }
      }
    }
    (this.#hostQueues[core] as Mailbox<SimRequest>).push(request);
    this.#pumpHost(core);
  }

  #pumpHost(core: number): void {
    if (this.#hostBusy[core]) return;
    const queue = this.#hostQueues[core] as Mailbox<SimRequest>;
    const request = queue.shift();
    if (!request) return;
    const instance = this.#instanceOf(request.actor);
    const mode = this.scheduler.modeOf(request.actor);
    if (!instance || mode === 'deregistered') {
      this.#settleHostPending(request.actor);
      this.#drop(request, 'deregistered');
      this.#pumpHost(core);
      return;
    }
    const work = this.#workOf(instance, request);
    const handlerNs = this.timing.hostHandlerNs(work);
    const outbox = this.#hostOutbox[core] as Outbox;
    this.#outbox = outbox;
    this.#runHandler(instance, request);
    this.#outbox = null;
    let sendNs = 0;
    for (let i = 0; i < outbox.length; i++) sendNs += this.timing.hostSendNs(outbox.at(i).sizeBytes);
    const busyNs = Math.max(1, Math.round(handlerNs + sendNs));
    this.scheduler.recordHostExecution(request.actor, handlerNs);
    this.#hostBusy[core] = true;
    this.#hostRequest[core] = request;
    this.#hostBusyNs[core] = (this.#hostBusyNs[core] as number) + busyNs;
    this.kernel.postAfter(this.#kind.hostDone, busyNs, core, 0);
  }

  #hostDone(core: number): void {
    const request = this.#hostRequest[core] as SimRequest;
    this.#hostRequest[core] = null;
    this.#hostBusy[core] = false;
    const outbox = this.#hostOutbox[core] as Outbox;
    for (let i = 0; i < outbox.length; i++) this.#dispatchOutbound(outbox.at(i), 'host');
    outbox.clear();
    this.#settleHostPending(request.actor);
    this.#progressMigrations();
    this.#pumpHost(core);
  }

  #settleHostPending(actor: ActorId): void {
    const left = (this.#hostPending.get(actor) ?? 1) - 1;
    if (left <= 0) this.#hostPending.delete(actor);
    else this.#hostPending.set(actor, left);
  }

  /** A message from the host reaches the NIC: for a NIC actor (or a migrating one), or egress. */
  #arriveFromHost(out: Outbound): void {
    if (out.kind === 'reply' || this.#isRemote(out.target)) {
      if (this.timing.placement === 'on-path') {
        this.#egress.push(out);
        this.#pumpNic();
      } else this.#toWire(out, 0);
      return;
    }
    const request = new SimRequest(out.target, out.sizeBytes, 0, out.message, out.origin, false);
    // Every local target's message from the host comes here only from #dispatchOutbound, counted.
    request.viaNic = true;
    this.#arriveAtNic(request);
  }

  // ── messages leaving a handler ───────────────────────────────────────────────────────────────

  #emit(out: Outbound): void {
    if (!this.#outbox) {
      throw new SchedulerStateError(
        'an actor sent a message outside a handler: send from init, exec or a timer',
      );
    }
    this.#outbox.push(out);
  }

  /** Routes what a handler produced, once its core has finished (side = where it ran). */
  #dispatchOutbound(out: Outbound, side: Domain): void {
    const now = this.kernel.now();
    if (out.kind === 'reply') {
      if (side === 'nic') this.#toWire(out, 0);
      else this.#sendToNic(out, now);
      return;
    }
    if (!this.table.has(out.target) || (this.#network === null && this.#isRemote(out.target))) {
      this.#count(`unknown-actor`);
      publishDrop({ node: this.id, atNs: now, reason: 'unknown-actor', actor: out.target });
      return;
    }
    if (this.#isRemote(out.target)) {
      // Another node's actor: the frame leaves through this node's port like an answer does.
      const wire: Outbound = { ...out, sizeBytes: wireBytes(out.sizeBytes) };
      if (side === 'nic') this.#toWire(wire, 0);
      else this.#sendToNic(wire, now);
      return;
    }
    if (side === 'nic') {
      // From the NIC every message goes through the scheduler: it runs it, forwards it to the
      // host, or buffers it while its actor migrates.
      this.#arriveAtNic(new SimRequest(out.target, out.sizeBytes, now, out.message, out.origin, false));
      return;
    }
    if (this.scheduler.modeOf(out.target) === 'host') {
      this.#hostPending.set(out.target, (this.#hostPending.get(out.target) ?? 0) + 1);
      this.#arriveAtHostLocal(new SimRequest(out.target, out.sizeBytes, now, out.message, out.origin, false));
    } else {
      this.#hostToNic.set(out.target, (this.#hostToNic.get(out.target) ?? 0) + 1);
      this.#sendToNic(out, now);
    }
  }

  #sendToNic(out: Outbound, readyAtNs: number): void {
    const start = Math.max(readyAtNs, this.#toNicFreeAtNs);
    this.#toNicFreeAtNs = start + this.#channelSerialNs(out.sizeBytes);
    this.kernel.post(
      this.#kind.toNic,
      Math.round(start + this.timing.channelNs(out.sizeBytes, 'to-nic')),
      this.#park(out),
      0,
    );
  }

  #toWire(out: Outbound, afterNs: number): void {
    // Transmit pipeline, then the NIC's port (a FIFO at line rate), then the switch to the client.
    const bytes = out.sizeBytes;
    if (bytes !== this.#txLastBytes) this.#rememberTx(bytes);
    const ready = this.kernel.now() + afterNs + this.#txPipelineNs;
    const start = Math.max(ready, this.#egressFreeAtNs);
    this.#egressFreeAtNs = start + this.#txFrameNs;
    const atNs = Math.round(this.#egressFreeAtNs + this.timing.wireLatencyNs);
    const origin = out.origin;
    if (this.#network !== null) {
      if (out.kind === 'send') {
        this.#network.transmit(this, out, atNs);
        return;
      }
      if (this.#isForeignClient(origin)) {
        this.#network.answerClient(this, out, atNs, true);
        return;
      }
    }
    if (origin.kind === 'client') {
      const clients = this.#clientPending;
      const slot = clients.find(origin.requestId);
      // A passive client only records what it sees: tell it now, with the arrival time it will
      // have, instead of spending an event on the delivery.
      if (slot >= 0 && clients.passiveOf(slot)) {
        const sink = clients.sinkOf(slot);
        const sentAtNs = clients.sentAtNsOf(slot);
        clients.remove(slot);
        sink(origin.requestId, atNs - sentAtNs, true, out.message, sentAtNs);
        return;
      }
    }
    this.kernel.post(this.#kind.toClient, atNs, this.#park(out), 0);
  }

  #deliverToClient(out: Outbound): void {
    const origin = out.origin;
    if (origin.kind !== 'client') return;
    this.#settleClient(origin.requestId, 0, true, out.message);
  }

  /** Hands a waiting client its answer (or refusal), `extraNs` after now; gone clients are skipped. */
  #settleClient(requestId: number, extraNs: number, ok: boolean, answer: unknown): void {
    const clients = this.#clientPending;
    const slot = clients.find(requestId);
    if (slot < 0) return;
    const sink = clients.sinkOf(slot);
    const sentAtNs = clients.sentAtNsOf(slot);
    clients.remove(slot);
    sink(requestId, this.kernel.now() - sentAtNs + extraNs, ok, answer, sentAtNs);
  }

  // ── timers, drops, deregistration ────────────────────────────────────────────────────────────

  #timerDue(actor: ActorId, timerId: number): void {
    const instance = this.#instances.get(actor);
    if (instance?.state !== 'ready') return;
    const timer = instance.pendingTimers().find((t) => t.id === timerId);
    if (!timer) return; // cancelled, or already delivered by a re-armed copy
    const request = new SimRequest(actor, 64, this.kernel.now(), timer.message, timer.origin, false, timerId);
    if (this.scheduler.modeOf(actor) === 'host') {
      this.#hostPending.set(actor, (this.#hostPending.get(actor) ?? 0) + 1);
      this.#arriveAtHostLocal(request);
    } else this.#arriveAtNic(request);
  }

  #drop(request: SimRequest, reason: string): void {
    this.#settleViaNic(request);
    this.#count(reason);
    const now = this.kernel.now();
    publishDrop({ node: this.id, atNs: now, reason, actor: request.actor });
    const origin = request.origin;
    if (origin.kind !== 'client') return;
    if (this.#isForeignClient(origin)) {
      const frame: SimFrame = { target: request.actor, message: reason, sizeBytes: 0, origin };
      (this.#network as SimNetworkPort).answerClient(this, frame, now + this.timing.wireLatencyNs, false);
      return;
    }
    // The refusal travels back over the wire like any answer.
    this.#settleClient(origin.requestId, this.timing.wireLatencyNs, false, reason);
  }

  #count(reason: string): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1);
  }

  #deregister(actor: ActorId, reason: string): void {
    const instance = this.#instances.get(actor);
    instance?.deregister();
    // A migration of it under way ends here (as the live NIC controller's #deregister ends one):
    // finishing it would find no actor in the scheduler (an uncaught SchedulerStateError from
    // #migrationGone), and its image, if in flight, is not adopted.
    const migration = this.#active.get(actor);
    if (migration !== undefined) this.#abortMigration(migration, reason);
    for (const orphan of this.scheduler.removeActor(actor)) this.#drop(orphan, 'deregistered');
    this.#closeSteerGate(actor, true);
    publishDrop({ node: this.id, atNs: this.kernel.now(), reason: `deregistered:${reason}`, actor });
  }

  /**
   * Ends `migration` without finishing it: its actor is being deregistered. Ready or Gone: the
   * scheduler still buffers its requests (the caller refuses them), and the pending Gone event
   * finds no migration. Clean: the requests not handed over yet are refused here, and no longer
   * awaited by the host messages held behind them (#draining), which the host then refuses.
   */
  #abortMigration(migration: ActiveMigration, reason: string): void {
    const actor = migration.actor;
    this.#active.delete(actor);
    this.#inFlightMigration.delete(actor);
    const now = this.kernel.now();
    const draining = this.#draining.get(actor);
    for (let i = migration.handedOver; i < migration.handOver.length; i++) {
      const request = migration.handOver[i] as SimRequest;
      draining?.buffered.delete(request);
      this.#drop(request, 'deregistered');
    }
    migration.handedOver = migration.handOver.length;
    migration.handOver = NO_REQUESTS;
    this.#releaseDrained(actor);
    this.abortedMigrations.push({
      actor,
      name: this.table.lookup(actor)?.name ?? String(actor),
      from: migration.from,
      to: migration.to,
      trigger: migration.trigger,
      phase: migration.phase,
      why: `actor deregistered (${reason}) before its migration finished`,
      startedAtNs: migration.startedAtNs,
      endedAtNs: now,
    });
  }

  // ── scheduler decisions and migration ────────────────────────────────────────────────────────

  /**
   * The management core's idle poll. It keeps ticking while the node has anything to manage and
   * stops when the node is idle (so a run can end), re-armed by the next arrival.
   */
  #manageTick(): void {
    this.#manageArmed = false;
    this.#apply(this.scheduler.manage(this.kernel.now()));
    this.#pumpNic();
    if (this.#hasWork()) this.#armManage();
  }

  #armManage(): void {
    if (this.#manageArmed) return;
    this.#manageArmed = true;
    this.kernel.postAfter(this.#kind.manage, this.#manageEveryNs, 0, 0);
  }

  #hasWork(): boolean {
    return (
      this.#clientPending.size > 0 ||
      this.scheduler.heldRequests() > 0 ||
      this.#active.size > 0 ||
      this.#hostPending.size > 0 ||
      !this.#egress.isEmpty()
    );
  }

  #apply(decisions: readonly Decision[]): void {
    if (decisions.length === 0) return; // nearly every call: skip the iterator
    for (const decision of decisions) {
      this.decisions.push({ ...decision, node: this.id });
      publishDecision({
        node: this.id,
        atNs: decision.atNs,
        kind: decision.kind,
        ...('actor' in decision ? { actor: decision.actor } : {}),
        why: decision.why,
      });
      if (decision.kind !== 'migrate') continue;
      // Decided by the completion that ended in a watchdog kill of that actor (#nicDone applies
      // after deregistering): the scheduler has already forgotten it (removeActor).
      if (this.scheduler.modeOf(decision.actor) === 'deregistered') continue;
      this.#beginMigration(decision.actor, decision.to, decision.trigger);
    }
  }

  /** Phase 1, Prepare: the scheduler stops dispatching to the actor and buffers its requests. */
  #beginMigration(actor: ActorId, to: Domain, trigger: string): void {
    const now = this.kernel.now();
    const from: Domain = this.scheduler.modeOf(actor) === 'host' ? 'host' : 'nic';
    this.scheduler.prepareMigration(actor, to, now);
    // The actor's previous move may still be handing over (only a forced move, or a settle
    // period shorter than the hand-over, comes this soon): what is left goes now, ahead of
    // anything the new move buffers, and that move's record closes.
    const previous = this.#active.get(actor);
    if (previous !== undefined) this.#flushHandOver(previous);
    this.#active.set(actor, {
      actor,
      serial: ++this.#migrationSerial,
      from,
      to,
      trigger,
      startedAtNs: now,
      readyAtNs: -1,
      goneAtNs: -1,
      stateBytes: 0,
      bufferedRequests: 0,
      phase: 'ready',
      handOver: NO_REQUESTS,
      handedOver: 0,
    });
    if (to === 'nic') {
      this.#divertHeldToNic(actor);
      this.#closeSteerGate(actor, false);
    }
    publishMigrationPhase({ node: this.id, actor, phase: 'prepare', edge: 'end', atNs: now, from, to });
    this.#progressMigrations();
  }

  /**
   * An actor moves back to the NIC while its last move to the host still drains (#draining): the
   * host messages held for it cannot wait there. They wait for host messages still on their way
   * through the NIC, which the NIC now buffers until this move ends; this move waits (Ready) for
   * everything counted on the host, the held ones included — a deadlock (the actor stayed
   * 'migrating' for good: the actor DST's migrate-order runs found it). They go to the NIC now,
   * as if sent to an actor already migrating: behind those older ones (the host → NIC channel is
   * a FIFO), and counted like them (#hostToNic). The requests still crossing to the host run
   * there before this move's Ready, as they are older. Timers never cross (#timerDue): buffered.
   */
  #divertHeldToNic(actor: ActorId): void {
    const draining = this.#draining.get(actor);
    if (draining === undefined) return;
    this.#draining.delete(actor);
    const now = this.kernel.now();
    for (const held of draining.held) {
      this.#settleHostPending(actor);
      if (held.timerId !== 0) {
        this.#arriveAtNic(held);
        continue;
      }
      this.#hostToNic.set(actor, (this.#hostToNic.get(actor) ?? 0) + 1);
      this.#sendToNic(
        {
          kind: 'send',
          target: actor,
          message: held.message,
          sizeBytes: held.sizeBytes,
          origin: held.origin,
        },
        now,
      );
    }
  }

  /** Phase 2, Ready: once nothing of the actor runs or waits on its old side, move its state. */
  #progressMigrations(): void {
    if (this.#active.size === 0) return; // nearly every call: skip the iterator
    for (const migration of this.#active.values()) {
      if (migration.phase !== 'ready') continue;
      const actor = migration.actor;
      if (!this.scheduler.isQuiescent(actor) || (this.#hostPending.get(actor) ?? 0) > 0) continue;
      const now = this.kernel.now();
      migration.readyAtNs = now;
      migration.phase = 'gone';
      publishMigrationPhase({
        node: this.id,
        actor,
        phase: 'ready',
        edge: 'end',
        atNs: now,
        from: migration.from,
        to: migration.to,
      });
      // Phase 3, Gone: snapshot the DMOs (and the non-DMO state) and carry them across PCIe.
      const instance = this.instance(actor);
      const snapshot = snapshotHeap(instance.heap);
      migration.stateBytes = snapshot.length;
      this.#inFlightMigration.set(actor, { snapshot, state: instance.exportState() });
      const transferNs = this.timing.migrationTransferNs(
        snapshot.length,
        migration.to === 'host' ? 'to-host' : 'to-nic',
      );
      this.kernel.postAfter(this.#kind.migrationGone, Math.max(1, Math.round(transferNs)), actor, 0);
    }
  }

  readonly #inFlightMigration = new Map<
    ActorId,
    { snapshot: Uint8Array; state: ReturnType<ActorInstance['exportState']> }
  >();

  /** Phase 3 done: the state is on the other side; the actor is recreated there. */
  #migrationGone(actor: ActorId): void {
    const migration = this.#active.get(actor);
    const moving = this.#inFlightMigration.get(actor);
    if (!migration || !moving) return;
    this.#inFlightMigration.delete(actor);
    const now = this.kernel.now();
    const old = this.instance(actor);
    const fromDomain = migration.from === 'nic' ? this.nicDomain : this.hostDomain;
    const toDomain = migration.to === 'nic' ? this.nicDomain : this.hostDomain;
    const heap = restoreHeap(toDomain, actor, moving.snapshot);
    fromDomain.releaseHeap(actor);
    const restored = ActorInstance.restore(old.definition, actor, old.name, heap, this.#ports, moving.state);
    this.#instances.set(actor, restored);
    this.#lastInstanceId = -1;
    this.table.move(actor, { domain: migration.to, node: this.id });
    migration.goneAtNs = now;
    migration.phase = 'clean';
    publishMigrationPhase({
      node: this.id,
      actor,
      phase: 'gone',
      edge: 'end',
      atNs: now,
      from: migration.from,
      to: migration.to,
    });
    // Phase 4, Clean: hand over the requests buffered meanwhile, with the new destination.
    const buffered = this.scheduler.finishMigration(actor, now);
    migration.bufferedRequests = buffered.length;
    if (migration.to === 'host' && (buffered.length > 0 || this.#hostToNic.has(actor))) {
      // A move back and forth can find the last one still draining: its held messages stay first.
      const draining = this.#draining.get(actor);
      if (draining === undefined) this.#draining.set(actor, { buffered: new Set(buffered), held: [] });
      else for (const request of buffered) draining.buffered.add(request);
    }
    migration.handOver = buffered;
    if (migration.to === 'host' && !this.#wireToCores) {
      // Frames still in the software dispatcher entered it before the move ended: the gate stays
      // shut until the last of them is out (then counted in the shared queue). The check is a
      // nanosecond after its exit event, which then has run whatever the kernel's order at a tie.
      let untilNs = 0;
      if (this.#dispatching > 0)
        for (const freeAtNs of this.#dispatcherFreeAtNs)
          untilNs = Math.max(untilNs, Math.round(freeAtNs) + 1);
      this.#steerGates.set(actor, { untilNs, onNicPath: 0, held: [] });
      if (untilNs > now) this.kernel.post(this.#kind.steerGate, untilNs, actor, 0);
    }
    const first = buffered[0];
    if (first === undefined) this.kernel.postAfter(this.#kind.migrationClean, 0, actor, migration.serial);
    else {
      this.kernel.postAfter(
        this.#kind.migrationHandOver,
        Math.round(this.timing.nicToHostSendNs(first.sizeBytes)),
        actor,
        migration.serial,
      );
    }
    this.#pumpNic();
  }

  /**
   * Phase 4, Clean, one request at a time: the core handing over has finished sending the next
   * buffered request, which enters the PCIe channel now; the one after it follows a send later.
   *
   * One at a time, when each send is done, not all at once with future ready times: the channel
   * is a FIFO in the order requests are handed to it, so reserving a backlog of thousands ahead
   * (RTA's counters buffered 1,400–2,600 `keys` messages at 90% load) made every other core's
   * forward wait behind the last of them — 200–400 µs of client latency from the hand-over core's
   * send time, when the link itself carries those messages in a fraction of that.
   */
  #handOverNext(actor: ActorId, serial: number): void {
    const migration = this.#active.get(actor);
    if (migration?.phase !== 'clean' || migration.serial !== serial) return;
    const request = migration.handOver[migration.handedOver++];
    if (request === undefined) return;
    this.#sendToHost(request, this.kernel.now());
    const next = migration.handOver[migration.handedOver];
    if (next === undefined) {
      migration.handOver = NO_REQUESTS;
      this.#migrationClean(actor);
      return;
    }
    this.kernel.postAfter(
      this.#kind.migrationHandOver,
      Math.round(this.timing.nicToHostSendNs(next.sizeBytes)),
      actor,
      serial,
    );
  }

  /**
   * Ends `migration`'s Clean phase at once: the requests it has not handed over yet go to the
   * channel now, one send apart, and its record is written. Its pending hand-over event then finds
   * another serial (or no migration) and does nothing.
   */
  #flushHandOver(migration: ActiveMigration): void {
    let readyNs = this.kernel.now();
    for (let i = migration.handedOver; i < migration.handOver.length; i++) {
      const request = migration.handOver[i] as SimRequest;
      readyNs += this.timing.nicToHostSendNs(request.sizeBytes);
      this.#sendToHost(request, readyNs);
    }
    migration.handedOver = migration.handOver.length;
    migration.handOver = NO_REQUESTS;
    this.#migrationClean(migration.actor);
  }

  /**
   * True (and the request joins the hand-over) when `request`'s actor has just moved to the host
   * and its buffered requests are still being handed over: forwarding it now would put it ahead
   * of older requests for the same actor. The core pays what buffering costs it.
   */
  #joinsHandOver(request: SimRequest): boolean {
    const migration = this.#active.get(request.actor);
    if (migration === undefined || migration.handedOver >= migration.handOver.length) return false;
    migration.handOver.push(request);
    migration.bufferedRequests++;
    // Host senders' messages held for the actor wait for this one too (it arrived before them).
    this.#draining.get(request.actor)?.buffered.add(request);
    return true;
  }

  #migrationClean(actor: ActorId): void {
    const migration = this.#active.get(actor);
    if (!migration) return;
    this.#active.delete(actor);
    const now = this.kernel.now();
    publishMigrationPhase({
      node: this.id,
      actor,
      phase: 'clean',
      edge: 'end',
      atNs: now,
      from: migration.from,
      to: migration.to,
    });
    this.migrations.push({
      actor,
      name: this.table.lookup(actor)?.name ?? String(actor),
      from: migration.from,
      to: migration.to,
      trigger: migration.trigger,
      stateBytes: migration.stateBytes,
      bufferedRequests: migration.bufferedRequests,
      phasesNs: {
        prepare: 0,
        ready: migration.readyAtNs - migration.startedAtNs,
        gone: migration.goneAtNs - migration.readyAtNs,
        clean: now - migration.goneAtNs,
      },
      startedAtNs: migration.startedAtNs,
      endedAtNs: now,
    });
    if (this.#steerGates.size !== 0) this.#openSteerGate(actor);
  }

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────

  /**
   * True the first time a core handles a packet that came from the wire: that core pays the
   * forwarding model's per-packet occupancy (receive + transmit I/O). Later steps of the same
   * request (a DRR core popping it from a mailbox, a migration hand-over) pay only their own work.
   */
  #receivesPacket(request: SimRequest): boolean {
    if (!request.fromWire || request.received) return false;
    request.received = true;
    return true;
  }

  #runHandler(instance: ActorInstance, request: SimRequest): void {
    if (request.timerId !== 0) instance.fireTimer(request.timerId as never);
    else instance.exec(request.message, request.origin);
  }

  /**
   * The declared work of handling `request`. Cost hooks must be pure (define-actor.ts); the first
   * results of each actor's hook are validated in full, later ones are trusted — validation per
   * request cost the simulator a few percent of its speed for no new information.
   */
  #workOf(instance: ActorInstance, request: SimRequest): HandlerWork {
    const definition = instance.definition;
    if (request.timerId !== 0 || !definition.hasCost) return DEFAULT_WORK;
    if (instance.costChecks < VALIDATED_COST_CALLS) {
      instance.costChecks++;
      return declaredWork(definition, request.message) ?? DEFAULT_WORK;
    }
    return definition.cost(request.message) ?? DEFAULT_WORK;
  }

  #rememberRx(bytes: number): void {
    this.#rxFrameNs = this.timing.frameNs(bytes);
    this.#rxPipelineNs = this.timing.rxPipelineNs(bytes);
    this.#rxLastBytes = bytes;
  }

  #rememberTx(bytes: number): void {
    this.#txFrameNs = this.timing.frameNs(bytes);
    this.#txPipelineNs = this.timing.txPipelineNs(bytes);
    this.#txLastBytes = bytes;
  }

  /** `timing.nicPacketNs` for a handler's packet, remembered for the last (size, handler time). */
  #execPacketNsOf(bytes: number, handlerNs: number): number {
    if (bytes !== this.#execLastBytes || handlerNs !== this.#execLastAddedNs) {
      this.#execPacketNs = this.timing.nicPacketNs(bytes, handlerNs);
      this.#execLastBytes = bytes;
      this.#execLastAddedNs = handlerNs;
    }
    return this.#execPacketNs;
  }

  /**
   * `timing.nicHandlerNs(work)`, remembered for the last work's figures. The model is a pure
   * function of the work's fields (HandlerWork is plain data); work with accelerators (a list the
   * hook could reuse and change) is always computed.
   */
  #nicHandlerNsOf(work: HandlerWork): number {
    if (
      this.#workLastValid &&
      work.instructions === this.#workLastInstructions &&
      work.fixedNs === this.#workLastFixedNs &&
      work.ipc === this.#workLastIpc &&
      work.mpki === this.#workLastMpki &&
      work.memoryAccesses === this.#workLastMemoryAccesses &&
      work.workingSetBytes === this.#workLastWorkingSetBytes &&
      work.accelerators === undefined
    ) {
      return this.#workLastNs;
    }
    const handlerNs = this.timing.nicHandlerNs(work);
    this.#workLastValid = work.accelerators === undefined;
    this.#workLastInstructions = work.instructions;
    this.#workLastIpc = work.ipc;
    this.#workLastMpki = work.mpki;
    this.#workLastMemoryAccesses = work.memoryAccesses;
    this.#workLastWorkingSetBytes = work.workingSetBytes;
    this.#workLastFixedNs = work.fixedNs;
    this.#workLastNs = handlerNs;
    return handlerNs;
  }

  /** The channel's own bandwidth: transfers pipeline their latency but not their serialisation. */
  #channelSerialNs(bytes: number): number {
    return this.timing.channelSerialNs(bytes);
  }

  #park(payload: unknown): number {
    const slot =
      this.#freeSlotCount > 0 ? (this.#freeSlots[--this.#freeSlotCount] as number) : this.#inFlight.length;
    this.#inFlight[slot] = payload;
    return slot;
  }

  #take(slot: number): unknown {
    const payload = this.#inFlight[slot];
    this.#inFlight[slot] = undefined;
    if (this.#freeSlotCount === this.#freeSlots.length) {
      const grown = new Int32Array(this.#freeSlots.length * 2);
      grown.set(this.#freeSlots);
      this.#freeSlots = grown;
    }
    this.#freeSlots[this.#freeSlotCount++] = slot;
    return payload;
  }

  /** `#instances.get(id)`, remembering the last hit (invalidated whenever an instance is set). */
  #instanceOf(id: ActorId): ActorInstance | undefined {
    if (id === this.#lastInstanceId) return this.#lastInstance;
    const instance = this.#instances.get(id);
    if (instance !== undefined) {
      this.#lastInstanceId = id;
      this.#lastInstance = instance;
    }
    return instance;
  }
}

/**
 * What one handler run sent, kept until its core finishes (then routed in order and cleared).
 * An array with a count rather than a plain array: `Array#push` on the outbox ran as the generic
 * builtin (~130 instructions per packet in Callgrind), and `length = 0` is a runtime call; here a
 * send is an in-bounds store and clearing a few stores. Outboxes hold a message or two.
 */
class Outbox {
  #items: (Outbound | undefined)[] = new Array<Outbound | undefined>(4).fill(undefined);
  length = 0;

  push(out: Outbound): void {
    if (this.length === this.#items.length) {
      const grown = new Array<Outbound | undefined>(this.length * 2).fill(undefined);
      for (let i = 0; i < this.length; i++) grown[i] = this.#items[i];
      this.#items = grown;
    }
    this.#items[this.length++] = out;
  }

  /** The `index`-th message sent (index < length). */
  at(index: number): Outbound {
    return this.#items[index] as Outbound;
  }

  /** Forgets every message (and lets them be collected). */
  clear(): void {
    for (let i = 0; i < this.length; i++) this.#items[i] = undefined;
    this.length = 0;
  }
}

/** Frame size on the wire for a message of `messageBytes`. */
export function frameBytes(messageBytes: number): number {
  return wireBytes(messageBytes);
}

/** `frameBytes` for this module's own calls (an exported function is also read through a cell). */
function wireBytes(messageBytes: number): number {
  return Math.max(MIN_BYTES, messageBytes + OVERHEAD_BYTES);
}
