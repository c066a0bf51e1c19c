/**
 * `ipipe characterize`: the paper's SmartNIC characterization (§2.2, Figs 2–10) run on the
 * simulated node with a profile's calibrated models, beside the published numbers.
 *
 *  - Figs 2/3: an echo actor forwards line-rate traffic with 1…N cores; goodput per packet size.
 *  - Fig 4: all cores, per-packet work added to the echo; wire rate vs added latency.
 *  - Fig 5: average and p99 latency near maximum throughput with 6 and 12 cores.
 *  - Figs 6–10: the host path (hardware messaging, DMA or RDMA latency and per-core rate by size).
 *
 * Figures 2–5 are measured by running packets through the discrete-event simulator (the echo
 * actor really runs; only time is modelled), so they test the node as well as the models.
 * `coresForLineRate` and `headroomUs` are found the same way: the fewest cores whose measured
 * goodput reaches 99% of line rate, and the largest added per-packet time (by bisection to 10 ns)
 * at which all cores still do.
 */

import { defineActor, field, messages } from '../actor/index.ts';
import {
  CORES_FOR_LINE_RATE,
  DMA_LATENCY_US_CN2350,
  DMA_PER_CORE_MOPS_CN2350,
  ECHO_GBPS_BY_CORES,
  FIG4_CURVES,
  FIG5_LATENCY_US,
  FORWARDING_SIZES_BYTES,
  type ForwardedNic,
  HEADROOM_US_ALL_CORES,
  HOST_COMM_SIZES_BYTES,
  MESSAGING_LATENCY_US,
  MESSAGING_SIZES_BYTES,
  RDMA_BLUEFIELD,
} from '../hw/data/published.ts';
import { hostPathLatencyNs, hostPathOpsPerSec, linePacketsPerSec } from '../hw/index.ts';
import { MESSAGING_MECHANISMS, messagingLatencyNs } from '../hw/models/messaging.ts';
import type { HostProfile, NicProfile } from '../hw/schema.ts';
import { EventKernel } from '../platform/sim/event-kernel.ts';
import { timingFor } from '../platform/sim/hardware-timing.ts';
import { FRAME_OVERHEAD_BYTES, SimNode } from '../platform/sim/sim-node.ts';
import { LatencyRecorder, OpenLoopSource } from '../platform/sim/traffic.ts';
import { Random } from '../random.ts';

/** Echo: answers with the same payload after `addedNs` of declared work (0 = plain forwarding). */
const echoMessages = messages({ echo: { addedNs: field.u32(), payload: field.bytes({ maxBytes: 9000 }) } });
const echoReplies = messages({ echo: { payload: field.bytes({ maxBytes: 9000 }) } });
export const echoActor = defineActor({
  name: 'echo',
  messages: echoMessages,
  replies: echoReplies,
  placement: 'nic',
  exclusive: false,
  exec(ctx, message) {
    ctx.reply({ type: 'echo', payload: message.payload });
  },
  cost: (message) => ({ instructions: 0, fixedNs: message.addedNs }),
});

export interface CharacterizeOptions {
  readonly nic: NicProfile;
  readonly host: HostProfile;
  readonly seed: number;
  /** Simulated time per throughput point (after a 10% warm-up). */
  readonly pointNs: number;
  readonly onProgress?: (fraction: number) => void;
}

export interface ForwardingRow {
  readonly packetBytes: number;
  readonly cores: number;
  readonly goodputGbps: number;
  readonly wireGbps: number;
  readonly publishedGoodputGbps: number | null;
}

export interface AddedLatencyRow {
  readonly packetBytes: number;
  readonly addedUs: number;
  readonly wireGbps: number;
  readonly publishedWireGbps: number | null;
}

export interface LatencyRow {
  readonly packetBytes: number;
  readonly cores: number;
  readonly loadOfMax: number;
  readonly avgUs: number;
  readonly p99Us: number;
  readonly publishedAvgUs: number | null;
  readonly publishedP99Us: number | null;
}

export interface HostPathRow {
  readonly figure: string;
  readonly series: string;
  readonly bytes: number;
  readonly value: number;
  readonly unit: string;
  readonly published: number | null;
}

export interface CharacterizeResult {
  readonly schemaVersion: 1;
  readonly experiment: 'characterize';
  readonly nic: string;
  readonly nicName: string;
  /** The host profile the NIC was simulated in (the NIC's own, or `--host`'s). */
  readonly host: string;
  readonly seed: number;
  readonly pointNs: number;
  readonly coresForLineRate: Readonly<Record<string, number | null>>;
  readonly headroomUs: Readonly<Record<string, number | null>>;
  readonly publishedCoresForLineRate: Readonly<Record<string, number | null>> | null;
  readonly publishedHeadroomUs: Readonly<Record<string, number>> | null;
  readonly forwarding: readonly ForwardingRow[];
  readonly addedLatency: readonly AddedLatencyRow[];
  readonly latencyAtMax: readonly LatencyRow[];
  /** Fig 5 text: latency change from 6 to 12 cores averaged over the sizes, % (model vs text). */
  readonly sixToTwelve: {
    readonly avgPercent: number;
    readonly p99Percent: number;
    readonly textAvgPercent: number;
    readonly textP99Percent: number;
  } | null;
  readonly hostPath: readonly HostPathRow[];
}

const LINE_RATE_FRACTION = 0.99;
/** Frames a single source hands to the node per kernel event (it is the node's only client). */
const SEND_AHEAD = 64;
const ADDED_US = [0, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16] as const;

function isForwarded(id: string): id is ForwardedNic {
  return id === 'liquidio-cn2350' || id === 'stingray-ps225';
}

interface PointResult {
  readonly packetsPerSec: number;
  readonly recorder: LatencyRecorder;
}

/**
 * One simulated point: `cores` cores forward `packetBytes` frames carrying `addedNs` of work,
 * offered either at line rate (deterministic gaps: throughput points) or as Poisson arrivals at
 * `poissonRatePerSec` (latency points). Raw forwarding, as the paper measured it: off-path NICs
 * steer by hardware RSS here, without iPipe's dispatcher core.
 */
function runPoint(
  options: CharacterizeOptions,
  packetBytes: number,
  cores: number,
  addedNs: number,
  poissonRatePerSec?: number,
): PointResult {
  const kernel = new EventKernel();
  const timing = timingFor(options.nic, options.host, { nicCores: cores, dispatcher: false });
  const node = new SimNode({
    timing,
    kernel,
    nicCores: cores,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
    ingressQueuePackets: 2_048,
  });
  const echo = node.register(echoActor);
  const payload = new Uint8Array(Math.max(0, packetBytes - FRAME_OVERHEAD_BYTES - 1 - 4 - 4));
  const message = { type: 'echo' as const, addedNs, payload };
  const warmupNs = Math.round(options.pointNs * 0.1);
  const endNs = warmupNs + options.pointNs;
  const random = new Random(options.seed).fork(
    `point-${packetBytes}-${cores}-${addedNs}-${poissonRatePerSec ?? 0}`,
  );
  let recorder: LatencyRecorder;
  // Throughput is what is delivered during the window, whenever it was sent: under overload the
  // queue holds more than a window's worth, so counting by send time would undercount.
  let deliveredInWindow = 0;
  if (poissonRatePerSec !== undefined) {
    const source = new OpenLoopSource({
      node,
      random,
      ratePerSec: poissonRatePerSec,
      endNs,
      measureFromNs: warmupNs,
      sendAhead: SEND_AHEAD,
      make: () => ({ target: echo, message, packetBytes }),
    });
    recorder = source.recorder;
  } else {
    recorder = new LatencyRecorder(warmupNs);
    const sink = (_id: number, latencyNs: number, ok: boolean, _reply: unknown, sentAtNs: number) => {
      recorder.record(sentAtNs, latencyNs, ok);
      // Throughput is what reaches the client during the window, whenever it was sent: under
      // overload the queue holds more than a window's worth.
      const arrivedAtNs = sentAtNs + latencyNs;
      if (ok && arrivedAtNs >= warmupNs && arrivedAtNs < endNs) deliveredInWindow++;
    };
    // Line rate with deterministic gaps, handed to the node SEND_AHEAD frames at a time.
    const gapNs = 1e9 / linePacketsPerSec(options.nic.link, packetBytes);
    const send = kernel.registerKind((k, first) => {
      let sequence = first;
      for (; sequence < first + SEND_AHEAD; sequence++) {
        const atNs = Math.round(sequence * gapNs);
        if (atNs >= endNs) return;
        node.clientSend(echo, message, sink, packetBytes, { atNs, passive: true });
      }
      k.schedule(send, Math.round(sequence * gapNs), sequence, 0);
    }, 'line-rate-send');
    kernel.schedule(send, 0, 0, 0);
  }
  kernel.run({});
  const packetsPerSec = poissonRatePerSec === undefined ? (deliveredInWindow * 1e9) / options.pointNs : 0;
  return { packetsPerSec, recorder };
}

export function runCharacterize(options: CharacterizeOptions): CharacterizeResult {
  const nic = options.nic;
  const totalCores = nic.cores.count;
  const published: ForwardedNic | null = isForwarded(nic.name) ? nic.name : null;
  const sizes = FORWARDING_SIZES_BYTES;
  const work = sizes.length * totalCores + 2 * sizes.length * 8 + ADDED_US.length * 2 + 8;
  let done = 0;
  const tick = () => options.onProgress?.(Math.min(1, ++done / work));

  // Figs 2/3 and cores for line rate.
  const forwarding: ForwardingRow[] = [];
  const coresForLineRate: Record<string, number | null> = {};
  for (const packetBytes of sizes) {
    const line = linePacketsPerSec(nic.link, packetBytes);
    let firstAtLine: number | null = null;
    for (let cores = 1; cores <= totalCores; cores++) {
      const { packetsPerSec } = runPoint(options, packetBytes, cores, 0);
      tick();
      if (firstAtLine === null && packetsPerSec >= LINE_RATE_FRACTION * line) firstAtLine = cores;
      forwarding.push({
        packetBytes,
        cores,
        goodputGbps: (packetsPerSec * packetBytes * 8) / 1e9,
        wireGbps: (packetsPerSec * (packetBytes + 20) * 8) / 1e9,
        publishedGoodputGbps: published
          ? (ECHO_GBPS_BY_CORES[published][packetBytes]?.[cores - 1] ?? null)
          : null,
      });
    }
    coresForLineRate[packetBytes] = firstAtLine;
  }

  // Headroom: the largest added work at which all cores still reach line rate (bisection).
  const headroomUs: Record<string, number | null> = {};
  for (const packetBytes of sizes) {
    const line = linePacketsPerSec(nic.link, packetBytes);
    const atLine = (addedNs: number) =>
      runPoint(options, packetBytes, totalCores, addedNs).packetsPerSec >= LINE_RATE_FRACTION * line;
    if (!atLine(0)) {
      headroomUs[packetBytes] = null;
      done += 8;
      continue;
    }
    let lo = 0;
    let hi = 64_000;
    for (let step = 0; step < 16 && hi - lo > 10; step++) {
      const mid = Math.round((lo + hi) / 2);
      if (atLine(mid)) lo = mid;
      else hi = mid;
      if (step < 8) tick();
    }
    headroomUs[packetBytes] = lo / 1000;
  }

  // Fig 4: wire rate vs added per-packet latency, all cores, 256 B and 1024 B.
  const addedLatency: AddedLatencyRow[] = [];
  for (const packetBytes of [256, 1024]) {
    const curve = FIG4_CURVES.find((c) => c.nic === published && c.packetBytes === packetBytes);
    for (const addedUs of ADDED_US) {
      const { packetsPerSec } = runPoint(options, packetBytes, totalCores, Math.round(addedUs * 1000));
      tick();
      let publishedWireGbps: number | null = null;
      if (curve) {
        if (addedUs <= curve.plateauUpToUs) publishedWireGbps = curve.plateauGbps;
        else publishedWireGbps = curve.points.find(([us]) => us === addedUs)?.[1] ?? null;
      }
      addedLatency.push({
        packetBytes,
        addedUs,
        wireGbps: (packetsPerSec * (packetBytes + 20) * 8) / 1e9,
        publishedWireGbps,
      });
    }
  }

  // Fig 5: latency near maximum throughput (Poisson at 95% of the measured maximum), 6 and 12 cores.
  const latencyAtMax: LatencyRow[] = [];
  const loadOfMax = 0.95;
  for (const packetBytes of [64, 512, 1024, 1500]) {
    for (const cores of [6, 12]) {
      if (cores > totalCores) continue;
      const max = forwarding.find((r) => r.packetBytes === packetBytes && r.cores === cores);
      const maxPps = ((max?.goodputGbps ?? 0) * 1e9) / (packetBytes * 8);
      const { recorder } = runPoint(
        { ...options, pointNs: options.pointNs * 10 },
        packetBytes,
        cores,
        0,
        loadOfMax * maxPps,
      );
      tick();
      const fig5 = nic.name === 'liquidio-cn2350' ? FIG5_LATENCY_US[packetBytes] : undefined;
      latencyAtMax.push({
        packetBytes,
        cores,
        loadOfMax,
        avgUs: recorder.meanNs / 1000,
        p99Us: recorder.percentileNs(99) / 1000,
        // docs/calibration.md: the 6/12-core columns read as swapped (the text says 12 cores add latency).
        publishedAvgUs: fig5 ? (cores === 6 ? fig5.avg12CoresUs : fig5.avg6CoresUs) : null,
        publishedP99Us: fig5 ? (cores === 6 ? fig5.p9912CoresUs : fig5.p996CoresUs) : null,
      });
    }
  }
  const sixToTwelve = relativeIncrease(latencyAtMax);

  return {
    schemaVersion: 1,
    experiment: 'characterize',
    nic: nic.name,
    nicName: nic.name,
    host: options.host.name,
    seed: options.seed,
    pointNs: options.pointNs,
    coresForLineRate,
    headroomUs,
    publishedCoresForLineRate: published ? CORES_FOR_LINE_RATE[published] : null,
    publishedHeadroomUs: published ? HEADROOM_US_ALL_CORES[published] : null,
    forwarding,
    addedLatency,
    latencyAtMax,
    sixToTwelve,
    hostPath: hostPathRows(nic),
  };
}

function relativeIncrease(rows: readonly LatencyRow[]): CharacterizeResult['sixToTwelve'] {
  const pairs = [64, 512, 1024, 1500]
    .map((size) => [
      rows.find((r) => r.packetBytes === size && r.cores === 6),
      rows.find((r) => r.packetBytes === size && r.cores === 12),
    ])
    .filter((pair): pair is [LatencyRow, LatencyRow] => pair[0] !== undefined && pair[1] !== undefined);
  if (pairs.length === 0) return null;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    avgPercent: mean(pairs.map(([six, twelve]) => (twelve.avgUs / six.avgUs - 1) * 100)),
    p99Percent: mean(pairs.map(([six, twelve]) => (twelve.p99Us / six.p99Us - 1) * 100)),
    textAvgPercent: 4.1,
    textP99Percent: 3.4,
  };
}

/** Figs 6–10 for the profile's host path: the model beside the published point where one exists. */
function hostPathRows(nic: NicProfile): HostPathRow[] {
  const rows: HostPathRow[] = [];
  const isCn2350 = nic.name === 'liquidio-cn2350';
  for (const [index, bytes] of MESSAGING_SIZES_BYTES.entries()) {
    for (const series of MESSAGING_MECHANISMS) {
      rows.push({
        figure: '6',
        series,
        bytes,
        value: messagingLatencyNs(series, bytes) / 1000,
        unit: 'us',
        published: MESSAGING_LATENCY_US[series][index] ?? null,
      });
    }
  }
  const path = nic.hostPath.kind;
  const isBluefield = nic.name === 'bluefield-1m332a';
  for (const [index, bytes] of HOST_COMM_SIZES_BYTES.entries()) {
    for (const direction of ['read', 'write'] as const) {
      for (const blocking of path === 'native-dma' ? [true, false] : [false]) {
        const kind = { direction, blocking };
        const label = `${path}-${blocking ? 'blocking' : 'nonblocking'}-${direction}`;
        let latencyUs: number | null = null;
        let rateMops: number | null = null;
        if (isCn2350 && path === 'native-dma') {
          const key =
            `${blocking ? 'blocking' : 'nonblocking'}${direction === 'read' ? 'Read' : 'Write'}` as const;
          const latency = DMA_LATENCY_US_CN2350[key];
          const rate = DMA_PER_CORE_MOPS_CN2350[key];
          // Non-blocking figures are one published value each, read as the smallest size's
          // latency and the 64 B rate (as docs/calibration.md compares them).
          latencyUs = typeof latency === 'number' ? (bytes === 4 ? latency : null) : (latency[index] ?? null);
          rateMops = typeof rate === 'number' ? (bytes === 64 ? rate : null) : (rate[index] ?? null);
        } else if (isBluefield && path === 'rdma') {
          latencyUs =
            (direction === 'read' ? RDMA_BLUEFIELD.readLatencyUs : RDMA_BLUEFIELD.writeLatencyUs)[index] ??
            null;
          // The rate is published for small messages only (RDMA_TEXT: similar to DMA above 512 B).
          rateMops =
            bytes <= 256 ? (direction === 'read' ? RDMA_BLUEFIELD.readMops : RDMA_BLUEFIELD.writeMops) : null;
        }
        rows.push({
          figure: path === 'native-dma' ? '7' : '9',
          series: `${label}-latency`,
          bytes,
          value: hostPathLatencyNs(nic, kind, bytes) / 1000,
          unit: 'us',
          published: latencyUs,
        });
        rows.push({
          figure: path === 'native-dma' ? '8' : '10',
          series: `${label}-per-core-rate`,
          bytes,
          value: hostPathOpsPerSec(nic, kind, bytes) / 1e6,
          unit: 'Mops',
          published: rateMops,
        });
      }
    }
  }
  return rows;
}
