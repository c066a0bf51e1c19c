/**
 * Property: whatever the platform does within the rules, the scheduler's queue / mailbox / DRR /
 * migration state machine neither loses nor duplicates a request. Every request that arrives
 * leaves exactly once: executed, forwarded to the host, dropped with a reason, handed back by a
 * migration, or returned as an orphan when its actor is deregistered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler, type SchedulerPolicy } from '../../src/sched/hybrid-scheduler.ts';
import type { TestRequest } from './harness.ts';

type Op =
  | { op: 'arrive'; actor: number; size: number }
  | { op: 'take'; core: number }
  | { op: 'complete'; core: number; costNs: number }
  | { op: 'tick'; ns: number }
  | { op: 'migrate'; actor: number }
  | { op: 'finish'; actor: number }
  | { op: 'remove'; actor: number }
  /** The core is lost mid-request (a watchdog stop): its queued requests go back. */
  | { op: 'lose'; core: number };

const ACTORS = [1, 2, 3, 4];
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      op: fc.constant('arrive' as const),
      actor: fc.constantFrom(1, 2, 3, 4, 99),
      size: fc.integer({ min: 1, max: 1500 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant('take' as const), core: fc.integer({ min: 0, max: 3 }) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('complete' as const),
      core: fc.integer({ min: 0, max: 3 }),
      costNs: fc.oneof(fc.integer({ min: 100, max: 5_000 }), fc.integer({ min: 50_000, max: 400_000 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('tick' as const), ns: fc.integer({ min: 1, max: 500_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('migrate' as const), actor: fc.constantFrom(...ACTORS) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('finish' as const), actor: fc.constantFrom(...ACTORS) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('remove' as const), actor: fc.constantFrom(...ACTORS) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('lose' as const), core: fc.integer({ min: 0, max: 3 }) }),
  },
);

/** What the generated sequences exercised, so a generator that degenerates fails the test. */
const coverage = {
  migrations: 0,
  withMailbox: 0,
  downgrades: 0,
  mailboxed: 0,
  completes: 0,
  runs: 0,
  returned: 0,
  deepCores: 0,
};

/** `depth`: the scheduler's coreQueueDepth; each core runs what it holds in order. */
function runOps(policy: SchedulerPolicy, depth: number, ops: readonly Op[]): void {
  const cores = 4;
  coverage.runs++;
  const scheduler = new HybridScheduler<TestRequest>({
    cores,
    policy,
    // Low thresholds and no settling so mode changes, scaling and migrations all happen.
    settings: {
      meanThreshNs: 2_000,
      tailThreshNs: 4_000,
      settleNs: 0,
      queueThresh: 3,
      windowNs: 10_000,
      actorEwmaWeight: 1 / 2,
      coreQueueDepth: depth,
    },
    headroomNs: (bytes) => 500 + bytes,
  });
  for (const id of ACTORS)
    scheduler.addActor({ id: actorId(id), placement: id === 4 ? 'nic' : 'any', exclusive: id !== 3 });
  const outcomes = new Map<number, string>();
  const leave = (request: TestRequest, how: string) => {
    const before = outcomes.get(request.seq);
    assert.equal(before, undefined, `request ${request.seq} left twice: ${before} then ${how}`);
    outcomes.set(request.seq, how);
  };
  // What each core holds, in the order it runs them (the head runs).
  const held: TestRequest[][] = Array.from({ length: cores }, () => []);
  const lastExecuted = new Map<number, number>();
  const migrating = new Set<number>();
  const removed = new Set<number>();
  let now = 0;
  let seq = 0;
  const executed = (request: TestRequest) => {
    leave(request, 'exec');
    // An exclusive actor's requests run in arrival order, also when a lost core handed some back.
    if (request.actor === 3) return;
    const last = lastExecuted.get(request.actor) ?? -1;
    assert.ok(request.seq > last, `actor ${request.actor}: request ${request.seq} ran after ${last}`);
    lastExecuted.set(request.actor, request.seq);
  };
  const take = (core: number) => {
    // An idle core always has room, a full one never; in between it depends on the core's role.
    const holding = held[core]?.length ?? 0;
    if (holding === 0) assert.ok(scheduler.coreHasRoom(core), 'an idle core has room');
    if (holding >= depth) assert.ok(!scheduler.coreHasRoom(core), 'a full core has no room');
    if (!scheduler.coreHasRoom(core)) return;
    const work =
      scheduler.roleOf(core) === 'fcfs' ? scheduler.takeFcfs(core, now) : scheduler.takeDrr(core, now);
    if (!work) return;
    if (work.kind === 'exec') {
      if (work.request.actor !== 3) {
        assert.ok(
          !held.some((h, c) => c !== core && h.some((r) => r.actor === work.request.actor)),
          'an exclusive actor was held by two cores at once',
        );
      }
      held[core]!.push(work.request);
      if (held[core]!.length > 1) coverage.deepCores++;
    } else if (work.kind === 'forward') leave(work.request, 'forward');
    else if (work.kind === 'drop') leave(work.request, `drop:${work.reason}`);
    else if (work.kind === 'mailbox') coverage.mailboxed++;
  };
  const handle = (decisions: ReturnType<typeof scheduler.complete>) => {
    for (const d of decisions) {
      if (d.kind === 'downgrade') coverage.downgrades++;
      if (d.kind !== 'migrate') continue;
      scheduler.prepareMigration(d.actor, d.to, now);
      migrating.add(d.actor);
    }
  };
  const finish = (actor: number) => {
    if (!migrating.has(actor) || !scheduler.isQuiescent(actorId(actor))) return;
    migrating.delete(actor);
    for (const r of scheduler.finishMigration(actorId(actor), now)) leave(r, 'migrated-forward');
  };
  for (const op of ops) {
    switch (op.op) {
      case 'arrive':
        scheduler.arrive({ actor: actorId(op.actor), sizeBytes: op.size, arrivalNs: now, seq: seq++ }, now);
        break;
      case 'take':
        take(op.core);
        break;
      case 'complete': {
        const request = held[op.core]!.shift();
        if (!request) break;
        now += op.costNs;
        executed(request);
        coverage.completes++;
        handle(scheduler.complete(op.core, now, op.costNs));
        break;
      }
      case 'lose': {
        const queue = held[op.core]!;
        if (queue.length === 0) break;
        if (queue.length > 1) coverage.returned++;
        scheduler.returnQueued(op.core, now);
        queue.length = 1;
        // The head ran (to its watchdog limit): it leaves as executed, its followers did not run.
        now += 10_000;
        executed(queue.shift() as TestRequest);
        handle(scheduler.complete(op.core, now, 10_000));
        break;
      }
      case 'tick':
        now += op.ns;
        handle(scheduler.manage(now));
        break;
      case 'migrate': {
        coverage.migrations++;
        if (scheduler.view().actors.some((a) => a.id === op.actor && a.mailboxLength > 0))
          coverage.withMailbox++;
        const mode = removed.has(op.actor) ? 'deregistered' : scheduler.modeOf(actorId(op.actor));
        if (op.actor === 4 || migrating.has(op.actor) || mode === 'deregistered' || mode === 'migrating')
          break;
        scheduler.prepareMigration(actorId(op.actor), mode === 'host' ? 'nic' : 'host', now);
        migrating.add(op.actor);
        break;
      }
      case 'finish':
        finish(op.actor);
        break;
      case 'remove':
        if (removed.has(op.actor) || held.some((h) => h.some((r) => r.actor === op.actor))) break;
        removed.add(op.actor);
        migrating.delete(op.actor);
        for (const r of scheduler.removeActor(actorId(op.actor))) leave(r, 'orphan');
        break;
    }
  }
  // Drain: finish running work, complete migrations, and let every core pull until nothing is left.
  for (let round = 0; round < 100_000 && (scheduler.heldRequests() > 0 || migrating.size > 0); round++) {
    now += 1_000;
    for (let core = 0; core < cores; core++) {
      const request = held[core]!.shift();
      if (request) {
        executed(request);
        handle(scheduler.complete(core, now, 1_000));
      }
    }
    for (const actor of [...migrating]) finish(actor);
    for (let core = 0; core < cores; core++) take(core);
  }
  assert.equal(scheduler.heldRequests(), 0, 'the scheduler still holds requests after draining');
  assert.equal(outcomes.size, seq, `${seq} arrived but ${outcomes.size} left`);
}

for (const [policy, depth] of [
  ['hybrid', 1],
  ['fcfs', 1],
  ['drr', 1],
  ['hybrid', 3],
  ['fcfs', 3],
] as const) {
  test(`no request is lost or duplicated (${policy} policy, core queue depth ${depth}, random operation sequences)`, () => {
    Object.assign(coverage, {
      migrations: 0,
      withMailbox: 0,
      downgrades: 0,
      mailboxed: 0,
      completes: 0,
      runs: 0,
      returned: 0,
      deepCores: 0,
    });
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 20, maxLength: 600, size: 'max' }), (ops) =>
        runOps(policy, depth, ops),
      ),
      { numRuns: 200 },
    );
    assert.ok(coverage.completes > 200, `only ${coverage.completes} requests executed`);
    assert.ok(coverage.withMailbox > 0, 'no migration started with a non-empty mailbox');
    assert.ok(coverage.mailboxed > 0, 'no request went through a mailbox');
    if (policy === 'hybrid') assert.ok(coverage.downgrades > 0, 'no downgrade happened');
    if (depth > 1) {
      assert.ok(coverage.deepCores > 0, 'no core ever held more than one request');
      assert.ok(coverage.returned > 0, 'no lost core had queued requests to hand back');
    }
  });
}
