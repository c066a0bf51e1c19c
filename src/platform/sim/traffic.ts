/**
 * Simulated clients: open-loop Poisson sources and closed-loop clients with a fixed number of
 * outstanding requests (the paper's experiments use closed-loop clients; the scheduler comparison
 * uses Poisson arrivals). Each records what its requests saw — latency percentiles from an HDR
 * histogram, answers, refusals — from the end of a warm-up onward.
 */

import * as hdr from 'hdr-histogram-js';
import type { ActorRef } from '../../actor/actor-ref.ts';
import type { Random } from '../../random.ts';
import type { EventKernel, EventKind } from './event-kernel.ts';
import type { ReplySink, SimNode } from './sim-node.ts';

/** What a client sends next: a target, a message, and optionally the frame size on the wire. */
export interface NextRequest {
  readonly target: ActorRef<unknown, unknown>;
  readonly message: unknown;
  readonly packetBytes?: number;
}

export type RequestMaker = (random: Random, sequence: number) => NextRequest;

/** Latency and outcome counts of one client population, measured after the warm-up. */
export class LatencyRecorder {
  readonly histogram: hdr.Histogram;
  answered = 0;
  refused = 0;
  #sumNs = 0;
  // `= 0` where declared, the constructor sets the value: a field that starts `undefined` is typed
  // "any value" by V8, so its numbers are boxed and each read checks (see event-heap.ts).
  readonly #fromNs: number = 0;

  constructor(fromNs: number) {
    this.#fromNs = fromNs;
    this.histogram = hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 3_600_000_000_000,
      numberOfSignificantValueDigits: 3,
    });
  }

  record(sentAtNs: number, latencyNs: number, ok: boolean): void {
    if (sentAtNs < this.#fromNs) return;
    if (!ok) {
      this.refused++;
      return;
    }
    this.answered++;
    this.#sumNs += latencyNs;
    this.histogram.recordValue(Math.max(1, Math.round(latencyNs)));
  }

  get meanNs(): number {
    return this.answered === 0 ? 0 : this.#sumNs / this.answered;
  }

  percentileNs(p: number): number {
    return this.answered === 0 ? 0 : this.histogram.getValueAtPercentile(p);
  }
}

/**
 * Poisson arrivals at `ratePerSec` from `startNs` to `endNs`. Its clients only record what they
 * see (passive sinks: no delivery events). With `sendAhead` > 1 it draws that many arrivals at
 * once and hands them to the node ahead of time, one kernel event per batch instead of one per
 * request — only when it is the node's sole client, since sends must reach the node's ingress
 * FIFO in time order.
 */
export class OpenLoopSource {
  readonly recorder: LatencyRecorder;
  sent = 0;
  readonly #node: SimNode;
  readonly #kernel: EventKernel;
  readonly #random: Random;
  readonly #make: RequestMaker;
  // `= 0` where declared, the constructor sets the value: a field that starts `undefined` is typed
  // "any value" by V8, so its numbers are boxed and each read checks (see event-heap.ts).
  readonly #meanGapNs: number = 0;
  readonly #endNs: number = 0;
  readonly #sendAhead: number = 0;
  readonly #kind: EventKind;
  #nextNs: number = 0;

  constructor(options: {
    readonly node: SimNode;
    readonly random: Random;
    readonly ratePerSec: number;
    readonly make: RequestMaker;
    readonly startNs?: number;
    readonly endNs: number;
    readonly measureFromNs?: number;
    readonly sendAhead?: number;
  }) {
    this.#node = options.node;
    this.#kernel = options.node.kernel;
    this.#random = options.random;
    this.#make = options.make;
    this.#meanGapNs = 1e9 / options.ratePerSec;
    this.#endNs = options.endNs;
    this.#sendAhead = Math.max(1, Math.floor(options.sendAhead ?? 1));
    this.recorder = new LatencyRecorder(options.measureFromNs ?? 0);
    this.#kind = this.#kernel.registerKind(() => this.#fire(), 'open-loop-send');
    this.#nextNs = this.#gapFrom(options.startNs ?? this.#kernel.now());
    if (this.#nextNs < this.#endNs) this.#kernel.schedule(this.#kind, this.#nextNs, 0, 0);
  }

  readonly #sink: ReplySink = (_id, latencyNs, ok, _reply, sentAtNs) =>
    this.recorder.record(sentAtNs, latencyNs, ok);

  #fire(): void {
    // Send the arrival due now and up to sendAhead − 1 later ones, then wake at the next one.
    for (let i = 0; i < this.#sendAhead && this.#nextNs < this.#endNs; i++) {
      const next = this.#make(this.#random, this.sent++);
      this.#node.clientSend(next.target, next.message, this.#sink, next.packetBytes, {
        atNs: this.#nextNs,
        passive: true,
      });
      this.#nextNs = this.#gapFrom(this.#nextNs);
    }
    if (this.#nextNs < this.#endNs) this.#kernel.schedule(this.#kind, this.#nextNs, 0, 0);
  }

  #gapFrom(fromNs: number): number {
    return fromNs + Math.max(1, Math.round(-Math.log(1 - this.#random.next()) * this.#meanGapNs));
  }
}

/** `outstanding` requests always in flight until `endNs`: each answer triggers the next send. */
export class ClosedLoopClients {
  readonly recorder: LatencyRecorder;
  sent = 0;
  readonly #node: SimNode;
  readonly #kernel: EventKernel;
  readonly #random: Random;
  readonly #make: RequestMaker;
  readonly #endNs: number = 0;

  constructor(options: {
    readonly node: SimNode;
    readonly random: Random;
    readonly outstanding: number;
    readonly make: RequestMaker;
    readonly endNs: number;
    readonly measureFromNs?: number;
  }) {
    this.#node = options.node;
    this.#kernel = options.node.kernel;
    this.#random = options.random;
    this.#make = options.make;
    this.#endNs = options.endNs;
    this.recorder = new LatencyRecorder(options.measureFromNs ?? 0);
    for (let i = 0; i < options.outstanding; i++) this.#send();
  }

  readonly #sink: ReplySink = (_id, latencyNs, ok, _reply, sentAtNs) => {
    this.recorder.record(sentAtNs, latencyNs, ok);
    this.#send();
  };

  #send(): void {
    if (this.#kernel.now() >= this.#endNs) return;
    const next = this.#make(this.#random, this.sent++);
    this.#node.clientSend(next.target, next.message, this.#sink, next.packetBytes);
  }
}
