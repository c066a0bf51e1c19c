import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DMA_LATENCY_US_CN2350,
  DMA_PER_CORE_MOPS_CN2350,
  HOST_COMM_SIZES_BYTES,
  MESSAGING_LATENCY_US,
  MESSAGING_SIZES_BYTES,
  MESSAGING_TEXT_SPEEDUP,
  RDMA_BLUEFIELD,
} from '../../src/hw/data/published.ts';
import {
  batchedTransfer,
  bulkTransfer,
  hostPathLatencyNs,
  hostPathOpsPerSec,
  hostTransfer,
} from '../../src/hw/models/host-transfer.ts';
import { MESSAGING_MECHANISMS, messagingLatencyNs } from '../../src/hw/models/messaging.ts';
import { pcieEfficiency, pcieTlpCount, pcieWireBytes } from '../../src/hw/models/pcie.ts';
import { BLUEFIELD_1M332A, LIQUIDIO_CN2350, LIQUIDIO_CN2360, STINGRAY_PS225 } from '../../src/hw/profiles.ts';

function within10(model: number, published: number, what: string): void {
  assert.ok(Math.abs(model / published - 1) <= 0.1, `${what}: model ${model}, published ${published}`);
}

test('CN2350 DMA latency (blocking by size, non-blocking) is within 10% of every published point', () => {
  HOST_COMM_SIZES_BYTES.forEach((bytes, index) => {
    within10(
      hostPathLatencyNs(LIQUIDIO_CN2350, { direction: 'read', blocking: true }, bytes) / 1000,
      DMA_LATENCY_US_CN2350.blockingRead[index]!,
      `read ${bytes}`,
    );
    within10(
      hostPathLatencyNs(LIQUIDIO_CN2350, { direction: 'write', blocking: true }, bytes) / 1000,
      DMA_LATENCY_US_CN2350.blockingWrite[index]!,
      `write ${bytes}`,
    );
  });
  within10(
    hostPathLatencyNs(LIQUIDIO_CN2350, { direction: 'read' }, 4) / 1000,
    DMA_LATENCY_US_CN2350.nonblockingRead,
    'nb read',
  );
  within10(
    hostPathLatencyNs(LIQUIDIO_CN2350, { direction: 'write' }, 4) / 1000,
    DMA_LATENCY_US_CN2350.nonblockingWrite,
    'nb write',
  );
});

test('CN2350 DMA per-core throughput is within 10% of every published point', () => {
  HOST_COMM_SIZES_BYTES.forEach((bytes, index) => {
    within10(
      hostPathOpsPerSec(LIQUIDIO_CN2350, { direction: 'read', blocking: true }, bytes) / 1e6,
      DMA_PER_CORE_MOPS_CN2350.blockingRead[index]!,
      `read ${bytes}`,
    );
    within10(
      hostPathOpsPerSec(LIQUIDIO_CN2350, { direction: 'write', blocking: true }, bytes) / 1e6,
      DMA_PER_CORE_MOPS_CN2350.blockingWrite[index]!,
      `write ${bytes}`,
    );
  });
  within10(
    hostPathOpsPerSec(LIQUIDIO_CN2350, { direction: 'read' }, 64) / 1e6,
    DMA_PER_CORE_MOPS_CN2350.nonblockingRead,
    'nb read',
  );
  within10(
    hostPathOpsPerSec(LIQUIDIO_CN2350, { direction: 'write' }, 64) / 1e6,
    DMA_PER_CORE_MOPS_CN2350.nonblockingWrite,
    'nb write',
  );
});

test('BlueField RDMA latency and Mops are within 10%; RDMA is a third of DMA small, similar large', () => {
  HOST_COMM_SIZES_BYTES.forEach((bytes, index) => {
    within10(
      hostPathLatencyNs(BLUEFIELD_1M332A, { direction: 'read' }, bytes) / 1000,
      RDMA_BLUEFIELD.readLatencyUs[index]!,
      `read ${bytes}`,
    );
    within10(
      hostPathLatencyNs(BLUEFIELD_1M332A, { direction: 'write' }, bytes) / 1000,
      RDMA_BLUEFIELD.writeLatencyUs[index]!,
      `write ${bytes}`,
    );
  });
  within10(
    hostPathOpsPerSec(BLUEFIELD_1M332A, { direction: 'read' }, 64) / 1e6,
    RDMA_BLUEFIELD.readMops,
    'read Mops',
  );
  within10(
    hostPathOpsPerSec(BLUEFIELD_1M332A, { direction: 'write' }, 64) / 1e6,
    RDMA_BLUEFIELD.writeMops,
    'write Mops',
  );
  const ratio = (bytes: number): number =>
    hostPathOpsPerSec(BLUEFIELD_1M332A, { direction: 'read' }, bytes) /
    hostPathOpsPerSec(LIQUIDIO_CN2350, { direction: 'read', blocking: true }, bytes);
  for (const bytes of [4, 16, 64]) assert.ok(Math.abs(ratio(bytes) - 1 / 3) < 0.05, `a third at ${bytes} B`);
  for (const bytes of [1024, 2048]) assert.ok(ratio(bytes) > 0.9, `similar at ${bytes} B`);
  // "nearly doubles blocking-DMA latency"
  const latencyRatio =
    hostPathLatencyNs(BLUEFIELD_1M332A, { direction: 'read' }, 64) /
    hostPathLatencyNs(LIQUIDIO_CN2350, { direction: 'read', blocking: true }, 64);
  assert.ok(latencyRatio > 1.7 && latencyRatio < 2.5);
});

test('the Stingray borrows the BlueField RDMA path and the CN2360 the CN2350 DMA path', () => {
  assert.equal(STINGRAY_PS225.hostPath.kind, 'rdma');
  assert.equal(STINGRAY_PS225.hostPath.provenance, 'borrowed');
  assert.equal(
    hostPathLatencyNs(STINGRAY_PS225, { direction: 'write' }, 256),
    hostPathLatencyNs(BLUEFIELD_1M332A, { direction: 'write' }, 256),
  );
  assert.equal(LIQUIDIO_CN2360.hostPath.kind, 'native-dma');
  assert.equal(LIQUIDIO_CN2360.hostPath.provenance, 'borrowed');
});

test('Fig 6: every messaging point is within 10%, and the text ratios within 10%', () => {
  for (const mechanism of MESSAGING_MECHANISMS) {
    MESSAGING_SIZES_BYTES.forEach((bytes, index) => {
      within10(
        messagingLatencyNs(mechanism, bytes) / 1000,
        MESSAGING_LATENCY_US[mechanism][index]!,
        `${mechanism} ${bytes}`,
      );
    });
  }
  const ratio = (other: 'dpdk-send' | 'rdma-send'): number =>
    MESSAGING_SIZES_BYTES.reduce(
      (sum, bytes) => sum + messagingLatencyNs(other, bytes) / messagingLatencyNs('nic-send', bytes),
      0,
    ) / MESSAGING_SIZES_BYTES.length;
  within10(ratio('dpdk-send'), MESSAGING_TEXT_SPEEDUP.vsDpdk, 'vs DPDK');
  within10(ratio('rdma-send'), MESSAGING_TEXT_SPEEDUP.vsRdma, 'vs RDMA');
});

test('between measured sizes curves interpolate monotonically; past 2 KB latency keeps growing', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 65_536 }), fc.integer({ min: 1, max: 65_536 }), (a, b) => {
      const [small, large] = a <= b ? [a, b] : [b, a];
      const kind = { direction: 'read', blocking: true } as const;
      assert.ok(
        hostPathLatencyNs(LIQUIDIO_CN2350, kind, large) >= hostPathLatencyNs(LIQUIDIO_CN2350, kind, small),
      );
      const bytesPerSec = (size: number): number => hostPathOpsPerSec(LIQUIDIO_CN2350, kind, size) * size;
      assert.ok(bytesPerSec(large) >= bytesPerSec(small) * (1 - 1e-9));
    }),
  );
  assert.ok(hostPathLatencyNs(LIQUIDIO_CN2350, { direction: 'write', blocking: true }, 4096) > 1600);
});

test('PCIe: TLP overhead per 256 B packet; small transfers waste more of the link', () => {
  const pcie = LIQUIDIO_CN2350.hostPath.pcie;
  assert.equal(pcieTlpCount(pcie, 64), 1);
  assert.equal(pcieTlpCount(pcie, 2048), 8);
  assert.equal(pcieWireBytes(pcie, 2048), 2048 + 8 * 24);
  assert.equal(pcieTlpCount(pcie, 1000, 3), 4 + 2);
  assert.ok(pcieEfficiency(pcie, 64) < pcieEfficiency(pcie, 2048));
});

test('batching k messages into one DMA cuts the core time per message', () => {
  const single = hostTransfer(LIQUIDIO_CN2350, { direction: 'write', bytes: 64 });
  const batch = batchedTransfer(LIQUIDIO_CN2350, { direction: 'write', messageBytes: 64, messages: 16 });
  assert.ok(batch.perMessageCoreNs < single.coreNs / 4);
  assert.ok(batch.latencyNs >= single.latencyNs);
  const blocking = hostTransfer(LIQUIDIO_CN2350, { direction: 'read', bytes: 256, blocking: true });
  assert.equal(blocking.coreNs, blocking.latencyNs);
  const gathered = hostTransfer(LIQUIDIO_CN2350, { direction: 'write', bytes: 1024, segments: 2 });
  assert.ok(
    gathered.latencyNs > hostTransfer(LIQUIDIO_CN2350, { direction: 'write', bytes: 1024 }).latencyNs,
  );
});

test('bulk transfer (migration phase 3) is bounded by the core and the link, plus one latency', () => {
  const timing = bulkTransfer(LIQUIDIO_CN2350, { direction: 'write', bytes: 1_000_000 });
  assert.equal(timing.chunks, Math.ceil(1_000_000 / 2048));
  assert.ok(timing.elapsedNs > timing.coreNs);
  assert.ok(timing.elapsedNs >= (1_000_000 / 7.87) * 1.0);
  assert.deepEqual(bulkTransfer(LIQUIDIO_CN2350, { direction: 'write', bytes: 0 }), {
    chunks: 0,
    coreNs: 0,
    elapsedNs: 0,
  });
  const rdma = bulkTransfer(BLUEFIELD_1M332A, { direction: 'write', bytes: 1_000_000 });
  assert.ok(rdma.coreNs > 0 && rdma.elapsedNs > rdma.coreNs);
});
