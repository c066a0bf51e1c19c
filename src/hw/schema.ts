/**
 * The shape of a hardware profile — a SmartNIC (`NicProfile`) or a host (`HostProfile`) — as typed
 * interfaces and the zod schemas that validate a user's JSON profile against them.
 *
 * A profile is data: the published specs (§2.1), the memory-tier latencies (Table 2), and every
 * parameter of the calibrated models in src/hw/models (forwarding, Fig 2–4; echo path, Fig 5;
 * host path, Figs 7–10; accelerators, Table 3). Each section carries a `source` string saying
 * where its numbers come from and, where it matters, a `provenance`: `fitted` to the published
 * data, `derived` from it by a stated rule, `extrapolated` from another card, `borrowed` unchanged
 * from another card, or `assumed` (no data at all). The schemas are strict (unknown keys are
 * errors), so a misspelt field in a user profile is reported instead of silently ignored.
 */

import { z } from 'zod';
import { ACCELERATOR_KINDS, type AcceleratorKind } from '../actor/cost.ts';

/** Where a section's numbers come from. */
export type Provenance = 'published' | 'fitted' | 'derived' | 'extrapolated' | 'borrowed' | 'assumed';

export const PROVENANCES = ['published', 'fitted', 'derived', 'extrapolated', 'borrowed', 'assumed'] as const;

/** A quantity measured at a few sizes; models interpolate it linearly in log(size) (interpolate.ts). */
export interface SizeCurve {
  /** Strictly ascending sizes in bytes. */
  readonly sizesBytes: readonly number[];
  /** One value per size (unit in the field name that holds the curve). */
  readonly values: readonly number[];
}

/** The processor cores of a NIC or a host. */
export interface CoreSpec {
  /** Cores usable by the runtime (physical cores; hyperthreads are not counted). */
  readonly count: number;
  readonly ghz: number;
  /** Instruction set and pipeline, as published. */
  readonly isa: string;
  /** Instructions issued per cycle at most (microarchitecture spec). */
  readonly issueWidth: number;
  /**
   * Stall-free cycles per instruction relative to the reference core (the CN2350's cnMIPS, 1.0):
   * a handler's base cycles on this core = its base cycles on the reference core × cpiScale.
   */
  readonly cpiScale: number;
}

/** Load-to-use latency of each level (Table 2, pointer chasing with random stride), ns. */
export interface MemoryLatencyNs {
  readonly l1: number;
  readonly l2: number;
  /** null: the chip has no L3 (none of the NICs has one in Table 2). */
  readonly l3: number | null;
  readonly dram: number;
}

/** Caches and memory. */
export interface MemorySpec {
  readonly cacheLineBytes: number;
  readonly l1Bytes: number;
  readonly l2Bytes: number;
  readonly l3Bytes: number | null;
  readonly dramBytes: number;
  /** LiquidIO's scratchpad (Table 2 note); null where there is none. Not a latency tier here. */
  readonly scratchpadBytes: number | null;
  readonly latencyNs: MemoryLatencyNs;
  readonly source: string;
}

/** The Ethernet ports. */
export interface LinkSpec {
  readonly linkGbps: number;
  readonly ports: number;
  /** Preamble + start delimiter (8 B) and inter-frame gap (12 B) that every frame costs on the wire. */
  readonly frameOverheadBytes: number;
  /** Shorter frames are padded to this size (Ethernet minimum, FCS included). */
  readonly minFrameBytes: number;
  readonly mtuBytes: number;
}

/**
 * The NIC-core forwarding model (Fig 2–4; docs/calibration.md, "Forwarding"). A core's time per
 * packet is max(c(S) + d, w(S, N)): its own compute c(S) = computeBaseNs + computePerByteNs·S plus
 * the handler's added work d, overlapped with its I/O interval
 * w(S, N) = ioIntervalNs(S) · (1 + singleCoreExtra·[N = 1]) · (1 + σ·(N − 1) + κ·N·(N − 1)).
 */
export interface ForwardingSpec {
  readonly provenance: Provenance;
  readonly source: string;
  /** c0: per-packet compute of the echo handler itself, ns. */
  readonly computeBaseNs: number;
  /** c1: its growth with packet size, ns per byte. */
  readonly computePerByteNs: number;
  /** w1(S): the per-core I/O interval without contention, ns, by packet size. */
  readonly ioIntervalNs: SizeCurve;
  /** π: how much longer the interval is when a single core forwards alone (fraction). */
  readonly singleCoreExtra: number;
  /** σ: linear (queueing) contention per added core, Universal-Scalability-Law form. */
  readonly contentionLinear: number;
  /** κ: quadratic (coherency) contention, USL form. */
  readonly contentionQuadratic: number;
}

/** How packets reach the NIC cores. */
export type DispatchSpec =
  /** On-path: a hardware traffic manager feeds every core from one shared queue at no core cost. */
  | { readonly kind: 'traffic-manager'; readonly source: string }
  /**
   * Off-path: the NIC switch steers flows to per-core rings; iPipe's shared queue needs one core as
   * a software dispatcher. Its time per packet = rxShare · w(S, 1) + enqueueNs.
   */
  | {
      readonly kind: 'software-dispatcher';
      readonly provenance: Provenance;
      readonly source: string;
      /** Fraction of a forwarding core's I/O interval spent receiving (the dispatcher never transmits). */
      readonly rxShare: number;
      /** Handing a packet to a worker through a shared ring: one cache-line transfer, ns. */
      readonly enqueueNs: number;
    };

/** Fig 5 ingredients: the unloaded path of an echo packet through the NIC (queueing comes from the DES). */
export interface EchoPathSpec {
  readonly provenance: Provenance;
  readonly source: string;
  /** From the MAC to a core's work queue (receive side of the packet engines), ns by size. */
  readonly rxPipelineNs: SizeCurve;
  /** From the core's send command to the MAC, ns by size. */
  readonly txPipelineNs: SizeCurve;
  /** Coefficient of variation of the per-packet I/O interval (0 = deterministic); see docs. */
  readonly ioIntervalCv: number;
}

/** A published plain-forwarding latency at the MTU and line rate: the paper's Mean/Tail_thresh. */
export interface ForwardingLatencyReference {
  readonly packetBytes: number;
  readonly cores: number;
  readonly meanNs: number;
  readonly p99Ns: number;
  readonly source: string;
}

/** PCIe between NIC and host. */
export interface PcieSpec {
  readonly gen: number;
  readonly lanes: number;
  /** Theoretical payload bandwidth of the link, GB/s (10^9 bytes). */
  readonly gbytesPerSec: number;
  /** Header, sequence number, LCRC and framing per TLP, bytes. */
  readonly tlpOverheadBytes: number;
  /** Maximum payload per TLP (MPS), bytes. */
  readonly maxPayloadBytes: number;
  readonly source: string;
}

/** Native DMA measurements (LiquidIO): latency and per-core throughput. */
export interface DmaSpec {
  readonly blockingReadNs: SizeCurve;
  readonly blockingWriteNs: SizeCurve;
  readonly nonblockingReadNs: number;
  readonly nonblockingWriteNs: number;
  readonly blockingReadOpsPerSec: SizeCurve;
  readonly blockingWriteOpsPerSec: SizeCurve;
  readonly nonblockingReadOpsPerSec: number;
  readonly nonblockingWriteOpsPerSec: number;
}

/** One-sided RDMA measurements (BlueField): latency by size; per-core rate for small messages. */
export interface RdmaSpec {
  readonly readNs: SizeCurve;
  readonly writeNs: SizeCurve;
  readonly smallReadOpsPerSec: number;
  readonly smallWriteOpsPerSec: number;
  /** Large messages reach what blocking DMA reaches (text): the per-core ceiling by size. */
  readonly ceilingReadOpsPerSec: SizeCurve;
  readonly ceilingWriteOpsPerSec: SizeCurve;
}

/** How the NIC reaches host memory. */
export type HostPathSpec =
  | {
      readonly kind: 'native-dma';
      readonly provenance: Provenance;
      readonly source: string;
      readonly pcie: PcieSpec;
      readonly dma: DmaSpec;
    }
  | {
      readonly kind: 'rdma';
      readonly provenance: Provenance;
      readonly source: string;
      readonly pcie: PcieSpec;
      readonly rdma: RdmaSpec;
    };

/** One accelerator's latency per request at batch 1, 8 and 32, ns (null: not batchable). */
export interface AcceleratorLatencyNs {
  readonly batch1: number;
  readonly batch8: number | null;
  readonly batch32: number | null;
}

/** The NIC's accelerators (Table 3). */
export interface AcceleratorSpec {
  readonly provenance: Provenance;
  readonly source: string;
  /** Request size the latencies were measured at, bytes. */
  readonly requestBytes: number;
  readonly latencyNs: Readonly<Record<AcceleratorKind, AcceleratorLatencyNs>>;
}

/** What an accelerator's function costs a host core in software, per request of requestBytes. */
export interface HostSoftwareAcceleratorSpec {
  readonly provenance: Provenance;
  readonly source: string;
  readonly requestBytes: number;
  readonly latencyNs: Readonly<Record<AcceleratorKind, number>>;
}

/** A SmartNIC. */
export interface NicProfile {
  readonly kind: 'nic';
  readonly name: string;
  readonly vendor: string;
  readonly description: string;
  /** Name of the host profile this NIC was measured in. */
  readonly host: string;
  readonly software: 'firmware' | 'full-os';
  readonly placement: 'on-path' | 'off-path';
  readonly cores: CoreSpec;
  readonly memory: MemorySpec;
  readonly link: LinkSpec;
  readonly dispatch: DispatchSpec;
  readonly forwarding: ForwardingSpec;
  readonly echoPath: EchoPathSpec;
  /** Published Mean/Tail_thresh source; null: thresholdsFor derives them (models/thresholds.ts). */
  readonly forwardingLatency: ForwardingLatencyReference | null;
  readonly hostPath: HostPathSpec;
  readonly accelerators: AcceleratorSpec;
}

/** A host server. */
export interface HostProfile {
  readonly kind: 'host';
  readonly name: string;
  readonly description: string;
  readonly sockets: number;
  /** null: the paper does not say. */
  readonly hyperthreading: boolean | null;
  readonly cores: CoreSpec;
  readonly memory: MemorySpec;
  readonly acceleratorSoftware: HostSoftwareAcceleratorSpec;
}

/** Either kind of profile. */
export type HardwareProfile = NicProfile | HostProfile;

// ---------------------------------------------------------------------------------------------
// zod schemas (strict: unknown keys are errors). Each is annotated with the interface it checks,
// so the two cannot drift apart.

const positive = z.number().finite().positive();
const nonNegative = z.number().finite().nonnegative();
const positiveInt = z.number().int().positive();
const text = z.string().min(1);
const provenance = z.enum(PROVENANCES);

const sizeCurve: z.ZodType<SizeCurve> = z
  .strictObject({
    sizesBytes: z.array(positive).min(1),
    values: z.array(nonNegative).min(1),
  })
  .superRefine((curve, context) => {
    if (curve.values.length !== curve.sizesBytes.length) {
      context.addIssue({
        code: 'custom',
        path: ['values'],
        message: `expected ${curve.sizesBytes.length} values (one per size), got ${curve.values.length}`,
      });
    }
    for (let index = 1; index < curve.sizesBytes.length; index++) {
      if (curve.sizesBytes[index]! <= curve.sizesBytes[index - 1]!) {
        context.addIssue({
          code: 'custom',
          path: ['sizesBytes', index],
          message: 'sizes must be strictly ascending',
        });
      }
    }
  });

const coreSpec: z.ZodType<CoreSpec> = z.strictObject({
  count: positiveInt,
  ghz: positive,
  isa: text,
  issueWidth: positiveInt,
  cpiScale: positive,
});

const memorySpec: z.ZodType<MemorySpec> = z
  .strictObject({
    cacheLineBytes: positiveInt,
    l1Bytes: positiveInt,
    l2Bytes: positiveInt,
    l3Bytes: positiveInt.nullable(),
    dramBytes: positiveInt,
    scratchpadBytes: positiveInt.nullable(),
    latencyNs: z.strictObject({ l1: positive, l2: positive, l3: positive.nullable(), dram: positive }),
    source: text,
  })
  .superRefine((memory, context) => {
    if ((memory.l3Bytes === null) !== (memory.latencyNs.l3 === null)) {
      context.addIssue({
        code: 'custom',
        path: ['latencyNs', 'l3'],
        message: 'give both l3Bytes and latencyNs.l3, or neither (null)',
      });
    }
  });

const linkSpec: z.ZodType<LinkSpec> = z.strictObject({
  linkGbps: positive,
  ports: positiveInt,
  frameOverheadBytes: nonNegative,
  minFrameBytes: positiveInt,
  mtuBytes: positiveInt,
});

const forwardingSpec: z.ZodType<ForwardingSpec> = z.strictObject({
  provenance,
  source: text,
  computeBaseNs: nonNegative,
  computePerByteNs: nonNegative,
  ioIntervalNs: sizeCurve,
  singleCoreExtra: z.number().finite().gt(-1),
  contentionLinear: nonNegative,
  contentionQuadratic: nonNegative,
});

const dispatchSpec: z.ZodType<DispatchSpec> = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('traffic-manager'), source: text }),
  z.strictObject({
    kind: z.literal('software-dispatcher'),
    provenance,
    source: text,
    rxShare: z.number().gt(0).lte(1),
    enqueueNs: nonNegative,
  }),
]);

const echoPathSpec: z.ZodType<EchoPathSpec> = z.strictObject({
  provenance,
  source: text,
  rxPipelineNs: sizeCurve,
  txPipelineNs: sizeCurve,
  ioIntervalCv: nonNegative,
});

const forwardingLatencyReference: z.ZodType<ForwardingLatencyReference> = z
  .strictObject({
    packetBytes: positiveInt,
    cores: positiveInt,
    meanNs: positive,
    p99Ns: positive,
    source: text,
  })
  .refine((reference) => reference.p99Ns >= reference.meanNs, {
    path: ['p99Ns'],
    message: 'p99 latency must be at least the mean',
  });

const pcieSpec: z.ZodType<PcieSpec> = z.strictObject({
  gen: positiveInt,
  lanes: positiveInt,
  gbytesPerSec: positive,
  tlpOverheadBytes: nonNegative,
  maxPayloadBytes: positiveInt,
  source: text,
});

const dmaSpec: z.ZodType<DmaSpec> = z.strictObject({
  blockingReadNs: sizeCurve,
  blockingWriteNs: sizeCurve,
  nonblockingReadNs: positive,
  nonblockingWriteNs: positive,
  blockingReadOpsPerSec: sizeCurve,
  blockingWriteOpsPerSec: sizeCurve,
  nonblockingReadOpsPerSec: positive,
  nonblockingWriteOpsPerSec: positive,
});

const rdmaSpec: z.ZodType<RdmaSpec> = z.strictObject({
  readNs: sizeCurve,
  writeNs: sizeCurve,
  smallReadOpsPerSec: positive,
  smallWriteOpsPerSec: positive,
  ceilingReadOpsPerSec: sizeCurve,
  ceilingWriteOpsPerSec: sizeCurve,
});

const hostPathSpec: z.ZodType<HostPathSpec> = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('native-dma'), provenance, source: text, pcie: pcieSpec, dma: dmaSpec }),
  z.strictObject({ kind: z.literal('rdma'), provenance, source: text, pcie: pcieSpec, rdma: rdmaSpec }),
]);

/** A strict object with one entry per accelerator kind. */
function perAccelerator<T>(entry: z.ZodType<T>): z.ZodType<Readonly<Record<AcceleratorKind, T>>> {
  const shape: Record<string, z.ZodType<T>> = {};
  for (const kind of ACCELERATOR_KINDS) shape[kind] = entry;
  return z.strictObject(shape) as unknown as z.ZodType<Readonly<Record<AcceleratorKind, T>>>;
}

const acceleratorLatency: z.ZodType<AcceleratorLatencyNs> = z
  .strictObject({ batch1: positive, batch8: positive.nullable(), batch32: positive.nullable() })
  .refine((latency) => (latency.batch8 === null) === (latency.batch32 === null), {
    path: ['batch32'],
    message: 'batch8 and batch32 are both null (not batchable) or both numbers',
  });

const acceleratorSpec: z.ZodType<AcceleratorSpec> = z.strictObject({
  provenance,
  source: text,
  requestBytes: positiveInt,
  latencyNs: perAccelerator(acceleratorLatency),
});

const hostSoftwareAcceleratorSpec: z.ZodType<HostSoftwareAcceleratorSpec> = z.strictObject({
  provenance,
  source: text,
  requestBytes: positiveInt,
  latencyNs: perAccelerator(positive),
});

const profileName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]*$/,
    'use lower-case letters, digits, ".", "_" and "-" (e.g. "bluefield2-mine")',
  );

const nicProfileObject = z.strictObject({
  kind: z.literal('nic'),
  name: profileName,
  vendor: text,
  description: text,
  host: profileName,
  software: z.enum(['firmware', 'full-os']),
  placement: z.enum(['on-path', 'off-path']),
  cores: coreSpec,
  memory: memorySpec,
  link: linkSpec,
  dispatch: dispatchSpec,
  forwarding: forwardingSpec,
  echoPath: echoPathSpec,
  forwardingLatency: forwardingLatencyReference.nullable(),
  hostPath: hostPathSpec,
  accelerators: acceleratorSpec,
});

const hostProfileObject = z.strictObject({
  kind: z.literal('host'),
  name: profileName,
  description: text,
  sockets: positiveInt,
  hyperthreading: z.boolean().nullable(),
  cores: coreSpec,
  memory: memorySpec,
  acceleratorSoftware: hostSoftwareAcceleratorSpec,
});

/** Validates a SmartNIC profile. */
export const nicProfileSchema: z.ZodType<NicProfile> = nicProfileObject;

/** Validates a host profile. */
export const hostProfileSchema: z.ZodType<HostProfile> = hostProfileObject;

/** Validates either kind, told apart by `kind`. */
export const hardwareProfileSchema: z.ZodType<HardwareProfile> = z.discriminatedUnion('kind', [
  nicProfileObject,
  hostProfileObject,
]);
