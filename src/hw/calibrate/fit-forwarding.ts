/**
 * Fits the forwarding model's constants (models/forwarding.ts) to the published echo data of the
 * two NICs that have it — the CN2350 (Fig 2, Fig 4) and the Stingray (Fig 3, Fig 4) — and prints
 * them. The constants are copied into src/hw/profiles.ts as data; test/hw/forwarding-fit.test.ts
 * re-runs this fit and checks the profiles still hold its result. Run:
 *
 *     npx tsx src/hw/calibrate/fit-forwarding.ts
 *
 * Two steps, both deterministic (no random starts):
 *
 * 1. Compute c(S) = c0 + c1·S, c0, c1 ≥ 0: least squares in log space over the text's headroom
 *    (weight 4 each: text wins) and Fig 4's points past the plateau, where throughput is
 *    N / (c + d) (there c + d far exceeds the I/O interval, so w plays no part), subject to Fig 4's
 *    plateaus (c + d within the all-core line-rate budget up to each plateau's last added latency).
 *
 * 2. I/O interval w(S, N) = w1(S)·(1 + π·[N=1])·(1 + σ(N−1) + κN(N−1)): for given (π, σ, κ) each
 *    size's w1 is the least-squares fit (log space) to that size's Fig 2/3 curve *within the
 *    interval the text allows* — the text's cores-for-line-rate is a hard constraint (k cores
 *    reach line rate, k − 1 do not; 64/128 B never do), as are Fig 4's plateaus (line rate with all
 *    cores at the plateau's last added latency). A 0.5% margin keeps the rounded constants off the
 *    constraint boundaries. Sizes whose every digitized point is at line rate carry no information
 *    about w1 (Stingray 1024/1500 B): they take the next smaller size's w1, clamped into their
 *    allowed interval. (π, σ, κ) are then chosen by bounded Nelder–Mead on the total error, with a
 *    penalty if throughput would ever fall when a core is added.
 */

import {
  CORES_FOR_LINE_RATE,
  ECHO_GBPS_BY_CORES,
  FIG4_CURVES,
  FORWARDING_SIZES_BYTES,
  type ForwardedNic,
  HEADROOM_US_ALL_CORES,
  NIC_SPECS,
} from '../data/published.ts';
import { goodputGbps, linePacketsPerSec, wireGbps } from '../models/link.ts';
import { minimizeOnInterval, nelderMead } from './optimize.ts';

/** Keeps fitted constants this far inside the text's constraints, so rounding cannot flip them. */
const CONSTRAINT_MARGIN = 0.005;
/** Weight of each text headroom point against one digitized Fig 4 point. */
const TEXT_WEIGHT = 4;
/** A digitized point below this fraction of line-rate goodput says something about w1. */
const INFORMATIVE_FRACTION = 0.98;

/** Fitted compute constants. */
export interface ComputeFit {
  readonly computeBaseNs: number;
  readonly computePerByteNs: number;
  readonly error: number;
}

/** Fitted I/O-interval constants. */
export interface IoIntervalFit {
  readonly sizesBytes: readonly number[];
  readonly ioIntervalNs: readonly number[];
  readonly singleCoreExtra: number;
  readonly contentionLinear: number;
  readonly contentionQuadratic: number;
  readonly error: number;
}

/** Both, for one NIC. */
export interface ForwardingFit {
  readonly nic: ForwardedNic;
  readonly compute: ComputeFit;
  readonly ioInterval: IoIntervalFit;
}

function linkOf(nic: ForwardedNic): { readonly linkGbps: number } {
  return { linkGbps: NIC_SPECS[nic].linkGbps };
}

/** Line rate in packets per ns. */
function linePerNs(nic: ForwardedNic, packetBytes: number): number {
  return linePacketsPerSec(linkOf(nic), packetBytes) / 1e9;
}

/** Step 1: c0, c1 (see the file comment). */
export function fitCompute(nic: ForwardedNic): ComputeFit {
  const cores = NIC_SPECS[nic].cores;
  const headroom = HEADROOM_US_ALL_CORES[nic];
  const curves = FIG4_CURVES.filter((curve) => curve.nic === nic);
  const error = ([computeBaseNs, computePerByteNs]: readonly number[]): number => {
    let sum = 0;
    for (const [size, publishedUs] of Object.entries(headroom)) {
      const packetBytes = Number(size);
      const c = computeBaseNs! + computePerByteNs! * packetBytes;
      const modelNs = cores / linePerNs(nic, packetBytes) - c;
      if (modelNs <= 0) return Number.POSITIVE_INFINITY;
      sum += TEXT_WEIGHT * Math.log(modelNs / (publishedUs * 1000)) ** 2;
    }
    for (const curve of curves) {
      const c = computeBaseNs! + computePerByteNs! * curve.packetBytes;
      // Fig 4's plateau: c + d must fit the all-core line-rate budget up to its last added latency.
      const budgetNs = cores / linePerNs(nic, curve.packetBytes);
      if (c + curve.plateauUpToUs * 1000 > budgetNs) sum += 1e3 + (c + curve.plateauUpToUs * 1000 - budgetNs);
      for (const [addedUs, publishedGbps] of curve.points) {
        const packetsPerSec = Math.min(
          linePacketsPerSec(linkOf(nic), curve.packetBytes),
          (cores * 1e9) / (c + addedUs * 1000),
        );
        sum += Math.log(wireGbps(linkOf(nic), packetsPerSec, curve.packetBytes) / publishedGbps) ** 2;
      }
    }
    return sum;
  };
  const bounds = { lower: [0, 0], upper: [1000, 1] };
  let best = { point: [0, 0] as readonly number[], value: Number.POSITIVE_INFINITY };
  for (const start of [
    [50, 0],
    [150, 0.05],
    [10, 0.2],
  ]) {
    const found = nelderMead(error, start, bounds, { step: [20, 0.02], maxEvaluations: 3000 });
    if (found.value < best.value) best = found;
  }
  return { computeBaseNs: best.point[0]!, computePerByteNs: best.point[1]!, error: best.value };
}

/** (1 + π[N=1])(1 + σ(N−1) + κN(N−1)). */
function contention(cores: number, singleCoreExtra: number, linear: number, quadratic: number): number {
  return (
    (cores === 1 ? 1 + singleCoreExtra : 1) * (1 + linear * (cores - 1) + quadratic * cores * (cores - 1))
  );
}

/** Modelled Fig 2/3 goodput, Gbps. */
function modelGbps(nic: ForwardedNic, packetBytes: number, cores: number, intervalNs: number): number {
  const packetsPerSec = Math.min(linePacketsPerSec(linkOf(nic), packetBytes), (cores * 1e9) / intervalNs);
  return goodputGbps(packetsPerSec, packetBytes);
}

interface SizeFit {
  readonly ioIntervalNs: number;
  readonly error: number;
}

/** For given contention terms, every size's w1 and the total error (step 2's inner problem). */
function fitSizes(
  nic: ForwardedNic,
  singleCoreExtra: number,
  linear: number,
  quadratic: number,
): { readonly sizes: SizeFit[]; readonly error: number } {
  const maxCores = NIC_SPECS[nic].cores;
  const g = (cores: number): number => contention(cores, singleCoreExtra, linear, quadratic);
  const sizes: SizeFit[] = [];
  let total = 0;
  let previous: number | undefined;
  for (const packetBytes of FORWARDING_SIZES_BYTES) {
    const line = linePerNs(nic, packetBytes);
    const published = ECHO_GBPS_BY_CORES[nic][packetBytes]!;
    const wanted = CORES_FOR_LINE_RATE[nic][packetBytes];
    // The interval [lower, upper] the text (and Fig 4's plateaus) allow w1 in.
    let lower = 0;
    let upper = Number.POSITIVE_INFINITY;
    if (wanted === null || wanted === undefined) {
      lower = (maxCores / (line * g(maxCores))) * (1 + CONSTRAINT_MARGIN);
    } else {
      upper = (wanted / (line * g(wanted))) * (1 - CONSTRAINT_MARGIN);
      if (wanted > 1) lower = ((wanted - 1) / (line * g(wanted - 1))) * (1 + CONSTRAINT_MARGIN);
    }
    // Fig 4's plateaus: all cores keep line rate (w part; the c + d part is checked in step 1).
    for (const curve of FIG4_CURVES) {
      if (curve.nic !== nic || curve.packetBytes !== packetBytes) continue;
      upper = Math.min(upper, (maxCores / (line * g(maxCores))) * (1 - CONSTRAINT_MARGIN));
    }
    const lineGoodput = goodputGbps(line * 1e9, packetBytes);
    const informative = published.some((gbps) => gbps < INFORMATIVE_FRACTION * lineGoodput);
    const error = (intervalNs: number): number => {
      let sum = 0;
      published.forEach((gbps, index) => {
        const cores = index + 1;
        sum += Math.log(modelGbps(nic, packetBytes, cores, intervalNs * g(cores)) / gbps) ** 2;
      });
      return sum;
    };
    let intervalNs: number;
    if (informative || previous === undefined) {
      // Search in log space around what the data say (median of N·S·8/Gbps/g(N)).
      const estimates = published
        .map((gbps, index) => ((index + 1) * packetBytes * 8) / gbps / g(index + 1))
        .sort((a, b) => a - b);
      const median = estimates[estimates.length >> 1]!;
      const from = Math.log(Math.max(lower, median / 4));
      const to = Math.log(Math.min(upper, median * 4));
      intervalNs =
        to > from
          ? Math.exp(minimizeOnInterval((u) => error(Math.exp(u)), from, to, 200).point[0]!)
          : Math.exp(to);
    } else {
      intervalNs = Math.min(upper, Math.max(lower, previous));
    }
    if (informative) previous = intervalNs;
    const sizeError = error(intervalNs);
    sizes.push({ ioIntervalNs: intervalNs, error: sizeError });
    total += sizeError;
  }
  // Adding a core must never lower throughput (N / g(N) non-decreasing up to the card's count).
  for (let cores = 1; cores < maxCores; cores++) {
    const drop = cores / g(cores) - (cores + 1) / g(cores + 1);
    if (drop > 0) total += 1e3 + drop;
  }
  return { sizes, error: total };
}

/** Step 2: w1 per size and (π, σ, κ). */
export function fitIoInterval(nic: ForwardedNic): IoIntervalFit {
  const bounds = { lower: [-0.3, 0, 0], upper: [0.5, 0.3, 0.05] };
  const objective = ([pi, sigma, kappa]: readonly number[]): number =>
    fitSizes(nic, pi!, sigma!, kappa!).error;
  let best = { point: [0, 0, 0] as readonly number[], value: Number.POSITIVE_INFINITY };
  for (const start of [
    [0, 0, 0],
    [0.1, 0.05, 0.01],
    [0, 0.1, 0],
    [0.1, 0, 0.02],
  ]) {
    const found = nelderMead(objective, start, bounds, { step: [0.05, 0.03, 0.005], maxEvaluations: 700 });
    if (found.value < best.value) best = found;
  }
  const [singleCoreExtra, contentionLinear, contentionQuadratic] = best.point as [number, number, number];
  const { sizes, error } = fitSizes(nic, singleCoreExtra, contentionLinear, contentionQuadratic);
  return {
    sizesBytes: [...FORWARDING_SIZES_BYTES],
    ioIntervalNs: sizes.map((size) => size.ioIntervalNs),
    singleCoreExtra,
    contentionLinear,
    contentionQuadratic,
    error,
  };
}

/** Both steps for one NIC. */
export function fitForwarding(nic: ForwardedNic): ForwardingFit {
  const compute = fitCompute(nic);
  return { nic, compute, ioInterval: fitIoInterval(nic) };
}

/** Rounds to `digits` significant digits (the precision the profiles store). */
export function roundSignificant(value: number, digits = 4): number {
  if (value === 0) return 0;
  return Number(value.toPrecision(digits));
}

function main(): void {
  for (const nic of ['liquidio-cn2350', 'stingray-ps225'] as const) {
    const fit = fitForwarding(nic);
    const r = (value: number): number => roundSignificant(value);
    process.stdout.write(
      `// ${nic}: compute error ${fit.compute.error.toFixed(5)}, interval error ${fit.ioInterval.error.toFixed(5)}\n` +
        `computeBaseNs: ${r(fit.compute.computeBaseNs)},\n` +
        `computePerByteNs: ${r(fit.compute.computePerByteNs)},\n` +
        `ioIntervalNs: { sizesBytes: [${fit.ioInterval.sizesBytes.join(', ')}], values: [${fit.ioInterval.ioIntervalNs.map(r).join(', ')}] },\n` +
        `singleCoreExtra: ${r(fit.ioInterval.singleCoreExtra)},\n` +
        `contentionLinear: ${r(fit.ioInterval.contentionLinear)},\n` +
        `contentionQuadratic: ${r(fit.ioInterval.contentionQuadratic)},\n\n`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
