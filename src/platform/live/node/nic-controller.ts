/**
 * The NIC domain of a live iPipe node (§3–4): the UDP wire, the traffic manager's checks, the
 * HybridScheduler over worker-thread NIC cores (FCFS and DRR roles, the management core's
 * decisions), and the initiator of every migration. It reaches the host domain only through the
 * channel (ChannelLink), so the host can run in this process or in another.
 *
 *   UDP ─▶ wire checks, dedup ─▶ HybridScheduler ─▶ NIC cores (workers) ─▶ replies ─▶ UDP
 *                                   │ forward (actor on the host)
 *                                   ▼ channel ─▶ host domain ─▶ replies come back over the channel
 *
 * Migration in the paper's four phases: Prepare (the scheduler buffers the actor's requests),
 * Ready (nothing of it runs on its old side; for an actor leaving the host, the host signals it by
 * sending the image), Gone (the actor's DMO region crosses the channel as an image and is adopted
 * on the other side), Clean (the buffered requests go to the new side).
 */

import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { ActorTable } from '../../../actor/actor-table.ts';
import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { ClientOrigin, Origin } from '../../../actor/envelope.ts';
import { DmoDomain } from '../../../dmo/domain.ts';
import { ConfigError, EncodeError } from '../../../errors.ts';
import { type ActorId, nodeId } from '../../../ids.ts';
import { encodeOrigin, readOrigin } from '../../../runtime/origin-codec.ts';
import { HybridScheduler } from '../../../sched/hybrid-scheduler.ts';
import type { Decision, Domain } from '../../../sched/types.ts';
import { type FragmentDropReason, fragmentMessage, Reassembler } from '../net/fragments.ts';
import { literalLookup } from '../net/literal-lookup.ts';
import {
  encodeErrorBody,
  encodeFrame,
  FrameView,
  HEADER_BYTES,
  readFrameInto,
  sealFrame,
} from '../net/wire.ts';
import { initialiseActor } from './actor-init.ts';
import {
  type ChannelLink,
  LINK_ADOPTED,
  LINK_DONE,
  LINK_DRAINED,
  LINK_ERROR,
  LINK_IMAGE,
  LINK_IMAGE_DMA,
  LINK_MIGRATE,
  LINK_REPLY,
  LINK_REQUEST,
  LINK_STOP,
  type LinkSendingStats,
} from './channel-link.ts';
import { ClientDirectory, endpointKey } from './client-directory.ts';
import { runAtWallNs, wallNs, wallNsAt } from './clock.ts';
import {
  type CoreOutput,
  DECODE_FAILED,
  type FrameReader,
  OUT_REPLY_WORK,
  RESULT_DONE,
  RESULT_FAILED,
  readOutputs,
} from './core-protocol.ts';
import { DomainCores } from './domain-cores.ts';
import { NIC_CONTROLLER_DROP_REASONS, type NicControllerDropReason } from './drop-reasons.ts';
import { type LiveClient, LiveRequest } from './live-request.ts';
import type { NicDomain, NicDomainOptions } from './nic-domain.ts';
import {
  completeMigration,
  type LiveMigrationRecord,
  type MigrationCount,
  type NicMigration,
  receiveHostImage,
} from './nic-migration.ts';
import { RecentLog } from './recent-log.ts';
import { NOT_FOUND, RequestDedup } from './request-dedup.ts';

export interface NicControllerOptions extends NicDomainOptions {
  readonly cores: number;
  /** Where the other nodes of the cluster listen, by node id. */
  readonly peers: ReadonlyMap<number, PeerEndpoint>;
}

/** A cluster peer's UDP address. */
export interface PeerEndpoint {
  readonly address: string;
  readonly port: number;
}

/** The innermost client an origin answers to (through any chain of asking actors), if any. */
function clientOf(origin: Origin): ClientOrigin | undefined {
  let at: Origin = origin;
  while (at.kind === 'actor') at = at.parent;
  return at.kind === 'client' ? at : undefined;
}

const DEDUP_ENTRIES = 65_536;

/**
 * Migrations and decisions /stats keeps: at most one migration per settle period (50 ms live), so
 * 256 cover the last ~13 s of a node that migrates all the time, and the whole life of most.
 */
const RECENT_ENTRIES = 256;

/**
 * Reply frames are cut from slabs of this size rather than allocated one by one: a small
 * ArrayBuffer costs a malloc, a free and the GC's array-buffer sweeping, per reply. A slab lives
 * while any frame cut from it is referenced (the dedup cache holds recent replies; eviction is in
 * arrival order, so slabs are released in order too).
 */
const REPLY_SLAB_BYTES = 64 * 1024;

/** Period of the management checks' timer while the management core idles, and while it is busy (ms). */
const MANAGE_IDLE_MS = 1;
const MANAGE_BUSY_MS = 10;

/** A core whose current request has run this long gets no more work queued behind it (ms). */
const PIPELINE_STALE_MS = 1;

/**
 * Room a peer message leaves below the ring's frame limit (half the ring, less its 8-byte record
 * header): the work item or channel frame that carries it adds its kind, ids and origin (~30
 * bytes); 256 is the margin LiveNode's ring rule already uses per frame.
 */
const PEER_MESSAGE_MARGIN_BYTES = 256;
/**
 * A fragmented peer message not rebuilt within this long is given up (ms): well above a burst of
 * fragments' spread on one link, and below the live Paxos timers (heartbeat ≥ 30 ms, election ≥
 * 300 ms), whose retransmissions send a fresh message anyway.
 */
const REASSEMBLY_EXPIRE_MS = 500;
/** Partial messages may reserve this many largest messages per peer, and twice that in total. */
const REASSEMBLY_MESSAGES_PER_PEER = 2;

export class NicController implements NicDomain {
  readonly table = new ActorTable();
  readonly scheduler: HybridScheduler<LiveRequest>;
  readonly domain: DmoDomain;
  /** Frames and requests refused, by reason (the wire's reasons and the node's own). */
  readonly drops = new Map<NicControllerDropReason, number>();
  /** Every reason `drops` may count (/metrics exports each from 0). */
  readonly dropReasons: readonly NicControllerDropReason[] = NIC_CONTROLLER_DROP_REASONS;
  readonly executed = new Map<ActorId, { nic: number; host: number }>();
  /** The last migrations and scheduler decisions (a node serves for days: see RecentLog). */
  readonly migrations = new RecentLog<LiveMigrationRecord>(RECENT_ENTRIES);
  readonly decisions = new RecentLog<Decision>(RECENT_ENTRIES);
  /** Completed migrations by actor name and direction, over the node's life (for metrics). */
  readonly migrationCounts = new Map<string, MigrationCount>();
  /** Each scheduler decision as it is taken (`ipipe run` prints its reason on stderr). */
  onDecision: ((decision: Decision) => void) | undefined;
  /** Milliseconds from arrival at the NIC to the reply leaving it, per actor (for metrics). */
  onReplyLatency: ((actor: ActorId, seconds: number) => void) | undefined;
  requests = 0;
  /** Actor messages sent to and received from other nodes (ctx.send across the cluster). */
  peerFramesSent = 0;
  peerFramesReceived = 0;
  /** Of those, the ones too big for one datagram: sent as fragments, and fragments sent/received. */
  peerMessagesFragmented = 0;
  peerFragmentsSent = 0;
  peerFragmentsReceived = 0;
  /**
   * Largest peer message (origin + bytes) this node sends or rebuilds: what a core's work ring or
   * the NIC↔host channel can carry as one frame. Larger ones are refused (`peer-too-large`).
   */
  readonly maxPeerMessageBytes: number;
  /** Rebuilds peer messages that came in fragments (net/fragments.ts). */
  readonly reassembler: Reassembler;
  /**
   * Nanoseconds spent in handlers on each side since start (what a core measured around each
   * exec): the busy time behind "cores used" (ring handling and idle spinning not included).
   */
  readonly handlerNs = { nic: 0, host: 0 };
  /** Client answers relayed between the answering node and the node the client talks to. */
  relayedReplies = 0;
  /** Requests a core's work ring had no room for at once (sent later, in order: `#handOff`). */
  ringFullHandOffs = 0;
  replies = 0;
  errorReplies = 0;
  duplicates = 0;
  readonly #options: NicControllerOptions;
  readonly #link: ChannelLink;
  readonly #cores: DomainCores;
  /** What each core holds, in the order it runs them (the scheduler's coreQueueDepth bounds it). */
  readonly #held: LiveRequest[][] = [];
  /**
   * The tail of `#held[core]` not yet written into the core's work ring because it had no room
   * (see `#handOff`), in order; retried as the core's results come back and on a short timer.
   */
  readonly #unsent: LiveRequest[][] = [];
  #unsentRetry: NodeJS.Timeout | undefined;
  readonly #skipped: Uint8Array;
  /** The clients this node answers (its own, and other nodes' it relays for), bounded. */
  readonly #clients = new ClientDirectory();
  readonly #peerKeys: ReadonlySet<string>;
  readonly #dedup = new RequestDedup(DEDUP_ENTRIES);
  #replySlab = new Uint8Array(REPLY_SLAB_BYTES);
  #replySlabUsed = 0;
  readonly #migrating = new Map<ActorId, NicMigration>();
  readonly #frame = new FrameView();
  #socket: Socket | undefined;
  /**
   * The next fragmented message's id. Starts at a random u32 so that a restarted node does not
   * reuse the ids of its previous life while a peer may still hold a partial of one (the message
   * CRC would catch a mix-up, but the message would be lost).
   */
  #nextMessageId = crypto.getRandomValues(new Uint32Array(1))[0]!;
  #manageTimer: NodeJS.Timeout | undefined;
  #manageStopped = false;
  /** Requests the management core completed since the last management tick. */
  #managementCompletions = 0;
  #stopping = false;
  /**
   * Set when the channel to the host domain closed while this NIC domain serves (a split node's
   * host process died): requests for host actors are refused from then on (`host-unreachable`).
   * `onHostLost` is told once.
   */
  hostLost = false;
  onHostLost: (() => void) | undefined;
  /** Set when `stop` closes the socket: later sends are dropped (`socket-closed`), not thrown. */
  #socketClosed = false;

  private constructor(options: NicControllerOptions, link: ChannelLink) {
    this.#options = options;
    this.#peerKeys = new Set([...options.peers.values()].map(endpointKey));
    this.#link = link;
    this.maxPeerMessageBytes = (options.ringBytes >> 1) - 8 - PEER_MESSAGE_MARGIN_BYTES;
    this.reassembler = new Reassembler(
      {
        maxMessageBytes: this.maxPeerMessageBytes,
        maxBytesPerPeer: REASSEMBLY_MESSAGES_PER_PEER * this.maxPeerMessageBytes,
        maxBytesTotal: 2 * REASSEMBLY_MESSAGES_PER_PEER * this.maxPeerMessageBytes,
        expireMs: REASSEMBLY_EXPIRE_MS,
      },
      (reason: FragmentDropReason, fragments: number) => this.#drop(reason, fragments),
    );
    this.domain = DmoDomain.create({
      regionBytes: options.regionBytes,
      maxActors: options.maxActors,
      shared: true,
    });
    this.scheduler = new HybridScheduler<LiveRequest>({
      cores: options.cores,
      policy: options.policy,
      settings: options.scheduler,
      nameOf: (id) => this.table.lookup(id)?.name ?? `actor ${id}`,
    });
    for (let core = 0; core < options.cores; core++) {
      this.#held.push([]);
      this.#unsent.push([]);
    }
    this.#skipped = new Uint8Array(options.cores);
    this.#cores = new DomainCores({
      domain: 'nic',
      cores: options.cores,
      domainBuffer: this.domain.buffer as SharedArrayBuffer,
      catalog: options.catalog,
      ringBytes: options.ringBytes,
      watchdogMs: options.watchdogMs,
      onResult: (core, reader) => this.#result(core, reader),
      onWatchdog: (core) => this.#watchdog(core),
      onCoreReady: () => this.#pump(),
    });
  }

  static async start(options: NicControllerOptions, link: ChannelLink): Promise<NicController> {
    const nic = new NicController(options, link);
    await nic.#start();
    return nic;
  }

  get address(): { readonly address: string; readonly port: number } {
    const bound = this.#socket?.address();
    return { address: bound?.address ?? this.#options.address, port: bound?.port ?? 0 };
  }

  get replacedCores(): number {
    return this.#cores.replacedCores;
  }

  hostChannelStats(): LinkSendingStats {
    return this.#link.sendingStats();
  }

  ringStats(): ReturnType<DomainCores['ringStats']> {
    return this.#cores.ringStats();
  }

  heldRequests(): number {
    return this.scheduler.heldRequests();
  }

  coreRoles(): { readonly fcfs: number; readonly drr: number } {
    const view = this.scheduler.view();
    return { fcfs: view.fcfs.cores, drr: view.drr.cores };
  }

  domainOf(actor: ActorId): Domain | 'migrating' {
    const mode = this.scheduler.modeOf(actor);
    return mode === 'migrating' ? 'migrating' : mode === 'host' ? 'host' : 'nic';
  }

  /** Moves an actor in four phases; resolves once its buffered requests are handed over. */
  migrate(actor: ActorId, to: Domain, trigger = 'forced'): Promise<LiveMigrationRecord> {
    return new Promise((resolve, reject) => {
      try {
        if (this.domainOf(actor) === to) {
          // Not a scheduler misuse to report as such: a forced move's target may simply be where
          // the scheduler already put (or put back) the actor.
          throw new ConfigError(
            'to',
            `actor ${this.#name(actor)} already runs on the ${to === 'nic' ? 'NIC' : 'host'}: nothing to move ` +
              '(the scheduler moves actors too; see its decisions in /stats)',
          );
        }
        this.#beginMigration(actor, to, trigger, resolve, reject);
      } catch (error) {
        reject(error);
      }
    });
  }

  /** Stops taking requests: the socket answers refusals until closed. */
  beginStop(): void {
    this.#stopping = true;
  }

  get idle(): boolean {
    return this.scheduler.heldRequests() === 0 && this.#migrating.size === 0;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopManage();
    if (this.#unsentRetry !== undefined) clearTimeout(this.#unsentRetry);
    await this.#cores.stop();
    this.#socketClosed = true;
    await new Promise<void>((resolve) => {
      if (this.#socket) this.#socket.close(() => resolve());
      else resolve();
    });
  }

  // ── start-up ─────────────────────────────────────────────────────────────────────────────────

  async #start(): Promise<void> {
    const o = this.#options;
    const initOutputs: [ActorId, CoreOutput[]][] = [];
    for (const entry of o.catalog) {
      const definition = o.definitions.get(entry.id) as AnyActorDefinition;
      const home = entry.node ?? o.nodeId;
      if (home !== o.nodeId) {
        if (!o.peers.has(home)) {
          throw new ConfigError(
            `actor ${entry.name}`,
            `lives on node ${home}, but no peer address is configured for node ${home} (add it to peers)`,
          );
        }
        this.table.register({
          definition,
          location: { domain: 'remote', node: nodeId(home) },
          id: entry.id,
          name: entry.name,
        });
        continue;
      }
      const domain = o.initialDomain.get(entry.id) ?? 'nic';
      this.table.register({
        definition,
        location: { domain, node: nodeId(o.nodeId) },
        id: entry.id,
        name: entry.name,
      });
      this.scheduler.addActor({
        id: entry.id,
        placement: definition.placement,
        exclusive: definition.exclusive,
        domain,
      });
      if (domain === 'nic') {
        initOutputs.push([
          entry.id,
          initialiseActor(this.domain, entry.id, entry.name, definition, o.definitions),
        ]);
      }
    }
    await this.#cores.start();
    this.#link.onClosed(() => {
      if (this.#stopping) return;
      this.hostLost = true;
      this.onHostLost?.();
    });
    this.#link.listen((kind, actor, reader) => this.#onLink(kind, actor, reader));
    for (const [actor, outputs] of initOutputs) for (const output of outputs) this.#route(output, actor);
    this.#armManage(MANAGE_IDLE_MS);
    const socket = createSocket({ type: 'udp4', recvBufferSize: 1 << 22, lookup: literalLookup() });
    this.#socket = socket;
    socket.on('message', (message, remote) => this.#onDatagram(message, remote));
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(o.port, o.address, () => {
          socket.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      // The port is taken (or the address is not ours): stop the cores we started before failing.
      this.#stopManage();
      this.#socket = undefined;
      socket.close();
      await this.#cores.stop();
      // Which of the two the user must change depends on why the bind failed.
      const code = (error as { code?: unknown }).code;
      const addressProblem = code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
      throw new ConfigError(
        addressProblem ? 'address' : 'port',
        addressProblem
          ? `cannot listen on ${o.address}:${o.port} (${(error as Error).message}): ${o.address} is not an address of this machine; give one it has (127.0.0.1, 0.0.0.0 for all, or an interface's)`
          : `cannot listen on ${o.address}:${o.port} (${(error as Error).message}); pick another port or stop what holds it`,
        { cause: error },
      );
    }
    // Attached once bound: a failed bind is reported above, once, not also as a socket error.
    socket.on('error', (error) => process.stderr.write(`ipipe: UDP socket error: ${error.message}\n`));
  }

  // ── the management core's checks ─────────────────────────────────────────────────────────────

  /**
   * The management checks (Algorithm 1's `core_id == 0` branch) run after every request the
   * management core completes (HybridScheduler.complete); this tick runs them when it idles. While
   * it is busy the tick has nothing to do but notice when it stops, so it comes less often: a timer
   * firing every millisecond cost ~3% of the node's CPU under load (timer processing, not checks).
   */
  readonly #manageTick = (): void => {
    if (this.#manageStopped) return;
    const busy = this.#managementCompletions > 0;
    this.#managementCompletions = 0;
    const nowMs = performance.now();
    this.#clients.sweep(nowMs);
    this.reassembler.expire(nowMs);
    if (!busy) {
      this.#apply(this.scheduler.manage(wallNs()));
      this.#pump();
    }
    this.#armManage(busy ? MANAGE_BUSY_MS : MANAGE_IDLE_MS);
  };

  #armManage(delayMs: number): void {
    this.#manageTimer = setTimeout(this.#manageTick, delayMs);
    this.#manageTimer.unref();
  }

  #stopManage(): void {
    this.#manageStopped = true;
    if (this.#manageTimer) clearTimeout(this.#manageTimer);
  }

  // ── the wire ─────────────────────────────────────────────────────────────────────────────────

  #drop(reason: NicControllerDropReason, count = 1): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + count);
  }

  /**
   * Sends a datagram while the socket is open. During `stop` the cores drain and their last
   * outputs (replies, messages to peers) can arrive after the socket closed: node:dgram would
   * throw from inside the ring's listener and take the process down mid-shutdown, so they are
   * counted as dropped instead.
   */
  #send(bytes: Uint8Array, port: number, address: string): void {
    if (this.#socketClosed) {
      this.#drop('socket-closed');
      return;
    }
    this.#socket?.send(bytes, port, address);
  }

  #onDatagram(message: Buffer, remote: RemoteInfo): void {
    // node:dgram hands each datagram over in a buffer of its own, so the request's payload can
    // stay where it arrived (a view, no copy).
    const bytes = new Uint8Array(message.buffer, message.byteOffset, message.byteLength);
    const frame = this.#frame;
    const refused = readFrameInto(bytes, frame, this.#options.maxFrameBytes);
    if (refused !== undefined) {
      this.#drop(refused);
      return;
    }
    if (frame.kind === 'peer') {
      this.#fromPeer(bytes, frame, remote);
      return;
    }
    if (frame.kind === 'fragment') {
      this.#fragmentFromPeer(bytes, frame, remote);
      return;
    }
    if (frame.kind !== 'request') {
      if (this.#peerKeys.has(endpointKey(remote))) this.#relayToClient(bytes, frame);
      else this.#drop('unexpected-kind');
      return;
    }
    this.requests++;
    const target = frame.targetActorId as ActorId;
    const nowMs = performance.now();
    const client = this.#clients.ownClient(frame.clientId, remote.address, remote.port, nowMs);
    const origin: ClientOrigin = { kind: 'client', endpoint: client.endpoint, requestId: frame.requestId };
    // A retransmission of a request we already have: answer from the cache, never run it twice.
    const seen = this.#dedup.find(frame.clientId, frame.requestId);
    if (seen !== NOT_FOUND) {
      this.duplicates++;
      const cached = this.#dedup.reply(seen);
      if (cached) this.#send(cached, remote.port, remote.address);
      return;
    }
    if (this.#stopping) {
      this.#errorToClient(origin, target, 'IPIPE_ERR_NODE_STOPPED', 'the node is shutting down');
      return;
    }
    const row = this.table.lookup(target);
    if (row === undefined) {
      this.#drop('unknown-actor');
      this.#errorToClient(origin, target, 'IPIPE_ERR_ACTOR_UNKNOWN', `no actor ${target} on this node`);
      return;
    }
    if (row.location.domain === 'remote') {
      // Clients talk to the node that holds the actor (its peers are for actor messages): say where.
      const peer = this.#options.peers.get(row.location.node);
      this.#drop('remote-actor');
      this.#errorToClient(
        origin,
        target,
        'IPIPE_ERR_ACTOR_UNKNOWN',
        `actor ${target} (${this.#name(target)}) lives on node ${row.location.node}` +
          (peer === undefined ? '' : ` at ${peer.address}:${peer.port}`) +
          ': send the request there',
      );
      return;
    }
    if (this.scheduler.heldRequests() >= this.#options.ingressLimit) {
      this.#drop('ingress-full');
      this.#errorToClient(origin, target, 'IPIPE_ERR_NODE_OVERLOADED', 'the NIC queue is full; retry later');
      return;
    }
    const payload = bytes.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
    const request = new LiveRequest(target, origin, payload, 0, client, wallNsAt(nowMs));
    this.#dedup.add(frame.clientId, frame.requestId, request.arrivalNs);
    this.scheduler.arrive(request, request.arrivalNs);
    this.#pump(nowMs);
  }

  // ── other nodes of the cluster ───────────────────────────────────────────────────────────────

  /** An actor message from another node: it enters like any request (through the scheduler). */
  #fromPeer(bytes: Uint8Array, frame: FrameView, remote: RemoteInfo): void {
    if (!this.#peerKeys.has(endpointKey(remote))) {
      this.#drop('peer-unknown');
      return;
    }
    const payload = bytes.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
    this.#peerMessage(frame.targetActorId as ActorId, frame.clientId, payload, remote);
  }

  /** One fragment of a peer message too big for a datagram: the message enters once rebuilt. */
  #fragmentFromPeer(bytes: Uint8Array, frame: FrameView, remote: RemoteInfo): void {
    const peer = endpointKey(remote);
    if (!this.#peerKeys.has(peer)) {
      this.#drop('peer-unknown');
      return;
    }
    this.peerFragmentsReceived++;
    const payload = bytes.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
    const whole = this.reassembler.accept(
      peer,
      frame.targetActorId,
      frame.clientId,
      frame.requestId,
      payload,
      performance.now(),
    );
    if (whole !== undefined)
      this.#peerMessage(whole.targetActorId as ActorId, whole.clientId, whole.message, remote);
  }

  /** A peer message (origin, then the message's bytes), from one datagram or rebuilt. */
  #peerMessage(target: ActorId, clientId: number, payload: Uint8Array, remote: RemoteInfo): void {
    const decoded = readOrigin(payload, 0);
    if (decoded === undefined) {
      this.#drop('peer-malformed');
      return;
    }
    this.peerFramesReceived++;
    const row = this.table.lookup(target);
    if (row === undefined || row.location.domain === 'remote') {
      this.#drop('unknown-actor');
      return;
    }
    if (this.#stopping) {
      this.#drop('stopping');
      return;
    }
    if (this.scheduler.heldRequests() >= this.#options.ingressLimit) {
      this.#drop('ingress-full');
      return;
    }
    const client = clientOf(decoded.origin);
    // This node may answer another node's client: the answer goes back through that node.
    if (client !== undefined) this.#clients.noteRelayed(client.endpoint, clientId, remote, performance.now());
    this.#arrive(new LiveRequest(target, decoded.origin, payload.slice(decoded.next), 0));
  }

  /** Sends an actor message to the node its target lives on (UDP: the protocol above copes with loss). */
  #toPeer(request: LiveRequest): void {
    const row = this.table.lookup(request.actor);
    const peer = row?.location.domain === 'remote' ? this.#options.peers.get(row.location.node) : undefined;
    if (peer === undefined) {
      this.#drop('peer-unknown-node');
      return;
    }
    const origin = encodeOrigin(request.origin);
    const payloadLength = origin.length + request.payload.length;
    const frame = new Uint8Array(HEADER_BYTES + payloadLength);
    frame.set(origin, HEADER_BYTES);
    frame.set(request.payload, HEADER_BYTES + origin.length);
    const client = clientOf(request.origin);
    const clientId = client === undefined ? 0 : this.#clients.clientIdAt(endpointKey(client.endpoint));
    if (frame.length > this.#options.maxFrameBytes) {
      this.#toPeerInFragments(request.actor, clientId, frame.subarray(HEADER_BYTES), peer);
      return;
    }
    try {
      sealFrame(
        frame,
        { kind: 'peer', targetActorId: request.actor, requestId: 0, clientId },
        payloadLength,
        0,
        this.#options.maxFrameBytes,
      );
    } catch {
      this.#drop('peer-too-large');
      return;
    }
    this.peerFramesSent++;
    this.#send(frame, peer.port, peer.address);
  }

  /**
   * A peer message bigger than one datagram goes as fragments (net/fragments.ts), one datagram
   * each; the receiver rebuilds it. Above what a ring frame can carry it is refused here, as one
   * too big for a datagram was before fragments.
   */
  #toPeerInFragments(target: ActorId, clientId: number, message: Uint8Array, peer: PeerEndpoint): void {
    if (message.length > this.maxPeerMessageBytes) {
      this.#drop('peer-too-large');
      return;
    }
    const messageId = this.#nextMessageId;
    this.#nextMessageId = (messageId + 1) >>> 0;
    let fragments: Uint8Array[];
    try {
      fragments = fragmentMessage(
        { targetActorId: target, clientId, messageId },
        message,
        this.#options.maxFrameBytes,
      );
    } catch (error) {
      // A frame limit with no room for a piece, or more than 65 535 pieces: too large all the same.
      // Anything else is a bug here, not a size: let it surface.
      if (!(error instanceof EncodeError)) throw error;
      this.#drop('peer-too-large');
      return;
    }
    this.peerFramesSent++;
    this.peerMessagesFragmented++;
    this.peerFragmentsSent += fragments.length;
    for (const fragment of fragments) this.#send(fragment, peer.port, peer.address);
  }

  /** Another node answered one of this node's clients: pass the sealed frame on unchanged. */
  #relayToClient(bytes: Uint8Array, frame: FrameView): void {
    const endpoint = this.#clients.endpointOf(frame.clientId);
    if (endpoint === undefined) {
      this.#drop('relay-unknown-client');
      return;
    }
    const copy = bytes.slice();
    this.#answered(frame.clientId, frame.requestId, copy, frame.targetActorId as ActorId);
    if (frame.kind === 'reply') this.replies++;
    else this.errorReplies++;
    this.relayedReplies++;
    this.#send(copy, endpoint.port, endpoint.address);
  }

  /** A request's answer left: cache it against retransmissions; count its latency (once). */
  #answered(clientId: number, requestId: number, frame: Uint8Array, actor: ActorId): void {
    const entry = this.#dedup.find(clientId, requestId);
    if (entry === NOT_FOUND) return;
    this.#dedup.setReply(entry, frame);
    const arrivalNs = this.#dedup.takeArrivalNs(entry);
    if (arrivalNs >= 0) this.onReplyLatency?.(actor, (wallNs() - arrivalNs) / 1e9);
  }

  /** `size` bytes for a reply frame that stays valid for as long as it is referenced. */
  #replyFrame(size: number): Uint8Array {
    if (size > REPLY_SLAB_BYTES >> 3) return new Uint8Array(size);
    if (this.#replySlabUsed + size > REPLY_SLAB_BYTES) {
      this.#replySlab = new Uint8Array(REPLY_SLAB_BYTES);
      this.#replySlabUsed = 0;
    }
    const at = this.#replySlabUsed;
    this.#replySlabUsed = (at + size + 7) & ~7;
    return this.#replySlab.subarray(at, at + size);
  }

  /**
   * Answers a client. `client`: the record of the client whose request this answers, when the
   * caller has it (its endpoint key is then not rebuilt); any other origin is looked up by key.
   */
  #replyToClient(
    origin: ClientOrigin,
    actor: ActorId,
    reply: Uint8Array,
    kind: 'reply' | 'error' = 'reply',
    client?: LiveClient,
  ): void {
    const key =
      client !== undefined && client.endpoint === origin.endpoint ? client.key : endpointKey(origin.endpoint);
    const clientId = this.#clients.clientIdAt(key);
    const frame = this.#replyFrame(HEADER_BYTES + reply.length);
    encodeFrame(
      frame,
      { kind, targetActorId: actor, requestId: origin.requestId, clientId },
      reply,
      0,
      Math.max(this.#options.maxFrameBytes, frame.length),
    );
    if (kind === 'reply') this.replies++;
    else this.errorReplies++;
    this.#answered(clientId, origin.requestId, frame, actor);
    const via = this.#clients.relayFor(key);
    if (via !== undefined) this.#send(frame, via.port, via.address);
    else this.#send(frame, origin.endpoint.port, origin.endpoint.address);
  }

  /**
   * Hands a request to the host domain. With the channel closed (a split node's host process
   * ended) it could never run: the client gets an error now instead of a time-out, and the request
   * is counted as dropped (`host-unreachable`) rather than queued for ever behind a dead channel.
   */
  #toHost(actor: ActorId, request: LiveRequest): void {
    if (this.#link.closed) {
      this.#drop('host-unreachable');
      this.#errorToClient(
        request.origin,
        actor,
        'IPIPE_ERR_NODE_HOST_UNREACHABLE',
        "this actor runs on the node's host domain, which is gone (its process ended or the channel closed): restart the host process and then this NIC process",
      );
      return;
    }
    this.#link.request(actor, request.timerId, request.origin, request.payload);
  }

  #errorToClient(origin: Origin, actor: ActorId, code: string, message: string): void {
    if (origin.kind !== 'client') return;
    const body = new Uint8Array(Math.min(1024, this.#options.maxFrameBytes - HEADER_BYTES));
    const safeCode = /^[\x21-\x7e]{1,255}$/.test(code) ? code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED';
    const length = encodeErrorBody(body, 0, safeCode, message);
    this.#replyToClient(origin, actor, body.subarray(0, length), 'error');
  }

  // ── cores ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Hands queued work to cores, least-loaded core first: every idle core gets work before any
   * core is given a second request, and no request is queued behind one that has already run
   * longer than PIPELINE_STALE_MS (a long or runaway handler must not hold others back).
   */
  #pump(nowMs?: number): void {
    if (!this.scheduler.hasQueuedWork()) return;
    // `nowMs`: a clock reading the caller just took (nothing has reached the scheduler since).
    const monotonicMs = nowMs ?? performance.now();
    const now = wallNsAt(monotonicMs);
    const cores = this.#held.length;
    const skipped = this.#skipped; // cores with nothing to take this round (a DRR core without DRR work)
    skipped.fill(0);
    for (;;) {
      if (!this.scheduler.hasQueuedWork()) return;
      let core = -1;
      let fewest = Number.POSITIVE_INFINITY;
      for (let c = 0; c < cores; c++) {
        if (skipped[c] === 1 || !this.#cores.isReady(c) || !this.scheduler.coreHasRoom(c)) continue;
        const held = (this.#held[c] as LiveRequest[]).length;
        if (held > 0 && this.#cores.headRunningMs(c, monotonicMs) > PIPELINE_STALE_MS) continue;
        if (held < fewest) {
          fewest = held;
          core = c;
        }
      }
      if (core < 0) return;
      const work =
        this.scheduler.roleOf(core) === 'fcfs'
          ? this.scheduler.takeFcfs(core, now)
          : this.scheduler.takeDrr(core, now);
      if (!work) {
        skipped[core] = 1;
        continue;
      }
      if (work.kind === 'exec') {
        (this.#held[core] as LiveRequest[]).push(work.request);
        this.#handOff(core, work.request, monotonicMs);
      } else if (work.kind === 'forward') {
        this.#toHost(work.request.actor, work.request);
      } else if (work.kind === 'drop') {
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

  /**
   * Writes a request the scheduler gave `core` into the core's work ring, behind any it could not
   * take yet. The ring is sized for coreQueueDepth frames of maxFrameBytes (LiveNode's rule), but
   * a peer message rebuilt from fragments, or a local message over a frame (a memtable's run), is
   * bigger: then the ring may have no room until the core has consumed what it holds. The request
   * stays held (the scheduler counts it on the core, in order) and goes when room appears — as
   * results come back, or on a 1 ms retry for a core that has nothing left to answer (its consumer
   * publishes its head lazily). Before fragments this was treated as impossible and thrown.
   */
  #handOff(core: number, request: LiveRequest, nowMs?: number): void {
    const unsent = this.#unsent[core] as LiveRequest[];
    if (unsent.length === 0 && this.#cores.sendRequest(core, core, request, nowMs)) return;
    unsent.push(request);
    this.ringFullHandOffs++;
    this.#armUnsentRetry();
  }

  /** Hands `core` what `#handOff` kept back, in order, while its ring has room. */
  #sendUnsent(core: number): void {
    const unsent = this.#unsent[core] as LiveRequest[];
    while (unsent.length > 0 && this.#cores.sendRequest(core, core, unsent[0] as LiveRequest)) unsent.shift();
  }

  #armUnsentRetry(): void {
    // After `stop` began the cores are going away: what is still unsent is dropped with them.
    if (this.#unsentRetry !== undefined || this.#manageStopped) return;
    this.#unsentRetry = setTimeout(() => {
      this.#unsentRetry = undefined;
      let left = false;
      for (let core = 0; core < this.#unsent.length; core++) {
        this.#sendUnsent(core);
        if ((this.#unsent[core] as LiveRequest[]).length > 0) left = true;
      }
      if (left) this.#armUnsentRetry();
    }, 1);
    this.#unsentRetry.unref();
  }

  #result(core: number, reader: FrameReader): void {
    const request = (this.#held[core] as LiveRequest[]).shift();
    const nowMs = performance.now();
    this.#cores.release(core, nowMs);
    if ((this.#unsent[core] as LiveRequest[]).length > 0) this.#sendUnsent(core);
    if (!request) return;
    const kind = reader.u8();
    reader.u32();
    const execNs = reader.f64();
    this.handlerNs.nic += execNs;
    if (core === this.scheduler.settings.managementCoreId) this.#managementCompletions++;
    this.#apply(this.scheduler.complete(core, wallNsAt(nowMs), execNs));
    if (kind === RESULT_FAILED) {
      const code = reader.text(1);
      const message = reader.text(2);
      // Bytes that are not a message of the actor's codec never reached its handler: a drop
      // (`decode`), not an execution — else random bytes sent at an actor would count as served.
      if (code === DECODE_FAILED) this.#drop('decode');
      else {
        this.#count(request.actor, 'nic');
        // An actor's message or a timer has nobody to answer: the core logged it; count it here.
        if (request.origin.kind !== 'client') this.#drop('handler-failed');
      }
      this.#errorToClient(request.origin, request.actor, code, message);
    } else if (kind === RESULT_DONE) {
      this.#count(request.actor, 'nic');
      const count = reader.u16();
      if (count === 1 && reader.peekU8() === OUT_REPLY_WORK && request.origin.kind === 'client') {
        // The commonest result — one reply to the request's own client — is answered straight
        // from the ring: the reply bytes are read in place (encodeFrame copies them out).
        reader.u8();
        const reply = reader.bytesField();
        if (reader.ok) this.#replyToClient(request.origin, request.actor, reply, 'reply', request.client);
        else this.#drop('malformed-result');
      } else {
        const outputs = readOutputs(reader, count, request.origin);
        if (!outputs) this.#drop('malformed-result');
        for (const output of outputs ?? []) this.#route(output, request.actor, request);
      }
    }
    this.#progressMigrations();
    this.#pump();
  }

  /**
   * Routes a NIC handler's output. Everything for an actor goes through the scheduler. `cause`:
   * the request whose handler produced it, if any (its client's record serves the reply).
   */
  #route(output: CoreOutput, from: ActorId, cause?: LiveRequest): void {
    if (output.kind === 'reply') {
      if (output.origin.kind === 'client')
        this.#replyToClient(output.origin, from, output.message, 'reply', cause?.client);
      return;
    }
    if (output.kind === 'timer') {
      runAtWallNs(output.dueAtNs, () => this.#arrive(LiveRequest.timer(output.actor, output.timerId)));
      return;
    }
    if (!this.table.has(output.target)) {
      this.#drop('unknown-actor');
      return;
    }
    this.#arrive(new LiveRequest(output.target, output.origin, output.message, 0));
  }

  #arrive(request: LiveRequest): void {
    if (this.table.lookup(request.actor)?.location.domain === 'remote') {
      this.#toPeer(request);
      return;
    }
    this.scheduler.arrive(request, request.arrivalNs);
    this.#pump();
  }

  #count(actor: ActorId, side: Domain): void {
    let counts = this.executed.get(actor);
    if (!counts) {
      counts = { nic: 0, host: 0 };
      this.executed.set(actor, counts);
    }
    counts[side]++;
  }

  // ── the channel, from the host ───────────────────────────────────────────────────────────────

  #onLink(kind: number, actor: ActorId, reader: FrameReader): void {
    switch (kind) {
      case LINK_REPLY: {
        const origin = reader.origin();
        const reply = reader.bytesField().slice();
        if (origin.kind === 'client') this.#replyToClient(origin, actor, reply);
        break;
      }
      case LINK_ERROR: {
        const origin = reader.origin();
        const code = reader.text(1);
        // The host sends no DONE for a request it could not decode (host-controller.ts #result).
        if (code === DECODE_FAILED) this.#drop('decode');
        this.#errorToClient(origin, actor, code, reader.text(2));
        break;
      }
      case LINK_REQUEST: {
        const timerId = reader.u32();
        const origin = reader.origin();
        const payload = reader.bytesField().slice();
        // The host sends back only requests for actors it does not hold. For an actor this side
        // places on the host, outside a migration (a move in either direction makes it
        // 'migrating' here before the host can send anything back), that means the two domains
        // disagree about placement — a split node's processes given different --place — and
        // forwarding it again would bounce it between them for ever, silently. (A message for an
        // actor on another node also comes this way; the scheduler knows only this node's actors.)
        const row = this.table.lookup(actor);
        if (row !== undefined && row.location.domain !== 'remote' && this.domainOf(actor) === 'host') {
          this.#drop('placement-mismatch');
          this.#errorToClient(
            origin,
            actor,
            'IPIPE_ERR_NODE_PLACEMENT_MISMATCH',
            `actor ${actor} (${this.#name(actor)}) is placed on the host by the NIC domain, but the host domain does not hold it: give the split node's --role nic and --role host processes the same --place options`,
          );
          break;
        }
        this.#arrive(new LiveRequest(actor, origin, payload, timerId));
        break;
      }
      case LINK_DONE:
        {
          const execNs = reader.f64();
          this.handlerNs.host += execNs;
          this.scheduler.recordHostExecution(actor, execNs);
        }
        this.#count(actor, 'host');
        break;
      case LINK_IMAGE:
      case LINK_IMAGE_DMA:
        this.#receiveImage(kind, actor, reader);
        break;
      case LINK_ADOPTED:
        this.#adoptedByHost(actor);
        break;
      case LINK_STOP:
        this.#deregister(actor, reader.text(2));
        break;
      default:
        this.#drop('channel-unknown-message');
    }
  }

  // ── isolation ────────────────────────────────────────────────────────────────────────────────

  /** A NIC handler overran its watchdog: deregister the actor; answer what it held with an error. */
  #watchdog(core: number): void {
    const held = this.#held[core] as LiveRequest[];
    const request = held[0];
    if (!request) return;
    // The requests behind the runaway never ran: they go back, ahead of newer ones.
    this.scheduler.returnQueued(core, wallNs());
    held.length = 0;
    (this.#unsent[core] as LiveRequest[]).length = 0;
    const actor = request.actor;
    const reason = `its handler ran past the ${this.#options.watchdogMs} ms watchdog`;
    this.#drop('watchdog');
    this.#errorToClient(
      request.origin,
      actor,
      'IPIPE_ERR_ACTOR_DEREGISTERED',
      `actor ${this.#name(actor)} was deregistered: ${reason}`,
    );
    // The scheduler still counts the core as running the actor: complete it, then remove the actor.
    // What that completion (or an earlier take: a DRR core recreated) decided stands — but not a
    // move of the actor being removed (the simulator's SimNode does the same).
    const decisions = this.scheduler.complete(core, wallNs(), this.#options.watchdogMs * 1e6);
    this.#deregister(actor, reason);
    this.#link.stop(actor, reason);
    this.#apply(decisions.filter((decision) => decision.kind !== 'migrate' || decision.actor !== actor));
    process.stderr.write(
      `ipipe: actor ${this.#name(actor)} deregistered (${reason}); NIC core ${core} replaced\n`,
    );
  }

  #deregister(actor: ActorId, reason: string): void {
    if (this.scheduler.modeOf(actor) === 'deregistered') return;
    const message = `actor ${this.#name(actor)} was deregistered: ${reason}`;
    // A migration of it under way ends here: its image is not sent (or, sent, not waited for: the
    // host hears LINK_STOP behind it), and finishing it would find no actor in the scheduler.
    const migration = this.#migrating.get(actor);
    if (migration !== undefined) {
      this.#migrating.delete(actor);
      migration.failed?.(new ConfigError('migrate', `${message}; its migration did not finish`));
    }
    for (const orphan of this.scheduler.removeActor(actor)) {
      this.#errorToClient(orphan.origin, actor, 'IPIPE_ERR_ACTOR_DEREGISTERED', message);
    }
    this.#pump();
  }

  #name(actor: ActorId): string {
    return this.table.lookup(actor)?.name ?? String(actor);
  }

  // ── decisions and migration ──────────────────────────────────────────────────────────────────

  #apply(decisions: readonly Decision[]): void {
    for (const decision of decisions) {
      this.decisions.push(decision);
      if (decision.kind === 'migrate')
        this.#beginMigration(decision.actor, decision.to, decision.trigger, () => {});
    }
    // After the migrations began: the scheduler already counts them in flight, so an observer that
    // throws must not stop them (nor escape into the result handling that called this).
    const observe = this.onDecision;
    if (observe === undefined) return;
    for (const decision of decisions) {
      try {
        observe(decision);
      } catch (error) {
        process.stderr.write(
          `ipipe: the onDecision observer failed (${String(error)}); the decision stands\n`,
        );
      }
    }
  }

  /** Phase 1, Prepare: the scheduler buffers the actor's requests from now on. */
  #beginMigration(
    actor: ActorId,
    to: Domain,
    trigger: string,
    done: (record: LiveMigrationRecord) => void,
    failed?: (error: Error) => void,
  ): void {
    if (this.#migrating.has(actor))
      throw new ConfigError('migrate', `actor ${this.#name(actor)} is already migrating`);
    const from: Domain = this.scheduler.modeOf(actor) === 'host' ? 'host' : 'nic';
    const startedMs = performance.now();
    this.scheduler.prepareMigration(actor, to, wallNs());
    this.#migrating.set(actor, {
      actor,
      from,
      to,
      trigger,
      startedMs,
      preparedMs: performance.now(),
      readyMs: -1,
      goneMs: -1,
      stateBytes: 0,
      assembler: null,
      done,
      ...(failed === undefined ? {} : { failed }),
    });
    // Leaving the host: the marker follows every request already forwarded (the channel is FIFO);
    // the host runs those, then sends the image — that is its Ready.
    if (from === 'host') this.#link.control(LINK_MIGRATE, actor);
    this.#progressMigrations();
  }

  /** Phase 2, Ready (leaving the NIC): nothing of the actor runs on a NIC core; send the image. */
  #progressMigrations(): void {
    for (const migration of this.#migrating.values()) {
      if (migration.from !== 'nic' || migration.readyMs >= 0) continue;
      if (!this.scheduler.isQuiescent(migration.actor)) continue;
      migration.readyMs = performance.now();
      const heap = this.domain.heapOf(migration.actor);
      if (!heap)
        throw new ConfigError('migrate', `actor ${this.#name(migration.actor)} has no heap on the NIC`);
      migration.stateBytes = this.#link.image(migration.actor, heap);
    }
  }

  /** Leaving the host: the image arrives (its first bytes mark Ready); adopt it here. */
  #receiveImage(kind: typeof LINK_IMAGE | typeof LINK_IMAGE_DMA, actor: ActorId, reader: FrameReader): void {
    const migration = this.#migrating.get(actor);
    const chunks = this.#link.imageChunks(kind, reader);
    if (migration?.from !== 'host' || !chunks) {
      this.#drop('stray-image');
      return;
    }
    const exclusive = this.#options.definitions.get(actor)?.exclusive ?? true;
    const image = receiveHostImage(migration, chunks, this.domain, exclusive);
    if (image.kind === 'partial') return;
    if (image.kind === 'failed') {
      // A damaged image: the actor stays buffered here while the host keeps it — say so loudly
      // rather than serve bad state.
      this.#drop('corrupt-image');
      process.stderr.write(`ipipe: migration of ${this.#name(actor)} failed: ${image.error.message}\n`);
      return;
    }
    this.#cores.forget(actor);
    this.#link.control(LINK_ADOPTED, actor);
    this.#finishMigration(migration);
  }

  /** Leaving the NIC: the host adopted the image; release ours and hand over the buffer. */
  #adoptedByHost(actor: ActorId): void {
    const migration = this.#migrating.get(actor);
    if (migration?.from !== 'nic') return;
    this.domain.releaseHeap(actor);
    this.#cores.forget(actor);
    this.#finishMigration(migration);
  }

  /** Phase 4, Clean. */
  #finishMigration(migration: NicMigration): void {
    const actor = migration.actor;
    migration.goneMs = performance.now();
    this.table.move(actor, { domain: migration.to, node: nodeId(this.#options.nodeId) });
    const buffered = this.scheduler.finishMigration(actor, wallNs());
    for (const request of buffered) this.#toHost(actor, request);
    // Behind the last request this side held for it (the host's senders' among them): the host
    // runs its own senders' newer messages only after this (channel-link.ts, "Per-sender order").
    if (migration.to === 'host' && !this.#link.closed) this.#link.control(LINK_DRAINED, actor);
    this.#migrating.delete(actor);
    const bufferedRequests =
      migration.to === 'host'
        ? buffered.length
        : (this.scheduler.view().actors.find((a) => a.id === actor)?.mailboxLength ?? 0);
    completeMigration(this, migration, this.#name(actor), bufferedRequests);
    this.#pump();
  }
}
