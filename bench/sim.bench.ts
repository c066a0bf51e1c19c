/**
 * Whole-run speed of the simulator (issue 3, §5): simulated packets per wall-clock second for a
 * 25 GbE, 256 B echo load through the Stingray model, and the wall time of `characterize` for all
 * four profiles. The baseline measured in the same run is the bare event kernel's hold-model rate
 * (events/s): a packet through the node costs several events plus the runtime's work, and the
 * ratio says how many bare events' time one simulated packet takes.
 *
 * Why several processes. On the shared 2-vCPU VM one process's speed is bimodal — a process runs
 * at about 0.7 or about 1.1 M packets/s for its whole life (JIT and heap layout settle one way or
 * the other), so the median of five runs inside one process was a coin flip. The echo measurement
 * (a warm-up, then the median of five 20 ms runs, beside the median of five bare-kernel runs) now
 * runs in K child processes one after another (default 5, `--processes K`), and the row reports the
 * median across processes with every process's figure, so the spread is visible.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { echoActor, runCharacterize } from '../src/experiments/characterize.ts';
import { getNicProfile, hostOf, linePacketsPerSec } from '../src/hw/index.ts';
import { EventKernel, type EventKind } from '../src/platform/sim/event-kernel.ts';
import { timingFor } from '../src/platform/sim/hardware-timing.ts';
import { FRAME_OVERHEAD_BYTES, SimNode } from '../src/platform/sim/sim-node.ts';
import { Random } from '../src/random.ts';
import { type BenchRow, medianOf, printRows } from './report.ts';

/** Packets per wall second through the node; also returns events per packet. */
function echoThroughput(simulatedNs: number): { packetsPerSec: number; eventsPerPacket: number } {
  const nic = getNicProfile('stingray-ps225');
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: timingFor(nic, hostOf(nic), { dispatcher: false }),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const echo = node.register(echoActor);
  const packetBytes = 256;
  const message = {
    type: 'echo' as const,
    addedNs: 0,
    payload: new Uint8Array(packetBytes - FRAME_OVERHEAD_BYTES - 9),
  };
  const gapNs = 1e9 / linePacketsPerSec(nic.link, packetBytes);
  let answered = 0;
  const sink = () => {
    answered++;
  };
  // As `ipipe characterize` does: line-rate frames handed to the node 64 at a time, passive sinks.
  const send: EventKind = kernel.registerKind((k, first) => {
    let sequence = first;
    for (; sequence < first + 64; sequence++) {
      const atNs = Math.round(sequence * gapNs);
      if (atNs >= simulatedNs) return;
      node.clientSend(echo, message, sink, packetBytes, { atNs, passive: true });
    }
    k.schedule(send, Math.round(sequence * gapNs), sequence, 0);
  }, 'send');
  kernel.schedule(send, 0, 0, 0);
  const start = performance.now();
  kernel.run({});
  const seconds = (performance.now() - start) / 1000;
  return {
    packetsPerSec: answered / seconds,
    eventsPerPacket: kernel.eventsProcessed / Math.max(1, answered),
  };
}

/** The bare kernel's hold model at 10^3 pending events: events per wall second. */
function bareKernelEventsPerSec(events: number): number {
  const kernel = new EventKernel();
  const random = new Random(1);
  let kind = 0 as EventKind;
  kind = kernel.registerKind((k, a, b) => {
    k.scheduleAfter(kind, Math.round(-Math.log(1 - random.next()) * 1000), a, b);
  }, 'hold');
  for (let i = 0; i < 1000; i++)
    kernel.scheduleAfter(kind, Math.round(-Math.log(1 - random.next()) * 1000), i, 0);
  const start = performance.now();
  kernel.run({ maxEvents: events });
  return events / ((performance.now() - start) / 1000);
}

/** One process's measurement: what the single-process bench measured before (see the header). */
export interface ProcessSample {
  /** Median of five 20 ms echo runs after a 2 ms warm-up. */
  readonly packetsPerSec: number;
  /** Median of five bare-kernel hold-model runs of 2 M events, in the same process. */
  readonly kernelEventsPerSec: number;
  readonly eventsPerPacket: number;
}

/** The per-process measurement (run in each child). */
export function measureInProcess(): ProcessSample {
  echoThroughput(2_000_000); // warm-up
  const samples: { packetsPerSec: number; eventsPerPacket: number }[] = [];
  const packetsPerSec = medianOf(5, () => {
    const sample = echoThroughput(20_000_000);
    samples.push(sample);
    return sample.packetsPerSec;
  });
  const kernelEventsPerSec = medianOf(5, () => bareKernelEventsPerSec(2_000_000));
  return { packetsPerSec, kernelEventsPerSec, eventsPerPacket: samples[0]?.eventsPerPacket ?? 0 };
}

const CHILD_FLAG = '--measure-child';
const DEFAULT_PROCESSES = 5;

/** Runs `measureInProcess` in `count` fresh processes, one after another. */
function measureInChildren(count: number): ProcessSample[] {
  const file = fileURLToPath(import.meta.url);
  const root = fileURLToPath(new URL('..', import.meta.url));
  const samples: ProcessSample[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', file, CHILD_FLAG], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    if (child.status !== 0 || !line.startsWith('{')) {
      throw new Error(
        `sim bench: measuring process ${i + 1} of ${count} exited with ${child.status} and printed ` +
          `${JSON.stringify(line.slice(0, 200))}; run \`npx tsx bench/sim.bench.ts ${CHILD_FLAG}\` to see why`,
      );
    }
    samples.push(JSON.parse(line) as ProcessSample);
  }
  return samples;
}

/** The median of `values` (upper median for an even count, as `medianOf`). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export async function runSimBench(
  options: { readonly characterize?: boolean; readonly processes?: number } = {},
): Promise<BenchRow[]> {
  const processes = options.processes ?? DEFAULT_PROCESSES;
  if (!(Number.isInteger(processes) && processes >= 1)) {
    throw new RangeError(`sim bench: --processes must be a positive integer, got ${processes}`);
  }
  const samples = measureInChildren(processes);
  const rates = samples.map((s) => s.packetsPerSec);
  const kernelRates = samples.map((s) => s.kernelEventsPerSec);
  const packetsPerSec = median(rates);
  const kernelRate = median(kernelRates);
  const eventsPerPacket = samples[0]?.eventsPerPacket ?? 0;
  const list = (values: readonly number[]): string => values.map((v) => (v / 1e6).toFixed(2)).join(', ');
  const spread = (values: readonly number[]): string =>
    `${(Math.min(...values) / 1e6).toFixed(2)}–${(Math.max(...values) / 1e6).toFixed(2)}`;
  const rows: BenchRow[] = [
    {
      section: 'simulator',
      name: 'bare kernel hold model (10^3 pending)',
      value: kernelRate / 1e6,
      unit: 'M events/s',
      note: `median of ${processes} processes (spread ${spread(kernelRates)}): ${list(kernelRates)}`,
    },
    {
      section: 'simulator',
      name: 'Stingray 25 GbE 256 B echo, simulated packets per wall second',
      value: packetsPerSec / 1e6,
      unit: 'M packets/s',
      ratio: kernelRate / packetsPerSec,
      baseline: 'bare events per packet-time',
      target: '≥ 1 M packets/s',
      pass: packetsPerSec >= 1e6,
      note:
        `${eventsPerPacket.toFixed(1)} kernel events per packet; median of ${processes} processes ` +
        `(spread ${spread(rates)}, at or above target in ${rates.filter((r) => r >= 1e6).length}): ${list(rates)}`,
    },
  ];
  if (options.characterize !== false) {
    let total = 0;
    for (const name of ['liquidio-cn2350', 'liquidio-cn2360', 'bluefield-1m332a', 'stingray-ps225']) {
      const nic = getNicProfile(name);
      const start = performance.now();
      runCharacterize({ nic, host: hostOf(nic), seed: 1, pointNs: 1_000_000 });
      const seconds = (performance.now() - start) / 1000;
      total += seconds;
      rows.push({
        section: 'simulator',
        name: `ipipe characterize --nic ${name}`,
        value: seconds,
        unit: 's wall',
      });
    }
    rows.push({
      section: 'simulator',
      name: 'ipipe characterize, all four profiles',
      value: total,
      unit: 's wall',
      target: '< 60 s',
      pass: total < 60,
    });
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes(CHILD_FLAG)) {
    process.stdout.write(`${JSON.stringify(measureInProcess())}\n`);
  } else {
    const at = process.argv.indexOf('--processes');
    printRows(
      await runSimBench({
        characterize: !process.argv.includes('--no-characterize'),
        ...(at < 0 ? {} : { processes: Number(process.argv[at + 1]) }),
      }),
    );
  }
}
