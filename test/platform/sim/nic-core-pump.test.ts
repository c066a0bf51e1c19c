/**
 * Which NIC core takes the next packet: the lowest-numbered idle one, every idle core while work
 * waits, and cores past 31 too (SimNode finds cores 0–31 in an idle bit mask and scans the rest).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { echoActor } from '../../../src/experiments/characterize.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { testTiming } from './test-timing.ts';

const HANDLER_NS = 100_000;

function echoNode(nicCores: number): { node: SimNode; kernel: EventKernel; send: (atNs: number) => void } {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming({ nicCores }),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const echo = node.register(echoActor);
  const message = { type: 'echo' as const, addedNs: HANDLER_NS, payload: new Uint8Array(64) };
  const send = (atNs: number) => {
    node.clientSend(echo, message, (_id, _latencyNs, ok) => assert.ok(ok), 256, { atNs });
  };
  return { node, kernel, send };
}

test('packets spaced wider than a handler all run on core 0, the lowest idle core', () => {
  const { node, kernel, send } = echoNode(4);
  for (let i = 0; i < 10; i++) send(i * 2 * HANDLER_NS);
  kernel.run({});
  const busy = node.busyNs().nic;
  assert.ok((busy[0] as number) >= 10 * HANDLER_NS, `core 0 ran all ten (busy ${busy[0]} ns)`);
  assert.deepEqual([busy[1], busy[2], busy[3]], [0, 0, 0]);
  assert.equal(node.outstandingClients(), 0);
});

for (const nicCores of [31, 32, 33, 40]) {
  test(`a burst reaches every one of ${nicCores} NIC cores, each taking one packet per round`, () => {
    const { node, kernel, send } = echoNode(nicCores);
    // Two packets per core, all sent at once: frames arrive ~67 ns apart, far inside a handler's
    // 100 µs, so the first round fills every core and the second waits for them.
    for (let i = 0; i < 2 * nicCores; i++) send(0);
    kernel.run({});
    const busy = node.busyNs().nic;
    for (let core = 0; core < nicCores; core++) {
      assert.ok(
        (busy[core] as number) >= 2 * HANDLER_NS && (busy[core] as number) < 3 * HANDLER_NS,
        `core ${core} of ${nicCores} ran two packets (busy ${busy[core]} ns)`,
      );
    }
    assert.equal(node.outstandingClients(), 0);
  });
}
