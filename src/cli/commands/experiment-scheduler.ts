/**
 * `ipipe experiment scheduler`: FCFS-only, DRR-only and the hybrid scheduler on a simulated NIC
 * under Poisson load (the paper's §5.3 comparison); p50/p99 per load and scheduler.
 */

import {
  type CostDistribution,
  paperDistribution,
  runSchedulerComparison,
  type SchedulerComparisonResult,
} from '../../experiments/scheduler-comparison.ts';
import { timingFor } from '../../platform/sim/hardware-timing.ts';
import { lineChart, writeExperimentOutputs } from '../../report/index.ts';
import type { SchedulerPolicy } from '../../sched/hybrid-scheduler.ts';
import type { ResolvedNic } from '../options.ts';
import { paint, progressBar, table, writeJson, writeOut } from '../output.ts';

export interface SchedulerExperimentOptions {
  readonly target: ResolvedNic;
  readonly dist: 'exponential' | 'bimodal';
  readonly bimodalShare: number;
  readonly loads: readonly number[];
  readonly schedulers: readonly SchedulerPolicy[];
  readonly seed: number;
  readonly durationNs: number;
  readonly warmupNs: number;
  readonly actors: number;
  readonly packetBytes: number;
  readonly outDir: string;
  readonly json: boolean;
}

export async function schedulerExperimentCommand(
  options: SchedulerExperimentOptions,
): Promise<SchedulerComparisonResult> {
  const distribution: CostDistribution = paperDistribution(
    options.target.nic.name,
    options.dist,
    options.bimodalShare,
  );
  const bar = progressBar('simulating');
  const result = runSchedulerComparison({
    timing: timingFor(options.target.nic, options.target.host),
    distribution,
    loads: options.loads,
    schedulers: options.schedulers,
    seed: options.seed,
    durationNs: options.durationNs,
    warmupNs: options.warmupNs,
    actors: options.actors,
    packetBytes: options.packetBytes,
    onPoint: (done, total) => bar.update(done / total),
  });
  bar.done();
  const rows = result.results.map((r) => ({ ...r }));
  // A point too short to complete a request has a latency of 0, which a log axis cannot draw: the
  // charts leave such rows out (saying so) and the JSON, CSV and text keep every row.
  const p99Rows = rows.filter((row) => row.p99Us > 0);
  const p50Rows = rows.filter((row) => row.p50Us > 0);
  const leftOut = rows.length - Math.min(p99Rows.length, p50Rows.length);
  const subtitle = `${describe(distribution)}, ${result.actors} actors, seed ${result.seed}${
    leftOut > 0 ? `; ${leftOut} point(s) with no completed request left out` : ''
  }`;
  const p99 = await lineChart({
    title: `p99 latency vs load — ${options.target.nic.name}`,
    subtitle,
    x: { field: 'load', title: 'Load', unit: 'fraction of NIC capacity' },
    y: { field: 'p99Us', title: 'p99 latency', unit: 'µs', scale: 'log' },
    series: 'scheduler',
    seriesTitle: 'Scheduler',
    rows: p99Rows,
  });
  const p50 = await lineChart({
    title: `p50 latency vs load — ${options.target.nic.name}`,
    subtitle,
    x: { field: 'load', title: 'Load', unit: 'fraction of NIC capacity' },
    y: { field: 'p50Us', title: 'p50 latency', unit: 'µs', scale: 'log' },
    series: 'scheduler',
    seriesTitle: 'Scheduler',
    rows: p50Rows,
  });
  // The report goes out before the files are written, so a failing --out does not lose it.
  if (options.json) writeJson(result);
  else writeOut(renderScheduler(result));
  if (leftOut > 0) {
    process.stderr.write(
      `ipipe: ${leftOut} point(s) completed no request (latency 0) and are left out of the charts; use a longer --duration\n`,
    );
  }
  const written = await writeExperimentOutputs(
    options.outDir,
    `scheduler-${options.target.nic.name}-${options.dist}`,
    {
      json: result,
      csvRows: rows,
      charts: { p99, p50 },
    },
  );
  if (!options.json) writeOut(`\nWrote ${written.all.join(', ')}`);
  process.stderr.write(`ipipe: wrote ${written.all.length} files to ${options.outDir}\n`);
  return result;
}

function describe(distribution: CostDistribution): string {
  return distribution.kind === 'exponential'
    ? `exponential costs, mean ${distribution.meanNs / 1000} µs`
    : `bimodal costs ${distribution.aNs / 1000}/${distribution.bNs / 1000} µs, ${Math.round(distribution.shareA * 100)}/${Math.round((1 - distribution.shareA) * 100)}`;
}

export function renderScheduler(result: SchedulerComparisonResult): string {
  const lines = [
    paint('bold', `Scheduler comparison (simulated) — ${result.nic}`),
    `${describe(result.distribution)} · ${result.actors} actors · ${result.packetBytes} B packets · ` +
      `${result.nicCores} NIC cores · ${result.durationNs / 1e6} ms per point after ${result.warmupNs / 1e6} ms warm-up · seed ${result.seed}`,
    '',
  ];
  const loads = [...new Set(result.results.map((r) => r.load))];
  const schedulers = [...new Set(result.results.map((r) => r.scheduler))];
  lines.push(
    table(
      ['load', ...schedulers.flatMap((s) => [`${s} p50 µs`, `${s} p99 µs`])],
      loads.map((load) => [
        load,
        ...schedulers.flatMap((s) => {
          const point = result.results.find((r) => r.load === load && r.scheduler === s);
          return [point?.p50Us ?? Number.NaN, point?.p99Us ?? Number.NaN];
        }),
      ]),
    ),
  );
  const hybrid = result.results.filter((r) => r.scheduler === 'hybrid');
  if (hybrid.length > 0) {
    lines.push('');
    lines.push(
      `hybrid decisions per point: ${hybrid.map((r) => `${r.load}: ${r.downgrades} down/${r.upgrades} up`).join(', ')}`,
    );
  }
  return lines.join('\n');
}
