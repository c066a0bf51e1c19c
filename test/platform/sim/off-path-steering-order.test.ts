/**
 * Off-path NICs (BlueField, Stingray) steer a host actor's frames in the NIC switch, straight to
 * the host, past the software dispatcher and the NIC cores. An actor just moved to the host still
 * has older frames on the NIC's path: buffered by the move and handed over one send at a time
 * (Clean), still in the dispatcher, or in the shared queue. Steered at once, a sender's newer frames
 * overtook those and ran first: every one of 50 seeds of the first test below broke a client's
 * order before SimNode's steering gate (#steerGates), 3–266 requests out of order per run, and
 * the two tests after it failed at their first seed (each removed condition of the gate — the
 * move's end, the dispatcher's exit time, the shared-queue count — fails one of the three). The
 * last test checks the gate opens again: steering is what makes off-path cheap for host actors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages } from '../../../src/actor/index.ts';
import { DmoNumberMap } from '../../../src/dmo/index.ts';
import type { ObjectId } from '../../../src/ids.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { seededRandom } from '../../sched/harness.ts';
import { testTiming } from './test-timing.ts';

const DISORDER = 1_000_000;

/** Counts notes that arrive after a later note of the same sender; answers with the count so far. */
const ordered = defineActor({
  name: 'ordered',
  messages: messages({ note: { sender: field.u32(), seq: field.u32() } }),
  replies: messages({ seen: { disorder: field.u32() } }),
  placement: 'any',
  exclusive: true,
  init(ctx) {
    ctx.setRoot('last', DmoNumberMap.create(ctx.dmo).rootId);
  },
  exec(ctx, message) {
    const last = DmoNumberMap.open(ctx.dmo, ctx.root('last') as ObjectId);
    if (message.seq <= (last.get(message.sender) ?? 0)) last.increment(DISORDER, 1);
    else last.set(message.sender, message.seq);
    ctx.reply({ type: 'seen', disorder: last.get(DISORDER) ?? 0 });
  },
  cost: () => ({ instructions: 0, fixedNs: 3_000 }),
});

interface RunOutcome {
  readonly disorder: number;
  readonly answered: number;
  readonly sent: number;
  readonly toHost: number;
  readonly node: SimNode;
  readonly kernel: EventKernel;
  readonly ref: ReturnType<SimNode['register']>;
}

/**
 * `senders` clients send numbered notes at random gaps (bursts fill the dispatcher); the actor is
 * moved at `flips` random times, each time to the other side.
 */
function run(seed: number, senders: number, flips: number, dispatcherNs: number, nicCores = 4): RunOutcome {
  const random = seededRandom(seed);
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming({ placement: 'off-path', dispatcherCores: 1, dispatcherNs: () => dispatcherNs }),
    kernel,
    nicCores,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const ref = node.register(ordered);
  let disorder = 0;
  let answered = 0;
  let sent = 0;
  let atNs = 0;
  const seqs = new Array<number>(senders).fill(0);
  for (let i = 0; i < 400 * senders; i++) {
    atNs += random() < 0.2 ? 0 : Math.round(random() * (2_500 / senders));
    const sender = Math.floor(random() * senders);
    const seq = ++seqs[sender]!;
    sent++;
    node.clientSend(
      ref,
      { type: 'note', sender, seq },
      (_id, _latencyNs, ok, reply) => {
        assert.ok(ok, `seed ${seed}: note ${sender}/${seq} refused`);
        answered++;
        disorder = Math.max(disorder, (reply as { disorder: number }).disorder);
      },
      undefined,
      { atNs },
    );
  }
  let toHost = 0;
  for (let i = 0; i < flips; i++) {
    kernel.at(Math.round(random() * atNs), () => {
      const side = node.domainOf(ref.id);
      if (side === 'migrating') return;
      if (side === 'nic') toHost++;
      node.migrate(ref.id, side === 'nic' ? 'host' : 'nic');
    });
  }
  kernel.run({});
  return { disorder, answered, sent, toHost, node, kernel, ref };
}

test('off-path: a client’s requests reach an actor moved to the host in the order it sent them', () => {
  let moves = 0;
  for (let seed = 1; seed <= 50; seed++) {
    const outcome = run(seed, 1, 1, 300);
    assert.equal(outcome.answered, outcome.sent, `seed ${seed}: every note answered`);
    assert.equal(outcome.disorder, 0, `seed ${seed}: ${outcome.disorder} notes ran after a later one`);
    moves += outcome.toHost;
  }
  assert.equal(moves, 50);
});

test('off-path: per-sender order holds across many moves both ways, with the dispatcher backed up', () => {
  let moves = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const outcome = run(seed, 4, 12, 1_200);
    assert.equal(outcome.answered, outcome.sent, `seed ${seed}: every note answered`);
    assert.equal(outcome.disorder, 0, `seed ${seed}: ${outcome.disorder} notes ran after a later one`);
    assert.ok(outcome.toHost >= 1, `seed ${seed}: moved to the host ${outcome.toHost} times`);
    moves += outcome.toHost;
  }
  assert.ok(moves >= 200, `${moves} moves to the host`);
});

test('off-path: per-sender order holds with the shared queue backed up (one NIC core forwards 1 frame/µs)', () => {
  let moves = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const outcome = run(seed, 4, 12, 300, 1);
    assert.equal(outcome.answered, outcome.sent, `seed ${seed}: every note answered`);
    assert.equal(outcome.disorder, 0, `seed ${seed}: ${outcome.disorder} notes ran after a later one`);
    assert.ok(outcome.toHost >= 1, `seed ${seed}: moved to the host ${outcome.toHost} times`);
    moves += outcome.toHost;
  }
  assert.ok(moves >= 100, `${moves} moves to the host`);
});

test('off-path: once the move is over, the switch steers the actor’s frames past the NIC cores again', () => {
  const outcome = run(1, 1, 1, 300);
  const { node, kernel, ref } = outcome;
  assert.equal(node.domainOf(ref.id), 'host');
  const nicBusyBefore = node.busyNs().nic.reduce((sum, ns) => sum + ns, 0);
  let ok = false;
  node.clientSend(ref, { type: 'note', sender: 0, seq: 1_000_000 }, (_id, _latencyNs, answeredOk) => {
    ok = answeredOk;
  });
  kernel.run({});
  assert.ok(ok);
  const nicBusyAfter = node.busyNs().nic.reduce((sum, ns) => sum + ns, 0);
  assert.equal(nicBusyAfter, nicBusyBefore, 'no NIC core touched the steered frame');
});
