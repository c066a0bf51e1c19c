/**
 * Several simulated iPipe nodes on one event kernel, joined by a modelled network: what the
 * replicated and distributed applications (RKV's Paxos group, DT's coordinator and participants)
 * need to run on the simulated platform.
 *
 *   node 0 ──port (line rate)──┐                 ┌──port──▶ node 1: ingress FIFO ─▶ rx pipeline ─▶ NIC
 *                              ├── switch ───────┤
 *   clients ───────────────────┘  (wire latency) └──port──▶ node 2 …
 *
 * Each node models its own port, both directions (SimNode: egress FIFO at line rate plus the wire
 * latency, then the receiver's ingress FIFO and receive pipeline), so a frame between nodes costs
 * what a client's request and answer cost. The network adds only what a real fabric adds on top:
 * optional extra latency and jitter (which reorders frames), and injected faults — drops,
 * duplicates and partitions — each drawn from one seeded `Random`, so a run is a function of its
 * seed. Answers to clients are never faulted: the fault model is about the fabric between nodes.
 *
 * Actor ids are global in a cluster: `register` hands out one id per actor and records the actor
 * on every other node as `remote`, so `ctx.send` is location-transparent across nodes exactly as it
 * is across the PCIe channel. Instance names must therefore be unique in the cluster (e.g.
 * `consensus-1`).
 *
 * Crash and restart (`crash`, `restart`): a crashed node loses everything it held — the frames in
 * its queues and pipelines, its actors' DMOs, their timers, its clients' pending answers. The old
 * SimNode object is cut off rather than torn down (its kernel events may still fire, but its
 * timers are cancelled, and whatever it sends or answers is discarded), and frames addressed to
 * the node are lost while it is down. `restart` builds a fresh SimNode at the same address and
 * registers the same actors there again, with the same ids and names, from `init`: what survives
 * a crash is only what the caller keeps outside the nodes (a modelled disk).
 */

import type { ActorRef } from '../../actor/actor-ref.ts';
import type { ActorDefinition, AnyActorDefinition } from '../../actor/define-actor.ts';
import { ConfigError } from '../../errors.ts';
import { type ActorId, actorId, type NodeId } from '../../ids.ts';
import type { Random } from '../../random.ts';
import type { Domain } from '../../sched/types.ts';
import type { EventKernel } from './event-kernel.ts';
import {
  type ReplySink,
  type SimFrame,
  type SimNetworkPort,
  SimNode,
  type SimNodeOptions,
} from './sim-node.ts';
import type { SimTiming } from './timing.ts';

/** The fabric between nodes. Probabilities are per frame; latencies in nanoseconds. */
export interface SimNetworkOptions {
  /** Latency added to every inter-node frame beyond the node ports and wire (default 0). */
  readonly extraLatencyNs?: number;
  /** Uniform extra delay in [0, jitterNs) per frame: frames overtake each other (default 0). */
  readonly jitterNs?: number;
  /** Probability a frame is lost (default 0). */
  readonly dropProbability?: number;
  /** Probability a frame arrives twice (default 0). */
  readonly duplicateProbability?: number;
}

export interface SimClusterOptions {
  readonly kernel: EventKernel;
  /** One timing for every node, or one per node. */
  readonly timing: SimTiming | readonly SimTiming[];
  readonly nodes: number;
  /** Options every node gets (cores, scheduler settings, region size …). */
  readonly node?: Omit<SimNodeOptions, 'id' | 'timing' | 'kernel'>;
  readonly network?: SimNetworkOptions;
  /** Source of the fabric's randomness (jitter and faults); required when any is enabled. */
  readonly random?: Random;
}

/** What crossed the fabric between nodes. */
export interface SimNetworkCounters {
  framesSent: number;
  framesDelivered: number;
  framesDropped: number;
  framesDuplicated: number;
  framesPartitioned: number;
  /** Frames sent to or by a crashed node (and answers a crashed node tried to give). */
  framesCrashed: number;
}

/** What `register` recorded, so `restart` can register the same actor again. */
interface Registration {
  readonly id: ActorId;
  readonly name: string;
  readonly home: number;
  readonly definition: AnyActorDefinition;
  readonly domain: Domain | undefined;
}

export class SimCluster {
  readonly kernel: EventKernel;
  readonly nodes: readonly SimNode[];
  readonly counters: SimNetworkCounters = {
    framesSent: 0,
    framesDelivered: 0,
    framesDropped: 0,
    framesDuplicated: 0,
    framesPartitioned: 0,
    framesCrashed: 0,
  };

  readonly #network: Required<SimNetworkOptions>;
  readonly #random: Random | undefined;
  /** Unordered node pairs that cannot reach each other, as `low:high`. */
  readonly #cut = new Set<string>();
  #nextActorId = 1;
  /** The same array as `nodes`: `restart` puts a fresh node in a crashed one's place. */
  readonly #nodeList: SimNode[];
  readonly #options: SimClusterOptions;
  readonly #port: SimNetworkPort;
  readonly #registrations: Registration[] = [];
  /** Indices of nodes that are down now. */
  readonly #down = new Set<number>();
  /** Node objects of earlier incarnations (crashed): whatever they send is discarded. */
  readonly #dead = new WeakSet<SimNode>();
  /** Crashes so far: until the first, the frame path skips the checks above. */
  #crashes = 0;

  constructor(options: SimClusterOptions) {
    if (!Number.isInteger(options.nodes) || options.nodes < 1) {
      throw new ConfigError('nodes', `must be a positive integer, got ${options.nodes}`);
    }
    const timings = Array.isArray(options.timing) ? options.timing : null;
    if (timings !== null && timings.length !== options.nodes) {
      throw new ConfigError('timing', `needs one timing per node (${options.nodes}), got ${timings.length}`);
    }
    this.kernel = options.kernel;
    this.#network = {
      extraLatencyNs: checkNonNegative('network.extraLatencyNs', options.network?.extraLatencyNs ?? 0),
      jitterNs: checkNonNegative('network.jitterNs', options.network?.jitterNs ?? 0),
      dropProbability: checkProbability('network.dropProbability', options.network?.dropProbability ?? 0),
      duplicateProbability: checkProbability(
        'network.duplicateProbability',
        options.network?.duplicateProbability ?? 0,
      ),
    };
    const random = options.random;
    const needsRandom =
      this.#network.jitterNs > 0 ||
      this.#network.dropProbability > 0 ||
      this.#network.duplicateProbability > 0;
    if (needsRandom && random === undefined) {
      throw new ConfigError('random', 'jitter, drops and duplicates need a seeded Random (pass `random`)');
    }
    this.#random = random;
    const port: SimNetworkPort = {
      transmit: (from, frame, atPortNs) => this.#transmit(from, frame, atPortNs),
      answerClient: (from, frame, atClientNs, ok) => this.#answerClient(from, frame, atClientNs, ok),
    };
    this.#port = port;
    this.#options = options;
    const nodes: SimNode[] = [];
    for (let i = 0; i < options.nodes; i++) nodes.push(this.#makeNode(i));
    this.nodes = nodes;
    this.#nodeList = nodes;
  }

  #makeNode(index: number, firstRequestId = 1): SimNode {
    const options = this.#options;
    const timing = Array.isArray(options.timing)
      ? (options.timing[index] as SimTiming)
      : (options.timing as SimTiming);
    const node = new SimNode({ ...options.node, id: index, timing, kernel: options.kernel, firstRequestId });
    node.attachNetwork(this.#port);
    return node;
  }

  /** The node at `index` (0-based; also its NodeId). */
  node(index: number): SimNode {
    const node = this.nodes[index];
    if (node === undefined) {
      throw new ConfigError('node', `no node ${index}: the cluster has nodes 0..${this.nodes.length - 1}`);
    }
    return node;
  }

  /**
   * Registers an actor on node `at` and makes it addressable from every other node. The instance
   * name (default: the definition's) must be unique in the cluster.
   */
  register<M, R>(
    at: number,
    definition: ActorDefinition<M, R>,
    options: { readonly name?: string; readonly domain?: Domain } = {},
  ): ActorRef<M, R> {
    const home = this.node(at);
    const any = definition as unknown as AnyActorDefinition;
    const name = options.name ?? any.name;
    for (const node of this.nodes) {
      if (node.table.lookupName(name) !== undefined) {
        throw new ConfigError(
          'name',
          `actor name "${name}" is already used in the cluster; give each instance its own name`,
        );
      }
    }
    const id: ActorId = actorId(this.#nextActorId++);
    // Remote rows first: the actor's init may already send to peers registered earlier, and peers
    // registered later learn of it here before they can send to it.
    for (const node of this.nodes) {
      if (node !== home) node.registerRemote(any, { id, name, node: home.id });
    }
    const ref = home.register(definition, { ...options, name, id });
    // Recorded only once registered: `restart` must not re-register an actor whose first
    // registration failed.
    this.#registrations.push({ id, name, home: at, definition: any, domain: options.domain });
    return ref;
  }

  /**
   * A client attached to node `at` sends to an actor on that node (see SimNode.clientSend). To a
   * node that is down nothing is sent: it returns −1 and `sink` is never called, as it is not for
   * a request the node held when it crashed.
   */
  clientSend<M>(
    at: number,
    target: ActorRef<M, unknown>,
    message: M,
    sink: ReplySink,
    packetBytes?: number,
  ): number {
    const node = this.node(at);
    if (this.#down.has(at)) {
      // Nobody listens at a crashed node: the client hears nothing (its own timeout decides).
      this.counters.framesCrashed++;
      return -1;
    }
    // An answer the node gives after it crashed never reaches the client.
    return node.clientSend(
      target,
      message,
      (id, latencyNs, ok, answer, sentAtNs) => {
        if (this.#dead.has(node)) {
          this.counters.framesCrashed++;
          return;
        }
        sink(id, latencyNs, ok, answer, sentAtNs);
      },
      packetBytes,
    );
  }

  /** Whether node `index` is down (crashed and not restarted). */
  isDown(index: number): boolean {
    return this.#down.has(index);
  }

  /**
   * Crashes node `index`: everything in it is lost (see the file header). Its actors stay
   * addressable by id and name; frames to them are lost until `restart`. Throws ConfigError for a
   * node that is already down.
   */
  crash(index: number): void {
    const node = this.node(index);
    if (this.#down.has(index)) {
      throw new ConfigError('crash', `node ${index} is already down; restart it before crashing it again`);
    }
    this.#down.add(index);
    this.#dead.add(node);
    this.#crashes++;
    for (const registration of this.#registrations) {
      if (registration.home !== index) continue;
      let instance: ReturnType<SimNode['instance']>;
      try {
        instance = node.instance(registration.id);
      } catch {
        continue; // mid-migration: no instance to stop; its timers die with the node's outputs
      }
      instance.store.clearTimers();
    }
  }

  /**
   * Restarts a crashed node: a fresh SimNode at the same address, every actor registered there
   * before registered again (same id, name and domain) and initialised from `init` — empty DMOs,
   * no timers. Returns the new node. Throws ConfigError for a node that is not down.
   */
  restart(index: number): SimNode {
    this.node(index);
    if (!this.#down.has(index)) {
      throw new ConfigError('restart', `node ${index} is not down; crash it first`);
    }
    // Request ids continue across incarnations: an answer for a request of the dead incarnation
    // (given by a live node, routed here by port) must not match a new request with the same id.
    const fresh = this.#makeNode(index, this.node(index).nextRequestId);
    this.#nodeList[index] = fresh;
    this.#down.delete(index);
    // Remote rows first (an actor's init may send to peers), then the node's own actors.
    for (const r of this.#registrations) {
      if (r.home !== index)
        fresh.registerRemote(r.definition, { id: r.id, name: r.name, node: this.node(r.home).id });
    }
    for (const r of this.#registrations) {
      if (r.home !== index) continue;
      fresh.register(r.definition, {
        id: r.id,
        name: r.name,
        ...(r.domain === undefined ? {} : { domain: r.domain }),
      });
    }
    return fresh;
  }

  /** Cuts the fabric between nodes `a` and `b` (both directions) until `heal`. */
  partition(a: number, b: number): void {
    this.node(a);
    this.node(b);
    this.#cut.add(pairKey(a, b));
  }

  /** Cuts `node` off from every other node. */
  isolate(node: number): void {
    for (let other = 0; other < this.nodes.length; other++) if (other !== node) this.partition(node, other);
  }

  /** Restores every cut link (or only the one between `a` and `b`). */
  heal(a?: number, b?: number): void {
    if (a === undefined || b === undefined) this.#cut.clear();
    else this.#cut.delete(pairKey(a, b));
  }

  #transmit(from: SimNode, frame: SimFrame, atPortNs: number): void {
    const counters = this.counters;
    counters.framesSent++;
    const row = from.table.lookup(frame.target);
    if (row === undefined || row.location.domain !== 'remote') return;
    const toIndex = row.location.node as NodeId as number;
    const to = this.nodes[toIndex];
    if (to === undefined) return;
    if (this.#crashes > 0 && (this.#down.has(toIndex) || this.#dead.has(from))) {
      counters.framesCrashed++;
      return;
    }
    if (this.#cut.has(pairKey(from.id, to.id))) {
      counters.framesPartitioned++;
      return;
    }
    const network = this.#network;
    const random = this.#random;
    if (random !== undefined && network.dropProbability > 0 && random.next() < network.dropProbability) {
      counters.framesDropped++;
      return;
    }
    const copies =
      random !== undefined && network.duplicateProbability > 0 && random.next() < network.duplicateProbability
        ? 2
        : 1;
    if (copies === 2) counters.framesDuplicated++;
    for (let copy = 0; copy < copies; copy++) {
      const jitter = random !== undefined && network.jitterNs > 0 ? random.next() * network.jitterNs : 0;
      counters.framesDelivered++;
      to.deliverFrameAt(frame, atPortNs + network.extraLatencyNs + jitter);
    }
  }

  #answerClient(from: SimNode, frame: SimFrame, atClientNs: number, ok: boolean): void {
    if (frame.origin.kind !== 'client') return;
    if (this.#dead.has(from)) {
      this.counters.framesCrashed++;
      return;
    }
    this.nodes[frame.origin.endpoint.port]?.deliverClientAnswer(frame, atClientNs, ok);
  }
}

function pairKey(a: number, b: number): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

function checkProbability(path: string, value: number): number {
  if (!(value >= 0 && value <= 1))
    throw new ConfigError(path, `must be a probability in [0, 1], got ${value}`);
  return value;
}

function checkNonNegative(path: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new ConfigError(path, `must be a finite number ≥ 0 (nanoseconds), got ${value}`);
  }
  return value;
}
