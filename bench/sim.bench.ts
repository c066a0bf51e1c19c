/**
 * Whole-run speed of the simulator (issue 3, §5): simulated packets per wall-clock second for a
 * 25 GbE, 256 B echo load through the Stingray model, and the wall time of `characterize` for all
 * four profiles. The baseline measured in the same run is the bare event kernel's hold-model rate
 * (events/s): a packet through the node costs several events plus the runtime's work, and the
 * ratio says how many bare events' time one simulated packet takes.
 */

import { pathToFileURL } from 'node:url';
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

export async function runSimBench(options: { readonly characterize?: boolean } = {}): Promise<BenchRow[]> {
  echoThroughput(2_000_000); // warm-up
  const samples: { packetsPerSec: number; eventsPerPacket: number }[] = [];
  const packetsPerSec = medianOf(5, () => {
    const sample = echoThroughput(20_000_000);
    samples.push(sample);
    return sample.packetsPerSec;
  });
  const kernelRate = medianOf(5, () => bareKernelEventsPerSec(2_000_000));
  const eventsPerPacket = samples[0]?.eventsPerPacket ?? 0;
  const rows: BenchRow[] = [
    {
      section: 'simulator',
      name: 'bare kernel hold model (10^3 pending)',
      value: kernelRate / 1e6,
      unit: 'M events/s',
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
      note: `${eventsPerPacket.toFixed(1)} kernel events per packet`,
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
  printRows(await runSimBench({ characterize: !process.argv.includes('--no-characterize') }));
}
