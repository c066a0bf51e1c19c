/**
 * A small deterministic driver for scheduler tests: cores that take work from a HybridScheduler,
 * stay busy for a scripted cost, and complete — the same calls a platform makes, with a sorted
 * event list instead of the simulator, so policy tests depend on nothing but the policy.
 */

import { type ActorId, actorId } from '../../src/ids.ts';
import type { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import type { Decision, SchedRequest } from '../../src/sched/types.ts';

export interface TestRequest extends SchedRequest {
  readonly seq: number;
}

/** mulberry32: tiny seeded PRNG, good enough for scripted test workloads. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Event =
  | { atNs: number; order: number; kind: 'arrive'; request: TestRequest }
  | {
      atNs: number;
      order: number;
      kind: 'complete';
      core: number;
    };

export interface HarnessOptions {
  readonly cores: number;
  /** Execution time of one request on a NIC core. */
  readonly costNs: (request: TestRequest, nowNs: number) => number;
  /** Host execution time for forwarded requests (they complete without a NIC core). */
  readonly hostCostNs?: number;
  /** Carry out migrate decisions (prepare → wait for quiescence → finish). Default true. */
  readonly performMigrations?: boolean;
}

export class SchedulerHarness {
  readonly decisions: Decision[] = [];
  readonly executed: TestRequest[] = [];
  readonly forwarded: TestRequest[] = [];
  readonly dropped: TestRequest[] = [];
  readonly latenciesNs = new Map<ActorId, number[]>();
  nowNs = 0;
  /** In-flight completions, sorted (at most one per core). */
  #events: Event[] = [];
  #arrivals: Event[] = [];
  #nextArrival = 0;
  #order = 0;
  #seq = 0;
  #busy: boolean[];
  #pendingMigrations = new Set<ActorId>();
  readonly #scheduler: HybridScheduler<TestRequest>;
  readonly #options: HarnessOptions;

  constructor(scheduler: HybridScheduler<TestRequest>, options: HarnessOptions) {
    this.#scheduler = scheduler;
    this.#options = options;
    this.#busy = new Array<boolean>(options.cores).fill(false);
  }

  /** Poisson arrivals for one actor between two times, at `ratePerSec`. */
  addPoisson(
    actor: number,
    fromNs: number,
    toNs: number,
    ratePerSec: number,
    random: () => number,
    sizeBytes = 512,
  ): void {
    let t = fromNs;
    const meanGapNs = 1e9 / ratePerSec;
    for (;;) {
      t += -Math.log(1 - random()) * meanGapNs;
      if (t >= toNs) break;
      this.addArrival(actor, Math.round(t), sizeBytes);
    }
  }

  addArrival(actor: number, atNs: number, sizeBytes = 512): void {
    const request: TestRequest = { actor: actorId(actor), sizeBytes, arrivalNs: atNs, seq: this.#seq++ };
    this.#push({ atNs, order: this.#order++, kind: 'arrive', request });
  }

  run(untilNs: number): void {
    this.#arrivals.sort((a, b) => a.atNs - b.atNs || a.order - b.order);
    for (;;) {
      const arrival = this.#arrivals[this.#nextArrival];
      const completion = this.#events[0];
      let event: Event;
      if (
        arrival &&
        (!completion ||
          arrival.atNs < completion.atNs ||
          (arrival.atNs === completion.atNs && arrival.order < completion.order))
      ) {
        if (arrival.atNs > untilNs) break;
        event = arrival;
        this.#nextArrival++;
      } else if (completion) {
        if (completion.atNs > untilNs) break;
        event = this.#events.shift() as Event;
      } else break;
      this.nowNs = event.atNs;
      if (event.kind === 'arrive') this.#scheduler.arrive(event.request, this.nowNs);
      else {
        this.#busy[event.core] = false;
        this.#record(this.#scheduler.complete(event.core, this.nowNs));
      }
      this.#progressMigrations();
      this.#fillIdleCores();
    }
    this.nowNs = untilNs;
  }

  #fillIdleCores(): void {
    for (let core = 0; core < this.#busy.length; core++) {
      while (!this.#busy[core]) {
        const role = this.#scheduler.roleOf(core);
        const work =
          role === 'fcfs'
            ? this.#scheduler.takeFcfs(core, this.nowNs)
            : this.#scheduler.takeDrr(core, this.nowNs);
        if (!work) {
          if (core === this.#scheduler.settings.managementCoreId)
            this.#record(this.#scheduler.manage(this.nowNs));
          break;
        }
        if (work.kind === 'exec') {
          this.#busy[core] = true;
          this.executed.push(work.request);
          const doneNs = this.nowNs + Math.max(1, Math.round(this.#options.costNs(work.request, this.nowNs)));
          const latency = doneNs - work.request.arrivalNs;
          const list = this.latenciesNs.get(work.request.actor) ?? [];
          list.push(latency);
          this.latenciesNs.set(work.request.actor, list);
          this.#pushSorted({ atNs: doneNs, order: this.#order++, kind: 'complete', core });
        } else if (work.kind === 'forward') this.forwarded.push(work.request);
        else if (work.kind === 'drop') this.dropped.push(work.request);
      }
    }
  }

  #record(decisions: readonly Decision[]): void {
    for (const decision of decisions) {
      this.decisions.push(decision);
      if (decision.kind === 'migrate' && this.#options.performMigrations !== false) {
        this.#scheduler.prepareMigration(decision.actor, decision.to, this.nowNs);
        this.#pendingMigrations.add(decision.actor);
      }
    }
  }

  #progressMigrations(): void {
    for (const actor of this.#pendingMigrations) {
      if (!this.#scheduler.isQuiescent(actor)) continue;
      this.#pendingMigrations.delete(actor);
      for (const request of this.#scheduler.finishMigration(actor, this.nowNs)) this.forwarded.push(request);
    }
  }

  #push(event: Event): void {
    if (this.#nextArrival > 0) {
      this.#arrivals = this.#arrivals.slice(this.#nextArrival);
      this.#nextArrival = 0;
    }
    this.#arrivals.push(event);
  }

  #pushSorted(event: Event): void {
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.#events[mid] as Event;
      if (e.atNs < event.atNs || (e.atNs === event.atNs && e.order < event.order)) lo = mid + 1;
      else hi = mid;
    }
    this.#events.splice(lo, 0, event);
  }

  kinds(kind: Decision['kind']): Decision[] {
    return this.decisions.filter((d) => d.kind === kind);
  }
}
