import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages, narrowRef } from '../../../src/actor/index.ts';
import { ConfigError } from '../../../src/errors.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimCluster, type SimNetworkOptions } from '../../../src/platform/sim/sim-cluster.ts';
import { Random } from '../../../src/random.ts';
import { ledger } from './ledger-actor.ts';
import { testTiming } from './test-timing.ts';

const frontMessages = messages({
  put: { key: field.u32(), amount: field.u32(), seq: field.u32() },
  total: { key: field.u32(), total: field.f64(), seq: field.u32() },
});
const frontReplies = messages({ done: { key: field.u32(), total: field.f64(), seq: field.u32() } });

/** Hands each put to the ledger named `ledger-far`; `ask` mode waits for its answer and replies itself. */
function front(mode: 'inherit' | 'ask') {
  return defineActor({
    name: 'front',
    messages: frontMessages,
    replies: frontReplies,
    placement: 'any',
    exec(ctx, message) {
      if (message.type === 'total') {
        ctx.reply({ type: 'done', key: message.key, total: message.total, seq: message.seq });
        return;
      }
      const far = ctx.lookup('ledger-far');
      assert.ok(far, 'the remote ledger is in this node table');
      const target = narrowRef(far, ledger);
      assert.ok(target, 'the remote row carries the ledger definition');
      const add = { type: 'add' as const, key: message.key, amount: message.amount, seq: message.seq };
      if (mode === 'ask') ctx.send(target, add, { origin: 'self' });
      else ctx.send(target, add);
    },
    cost: () => ({ instructions: 0, fixedNs: 500 }),
  });
}

function build(network: SimNetworkOptions = {}, seed = 7, mode: 'inherit' | 'ask' = 'inherit') {
  const kernel = new EventKernel();
  const cluster = new SimCluster({
    kernel,
    timing: testTiming(),
    nodes: 2,
    network,
    random: new Random(seed, 'fabric'),
  });
  const entry = cluster.register(0, front(mode));
  const far = cluster.register(1, ledger, { name: 'ledger-far' });
  return { kernel, cluster, entry, far };
}

interface Answer {
  readonly seq: number;
  readonly latencyNs: number;
  readonly ok: boolean;
  readonly total: number;
}

function drive(
  setup: ReturnType<typeof build>,
  count: number,
  gapNs = 20_000,
): { answers: Answer[]; model: Map<number, number> } {
  const { kernel, cluster, entry } = setup;
  const answers: Answer[] = [];
  const model = new Map<number, number>();
  const startNs = kernel.now();
  for (let seq = 1; seq <= count; seq++) {
    const key = seq % 3;
    model.set(key, (model.get(key) ?? 0) + seq);
    kernel.at(startNs + seq * gapNs, () => {
      cluster.clientSend(0, entry, { type: 'put', key, amount: seq, seq }, (_id, latencyNs, ok, reply) => {
        const total = ok ? (reply as { total: number }).total : Number.NaN;
        answers.push({ seq, latencyNs, ok, total });
      });
    });
  }
  kernel.run({ untilNs: startNs + (count + 50) * gapNs + 10_000_000 });
  return { answers, model };
}

test('an actor on one node sends to an actor on another; the answer reaches the client at the first', () => {
  const setup = build();
  const { answers, model } = drive(setup, 30);
  assert.equal(answers.length, 30);
  assert.ok(answers.every((a) => a.ok));
  // The far ledger really ran: its totals are the model's.
  const last = new Map<number, number>();
  for (const a of answers) last.set(a.seq % 3, a.total);
  assert.deepEqual([...last.entries()].sort(), [...model.entries()].sort());
  // A request crosses the wire three times (client → node 0 → node 1 → client): at least three
  // wire latencies plus both handlers (front 500 ns + ledger 3000 ns, each at least the 1000 ns
  // packet occupancy of the test NIC).
  const timing = testTiming();
  for (const a of answers)
    assert.ok(a.latencyNs >= 3 * timing.wireLatencyNs + 1_000 + 3_000, `${a.latencyNs}`);
  assert.equal(setup.cluster.counters.framesSent, 30);
  assert.equal(setup.cluster.counters.framesDelivered, 30);
});

test('an actor-origin request across nodes comes back to the asking actor, which answers the client', () => {
  const setup = build({}, 7, 'ask');
  const { answers, model } = drive(setup, 12);
  assert.equal(answers.length, 12);
  assert.ok(answers.every((a) => a.ok));
  const last = new Map<number, number>();
  for (const a of answers) last.set(a.seq % 3, a.total);
  assert.deepEqual([...last.entries()].sort(), [...model.entries()].sort());
  // Two inter-node frames per request: the ask and the answer.
  assert.equal(setup.cluster.counters.framesSent, 24);
});

test('partitions cut frames both ways until healed; drops lose frames; the counters say so', () => {
  const cut = build();
  cut.cluster.partition(1, 0);
  const during = drive(cut, 10);
  assert.equal(during.answers.length, 0, 'nothing crosses a cut link');
  assert.equal(cut.cluster.counters.framesPartitioned, 10);
  cut.cluster.heal();
  const after = drive(cut, 5);
  assert.equal(after.answers.length, 5);

  const lossy = build({ dropProbability: 0.5 }, 11);
  const { answers } = drive(lossy, 400);
  const counters = lossy.cluster.counters;
  assert.equal(counters.framesDropped + counters.framesDelivered, 400);
  assert.equal(answers.length, counters.framesDelivered);
  assert.ok(counters.framesDropped > 150 && counters.framesDropped < 250, `${counters.framesDropped} of 400`);
});

test('duplicated frames run twice at the receiver (the protocol, not the fabric, must cope)', () => {
  const setup = build({ duplicateProbability: 1 }, 3);
  const { answers } = drive(setup, 20);
  assert.equal(setup.cluster.counters.framesDuplicated, 20);
  assert.equal(setup.cluster.counters.framesDelivered, 40);
  // The client hears one answer per request (the copy's answer finds no one waiting) …
  assert.equal(answers.length, 20);
  // … and, requests being 20 µs apart, both copies of every earlier add ran before each answer:
  // the first copy answers with twice the earlier adds plus this one once.
  const applied = new Map<number, number>();
  for (const a of [...answers].sort((x, y) => x.seq - y.seq)) {
    const key = a.seq % 3;
    assert.equal(a.total, (applied.get(key) ?? 0) + a.seq, `seq ${a.seq}`);
    applied.set(key, (applied.get(key) ?? 0) + 2 * a.seq);
  }
});

test('jitter reorders frames, and the same seed reproduces the same run exactly', () => {
  const run = (seed: number) => drive(build({ jitterNs: 200_000 }, seed), 200, 2_000).answers;
  const a = run(5);
  const b = run(5);
  const c = run(6);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  const order = a.map((x) => x.seq);
  assert.ok(
    order.some((seq, i) => i > 0 && seq < (order[i - 1] as number)),
    'some answers overtook earlier ones',
  );
});

test('bad cluster options and clashing names are refused with a ConfigError', () => {
  const kernel = new EventKernel();
  assert.throws(() => new SimCluster({ kernel, timing: testTiming(), nodes: 0 }), ConfigError);
  assert.throws(
    () => new SimCluster({ kernel, timing: testTiming(), nodes: 2, network: { dropProbability: 1.5 } }),
    /probability/,
  );
  assert.throws(
    () => new SimCluster({ kernel, timing: testTiming(), nodes: 2, network: { jitterNs: 10 } }),
    /seeded Random/,
  );
  const cluster = new SimCluster({ kernel, timing: testTiming(), nodes: 2 });
  cluster.register(0, ledger, { name: 'ledger-a' });
  assert.throws(() => cluster.register(1, ledger, { name: 'ledger-a' }), /already used in the cluster/);
  assert.throws(() => cluster.node(2), /no node 2/);
});
