import assert from 'node:assert/strict';
import { test } from 'node:test';
import { counter } from '../../../examples/counter.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { ledger } from './ledger-actor.ts';
import { testTiming } from './test-timing.ts';

test('an actor on the simulated NIC answers clients; latency follows the model', () => {
  const kernel = new EventKernel();
  const node = new SimNode({ timing: testTiming(), kernel });
  const ref = node.register(counter);
  const latencies: number[] = [];
  node.clientSend(ref, { type: 'get', key: 1 }, (_id, latencyNs, ok) => {
    assert.ok(ok);
    latencies.push(latencyNs);
  });
  kernel.run({ untilNs: 1_000_000 });
  assert.equal(latencies.length, 1);
  // wire (1000) + request frame (5-byte message → 71 B → 72.8 ns) + NIC packet max(100 + 4000, 1000)
  // + reply frame (9-byte message → 75 B → 76 ns) + wire (1000); the default cost is the declared 4000.
  assert.equal(latencies[0], 1_000 + 73 + 4_100 + 76 + 1_000);
});

test('forced migrations back and forth under closed-loop load lose nothing and keep state', () => {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming(),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const ref = node.register(ledger);
  const total = 20_000;
  const model = new Map<number, number>();
  const lastSeqByKey = new Map<number, number>();
  let sent = 0;
  let answered = 0;
  const send = () => {
    const seq = ++sent;
    const key = seq % 5;
    const amount = seq % 7;
    model.set(key, (model.get(key) ?? 0) + amount);
    node.clientSend(ref, { type: 'add', key, amount, seq }, (_id, _latency, ok, reply) => {
      assert.ok(ok, `request ${seq} refused: ${String(reply)}`);
      answered++;
      const answer = reply as { key: number; seq: number };
      // The ledger is exclusive and each key's adds are sent in order: replies come back in order.
      assert.ok(answer.seq > (lastSeqByKey.get(answer.key) ?? 0), 'per-key order kept across migrations');
      lastSeqByKey.set(answer.key, answer.seq);
      if (sent < total) send();
    });
  };
  for (let i = 0; i < 32; i++) send();
  let migrations = 0;
  const flip = () => {
    if (answered >= total - 64) return;
    const side = node.domainOf(ref.id);
    if (side !== 'migrating') {
      node.migrate(ref.id, side === 'nic' ? 'host' : 'nic');
      migrations++;
    }
    kernel.at(kernel.now() + 200_000, flip);
  };
  kernel.at(100_000, flip);
  kernel.run({});
  assert.equal(answered, total, 'every request answered exactly once');
  assert.equal(node.outstandingClients(), 0);
  assert.ok(migrations >= 20, `only ${migrations} migrations`);
  assert.ok(node.migrations.length >= 20);
  assert.ok(node.migrations.every((m) => m.phasesNs.gone > 0 && m.stateBytes > 0));
  assert.ok(
    node.migrations.some((m) => m.bufferedRequests > 0),
    'some migrations buffered requests',
  );
  for (const [key, value] of model) {
    let got = -1;
    node.clientSend(ref, { type: 'get', key }, (_id, _l, _ok, reply) => {
      got = (reply as { total: number }).total;
    });
    kernel.run({});
    assert.equal(got, value, `key ${key}`);
  }
});
