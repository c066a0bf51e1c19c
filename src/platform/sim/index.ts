/**
 * The simulated platform: the discrete-event kernel, seeded randomness, the simulated node and
 * its traffic sources, and the timing built from the calibrated hardware models.
 */

/** Seeded xoshiro128** with forkable independent streams; `freshSeed` for unseeded runs. */
export { freshSeed, Random } from '../../random.ts';
export type { DistributionSpec, Sampler } from './distributions.ts';
/** Samplers over a seeded Random (exponential, Poisson gaps, bimodal, uniform, lognormal, Zipf). */
export {
  BimodalExponentialSampler,
  BimodalPointSampler,
  createSampler,
  DeterministicSampler,
  ExponentialSampler,
  LogNormalSampler,
  PoissonArrivalSampler,
  UniformSampler,
  ZipfSampler,
} from './distributions.ts';
export type {
  EventHandle,
  EventHandler,
  EventKernelOptions,
  EventKind,
  RunOptions,
  RunResult,
} from './event-kernel.ts';
/** The discrete-event kernel: integer-ns virtual clock, typed events, FIFO among equal times. */
export { EventKernel, MAX_TIME_NS, NO_EVENT } from './event-kernel.ts';
export type { HardwareTimingOptions } from './hardware-timing.ts';
/** SimTiming from a NIC profile and its host (the calibrated models). */
export { timingFor } from './hardware-timing.ts';
export type { SimClusterOptions, SimNetworkCounters, SimNetworkOptions } from './sim-cluster.ts';
export { SimCluster } from './sim-cluster.ts';
export type {
  AbortedMigrationRecord,
  MigrationRecord,
  ReplySink,
  SimFrame,
  SimNetworkPort,
  SimNodeOptions,
} from './sim-node.ts';
/** The simulated node: NIC and host domains, PCIe channel, scheduler-driven cores, migration. */
export { FRAME_OVERHEAD_BYTES, frameBytes, MIN_FRAME_BYTES, SimNode } from './sim-node.ts';
export type { SimTiming } from './timing.ts';
export type { NextRequest, RequestMaker } from './traffic.ts';
/** Open-loop Poisson sources, closed-loop clients, and their latency recorder. */
export { ClosedLoopClients, LatencyRecorder, OpenLoopSource } from './traffic.ts';
