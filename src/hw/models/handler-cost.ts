/**
 * The handler cost model: the time a `HandlerWork` (src/actor/cost.ts) takes on a given core — a
 * NIC core or a host core. It is built on Table 3, which gives each of the paper's tasks a latency,
 * an IPC and an L2 MPKI on one CN2350 core at 1.2 GHz; the CN2350's cnMIPS core is therefore the
 * *reference core*, and a work value's `ipc` and `mpki` are read as measured there.
 *
 * On the reference core (CN2350, f = 1.2 GHz):
 *
 *     cycles      = instructions / ipc                          (Table 3's IPC includes the stalls)
 *     misses      = instructions · mpki / 1000
 *     stallCycles = misses · P_ref · f,   P_ref = DRAM − L2 = 115 − 55.8 = 59.2 ns   (Table 2)
 *     baseCycles  = cycles − stallCycles                        (the stall-free part)
 *
 * so that instructions = latency · f · IPC gives back exactly Table 3's latency. The miss penalty is
 * DRAM − L2, not DRAM: an L2 hit is already part of the measured IPC, and a full 115 ns per miss
 * would make flow-classifier's stalls (15.2 MPKI at IPC 0.5) exceed its whole measured time.
 *
 * On any core X (another NIC or a host):
 *
 *     timeNs = baseCycles · X.cpiScale / X.ghz                  base work, re-timed for X's pipeline
 *            + misses · (tier beyond L2 on X − X's L2)          stalls re-priced at X's memory (I5)
 *            + memoryAccesses · memoryAccessNs(X, workingSet)   explicit dependent accesses
 *            + Σ accelerator stalls                             NIC engine, or host software
 *            + fixedNs
 *
 * where "tier beyond L2" is X's L3 when the working set fits it (hosts only) and DRAM otherwise;
 * without a stated working set, misses and explicit accesses go to DRAM. cpiScale (profiles.ts) is
 * an assumption: stall-free CPI scales with issue width (A72 2/3, Xeon 1/2 of the cnMIPS's). The
 * base part is floored at the reference core's issue width (instructions / 2 cycles), so
 * inconsistent ipc/mpki pairs cannot produce negative or impossibly fast work.
 *
 * Deterministic; handlerTimeNs allocates nothing unless the work calls accelerators.
 */

import type { HandlerWork } from '../../actor/cost.ts';
import { MEMORY_LATENCY_NS, NIC_SPECS } from '../data/published.ts';
import type { HardwareProfile } from '../schema.ts';
import { acceleratorLatencyNs, hostSoftwareLatencyNs } from './accelerator.ts';
import { l2MissPenaltyNs, memoryAccessNs } from './memory.ts';

/** The reference core of `ipc` and `mpki`: one CN2350 cnMIPS core (Table 3). */
export const REFERENCE_CORE = Object.freeze({
  name: 'liquidio-cn2350',
  ghz: NIC_SPECS['liquidio-cn2350'].ghz,
  issueWidth: 2,
  /** DRAM − L2 on the LiquidIO (Table 2): the extra time of an L2 miss, ns. */
  missPenaltyNs: MEMORY_LATENCY_NS.liquidio.dram - MEMORY_LATENCY_NS.liquidio.l2,
  /** IPC assumed when a work value states none: the median of Table 3's eleven tasks. */
  defaultIpc: 1.3,
});

/** The parts of a handler's time, ns. */
export interface HandlerTimeBreakdown {
  readonly baseNs: number;
  readonly missStallNs: number;
  readonly memoryNs: number;
  readonly acceleratorNs: number;
  readonly fixedNs: number;
  readonly totalNs: number;
}

/** Stall-free cycles of `work` on the reference core. */
export function referenceBaseCycles(work: HandlerWork): number {
  const instructions = work.instructions;
  const ipc = work.ipc ?? REFERENCE_CORE.defaultIpc;
  const misses = (instructions * (work.mpki ?? 0)) / 1000;
  const stallCycles = misses * REFERENCE_CORE.missPenaltyNs * REFERENCE_CORE.ghz;
  return Math.max(instructions / ipc - stallCycles, instructions / REFERENCE_CORE.issueWidth);
}

function acceleratorStallNs(core: HardwareProfile, work: HandlerWork): number {
  const uses = work.accelerators;
  if (uses === undefined) return 0;
  let totalNs = 0;
  for (const use of uses) {
    totalNs +=
      core.kind === 'nic'
        ? acceleratorLatencyNs(core, use.kind, { batch: use.batch ?? 1, bytes: use.bytes })
        : hostSoftwareLatencyNs(core, use.kind, use.bytes);
  }
  return totalNs;
}

/** The time `work` takes on `core` (a NIC or host profile), split into its parts. */
export function handlerTimeBreakdown(core: HardwareProfile, work: HandlerWork): HandlerTimeBreakdown {
  const workingSetBytes = work.workingSetBytes ?? Number.POSITIVE_INFINITY;
  const baseNs = (referenceBaseCycles(work) * core.cores.cpiScale) / core.cores.ghz;
  const misses = (work.instructions * (work.mpki ?? 0)) / 1000;
  const missStallNs = misses === 0 ? 0 : misses * l2MissPenaltyNs(core, workingSetBytes);
  const accesses = work.memoryAccesses ?? 0;
  const memoryNs = accesses === 0 ? 0 : accesses * memoryAccessNs(core, workingSetBytes);
  const acceleratorNs = acceleratorStallNs(core, work);
  const fixedNs = work.fixedNs ?? 0;
  return {
    baseNs,
    missStallNs,
    memoryNs,
    acceleratorNs,
    fixedNs,
    totalNs: baseNs + missStallNs + memoryNs + acceleratorNs + fixedNs,
  };
}

/**
 * The time `work` takes on `core`, ns (see the file comment for the model). Same arithmetic as
 * handlerTimeBreakdown without building the breakdown object: the simulator calls this per request.
 */
export function handlerTimeNs(core: HardwareProfile, work: HandlerWork): number {
  const workingSetBytes = work.workingSetBytes ?? Number.POSITIVE_INFINITY;
  let totalNs = (referenceBaseCycles(work) * core.cores.cpiScale) / core.cores.ghz;
  const misses = (work.instructions * (work.mpki ?? 0)) / 1000;
  if (misses !== 0) totalNs += misses * l2MissPenaltyNs(core, workingSetBytes);
  const accesses = work.memoryAccesses ?? 0;
  if (accesses !== 0) totalNs += accesses * memoryAccessNs(core, workingSetBytes);
  return totalNs + acceleratorStallNs(core, work) + (work.fixedNs ?? 0);
}
