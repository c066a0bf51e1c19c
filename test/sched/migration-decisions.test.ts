import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../src/ids.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import type { SchedulerSettings } from '../../src/sched/settings.ts';
import type { Decision } from '../../src/sched/types.ts';
import { SchedulerHarness, seededRandom, type TestRequest } from './harness.ts';

const MS = 1_000_000;
const US = 1_000;

type Migrate = Extract<Decision, { kind: 'migrate' }>;

function threeActors(settings: Partial<SchedulerSettings>) {
  const scheduler = new HybridScheduler<TestRequest>({ cores: 4, settings });
  for (const id of [1, 2, 3]) scheduler.addActor({ id: actorId(id), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, { cores: 4, costNs: () => 10 * US });
  return { scheduler, harness };
}

test('overload pushes the most loaded actor to the host, and nothing else', () => {
  const random = seededRandom(3);
  const { scheduler, harness } = threeActors({
    meanThreshNs: 20 * US,
    tailThreshNs: 100 * US,
    enableDowngrade: false,
  });
  // 2.6 + 1.0 + 0.5 = 4.1 cores of work on 4 cores: the queue grows until someone leaves.
  harness.addPoisson(1, 0, 60 * MS, 260_000, random);
  harness.addPoisson(2, 0, 60 * MS, 100_000, random);
  harness.addPoisson(3, 0, 60 * MS, 50_000, random);
  harness.run(60 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.equal(
    migrations.length,
    1,
    `exactly one migration, got ${migrations.map((m) => m.why).join(' | ')}`,
  );
  const [push] = migrations;
  assert.equal(push?.actor, 1, 'the actor with the most NIC load (µ × rate) is the one pushed');
  assert.equal(push?.to, 'host');
  assert.equal(push?.trigger, 'mean-latency');
  assert.equal(scheduler.modeOf(actorId(1)), 'host');
  assert.equal(scheduler.modeOf(actorId(2)), 'fcfs');
  assert.equal(scheduler.modeOf(actorId(3)), 'fcfs');
  assert.ok(harness.forwarded.length > 0 && harness.forwarded.every((r) => r.actor === 1));
});

test('with no overload nothing migrates', () => {
  const random = seededRandom(4);
  const { harness } = threeActors({ meanThreshNs: 20 * US, tailThreshNs: 100 * US, enableDowngrade: false });
  harness.addPoisson(1, 0, 60 * MS, 100_000, random);
  harness.addPoisson(2, 0, 60 * MS, 100_000, random);
  harness.addPoisson(3, 0, 60 * MS, 50_000, random);
  harness.run(60 * MS);
  assert.equal(harness.kinds('migrate').length, 0);
});

test('when load falls the host actor is pulled back to the NIC', () => {
  const random = seededRandom(5);
  const { scheduler, harness } = threeActors({
    meanThreshNs: 20 * US,
    tailThreshNs: 100 * US,
    enableDowngrade: false,
  });
  harness.addPoisson(1, 0, 30 * MS, 260_000, random);
  harness.addPoisson(1, 30 * MS, 90 * MS, 40_000, random);
  harness.addPoisson(2, 0, 90 * MS, 100_000, random);
  harness.addPoisson(3, 0, 90 * MS, 50_000, random);
  harness.run(90 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.equal(migrations.length, 2, migrations.map((m) => m.why).join(' | '));
  assert.deepEqual(
    migrations.map((m) => [m.actor, m.to, m.trigger]),
    [
      [1, 'host', 'mean-latency'],
      [1, 'nic', 'pull-headroom'],
    ],
  );
  assert.ok((migrations[1] as Migrate).atNs > 30 * MS, 'pulled only after its load fell');
  assert.equal(scheduler.modeOf(actorId(1)), 'fcfs');
});

test('hysteresis: a steady load near Mean_thresh does not push and pull back and forth', () => {
  const random = seededRandom(6);
  // 1.2 + 1.2 + 0.8 = 3.2 cores on 4: the mean sits just above Mean_thresh; once actor 1 leaves,
  // pulling it back would put FCFS utilisation at 80% — over the (n−1)/n = 75% spare line.
  const { harness } = threeActors({ meanThreshNs: 12 * US, tailThreshNs: 100 * US, enableDowngrade: false });
  harness.addPoisson(1, 0, 200 * MS, 120_000, random);
  harness.addPoisson(2, 0, 200 * MS, 120_000, random);
  harness.addPoisson(3, 0, 200 * MS, 80_000, random);
  harness.run(200 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.ok(migrations.length <= 1, `at most one move under a steady load, got ${migrations.length}`);
  assert.ok(
    migrations.every((m) => m.to === 'host'),
    'never pulled back under the same load',
  );
});

test('a DRR actor whose mailbox exceeds Q_thresh is pushed to the host', () => {
  const random = seededRandom(8);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 2,
    settings: {
      tailThreshNs: 40 * US,
      meanThreshNs: 40 * US, // FCFS keeps only the 2 µs actor: its mean stays far below
      queueThresh: 16,
      enableAutoscale: false,
      settleNs: 1 * MS,
      // Warm up in 16 samples, so the downgrade comes before the FCFS mean passes Mean_thresh.
      actorEwmaWeight: 1 / 16,
    },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: true });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: true });
  const harness = new SchedulerHarness(scheduler, {
    cores: 2,
    costNs: (r) => (r.actor === 1 ? 2 * US : random() < 0.5 ? 5 * US : 60 * US),
  });
  harness.addPoisson(1, 0, 40 * MS, 100_000, random);
  // 32.5 µs mean × 40 k/s = 1.3 cores of work for the single DRR core.
  harness.addPoisson(2, 0, 40 * MS, 40_000, random);
  harness.run(40 * MS);
  assert.deepEqual(
    harness.kinds('downgrade').map((d) => (d as { actor: number }).actor),
    [2],
  );
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.ok(migrations.length >= 1);
  assert.equal(migrations[0]?.actor, 2);
  assert.equal(migrations[0]?.trigger, 'mailbox-length');
  assert.equal(scheduler.modeOf(actorId(2)), 'host');
});

test('migration decisions are taken on the management core only', () => {
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 2,
    settings: { meanThreshNs: 10 * US, tailThreshNs: 1_000 * US, enableDowngrade: false },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
  // Requests that waited 100 µs: every completion reports an FCFS mean far above Mean_thresh.
  const at = 100 * US;
  for (let seq = 0; seq < 4; seq++)
    scheduler.arrive({ actor: actorId(1), sizeBytes: 64, arrivalNs: 0, seq }, 0);
  assert.equal(scheduler.takeFcfs(1, at)?.kind, 'exec');
  assert.deepEqual(scheduler.complete(1, at + 5 * US), [], 'core 1 is not the management core');
  assert.equal(scheduler.takeFcfs(1, at + 5 * US)?.kind, 'exec');
  assert.deepEqual(scheduler.complete(1, at + 10 * US), []);
  assert.equal(scheduler.takeFcfs(0, at + 10 * US)?.kind, 'exec');
  const decisions = scheduler.complete(0, at + 15 * US);
  assert.equal(decisions.length, 1);
  assert.equal(decisions[0]?.kind, 'migrate');
});

test('pinned actors are never chosen for migration', () => {
  const random = seededRandom(9);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: { meanThreshNs: 20 * US, tailThreshNs: 100 * US, enableDowngrade: false },
  });
  scheduler.addActor({ id: actorId(1), placement: 'nic', exclusive: false });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, { cores: 4, costNs: () => 10 * US });
  harness.addPoisson(1, 0, 30 * MS, 300_000, random);
  harness.addPoisson(2, 0, 30 * MS, 120_000, random);
  harness.run(30 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.ok(migrations.length >= 1);
  assert.ok(
    migrations.every((m) => m.actor === 2),
    'the heavier actor is pinned; only actor 2 may move',
  );
  assert.equal(scheduler.modeOf(actorId(1)), 'fcfs');
});

test('a push needs requests completed since the last move: a stale mean pushes nothing more', () => {
  // A cold start: the first request of each actor is slow (first calls, JIT), and then nothing more
  // runs on the NIC. The management core decides once its own cold request is done (all the others
  // are in by then) and pushes one actor; only that actor's requests keep arriving (forwarded to
  // the host), and each lets the management core decide again — on the same mean, since no FCFS
  // request has completed since. Pushing the next actor on it frees nothing (live, a node's
  // start-up pushed every NIC actor this way, one settle period apart).
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: { meanThreshNs: 20 * US, tailThreshNs: 10 * MS, enableDowngrade: false, settleNs: 1 * MS },
  });
  for (const id of [1, 2, 3]) scheduler.addActor({ id: actorId(id), placement: 'any', exclusive: false });
  // Core 0, the management core, takes actor 1's request (the first to arrive): it ends last.
  const harness = new SchedulerHarness(scheduler, {
    cores: 4,
    costNs: (request) => (request.seq === 0 ? 400 * US : 300 * US),
  });
  for (const id of [1, 2, 3]) harness.addArrival(id, 0);
  harness.run(1 * MS);
  const pushed = [1, 2, 3].filter((id) => scheduler.modeOf(actorId(id)) === 'host');
  assert.equal(pushed.length, 1, 'the start-up pushes one actor');
  for (let t = 1 * MS; t < 60 * MS; t += 100 * US) harness.addArrival(pushed[0] as number, t);
  harness.run(60 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.equal(migrations.length, 1, migrations.map((m) => m.why).join(' | '));
  assert.ok(harness.forwarded.length > 500, "the pushed actor's requests went to the host");
  assert.deepEqual(
    [1, 2, 3].filter((id) => scheduler.modeOf(actorId(id)) === 'host'),
    pushed,
    'the other actors stay on the NIC',
  );
});

test('pushWarmupCompletions: a cold first request does not push an actor that is never overloaded', () => {
  // Live, a node's first requests run cold (module loading, the JIT): one echo took 4.8 ms where
  // steady state is ~10 µs. Every request here arrives to an idle core but the first, which takes
  // 5 ms: the paper's rule (act from the first sample) pushes on that one sample; with a warm-up
  // of 256 completions the mean has long fallen under Mean_thresh when it may act, and nothing moves.
  const run = (pushWarmupCompletions: number) => {
    const scheduler = new HybridScheduler<TestRequest>({
      cores: 1,
      settings: {
        meanThreshNs: 2 * MS,
        tailThreshNs: 8 * MS,
        settleNs: 0,
        enableDowngrade: false,
        pushWarmupCompletions,
      },
    });
    scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
    const harness = new SchedulerHarness(scheduler, {
      cores: 1,
      costNs: (request) => (request.seq === 0 ? 5 * MS : 10 * US),
    });
    for (let i = 0; i < 400; i++) harness.addArrival(1, i === 0 ? 0 : 5 * MS + i * 100 * US);
    harness.run(60 * MS);
    return { migrations: harness.kinds('migrate') as Migrate[], mode: scheduler.modeOf(actorId(1)) };
  };
  const paper = run(0);
  assert.equal(paper.migrations.length, 1, 'without a warm-up the cold request alone pushes');
  assert.equal(paper.migrations[0]?.trigger, 'mean-latency');
  const warm = run(256);
  assert.deepEqual(warm.migrations, [], warm.migrations.map((m) => m.why).join(' | '));
  assert.equal(warm.mode, 'fcfs', 'the actor stays on the NIC');
});

test('pushWarmupCompletions still lets a real overload push once warm', () => {
  const random = seededRandom(3);
  const { scheduler, harness } = threeActors({
    meanThreshNs: 20 * US,
    tailThreshNs: 100 * US,
    enableDowngrade: false,
    pushWarmupCompletions: 256,
  });
  harness.addPoisson(1, 0, 60 * MS, 260_000, random);
  harness.addPoisson(2, 0, 60 * MS, 100_000, random);
  harness.addPoisson(3, 0, 60 * MS, 50_000, random);
  harness.run(60 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.ok(migrations.length >= 1, 'the overload is answered');
  assert.equal(migrations[0]?.actor, 1, 'by pushing the most loaded actor');
  assert.equal(scheduler.modeOf(actorId(1)), 'host');
});

test("a host actor's load counts the requests it runs on the host, not only those that pass the NIC", () => {
  // Actor 1 is pushed by an overload; from then on its requests come from other host actors (RTA's
  // counters, fed by the filter once both are on the host), so none passes the NIC: counted by NIC
  // arrivals, its load read ~0, and "pull only what fits" pulled back an exclusive actor that needs
  // 1.5 cores. The host reports each execution (`recordHostExecution`): it keeps its load and stays.
  const random = seededRandom(21);
  const scheduler = new HybridScheduler<TestRequest>({
    cores: 4,
    settings: { meanThreshNs: 20 * US, tailThreshNs: 100 * US, enableDowngrade: false },
  });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: true });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, { cores: 4, costNs: () => 10 * US });
  // Through the NIC for 5 ms, then from host actors only.
  harness.addPoisson(1, 0, 5 * MS, 150_000, random);
  harness.addPoisson(2, 0, 60 * MS, 50_000, random);
  // Once on the host it runs 150 k requests/s at 10 µs (forwarded ones, then host-local ones),
  // each reported as a platform reports it.
  for (let t = 100 * US; t < 60 * MS; t += 100 * US) {
    harness.run(t);
    if (scheduler.modeOf(actorId(1)) !== 'host') continue;
    for (let i = 0; i < 15; i++) scheduler.recordHostExecution(actorId(1), 10 * US);
  }
  harness.run(60 * MS);
  assert.equal(harness.kinds('migrate')[0]?.kind, 'migrate', 'the overload pushed actor 1');
  const pulls = (harness.kinds('migrate') as Migrate[]).filter((m) => m.to === 'nic');
  assert.deepEqual(pulls, [], pulls.map((m) => m.why).join(' | '));
  assert.ok(
    scheduler.view().actors.some((a) => a.id === 1 && a.loadCores > 1),
    'its load is still known',
  );
});
