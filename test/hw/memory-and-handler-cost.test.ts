import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { HandlerWork } from '../../src/actor/cost.ts';
import { MEMORY_LATENCY_NS, TASK_KIND_NAMES, TASK_TABLE } from '../../src/hw/data/published.ts';
import { handlerTimeBreakdown, handlerTimeNs, REFERENCE_CORE } from '../../src/hw/models/handler-cost.ts';
import { l2MissPenaltyNs, memoryAccessNs, memoryTier } from '../../src/hw/models/memory.ts';
import {
  BLUEFIELD_1M332A,
  LIQUIDIO_CN2350,
  LIQUIDIO_CN2360,
  STINGRAY_PS225,
  XEON_E5_2620V4,
  XEON_E5_2680V3,
} from '../../src/hw/profiles.ts';
import type { HardwareProfile } from '../../src/hw/schema.ts';
import { TASK_KINDS } from '../../src/hw/task-kinds.ts';

const KIB = 1024;
const MIB = 1024 * KIB;

test('Table 2: each tier of each core is reproduced by where the working set fits', () => {
  const cases: [HardwareProfile, keyof typeof MEMORY_LATENCY_NS][] = [
    [LIQUIDIO_CN2350, 'liquidio'],
    [BLUEFIELD_1M332A, 'bluefield'],
    [STINGRAY_PS225, 'stingray'],
    [XEON_E5_2680V3, 'host-xeon'],
  ];
  for (const [profile, row] of cases) {
    const published = MEMORY_LATENCY_NS[row];
    assert.equal(memoryAccessNs(profile, 16 * KIB), published.l1, `${profile.name} L1`);
    assert.equal(memoryAccessNs(profile, profile.memory.l2Bytes), published.l2, `${profile.name} L2`);
    if (published.l3 !== null)
      assert.equal(memoryAccessNs(profile, 8 * MIB), published.l3, `${profile.name} L3`);
    assert.equal(memoryAccessNs(profile, 1024 * MIB), published.dram, `${profile.name} DRAM`);
  }
});

test('I5: a working set just over the NIC L2 costs DRAM on the NIC but L3 on the host', () => {
  const workingSet = LIQUIDIO_CN2350.memory.l2Bytes + 1;
  assert.equal(memoryTier(LIQUIDIO_CN2350, workingSet), 'dram');
  assert.equal(memoryTier(XEON_E5_2680V3, workingSet), 'l3');
  assert.ok(memoryAccessNs(LIQUIDIO_CN2350, workingSet) > 5 * memoryAccessNs(XEON_E5_2680V3, workingSet));
  // A memory-bound handler over that working set is slower on the NIC than on the host.
  const work: HandlerWork = {
    instructions: 1000,
    ipc: 1.3,
    memoryAccesses: 500,
    workingSetBytes: workingSet,
  };
  assert.ok(handlerTimeNs(LIQUIDIO_CN2350, work) > 2 * handlerTimeNs(XEON_E5_2680V3, work));
});

test('Table 3: handlerTimeNs on one CN2350 core reproduces every task latency', () => {
  for (const name of TASK_KIND_NAMES) {
    const modelUs = handlerTimeNs(LIQUIDIO_CN2350, TASK_KINDS[name]) / 1000;
    assert.ok(
      Math.abs(modelUs - TASK_TABLE[name].latencyUs) < 1e-9,
      `${name}: ${modelUs} vs ${TASK_TABLE[name].latencyUs}`,
    );
  }
});

test('task kinds carry Table 3 IPC and MPKI, and instructions = latency × 1.2 GHz × IPC', () => {
  const kv = TASK_KINDS['kv-cache'];
  assert.equal(kv.ipc, 1.2);
  assert.equal(kv.mpki, 0.9);
  assert.ok(Math.abs(kv.instructions - 3.7 * 1200 * 1.2) < 1e-9);
  assert.ok(Object.isFrozen(TASK_KINDS) && Object.isFrozen(kv));
});

test('host time follows: base re-timed, stalls re-priced; high-MPKI work gains least from the host', () => {
  const ratio = (name: keyof typeof TASK_KINDS): number =>
    handlerTimeNs(LIQUIDIO_CN2350, TASK_KINDS[name]) / handlerTimeNs(XEON_E5_2680V3, TASK_KINDS[name]);
  for (const name of TASK_KIND_NAMES) assert.ok(ratio(name) > 1, `${name} should be faster on the host`);
  assert.ok(ratio('flow-classifier') < ratio('top-ranker'));
  const echo = handlerTimeBreakdown(XEON_E5_2680V3, TASK_KINDS.echo);
  const misses = (TASK_KINDS.echo.instructions * 0.6) / 1000;
  assert.ok(
    Math.abs(echo.missStallNs - misses * (62.2 - 6.0)) < 1e-9,
    'host stalls priced at host DRAM − L2',
  );
  assert.ok(handlerTimeNs(XEON_E5_2620V4, TASK_KINDS.echo) > handlerTimeNs(XEON_E5_2680V3, TASK_KINDS.echo));
  assert.ok(
    handlerTimeNs(LIQUIDIO_CN2360, TASK_KINDS.echo) < handlerTimeNs(LIQUIDIO_CN2350, TASK_KINDS.echo),
  );
});

test('the reference miss penalty is DRAM − L2 of the LiquidIO, and misses that fit an L3 are cheaper', () => {
  assert.ok(Math.abs(REFERENCE_CORE.missPenaltyNs - 59.2) < 1e-9);
  assert.ok(Math.abs(l2MissPenaltyNs(LIQUIDIO_CN2350) - 59.2) < 1e-9);
  assert.ok(Math.abs(l2MissPenaltyNs(XEON_E5_2680V3, 8 * MIB) - 16.4) < 1e-9);
  assert.ok(Math.abs(l2MissPenaltyNs(XEON_E5_2680V3) - 56.2) < 1e-9);
});

test('every part adds: fixedNs, explicit accesses, accelerator stalls', () => {
  const base: HandlerWork = { instructions: 2000, ipc: 1.0 };
  const plain = handlerTimeNs(LIQUIDIO_CN2350, base);
  assert.ok(Math.abs(plain - 2000 / 1.2) < 1e-9);
  assert.equal(handlerTimeNs(LIQUIDIO_CN2350, { ...base, fixedNs: 500 }), plain + 500);
  assert.ok(
    Math.abs(
      handlerTimeNs(LIQUIDIO_CN2350, { ...base, memoryAccesses: 10, workingSetBytes: 1 * MIB }) -
        (plain + 558),
    ) < 1e-9,
  );
  const withAes = handlerTimeNs(LIQUIDIO_CN2350, { ...base, accelerators: [{ kind: 'aes', bytes: 1024 }] });
  assert.ok(Math.abs(withAes - (plain + 2700)) < 1e-9);
  const synthetic = handlerTimeNs(STINGRAY_PS225, { instructions: 0, fixedNs: 32_000 });
  assert.equal(synthetic, 32_000);
  const breakdown = handlerTimeBreakdown(LIQUIDIO_CN2350, { ...base, fixedNs: 7 });
  assert.ok(Math.abs(breakdown.totalNs - handlerTimeNs(LIQUIDIO_CN2350, { ...base, fixedNs: 7 })) < 1e-9);
});

test('handler time is non-negative, grows with instructions and never beats the issue width', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      fc.double({ min: 0.1, max: 4, noNaN: true }),
      fc.double({ min: 0, max: 50, noNaN: true }),
      fc.constantFrom<HardwareProfile>(LIQUIDIO_CN2350, STINGRAY_PS225, BLUEFIELD_1M332A, XEON_E5_2680V3),
      (instructions, ipc, mpki, core) => {
        const time = handlerTimeNs(core, { instructions, ipc, mpki });
        const more = handlerTimeNs(core, { instructions: instructions * 2 + 1, ipc, mpki });
        assert.ok(time >= 0 && Number.isFinite(time));
        assert.ok(more > time);
        const floorNs = ((instructions / REFERENCE_CORE.issueWidth) * core.cores.cpiScale) / core.cores.ghz;
        assert.ok(time >= floorNs - 1e-6);
      },
    ),
  );
});
