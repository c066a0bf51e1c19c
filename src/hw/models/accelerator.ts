/**
 * Accelerators (Table 3; implication I4): each engine's latency per request at batch sizes 1, 8
 * and 32 on the CN2350, for 1 KB requests. Batching amortizes the invocation: between measured
 * batch sizes the per-request latency is interpolated linearly in log2(batch); past 32 it stays at
 * the batch-32 value (the amortization has run its course). `zip` is not batchable: a batch of zip
 * requests runs them one at a time at the batch-1 latency.
 *
 * The calling core stalls for the engine's time (the paper: "invoking an accelerator stalls the
 * calling core and costs cache misses"), so a handler's accelerator calls add their latency to the
 * handler's time (handler-cost.ts). Queueing while a batch fills is the simulator's to model.
 *
 * Size: Table 3 measures 1 KB requests only. We assume the per-request latency holds up to 1 KB
 * (invocation dominates) and grows in proportion to bytes beyond it (the engine streams the data).
 *
 * Hosts have no engines: a host core runs the function in software (profile.acceleratorSoftware:
 * the engine's latency × the published speed-up — md5 7.0×, aes 2.5× — else 1.0, assumed).
 */

import type { AcceleratorKind } from '../../actor/cost.ts';
import type { HostProfile, NicProfile } from '../schema.ts';

/** How a request is submitted. */
export interface AcceleratorRequest {
  /** Requests submitted together; default 1. */
  readonly batch?: number;
  /** Bytes in this request; default the measured request size (1 KB). */
  readonly bytes?: number;
}

function sizeFactor(bytes: number | undefined, requestBytes: number): number {
  return bytes === undefined ? 1 : Math.max(1, bytes / requestBytes);
}

/** Per-request latency of a NIC accelerator at a batch size (see the file comment), ns. */
export function acceleratorLatencyNs(
  nic: NicProfile,
  kind: AcceleratorKind,
  request: AcceleratorRequest = {},
): number {
  const spec = nic.accelerators;
  const latency = spec.latencyNs[kind];
  const batch = Math.max(1, request.batch ?? 1);
  let perRequestNs: number;
  if (latency.batch8 === null || latency.batch32 === null || batch <= 1) {
    perRequestNs = latency.batch1;
  } else if (batch <= 8) {
    perRequestNs = latency.batch1 + (Math.log2(batch) / 3) * (latency.batch8 - latency.batch1);
  } else if (batch <= 32) {
    perRequestNs = latency.batch8 + ((Math.log2(batch) - 3) / 2) * (latency.batch32 - latency.batch8);
  } else {
    perRequestNs = latency.batch32;
  }
  return perRequestNs * sizeFactor(request.bytes, spec.requestBytes);
}

/** Whether an engine amortizes batches at all (Table 3: all but zip). */
export function isBatchable(nic: NicProfile, kind: AcceleratorKind): boolean {
  return nic.accelerators.latencyNs[kind].batch8 !== null;
}

/** What one request of the accelerator's function costs a host core in software, ns. */
export function hostSoftwareLatencyNs(host: HostProfile, kind: AcceleratorKind, bytes?: number): number {
  const spec = host.acceleratorSoftware;
  return spec.latencyNs[kind] * sizeFactor(bytes, spec.requestBytes);
}

/** How many times faster the NIC engine (batch 1) is than the host's software, per Table 3's note. */
export function acceleratorSpeedupVsHost(nic: NicProfile, host: HostProfile, kind: AcceleratorKind): number {
  return hostSoftwareLatencyNs(host, kind) / acceleratorLatencyNs(nic, kind);
}
