/**
 * Which NIC core takes the next packet: the lowest-numbered idle one, every idle core while work
 * waits, and cores past 31 too (SimNode finds cores 0–31 in an idle bit mask and scans the rest).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages } from '../../../src/actor/index.ts';
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

const hostEcho = defineActor({
  name: 'host-echo',
  messages: messages({ ping: { seq: field.u32() } }),
  replies: messages({ pong: { seq: field.u32() } }),
  placement: 'host',
  exec(ctx, message) {
    ctx.reply({ type: 'pong', seq: message.seq });
  },
  cost: () => ({ instructions: 0, fixedNs: 0 }),
});

test('a queued burst for a host actor is shared by the idle NIC cores, one packet each per turn', () => {
  // Every packet is forwarded to the host and every answer passes a NIC core on its way out, each
  // 1 µs of a core (testTiming: max(100 + 300, 1000) and max(100, 1000)). 24 minimum frames sent
  // at once arrive 67 ns apart: the 4 cores take the first 4 and the rest queue. A core that is
  // forwarding is busy, so when one frees it takes the head packet and the next waits for the
  // next free core; a core that claimed the whole queue at once would forward it serially, its
  // PCIe reservations ahead of everyone's, while the other cores sat idle.
  const kernel = new EventKernel();
  const nicCores = 4;
  const node = new SimNode({
    timing: testTiming({ nicCores }),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const echo = node.register(hostEcho);
  const latenciesNs: number[] = [];
  const packets = 24;
  for (let seq = 0; seq < packets; seq++) {
    node.clientSend(
      echo,
      { type: 'ping', seq },
      (_id, latencyNs, ok) => {
        assert.ok(ok);
        latenciesNs.push(latencyNs);
      },
      64,
      { atNs: 0 },
    );
  }
  kernel.run({});
  assert.equal(latenciesNs.length, packets);
  // 48 pieces of 1 µs on 4 cores: none does more than its share (12) plus one.
  const busy = [...node.busyNs().nic];
  const shareNs = ((2 * packets) / nicCores) * 1_000;
  for (const [core, ns] of busy.entries()) {
    assert.ok(ns <= shareNs + 1_000, `core ${core} did its share of the burst (busy ${busy.join(', ')} ns)`);
  }
  // Its last answer leaves after at most 13 µs of core time, 1 µs of wire in, 1 µs of PCIe each
  // way and 1 µs of wire out (17 µs); batches serialised on one core took longer (19.4 µs).
  const worstNs = Math.max(...latenciesNs);
  assert.ok(worstNs < 17_000, `the burst drained on all four cores (worst latency ${worstNs} ns)`);
});
