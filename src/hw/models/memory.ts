/**
 * Memory tiers (Table 2, pointer chasing with random stride): what one dependent access costs on a
 * core, by where the data's working set fits — L1, L2, L3 (hosts only; none of the NICs has one) or
 * DRAM. This is the paper's implication I5: a working set beyond the NIC's L2 pays DRAM latency on
 * every miss (115 ns on the LiquidIO), while the host still serves it from its L3 (22.4 ns), so
 * memory-bound work can run slower on the NIC than on the host.
 *
 * A working set "fits" a level when it is no larger than that level's capacity — the
 * pointer-chasing benchmark's regime, where the latency steps at each capacity. The LiquidIO's
 * scratchpad (54 cache lines) is recorded in the profile but is not a tier here: actors' DMOs live
 * in ordinary memory.
 */

import type { HardwareProfile } from '../schema.ts';

/** A level of the memory hierarchy. */
export type MemoryTier = 'l1' | 'l2' | 'l3' | 'dram';

/** The level that serves accesses to a working set of `workingSetBytes` (Infinity: beyond every cache). */
export function memoryTier(profile: HardwareProfile, workingSetBytes: number): MemoryTier {
  const memory = profile.memory;
  if (workingSetBytes <= memory.l1Bytes) return 'l1';
  if (workingSetBytes <= memory.l2Bytes) return 'l2';
  if (memory.l3Bytes !== null && workingSetBytes <= memory.l3Bytes) return 'l3';
  return 'dram';
}

/** Latency of one level, ns. */
export function tierLatencyNs(profile: HardwareProfile, tier: MemoryTier): number {
  const latency = profile.memory.latencyNs;
  if (tier === 'l3') return latency.l3 ?? latency.dram;
  return latency[tier];
}

/** Latency of one dependent access into a working set of `workingSetBytes`, ns (Table 2). */
export function memoryAccessNs(profile: HardwareProfile, workingSetBytes: number): number {
  return tierLatencyNs(profile, memoryTier(profile, workingSetBytes));
}

/**
 * The extra time an L2 miss costs over an L2 hit, ns: (L3 if the working set fits there, else
 * DRAM) − L2. This is what the handler cost model charges per miss counted by MPKI, since Table 3's
 * IPC already includes the L2 hits. CN2350: 115 − 55.8 = 59.2 ns.
 */
export function l2MissPenaltyNs(
  profile: HardwareProfile,
  workingSetBytes = Number.POSITIVE_INFINITY,
): number {
  const memory = profile.memory;
  const beyond =
    memory.l3Bytes !== null && memory.latencyNs.l3 !== null && workingSetBytes <= memory.l3Bytes
      ? memory.latencyNs.l3
      : memory.latencyNs.dram;
  return Math.max(0, beyond - memory.latencyNs.l2);
}
