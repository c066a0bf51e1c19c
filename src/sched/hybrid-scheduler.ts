/**
 * iPipe's hybrid scheduler as pure policy (§4.2, Algorithms 1 and 2): FCFS cores over one shared
 * queue, DRR cores over the downgraded actors' mailboxes, downgrade/upgrade on tail latency, push
 * migration on mean latency or mailbox length, pull when the NIC has headroom, and core
 * auto-scaling — all decided on the management core.
 *
 * It is synchronous and clock-injected: a platform (simulated cores, worker threads) calls
 *   arrive(request, now)            a request reached the NIC
 *   takeFcfs(core, now) / takeDrr(core, now)   what should this idle core do next?
 *   complete(core, now)             the core finished the request it took
 *   manage(now)                     the management core's periodic check when it is idle
 * and carries out what comes back. Nothing here reads a clock, sleeps or spawns: the same object
 * drives a discrete-event simulation and a live node, and every scenario is unit-testable.
 *
 * Request flow (the queues all live here, so "no request is lost or duplicated" is a property of
 * this one state machine):
 *
 *   arrive ──▶ shared queue ──takeFcfs──▶ exec (fcfs actor, lock free)
 *                                  ├────▶ mailbox (drr actor, or exclusive actor busy elsewhere)
 *                                  ├────▶ forward (host actor)
 *                                  ├────▶ buffered (migrating actor)   ──finishMigration──▶ out
 *                                  └────▶ drop (unknown / deregistered)
 *   mailbox ──takeDrr (drr actor)──▶ exec      mailbox ──takeFcfs via ready list (fcfs actor)──▶ exec
 */

import { Mailbox } from '../actor/mailbox.ts';
import { SchedulerStateError } from '../errors.ts';
import type { ActorId } from '../ids.ts';
import { DrrGroup, type DrrMember } from './drr-group.ts';
import { Ewma, WindowedEwma } from './ewma.ts';
import { resolveSchedulerSettings, type SchedulerSettings } from './settings.ts';
import type {
  ActorMode,
  ActorSchedView,
  CoreRole,
  CoreSchedView,
  Decision,
  Domain,
  SchedRequest,
  SchedulerView,
  Work,
} from './types.ts';

/** Which scheduler to run: the paper's hybrid, or one of its two baselines (§5.3, Fig 15). */
export type SchedulerPolicy = 'hybrid' | 'fcfs' | 'drr';

export interface SchedActorRegistration {
  readonly id: ActorId;
  /** 'nic' and 'host' pin the actor; 'any' lets the scheduler migrate it. */
  readonly placement: 'nic' | 'host' | 'any';
  /** The exec lock: an exclusive actor never runs on two cores at once. */
  readonly exclusive: boolean;
  /** Where it starts. Defaults to 'host' for host-pinned actors and 'nic' otherwise. */
  readonly domain?: Domain;
}

export interface HybridSchedulerOptions {
  /** Number of NIC cores this scheduler drives (ids 0..n−1). */
  readonly cores: number;
  readonly policy?: SchedulerPolicy;
  readonly settings?: Partial<SchedulerSettings>;
  /**
   * The platform's headroom: the largest per-request processing time that still sustains line
   * rate for requests of this size (the DRR quantum under the 'headroom' rule).
   */
  readonly headroomNs?: (requestBytes: number) => number;
  /** How decisions name actors in their `why` (e.g. from the actor table); defaults to "actor <id>". */
  readonly nameOf?: (id: ActorId) => string;
}

const NO_DECISIONS: readonly Decision[] = Object.freeze([]);
/**
 * A push of an actor within this many settle periods of its pull is a bounce: the pull made the
 * NIC slow again. Each bounce in a row doubles how long the node then pulls nothing (from
 * BOUNCE_FIRST_BACKOFF_SETTLES settle periods, at most 2^BOUNCE_MAX_DOUBLINGS times that); a pulled
 * actor pushed later than the window, or not at all before the next pull, ends the run.
 */
const BOUNCE_WINDOW_SETTLES = 8;
const BOUNCE_FIRST_BACKOFF_SETTLES = 4;
const BOUNCE_MAX_DOUBLINGS = 5;
/**
 * A DRR group with no work for this many settle periods gives its cores back to FCFS
 * (`#checkDrrCores`). One settle period was a gap in ordinary Poisson traffic: a downgraded actor
 * at 5 k req/s (one request every 200 µs) lost and regained its core every ~30 ms with a 1 ms
 * settle period; eight make a gap that long rarer than e^−40 at that rate.
 */
const DRR_IDLE_SETTLES = 8;
/**
 * A DRR core recreated within this many idle windows of its release means the group's traffic is
 * sparse, not over: the idle window doubles (at most DRR_IDLE_MAX_DOUBLINGS times), as a pull
 * pushed straight back doubles the pull back-off. Steady DRR traffic slower than one request per
 * window otherwise cost two scale decisions per request (30 req/s at the simulator's 2 ms settle
 * period: 82 in 2 s).
 */
const DRR_FLIP_WINDOWS = 4;
const DRR_IDLE_MAX_DOUBLINGS = 6;
const NS_PER_SECOND = 1e9;

class ActorRecord<R extends SchedRequest> implements DrrMember<R> {
  readonly id: ActorId;
  readonly placement: 'nic' | 'host' | 'any';
  readonly exclusive: boolean;
  mode: ActorMode;
  /** Set from a migrate decision until the platform prepares (or abandons) the migration. */
  migrationTarget: Domain | null = null;
  migrationRequested = false;
  /** When the scheduler last pulled the actor to the NIC (-∞: never). */
  pulledAtNs = Number.NEGATIVE_INFINITY;
  readonly exec: Ewma;
  readonly hostExec: Ewma;
  readonly requestBytes: Ewma;
  readonly rate: WindowedEwma;
  /**
   * Requests run on the host per second (`recordHostExecution`). While the actor lives there its
   * rate is the larger of this and its arrivals at the NIC: requests from other host actors never
   * pass the NIC (RTA's counters, fed by the filter once both were pushed), and counted by NIC
   * arrivals alone a counter that needed a core read ~0 cores — "pull only what fits" pulled it
   * back onto a NIC that could not carry it, it was pushed again, and so on every ~12 ms.
   */
  readonly hostRate: WindowedEwma;
  readonly mailbox = new Mailbox<R>();
  readonly buffered = new Mailbox<R>();
  running = 0;
  /** The core holding this actor's requests while `running > 0` (an exclusive actor has one). */
  heldBy = -1;
  deficitNs = 0;
  inReadyList = false;
  executed = 0;
  readonly #quantumFor: (actor: ActorRecord<R>) => number;

  constructor(
    registration: SchedActorRegistration,
    mode: ActorMode,
    settings: SchedulerSettings,
    quantumFor: (actor: ActorRecord<R>) => number,
  ) {
    this.id = registration.id;
    this.placement = registration.placement;
    this.exclusive = registration.exclusive;
    this.mode = mode;
    this.exec = new Ewma(settings.actorEwmaWeight);
    this.hostExec = new Ewma(settings.actorEwmaWeight);
    this.requestBytes = new Ewma(settings.actorEwmaWeight);
    this.rate = new WindowedEwma(settings.windowEwmaWeight);
    this.hostRate = new WindowedEwma(settings.windowEwmaWeight);
    this.#quantumFor = quantumFor;
  }

  estimatedCostNs(): number {
    return this.exec.mean;
  }

  quantumNs(): number {
    return this.#quantumFor(this);
  }

  /** µᵢ × rate: how many NIC cores' worth of time the actor takes (uses NIC-side µᵢ when known). */
  loadCores(): number {
    const execNs = this.exec.samples > 0 ? this.exec.mean : this.hostExec.mean;
    return (execNs * this.ratePerSec()) / NS_PER_SECOND;
  }

  /** Requests per second: arrivals at the NIC, or on the host the larger of those and host runs. */
  ratePerSec(): number {
    return this.mode === 'host' ? Math.max(this.rate.value, this.hostRate.value) : this.rate.value;
  }

  migratable(): boolean {
    return this.placement === 'any';
  }
}

class CoreRecord<R extends SchedRequest> {
  readonly id: number;
  role: CoreRole;
  /** A role change decided while the core was busy, applied when it next asks for work. */
  pendingRole: CoreRole | null = null;
  /** The request the core runs (the head of what it holds). */
  current: ActorRecord<R> | null = null;
  currentRequest: R | null = null;
  /** Requests handed to the core to run after the current one, in order (coreQueueDepth > 1). */
  readonly next: { readonly actor: ActorRecord<R>; readonly request: R }[] = [];
  /** When the current request started: its take, or the completion of the one before it. */
  busySinceNs = 0;
  readonly utilization: WindowedEwma;
  /**
   * The `exec` work this core's takes return, reused: one allocation per request was ~6% of the
   * scheduler's time (bench/sched.bench.ts). Valid until the core's next take (Work's contract).
   */
  readonly execWork: { readonly kind: 'exec'; request: R | null } = { kind: 'exec', request: null };

  constructor(id: number, role: CoreRole, settings: SchedulerSettings) {
    this.id = id;
    this.role = role;
    this.utilization = new WindowedEwma(settings.windowEwmaWeight);
  }
}

export class HybridScheduler<R extends SchedRequest = SchedRequest> {
  readonly settings: SchedulerSettings;
  readonly policy: SchedulerPolicy;
  readonly #headroomNs: ((requestBytes: number) => number) | undefined;
  readonly #nameOf: (id: ActorId) => string;
  readonly #actors = new Map<ActorId, ActorRecord<R>>();
  readonly #cores: CoreRecord<R>[] = [];
  readonly #shared = new Mailbox<R>();
  /** FCFS actors with waiting requests and a free exec lock (exclusive waiters, re-queued work). */
  readonly #ready = new Mailbox<ActorRecord<R>>();
  readonly #drr = new DrrGroup<ActorRecord<R>>();
  /**
   * T_mean and T_tail of Algorithm 1: FCFS request latency, including queueing. Its memory is
   * bounded in samples (`latencyEwmaWeight` per completion) and in time (see
   * `#boundFcfsLatencyInTime`), so it says what the NIC's latency is now, not what it was when
   * FCFS requests last completed.
   */
  readonly #fcfsLatency: Ewma;
  /**
   * The DRR group's request latency (reported in `view()`; no decision reads it). Bounded in time
   * like the FCFS latency (`#boundLatencyInTime`): it moves only when DRR cores complete, and
   * once the DRR group had no work (its actors upgraded, or quiet) it showed a burst's latency
   * for ever.
   */
  readonly #drrLatency: Ewma;
  #windowStartNs = 0;
  /** `settings.windowNs` (settings are frozen): read on every clock advance. */
  // `= 0` where declared, the constructor sets the value: a field that starts `undefined` is typed
  // "any value" by V8, so its numbers are boxed and each read checks (see event-heap.ts).
  readonly #windowNs: number = 0;
  #lastNowNs = 0;
  /** The record `#actorOf` found last (records are never replaced or removed from the map). */
  #lastActorId = -1;
  #lastActor: ActorRecord<R> | undefined = undefined;
  #lastModeChangeNs = Number.NEGATIVE_INFINITY;
  #lastMigrationNs = Number.NEGATIVE_INFINITY;
  /** FCFS completions in the open statistics window, and the sum of their latencies. */
  #fcfsWindowCompletions = 0;
  #fcfsWindowLatencySumNs = 0;
  /** `#fcfsLatency.samples` when the open statistics window began. */
  #fcfsSamplesAtWindowStart = 0;
  /** The same three for the DRR group's latency. */
  #drrWindowCompletions = 0;
  #drrWindowLatencySumNs = 0;
  #drrSamplesAtWindowStart = 0;
  /** 1 − `windowEwmaWeight`: how much of the FCFS latency mean one window may leave standing. */
  readonly #retainedPerWindow: number = 0;
  /**
   * What the FCFS mean was when the last migration finished, and the weight that value still has
   * in the mean (as of `#sinceMoveFromSamples` completions, times `#fcfsLatency.retainedSince`
   * for those after): together they give the mean of the evidence gathered since the move
   * (`#fcfsMeanSinceMove`). The weight starts at 0: before any move, all evidence is new.
   */
  #meanAtMoveNs = 0;
  #sinceMoveRetained = 0;
  #sinceMoveFromSamples = 0;
  #lastScaleNs = Number.NEGATIVE_INFINITY;
  /**
   * The last time the DRR group had work: a request pushed into a DRR actor's mailbox, a DRR
   * completion, a downgrade. DRR cores go back to FCFS after DRR_IDLE_SETTLES settle periods
   * without any (`#checkDrrCores`).
   */
  #drrLastActiveNs = Number.NEGATIVE_INFINITY;
  /** When the DRR group last gave its cores back (`#checkDrrCores`), and the idle window's doublings. */
  #drrReleasedAtNs = Number.NEGATIVE_INFINITY;
  #drrIdleDoublings = 0;
  /**
   * Decisions taken where no decision can be returned (a take: a DRR core recreated for a request
   * that reached a DRR mailbox), handed out by the next `complete` or `manage`.
   */
  #pendingDecisions: Decision[] | null = null;
  #migrationsInFlight = 0;
  /** Cores per effective role (pending role if one is set), kept current by #assignRole. */
  #fcfsCores = 0;
  #drrCores = 0;
  /** Pull back-off after bounces (BOUNCE_WINDOW_SETTLES): pulls in a row pushed straight back. */
  #bounces = 0;
  #lastPulled: ActorRecord<R> | null = null;
  #pullNotBeforeNs = 0;
  /** Actors in 'host' mode, so the pull check skips its scan when there are none. */
  #hostActors = 0;
  readonly #quantumFor: (actor: ActorRecord<R>) => number;
  /** Samples an actor's EWMA needs before its dispersion is trusted (its warm-up, 1/w). */
  readonly #warmSamples: number = 0;

  constructor(options: HybridSchedulerOptions) {
    if (!Number.isInteger(options.cores) || options.cores < 1) {
      throw new SchedulerStateError(`a scheduler needs at least one core, got ${options.cores}`);
    }
    this.policy = options.policy ?? 'hybrid';
    const overrides: Partial<SchedulerSettings> = { ...options.settings };
    this.settings = resolveSchedulerSettings(
      // The baselines differ from the hybrid only in core roles; migration stays as configured so
      // a comparison isolates the scheduling discipline.
      this.policy === 'hybrid' ? overrides : { ...overrides, enableDowngrade: false, enableAutoscale: false },
    );
    if (this.settings.managementCoreId >= options.cores) {
      throw new SchedulerStateError(
        `managementCoreId ${this.settings.managementCoreId} is not one of the ${options.cores} cores`,
      );
    }
    this.#headroomNs = options.headroomNs;
    this.#windowNs = this.settings.windowNs;
    this.#retainedPerWindow = 1 - this.settings.windowEwmaWeight;
    this.#warmSamples = Math.ceil(1 / this.settings.actorEwmaWeight);
    this.#nameOf = options.nameOf ?? ((id) => `actor ${id}`);
    this.#fcfsLatency = new Ewma(this.settings.latencyEwmaWeight);
    this.#drrLatency = new Ewma(this.settings.latencyEwmaWeight);
    const initialRole: CoreRole = this.policy === 'drr' ? 'drr' : 'fcfs';
    for (let id = 0; id < options.cores; id++)
      this.#cores.push(new CoreRecord(id, initialRole, this.settings));
    if (initialRole === 'fcfs') this.#fcfsCores = options.cores;
    else this.#drrCores = options.cores;
    const fixed = this.settings.fixedQuantumNs;
    this.#quantumFor =
      this.settings.quantumRule === 'headroom' && this.#headroomNs
        ? (actor) => Math.max(1, (this.#headroomNs as (b: number) => number)(actor.requestBytes.mean))
        : () => fixed;
  }

  // ── registration ────────────────────────────────────────────────────────────────────────────

  addActor(registration: SchedActorRegistration): void {
    if (this.#actors.has(registration.id)) {
      throw new SchedulerStateError(`actor ${registration.id} is already registered with the scheduler`);
    }
    const domain = registration.domain ?? (registration.placement === 'host' ? 'host' : 'nic');
    if (registration.placement !== 'any' && registration.placement !== domain) {
      throw new SchedulerStateError(
        `actor ${registration.id} is pinned to ${registration.placement}, not ${domain}`,
      );
    }
    const mode: ActorMode = domain === 'host' ? 'host' : this.policy === 'drr' ? 'drr' : 'fcfs';
    const record = new ActorRecord<R>(registration, mode, this.settings, this.#quantumFor);
    this.#actors.set(registration.id, record);
    this.#lastActorId = -1;
    if (mode === 'host') this.#hostActors++;
    if (mode === 'drr') this.#drr.add(record);
  }

  /**
   * Deregisters an actor (watchdog expiry, isolation violation, delete). Returns the requests it
   * still held so the platform can answer each with a typed error; later arrivals are dropped.
   */
  removeActor(id: ActorId): R[] {
    const actor = this.#require(id);
    const orphans: R[] = [];
    actor.mailbox.drainTo((r) => orphans.push(r));
    actor.buffered.drainTo((r) => orphans.push(r));
    this.#drr.remove(actor);
    this.#setMode(actor, 'deregistered');
    if (actor.migrationTarget !== null) this.#migrationsInFlight--;
    actor.migrationTarget = null;
    actor.migrationRequested = false;
    this.#afterDrrMembershipChange(this.#lastNowNs);
    return orphans;
  }

  modeOf(id: ActorId): ActorMode {
    return this.#require(id).mode;
  }

  roleOf(core: number): CoreRole {
    const record = this.#core(core);
    return record.pendingRole ?? record.role;
  }

  // ── the data path ───────────────────────────────────────────────────────────────────────────

  /** A request reached the NIC. With no FCFS core (DRR-only), the dispatcher steers it directly. */
  arrive(request: R, now: number): void {
    this.#advanceClock(now);
    // Steering straight to the mailbox is only in order when nothing older waits in the shared
    // queue (requests that arrived while their actor was migrating are still there).
    if (this.policy === 'drr' && this.#shared.isEmpty()) {
      const actor = this.#actorOf(request.actor);
      if (actor && actor.mode === 'drr') {
        this.#countArrival(actor, request);
        actor.mailbox.push(request);
        return;
      }
    }
    this.#shared.push(request);
  }

  /**
   * Algorithm 1, one iteration of an FCFS core: what to do next. Returns undefined when there is
   * nothing to do. Only an `exec` needs a later `complete(core, …)`; other outcomes are done.
   */
  takeFcfs(coreId: number, now: number): Work<R> | undefined {
    const core = this.#coreWithRoom(coreId, 'fcfs', now);
    if (!core) return undefined;
    // Requests already waiting in an FCFS actor's mailbox are older than anything in the shared
    // queue for that actor; serving them first keeps per-actor FIFO order.
    while (!this.#ready.isEmpty()) {
      const actor = this.#ready.shift() as ActorRecord<R>;
      actor.inReadyList = false;
      if (actor.mode !== 'fcfs' || actor.mailbox.isEmpty() || this.#heldElsewhere(actor, core)) continue;
      const request = actor.mailbox.shift() as R;
      if (!actor.mailbox.isEmpty()) this.#markReady(actor);
      return this.#start(core, actor, request, now);
    }
    return this.#dispatchShared(core, now);
  }

  /** Algorithm 2, one iteration of a DRR core: the next request to run, or undefined. */
  takeDrr(coreId: number, now: number): Work<R> | undefined {
    const core = this.#coreWithRoom(coreId, 'drr', now);
    if (!core) return undefined;
    const actor = this.#drr.pick();
    if (actor) return this.#start(core, actor, actor.mailbox.shift() as R, now);
    // DRR-only: with no FCFS core, DRR cores also move requests the dispatcher could not steer
    // (host actors, migrating ones) off the shared queue.
    if (this.#countRole('fcfs') === 0 && !this.#shared.isEmpty()) return this.#dispatchShared(core, now);
    return undefined;
  }

  /** Takes the shared queue's head and routes it by its actor's mode (Algorithm 1's dispatcher). */
  #dispatchShared(core: CoreRecord<R>, now: number): Work<R> | undefined {
    const request = this.#shared.shift();
    if (request === undefined) return undefined;
    const actor = this.#actorOf(request.actor);
    if (!actor) return { kind: 'drop', request, reason: 'unknown-actor' };
    this.#countArrival(actor, request);
    switch (actor.mode) {
      case 'deregistered':
        return { kind: 'drop', request, reason: 'deregistered' };
      case 'host':
        return { kind: 'forward', request };
      case 'migrating':
        actor.buffered.push(request);
        return { kind: 'buffered', request };
      case 'drr':
        actor.mailbox.push(request);
        this.#drrLastActiveNs = now;
        if (this.#drrCores === 0) this.#recreateDrrCore(now);
        return { kind: 'mailbox', request };
      case 'fcfs':
        if (this.#heldElsewhere(actor, core) || (actor.exclusive && !actor.mailbox.isEmpty())) {
          actor.mailbox.push(request);
          return { kind: 'mailbox', request };
        }
        return this.#start(core, actor, request, now);
    }
  }

  /**
   * True when `coreId` may take more work now: it is idle, or it is an FCFS core (with no role
   * change pending) holding fewer than `coreQueueDepth` requests. DRR cores take work only when
   * idle: a DRR visit's deficit is charged as requests complete, so queueing several on one core
   * would let one actor overdraw its quantum.
   */
  coreHasRoom(coreId: number): boolean {
    return this.#hasRoom(this.#core(coreId));
  }

  /**
   * The core is lost while running its current request (a watchdog stop): the requests queued
   * behind that one never ran, so they go back where they came from, ahead of anything newer —
   * their actor's mailbox, its migration buffer, or the shared queue — keeping each actor's order.
   * The current request stays with the core; the platform still calls `complete` for it.
   */
  returnQueued(coreId: number, now: number): void {
    const core = this.#core(coreId);
    this.#advanceClock(now);
    for (let i = core.next.length - 1; i >= 0; i--) {
      const { actor, request } = core.next[i] as { actor: ActorRecord<R>; request: R };
      actor.running--;
      if (actor.running === 0) actor.heldBy = -1;
      if (actor.mode === 'fcfs' || actor.mode === 'drr') {
        actor.mailbox.unshift(request);
        if (actor.mode === 'fcfs') this.#markReady(actor);
        else if (this.#drrCores === 0) this.#recreateDrrCore(now);
      } else if (actor.mode === 'migrating') actor.buffered.unshift(request);
      else this.#shared.unshift(request);
    }
    core.next.length = 0;
  }

  /**
   * The core finished the request it took. Does the bookkeeping and returns what was decided
   * (most calls: nothing). `executedNs` defaults to the time since the take.
   */
  complete(coreId: number, now: number, executedNs?: number): readonly Decision[] {
    const core = this.#core(coreId);
    const actor = core.current;
    const request = core.currentRequest;
    if (!actor || !request) throw new SchedulerStateError(`core ${coreId} completed but was running nothing`);
    this.#advanceClock(now);
    const execNs = executedNs ?? now - core.busySinceNs;
    core.utilization.accumulate(now - Math.max(core.busySinceNs, this.#windowStartNs));
    // Guarded: `shift` is a builtin call even on an empty array, and cores rarely hold a queue.
    const following = core.next.length === 0 ? undefined : core.next.shift();
    if (following) {
      core.current = following.actor;
      core.currentRequest = following.request;
      core.busySinceNs = now;
    } else {
      core.current = null;
      core.currentRequest = null;
    }
    actor.running--;
    if (actor.running === 0) actor.heldBy = -1;
    actor.executed++;
    const latencyNs = now - request.arrivalNs;
    // These cores are NIC cores: this is NIC-side µᵢ (host-side times arrive by recordHostExecution).
    actor.exec.add(execNs);

    let decisions: Decision[] | null = null;
    if (core.role === 'drr') {
      this.#drrLatency.add(latencyNs);
      this.#drrWindowCompletions++;
      this.#drrWindowLatencySumNs += latencyNs;
      this.#drrLastActiveNs = now;
      if (actor.mode === 'drr') this.#drr.charge(actor, execNs);
      const mailboxDecision = this.#checkMailboxOverflow(actor, now);
      if (mailboxDecision) decisions = [mailboxDecision];
      const upgrade = this.#checkUpgrade(now);
      if (upgrade) decisions = appendDecision(decisions, upgrade);
    } else {
      this.#fcfsLatency.add(latencyNs);
      this.#fcfsWindowCompletions++;
      this.#fcfsWindowLatencySumNs += latencyNs;
      // The check's own first test, made here: with downgrade off (most runs) no call per request.
      if (this.settings.enableDowngrade) decisions = this.#checkDowngrade(now);
    }
    if (actor.mode === 'fcfs' && !actor.mailbox.isEmpty()) this.#markReady(actor);
    if (actor.mode === 'drr' && actor.mailbox.isEmpty()) actor.deficitNs = 0;
    if (core.id === this.settings.managementCoreId) {
      const managed = this.manage(now);
      if (managed.length > 0) decisions = decisions ? decisions.concat(managed) : [...managed];
    }
    if (this.#pendingDecisions !== null) {
      decisions = decisions ? this.#pendingDecisions.concat(decisions) : this.#pendingDecisions;
      this.#pendingDecisions = null;
    }
    return decisions ?? NO_DECISIONS;
  }

  /**
   * The management core's checks (Algorithm 1, `core_id == 0`): push and pull migration and core
   * auto-scaling. Called after each request the management core completes, and by the platform
   * when that core is idle, so decisions still happen when it has no work of its own.
   */
  manage(now: number): readonly Decision[] {
    this.#advanceClock(now);
    let decisions: Decision[] | null = null;
    // Each check's own first test, made here (this runs after every request the management core
    // completes): with migration or auto-scaling off there is no call.
    const s = this.settings;
    const migration = s.enableMigration ? this.#checkMigration(now) : null;
    if (migration) decisions = [migration];
    const scale = s.enableAutoscale ? this.#checkAutoscale(now) : null;
    if (scale) decisions = appendDecision(decisions, scale);
    const drrCores = s.enableDowngrade && this.#drr.size > 0 ? this.#checkDrrCores(now) : null;
    if (drrCores) decisions = appendDecision(decisions, drrCores);
    if (this.#pendingDecisions !== null) {
      decisions = decisions ? this.#pendingDecisions.concat(decisions) : this.#pendingDecisions;
      this.#pendingDecisions = null;
    }
    return decisions ?? NO_DECISIONS;
  }

  // ── migration (the runtime runs the four phases; the scheduler keeps the queues right) ──────

  /**
   * Phase 1, Prepare: stop dispatching to the actor. From now on its requests are buffered; its
   * mailbox is handed to the buffer in order (a DRR actor's backlog is what made it migrate, so
   * running it here first would delay the move by exactly that backlog).
   */
  prepareMigration(id: ActorId, to: Domain, now: number): void {
    this.#advanceClock(now);
    const actor = this.#require(id);
    const from: Domain = actor.mode === 'host' ? 'host' : 'nic';
    if (actor.mode === 'migrating' || actor.mode === 'deregistered') {
      throw new SchedulerStateError(`actor ${id} cannot start a migration while ${actor.mode}`);
    }
    if (from === to) throw new SchedulerStateError(`actor ${id} already lives on the ${to}`);
    if (actor.placement !== 'any') {
      throw new SchedulerStateError(`actor ${id} is pinned to the ${actor.placement} and cannot migrate`);
    }
    if (!actor.migrationRequested) this.#migrationsInFlight++;
    actor.migrationRequested = false;
    actor.migrationTarget = to;
    this.#drr.remove(actor);
    actor.mailbox.drainTo((r) => actor.buffered.push(r));
    this.#setMode(actor, 'migrating');
    this.#lastMigrationNs = now;
    this.#afterDrrMembershipChange(now);
  }

  /** Phase 2, Ready: true once no core is still executing the actor. */
  isQuiescent(id: ActorId): boolean {
    return this.#require(id).running === 0;
  }

  /**
   * Phases 3–4 done (state moved): the actor serves from its new side. Returns the requests that
   * were buffered meanwhile, oldest first. Moving to the host, the platform forwards them over the
   * channel (phase 4, Clean) — and with them, behind the buffered ones, the actor's requests still
   * waiting in the shared queue (no core had room to dispatch them yet): the platform then knows
   * it has handed over everything it received for the actor, and can tell the host so (a host
   * sender's later messages, sent straight to the adopted actor, must not overtake them). Moving
   * to the NIC, they are queued here ahead of newer arrivals and the returned array is empty.
   */
  finishMigration(id: ActorId, now: number): R[] {
    this.#advanceClock(now);
    const actor = this.#require(id);
    if (actor.mode !== 'migrating' || actor.migrationTarget === null) {
      throw new SchedulerStateError(`actor ${id} is not migrating`);
    }
    if (actor.running > 0) throw new SchedulerStateError(`actor ${id} still runs on a core; wait for Ready`);
    const to = actor.migrationTarget;
    actor.migrationTarget = null;
    this.#migrationsInFlight--;
    this.#lastMigrationNs = now;
    // The move starts a new account of the FCFS mean: a push must be justified by what came after
    // it (`#fcfsMeanSinceMove`).
    this.#meanAtMoveNs = this.#fcfsLatency.mean;
    this.#sinceMoveRetained = 1;
    this.#sinceMoveFromSamples = this.#fcfsLatency.samples;
    // The actor's request rate does not change because it moved: each side's count carries over
    // (on the host, requests from host actors no longer pass the NIC; back on the NIC, they do).
    if (to === 'host') {
      actor.hostRate.set(actor.rate.value);
      this.#setMode(actor, 'host');
      const out: R[] = [];
      actor.buffered.drainTo((r) => out.push(r));
      this.#takeShared(id, out);
      return out;
    }
    actor.rate.set(Math.max(actor.rate.value, actor.hostRate.value));
    actor.buffered.drainTo((r) => actor.mailbox.push(r));
    if (this.policy === 'drr') {
      // DRR-only has no FCFS core: the actor rejoins the DRR group with its backlog.
      this.#setMode(actor, 'drr');
      this.#drr.add(actor);
    } else {
      this.#setMode(actor, 'fcfs');
      if (!actor.mailbox.isEmpty()) this.#markReady(actor);
    }
    return [];
  }

  /**
   * Moves `id`'s requests out of the shared queue onto `out`, in order, counted as arrivals as
   * dispatch would count them; the others stay in the queue in their order. O(queue length), once
   * per migration to the host.
   */
  #takeShared(id: ActorId, out: R[]): void {
    if (this.#shared.isEmpty()) return;
    const actor = this.#require(id);
    const others: R[] = [];
    this.#shared.drainTo((r) => {
      if (r.actor === id) {
        this.#countArrival(actor, r);
        out.push(r);
      } else others.push(r);
    });
    for (const r of others) this.#shared.push(r);
  }

  /** The platform declined a migrate decision (e.g. the host side is full): forget it. */
  abandonMigration(id: ActorId): void {
    const actor = this.#require(id);
    if (!actor.migrationRequested) return;
    // A pull that never happened neither held nor bounced.
    if (actor.migrationTarget === 'nic' && actor === this.#lastPulled) this.#lastPulled = null;
    actor.migrationRequested = false;
    actor.migrationTarget = null;
    this.#migrationsInFlight--;
  }

  /**
   * A request the platform steered around the shared queue (an off-path NIC switch sending a host
   * actor's flow straight to the host): counted so the actor's rate and load stay known.
   */
  noteSteeredArrival(request: R): void {
    const actor = this.#actorOf(request.actor);
    if (actor) this.#countArrival(actor, request);
  }

  /**
   * Host-side execution times (reported across the channel) for the pull decision and reports;
   * each also counts toward the actor's host-side rate (see `ActorRecord.hostRate`).
   */
  recordHostExecution(id: ActorId, executedNs: number): void {
    const actor = this.#require(id);
    actor.hostExec.add(executedNs);
    actor.hostRate.accumulate(1);
  }

  /**
   * Busy time outside `exec` (dispatching, forwarding, pushing to mailboxes) that the platform
   * charged to a core, so utilisation counts it.
   */
  recordOverhead(coreId: number, busyNs: number): void {
    this.#core(coreId).utilization.accumulate(busyNs);
  }

  // ── inspection ──────────────────────────────────────────────────────────────────────────────

  /** True when some core could get work now: the shared queue, a ready FCFS actor, or a DRR backlog. */
  hasQueuedWork(): boolean {
    // The DRR group is empty in most runs: its backlog scan (a call and an iterator) is skipped then.
    return (
      !this.#shared.isEmpty() || !this.#ready.isEmpty() || (this.#drr.size > 0 && this.#drr.hasBacklog())
    );
  }

  get sharedQueueLength(): number {
    return this.#shared.length;
  }

  /** Requests held anywhere in the scheduler (queued, in mailboxes, buffered or running). */
  heldRequests(): number {
    let held = this.#shared.length;
    for (const actor of this.#actors.values()) held += actor.mailbox.length + actor.buffered.length;
    for (const core of this.#cores) if (core.currentRequest) held += 1 + core.next.length;
    return held;
  }

  view(): SchedulerView {
    const actors: ActorSchedView[] = [];
    for (const a of this.#actors.values()) {
      actors.push({
        id: a.id,
        mode: a.mode,
        execMeanNs: a.exec.mean,
        execStdDevNs: a.exec.stdDev,
        dispersionNs: a.exec.tail,
        meanRequestBytes: a.requestBytes.mean,
        ratePerSec: a.ratePerSec(),
        loadCores: a.loadCores(),
        mailboxLength: a.mailbox.length,
        bufferedLength: a.buffered.length,
        deficitNs: a.deficitNs,
        executed: a.executed,
      });
    }
    const cores: CoreSchedView[] = this.#cores.map((c) => ({
      id: c.id,
      role: c.role,
      utilization: c.utilization.value,
      busy: c.current !== null,
    }));
    return {
      atNs: this.#lastNowNs,
      fcfs: {
        meanNs: this.#fcfsLatency.mean,
        tailNs: this.#fcfsLatency.tail,
        utilization: this.#groupUtilization('fcfs'),
        cores: this.#countRole('fcfs'),
      },
      drr: {
        meanNs: this.#drrLatency.mean,
        tailNs: this.#drrLatency.tail,
        utilization: this.#groupUtilization('drr'),
        cores: this.#countRole('drr'),
      },
      sharedQueueLength: this.#shared.length,
      actors,
      cores,
    };
  }

  // ── decisions ───────────────────────────────────────────────────────────────────────────────

  /**
   * Downgrade (Algorithm 1): the FCFS tail is over Tail_thresh → the highest-dispersion FCFS actor
   * moves to DRR. Only an actor whose own dispersion is at least the upgrade band qualifies:
   * downgrading an actor that would immediately qualify for upgrade cannot fix the tail (the tail
   * is then queueing from load, which push migration handles) and would only flap.
   */
  #checkDowngrade(now: number): Decision[] | null {
    const s = this.settings;
    if (!s.enableDowngrade || now - this.#lastModeChangeNs < s.settleNs) return null;
    if (!this.#fcfsLatency.tailExceeds(s.tailThreshNs)) return null;
    const tail = this.#fcfsLatency.tail;
    // A DRR core must come from an FCFS core other than the management core.
    if (this.#countRole('drr') === 0 && this.#lastFcfsCoreId() < 0) return null;
    const band = (1 - s.alpha) * s.tailThreshNs;
    let candidate: ActorRecord<R> | null = null;
    const warm = this.#warmSamples;
    for (const a of this.#actors.values()) {
      if (a.mode !== 'fcfs' || a.exec.samples === 0) continue;
      // Decide on settled statistics only: an estimate from a handful of samples is noise.
      if (a.exec.samples < warm) return null;
      if (a.exec.tail < band) continue;
      if (!candidate || a.exec.tail > candidate.exec.tail) candidate = a;
    }
    if (!candidate) return null;
    // Downgrading helps only if it separates the tail's cause from the rest: the execution-time
    // tail of the FCFS actors that would stay (their rate-weighted mixture, µ+3σ) must fall under
    // the band. Among actors of similar dispersion, or for a lone actor, that never holds: moving
    // one to DRR would only take cores from FCFS without shortening anyone's tail.
    const remainingTail = this.#fcfsMixtureTail(candidate);
    if (!(remainingTail < band)) return null;
    this.#setMode(candidate, 'drr');
    this.#drr.add(candidate);
    this.#lastModeChangeNs = now;
    this.#drrLastActiveNs = now;
    // "A DRR core is created if none exists" — then sized at once to the load the actor brings
    // (its µᵢ·rateᵢ is known from its FCFS time), rather than waiting for the 95% rule.
    if (this.#countRole('drr') === 0) this.#assignRole(this.#lastFcfsCoreId(), 'drr');
    const sizing = this.#checkAutoscale(now, true);
    const downgrade: Decision = {
      kind: 'downgrade',
      actor: candidate.id,
      atNs: now,
      fcfsTailNs: tail,
      tailThreshNs: s.tailThreshNs,
      dispersionNs: candidate.exec.tail,
      why:
        `FCFS tail ${us(tail)} > Tail_thresh ${us(s.tailThreshNs)}; ${this.#nameOf(candidate.id)} has the highest ` +
        `dispersion (µ+3σ = ${us(candidate.exec.tail)}), so it moves to DRR`,
    };
    return sizing ? [downgrade, sizing] : [downgrade];
  }

  /**
   * Upgrade (Algorithm 2): the lowest-dispersion DRR actor returns to FCFS when its own
   * dispersion and the FCFS tail are both below (1−α)·Tail_thresh. The paper's pseudo-code tests
   * only "T_tail"; the FCFS tail alone always recovers right after a downgrade (the offender has
   * left), so testing it alone would upgrade the offender straight back and flap.
   */
  #checkUpgrade(now: number): Decision | null {
    const s = this.settings;
    if (!s.enableDowngrade || now - this.#lastModeChangeNs < s.settleNs) return null;
    const band = (1 - s.alpha) * s.tailThreshNs;
    if (!this.#fcfsLatency.tailBelow(band)) return null;
    const fcfsTail = this.#fcfsLatency.tail;
    let candidate: ActorRecord<R> | null = null;
    for (const a of this.#drr.members()) {
      if (a.exec.samples === 0) continue;
      if (!candidate || a.exec.tail < candidate.exec.tail) candidate = a;
    }
    if (!candidate || candidate.exec.tail >= band) return null;
    this.#drr.remove(candidate);
    this.#setMode(candidate, 'fcfs');
    if (!candidate.mailbox.isEmpty()) this.#markReady(candidate);
    this.#lastModeChangeNs = now;
    this.#afterDrrMembershipChange(now);
    return {
      kind: 'upgrade',
      actor: candidate.id,
      atNs: now,
      fcfsTailNs: fcfsTail,
      dispersionNs: candidate.exec.tail,
      bandNs: band,
      why:
        `${this.#nameOf(candidate.id)}'s dispersion ${us(candidate.exec.tail)} and the FCFS tail ${us(fcfsTail)} are ` +
        `below (1−α)·Tail_thresh = ${us(band)}, so it returns to FCFS`,
    };
  }

  /** Algorithm 2's last line: a DRR actor whose mailbox exceeds Q_thresh is pushed to the host. */
  #checkMailboxOverflow(actor: ActorRecord<R>, now: number): Decision | null {
    const s = this.settings;
    if (!s.enableMigration || actor.mode !== 'drr' || !actor.migratable()) return null;
    if (actor.mailbox.length <= s.queueThresh || this.#migrationsInFlight > 0) return null;
    return this.#requestMigration(
      actor,
      'host',
      now,
      'mailbox-length',
      `DRR ${this.#nameOf(actor.id)}'s mailbox holds ${actor.mailbox.length} > Q_thresh ${s.queueThresh}, ` +
        'so it moves to the host',
    );
  }

  /** Push on FCFS mean latency, or pull when the NIC has headroom (Algorithm 1, management core). */
  #checkMigration(now: number): Decision | null {
    const s = this.settings;
    if (!s.enableMigration || this.#migrationsInFlight > 0 || now - this.#lastMigrationNs < s.settleNs)
      return null;
    if (this.#fcfsLatency.samples === 0) return null;
    const mean = this.#fcfsLatency.mean;
    if (mean > s.meanThreshNs) {
      if (this.#fcfsLatency.samples < s.pushWarmupCompletions) return null;
      // A push answers the NIC's latency since the last move, not the latency that move already
      // answered: the evidence gathered since it (completions, and the time-bound's readings) must
      // be over Mean_thresh on its own. With no evidence yet, or with the mean still high only
      // because of the waits of an actor that has left (RTA's counters: their mailbox waits kept
      // the mean up while the rankers' few fast requests barely moved it), pushing the next actor
      // frees nothing — live, a node's cold start-up pushed every NIC actor this way, one settle
      // period apart (docs/apps/rkv-cluster.md "Where a SET waits"; docs/scheduler.md, decision 9).
      const sinceMove = this.#fcfsMeanSinceMove();
      if (!(sinceMove > s.meanThreshNs)) return null;
      let candidate: ActorRecord<R> | null = null;
      for (const a of this.#actors.values()) {
        if ((a.mode !== 'fcfs' && a.mode !== 'drr') || !a.migratable()) continue;
        if (!candidate || a.loadCores() > candidate.loadCores()) candidate = a;
      }
      if (!candidate) return null;
      return this.#requestMigration(
        candidate,
        'host',
        now,
        'mean-latency',
        `FCFS mean ${us(mean)}${sinceMove === mean ? '' : ` (${us(sinceMove)} since the last move)`} > Mean_thresh ` +
          `${us(s.meanThreshNs)}; ${this.#nameOf(candidate.id)} carries the most ` +
          `NIC load (${candidate.loadCores().toFixed(2)} cores), so it moves to the host`,
      );
    }
    if (mean >= (1 - s.alpha) * s.meanThreshNs) return null;
    const fcfsCores = this.#countRole('fcfs');
    if (this.#hostActors === 0 || fcfsCores < 2 || now < this.#pullNotBeforeNs) return null;
    const spare = (fcfsCores - 1) / fcfsCores;
    const utilization = this.#groupUtilization('fcfs');
    if (utilization >= spare) return null;
    let candidate: ActorRecord<R> | null = null;
    for (const a of this.#actors.values()) {
      if (a.mode !== 'host' || !a.migratable()) continue;
      if (!candidate || a.loadCores() < candidate.loadCores()) candidate = a;
    }
    if (!candidate) return null;
    // Pull only what fits, or it is pushed straight back (the push/pull flap the α band alone
    // cannot stop): the actor's load must leave the FCFS group under its spare line, and — since
    // a high-dispersion actor will be downgraded and take cores for DRR — the whole NIC too.
    const load = candidate.loadCores();
    const fcfsLoad = this.#groupLoadCores('fcfs');
    const nicLoad = fcfsLoad + this.#groupLoadCores('drr');
    const nicCores = this.#cores.length;
    const projectedFcfs = (fcfsLoad + load) / fcfsCores;
    const projectedNic = (nicLoad + load) / nicCores;
    if (projectedFcfs >= spare || projectedNic >= (nicCores - 1) / nicCores) return null;
    // An exclusive actor runs on one core at a time: more than one core's worth of load can never
    // be served on the NIC, however many cores are free (its mailbox would overflow Q_thresh again).
    if (candidate.exclusive && load >= s.scaleUpUtilization) return null;
    return this.#requestMigration(
      candidate,
      'nic',
      now,
      'pull-headroom',
      `FCFS mean ${us(mean)} < (1−α)·Mean_thresh ${us((1 - s.alpha) * s.meanThreshNs)}; with ` +
        `${this.#nameOf(candidate.id)}'s ${load.toFixed(2)} cores FCFS load goes to ${pct(projectedFcfs)} of ` +
        `${fcfsCores} cores and NIC load to ${pct(projectedNic)}, both under the spare line, and it adds the ` +
        'least load, so it comes back to the NIC',
    );
  }

  /**
   * Core auto-scaling: FCFS cores become DRR cores when the DRR group's load reaches 95% of its
   * cores and the FCFS group can spare them; symmetrically DRR cores return when the FCFS group
   * reaches 95% and the DRR group can spare them. The management core never changes role.
   *
   * A group's load, in cores, is the larger of its measured utilisation and its actors' offered
   * load Σ µᵢ·rateᵢ. Measured utilisation alone cannot exceed 100% and its EWMA needs several ms to
   * climb, so an overloaded DRR group overflowed Q_thresh before the 95% rule could add a core, and
   * the actor was pushed to the host, pulled back and downgraded again in a cycle (seen in the
   * walkthrough with a 71 µs flow classifier). Offered load shows the overload at once, and moving
   * as many cores as it calls for (not one per settle period) keeps DRR actors on the NIC when the
   * NIC has the cores. See docs/scheduler.md.
   */
  #checkAutoscale(now: number, force = false): Decision | null {
    const s = this.settings;
    if (!s.enableAutoscale || (!force && now - this.#lastScaleNs < s.settleNs)) return null;
    const n = this.#countRole('fcfs');
    const m = this.#countRole('drr');
    if (m === 0) return null;
    const fcfsLoad = this.#groupLoadCores('fcfs');
    const drrLoad = this.#groupLoadCores('drr');
    const line = s.scaleUpUtilization;
    if (drrLoad >= line * m && fcfsLoad < n - 1) {
      const wanted = Math.ceil(drrLoad / line) - m;
      const fcfsNeeded = Math.max(1, Math.ceil(fcfsLoad / line));
      const moved = this.#moveCores('fcfs', 'drr', Math.min(wanted, n - fcfsNeeded));
      if (moved.length === 0) return null;
      this.#lastScaleNs = now;
      return this.#scaleDecision(
        moved,
        'fcfs',
        'drr',
        now,
        fcfsLoad / n,
        drrLoad / m,
        `DRR load ${drrLoad.toFixed(2)} cores on ${m} DRR core(s) ≥ ${pct(line)} and FCFS (${n} cores, load ` +
          `${fcfsLoad.toFixed(2)}) can spare ${moved.length}, so core(s) ${moved.join(', ')} move to DRR`,
      );
    }
    if (fcfsLoad >= line * n && m >= 2 && drrLoad < m - 1) {
      const wanted = Math.ceil(fcfsLoad / line) - n;
      const drrNeeded = Math.max(1, Math.ceil(drrLoad / line));
      const moved = this.#moveCores('drr', 'fcfs', Math.min(wanted, m - drrNeeded));
      if (moved.length === 0) return null;
      this.#lastScaleNs = now;
      return this.#scaleDecision(
        moved,
        'drr',
        'fcfs',
        now,
        fcfsLoad / n,
        drrLoad / m,
        `FCFS load ${fcfsLoad.toFixed(2)} cores on ${n} FCFS cores ≥ ${pct(line)} and DRR (${m} cores, load ` +
          `${drrLoad.toFixed(2)}) can spare ${moved.length}, so core(s) ${moved.join(', ')} move to FCFS`,
      );
    }
    return null;
  }

  /**
   * No DRR core for a DRR group that has had no work for DRR_IDLE_SETTLES settle periods.
   *
   * A downgraded actor returns to FCFS only on its own evidence (decision 2): its dispersion, an
   * EWMA of its execution times, falls only as its requests run. One that goes quiet keeps its
   * dispersion, stays in DRR, and — upgrades being checked on DRR completions, and auto-scaling
   * never taking a group's last core — kept its DRR core idle for ever: a NIC of n cores served
   * its FCFS load with n − 1 (docs/scheduler.md, decision 13). So a quiet DRR group gives its
   * cores back to FCFS, its actors staying in DRR (their dispersion is still the best evidence of
   * what their requests cost); the next request that reaches one of their mailboxes creates a DRR
   * core again (`#recreateDrrCore`).
   */
  #checkDrrCores(now: number): Decision | null {
    const m = this.#countRole('drr');
    const idleNs = now - this.#drrLastActiveNs;
    if (m === 0 || idleNs < this.#drrIdleWindowNs() || this.#drr.hasBacklog()) return null;
    for (const core of this.#cores) if (core.role === 'drr' && core.current !== null) return null;
    const moved = this.#moveCores('drr', 'fcfs', m);
    if (moved.length === 0) return null;
    this.#lastScaleNs = now;
    this.#drrReleasedAtNs = now;
    return this.#scaleDecision(
      moved,
      'drr',
      'fcfs',
      now,
      this.#groupUtilization('fcfs'),
      0,
      `the DRR group has had no work for ${us(idleNs)}, so core(s) ${moved.join(', ')} return to FCFS ` +
        '(its actors stay in DRR)',
    );
  }

  /** How long the DRR group must have had no work before it gives its cores back. */
  #drrIdleWindowNs(): number {
    return DRR_IDLE_SETTLES * this.settings.settleNs * 2 ** this.#drrIdleDoublings;
  }

  /**
   * A request reached a DRR actor's mailbox and no DRR core exists (the group had given its cores
   * back): one is created at once, as at a downgrade ("a DRR core is created if none exists"), and
   * sized the same way. Done here rather than on the management core's next check, so that no
   * request waits on a platform's idle poll: the decision is handed out by the next `complete` or
   * `manage`.
   */
  #recreateDrrCore(now: number): void {
    if (this.policy !== 'hybrid') return;
    const core = this.#lastFcfsCoreId();
    if (core < 0) return;
    // Back soon after the release: the traffic is sparse, so the group waits longer next time;
    // after a long quiet the window starts from DRR_IDLE_SETTLES again.
    if (now - this.#drrReleasedAtNs < DRR_FLIP_WINDOWS * this.#drrIdleWindowNs())
      this.#drrIdleDoublings = Math.min(this.#drrIdleDoublings + 1, DRR_IDLE_MAX_DOUBLINGS);
    else this.#drrIdleDoublings = 0;
    this.#assignRole(core, 'drr');
    const sizing = this.#checkAutoscale(now, true);
    const moved = sizing?.kind === 'scale' ? [core, ...sizing.cores] : [core];
    const decision = this.#scaleDecision(
      moved,
      'fcfs',
      'drr',
      now,
      this.#groupUtilization('fcfs'),
      this.#groupUtilization('drr'),
      `a DRR actor has a request waiting and no DRR core, so core(s) ${moved.join(', ')} move to DRR`,
    );
    this.#pendingDecisions = appendDecision(this.#pendingDecisions, decision);
  }

  /**
   * µ+3σ of the execution times of the FCFS actors other than `excluded`, as one mixture weighted
   * by each actor's rate (its sample count before rates exist). NaN when no other actor has data.
   */
  #fcfsMixtureTail(excluded: ActorRecord<R>): number {
    let weight = 0;
    let mean = 0;
    let secondMoment = 0;
    for (const a of this.#actors.values()) {
      if (a === excluded || a.mode !== 'fcfs' || a.exec.samples === 0) continue;
      const w = a.rate.value > 0 ? a.rate.value : a.exec.samples;
      const mu = a.exec.mean;
      const sigma = a.exec.stdDev;
      weight += w;
      mean += w * mu;
      secondMoment += w * (sigma * sigma + mu * mu);
    }
    if (weight === 0) return Number.NaN;
    mean /= weight;
    const variance = Math.max(0, secondMoment / weight - mean * mean);
    return mean + 3 * Math.sqrt(variance);
  }

  /** A group's load in cores: max(measured utilisation × cores, Σ µᵢ·rateᵢ of its actors). */
  #groupLoadCores(role: CoreRole): number {
    const mode: ActorMode = role;
    let offered = 0;
    for (const a of this.#actors.values()) if (a.mode === mode) offered += a.loadCores();
    return Math.max(this.#groupUtilization(role) * this.#countRole(role), offered);
  }

  /** Moves up to `count` cores between roles (never the management core); returns their ids. */
  #moveCores(from: CoreRole, to: CoreRole, count: number): number[] {
    const moved: number[] = [];
    for (let i = 0; i < count; i++) {
      const core = from === 'fcfs' ? this.#lastFcfsCoreId() : this.#firstDrrCoreId();
      if (core < 0) break;
      this.#assignRole(core, to);
      moved.push(core);
    }
    return moved;
  }

  #scaleDecision(
    cores: readonly number[],
    from: CoreRole,
    to: CoreRole,
    now: number,
    fcfsUtil: number,
    drrUtil: number,
    why: string,
  ): Decision {
    return {
      kind: 'scale',
      cores,
      from,
      to,
      atNs: now,
      fcfsUtilization: fcfsUtil,
      drrUtilization: drrUtil,
      why,
    };
  }

  #requestMigration(
    actor: ActorRecord<R>,
    to: Domain,
    now: number,
    trigger: 'mean-latency' | 'mailbox-length' | 'pull-headroom',
    why: string,
  ): Decision {
    actor.migrationRequested = true;
    actor.migrationTarget = to;
    const settle = this.settings.settleNs;
    if (to === 'nic') {
      // The last pull held (its actor is still off the host a window after it): the run ends.
      const last = this.#lastPulled;
      if (last !== null && last.mode !== 'host' && now - last.pulledAtNs >= BOUNCE_WINDOW_SETTLES * settle)
        this.#bounces = 0;
      actor.pulledAtNs = now;
      this.#lastPulled = actor;
    } else if (now - actor.pulledAtNs >= BOUNCE_WINDOW_SETTLES * settle) {
      // Pushed, but long after its pull: that pull held, and the run of bounces is over.
      if (actor === this.#lastPulled) this.#bounces = 0;
    } else {
      // Pulled and pushed straight back: on a live machine whose other load makes even a light NIC
      // slow, the mean reads 0 with every actor on the host and over Mean_thresh with one back, and
      // the node pulled and pushed its actors in turn every few settle periods (28 moves in the
      // showcase's 1.6 s, each a pull and a push of one actor after another): a bounce says the NIC
      // has no room whatever the mean, so the node waits longer after each before pulling again.
      const doublings = Math.min(this.#bounces, BOUNCE_MAX_DOUBLINGS);
      this.#bounces++;
      this.#pullNotBeforeNs = now + BOUNCE_FIRST_BACKOFF_SETTLES * settle * 2 ** doublings;
    }
    this.#migrationsInFlight++;
    this.#lastMigrationNs = now;
    return { kind: 'migrate', actor: actor.id, to, atNs: now, trigger, loadCores: actor.loadCores(), why };
  }

  /** With no DRR actor left, DRR cores have nothing to do: they all return to FCFS. */
  #afterDrrMembershipChange(_now: number): void {
    if (this.policy !== 'hybrid' || this.#drr.size > 0) return;
    for (const core of this.#cores)
      if ((core.pendingRole ?? core.role) === 'drr') this.#assignRole(core.id, 'fcfs');
  }

  /**
   * The mean of the FCFS latency evidence gathered since the last migration finished. The EWMA
   * mean is r·m₀ + (1 − r)·P, where m₀ was the mean when the move finished, r the weight m₀ still
   * has and P the weighted mean of everything after it; this solves for P. NaN with no evidence
   * since the move (r = 1).
   */
  #fcfsMeanSinceMove(): number {
    const latency = this.#fcfsLatency;
    const retained = this.#sinceMoveRetained * latency.retainedSince(this.#sinceMoveFromSamples);
    if (retained === 0) return latency.mean;
    if (retained >= 1) return Number.NaN;
    return (latency.mean - retained * this.#meanAtMoveNs) / (1 - retained);
  }

  /**
   * The FCFS latency mean's bound in time, applied as each statistics window closes.
   *
   * The EWMA moves only when FCFS requests complete (1/256 per completion). When few complete —
   * the actors that made the mean high were pushed away and the few left barely move it, or no
   * actor is left on the NIC and nothing moves it at all — the mean is a reading of requests long
   * gone: RTA pushed its small actors one per settle period on its counters' old mailbox waits,
   * and with every actor on the host the pull condition (mean under (1−α)·Mean_thresh) never
   * held again, whatever the load (docs/scheduler.md, decision 9). Algorithm 1 compares the NIC's
   * *current* latency with the thresholds. So the mean also forgets with time, at the same rate
   * as the rates and utilisations the push and pull checks read beside it: each window may leave
   * at most 1 − `windowEwmaWeight` of the mean standing (a ~3 ms memory at the defaults). Where
   * the window's completions already moved it that far (at the defaults, 9 or more completions
   * per 100 µs window) nothing changes; otherwise the rest of the weight goes to the window's
   * reading of the FCFS side:
   *   - the mean latency of the window's FCFS completions, if any;
   *   - else the age of the oldest request the FCFS side holds (shared queue, an FCFS actor's
   *     mailbox, a request running on an FCFS core): a lower bound on the latency of the next
   *     FCFS completion — a stuck NIC reads as ever slower, never as idle;
   *   - else 0: an idle NIC makes no request wait.
   * `windows` > 1 closes that many windows at once (no core busy throughout, no completions).
   */
  #boundFcfsLatencyInTime(windowEndNs: number, windows: number, oldestHeldArrivalNs: number): void {
    const latency = this.#fcfsLatency;
    const completions = this.#fcfsWindowCompletions;
    const latencySumNs = this.#fcfsWindowLatencySumNs;
    const fromSamples = this.#fcfsSamplesAtWindowStart;
    this.#fcfsWindowCompletions = 0;
    this.#fcfsWindowLatencySumNs = 0;
    this.#fcfsSamplesAtWindowStart = latency.samples;
    // No completion yet: there is no mean to keep current (and no push or pull is decided).
    if (latency.samples === 0) return;
    const sinceMove = this.#sinceMoveRetained * latency.retainedSince(this.#sinceMoveFromSamples);
    this.#sinceMoveFromSamples = latency.samples;
    const weight = this.#boundLatencyInTime(
      latency,
      fromSamples,
      completions,
      latencySumNs,
      windowEndNs,
      windows,
      oldestHeldArrivalNs,
    );
    this.#sinceMoveRetained = sinceMove * (1 - weight);
  }

  /**
   * The DRR group's latency, bounded in time by the same rule as the FCFS latency's (readings: the
   * window's DRR completions' mean latency, else the age of the oldest request a DRR actor holds,
   * else 0). Only `view()` reads it.
   */
  #boundDrrLatencyInTime(windowEndNs: number, windows: number, oldestHeldArrivalNs: number): void {
    const latency = this.#drrLatency;
    const completions = this.#drrWindowCompletions;
    const latencySumNs = this.#drrWindowLatencySumNs;
    const fromSamples = this.#drrSamplesAtWindowStart;
    this.#drrWindowCompletions = 0;
    this.#drrWindowLatencySumNs = 0;
    this.#drrSamplesAtWindowStart = latency.samples;
    if (latency.samples === 0) return;
    this.#boundLatencyInTime(
      latency,
      fromSamples,
      completions,
      latencySumNs,
      windowEndNs,
      windows,
      oldestHeldArrivalNs,
    );
  }

  /**
   * Leaves at most 1 − `windowEwmaWeight` per window (`windows` of them) of `latency`'s estimate
   * as it stood after `fromSamples` samples: where the window's completions did not move it that
   * far, the rest of the weight goes to the window's reading (its completions' mean latency; with
   * none, the age of the oldest held request; with none held, 0). Returns that weight (0 when the
   * completions sufficed).
   */
  #boundLatencyInTime(
    latency: Ewma,
    fromSamples: number,
    completions: number,
    latencySumNs: number,
    windowEndNs: number,
    windows: number,
    oldestHeldArrivalNs: number,
  ): number {
    const bySamples = latency.retainedSince(fromSamples);
    const allowed = windows === 1 ? this.#retainedPerWindow : this.#retainedPerWindow ** windows;
    if (bySamples <= allowed) return 0;
    const weight = 1 - allowed / bySamples;
    let readingNs = 0;
    if (completions > 0) readingNs = latencySumNs / completions;
    else if (oldestHeldArrivalNs < windowEndNs) readingNs = windowEndNs - oldestHeldArrivalNs;
    latency.observe(readingNs, weight);
    return weight;
  }

  /** The arrival time of the oldest request the DRR side holds (its actors' mailboxes, its cores). */
  #oldestDrrHeldArrivalNs(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const core of this.#cores) {
      if (core.role === 'drr' && core.currentRequest !== null && core.currentRequest.arrivalNs < oldest)
        oldest = core.currentRequest.arrivalNs;
    }
    for (const actor of this.#drr.members()) {
      const head = actor.mailbox.peek();
      if (head !== undefined && head.arrivalNs < oldest) oldest = head.arrivalNs;
    }
    return oldest;
  }

  /** The arrival time of the oldest request the FCFS side holds, or +∞ when it holds none. */
  #oldestFcfsHeldArrivalNs(): number {
    let oldest = this.#shared.peek()?.arrivalNs ?? Number.POSITIVE_INFINITY;
    for (const core of this.#cores) {
      // A core's held requests run in order: the current one is the oldest.
      if (core.role === 'fcfs' && core.currentRequest !== null && core.currentRequest.arrivalNs < oldest)
        oldest = core.currentRequest.arrivalNs;
    }
    for (const actor of this.#actors.values()) {
      if (actor.mode !== 'fcfs') continue;
      const head = actor.mailbox.peek();
      if (head !== undefined && head.arrivalNs < oldest) oldest = head.arrivalNs;
    }
    return oldest;
  }

  // ── helpers ─────────────────────────────────────────────────────────────────────────────────

  #start(core: CoreRecord<R>, actor: ActorRecord<R>, request: R, now: number): Work<R> {
    if (core.current) core.next.push({ actor, request });
    else {
      core.current = actor;
      core.currentRequest = request;
      core.busySinceNs = now;
    }
    actor.running++;
    actor.heldBy = core.id;
    const work = core.execWork;
    work.request = request;
    return work as Work<R>;
  }

  /** Every mode change goes through here so the host-actor count stays exact. */
  #setMode(actor: ActorRecord<R>, mode: ActorMode): void {
    if (actor.mode === 'host') this.#hostActors--;
    if (mode === 'host') this.#hostActors++;
    actor.mode = mode;
  }

  #markReady(actor: ActorRecord<R>): void {
    if (actor.inReadyList) return;
    actor.inReadyList = true;
    this.#ready.push(actor);
  }

  #countArrival(actor: ActorRecord<R>, request: R): void {
    actor.rate.accumulate(1);
    actor.requestBytes.add(request.sizeBytes);
  }

  #hasRoom(core: CoreRecord<R>): boolean {
    if (core.current === null) return true;
    return (
      core.role === 'fcfs' && core.pendingRole === null && 1 + core.next.length < this.settings.coreQueueDepth
    );
  }

  /**
   * An exclusive actor runs on one core at a time; with queue depths above 1 the core already
   * holding its requests may take more of them (it runs them one after another, in order).
   */
  #heldElsewhere(actor: ActorRecord<R>, core: CoreRecord<R>): boolean {
    return actor.exclusive && actor.running > 0 && actor.heldBy !== core.id;
  }

  #coreWithRoom(coreId: number, role: CoreRole, now: number): CoreRecord<R> | null {
    const core = this.#core(coreId);
    if (!this.#hasRoom(core)) {
      throw new SchedulerStateError(
        this.settings.coreQueueDepth === 1
          ? `core ${coreId} asked for work while still running a request`
          : `core ${coreId} asked for work without room (it holds ${1 + core.next.length} of ${this.settings.coreQueueDepth}; ` +
              'a DRR core, or one changing role, takes work only when idle): check coreHasRoom first',
      );
    }
    this.#advanceClock(now);
    // A role change waits until the core has run what it holds (#hasRoom refuses until then).
    if (core.pendingRole) {
      core.role = core.pendingRole;
      core.pendingRole = null;
    }
    return core.role === role ? core : null;
  }

  #assignRole(coreId: number, role: CoreRole): void {
    const core = this.#core(coreId);
    const before = core.pendingRole ?? core.role;
    if (before !== role) {
      if (role === 'fcfs') {
        this.#fcfsCores++;
        this.#drrCores--;
      } else {
        this.#drrCores++;
        this.#fcfsCores--;
      }
    }
    if (core.current) core.pendingRole = role;
    else {
      core.role = role;
      core.pendingRole = null;
    }
  }

  #countRole(role: CoreRole): number {
    return role === 'fcfs' ? this.#fcfsCores : this.#drrCores;
  }

  #groupUtilization(role: CoreRole): number {
    let sum = 0;
    let count = 0;
    for (const core of this.#cores) {
      if ((core.pendingRole ?? core.role) !== role) continue;
      sum += core.utilization.value;
      count++;
    }
    return count === 0 ? 0 : sum / count;
  }

  /** The highest-numbered FCFS core that is not the management core, or −1. */
  #lastFcfsCoreId(): number {
    for (let id = this.#cores.length - 1; id >= 0; id--) {
      const core = this.#cores[id] as CoreRecord<R>;
      if (id !== this.settings.managementCoreId && (core.pendingRole ?? core.role) === 'fcfs') return id;
    }
    return -1;
  }

  /** The lowest-numbered DRR core, or −1. */
  #firstDrrCoreId(): number {
    for (const core of this.#cores) if ((core.pendingRole ?? core.role) === 'drr') return core.id;
    return -1;
  }

  /**
   * Moves time forward, closing statistics windows; time never runs backwards. Windows are closed
   * one at a time so a core busy across several boundaries is charged its busy share of each; a
   * long idle gap (no core busy) is closed in one step, as empty windows.
   */
  #advanceClock(now: number): void {
    if (now < this.#lastNowNs) {
      throw new SchedulerStateError(`time ran backwards: ${now} ns after ${this.#lastNowNs} ns`);
    }
    this.#lastNowNs = now;
    // Three calls per request, nearly all inside the open window: a subtraction and a compare here
    // (small enough to inline), the loop out of line.
    if (now - this.#windowStartNs >= this.#windowNs) this.#closeWindows(now);
  }

  #closeWindows(now: number): void {
    const windowNs = this.#windowNs;
    while (now - this.#windowStartNs >= windowNs) {
      const windows = Math.floor((now - this.#windowStartNs) / windowNs);
      const anyBusy = this.#cores.some((c) => c.current !== null);
      const closing = anyBusy ? 1 : windows;
      const windowEnd = this.#windowStartNs + windowNs;
      for (const core of this.#cores) {
        if (core.current)
          core.utilization.accumulate(windowEnd - Math.max(core.busySinceNs, this.#windowStartNs));
        core.utilization.roll(closing, 1 / windowNs);
      }
      for (const actor of this.#actors.values()) {
        actor.rate.roll(closing, NS_PER_SECOND / windowNs);
        actor.hostRate.roll(closing, NS_PER_SECOND / windowNs);
      }
      const oldestHeld = this.#oldestFcfsHeldArrivalNs();
      this.#boundFcfsLatencyInTime(windowEnd, 1, oldestHeld);
      if (closing > 1)
        this.#boundFcfsLatencyInTime(windowEnd + (closing - 1) * windowNs, closing - 1, oldestHeld);
      // The DRR group is empty in most runs: nothing to keep current until it has had a sample.
      if (this.#drrLatency.samples > 0) {
        const oldestDrrHeld = this.#oldestDrrHeldArrivalNs();
        this.#boundDrrLatencyInTime(windowEnd, 1, oldestDrrHeld);
        if (closing > 1)
          this.#boundDrrLatencyInTime(windowEnd + (closing - 1) * windowNs, closing - 1, oldestDrrHeld);
      }
      this.#windowStartNs += closing * windowNs;
    }
  }

  #core(coreId: number): CoreRecord<R> {
    const core = this.#cores[coreId];
    if (!core) throw new SchedulerStateError(`no core ${coreId} (this scheduler has ${this.#cores.length})`);
    return core;
  }

  /** `#actors.get(id)`, remembering the last hit (requests mostly name the actor before them). */
  #actorOf(id: ActorId): ActorRecord<R> | undefined {
    if (id === this.#lastActorId) return this.#lastActor;
    const actor = this.#actors.get(id);
    if (actor !== undefined) {
      this.#lastActorId = id;
      this.#lastActor = actor;
    }
    return actor;
  }

  #require(id: ActorId): ActorRecord<R> {
    const actor = this.#actors.get(id);
    if (!actor) throw new SchedulerStateError(`actor ${id} is not registered with the scheduler`);
    return actor;
  }
}

/** Decisions are rare: allocate the list only when there is one. */
function appendDecision(list: Decision[] | null, decision: Decision): Decision[] {
  if (!list) return [decision];
  list.push(decision);
  return list;
}

function us(ns: number): string {
  return `${(ns / 1000).toFixed(1)} µs`;
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(0)}%`;
}
