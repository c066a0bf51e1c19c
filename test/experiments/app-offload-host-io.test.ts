/**
 * The host-only baseline's packet I/O (withHostPacketIo in src/experiments/app-offload.ts): the
 * wrapped actor costs its own work plus Fig 6's DPDK receive (request frame) and send (answer
 * frame) for client messages, and exactly its own work for everything else.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages } from '../../src/actor/index.ts';
import { withHostPacketIo } from '../../src/experiments/app-offload.ts';
import { messagingLatencyNs } from '../../src/hw/models/messaging.ts';
import { frameBytes } from '../../src/platform/sim/sim-node.ts';

const probeMessages = messages({
  request: { body: field.bytes({ maxBytes: 4096 }) },
  internal: { n: field.u32() },
});
const probe = defineActor({
  name: 'probe',
  messages: probeMessages,
  placement: 'any',
  exclusive: false,
  exec() {},
  cost: (message) => ({
    instructions: 1000,
    ipc: 1.2,
    ...(message.type === 'request' ? { fixedNs: 5 } : {}),
  }),
});

test('client messages pay DPDK receive of the request frame and send of the answer; others nothing', () => {
  const wrapped = withHostPacketIo(probe, (m) => (m as { type: string }).type === 'request', 256);
  const small = { type: 'request' as const, body: new Uint8Array(10) };
  const rx256 = messagingLatencyNs('dpdk-recv', 256);
  const tx64 = messagingLatencyNs('dpdk-send', 64);
  assert.deepEqual(wrapped.cost(small), { instructions: 1000, ipc: 1.2, fixedNs: 5 + rx256 + tx64 });
  // A message larger than the packet size travels in its own, larger frame.
  const large = { type: 'request' as const, body: new Uint8Array(1000) };
  const frame = frameBytes(probeMessages.sizeOf(large));
  assert.ok(frame > 256);
  assert.equal(wrapped.cost(large)?.fixedNs, 5 + messagingLatencyNs('dpdk-recv', frame) + tx64);
  assert.deepEqual(wrapped.cost({ type: 'internal', n: 1 }), { instructions: 1000, ipc: 1.2 });
  // Same codecs, placement and lock: refs and topology lookups still match the original.
  assert.equal(wrapped.messages, probe.messages);
  assert.equal(wrapped.placement, probe.placement);
  assert.equal(wrapped.exclusive, probe.exclusive);
  assert.ok(rx256 > 0 && tx64 > 0);
});
