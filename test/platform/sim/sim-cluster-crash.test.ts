/**
 * SimCluster.crash / restart: a crashed node loses its actors' DMOs, timers, queued frames and
 * its clients' answers; frames to it are lost while it is down; restart registers the same actors
 * (same ids and names) from init on a fresh node, reachable again from the other nodes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages, narrowRef } from '../../../src/actor/index.ts';
import { ConfigError } from '../../../src/errors.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimCluster } from '../../../src/platform/sim/sim-cluster.ts';
import { Random } from '../../../src/random.ts';
import { ledger } from './ledger-actor.ts';
import { testTiming } from './test-timing.ts';

const tickerMessages = messages({ tick: {}, count: {} });
const tickerReplies = messages({ ticks: { ticks: field.f64() } });

/** Re-arms a 1 µs timer for ever: a crashed incarnation's timers must stop. */
const ticker = defineActor({
  name: 'ticker',
  messages: tickerMessages,
  replies: tickerReplies,
  placement: 'any',
  init(ctx) {
    ctx.setTimer(1_000, { type: 'tick' });
  },
  exec(ctx, message) {
    if (message.type === 'tick') ctx.setTimer(1_000, { type: 'tick' });
    else ctx.reply({ type: 'ticks', ticks: 0 });
  },
});

const frontMessages = messages({ add: { key: field.u32(), amount: field.u32(), seq: field.u32() } });

/** Forwards an add to `ledger-far` on the other node; the ledger answers the client. */
const front = defineActor({
  name: 'front',
  messages: frontMessages,
  replies: messages({ total: { key: field.u32(), total: field.f64(), seq: field.u32() } }),
  placement: 'any',
  exec(ctx, message) {
    const far = narrowRef(ctx.lookup('ledger-far'), ledger);
    assert.ok(far);
    ctx.send(far, { type: 'add', key: message.key, amount: message.amount, seq: message.seq });
  },
});

function build() {
  const kernel = new EventKernel();
  const cluster = new SimCluster({ kernel, timing: testTiming(), nodes: 2, random: new Random(3, 'f') });
  const entry = cluster.register(0, front);
  const far = cluster.register(1, ledger, { name: 'ledger-far' });
  const tick = cluster.register(1, ticker);
  return { kernel, cluster, entry, far, tick };
}

/** Sends one add through node 0's front; returns the total answered, or undefined without an answer. */
function add(
  setup: ReturnType<typeof build>,
  amount: number,
  untilNs = 1_000_000,
): { answered: boolean; total: number | undefined } {
  const { kernel, cluster, entry } = setup;
  let total: number | undefined;
  let answered = false;
  cluster.clientSend(0, entry, { type: 'add', key: 1, amount, seq: 1 }, (_id, _l, ok, reply) => {
    answered = true;
    if (ok) total = (reply as { total: number }).total;
  });
  kernel.run({ untilNs: kernel.now() + untilNs });
  return { answered, total };
}

test('a crashed node loses its DMOs; restart brings the same actor back from init', () => {
  const setup = build();
  assert.equal(add(setup, 5).total, 5);
  assert.equal(add(setup, 2).total, 7);
  setup.cluster.crash(1);
  assert.equal(setup.cluster.isDown(1), true);
  const during = add(setup, 4);
  assert.equal(during.answered, false, 'nothing answers from a crashed node');
  assert.ok(setup.cluster.counters.framesCrashed >= 1, 'the frame to the crashed node was counted');
  const fresh = setup.cluster.restart(1);
  assert.equal(setup.cluster.isDown(1), false);
  assert.equal(setup.cluster.node(1), fresh);
  assert.equal(fresh.instance(setup.far.id).state, 'ready', 'same id on the fresh node');
  assert.equal(add(setup, 3).total, 3, 'the ledger restarted from init (its DMOs were lost)');
});

test('a client of the crashed node never hears an answer its old incarnation gives', () => {
  const setup = build();
  let heard = 0;
  setup.cluster.clientSend(1, setup.far, { type: 'add', key: 1, amount: 1, seq: 1 }, () => heard++);
  // The ledger's handler takes 3 µs; crash while the request is inside the node.
  setup.kernel.run({ untilNs: setup.kernel.now() + 500 });
  setup.cluster.crash(1);
  setup.kernel.run({ untilNs: setup.kernel.now() + 1_000_000 });
  assert.equal(heard, 0);
  assert.equal(
    setup.cluster.clientSend(1, setup.far, { type: 'get', key: 1 }, () => heard++),
    -1,
  );
});

test("a crash cancels the old incarnation's timers; restart arms the fresh one's", () => {
  const setup = build();
  setup.kernel.run({ untilNs: 10_000 });
  const old = setup.cluster.node(1);
  assert.equal(old.instance(setup.tick.id).pendingTimers().length, 1);
  setup.cluster.crash(1);
  assert.equal(old.instance(setup.tick.id).pendingTimers().length, 0);
  setup.kernel.run({ untilNs: 20_000 });
  assert.equal(old.instance(setup.tick.id).pendingTimers().length, 0, 'no tick re-armed after the crash');
  const fresh = setup.cluster.restart(1);
  assert.equal(fresh.instance(setup.tick.id).pendingTimers().length, 1);
});

test('crash and restart refuse a node in the wrong state', () => {
  const setup = build();
  assert.throws(() => setup.cluster.restart(1), ConfigError);
  setup.cluster.crash(1);
  assert.throws(() => setup.cluster.crash(1), ConfigError);
  assert.throws(() => setup.cluster.crash(7), ConfigError);
});

test("an answer for a crashed incarnation's request never reaches a new request (ids continue)", () => {
  // Node 0's front forwards to the ledger on node 1, which answers node 0's client by port. Crash
  // node 0 while the old request is at node 1, restart it, send a new request at once: the old
  // answer still arrives at node 0's port. With request ids restarting at 1 it matched the new one.
  let oldInFlight = 0;
  for (let crashAtNs = 500; crashAtNs <= 15_000; crashAtNs += 500) {
    const setup = build();
    const { kernel, cluster, entry } = setup;
    let oldAnswered = false;
    cluster.clientSend(0, entry, { type: 'add', key: 1, amount: 100, seq: 111 }, () => {
      oldAnswered = true;
    });
    kernel.run({ untilNs: crashAtNs });
    if (oldAnswered) continue;
    oldInFlight++;
    const before = cluster.node(0).nextRequestId;
    cluster.crash(0);
    cluster.restart(0);
    assert.equal(cluster.node(0).nextRequestId, before, 'the fresh incarnation continues the ids');
    const seqs: number[] = [];
    cluster.clientSend(0, entry, { type: 'add', key: 2, amount: 5, seq: 222 }, (_id, _l, ok, reply) => {
      if (ok) seqs.push((reply as { seq: number }).seq);
    });
    kernel.run({ untilNs: kernel.now() + 1_000_000 });
    assert.equal(oldAnswered, false, `crash at ${crashAtNs} ns: the old request's client is gone`);
    assert.deepEqual(seqs, [222], `crash at ${crashAtNs} ns: the new request hears its own answer only`);
  }
  // The scenario must have put an old request in flight at node 1 for some crash times.
  assert.ok(oldInFlight >= 5, `old requests in flight at the crash: ${oldInFlight}`);
});

test('register records an actor only once it is registered (restart does not bring back a failed one)', () => {
  const kernel = new EventKernel();
  const cluster = new SimCluster({ kernel, timing: testTiming(), nodes: 2 });
  const entry = cluster.register(0, front);
  cluster.register(1, ledger, { name: 'ledger-far' });
  // A registration the node refuses (no such domain).
  const domain = 'nowhere' as unknown as 'nic';
  assert.throws(() => cluster.register(0, ledger, { name: 'ledger-bad', domain }), ConfigError);
  cluster.crash(0);
  const fresh = cluster.restart(0); // re-registering the refused one would throw here
  assert.equal(fresh.instance(entry.id).state, 'ready');
  assert.equal(
    fresh.table.lookupName('ledger-bad'),
    undefined,
    'the failed registration is not re-registered',
  );
});
