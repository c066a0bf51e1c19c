/**
 * The host domain of a live node (iPipe §4.2, "host side"): worker-thread cores with one queue
 * each, requests steered to them by actor (an exclusive actor always to the same core — its exec
 * lock for free — the others to the shortest queue), pinned actors (storage) living here. It
 * talks to the NIC domain only through the channel, so it runs in the NIC's process or, over
 * TCP, in the host's own process while the NIC domain runs on the card.
 */

import type { AnyActorDefinition } from '../../../actor/define-actor.ts';
import type { Origin } from '../../../actor/envelope.ts';
import { Mailbox } from '../../../actor/mailbox.ts';
import { DmoDomain } from '../../../dmo/domain.ts';
import { ImageAssembler } from '../../../dmo/region-image.ts';
import type { ActorId } from '../../../ids.ts';
import type { Domain } from '../../../sched/types.ts';
import type { CatalogEntry } from './actor-catalog.ts';
import { initialiseActor } from './actor-init.ts';
import {
  type ChannelLink,
  LINK_ADOPTED,
  LINK_DRAINED,
  LINK_IMAGE,
  LINK_IMAGE_DMA,
  LINK_MIGRATE,
  LINK_REQUEST,
  LINK_STOP,
} from './channel-link.ts';
import { runAtWallNs } from './clock.ts';
import {
  type CoreOutput,
  DECODE_FAILED,
  type FrameReader,
  RESULT_DONE,
  RESULT_FAILED,
  readOutputs,
} from './core-protocol.ts';
import { type CoreRingStats, DomainCores } from './domain-cores.ts';
import { HOST_DROP_REASONS, type HostDropReason } from './drop-reasons.ts';
import { LiveRequest } from './live-request.ts';

export interface HostControllerOptions {
  readonly catalog: readonly CatalogEntry[];
  readonly definitions: ReadonlyMap<ActorId, AnyActorDefinition>;
  /** Where each actor starts. */
  readonly initialDomain: ReadonlyMap<ActorId, Domain>;
  readonly cores: number;
  readonly regionBytes: number;
  readonly maxActors: number;
  readonly watchdogMs: number;
  readonly ringBytes: number;
  /** Requests a host core may hold at once (the NIC scheduler's coreQueueDepth; see there). */
  readonly coreQueueDepth: number;
}

/** One host core as `HostController.coreStats` reports it: its rings, and its queue in requests. */
export interface HostCoreStats extends CoreRingStats {
  /** Requests steered to this core that wait in its queue (not yet written to its work ring). */
  readonly queuedRequests: number;
  /** Requests handed to it: in its work ring, or running. */
  readonly heldRequests: number;
}

export class HostController {
  readonly domain: DmoDomain;
  readonly #options: HostControllerOptions;
  readonly #link: ChannelLink;
  readonly #cores: DomainCores;
  readonly #queues: Mailbox<LiveRequest>[] = [];
  /** What each core holds, in the order it runs them. */
  readonly #held: LiveRequest[][] = [];
  /**
   * Per core, the 1 ms retry of a request the ring had no room for, when one is armed: one at a
   * time (every enqueue pumps, and each would otherwise start a loop of its own).
   */
  readonly #pumpRetry: (NodeJS.Timeout | undefined)[] = [];
  #stopping = false;
  /**
   * Set when the channel to the NIC domain closed while this host domain serves (a split node's NIC
   * process ended or the link failed): nothing reaches this side any more — the NIC owns the socket.
   */
  nicLost = false;
  /** Called once when `nicLost` becomes true (the CLI says so and ends the process). */
  onNicLost: (() => void) | undefined;
  /** Actors whose heap is on the host. */
  readonly #resident = new Set<ActorId>();
  /** Actors moving to the NIC: their requests still queued here run first; nothing new is taken. */
  readonly #leaving = new Set<ActorId>();
  /**
   * Actors adopted from the NIC whose buffered requests the NIC has not finished sending on
   * (LINK_DRAINED not read yet), each with the messages this side's own actors and timers sent it
   * meanwhile, held in order: run now, they would overtake their senders' earlier messages still
   * in the NIC's buffer (channel-link.ts, "Per-sender order").
   */
  readonly #draining = new Map<ActorId, LiveRequest[]>();
  readonly #stopped = new Set<ActorId>();
  readonly #assembling = new Map<ActorId, ImageAssembler>();
  readonly executed = new Map<ActorId, number>();
  /** Messages the host refused, by reason (merged into the node's drop counters). */
  readonly drops = new Map<HostDropReason, number>();
  /** Every reason `drops` may count (/metrics exports each from 0). */
  readonly dropReasons: readonly HostDropReason[] = HOST_DROP_REASONS;
  /** Requests a core's work ring had no room for at once (they waited at their queue's head). */
  ringFullHandOffs = 0;

  private constructor(options: HostControllerOptions, link: ChannelLink) {
    this.#options = options;
    this.#link = link;
    this.domain = DmoDomain.create({
      regionBytes: options.regionBytes,
      maxActors: options.maxActors,
      shared: true,
    });
    for (let core = 0; core < options.cores; core++) {
      this.#queues.push(new Mailbox<LiveRequest>());
      this.#held.push([]);
    }
    this.#cores = new DomainCores({
      domain: 'host',
      cores: options.cores,
      domainBuffer: this.domain.buffer as SharedArrayBuffer,
      catalog: options.catalog,
      ringBytes: options.ringBytes,
      watchdogMs: options.watchdogMs,
      onResult: (core, reader) => this.#result(core, reader),
      onWatchdog: (core) => this.#watchdog(core),
      onCoreReady: (core) => this.#pump(core),
    });
  }

  static async start(options: HostControllerOptions, link: ChannelLink): Promise<HostController> {
    const host = new HostController(options, link);
    const initOutputs: [ActorId, CoreOutput[]][] = [];
    for (const entry of options.catalog) {
      if (options.initialDomain.get(entry.id) !== 'host') continue;
      const definition = options.definitions.get(entry.id) as AnyActorDefinition;
      initOutputs.push([
        entry.id,
        initialiseActor(host.domain, entry.id, entry.name, definition, options.definitions),
      ]);
      host.#resident.add(entry.id);
    }
    await host.#cores.start();
    link.onClosed(() => {
      if (host.#stopping) return;
      host.nicLost = true;
      host.onNicLost?.();
    });
    link.listen((kind, actor, reader) => host.#onLink(kind, actor, reader));
    for (const [actor, outputs] of initOutputs) for (const output of outputs) host.#route(output, actor);
    return host;
  }

  get busy(): boolean {
    return this.#held.some((held) => held.length > 0) || this.#queues.some((q) => !q.isEmpty());
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    for (const retry of this.#pumpRetry) if (retry !== undefined) clearTimeout(retry);
    await this.#cores.stop();
  }

  get replacedCores(): number {
    return this.#cores.replacedCores;
  }

  /** Each host core's rings and queue (for metrics: read when scraped, nothing counted per request). */
  coreStats(): HostCoreStats[] {
    return this.#cores.ringStats().map((rings) => ({
      ...rings,
      queuedRequests: this.#queues[rings.core]?.length ?? 0,
      heldRequests: this.#held[rings.core]?.length ?? 0,
    }));
  }

  // ── from the NIC ─────────────────────────────────────────────────────────────────────────────

  #onLink(kind: number, actor: ActorId, reader: FrameReader): void {
    if (kind === LINK_REQUEST) {
      const timerId = reader.u32();
      const origin = reader.origin();
      const payload = reader.bytesField().slice();
      this.#accept(new LiveRequest(actor, origin, payload, timerId));
    } else if (kind === LINK_MIGRATE) {
      // The actor leaves: run what is already queued for it, then send its image.
      this.#leaving.add(actor);
      this.#maybeSendImage(actor);
    } else if (kind === LINK_IMAGE || kind === LINK_IMAGE_DMA) {
      this.#receiveImage(kind, actor, reader);
    } else if (kind === LINK_ADOPTED) {
      // The NIC adopted the actor we sent: let go of our copy.
      this.#leaving.delete(actor);
      this.#resident.delete(actor);
      this.domain.releaseHeap(actor);
      this.#cores.forget(actor);
    } else if (kind === LINK_DRAINED) {
      // Everything the NIC held for the actor is queued here now: the held messages follow it.
      this.#releaseHeld(actor);
    } else if (kind === LINK_STOP) {
      this.#stopped.add(actor);
      // Deregistered while its adoption drained: no LINK_DRAINED will come. What was held for it
      // is refused now, as anything sent to a stopped actor is.
      this.#releaseHeld(actor);
    }
  }

  /** A request for an actor: run it here if the actor lives here; else it goes back to the NIC. */
  #accept(request: LiveRequest): void {
    const actor = request.actor;
    if (this.#stopped.has(actor)) {
      this.#refuse(request.origin, actor, 'IPIPE_ERR_ACTOR_DEREGISTERED', `actor ${actor} was stopped`);
      return;
    }
    if (!this.#resident.has(actor) || this.#leaving.has(actor)) {
      this.#link.request(actor, request.timerId, request.origin, request.payload);
      return;
    }
    let core = actor % this.#queues.length;
    if (!(this.#options.definitions.get(actor)?.exclusive ?? true)) {
      let shortest = Number.POSITIVE_INFINITY;
      for (let c = 0; c < this.#queues.length; c++) {
        const length =
          (this.#queues[c] as Mailbox<LiveRequest>).length + (this.#held[c] as LiveRequest[]).length;
        if (length < shortest) {
          shortest = length;
          core = c;
        }
      }
    }
    (this.#queues[core] as Mailbox<LiveRequest>).push(request);
    this.#pump(core);
  }

  #drop(reason: HostDropReason): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1);
  }

  #refuse(origin: Origin, actor: ActorId, code: string, message: string): void {
    if (origin.kind === 'client') this.#link.error(actor, origin, code, message);
    // An actor's message or a timer has nobody to answer (the core logged a failed handler).
    else this.#drop('unanswerable-refusal');
  }

  // ── cores ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Hands `core` the head of its queue while it holds fewer than coreQueueDepth requests. An
   * exclusive actor's requests are all steered to one core, so holding several keeps them in order.
   */
  #pump(core: number): void {
    const held = this.#held[core] as LiveRequest[];
    const queue = this.#queues[core] as Mailbox<LiveRequest>;
    while (held.length < this.#options.coreQueueDepth && this.#cores.isReady(core)) {
      const request = queue.shift();
      if (!request) return;
      if (this.#stopped.has(request.actor)) {
        this.#refuse(
          request.origin,
          request.actor,
          'IPIPE_ERR_ACTOR_DEREGISTERED',
          `actor ${request.actor} was stopped`,
        );
        continue;
      }
      if (!this.#cores.sendRequest(core, core, request)) {
        // The ring is sized for coreQueueDepth frames of maxFrameBytes, but a bigger message (a
        // peer message rebuilt from fragments, a memtable's run) may find no room until the core
        // consumed what it holds: it waits at the head of the queue, retried as results come back
        // or, when the core holds nothing to answer (its head is published lazily), in 1 ms.
        queue.unshift(request);
        this.ringFullHandOffs++;
        if (held.length === 0) this.#armPumpRetry(core);
        return;
      }
      held.push(request);
    }
  }

  #armPumpRetry(core: number): void {
    if (this.#pumpRetry[core] !== undefined || this.#stopping) return;
    const retry = setTimeout(() => {
      this.#pumpRetry[core] = undefined;
      this.#pump(core);
    }, 1);
    retry.unref();
    this.#pumpRetry[core] = retry;
  }

  #result(core: number, reader: FrameReader): void {
    const request = (this.#held[core] as LiveRequest[]).shift();
    this.#cores.release(core);
    if (!request) return;
    const kind = reader.u8();
    reader.u32();
    const execNs = reader.f64();
    const failedCode = kind === RESULT_FAILED ? reader.text(1) : undefined;
    // Bytes its codec refused never reached the handler: not an execution (the NIC counts the
    // refusal as a `decode` drop when the error reply passes through it, and no DONE).
    if (failedCode !== DECODE_FAILED) {
      this.executed.set(request.actor, (this.executed.get(request.actor) ?? 0) + 1);
      this.#link.done(request.actor, execNs);
    }
    if (failedCode !== undefined) {
      this.#refuse(request.origin, request.actor, failedCode, reader.text(2));
    } else if (kind === RESULT_DONE) {
      const outputs = readOutputs(reader, reader.u16(), request.origin);
      for (const output of outputs ?? []) this.#route(output, request.actor);
    }
    if (this.#leaving.has(request.actor)) this.#maybeSendImage(request.actor);
    this.#pump(core);
  }

  /** The messages held for `actor` while it drained go on, in order (to its queue, or refused if stopped). */
  #releaseHeld(actor: ActorId): void {
    const held = this.#draining.get(actor);
    if (held === undefined) return;
    this.#draining.delete(actor);
    for (const request of held) this.#accept(request);
  }

  /** A message from this side's own actors or timers: held while its target drains (see #draining). */
  #acceptLocal(request: LiveRequest): void {
    const held = this.#draining.get(request.actor);
    if (held !== undefined) held.push(request);
    else this.#accept(request);
  }

  #route(output: CoreOutput, from: ActorId): void {
    if (output.kind === 'reply') {
      if (output.origin.kind === 'client') this.#link.reply(from, output.origin, output.message);
      return;
    }
    if (output.kind === 'timer') {
      runAtWallNs(output.dueAtNs, () => this.#acceptLocal(LiveRequest.timer(output.actor, output.timerId)));
      return;
    }
    this.#acceptLocal(new LiveRequest(output.target, output.origin, output.message, 0));
  }

  #watchdog(core: number): void {
    const held = this.#held[core] as LiveRequest[];
    const request = held.shift();
    // The requests behind the runaway never ran: back to the front of the queue, in order.
    const queue = this.#queues[core] as Mailbox<LiveRequest>;
    for (let i = held.length - 1; i >= 0; i--) queue.unshift(held[i] as LiveRequest);
    held.length = 0;
    if (!request) return;
    const actor = request.actor;
    this.#stopped.add(actor);
    const reason = `its handler ran past the ${this.#options.watchdogMs} ms watchdog`;
    // By name, as the NIC controller says it: the client and the operator know actors by name.
    const name = this.#options.catalog.find((entry) => entry.id === actor)?.name ?? String(actor);
    this.#refuse(
      request.origin,
      actor,
      'IPIPE_ERR_ACTOR_DEREGISTERED',
      `actor ${name} was deregistered: ${reason}`,
    );
    this.#link.stop(actor, reason);
    // Said here, in the process whose core was replaced (in a split node, the host process).
    process.stderr.write(`ipipe: actor ${name} deregistered (${reason}); host core ${core} replaced\n`);
  }

  // ── migration ────────────────────────────────────────────────────────────────────────────────

  /** Ready (host → NIC): nothing of the actor runs or waits here; send its region (Gone). */
  #maybeSendImage(actor: ActorId): void {
    if (this.#held.some((held) => held.some((r) => r.actor === actor))) return;
    if (this.#queues.some((q) => q.toArray().some((r) => r.actor === actor))) return;
    const heap = this.domain.heapOf(actor);
    if (!heap) return;
    this.#link.image(actor, heap);
  }

  /** NIC → host: adopt the region, then tell the NIC to let go and hand over what it buffered. */
  #receiveImage(kind: typeof LINK_IMAGE | typeof LINK_IMAGE_DMA, actor: ActorId, reader: FrameReader): void {
    const chunks = this.#link.imageChunks(kind, reader);
    if (!chunks) {
      this.#drop('stray-image');
      return;
    }
    let assembler = this.#assembling.get(actor);
    if (!assembler) {
      assembler = new ImageAssembler(this.domain, actor, {
        exclusive: this.#options.definitions.get(actor)?.exclusive ?? true,
      });
      this.#assembling.set(actor, assembler);
    }
    const image = assembler.accept(chunks);
    if (image.kind === 'partial') return;
    this.#assembling.delete(actor);
    if (image.kind === 'failed') {
      // A damaged image: nothing adopted, the NIC still holds the actor and its buffered requests.
      this.#drop('corrupt-image');
      process.stderr.write(`ipipe: migration of actor ${actor} to the host failed: ${image.error.message}\n`);
      return;
    }
    this.#resident.add(actor);
    this.#draining.set(actor, []);
    this.#leaving.delete(actor);
    this.#stopped.delete(actor);
    this.#link.control(LINK_ADOPTED, actor);
  }
}
