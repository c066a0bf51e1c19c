/**
 * The declared work of one handler invocation — what an actor's `cost(message)` hook returns and
 * what the simulator turns into time on a given core type. It follows the paper's
 * characterization (Table 3): a handler's latency on a NIC core comes from its instruction
 * count, IPC and L2 misses per kilo-instruction, plus the accelerators it calls.
 *
 * This is data, not time: the same `HandlerWork` costs different nanoseconds on a cnMIPS core, an
 * ARM A72 or a host Xeon, and the hardware profile (src/hw) holds those rates. Deterministic by
 * construction — never derived from the JS wall clock.
 */

import { ActorDefinitionError } from '../errors.ts';

/** The accelerators Table 3 measures on the LiquidIO CN2350 (crypto, hashing, FAU, zip, DFA). */
export const ACCELERATOR_KINDS = [
  'crc',
  'md5',
  'sha1',
  '3des',
  'aes',
  'kasumi',
  'sms4',
  'snow3g',
  'fau',
  'zip',
  'dfa',
] as const;

/** One of ACCELERATOR_KINDS. */
export type AcceleratorKind = (typeof ACCELERATOR_KINDS)[number];

const ACCELERATOR_SET: ReadonlySet<string> = new Set(ACCELERATOR_KINDS);

/** True when `value` names a known accelerator. */
export function isAcceleratorKind(value: unknown): value is AcceleratorKind {
  return typeof value === 'string' && ACCELERATOR_SET.has(value);
}

/** One call of a hardware accelerator inside a handler. */
export interface AcceleratorUse {
  readonly kind: AcceleratorKind;
  /** Bytes the accelerator processes. */
  readonly bytes: number;
  /** Requests submitted together (Table 3 measures batches of 1, 8, 32); 1 when absent. */
  readonly batch?: number;
}

/** The declared work of one handler invocation. Only `instructions` is required. */
export interface HandlerWork {
  /** Instructions the handler retires (non-negative). */
  readonly instructions: number;
  /** Instructions per cycle on the core (> 0); the core type's default when absent. */
  readonly ipc?: number;
  /** L2 misses per kilo-instruction (≥ 0); each miss costs the memory tier's latency. */
  readonly mpki?: number;
  /** Explicit accesses to DMO memory beyond what mpki implies (for memory-tier costs). */
  readonly memoryAccesses?: number;
  /** Bytes the handler touches; decides which tier (scratchpad, L2, DRAM) serves the accesses. */
  readonly workingSetBytes?: number;
  /** Accelerator calls; each stalls the calling core for the accelerator's time. */
  readonly accelerators?: readonly AcceleratorUse[];
  /**
   * A directly stated time in ns, added to whatever the other fields cost. Synthetic actors (the
   * scheduler experiments' exponential and bimodal tasks) use `{ instructions: 0, fixedNs }`.
   */
  readonly fixedNs?: number;
}

const WORK_KEYS: ReadonlySet<string> = new Set([
  'instructions',
  'ipc',
  'mpki',
  'memoryAccesses',
  'workingSetBytes',
  'accelerators',
  'fixedNs',
]);
const ACCELERATOR_KEYS: ReadonlySet<string> = new Set(['kind', 'bytes', 'batch']);

function isFiniteNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function'; // not its source text
  return typeof value === 'object' ? 'an object' : String(value);
}

/**
 * Every problem with a HandlerWork value, as "where: what" lines; empty when it is valid.
 * Unknown keys count as problems, so a misspelt `instrutions` is caught instead of costing 0.
 */
export function handlerWorkProblems(work: unknown): string[] {
  if (typeof work !== 'object' || work === null || Array.isArray(work)) {
    return [`expected an object like { instructions: 1200, ipc: 1.4 }, got ${describeValue(work)}`];
  }
  const problems: string[] = [];
  const record = work as Readonly<Record<string, unknown>>;
  for (const key of Object.keys(record)) {
    if (!WORK_KEYS.has(key)) problems.push(`${key}: unknown key (known: ${[...WORK_KEYS].join(', ')})`);
  }
  const { instructions, ipc, mpki, memoryAccesses, workingSetBytes, accelerators, fixedNs } = record;
  if (!isFiniteNonNegative(instructions)) {
    problems.push(`instructions: required, a finite number ≥ 0, got ${describeValue(instructions)}`);
  }
  if (ipc !== undefined && !(isFiniteNonNegative(ipc) && ipc > 0)) {
    problems.push(`ipc: must be a finite number > 0, got ${describeValue(ipc)}`);
  }
  if (mpki !== undefined && !isFiniteNonNegative(mpki)) {
    problems.push(`mpki: must be a finite number ≥ 0, got ${describeValue(mpki)}`);
  }
  if (memoryAccesses !== undefined && !isCount(memoryAccesses)) {
    problems.push(`memoryAccesses: must be an integer ≥ 0, got ${describeValue(memoryAccesses)}`);
  }
  if (workingSetBytes !== undefined && !isCount(workingSetBytes)) {
    problems.push(`workingSetBytes: must be an integer ≥ 0, got ${describeValue(workingSetBytes)}`);
  }
  if (fixedNs !== undefined && !isFiniteNonNegative(fixedNs)) {
    problems.push(`fixedNs: must be a finite number ≥ 0, got ${describeValue(fixedNs)}`);
  }
  if (accelerators !== undefined) {
    if (!Array.isArray(accelerators)) {
      problems.push(`accelerators: must be an array, got ${describeValue(accelerators)}`);
    } else {
      for (let index = 0; index < accelerators.length; index++) {
        problems.push(...acceleratorProblems(accelerators[index], `accelerators[${index}]`));
      }
    }
  }
  return problems;
}

function acceleratorProblems(use: unknown, where: string): string[] {
  if (typeof use !== 'object' || use === null || Array.isArray(use)) {
    return [`${where}: expected { kind, bytes, batch? }, got ${describeValue(use)}`];
  }
  const problems: string[] = [];
  const record = use as Readonly<Record<string, unknown>>;
  for (const key of Object.keys(record)) {
    if (!ACCELERATOR_KEYS.has(key)) problems.push(`${where}.${key}: unknown key (known: kind, bytes, batch)`);
  }
  const { kind, bytes, batch } = record;
  if (!isAcceleratorKind(kind)) {
    problems.push(
      `${where}.kind: must be one of ${ACCELERATOR_KINDS.join(', ')}, got ${describeValue(kind)}`,
    );
  }
  if (!isCount(bytes)) {
    problems.push(`${where}.bytes: must be an integer ≥ 0, got ${describeValue(bytes)}`);
  }
  if (batch !== undefined && !(isCount(batch) && batch >= 1)) {
    problems.push(`${where}.batch: must be an integer ≥ 1, got ${describeValue(batch)}`);
  }
  return problems;
}

/**
 * Returns `work` typed as HandlerWork when it is valid; otherwise throws ActorDefinitionError
 * naming the actor and listing every problem (a cost hook that returns nonsense is a bug in the
 * actor's definition, found the first time the simulator asks).
 */
export function validateHandlerWork(work: unknown, actorName = 'unknown'): HandlerWork {
  const problems = handlerWorkProblems(work);
  if (problems.length > 0) {
    throw new ActorDefinitionError(actorName, `cost() returned invalid work: ${problems.join('; ')}`);
  }
  return work as HandlerWork;
}
