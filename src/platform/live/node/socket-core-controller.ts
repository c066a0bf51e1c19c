/**
 * The NIC domain of a live node whose NIC core 0 owns the UDP socket (`ingress: 'core'`,
 * docs/live-echo-path.md "A NIC core that owns the socket"). The core (socket-core.ts) receives,
 * checks, schedules, runs and answers requests for NIC-resident actors by itself; this controller,
 * on the main thread, does what the core cannot:
 *
 *   UDP ─▶ core 0: wire checks, dedup, scheduler, handler, reply ─▶ UDP
 *            │ OUT_FORWARD (host actor)     ▲ IN_REPLY (the host's answer, sent from the node's port)
 *            ▼                              │
 *          controller ─▶ channel ─▶ host domain ─▶ channel ─▶ controller
 *
 * and migration's four phases across the two threads: Prepare in the core's scheduler (on its own
 * decision, or an IN_PREPARE for a forced move); Ready (OUT_PREPARED: nothing of the actor runs on
 * the core — handlers run to completion inline — so its heap is sent to the host at once; or, for
 * an actor leaving the host, LINK_MIGRATE behind every request the core forwarded before); Gone
 * (the image adopted on the other side); Clean (IN_MOVED: the core forwards its buffer in order,
 * or queues it ahead of newer requests). It also runs the watchdog: a handler on core 0 past the
 * limit gets the thread terminated, the actor deregistered, its request an error reply, and a
 * replacement core bound to the same port.
 */

import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ActorTable } from '../../../actor/actor-table.ts';
import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import { type ClientOrigin, NO_ORIGIN, type Origin } from '../../../actor/envelope.ts';
import { DmoDomain } from '../../../dmo/domain.ts';
import { ConfigError } from '../../../errors.ts';
import { type ActorId, nodeId } from '../../../ids.ts';
import type { Decision, Domain } from '../../../sched/types.ts';
import { RING_CORRUPT, RING_EMPTY, SpscRing } from '../channel/ring.ts';
import { encodeErrorBody, HEADER_BYTES } from '../net/wire.ts';
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
import { runAtWallNs, wallNs } from './clock.ts';
import { DECODE_FAILED, FrameBuilder, FrameReader } from './core-protocol.ts';
import { type CoreRingStats, coreRingStats } from './domain-cores.ts';
import { SOCKET_CORE_CONTROLLER_DROP_REASONS, type SocketCoreControllerDropReason } from './drop-reasons.ts';
import type { NicDomain, NicDomainOptions } from './nic-domain.ts';
import {
  completeMigration,
  type LiveMigrationRecord,
  type MigrationCount,
  type NicMigration,
  receiveHostImage,
} from './nic-migration.ts';
import { RecentLog } from './recent-log.ts';
import { type SharedDedupMemory, SharedRequestDedup } from './shared-request-dedup.ts';
import type { SocketCoreActivation, SocketCoreData, SocketCoreHello } from './socket-core.ts';
import {
  IN_ARRIVE,
  IN_CLOSE,
  IN_DEREGISTER,
  IN_HOST_DONE,
  IN_MOVED,
  IN_PREPARE,
  IN_REPLY,
  IN_STOPPING,
  isSettled,
  ledgerAt,
  MESSAGE_LEDGER_BYTES,
  MESSAGE_LEDGER_SLOTS,
  nextMessageId,
  OUT_DECISION,
  OUT_FORWARD,
  OUT_LATENCY,
  OUT_MOVED,
  OUT_PREPARED,
  OUT_REFUSED,
  SLOT_DROPS,
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
  SOCKET_CORE_DROP_REASONS,
  sequenceDelta,
  socketCoreSlots,
  TO_HOST,
  TO_NIC,
  u32ToIpv4,
} from './socket-core-protocol.ts';

export interface SocketCoreControllerOptions extends NicDomainOptions {
  /** Keep a warm spare core thread for the watchdog's replacement (LiveNodeOptions.warmSpare). */
  readonly warmSpare: boolean;
}

interface MigrationState extends NicMigration {
  /** The scheduler's trigger when its own decision prepared this (a forced move joined to it). */
  trigger: string;
  /** Its IN_PREPARE's number (0: the core's own decision); OUT_PREPARED/OUT_REFUSED echo it. */
  readonly sequence: number;
  /** OUT_PREPARED seen: the core buffers the actor; a refusal no longer applies to this one. */
  prepared: boolean;
  /** When OUT_PREPARED arrived: Prepare is the round trip to core 0 (−1 until then). */
  preparedMs: number;
  readonly fail: (error: Error) => void;
}

/** The handler the watchdog found past its limit, read under the RUNNING_GENERATION seqlock. */
interface Runaway {
  readonly generation: number;
  readonly actor: ActorId;
  /** The client request it serves (undefined: a message or a timer). */
  readonly request: ClientOrigin | undefined;
  readonly clientId: number;
}

interface CoreThread {
  readonly worker: Worker;
  readonly work: SpscRing;
  readonly results: SpscRing;
  readonly exited: Promise<void>;
  /** It said 'ready' (bound the port and serves): an exit from then on is a death to repair. */
  serving: boolean;
}

/**
 * Host requests in flight whose client id the controller keeps (the oldest forgotten past it: its
 * reply then goes out with the id the core's directory has for the endpoint, as before).
 */
const CLIENT_IDS_KEPT = 65_536;

/** Work items a killed core had not taken that its replacement gets (the rest die with it). */
const SALVAGED_KINDS: ReadonlySet<number> = new Set([IN_REPLY, IN_ARRIVE, IN_HOST_DONE, IN_DEREGISTER]);

/** The message id of an IN_ARRIVE work item (socket-core-protocol.ts: after kind, actor, timer). */
function messageIdOf(item: Uint8Array): number {
  return new DataView(item.buffer, item.byteOffset, item.byteLength).getFloat64(9, true);
}

function originKey(origin: ClientOrigin): string {
  return `${origin.endpoint.address}:${origin.endpoint.port}/${origin.requestId}`;
}

/** Client requests the dedup remembers (as NicController's). */
const DEDUP_ENTRIES = 65_536;
/**
 * Bytes of remembered replies (SharedRequestDedup's arena): 256 bytes a reply on average before
 * the reply bound, not the entry bound, decides how far back a retransmission is answered. Pages
 * of a SharedArrayBuffer are committed as they are first written, so a node that answers little
 * costs little of it.
 */
const DEDUP_REPLY_BYTES = 16 * 1024 * 1024;

/** As NicController's: the last migrations and decisions /stats keeps. */
const RECENT_ENTRIES = 256;
/**
 * Bind attempts of a replacement core (5 ms apart in the core: ~1 s), while the terminated
 * thread's socket is being closed.
 */
const REBIND_TRIES = 200;

/** The next message `worker` posts (rejects if it fails or exits first). */
function nextMessage(worker: Worker): Promise<SocketCoreHello> {
  return new Promise<SocketCoreHello>((resolve, reject) => {
    const onMessage = (message: SocketCoreHello) => {
      settle();
      resolve(message);
    };
    const onError = (error: Error) => {
      settle();
      reject(error);
    };
    const onExit = (code: number) => {
      settle();
      reject(new Error(`NIC core 0 exited with ${code} while starting`));
    };
    const settle = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

const CORE_BOOTSTRAP = fileURLToPath(new URL('./core-worker-bootstrap.mjs', import.meta.url));
const CORE_ENTRY = new URL(
  import.meta.url.endsWith('.ts') ? './socket-core.ts' : './socket-core.js',
  import.meta.url,
).href;

export class SocketCoreController implements NicDomain {
  readonly table = new ActorTable();
  readonly domain: DmoDomain;
  readonly migrations = new RecentLog<LiveMigrationRecord>(RECENT_ENTRIES);
  readonly decisions = new RecentLog<Decision>(RECENT_ENTRIES);
  readonly migrationCounts = new Map<string, MigrationCount>();
  onDecision: ((decision: Decision) => void) | undefined;
  // Peers are refused in this mode (LiveNode's resolve): these stay 0.
  readonly peerFramesSent = 0;
  readonly peerFramesReceived = 0;
  readonly relayedReplies = 0;
  readonly peerMessagesFragmented = 0;
  readonly peerFragmentsSent = 0;
  readonly peerFragmentsReceived = 0;
  readonly reassembler = { messagesRebuilt: 0, bytesHeld: 0 };
  readonly maxPeerMessageBytes: number;
  readonly ringFullHandOffs = 0;
  /** Core threads replaced after a watchdog expiry. */
  replacedCores = 0;
  readonly #options: SocketCoreControllerOptions;
  readonly #link: ChannelLink;
  readonly #counters: Float64Array;
  readonly #countersBuffer: SharedArrayBuffer;
  /** The dedup's memory: every core attaches it, so a replacement answers what the dead one did. */
  readonly #dedup: SharedDedupMemory;
  /** The message ledger (socket-core-protocol.ts): which messages sent to a core it settled. */
  readonly #ledgerBuffer: SharedArrayBuffer;
  readonly #ledger: Int32Array;
  /**
   * Copies of the messages (IN_ARRIVE, timers aside) sent to core 0 that the ledger does not say
   * settled yet, by id, oldest first: a replacement gets again those the killed core took and never
   * ran, dropped or forwarded (see `#salvageWork`). Pruned from the oldest as they settle; at most
   * MESSAGE_LEDGER_SLOTS ids apart (an older one is let go: a replacement would not get it).
   */
  readonly #messages = new Map<number, Uint8Array>();
  #lastMessageId = 0;
  /**
   * Host executions by actor and their handler time, counted here from the channel (the core's
   * block counts the NIC side; a replacement core keeps writing into the same block).
   */
  readonly #hostExecuted = new Map<ActorId, number>();
  #hostHandlerNs = 0;
  /** Drops counted here rather than in the core (images, the channel, the watchdog). */
  readonly #ownDrops = new Map<string, number>();
  /** Every reason `drops` may count, the core's and this controller's (/metrics exports each from 0). */
  readonly dropReasons: readonly string[] = [
    ...new Set<string>([...SOCKET_CORE_DROP_REASONS, ...SOCKET_CORE_CONTROLLER_DROP_REASONS]),
  ];
  readonly #migrating = new Map<ActorId, MigrationState>();
  /**
   * The core's own migrate decisions, until its OUT_PREPARED (or OUT_REFUSED) arrives: the
   * observer sees each only then, once the migration's state exists (as NicController#apply), so a
   * migrate() it calls finds the actor migrating.
   */
  readonly #decidedMigrations = new Map<ActorId, Decision>();
  /** The last IN_PREPARE number given out (0 is the core's own decisions). */
  #prepareSequence = 0;
  readonly #deregistered = new Set<ActorId>();
  #core: CoreThread | undefined;
  /** The warm spare (see `#startSpare`); `ready` once its imports are done. */
  #spare: { readonly core: CoreThread; ready: boolean } | undefined;
  #bound: { address: string; port: number } = { address: '', port: 0 };
  /** Work items the core's ring had no room for, in order (never block: see `#post`). */
  readonly #pending: Uint8Array[] = [];
  /**
   * Copies of the items written to the current core's ring that it may not have taken yet: item
   * `#writtenBase + i` is `#written[i]`; those below the core's SLOT_WORK_CONSUMED are dropped as
   * the count moves. A killed core's untaken host replies and messages go to its replacement.
   */
  #written: Uint8Array[] = [];
  #writtenBase = 0;
  /** OUT_FORWARDs read from the core (the core counts those it wrote: SLOT_FORWARDS). */
  #forwardsRead = 0;
  /**
   * Requests handed to the host and not yet finished there (LINK_DONE, LINK_ERROR, or sent back
   * as LINK_REQUEST). A host actor's own message to a NIC actor counts down too (it cannot be
   * told from a request sent back), so this may read low, never high: kept at 0 or more.
   */
  #hostInFlight = 0;
  /** The client id of each host request in flight, by its origin (see `#replyThroughCore`). */
  readonly #clientIds = new Map<string, number>();
  #pendingRetry: NodeJS.Timeout | undefined;
  readonly #out = new FrameBuilder();
  readonly #reader = new FrameReader();
  #onReplyLatency: ((actor: ActorId, seconds: number) => void) | undefined;
  #watchdogTimer: NodeJS.Timeout | undefined;
  #replacing = false;
  /** The replacement under way (`stop` waits for it, then closes the core it started). */
  #replacement: Promise<void> | undefined;
  /** Result records whose handling threw (each skipped; the pump goes on). */
  failedResults = 0;
  #stopping = false;
  #stopped = false;

  private constructor(options: SocketCoreControllerOptions, link: ChannelLink) {
    this.#options = options;
    this.#link = link;
    this.maxPeerMessageBytes = (options.ringBytes >> 1) - 8 - 256;
    this.domain = DmoDomain.create({
      regionBytes: options.regionBytes,
      maxActors: options.maxActors,
      shared: true,
    });
    this.#countersBuffer = new SharedArrayBuffer(socketCoreSlots(options.catalog.length) * 8);
    this.#counters = new Float64Array(this.#countersBuffer);
    this.#dedup = SharedRequestDedup.createMemory(
      DEDUP_ENTRIES,
      Math.max(DEDUP_REPLY_BYTES, 8 * (options.maxFrameBytes + 8)),
    );
    this.#ledgerBuffer = new SharedArrayBuffer(MESSAGE_LEDGER_BYTES);
    this.#ledger = new Int32Array(this.#ledgerBuffer);
  }

  static async start(options: SocketCoreControllerOptions, link: ChannelLink): Promise<SocketCoreController> {
    const nic = new SocketCoreController(options, link);
    await nic.#start();
    return nic;
  }

  // ── what the node reads ──────────────────────────────────────────────────────────────────────

  get address(): { readonly address: string; readonly port: number } {
    return this.#bound;
  }

  get requests(): number {
    return this.#counters[SLOT_REQUESTS] as number;
  }

  get replies(): number {
    return this.#counters[SLOT_REPLIES] as number;
  }

  get errorReplies(): number {
    return this.#counters[SLOT_ERROR_REPLIES] as number;
  }

  get duplicates(): number {
    return this.#counters[SLOT_DUPLICATES] as number;
  }

  get handlerNs(): { readonly nic: number; readonly host: number } {
    return { nic: this.#counters[SLOT_HANDLER_NS] as number, host: this.#hostHandlerNs };
  }

  get drops(): ReadonlyMap<string, number> {
    const drops = new Map(this.#ownDrops);
    SOCKET_CORE_DROP_REASONS.forEach((reason, index) => {
      const count = this.#counters[SLOT_DROPS + index] as number;
      if (count > 0) drops.set(reason, (drops.get(reason) ?? 0) + count);
    });
    return drops;
  }

  get executed(): ReadonlyMap<ActorId, { readonly nic: number; readonly host: number }> {
    const executed = new Map<ActorId, { nic: number; host: number }>();
    this.#options.catalog.forEach((entry, index) => {
      const nic = this.#counters[SLOT_EXECUTED + index] as number;
      const host = this.#hostExecuted.get(entry.id) ?? 0;
      if (nic > 0 || host > 0) executed.set(entry.id, { nic, host });
    });
    return executed;
  }

  get onReplyLatency(): ((actor: ActorId, seconds: number) => void) | undefined {
    return this.#onReplyLatency;
  }

  /** Setting it asks the core to report reply latencies (OUT_LATENCY); it costs nothing unset. */
  set onReplyLatency(observe: ((actor: ActorId, seconds: number) => void) | undefined) {
    this.#onReplyLatency = observe;
    this.#counters[SLOT_METRICS_ON] = observe === undefined ? 0 : 1;
  }

  /**
   * What `LiveNode.stop` drains for: nothing held in the core (as of its last tick), no migration,
   * every request the core forwarded read here and finished on the host (the host looks idle while
   * a forward is still in the core's result ring, unflushed, or in the channel), and every work
   * item — the host's replies — delivered to the core and taken by it (IN_CLOSE must not overtake
   * them).
   */
  get idle(): boolean {
    const counters = this.#counters;
    return (
      (counters[SLOT_HELD] as number) === 0 &&
      this.#migrating.size === 0 &&
      (counters[SLOT_FORWARDS] as number) === this.#forwardsRead &&
      this.#hostInFlight === 0 &&
      this.#pending.length === 0 &&
      (counters[SLOT_WORK_CONSUMED] as number) >= this.#writtenBase + this.#written.length
    );
  }

  hostChannelStats(): LinkSendingStats {
    return this.#link.sendingStats();
  }

  ringStats(): readonly CoreRingStats[] {
    const core = this.#core;
    return core === undefined ? [] : [coreRingStats(0, core.work, core.results)];
  }

  heldRequests(): number {
    return this.#counters[SLOT_HELD] as number;
  }

  coreRoles(): { readonly fcfs: number; readonly drr: number } {
    const drr = this.#counters[SLOT_DRR_CORES] as number;
    return { fcfs: 1 - drr, drr };
  }

  domainOf(actor: ActorId): Domain | 'migrating' {
    if (this.#migrating.has(actor)) return 'migrating';
    return this.table.lookup(actor)?.location.domain === 'host' ? 'host' : 'nic';
  }

  /** Moves an actor in four phases; resolves once its buffered requests are handed over. */
  migrate(actor: ActorId, to: Domain, trigger = 'forced'): Promise<LiveMigrationRecord> {
    return new Promise((resolve, reject) => {
      const current = this.domainOf(actor);
      if (this.table.lookup(actor) === undefined) {
        reject(new ConfigError('actor', `no actor ${actor} on this node`));
        return;
      }
      if (current === 'migrating') {
        reject(new ConfigError('migrate', `actor ${this.#name(actor)} is already migrating`));
        return;
      }
      if (current === to) {
        reject(
          new ConfigError(
            'to',
            `actor ${this.#name(actor)} already runs on the ${to === 'nic' ? 'NIC' : 'host'}: nothing to move ` +
              '(the scheduler moves actors too; see its decisions in /stats)',
          ),
        );
        return;
      }
      this.#prepareSequence = (this.#prepareSequence % 0xffff_fffe) + 1;
      const sequence = this.#prepareSequence;
      this.#beginMigration(actor, current, to, trigger, sequence, resolve, reject);
      const out = this.#out.reset();
      out.u8(IN_PREPARE);
      out.u32(actor);
      out.u8(to === 'host' ? TO_HOST : TO_NIC);
      out.u32(sequence);
      this.#post(out.frame);
    });
  }

  beginStop(): void {
    this.#stopping = true;
    this.#post(this.#single(IN_STOPPING));
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stopping = true;
    if (this.#watchdogTimer !== undefined) clearInterval(this.#watchdogTimer);
    // A replacement under way ends (or gives up) first: the core it started is the one to close.
    if (this.#replacement !== undefined) await this.#replacement;
    if (this.#pendingRetry !== undefined) clearTimeout(this.#pendingRetry);
    const spare = this.#spare;
    this.#spare = undefined;
    if (spare !== undefined) {
      await spare.core.worker.terminate();
      spare.core.work.close();
      spare.core.results.close();
    }
    const core = this.#core;
    if (core === undefined) return;
    // IN_CLOSE goes behind every reply still waiting for room, never ahead of them.
    this.#sendPending();
    for (
      const deadline = performance.now() + 500;
      this.#pending.length > 0 && performance.now() < deadline;
    ) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      this.#sendPending();
    }
    if (this.#pending.length > 0 || !core.work.tryWrite(this.#single(IN_CLOSE))) {
      // The core is far behind: it goes without its last work.
      process.stderr.write(
        `ipipe: NIC core 0 stopped with ${this.#pending.length} work items not delivered\n`,
      );
      this.#pending.length = 0;
    }
    core.work.flush();
    await Promise.race([core.exited, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    await core.worker.terminate();
    core.work.close();
    core.results.close();
  }

  // ── start-up ─────────────────────────────────────────────────────────────────────────────────

  async #start(): Promise<void> {
    const o = this.#options;
    const initOutputs: [ActorId, ReturnType<typeof initialiseActor>][] = [];
    for (const entry of o.catalog) {
      const definition = o.definitions.get(entry.id) as AnyActorDefinition;
      const domain = o.initialDomain.get(entry.id) ?? 'nic';
      this.table.register({
        definition,
        location: { domain, node: nodeId(o.nodeId) },
        id: entry.id,
        name: entry.name,
      });
      if (domain === 'nic') {
        initOutputs.push([
          entry.id,
          initialiseActor(this.domain, entry.id, entry.name, definition, o.definitions),
        ]);
      }
    }
    // Core 0 and the warm spare start together: the spare's start-up is over by the time the node
    // serves (it would otherwise take CPU from the first requests).
    const { core, first } = this.#newThread(this.#activation(o.port, 1, false, 0));
    const [hello] = await Promise.all([this.#serveWith(core, first), this.#startSpare()]);
    if (hello.kind !== 'ready') {
      await this.#stopCore();
      throw new ConfigError(
        'port',
        `cannot listen on ${o.address}:${o.port} (${hello.kind === 'bind-failed' ? hello.message : 'no socket'}); ` +
          'pick another port or stop what holds it',
      );
    }
    this.#link.listen((kind, actor, reader) => this.#onLink(kind, actor, reader));
    // What init sent or armed enters at the core like any message (replies at init have nobody).
    for (const [, outputs] of initOutputs) {
      for (const output of outputs) {
        if (output.kind === 'send') this.#arrive(output.target, 0, output.origin, output.message);
        else if (output.kind === 'timer') {
          runAtWallNs(output.dueAtNs, () =>
            this.#arrive(output.actor, output.timerId, NO_ORIGIN, new Uint8Array(0)),
          );
        }
      }
    }
    const checkEveryMs = Math.max(1, Math.min(50, o.watchdogMs / 4));
    this.#watchdogTimer = setInterval(() => this.#checkWatchdog(), checkEveryMs);
    this.#watchdogTimer.unref();
  }

  /** What a core starts serving with: the node's state now. */
  #activation(
    port: number,
    bindTries: number,
    rearmTimers: boolean,
    forwardsRead: number,
  ): SocketCoreActivation {
    const domains: [ActorId, Domain][] = [];
    for (const entry of this.table.values()) {
      // A migration the core starts with is one from where it began (the table moves on adoption).
      const from = this.#migrating.get(entry.id)?.from;
      if (from !== undefined) domains.push([entry.id, from]);
      else if (entry.location.domain === 'nic' || entry.location.domain === 'host')
        domains.push([entry.id, entry.location.domain]);
    }
    const migrating: [ActorId, Domain][] = [];
    for (const migration of this.#migrating.values()) migrating.push([migration.actor, migration.to]);
    return {
      domains,
      deregistered: [...this.#deregistered],
      migrating,
      stopping: this.#stopping,
      port,
      bindTries,
      rearmTimers,
      forwardsRead,
    };
  }

  /** Starts a core thread (with no activation: a warm spare); `first` is its first message. */
  #newThread(activation: SocketCoreActivation | undefined): {
    core: CoreThread;
    first: Promise<SocketCoreHello>;
  } {
    const o = this.#options;
    const work = SpscRing.create({ capacityBytes: o.ringBytes, spinIterations: 0 });
    const results = SpscRing.create({ capacityBytes: o.ringBytes, spinIterations: 0 });
    const data: SocketCoreData = {
      entry: CORE_ENTRY,
      domainBuffer: this.domain.buffer as SharedArrayBuffer,
      workRing: work.memory,
      resultRing: results.memory,
      counters: this.#countersBuffer,
      dedup: this.#dedup,
      messageLedger: this.#ledgerBuffer,
      catalog: o.catalog,
      policy: o.policy,
      scheduler: o.scheduler,
      address: o.address,
      maxFrameBytes: o.maxFrameBytes,
      ingressLimit: o.ingressLimit,
      activation,
    };
    const worker = new Worker(CORE_BOOTSTRAP, {
      workerData: data,
      name: activation === undefined ? 'ipipe-nic-core-0-spare' : 'ipipe-nic-core-0',
    });
    worker.on('error', (error) => process.stderr.write(`ipipe: NIC core 0 failed: ${error.message}\n`));
    const core: CoreThread = {
      worker,
      work,
      results,
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
      serving: false,
    };
    worker.once('exit', (code) => this.#onExit(core, code));
    return { core, first: nextMessage(worker) };
  }

  /** Makes `core` core 0 once it reports its socket bound; returns what it said. */
  async #serveWith(core: CoreThread, hello: Promise<SocketCoreHello>): Promise<SocketCoreHello> {
    this.#core = core;
    const said = await hello;
    if (said.kind === 'ready') {
      core.serving = true;
      this.#bound = { address: said.address, port: said.port };
      void this.#pumpResults(core);
    }
    return said;
  }

  /**
   * Starts the warm spare: a core thread with its imports done (~0.7–1 s of start-up here, the
   * bulk of a replacement's delay), idle until the watchdog hands it the port.
   */
  #startSpare(): Promise<void> {
    if (this.#stopped || !this.#options.warmSpare) return Promise.resolve();
    const { core, first } = this.#newThread(undefined);
    const spare = { core, ready: false };
    this.#spare = spare;
    return first.then(
      (said) => {
        spare.ready = said.kind === 'spare';
      },
      (error: unknown) => {
        if (this.#spare === spare) this.#spare = undefined;
        if (!this.#stopped)
          process.stderr.write(`ipipe: the spare NIC core did not start: ${String(error)}\n`);
      },
    );
  }

  async #stopCore(): Promise<void> {
    const threads = [this.#core, this.#spare?.core];
    this.#spare = undefined;
    for (const core of threads) {
      if (!core) continue;
      await core.worker.terminate();
      core.work.close();
      core.results.close();
    }
  }

  // ── to the core ──────────────────────────────────────────────────────────────────────────────

  /**
   * Writes a work item to the core, behind any held back. Never blocks: the core may itself be
   * waiting for room in its result ring, which only this thread drains.
   */
  #post(item: Uint8Array, owned = false): void {
    const core = this.#core;
    if (
      core !== undefined &&
      !this.#replacing &&
      this.#pending.length === 0 &&
      this.#write(core, item, owned)
    ) {
      this.#flushSoon();
      return;
    }
    this.#pending.push(owned ? item : item.slice());
    this.#armPendingRetry();
  }

  /**
   * Writes `item` to `core`'s ring, keeping a copy until the core has taken it (`#written`);
   * `owned`: `item` is already a copy nobody changes, kept as it is.
   */
  #write(core: CoreThread, item: Uint8Array, owned = false): boolean {
    if (!core.work.tryWrite(item)) return false;
    const consumed = this.#counters[SLOT_WORK_CONSUMED] as number;
    if (consumed > this.#writtenBase) {
      const taken = Math.min(consumed - this.#writtenBase, this.#written.length);
      this.#written.splice(0, taken);
      this.#writtenBase += taken;
    }
    this.#written.push(owned ? item : item.slice());
    return true;
  }

  /**
   * After the core was terminated: the items it never took, in order, ahead of what waits in
   * `#pending` (host replies, messages for its actors, host executions, deregistrations; a
   * migration's items are not: the replacement ends those itself); and ahead of those, the
   * messages it took and never settled (`#messages`: queued in its scheduler, buffered for a
   * migration, or forwarded in a record never read here, `forwardsRead` being how many were),
   * which were sent before anything it never took. A message whose handler started is not among
   * them: at most once.
   */
  #salvageWork(forwardsRead: number): void {
    const consumed = this.#counters[SLOT_WORK_CONSUMED] as number;
    const untaken = this.#written.slice(Math.max(0, consumed - this.#writtenBase));
    this.#written = [];
    this.#writtenBase = 0;
    this.#counters[SLOT_WORK_CONSUMED] = 0;
    const salvaged = untaken.filter((item) => SALVAGED_KINDS.has(item[0] as number));
    const later = new Set<number>();
    for (const item of [...salvaged, ...this.#pending]) {
      if (item[0] === IN_ARRIVE) later.add(messageIdOf(item));
    }
    const retaken: Uint8Array[] = [];
    for (const [id, item] of this.#messages) {
      if (isSettled(this.#ledger, id, forwardsRead)) {
        this.#messages.delete(id);
        continue;
      }
      // A forward the controller never read said it settled: not for the replacement.
      this.#ledger[ledgerAt(id)] = 0;
      if (!later.has(id)) retaken.push(item);
    }
    if (retaken.length > 0 || salvaged.length > 0) this.#pending.unshift(...retaken, ...salvaged);
  }

  #flushScheduled = false;
  readonly #flushWork = (): void => {
    this.#flushScheduled = false;
    this.#core?.work.flush();
  };

  /**
   * Publishes the work ring by the end of this event-loop turn: the host's replies drained from the
   * channel in one go reach the core with one doorbell (each wakes the core's thread).
   */
  #flushSoon(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(this.#flushWork);
  }

  #sendPending(): void {
    const core = this.#core;
    if (core === undefined || this.#replacing) return;
    let sent = 0;
    while (sent < this.#pending.length && this.#write(core, this.#pending[sent] as Uint8Array, true)) sent++;
    if (sent > 0) {
      this.#pending.splice(0, sent);
      core.work.flush();
    }
  }

  #armPendingRetry(): void {
    if (this.#pendingRetry !== undefined || this.#stopped) return;
    this.#pendingRetry = setTimeout(() => {
      this.#pendingRetry = undefined;
      this.#sendPending();
      if (this.#pending.length > 0) this.#armPendingRetry();
    }, 1);
    this.#pendingRetry.unref();
  }

  /** A work item that is its kind alone. */
  #single(kind: number): Uint8Array {
    const out = this.#out.reset();
    out.u8(kind);
    return out.frame;
  }

  #arrive(actor: ActorId, timerId: number, origin: Origin, message: Uint8Array): void {
    // A timer is not numbered: a replacement re-arms the actor's pending timers from its heap.
    let id = 0;
    if (timerId === 0) {
      id = nextMessageId(this.#lastMessageId);
      this.#lastMessageId = id;
    }
    const out = this.#out.reset();
    out.u8(IN_ARRIVE);
    out.u32(actor);
    out.u32(timerId);
    out.f64(id);
    out.origin(origin);
    out.bytesField(message);
    // One copy serves the ring's bookkeeping and the ledger's (#post keeps it as it is).
    const item = out.frame.slice();
    if (id !== 0) this.#keepMessage(id, item);
    this.#post(item, true);
  }

  /** Keeps message `id` until the ledger says the core settled it (see `#messages`). */
  #keepMessage(id: number, item: Uint8Array): void {
    this.#pruneMessages();
    this.#messages.set(id, item);
  }

  /**
   * Lets go of the oldest kept messages the ledger says are settled, up to the first that is not,
   * and of any more than MESSAGE_LEDGER_SLOTS ids older than the newest (its slot is reused).
   * Also run by the watchdog's tick, so that copies do not wait for the next message.
   */
  #pruneMessages(): void {
    const messages = this.#messages;
    for (const oldest of messages.keys()) {
      if (
        sequenceDelta(this.#lastMessageId, oldest) < MESSAGE_LEDGER_SLOTS &&
        !isSettled(this.#ledger, oldest, this.#forwardsRead)
      )
        break;
      messages.delete(oldest);
    }
  }

  /** A reply (or error body) to a client, sent by the core from the node's port. */
  #replyThroughCore(
    actor: ActorId,
    origin: ClientOrigin,
    body: Uint8Array,
    isError: boolean,
    clientId = 0,
  ): void {
    const out = this.#out.reset();
    out.u8(IN_REPLY);
    out.u32(actor);
    out.u8(isError ? 1 : 0);
    out.u32(clientId);
    out.origin(origin);
    out.bytesField(body);
    this.#post(out.frame);
  }

  #errorThroughCore(origin: Origin, actor: ActorId, code: string, message: string, clientId = 0): void {
    if (origin.kind !== 'client') return;
    const body = new Uint8Array(Math.min(1024, this.#options.maxFrameBytes - HEADER_BYTES));
    const safeCode = /^[\x21-\x7e]{1,255}$/.test(code) ? code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED';
    const length = encodeErrorBody(body, 0, safeCode, message);
    this.#replyThroughCore(actor, origin, body.subarray(0, length), true, clientId);
  }

  // ── from the core ────────────────────────────────────────────────────────────────────────────

  async #pumpResults(core: CoreThread): Promise<void> {
    const reader = this.#reader;
    for (;;) {
      if (this.#core !== core) return;
      const length = core.results.peek();
      if (length === RING_EMPTY) {
        if ((await core.results.waitForDataAsync()) === 'closed' && !core.results.hasData()) return;
        continue;
      }
      if (length === RING_CORRUPT) {
        core.results.consume();
        continue;
      }
      const at = core.results.peekOffset;
      reader.resetWindow(core.results.bytes, at, at + length);
      try {
        this.#onResult(reader);
      } catch (error) {
        // One bad record must not end the pump (every later result would be lost): skip it.
        this.failedResults++;
        this.#drop('failed-result');
        process.stderr.write(`ipipe: a result from NIC core 0 could not be handled: ${String(error)}\n`);
      } finally {
        core.results.consume();
      }
      if (this.#pending.length > 0) this.#sendPending();
    }
  }

  #onResult(reader: FrameReader): void {
    const kind = reader.u8();
    switch (kind) {
      case OUT_FORWARD: {
        const actor = reader.u32() as ActorId;
        const timerId = reader.u32();
        const clientId = reader.u32();
        const origin = reader.origin();
        const payload = reader.bytesField();
        if (!reader.ok) {
          this.#drop('malformed-result');
          break;
        }
        if (clientId !== 0 && origin.kind === 'client') this.#keepClientId(origin, clientId);
        this.#forwardsRead++;
        this.#hostInFlight++;
        this.#link.request(actor, timerId, origin, payload);
        break;
      }
      case OUT_LATENCY: {
        const actor = reader.u32() as ActorId;
        const seconds = reader.f64();
        this.#onReplyLatency?.(actor, seconds);
        break;
      }
      case OUT_DECISION:
        this.#decided(JSON.parse(reader.text(2)) as Decision);
        break;
      case OUT_PREPARED: {
        const actor = reader.u32() as ActorId;
        const to: Domain = reader.u8() === TO_HOST ? 'host' : 'nic';
        this.#prepared(actor, to, reader.u32());
        break;
      }
      case OUT_REFUSED: {
        const actor = reader.u32() as ActorId;
        const sequence = reader.u32();
        this.#refused(actor, sequence, reader.text(2));
        break;
      }
      case OUT_MOVED: {
        const actor = reader.u32() as ActorId;
        reader.u8();
        this.#cleaned(actor, reader.u32());
        break;
      }
      default:
        this.#drop('malformed-result');
    }
  }

  #keepClientId(origin: ClientOrigin, clientId: number): void {
    const ids = this.#clientIds;
    if (ids.size >= CLIENT_IDS_KEPT) {
      const oldest = ids.keys().next();
      if (oldest.done !== true) ids.delete(oldest.value);
    }
    ids.set(originKey(origin), clientId);
  }

  /** The client id a host request came with (0: unknown; the core looks it up by endpoint). */
  #takeClientId(origin: ClientOrigin): number {
    const key = originKey(origin);
    const clientId = this.#clientIds.get(key) ?? 0;
    this.#clientIds.delete(key);
    return clientId;
  }

  #decided(decision: Decision): void {
    this.decisions.push(decision);
    // Its OUT_PREPARED or OUT_REFUSED follows at once; the observer hears of it then.
    if (decision.kind === 'migrate') this.#decidedMigrations.set(decision.actor, decision);
    else this.#observe(decision);
  }

  #observe(decision: Decision): void {
    const observe = this.onDecision;
    if (observe === undefined) return;
    try {
      observe(decision);
    } catch (error) {
      process.stderr.write(`ipipe: the onDecision observer failed (${String(error)}); the decision stands\n`);
    }
  }

  #beginMigration(
    actor: ActorId,
    from: Domain,
    to: Domain,
    trigger: string,
    sequence: number,
    done: (record: LiveMigrationRecord) => void,
    fail: (error: Error) => void,
  ): MigrationState {
    const migration: MigrationState = {
      actor,
      from,
      to,
      trigger,
      sequence,
      prepared: false,
      startedMs: performance.now(),
      preparedMs: -1,
      readyMs: -1,
      goneMs: -1,
      stateBytes: 0,
      assembler: null,
      done,
      fail,
    };
    this.#migrating.set(actor, migration);
    return migration;
  }

  /**
   * The core's scheduler buffers the actor: Ready for an actor leaving the NIC; LINK_MIGRATE else.
   * `sequence` 0 is the core's own decision. A forced migrate() whose IN_PREPARE is still on its
   * way (it will be refused: "already migrating") finds its state taken over by this one: the
   * caller's promise settles with the migration that actually runs.
   */
  #prepared(actor: ActorId, to: Domain, sequence: number): void {
    const decision = sequence === 0 ? this.#decidedMigrations.get(actor) : undefined;
    if (sequence === 0) this.#decidedMigrations.delete(actor);
    const trigger = decision?.kind === 'migrate' ? decision.trigger : 'scheduler';
    let migration = this.#migrating.get(actor);
    if (migration?.prepared === true || (migration !== undefined && migration.to !== to)) {
      // Cannot happen while the core refuses a second prepare; never run one migration twice.
      this.#drop('stray-prepared');
      return;
    }
    if (migration === undefined) {
      // The core's own decision: it prepared at once, as NicController does on a decision.
      migration = this.#beginMigration(
        actor,
        to === 'host' ? 'nic' : 'host',
        to,
        trigger,
        0,
        () => {},
        () => {},
      );
    } else if (sequence === 0) migration.trigger = trigger;
    migration.prepared = true;
    migration.preparedMs = performance.now();
    if (decision !== undefined) this.#observe(decision);
    if (migration.from === 'nic') {
      migration.readyMs = performance.now();
      const heap = this.domain.heapOf(actor);
      if (!heap) throw new ConfigError('migrate', `actor ${this.#name(actor)} has no heap on the NIC`);
      migration.stateBytes = this.#link.image(actor, heap);
    } else {
      // Behind every request the core forwarded before buffering (read off the ring before this).
      this.#link.control(LINK_MIGRATE, actor);
    }
  }

  /**
   * An IN_PREPARE (or the core's own decision, `sequence` 0) the core could not start. It fails
   * only the migration that asked, and only before it was prepared: a forced move refused because
   * the core's own migration of the actor runs already has been joined to that one (`#prepared`).
   */
  #refused(actor: ActorId, sequence: number, reason: string): void {
    if (sequence === 0) {
      const decision = this.#decidedMigrations.get(actor);
      this.#decidedMigrations.delete(actor);
      if (decision !== undefined) this.#observe(decision);
    }
    const migration = this.#migrating.get(actor);
    if (migration === undefined || migration.sequence !== sequence || migration.prepared) return;
    this.#migrating.delete(actor);
    migration.fail(new ConfigError('migrate', `actor ${this.#name(actor)} cannot migrate: ${reason}`));
  }

  /** Phase 4 done in the core: the buffer went where the actor is. */
  #cleaned(actor: ActorId, buffered: number): void {
    const migration = this.#migrating.get(actor);
    if (migration === undefined) return;
    this.#migrating.delete(actor);
    // The core forwarded what it held for the actor before OUT_MOVED (its result ring is FIFO,
    // and so is the channel): the host may now run its own senders' newer messages (channel-link.ts,
    // "Per-sender order"). A replacement core sends OUT_MOVED too, behind what it forwards for the
    // actor (#settleMigrations).
    if (migration.to === 'host' && !this.#link.closed) this.#link.control(LINK_DRAINED, actor);
    completeMigration(this, migration, this.#name(actor), buffered);
  }

  /** The state is on its new side (phase 3 done): the table says so; the core does phase 4. */
  #gone(migration: MigrationState): void {
    migration.goneMs = performance.now();
    this.table.move(migration.actor, { domain: migration.to, node: nodeId(this.#options.nodeId) });
    this.#postMoved(migration);
  }

  /** Phase 4 asked of the core: IN_MOVED. */
  #postMoved(migration: MigrationState): void {
    const out = this.#out.reset();
    out.u8(IN_MOVED);
    out.u32(migration.actor);
    out.u8(migration.to === 'host' ? TO_HOST : TO_NIC);
    this.#post(out.frame);
  }

  // ── the channel, from the host ───────────────────────────────────────────────────────────────

  #onLink(kind: number, actor: ActorId, reader: FrameReader): void {
    switch (kind) {
      case LINK_REPLY: {
        const origin = reader.origin();
        const reply = reader.bytesField();
        // With the request's own client id: a replacement core's directory does not know the
        // client yet, and a reply with the wrong id is dropped by the client, which retransmits.
        if (origin.kind === 'client')
          this.#replyThroughCore(actor, origin, reply, false, this.#takeClientId(origin));
        break;
      }
      case LINK_ERROR: {
        this.#hostFinished();
        const origin = reader.origin();
        const clientId = origin.kind === 'client' ? this.#takeClientId(origin) : 0;
        const code = reader.text(1);
        // The host sends no DONE for a request it could not decode (host-controller.ts #result).
        if (code === DECODE_FAILED) this.#drop('decode');
        this.#errorThroughCore(origin, actor, code, reader.text(2), clientId);
        break;
      }
      case LINK_REQUEST: {
        this.#hostFinished();
        const timerId = reader.u32();
        const origin = reader.origin();
        this.#arrive(actor, timerId, origin, reader.bytesField());
        break;
      }
      case LINK_DONE: {
        this.#hostFinished();
        const execNs = reader.f64();
        this.#hostHandlerNs += execNs;
        this.#hostExecuted.set(actor, (this.#hostExecuted.get(actor) ?? 0) + 1);
        const out = this.#out.reset();
        out.u8(IN_HOST_DONE);
        out.u32(actor);
        out.f64(execNs);
        this.#post(out.frame);
        break;
      }
      case LINK_IMAGE:
      case LINK_IMAGE_DMA:
        this.#receiveImage(kind, actor, reader);
        break;
      case LINK_ADOPTED: {
        const migration = this.#migrating.get(actor);
        if (migration?.from !== 'nic') return;
        this.domain.releaseHeap(actor);
        this.#gone(migration);
        break;
      }
      case LINK_STOP:
        this.#deregister(actor, reader.text(2));
        break;
      default:
        this.#drop('channel-unknown-message');
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
      // As NicController: nothing adopted, the host keeps the actor, its requests stay buffered.
      this.#drop('corrupt-image');
      process.stderr.write(`ipipe: migration of ${this.#name(actor)} failed: ${image.error.message}\n`);
      return;
    }
    this.#link.control(LINK_ADOPTED, actor);
    this.#gone(migration);
  }

  #hostFinished(): void {
    if (this.#hostInFlight > 0) this.#hostInFlight--;
  }

  #deregister(actor: ActorId, reason: string): void {
    this.#deregistered.add(actor);
    const out = this.#out.reset();
    out.u8(IN_DEREGISTER);
    out.u32(actor);
    out.text(reason, 2);
    this.#post(out.frame);
  }

  // ── the watchdog ─────────────────────────────────────────────────────────────────────────────

  /**
   * A handler on core 0 cannot be interrupted in its thread: past the limit the thread is
   * terminated (closing the socket with it), the actor deregistered (here, on the host, and in the
   * replacement core), and a replacement core binds the same port; the request that was running
   * gets IPIPE_ERR_ACTOR_DEREGISTERED through it. Datagrams that arrive while the port is unbound
   * are refused by the kernel (the client retransmits); the dedup memory is shared
   * (SharedRequestDedup): the replacement answers retransmissions of what the dead core answered.
   */
  #checkWatchdog(): void {
    if (this.#replacing || this.#stopped) return;
    if (this.#messages.size > 0) this.#pruneMessages();
    const counters = this.#counters;
    const generation = counters[SLOT_RUNNING_GENERATION] as number;
    if (generation % 2 === 1) return; // a handler is starting: read again next time
    const sinceMs = counters[SLOT_RUNNING_SINCE_MS] as number;
    if (sinceMs === 0 || wallNs() / 1e6 - sinceMs <= this.#options.watchdogMs) return;
    const port = counters[SLOT_RUNNING_PORT] as number;
    const runaway: Runaway = {
      generation,
      actor: counters[SLOT_RUNNING_ACTOR] as ActorId,
      request:
        port === 0
          ? undefined
          : {
              kind: 'client',
              endpoint: { address: u32ToIpv4(counters[SLOT_RUNNING_ADDRESS] as number), port },
              requestId: counters[SLOT_RUNNING_REQUEST] as number,
            },
      clientId: counters[SLOT_RUNNING_CLIENT] as number,
    };
    // Another handler started while these were read: they may mix two requests.
    if ((counters[SLOT_RUNNING_GENERATION] as number) !== generation) return;
    this.#replacement = this.#replaceCore(runaway);
  }

  /** Core 0 ended by itself (an uncaught exception, process.exit in a handler): replace it too. */
  #onExit(core: CoreThread, code: number): void {
    if (core !== this.#core || !core.serving || this.#replacing || this.#stopped) return;
    this.#replacement = this.#replaceCore(code);
  }

  /**
   * `cause` a Runaway: the watchdog's (the running actor is deregistered, its request answered
   * with an error, if that handler was still running when the thread died); a number: the thread
   * ended by itself with that exit code (nothing deregistered).
   */
  async #replaceCore(cause: Runaway | number): Promise<void> {
    try {
      await this.#replaceCoreNow(cause);
    } finally {
      this.#replacement = undefined;
    }
  }

  async #replaceCoreNow(cause: Runaway | number): Promise<void> {
    const counters = this.#counters;
    const old = this.#core;
    if (old === undefined) return;
    this.#replacing = true;
    old.serving = false;
    const exitCode = typeof cause === 'number' ? cause : undefined;
    const runaway = typeof cause === 'number' ? undefined : cause;
    const startedMs = performance.now();
    this.replacedCores++;
    this.#drop(runaway !== undefined ? 'watchdog' : 'core-exited');
    const reason = `its handler ran past the ${this.#options.watchdogMs} ms watchdog`;
    await old.worker.terminate();
    // The handler the watchdog saw may have returned before the thread died: then its actor did
    // nothing wrong (its reply went out) and is not deregistered; only the thread was lost.
    const byWatchdog =
      runaway !== undefined && (counters[SLOT_RUNNING_GENERATION] as number) === runaway.generation;
    const actor = runaway?.actor ?? (0 as ActorId);
    if (byWatchdog) {
      this.#deregistered.add(actor);
      this.#link.stop(actor, reason);
    }
    old.work.close();
    old.results.close();
    // Forwards left unread in the dead core's result ring are lost (their clients retransmit): the
    // replacement forgets their dedup entries, so those retransmissions run (SharedRequestDedup).
    // No more are read from here on: the old pump stops once the replacement is core 0.
    const forwardsRead = this.#forwardsRead;
    this.#forwardsRead = counters[SLOT_FORWARDS] as number;
    this.#salvageWork(forwardsRead);
    if (this.#stopped) {
      // stop() came while the thread was ending: no replacement to start (stop waits for this).
      this.#replacing = false;
      return;
    }
    counters[SLOT_RUNNING_SINCE_MS] = 0;
    // Even again (a thread killed inside a handler's start leaves it odd) for the next core.
    counters[SLOT_RUNNING_GENERATION] = 0;
    counters[SLOT_HELD] = 0;
    this.#settleMigrations();
    // The warm spare takes over if it is ready (a postMessage and a bind); else a fresh thread
    // (its whole start-up). Either retries the bind while the old socket is being closed.
    const spare = this.#spare;
    this.#spare = undefined;
    const activation = this.#activation(this.#bound.port, REBIND_TRIES, true, forwardsRead);
    let hello: SocketCoreHello;
    try {
      if (spare?.ready === true) {
        const said = nextMessage(spare.core.worker);
        spare.core.worker.postMessage(activation);
        hello = await this.#serveWith(spare.core, said);
      } else {
        if (spare !== undefined) void spare.core.worker.terminate();
        const fresh = this.#newThread(activation);
        hello = await this.#serveWith(fresh.core, fresh.first);
      }
    } catch (error) {
      hello = { kind: 'bind-failed', message: String(error) };
    }
    this.usedSpare = spare?.ready === true;
    this.#replacing = false;
    void this.#startSpare();
    if (hello.kind !== 'ready') {
      process.stderr.write(
        `ipipe: NIC core 0 could not bind port ${this.#bound.port} again; the NIC domain is down\n`,
      );
      // No core will answer the fresh IN_MOVED: the host must not hold its senders' messages for ever.
      for (const migration of [...this.#migrating.values()])
        if (migration.goneMs >= 0) this.#cleaned(migration.actor, 0);
      return;
    }
    const darkMs = performance.now() - startedMs;
    process.stderr.write(
      byWatchdog
        ? `ipipe: actor ${this.#name(actor)} deregistered (${reason}); NIC core 0 replaced, port dark ${darkMs.toFixed(0)} ms\n`
        : runaway !== undefined
          ? `ipipe: NIC core 0 replaced (its handler of ${this.#name(actor)} returned as the watchdog stopped the thread; nothing deregistered), port dark ${darkMs.toFixed(0)} ms\n`
          : `ipipe: NIC core 0 exited unexpectedly (code ${exitCode}); replaced, port dark ${darkMs.toFixed(0)} ms\n`,
    );
    this.lastReplacementDarkMs = darkMs;
    this.#sendPending();
    if (byWatchdog && runaway.request !== undefined) {
      this.#errorThroughCore(
        runaway.request,
        actor,
        'IPIPE_ERR_ACTOR_DEREGISTERED',
        `actor ${this.#name(actor)} was deregistered: ${reason}`,
        runaway.clientId,
      );
    }
  }

  /**
   * Before a replacement core is activated, each migration by its phase (the requests the killed
   * core buffered die with it, clients retransmit; the messages it buffered are sent again,
   * `#salvageWork`):
   *   - not prepared (no OUT_PREPARED read): nothing left this side; the actor stays where the
   *     table says, the migration fails;
   *   - prepared, state not yet adopted (the image or LINK_MIGRATE is on its way): it goes on; the
   *     replacement buffers the actor from its start (SocketCoreActivation.migrating), and the
   *     adoption (LINK_ADOPTED, or the host's image) moves the table and sends IN_MOVED as usual.
   *     Leaving it to fail instead left the host "leaving" with its image dropped as stray, or the
   *     heap on both sides;
   *   - adopted by the host (IN_MOVED posted, its OUT_MOVED not read): it goes on too, the
   *     replacement buffering the actor from its start, with a fresh IN_MOVED behind what the
   *     replacement gets first (the killed core's unsettled messages, its untaken work, what
   *     arrived meanwhile): the replacement forwards those, then OUT_MOVED brings LINK_DRAINED, as
   *     on the normal path. Settled at once, LINK_DRAINED overtook those forwards, and the host ran
   *     its senders' newer messages, which it held until then, ahead of their older ones;
   *   - adopted by the NIC (IN_MOVED posted): the table already says where the actor is; done,
   *     nothing buffered (what the replacement gets for it queues in order; no marker to send).
   */
  #settleMigrations(): void {
    this.#decidedMigrations.clear();
    // The IN_PREPAREs still waiting here belong to migrations failed below: the replacement must
    // not start them (it would buffer an actor whose caller was told it stays where it was). The
    // IN_MOVEDs (an adoption that came while the old thread was ending) belong to migrations
    // settled below, done or given a fresh IN_MOVED at the end.
    for (let i = this.#pending.length - 1; i >= 0; i--) {
      const kind = this.#pending[i]?.[0];
      if (kind === IN_PREPARE || kind === IN_MOVED) this.#pending.splice(i, 1);
    }
    for (const migration of [...this.#migrating.values()]) {
      if (migration.goneMs >= 0 && migration.to === 'host') this.#postMoved(migration);
      else if (migration.goneMs >= 0) this.#cleaned(migration.actor, 0);
      else if (!migration.prepared) {
        this.#migrating.delete(migration.actor);
        migration.fail(
          new ConfigError(
            'migrate',
            `NIC core 0 was replaced before the migration of ${this.#name(migration.actor)} started; ` +
              'the actor stays where it was: migrate it again',
          ),
        );
      }
    }
  }

  /** How long the port was unbound in the last core replacement (ms; 0 before any). */
  lastReplacementDarkMs = 0;
  /** Whether the last replacement was the warm spare (false: a thread started from scratch). */
  usedSpare = false;

  #drop(reason: SocketCoreControllerDropReason): void {
    this.#ownDrops.set(reason, (this.#ownDrops.get(reason) ?? 0) + 1);
  }

  #name(actor: ActorId): string {
    return this.table.lookup(actor)?.name ?? String(actor);
  }
}
