/**
 * The simulator's twin of test/platform/live/node/migration-host-sender-order.test.ts: a host
 * actor's messages reach an actor moved NIC ⇄ host in the order it sent them — those sent after
 * the move to the host must not overtake the ones the NIC buffered meanwhile, which cross the
 * channel after it (fixtures: test/platform/live/node/fixtures/order-actors.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { pump, tally } from '../live/node/fixtures/order-actors.ts';
import { testTiming } from './test-timing.ts';

const NOTES = 20_000;

test('a host sender’s messages reach an actor migrating NIC → host in the order it sent them', () => {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming(),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const tallyRef = node.register(tally);
  const pumpRef = node.register(pump);
  node.clientSend(pumpRef, { type: 'start', until: NOTES }, (_id, _latency, ok) => assert.ok(ok));
  let toHost = 0;
  let done = false;
  const flip = () => {
    if (done) return;
    const side = node.domainOf(tallyRef.id);
    if (side !== 'migrating') {
      node.migrate(tallyRef.id, side === 'nic' ? 'host' : 'nic');
      if (side === 'nic') toHost++;
    }
    kernel.at(kernel.now() + 50_000, flip);
  };
  kernel.at(10_000, flip);
  let report = { last: 0, disorder: 0, count: 0 };
  const ask = () => {
    node.clientSend(tallyRef, { type: 'report' }, (_id, _latency, ok, reply) => {
      assert.ok(ok);
      report = reply as typeof report;
      if (report.count >= NOTES) done = true;
      else kernel.at(kernel.now() + 1_000_000, ask);
    });
  };
  kernel.at(1_000_000, ask);
  kernel.run({});
  assert.ok(toHost >= 3, `tally moved to the host ${toHost} times while the notes flowed`);
  assert.equal(report.count, NOTES, 'every note arrived once');
  assert.equal(report.disorder, 0, `${report.disorder} notes arrived after a later one`);
  assert.equal(report.last, NOTES);
});
