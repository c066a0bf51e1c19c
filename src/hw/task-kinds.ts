/**
 * The paper's offloaded task kinds (Table 3) as HandlerWork values, for 1 KB requests: each task's
 * instruction count is latency × 1.2 GHz × IPC (what one CN2350 core retires in the measured
 * time), with Table 3's IPC and MPKI as measured. handlerTimeNs(LIQUIDIO_CN2350, TASK_KINDS[k])
 * gives back Table 3's latency exactly (models/handler-cost.ts), and the same value re-times the
 * task on any other core (a host Xeon, an A72).
 */

import type { HandlerWork } from '../actor/cost.ts';
import { NIC_SPECS, TASK_KIND_NAMES, TASK_TABLE, type TaskKindName } from './data/published.ts';

export { TASK_KIND_NAMES, type TaskKindName };

function taskWork(name: TaskKindName): HandlerWork {
  const row = TASK_TABLE[name];
  const cyclesPerUs = NIC_SPECS['liquidio-cn2350'].ghz * 1000;
  return Object.freeze({ instructions: row.latencyUs * cyclesPerUs * row.ipc, ipc: row.ipc, mpki: row.mpki });
}

/** Table 3's tasks as HandlerWork (1 KB requests). */
export const TASK_KINDS: Readonly<Record<TaskKindName, HandlerWork>> = Object.freeze(
  Object.fromEntries(TASK_KIND_NAMES.map((name) => [name, taskWork(name)])) as Record<
    TaskKindName,
    HandlerWork
  >,
);
