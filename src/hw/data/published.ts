/**
 * The published SmartNIC characterization (Liu et al., "Offloading Distributed Applications onto
 * SmartNICs using iPipe", SIGCOMM 2019, §2 and appendix A), copied number for number from the
 * project's calibration record so that nothing reads it at run time. These are the ONLY data the
 * hardware models are calibrated on; everything else in src/hw is either fitted to these numbers,
 * derived from them, or a documented assumption (docs/calibration.md).
 *
 * Units are the paper's (µs, Gbps, Mops) and are in each name. "digitized" values were read off
 * the paper's plots (about ±2% of the axis); "text" values are stated in the prose and win where the
 * two disagree, except where docs/calibration.md argues otherwise.
 */

/** Sizes in bytes at which Fig 2/3 (echo forwarding) were measured. */
export const FORWARDING_SIZES_BYTES = [64, 128, 256, 512, 1024, 1500] as const;

/** A NIC that the echo-forwarding figures measured. */
export type ForwardedNic = 'liquidio-cn2350' | 'stingray-ps225';

/**
 * Fig 2 (CN2350, 10 GbE) and Fig 3 (Stingray, 25 GbE), digitized: forwarding throughput in Gbps
 * (L2 goodput, packets/s × size × 8; see docs) with 1, 2, … cores, per packet size.
 */
export const ECHO_GBPS_BY_CORES: Readonly<Record<ForwardedNic, Readonly<Record<number, readonly number[]>>>> =
  {
    'liquidio-cn2350': {
      64: [0.29, 0.57, 0.84, 1.1, 1.35, 1.68, 1.82, 1.99, 2.18, 2.43, 2.73, 2.87],
      128: [0.42, 0.92, 1.37, 1.79, 2.23, 2.76, 3.01, 3.28, 3.63, 4.05, 4.54, 4.77],
      256: [0.78, 1.74, 2.68, 3.5, 4.39, 5.44, 5.92, 6.48, 7.19, 8.04, 8.06, 8.64],
      512: [1.49, 3.42, 5.28, 6.91, 8.72, 9.32, 9.3, 9.33, 9.34, 9.34, 9.34, 9.32],
      1024: [2.88, 6.76, 9.2, 9.7, 9.71, 9.7, 9.7, 9.7, 9.7, 9.7, 9.7, 9.7],
      1500: [4.2, 8.71, 9.87, 9.86, 9.87, 9.87, 9.87, 9.87, 9.87, 9.87, 9.87, 9.87],
    },
    'stingray-ps225': {
      64: [2.28, 4.18, 5.87, 6.57, 6.57, 7.57, 8.17, 8.77],
      128: [4.37, 8.17, 11.57, 12.98, 12.98, 13.98, 14.77, 15.37],
      256: [8.58, 16.27, 22.48, 23.08, 23.08, 23.08, 23.08, 23.08],
      512: [16.97, 24.08, 24.08, 24.08, 24.08, 24.08, 24.08, 24.08],
      1024: [24.4, 24.4, 24.4, 24.4, 24.4, 24.4, 24.4, 24.4],
      1500: [24.6, 24.6, 24.6, 24.6, 24.6, 24.6, 24.6, 24.6],
    },
  };

/** §2.2.2 text: cores needed to reach line rate; 64 B and 128 B never reach it with all cores. */
export const CORES_FOR_LINE_RATE: Readonly<Record<ForwardedNic, Readonly<Record<number, number | null>>>> = {
  'liquidio-cn2350': { 64: null, 128: null, 256: 10, 512: 6, 1024: 4, 1500: 3 },
  'stingray-ps225': { 64: null, 128: null, 256: 3, 512: 2, 1024: 1, 1500: 1 },
};

/** §2.2.2 text (Fig 4): largest per-packet processing that still sustains line rate with all cores. */
export const HEADROOM_US_ALL_CORES: Readonly<Record<ForwardedNic, Readonly<Record<number, number>>>> = {
  'liquidio-cn2350': { 256: 2.5, 1024: 9.8 },
  'stingray-ps225': { 256: 0.7, 1024: 2.6 },
};

/** Fig 4's x axis: per-packet processing added to the echo handler, µs. */
export const FIG4_ADDED_US = [0, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16] as const;

/** One Fig 4 curve (all cores busy): "plateauGbps up to plateauUpToUs", then the listed points. */
export interface Fig4Curve {
  readonly nic: ForwardedNic;
  readonly packetBytes: number;
  readonly plateauGbps: number;
  readonly plateauUpToUs: number;
  /** [added µs, Gbps] past the plateau. */
  readonly points: readonly (readonly [number, number])[];
}

/** Fig 4, digitized. Its y axis reads as wire (L1) rate: see docs/calibration.md. */
export const FIG4_CURVES: readonly Fig4Curve[] = [
  {
    nic: 'liquidio-cn2350',
    packetBytes: 256,
    plateauGbps: 10.2,
    plateauUpToUs: 2,
    points: [
      [4, 6.5],
      [8, 3.3],
      [16, 1.8],
    ],
  },
  { nic: 'liquidio-cn2350', packetBytes: 1024, plateauGbps: 10.2, plateauUpToUs: 8, points: [[16, 6.3]] },
  {
    nic: 'stingray-ps225',
    packetBytes: 256,
    plateauGbps: 25.2,
    plateauUpToUs: 0.5,
    points: [
      [1, 16.7],
      [2, 8.5],
      [4, 4.3],
      [8, 2.3],
      [16, 1.2],
    ],
  },
  {
    nic: 'stingray-ps225',
    packetBytes: 1024,
    plateauGbps: 25.2,
    plateauUpToUs: 2,
    points: [
      [4, 16.5],
      [8, 8.3],
      [16, 4.3],
    ],
  },
];

/** One Fig 5 point: latency at maximum throughput, µs, as the json labels the columns. */
export interface Fig5Point {
  readonly avg6CoresUs: number;
  readonly avg12CoresUs: number;
  readonly p996CoresUs: number;
  readonly p9912CoresUs: number;
}

/**
 * Fig 5 (CN2350 echo, latency at maximum throughput), digitized, with the 6/12-core columns as the
 * calibration record labels them. docs/calibration.md explains why we read them as swapped.
 */
export const FIG5_LATENCY_US: Readonly<Record<number, Fig5Point>> = {
  64: { avg6CoresUs: 18.7, avg12CoresUs: 16.9, p996CoresUs: 29.6, p9912CoresUs: 27.6 },
  512: { avg6CoresUs: 21.7, avg12CoresUs: 21.7, p996CoresUs: 29.6, p9912CoresUs: 29.6 },
  1024: { avg6CoresUs: 28.6, avg12CoresUs: 28.6, p996CoresUs: 41.9, p9912CoresUs: 41.6 },
  1500: { avg6CoresUs: 41.3, avg12CoresUs: 39.4, p996CoresUs: 77.6, p9912CoresUs: 73.6 },
};

/** §2.2.2 text: going from 6 to 12 cores *adds* this much latency, averaged over four sizes (Fig 5). */
export const FIG5_TEXT_6_TO_12_INCREASE = { avgPercent: 4.1, p99Percent: 3.4 } as const;

/** Table 2 (pointer chasing, random stride), ns; null: no such level. */
export interface MemoryLatencyRow {
  readonly l1: number;
  readonly l2: number;
  readonly l3: number | null;
  readonly dram: number;
}

export const MEMORY_LATENCY_NS: Readonly<
  Record<'liquidio' | 'bluefield' | 'stingray' | 'host-xeon', MemoryLatencyRow>
> = {
  liquidio: { l1: 8.3, l2: 55.8, l3: null, dram: 115.0 },
  bluefield: { l1: 5.0, l2: 25.6, l3: null, dram: 132.0 },
  stingray: { l1: 1.3, l2: 25.1, l3: null, dram: 85.3 },
  'host-xeon': { l1: 1.2, l2: 6.0, l3: 22.4, dram: 62.2 },
};

/** Table 2 note: the LiquidIO scratchpad holds 54 cache lines. */
export const LIQUIDIO_SCRATCHPAD_CACHE_LINES = 54;

/** The paper's task kinds (Table 3). */
export const TASK_KIND_NAMES = [
  'echo',
  'flow-monitor',
  'kv-cache',
  'top-ranker',
  'rate-limiter',
  'firewall',
  'router',
  'load-balancer',
  'packet-scheduler',
  'flow-classifier',
  'packet-replication',
] as const;

export type TaskKindName = (typeof TASK_KIND_NAMES)[number];

/** One Table 3 task row: latency on one CN2350 core at 1.2 GHz for 1 KB requests, IPC, L2 MPKI. */
export interface TaskRow {
  readonly latencyUs: number;
  readonly ipc: number;
  readonly mpki: number;
  readonly structure: string;
}

/** Table 3, 10 GbE CN2350, 1 KB requests. */
export const TASK_TABLE: Readonly<Record<TaskKindName, TaskRow>> = {
  echo: { latencyUs: 1.87, ipc: 1.4, mpki: 0.6, structure: 'none' },
  'flow-monitor': { latencyUs: 3.2, ipc: 1.4, mpki: 0.8, structure: 'count-min sketch, 2-D array' },
  'kv-cache': { latencyUs: 3.7, ipc: 1.2, mpki: 0.9, structure: 'hashtable, read/write/delete' },
  'top-ranker': { latencyUs: 34.0, ipc: 1.7, mpki: 0.1, structure: 'quicksort over 1-D array' },
  'rate-limiter': { latencyUs: 8.2, ipc: 0.7, mpki: 4.4, structure: 'leaky bucket FIFO' },
  firewall: { latencyUs: 3.7, ipc: 1.3, mpki: 1.6, structure: 'wildcard match, software TCAM' },
  router: { latencyUs: 2.2, ipc: 1.3, mpki: 0.6, structure: 'LPM trie' },
  'load-balancer': { latencyUs: 2.0, ipc: 1.3, mpki: 1.3, structure: 'Maglev permutation table' },
  'packet-scheduler': { latencyUs: 12.6, ipc: 0.5, mpki: 4.9, structure: 'pFabric, BST' },
  'flow-classifier': { latencyUs: 71.0, ipc: 0.5, mpki: 15.2, structure: 'naive Bayes, 2-D array' },
  'packet-replication': { latencyUs: 1.9, ipc: 1.4, mpki: 0.6, structure: 'chain replication, linked list' },
};

/** Table 3 request size (bytes) for both the tasks and the accelerators. */
export const TABLE3_REQUEST_BYTES = 1024;

/** One Table 3 accelerator row: µs per request at batch 1 / 8 / 32 (null: not batchable). */
export interface AcceleratorRow {
  readonly ipc: number;
  readonly mpki: number;
  readonly batch1Us: number;
  readonly batch8Us: number | null;
  readonly batch32Us: number | null;
}

/** Table 3, accelerators on the CN2350. Keys match ACCELERATOR_KINDS in src/actor/cost.ts. */
export const ACCELERATOR_TABLE = {
  crc: { ipc: 1.2, mpki: 2.8, batch1Us: 2.6, batch8Us: 0.7, batch32Us: 0.3 },
  md5: { ipc: 0.7, mpki: 2.6, batch1Us: 5.0, batch8Us: 3.1, batch32Us: 3.0 },
  sha1: { ipc: 0.9, mpki: 2.6, batch1Us: 3.5, batch8Us: 1.2, batch32Us: 0.9 },
  '3des': { ipc: 0.8, mpki: 0.9, batch1Us: 3.4, batch8Us: 1.3, batch32Us: 1.1 },
  aes: { ipc: 1.1, mpki: 0.9, batch1Us: 2.7, batch8Us: 1.0, batch32Us: 0.8 },
  kasumi: { ipc: 1.0, mpki: 0.9, batch1Us: 2.7, batch8Us: 1.1, batch32Us: 0.9 },
  sms4: { ipc: 0.8, mpki: 0.9, batch1Us: 3.5, batch8Us: 1.4, batch32Us: 1.2 },
  snow3g: { ipc: 1.4, mpki: 0.5, batch1Us: 2.3, batch8Us: 0.9, batch32Us: 0.8 },
  fau: { ipc: 1.4, mpki: 0.6, batch1Us: 1.9, batch8Us: 1.4, batch32Us: 1.0 },
  zip: { ipc: 1.0, mpki: 0.2, batch1Us: 190.9, batch8Us: null, batch32Us: null },
  dfa: { ipc: 1.3, mpki: 0.2, batch1Us: 9.2, batch8Us: 7.5, batch32Us: 7.3 },
} as const satisfies Readonly<Record<string, AcceleratorRow>>;

/** Table 3 note: the accelerator is this many times faster than the host (which uses AES-NI for aes). */
export const ACCELERATOR_SPEEDUP_VS_HOST = { md5: 7.0, aes: 2.5 } as const;

/** Sizes (bytes) of Fig 6 (send/recv of one packet). */
export const MESSAGING_SIZES_BYTES = [4, 8, 16, 32, 64, 128, 256, 512, 1024] as const;

/** Fig 6, digitized, CN2350: latency (µs) of sending / receiving one packet by mechanism. */
export const MESSAGING_LATENCY_US = {
  'nic-send': [0.31, 0.31, 0.31, 0.31, 0.32, 0.32, 0.32, 0.32, 0.32],
  'nic-recv': [0.14, 0.14, 0.14, 0.14, 0.14, 0.15, 0.15, 0.15, 0.15],
  'dpdk-send': [0.65, 0.83, 1.02, 1.33, 1.68, 1.69, 1.57, 1.75, 1.85],
  'dpdk-recv': [0.73, 0.94, 1.15, 1.5, 1.89, 1.93, 1.82, 2.12, 2.3],
  'rdma-send': [0.92, 0.93, 0.93, 0.94, 0.99, 1.08, 1.68, 1.81, 2.06],
} as const;

/** Fig 6 text: hardware messaging is this many times faster, averaged over sizes. */
export const MESSAGING_TEXT_SPEEDUP = { vsDpdk: 4.6, vsRdma: 4.2 } as const;

/** PCIe of the LiquidIO testbed (§2.2.4): Gen3 x8, latency range, bandwidth, TLP overhead range. */
export const PCIE_PUBLISHED = {
  gen: 3,
  lanes: 8,
  latencyUs: [0.5, 2.0],
  theoreticalGBytesPerSec: 7.87,
  tlpOverheadBytes: [20, 28],
} as const;

/** Sizes (bytes) of the DMA and RDMA figures. */
export const HOST_COMM_SIZES_BYTES = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048] as const;

/** CN2350 DMA latency (µs), digitized; non-blocking: one size-independent value. */
export const DMA_LATENCY_US_CN2350 = {
  blockingRead: [1.71, 1.71, 1.72, 1.73, 1.75, 1.79, 1.86, 1.96, 2.12, 2.4],
  blockingWrite: [1.03, 1.03, 1.04, 1.04, 1.06, 1.07, 1.12, 1.18, 1.3, 1.6],
  nonblockingRead: 0.49,
  nonblockingWrite: 0.53,
} as const;

/** CN2350 DMA throughput per core (Mops), digitized; non-blocking: one value. */
export const DMA_PER_CORE_MOPS_CN2350 = {
  blockingRead: [3.74, 3.69, 3.69, 3.72, 3.65, 3.08, 2.48, 1.82, 1.25, 0.74],
  blockingWrite: [4.52, 4.52, 4.5, 4.56, 4.52, 4.37, 3.86, 3.01, 2.08, 1.3],
  nonblockingRead: 6.6,
  nonblockingWrite: 6.53,
} as const;

/** DMA text: with 2 KB payloads one core reaches these GB/s, this many times the 64 B case. */
export const DMA_TEXT_2KB = {
  writeGBytesPerSec: 2.1,
  readGBytesPerSec: 1.4,
  writeTimes64B: 8.7,
  readTimes64B: 6.0,
} as const;

/** BlueField one-sided RDMA: latency (µs) by size, digitized; throughput (Mops) as one value each. */
export const RDMA_BLUEFIELD = {
  readLatencyUs: [3.92, 3.88, 3.87, 3.87, 3.9, 3.93, 3.99, 4.05, 4.2, 4.44],
  writeLatencyUs: [1.83, 1.84, 1.84, 1.88, 1.91, 2.05, 2.59, 2.68, 2.88, 3.06],
  readMops: 1.24,
  writeMops: 1.36,
} as const;

/**
 * RDMA text: "nearly doubles blocking-DMA latency; below 256 B about a third of blocking DMA's
 * per-core throughput; above 512 B the two are similar".
 */
export const RDMA_TEXT = { thirdBelowBytes: 256, similarAboveBytes: 512 } as const;

/** The NICs' published specs (§2.1 table). */
export const NIC_SPECS = {
  'liquidio-cn2350': {
    vendor: 'Marvell/Cavium',
    isa: 'cnMIPS OCTEON, 2-way issue',
    cores: 12,
    ghz: 1.2,
    linkGbps: 10,
    ports: 2,
    l1KBytes: 32,
    l2MBytes: 4,
    dramGBytes: 4,
    cacheLineBytes: 128,
  },
  'liquidio-cn2360': {
    vendor: 'Marvell/Cavium',
    isa: 'cnMIPS OCTEON, 2-way issue',
    cores: 16,
    ghz: 1.5,
    linkGbps: 25,
    ports: 2,
    l1KBytes: 32,
    l2MBytes: 4,
    dramGBytes: 4,
    cacheLineBytes: 128,
  },
  'bluefield-1m332a': {
    vendor: 'Mellanox',
    isa: 'ARM A72',
    cores: 8,
    ghz: 0.8,
    linkGbps: 25,
    ports: 2,
    l1KBytes: 32,
    l2MBytes: 1,
    dramGBytes: 16,
    cacheLineBytes: 64,
  },
  'stingray-ps225': {
    vendor: 'Broadcom',
    isa: 'ARM A72',
    cores: 8,
    ghz: 3.0,
    linkGbps: 25,
    ports: 2,
    l1KBytes: 32,
    l2MBytes: 16,
    dramGBytes: 8,
    cacheLineBytes: 64,
  },
} as const;

/** The hosts (§2.1): LiquidIO's, and the one BlueField and Stingray share (null: not stated). */
export const HOST_SPECS = {
  'xeon-e5-2680v3': { sockets: 1, coresPerSocket: 12, ghz: 2.5, hyperthreading: true, dramGBytes: 64 },
  'xeon-e5-2620v4': { sockets: 2, coresPerSocket: 8, ghz: 2.1, hyperthreading: null, dramGBytes: 128 },
} as const;
