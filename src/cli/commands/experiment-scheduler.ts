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
import { NO_DATA, paint, progressBar, table } from '../output.ts';
import { type PlannedChart, renderCharts, reportThenWrite } from '../report-files.ts';

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
    options.target.nic,
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
  const subtitle = `${describe(distribution)}, ${result.actors} actors, seed ${result.seed}`;
  // A point too short to complete a request has no latency (null): its chart leaves it out.
  const latencyChart = (field: 'p99Us' | 'p50Us', label: string): PlannedChart<(typeof rows)[number]> => ({
    name: field === 'p99Us' ? 'p99' : 'p50',
    rows,
    field,
    scale: 'log',
    render: (drawable, note) =>
      lineChart({
        title: `${label} latency vs load — ${options.target.nic.name}`,
        subtitle: `${subtitle}${note}`,
        x: { field: 'load', title: 'Load', unit: 'fraction of NIC capacity' },
        y: { field, title: `${label} latency`, unit: 'µs', scale: 'log' },
        series: 'scheduler',
        seriesTitle: 'Scheduler',
        rows: drawable,
      }),
  });
  const charts = await renderCharts(
    [latencyChart('p99Us', 'p99'), latencyChart('p50Us', 'p50')],
    'completed no request (no latency)',
    'use a longer --duration',
  );
  const silent = result.results.filter((r) => r.answered === 0).length;
  const notes =
    silent === 0
      ? charts.notes
      : [
          ...charts.notes,
          `${silent} of ${result.results.length} point(s) completed no request in the measured ${options.durationNs / 1e6} ms: ` +
            `their latencies read "${NO_DATA}" (in the JSON null, in the CSV empty); use a longer --duration`,
        ];
  await reportThenWrite({
    json: options.json,
    document: result,
    text: () => renderScheduler(result),
    notes,
    outDir: options.outDir,
    write: async () =>
      (
        await writeExperimentOutputs(options.outDir, `scheduler-${options.target.nic.name}-${options.dist}`, {
          json: result,
          csvRows: rows,
          charts: charts.svgs,
        })
      ).all,
  });
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
        ...schedulers.flatMap((s): (string | number)[] => {
          const point = result.results.find((r) => r.load === load && r.scheduler === s);
          if (point === undefined) return [Number.NaN, Number.NaN];
          // No request completed: there is no latency to show.
          return [point.p50Us ?? NO_DATA, point.p99Us ?? NO_DATA];
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
