/**
 * The simulator's twin of test/platform/live/node/watchdog-mid-migration.test.ts: a NIC handler
 * that overruns its watchdog (iPipe §4.4's DoS timer) gets its actor deregistered, and if that
 * actor is being moved at the time, the move ends there, reported with why. Before, finishing the
 * move found no actor in the scheduler (an uncaught SchedulerStateError out of the kernel's run),
 * and the runaway request itself was never answered (its client waited for ever, and so did the
 * run: the management tick kept re-arming for it). Only NIC cores have a watchdog in the simulator,
 * so only a move off the NIC can meet one: Ready waits for the runaway handler to end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages } from '../../../src/actor/index.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { seededRandom } from '../../sched/harness.ts';
import { testTiming } from './test-timing.ts';

const WATCHDOG_NS = 1_000_000;

/** Answers each message with its seq; a `spin` declares more work than the watchdog allows. */
const flaky = defineActor({
  name: 'flaky',
  messages: messages({ spin: { seq: field.u32() }, inc: { seq: field.u32() } }),
  replies: messages({ done: { seq: field.u32() } }),
  placement: 'any',
  exclusive: true,
  exec(ctx, message) {
    ctx.reply({ type: 'done', seq: message.seq });
  },
  cost: (message) => ({ instructions: 0, fixedNs: message.type === 'spin' ? 5 * WATCHDOG_NS : 1_000 }),
});

const echo = defineActor({
  name: 'echo',
  messages: messages({ ping: { seq: field.u32() } }),
  replies: messages({ pong: { seq: field.u32() } }),
  placement: 'any',
  exec(ctx, message) {
    ctx.reply({ type: 'pong', seq: message.seq });
  },
  cost: () => ({ instructions: 0, fixedNs: 2_000 }),
});

/** Every answer a client heard, by request id (an id heard twice shows as two entries). */
class Answers {
  readonly byId = new Map<number, { ok: boolean; answer: unknown }[]>();
  sink = (requestId: number, _latencyNs: number, ok: boolean, answer: unknown): void => {
    const heard = this.byId.get(requestId) ?? [];
    heard.push({ ok, answer });
    this.byId.set(requestId, heard);
  };
  /** The one answer `requestId` got (fails if none or several). */
  only(requestId: number): { ok: boolean; answer: unknown } {
    const heard = this.byId.get(requestId) ?? [];
    assert.equal(heard.length, 1, `request ${requestId} was answered ${heard.length} times`);
    return heard[0] as { ok: boolean; answer: unknown };
  }
}

test('a watchdog kill while its actor moves to the host ends the move, refuses its requests once, and the node serves on', () => {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming(),
    kernel,
    watchdogNs: WATCHDOG_NS,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const flakyRef = node.register(flaky);
  const echoRef = node.register(echo);
  const answers = new Answers();
  const flakyIds: number[] = [];
  const echoIds: number[] = [];
  flakyIds.push(node.clientSend(flakyRef, { type: 'spin', seq: 0 }, answers.sink));
  // Prepared while the handler spins: Ready waits for it, and the watchdog ends it first.
  kernel.at(100_000, () => node.migrate(flakyRef.id, 'host'));
  for (let seq = 1; seq <= 10; seq++) {
    const atNs = 200_000 + seq * 1_000; // buffered by the migration
    flakyIds.push(node.clientSend(flakyRef, { type: 'inc', seq }, answers.sink, undefined, { atNs }));
  }
  // Sent after the kill: refused as well.
  kernel.at(3_000_000, () => {
    flakyIds.push(node.clientSend(flakyRef, { type: 'inc', seq: 11 }, answers.sink));
  });
  for (let atNs = 0; atNs <= 4_000_000; atNs += 50_000) {
    kernel.at(atNs, () => {
      echoIds.push(node.clientSend(echoRef, { type: 'ping', seq: atNs }, answers.sink));
    });
  }
  const result = kernel.run({ untilNs: 1_000_000_000 });

  assert.equal(result.reason, 'idle', 'the run ends: nothing is left waiting');
  assert.equal(node.outstandingClients(), 0, 'every client was answered');
  for (const id of flakyIds) {
    assert.deepEqual(answers.only(id), { ok: false, answer: 'deregistered' }, `flaky request ${id}`);
  }
  for (const id of echoIds) assert.equal(answers.only(id).ok, true, `echo request ${id} served`);
  assert.equal(node.drops.get('deregistered'), flakyIds.length);
  assert.deepEqual(node.migrations, [], 'no migration completed');
  assert.equal(node.abortedMigrations.length, 1);
  const aborted = node.abortedMigrations[0]!;
  assert.equal(aborted.actor, flakyRef.id);
  assert.equal(aborted.phase, 'ready');
  assert.equal(aborted.from, 'nic');
  assert.equal(aborted.to, 'host');
  assert.match(aborted.why, /deregistered \(watchdog\)/);
  // The spin reached a core ~1 µs after it was sent (wire and receive); the watchdog stopped it
  // 1 ms later, and the move ended then, not at some later event.
  assert.ok(
    aborted.endedAtNs > WATCHDOG_NS && aborted.endedAtNs < WATCHDOG_NS + 5_000,
    `it ended when the watchdog stopped the core (${aborted.endedAtNs} ns)`,
  );
  assert.equal(node.scheduler.modeOf(flakyRef.id), 'deregistered');
  // The scheduler forgot the move: it may decide others (nothing counts this one in flight).
  node.migrate(echoRef.id, 'host');
  kernel.run({});
  assert.equal(node.migrations.length, 1, 'a later migration of another actor completes');
});

test('a watchdog kill with no migration answers the runaway request', () => {
  const kernel = new EventKernel();
  const node = new SimNode({ timing: testTiming(), kernel, watchdogNs: WATCHDOG_NS });
  const flakyRef = node.register(flaky);
  const answers = new Answers();
  const id = node.clientSend(flakyRef, { type: 'spin', seq: 0 }, answers.sink);
  const result = kernel.run({ untilNs: 1_000_000_000 });
  assert.equal(result.reason, 'idle');
  assert.deepEqual(answers.only(id), { ok: false, answer: 'deregistered' });
  assert.deepEqual(node.abortedMigrations, []);
});

test('watchdog kills at random moments of forced and scheduled moves: nothing thrown, every request answered once', () => {
  let abortedMoves = 0;
  let killedWhileServing = 0;
  for (let seed = 1; seed <= 150; seed++) {
    const random = seededRandom(seed);
    const kernel = new EventKernel();
    const node = new SimNode({
      timing: testTiming(),
      kernel,
      watchdogNs: WATCHDOG_NS,
      manageEveryNs: 20_000,
    });
    const flakies = [
      node.register(flaky, { name: 'flaky-1' }),
      node.register(flaky, { name: 'flaky-2' }),
      node.register(flaky, { name: 'flaky-3', domain: 'host' }),
    ];
    const echoRef = node.register(echo);
    const answers = new Answers();
    const sent: { id: number; actor: number; atNs: number }[] = [];
    let atNs = 0;
    for (let i = 0; i < 600; i++) {
      atNs += Math.round(1_000 + random() * 9_000);
      if (random() < 0.3) {
        sent.push({
          id: node.clientSend(echoRef, { type: 'ping', seq: i }, answers.sink, undefined, { atNs }),
          actor: echoRef.id,
          atNs,
        });
        continue;
      }
      const target = flakies[Math.floor(random() * flakies.length)]!;
      const message = random() < 0.01 ? { type: 'spin' as const, seq: i } : { type: 'inc' as const, seq: i };
      sent.push({
        id: node.clientSend(target, message, answers.sink, undefined, { atNs }),
        actor: target.id,
        atNs,
      });
    }
    // Forced moves of everything, both ways, at random times (skipped where one is under way or
    // the actor is gone).
    for (let move = 0; move < 40; move++) {
      kernel.at(Math.round(random() * atNs), () => {
        for (const ref of [...flakies, echoRef]) {
          if (random() < 0.5) continue;
          const side = node.domainOf(ref.id);
          if (side === 'migrating' || node.scheduler.modeOf(ref.id) === 'deregistered') continue;
          node.migrate(ref.id, side === 'nic' ? 'host' : 'nic');
        }
      });
    }
    const result = kernel.run({ untilNs: 10_000_000_000 });
    assert.equal(result.reason, 'idle', `seed ${seed}: the run ends`);
    assert.equal(node.outstandingClients(), 0, `seed ${seed}`);
    for (const request of sent) {
      const { ok, answer } = answers.only(request.id);
      if (request.actor === echoRef.id) assert.ok(ok, `seed ${seed}: echo request ${request.id} served`);
      else if (!ok)
        assert.equal(answer, 'deregistered', `seed ${seed}: request ${request.id} refused as deregistered`);
    }
    for (const aborted of node.abortedMigrations) {
      assert.equal(node.scheduler.modeOf(aborted.actor), 'deregistered', `seed ${seed}`);
      assert.match(aborted.why, /watchdog/);
    }
    abortedMoves += node.abortedMigrations.length;
    killedWhileServing += flakies.filter((ref) => node.scheduler.modeOf(ref.id) === 'deregistered').length;
  }
  // The runs did meet the case: kills mid-move, and kills with no move.
  assert.ok(abortedMoves >= 10, `${abortedMoves} moves ended by a kill`);
  assert.ok(killedWhileServing > abortedMoves, `${killedWhileServing} kills in all`);
});
