/**
 * The socket core's counters block helpers (socket-core-protocol.ts): the running request's IPv4
 * address round-trips through a counter slot (the watchdog answers that request from it), anything
 * else reads as 0; every drop reason has a slot of its own and an unknown one lands in `other`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  dropSlot,
  ipv4ToU32,
  SLOT_DROPS,
  SLOT_EXECUTED,
  SOCKET_CORE_DROP_REASONS,
  u32ToIpv4,
} from '../../../../src/platform/live/node/socket-core-protocol.ts';

test('an IPv4 literal round-trips through a u32 slot; other strings read as 0', () => {
  fc.assert(
    fc.property(fc.ipV4(), (address) => {
      const value = ipv4ToU32(address);
      assert.ok(Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff);
      assert.equal(u32ToIpv4(value), address);
    }),
    { seed: 20_261_122, numRuns: 500 },
  );
  for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1..2.3', '::1', 'localhost', '1.2.3.4 '])
    assert.equal(ipv4ToU32(bad), 0, JSON.stringify(bad));
});

test('each drop reason has its own slot, below the executed counters; unknown ones count as other', () => {
  const slots = SOCKET_CORE_DROP_REASONS.map(dropSlot);
  assert.equal(new Set(slots).size, SOCKET_CORE_DROP_REASONS.length);
  for (const slot of slots) assert.ok(slot >= SLOT_DROPS && slot < SLOT_EXECUTED);
  assert.equal(dropSlot('no-such-reason'), dropSlot('other'));
});
