import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { getNicProfile } from '../../src/hw/load-profile.ts';
import {
  coresForLineRate,
  forwardingComputeNs,
  forwardingThroughput,
  headroomNs,
  ioIntervalNs,
  perPacketCoreNs,
} from '../../src/hw/models/forwarding.ts';
import { linePacketsPerSec, serializationNs, wireBytes } from '../../src/hw/models/link.ts';
import { NIC_PROFILE_NAMES } from '../../src/hw/profiles.ts';

const nicName = fc.constantFrom(...NIC_PROFILE_NAMES);
const packetBytes = fc.integer({ min: 64, max: 9000 });
const addedNs = fc.double({ min: 0, max: 50_000, noNaN: true });

test('more cores never give less throughput', () => {
  fc.assert(
    fc.property(nicName, packetBytes, addedNs, (name, size, added) => {
      const nic = getNicProfile(name);
      let previous = 0;
      for (let cores = 1; cores <= nic.cores.count; cores++) {
        const pps = forwardingThroughput(nic, { packetBytes: size, cores, addedNs: added }).packetsPerSec;
        assert.ok(pps >= previous * (1 - 1e-12), `${name} ${size} B: ${cores} cores ${pps} < ${previous}`);
        previous = pps;
      }
    }),
  );
});

test('more work per packet never gives more throughput, and never exceeds line rate', () => {
  fc.assert(
    fc.property(nicName, packetBytes, addedNs, addedNs, (name, size, a, b) => {
      const nic = getNicProfile(name);
      const [less, more] = a <= b ? [a, b] : [b, a];
      const fast = forwardingThroughput(nic, { packetBytes: size, addedNs: less }).packetsPerSec;
      const slow = forwardingThroughput(nic, { packetBytes: size, addedNs: more }).packetsPerSec;
      assert.ok(slow <= fast);
      assert.ok(fast <= linePacketsPerSec(nic.link, size) * (1 + 1e-12));
    }),
  );
});

test('larger packets never need more packets/s for line rate nor more cores to reach it', () => {
  fc.assert(
    fc.property(nicName, packetBytes, packetBytes, (name, a, b) => {
      const nic = getNicProfile(name);
      const [small, large] = a <= b ? [a, b] : [b, a];
      assert.ok(linePacketsPerSec(nic.link, large) <= linePacketsPerSec(nic.link, small));
      const smallCores = coresForLineRate(nic, small) ?? Number.POSITIVE_INFINITY;
      const largeCores = coresForLineRate(nic, large) ?? Number.POSITIVE_INFINITY;
      assert.ok(
        largeCores <= smallCores,
        `${name}: ${small} B needs ${smallCores}, ${large} B needs ${largeCores}`,
      );
    }),
  );
});

test('larger packets never give less goodput with all cores', () => {
  fc.assert(
    fc.property(nicName, packetBytes, packetBytes, (name, a, b) => {
      const nic = getNicProfile(name);
      const [small, large] = a <= b ? [a, b] : [b, a];
      const smallGbps = forwardingThroughput(nic, { packetBytes: small }).goodputGbps;
      const largeGbps = forwardingThroughput(nic, { packetBytes: large }).goodputGbps;
      assert.ok(
        largeGbps >= smallGbps * (1 - 1e-9),
        `${name}: ${small} B ${smallGbps} > ${large} B ${largeGbps}`,
      );
    }),
  );
});

test('a core spends at least its compute plus the added work, and at least its I/O interval', () => {
  fc.assert(
    fc.property(
      nicName,
      packetBytes,
      addedNs,
      fc.integer({ min: 1, max: 16 }),
      (name, size, added, cores) => {
        const nic = getNicProfile(name);
        const perPacket = perPacketCoreNs(nic, size, added, cores);
        assert.ok(perPacket >= forwardingComputeNs(nic, size) + added - 1e-9);
        assert.ok(perPacket >= ioIntervalNs(nic, size, cores) - 1e-9);
      },
    ),
  );
});

test('the headroom is a usable quantum: positive, and the largest work that keeps all-core throughput', () => {
  fc.assert(
    fc.property(nicName, packetBytes, (name, size) => {
      const nic = getNicProfile(name);
      const headroom = headroomNs(nic, size);
      assert.ok(headroom > 0);
      const base = forwardingThroughput(nic, { packetBytes: size }).packetsPerSec;
      const within = forwardingThroughput(nic, {
        packetBytes: size,
        addedNs: headroom * 0.999,
      }).packetsPerSec;
      const beyond = forwardingThroughput(nic, {
        packetBytes: size,
        addedNs: headroom * 1.01 + 1,
      }).packetsPerSec;
      assert.ok(within >= base * (1 - 1e-9));
      assert.ok(beyond < base);
    }),
  );
});

test('links: 20 B per frame on the wire, 64 B minimum frame, serialization in ns', () => {
  const link = { linkGbps: 10 };
  assert.equal(wireBytes(link, 1500), 1520);
  assert.equal(wireBytes(link, 40), 84);
  assert.ok(Math.abs(linePacketsPerSec(link, 64) - 14_880_952.38) < 1);
  assert.ok(Math.abs(serializationNs(link, 1500) - 1216) < 1e-9);
});
