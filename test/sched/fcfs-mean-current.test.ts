/**
 * The FCFS mean that push and pull read (Algorithm 1's T_mean) says what the NIC's latency is now:
 * it forgets with time as well as with completions, so a NIC whose load has fallen — even one with
 * no actor left to complete FCFS requests — pulls actors back, and pushes stop once the actors
 * whose waits made the mean high have left. A stuck NIC (requests waiting, none completing) reads
 * as ever slower, never as idle. See docs/scheduler.md, decision 9.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../src/ids.ts';
import { LIVE_SCHEDULER_DEFAULTS } from '../../src/platform/live/node/live-node.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import type { Decision } from '../../src/sched/types.ts';
import { SchedulerHarness, seededRandom, type TestRequest } from './harness.ts';

const MS = 1_000_000;
const US = 1_000;

type Migrate = Extract<Decision, { kind: 'migrate' }>;

const settings = { meanThreshNs: 20 * US, tailThreshNs: 100 * US, enableDowngrade: false } as const;

test('after an overload the pushed actors come back once the load falls, the small one never leaves, and nothing flaps', () => {
  // RTA's shape: two exclusive actors (its counters) that each need 1.5 cores — their mailbox
  // waits take the FCFS mean to hundreds of µs — and one small actor (0.05 cores). The two heavy
  // ones are pushed. The small one's few requests (one per 200 µs, each moving a 1/256 EWMA by
  // 1/256) barely move the mean: read per completion only, it still carried the heavy actors' waits
  // a settle period later and pushed the small actor too, and with no actor left on the NIC the
  // mean never moved again, so nothing came back when the load fell to 0.4 cores.
  const random = seededRandom(11);
  const scheduler = new HybridScheduler<TestRequest>({ cores: 4, settings });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: true });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: true });
  scheduler.addActor({ id: actorId(3), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, { cores: 4, costNs: () => 10 * US });
  for (const id of [1, 2]) {
    harness.addPoisson(id, 0, 20 * MS, 150_000, random);
    harness.addPoisson(id, 20 * MS, 80 * MS, 20_000, random);
  }
  harness.addPoisson(3, 0, 80 * MS, 5_000, random);

  harness.run(20 * MS);
  const pushes = harness.kinds('migrate') as Migrate[];
  const why = () =>
    (harness.kinds('migrate') as Migrate[]).map((m) => `${m.atNs / MS} ms: ${m.why}`).join(' | ');
  assert.deepEqual(
    pushes.map((m) => [m.actor, m.to]),
    [
      [1, 'host'],
      [2, 'host'],
    ],
    `the two overloaded actors are pushed, and only they: ${why()}`,
  );
  assert.equal(scheduler.modeOf(actorId(3)), 'fcfs', 'the small actor stays on the NIC');

  harness.run(30 * MS);
  assert.equal(scheduler.modeOf(actorId(1)), 'fcfs', `pulled back within 10 ms of the fall: ${why()}`);
  assert.equal(scheduler.modeOf(actorId(2)), 'fcfs', `pulled back within 10 ms of the fall: ${why()}`);

  harness.run(80 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  assert.deepEqual(
    migrations.slice(2).map((m) => [m.to, m.trigger]),
    [
      ['nic', 'pull-headroom'],
      ['nic', 'pull-headroom'],
    ],
    `two pulls and no push after them (no push-pull cycle): ${why()}`,
  );
  for (const id of [1, 2, 3]) assert.equal(scheduler.modeOf(actorId(id)), 'fcfs');
});

/**
 * A NIC-pinned exclusive actor serves five requests (18 µs each: an FCFS mean between the pull
 * band, 16 µs, and Mean_thresh, 20 µs) while actor 2 lives on the host. With `stall`, its sixth
 * request runs for 30 ms and every later one waits in its mailbox; without, it sends no more.
 */
function stallScenario(stall: boolean) {
  const scheduler = new HybridScheduler<TestRequest>({ cores: 4, settings });
  scheduler.addActor({ id: actorId(1), placement: 'nic', exclusive: true });
  scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false, domain: 'host' });
  const harness = new SchedulerHarness(scheduler, {
    cores: 4,
    costNs: (request) => (request.actor === 1 && request.seq === 5 ? 30 * MS : 18 * US),
  });
  for (let i = 0; i < 5; i++) harness.addArrival(1, i * 20 * US);
  if (stall) for (let t = 100 * US; t < 30 * MS; t += 20 * US) harness.addArrival(1, t);
  harness.addPoisson(2, 0, 30 * MS, 20_000, seededRandom(12));
  return { scheduler, harness };
}

test('an idle NIC reads as idle: with nothing left to complete, the host actor is pulled back', () => {
  const { scheduler, harness } = stallScenario(false);
  harness.run(10 * MS);
  const pulls = (harness.kinds('migrate') as Migrate[]).filter((m) => m.trigger === 'pull-headroom');
  assert.equal(pulls.length, 1, 'the mean of the five old requests no longer stands for the NIC');
  assert.equal(scheduler.modeOf(actorId(2)), 'fcfs');
});

test('a stuck NIC (requests waiting, none completing) does not read as idle: nothing is pulled onto it', () => {
  const { scheduler, harness } = stallScenario(true);
  for (let t = 1 * MS; t <= 29 * MS; t += 1 * MS) {
    harness.run(t);
    assert.equal(scheduler.modeOf(actorId(2)), 'host', `still on the host at ${t / MS} ms`);
  }
  assert.deepEqual(harness.kinds('migrate'), []);
  assert.ok(
    scheduler.view().fcfs.meanNs > settings.meanThreshNs,
    `the oldest waiting request's age carries the mean up: ${scheduler.view().fcfs.meanNs} ns`,
  );
});

test('a NIC slow at any load does not pull and push its actors in a cycle: each bounce doubles the wait before the next pull', () => {
  // Every NIC request takes 30 µs, over Mean_thresh (20 µs), however light the load — a live NIC
  // whose cores are slowed by the machine's other work. The light actor is pushed; with it gone the
  // mean falls to 0 and it is pulled; its next requests take the mean over Mean_thresh again and
  // it is pushed. Without a back-off that cycle repeated every few settle periods (2 ms here).
  let nicCostNs = 30 * US;
  const random = seededRandom(5);
  const scheduler = new HybridScheduler<TestRequest>({ cores: 4, settings });
  scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
  const harness = new SchedulerHarness(scheduler, { cores: 4, costNs: () => nicCostNs, hostCostNs: 5 * US });
  harness.addPoisson(1, 0, 1_000 * MS, 20_000, random);
  harness.run(300 * MS);
  const migrations = harness.kinds('migrate') as Migrate[];
  const pulls = migrations.filter((m) => m.to === 'nic').map((m) => m.atNs);
  const why = () => migrations.map((m) => `${(m.atNs / MS).toFixed(1)} ms → ${m.to}`).join(', ');
  assert.ok(pulls.length >= 3, `it is still tried on the NIC now and then: ${why()}`);
  assert.ok(
    pulls.length <= 7,
    `no cycle every few settle periods (~70 pulls without the back-off): ${why()}`,
  );
  for (let i = 2; i < pulls.length; i++)
    assert.ok(
      (pulls[i] as number) - (pulls[i - 1] as number) > (pulls[i - 1] as number) - (pulls[i - 2] as number),
      `the gaps between pulls grow: ${why()}`,
    );

  // Once the NIC is fast again, the next pull holds: the actor stays on the NIC.
  nicCostNs = 5 * US;
  harness.run(600 * MS);
  assert.equal(scheduler.modeOf(actorId(1)), 'fcfs', `back on the NIC for good: ${why()}`);
  const last = (harness.kinds('migrate') as Migrate[]).at(-1);
  assert.equal(last?.to, 'nic', why());

  // Slow again: the push that follows comes long after that pull, which held — the run of bounces
  // is over, so the next bounce waits the first back-off (8 ms), not the longest (256 ms).
  nicCostNs = 30 * US;
  const before = harness.kinds('migrate').length;
  harness.run(1_000 * MS);
  const later = (harness.kinds('migrate') as Migrate[]).slice(before);
  const laterPulls = later.filter((m) => m.to === 'nic').map((m) => m.atNs);
  const laterWhy = later.map((m) => `${(m.atNs / MS).toFixed(1)} ms → ${m.to}`).join(', ');
  assert.ok(laterPulls.length >= 2, `pulled again: ${laterWhy}`);
  assert.ok(
    (laterPulls[1] as number) - (laterPulls[0] as number) < 30 * MS,
    `the back-off starts again from 8 ms: ${laterWhy}`,
  );
});

test('live settings: a 5 ms stall of the whole machine moves no actor; a 100 ms one pushes, and an actor comes back', () => {
  // With 100 µs windows the time-bound mean remembered ~3 ms, and one 5 ms stall (GC, the VM) read
  // as the NIC's latency pushed an actor, pulled back a settle period later. Live windows are 10 ms.
  const moves = (stallMs: number) => {
    const random = seededRandom(7);
    const scheduler = new HybridScheduler<TestRequest>({
      cores: 4,
      settings: { ...LIVE_SCHEDULER_DEFAULTS, enableDowngrade: false },
    });
    scheduler.addActor({ id: actorId(1), placement: 'any', exclusive: false });
    scheduler.addActor({ id: actorId(2), placement: 'any', exclusive: false });
    const from = 200 * MS;
    const to = from + stallMs * MS;
    // Every request that starts during the stall finishes at its end.
    const costNs = (_request: TestRequest, nowNs: number) =>
      (nowNs >= from && nowNs < to ? to - nowNs : 0) + 20 * US;
    const harness = new SchedulerHarness(scheduler, { cores: 4, costNs, hostCostNs: 5 * US });
    harness.addPoisson(1, 0, 2_000 * MS, 10_000, random);
    harness.addPoisson(2, 0, 2_000 * MS, 5_000, random);
    harness.run(2_000 * MS);
    return (harness.kinds('migrate') as Migrate[]).map((m) => m.to);
  };
  assert.deepEqual(moves(5), [], 'a 5 ms stall');
  const long = moves(100);
  assert.equal(long[0], 'host', `a 100 ms stall pushes: ${long.join(', ')}`);
  assert.ok(long.includes('nic'), `and an actor comes back within 2 s: ${long.join(', ')}`);
});
