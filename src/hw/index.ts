/**
 * Hardware profiles and calibrated hardware models (DESIGN.md, "hw/"): the four SmartNICs and two
 * hosts of the paper's §2 as validated data, and pure functions that turn them into time — NIC-core
 * forwarding (Fig 2–4), the echo path and scheduler thresholds (Fig 5), memory tiers (Table 2),
 * handler cost and task kinds (Table 3), accelerators (Table 3), NIC messaging (Fig 6), PCIe, DMA
 * and RDMA (Figs 7–10), links and the switch. docs/calibration.md records every number's source
 * and the models' error against each published point.
 */

export {
  ACCELERATOR_SPEEDUP_VS_HOST,
  FORWARDING_SIZES_BYTES,
  TASK_TABLE,
} from './data/published.ts';
export {
  getHostProfile,
  getNicProfile,
  getProfile,
  hostOf,
  knownProfileNames,
  loadProfileFile,
  parseProfile,
} from './load-profile.ts';
export {
  type AcceleratorRequest,
  acceleratorLatencyNs,
  acceleratorSpeedupVsHost,
  hostSoftwareLatencyNs,
  isBatchable,
} from './models/accelerator.ts';
export {
  dispatcherCapacityPacketsPerSec,
  dispatcherCores,
  dispatcherPerPacketNs,
} from './models/dispatcher.ts';
export { type EchoPathLatency, echoPathLatency } from './models/echo-path.ts';
export {
  contentionFactor,
  coresForLineRate,
  type ForwardingNic,
  type ForwardingQuery,
  type ForwardingThroughput,
  forwardingComputeNs,
  forwardingThroughput,
  type HeadroomOptions,
  headroomNs,
  ioIntervalNs,
  perPacketCoreNs,
} from './models/forwarding.ts';
export {
  type HandlerTimeBreakdown,
  handlerTimeBreakdown,
  handlerTimeNs,
  REFERENCE_CORE,
  referenceBaseCycles,
} from './models/handler-cost.ts';
export {
  type BatchRequest,
  type BatchTiming,
  type BulkRequest,
  type BulkTiming,
  batchedTransfer,
  bulkTransfer,
  hostPathLatencyNs,
  hostPathOpsPerSec,
  hostTransfer,
  type TransferDirection,
  type TransferKind,
  type TransferRequest,
  type TransferTiming,
} from './models/host-transfer.ts';
export { type BeyondLast, curveOf, interpolateLogSize } from './models/interpolate.ts';
export {
  FRAME_OVERHEAD_BYTES,
  goodputGbps,
  type LinkLike,
  linePacketsPerSec,
  MIN_FRAME_BYTES,
  MTU_FRAME_BYTES,
  serializationNs,
  wireBytes,
  wireGbps,
} from './models/link.ts';
export {
  l2MissPenaltyNs,
  type MemoryTier,
  memoryAccessNs,
  memoryTier,
  tierLatencyNs,
} from './models/memory.ts';
export { MESSAGING_MECHANISMS, type MessagingMechanism, messagingLatencyNs } from './models/messaging.ts';
export { pcieEfficiency, pcieSerializationNs, pcieTlpCount, pcieWireBytes } from './models/pcie.ts';
export { type SwitchSpec, switchTraversalNs, TOR_SWITCH } from './models/switch.ts';
export { type Thresholds, thresholdsFor } from './models/thresholds.ts';
export {
  BLUEFIELD_1M332A,
  BUILTIN_PROFILES,
  HOST_PROFILE_NAMES,
  LIQUIDIO_CN2350,
  LIQUIDIO_CN2360,
  NIC_PROFILE_NAMES,
  STINGRAY_PS225,
  XEON_E5_2620V4,
  XEON_E5_2680V3,
} from './profiles.ts';
export {
  type AcceleratorLatencyNs,
  type AcceleratorSpec,
  type CoreSpec,
  type DispatchSpec,
  type DmaSpec,
  type EchoPathSpec,
  type ForwardingLatencyReference,
  type ForwardingSpec,
  type HardwareProfile,
  type HostPathSpec,
  type HostProfile,
  type HostSoftwareAcceleratorSpec,
  hardwareProfileSchema,
  hostProfileSchema,
  type LinkSpec,
  type MemoryLatencyNs,
  type MemorySpec,
  type NicProfile,
  nicProfileSchema,
  type PcieSpec,
  type Provenance,
  type RdmaSpec,
  type SizeCurve,
} from './schema.ts';
export { TASK_KIND_NAMES, TASK_KINDS, type TaskKindName } from './task-kinds.ts';
