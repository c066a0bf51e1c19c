/**
 * The DRR group's runnable queue (iPipe §4.2, Algorithm 2): deficit round robin over the actors
 * that were downgraded from FCFS, approximating processor sharing without preemption.
 *
 * Each visit to a backlogged actor credits it one quantum; it may run a request while its deficit
 * covers its estimated execution latency (µᵢ). Unlike the paper's pseudo-code, the *measured*
 * execution time is subtracted from the deficit when the request completes (classic DRR, Shreedhar
 * & Varghese 1995). Without the subtraction an actor whose deficit once exceeded µᵢ would run one
 * request per visit whatever its quantum, so service would be shared per request rather than in
 * proportion to quanta, and an actor with expensive requests would take as much core time as its
 * requests cost — exactly the unfairness DRR is there to prevent. Subtracting the actual cost
 * (rather than µᵢ) keeps the long-run share right even when µᵢ is a poor estimate; a deficit may go
 * negative (a debt) after an unusually long request, and is reset to zero when the mailbox empties,
 * as in classic DRR.
 *
 * The pointer and the "already credited on this visit" flag are shared by all DRR cores, so the
 * group behaves as one round-robin server however many cores pull from it.
 */

import type { Mailbox } from '../actor/mailbox.ts';

/** What the DRR group needs to see of an actor. */
export interface DrrMember<R> {
  readonly mailbox: Mailbox<R>;
  readonly exclusive: boolean;
  /** Cores currently executing this actor. */
  running: number;
  deficitNs: number;
  /** The estimated execution latency µᵢ (0 before the first sample: run at once to learn it). */
  estimatedCostNs(): number;
  /** This visit's quantum (from the platform's headroom, or the fixed setting). */
  quantumNs(): number;
}

export class DrrGroup<A extends DrrMember<unknown>> {
  readonly #members: A[] = [];
  #pointer = 0;
  #credited = false;

  get size(): number {
    return this.#members.length;
  }

  has(actor: A): boolean {
    return this.#members.includes(actor);
  }

  /** True when some member has a waiting request (whether or not it can run right now). */
  hasBacklog(): boolean {
    for (const actor of this.#members) if (!actor.mailbox.isEmpty()) return true;
    return false;
  }

  members(): readonly A[] {
    return this.#members;
  }

  add(actor: A): void {
    if (this.#members.includes(actor)) return;
    actor.deficitNs = 0;
    this.#members.push(actor);
  }

  remove(actor: A): void {
    const index = this.#members.indexOf(actor);
    if (index < 0) return;
    this.#members.splice(index, 1);
    if (index < this.#pointer) this.#pointer--;
    else if (index === this.#pointer) this.#credited = false;
    if (this.#pointer >= this.#members.length) this.#pointer = 0;
    actor.deficitNs = 0;
  }

  /**
   * Picks the actor whose next request a DRR core should run, or undefined when no backlogged
   * actor can run now (all empty, or exclusive ones busy on other cores). The caller pops the
   * actor's mailbox. Cost: O(members) per call, plus a fast-forward instead of looping through
   * rounds when quanta are small next to costs.
   */
  pick(): A | undefined {
    const members = this.#members;
    const count = members.length;
    if (count === 0) return undefined;
    // Two passes at most: one scan crediting each runnable actor once; if nobody could run,
    // fast-forward the rounds needed and scan again (which then must find someone).
    for (let pass = 0; pass < 2; pass++) {
      let runnable = 0;
      let roundsNeeded = Number.POSITIVE_INFINITY;
      for (let visited = 0; visited < count; visited++) {
        const actor = members[this.#pointer] as A;
        if (actor.mailbox.isEmpty()) {
          actor.deficitNs = 0;
          this.#advance();
          continue;
        }
        if (actor.exclusive && actor.running > 0) {
          this.#advance();
          continue;
        }
        runnable++;
        if (!this.#credited) {
          actor.deficitNs += actor.quantumNs();
          this.#credited = true;
        }
        const cost = actor.estimatedCostNs();
        if (actor.deficitNs >= cost) return actor; // stay on it: the visit goes on while credit lasts
        roundsNeeded = Math.min(roundsNeeded, Math.ceil((cost - actor.deficitNs) / actor.quantumNs()));
        this.#advance();
      }
      if (runnable === 0) return undefined;
      // Every runnable actor was credited once and none can afford its cost: give each all but
      // one of the further rounds the nearest one needs — the second scan's visits credit the
      // last round — exactly as that many more scans would have.
      this.#fastForward(roundsNeeded - 1);
    }
    return undefined;
  }

  /** Charges a completed request's measured cost; empties reset the deficit (classic DRR). */
  charge(actor: A, executedNs: number): void {
    actor.deficitNs -= executedNs;
    if (actor.mailbox.isEmpty()) actor.deficitNs = 0;
  }

  #advance(): void {
    this.#pointer++;
    if (this.#pointer >= this.#members.length) this.#pointer = 0;
    this.#credited = false;
  }

  #fastForward(rounds: number): void {
    if (!Number.isFinite(rounds) || rounds <= 0) return;
    for (const actor of this.#members) {
      if (actor.mailbox.isEmpty() || (actor.exclusive && actor.running > 0)) continue;
      actor.deficitNs += rounds * actor.quantumNs();
    }
  }
}
