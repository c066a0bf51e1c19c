/**
 * `ipipe characterize --nic <profile>`: the paper's characterization (Figs 2–10) on the simulated
 * NIC, beside the published numbers; text or `--json` on stdout, JSON + CSV + SVG charts in `--out`.
 */

import { type CharacterizeResult, runCharacterize } from '../../experiments/characterize.ts';
import { barChart, lineChart, writeExperimentOutputs } from '../../report/index.ts';
import type { ResolvedNic } from '../options.ts';
import { paint, progressBar, table } from '../output.ts';
import { reportThenWrite } from '../report-files.ts';

export interface CharacterizeCommandOptions {
  readonly target: ResolvedNic;
  readonly seed: number;
  readonly pointNs: number;
  readonly outDir: string;
  readonly json: boolean;
}

export async function characterizeCommand(options: CharacterizeCommandOptions): Promise<CharacterizeResult> {
  const bar = progressBar(`characterizing ${options.target.nic.name}`);
  const result = runCharacterize({
    nic: options.target.nic,
    host: options.target.host,
    seed: options.seed,
    pointNs: options.pointNs,
    onProgress: (f) => bar.update(f),
  });
  bar.done();
  const charts = await characterizeCharts(result);
  await reportThenWrite({
    json: options.json,
    document: result,
    text: () => renderCharacterize(result),
    notes:
      result.latencyAtMax.length === 0
        ? [
            `chart latency not written: Fig 5 compares 6 and 12 cores; ${result.nicName} has ${mostCores(result)}`,
          ]
        : [],
    outDir: options.outDir,
    write: async () =>
      (
        await writeExperimentOutputs(options.outDir, `characterize-${result.nic}`, {
          json: result,
          csvRows: result.forwarding.map((r) => ({ ...r })),
          charts,
        })
      ).all,
  });
  return result;
}

async function characterizeCharts(result: CharacterizeResult): Promise<Record<string, string>> {
  const subtitle = `simulated, seed ${result.seed}`;
  const size = (bytes: number) => `${bytes} B`;
  const forwardingRows = result.forwarding.map((r) => ({
    cores: r.cores,
    gbps: r.goodputGbps,
    size: size(r.packetBytes),
  }));
  const forwardingReference = result.forwarding
    .filter((r) => r.publishedGoodputGbps !== null)
    .map((r) => ({ cores: r.cores, gbps: r.publishedGoodputGbps as number, size: size(r.packetBytes) }));
  const throughput = await lineChart({
    title: `Echo goodput vs NIC cores — ${result.nicName} (Figs 2/3)`,
    subtitle,
    x: { field: 'cores', title: 'NIC cores', unit: 'cores' },
    y: { field: 'gbps', title: 'Goodput', unit: 'Gbps' },
    series: 'size',
    seriesTitle: 'Packet size',
    rows: forwardingRows,
    ...(forwardingReference.length > 0
      ? { reference: { rows: forwardingReference, label: 'paper (digitized)' } }
      : {}),
  });
  const addedRows = result.addedLatency.map((r) => ({
    addedUs: r.addedUs,
    gbps: r.wireGbps,
    size: size(r.packetBytes),
  }));
  const addedReference = result.addedLatency
    .filter((r) => r.publishedWireGbps !== null)
    .map((r) => ({ addedUs: r.addedUs, gbps: r.publishedWireGbps as number, size: size(r.packetBytes) }));
  const headroom = await lineChart({
    title: `Wire rate vs added per-packet work, all cores — ${result.nicName} (Fig 4)`,
    subtitle,
    x: { field: 'addedUs', title: 'Added per-packet processing', unit: 'µs' },
    y: { field: 'gbps', title: 'Wire rate', unit: 'Gbps' },
    series: 'size',
    seriesTitle: 'Packet size',
    rows: addedRows,
    ...(addedReference.length > 0 ? { reference: { rows: addedReference, label: 'paper (digitized)' } } : {}),
  });
  const latencyRows = result.latencyAtMax.flatMap((r) => [
    { size: size(r.packetBytes), latencyUs: r.avgUs, series: `avg, ${r.cores} cores` },
    { size: size(r.packetBytes), latencyUs: r.p99Us, series: `p99, ${r.cores} cores` },
  ]);
  // Fig 5 compares 6 and 12 cores; a card with fewer has no rows, and an empty chart says nothing.
  const latency =
    latencyRows.length === 0
      ? undefined
      : await barChart({
          title: `Echo latency at 95% of maximum throughput, NIC only — ${result.nicName} (Fig 5)`,
          subtitle,
          x: { field: 'size', title: 'Packet size' },
          y: { field: 'latencyUs', title: 'Latency', unit: 'µs' },
          group: 'series',
          groupTitle: 'Statistic',
          rows: latencyRows,
        });
  const hostRows = result.hostPath
    .filter((r) => r.unit === 'us')
    .map((r) => ({ bytes: r.bytes, latencyUs: r.value, series: `Fig ${r.figure} ${r.series}` }));
  const hostReference = result.hostPath
    .filter((r) => r.unit === 'us' && r.published !== null)
    .map((r) => ({
      bytes: r.bytes,
      latencyUs: r.published as number,
      series: `Fig ${r.figure} ${r.series}`,
    }));
  const hostPath = await lineChart({
    title: `NIC↔host messaging, DMA/RDMA latency by size — ${result.nicName} (Figs 6–10)`,
    subtitle: 'model',
    x: { field: 'bytes', title: 'Message size', unit: 'B', scale: 'log' },
    y: { field: 'latencyUs', title: 'Latency', unit: 'µs' },
    series: 'series',
    seriesTitle: 'Path',
    rows: hostRows,
    ...(hostReference.length > 0 ? { reference: { rows: hostReference, label: 'paper' } } : {}),
  });
  if (latency === undefined) return { throughput, headroom, 'host-path': hostPath };
  return { throughput, headroom, latency, 'host-path': hostPath };
}

function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined ? '—' : value.toFixed(digits);
}

function errorPct(model: number | null, published: number | null | undefined): string {
  if (model === null || published === null || published === undefined || published === 0) return '';
  const error = (model / published - 1) * 100;
  const text = `${error >= 0 ? '+' : ''}${error.toFixed(1)}%`;
  return Math.abs(error) > 10 ? paint('yellow', text) : text;
}

export function renderCharacterize(result: CharacterizeResult): string {
  const lines: string[] = [];
  lines.push(paint('bold', `SmartNIC characterization (simulated) — ${result.nicName}`));
  lines.push(`seed ${result.seed} · ${result.pointNs / 1e6} ms of simulated traffic per point`);
  lines.push('');
  lines.push(paint('bold', 'Cores for line rate and headroom with all cores (Figs 2–4):'));
  const sizes = Object.keys(result.coresForLineRate);
  lines.push(
    table(
      ['packet', 'cores (model)', 'cores (paper)', 'headroom µs (model)', 'headroom µs (paper)', 'error'],
      sizes.map((s) => {
        const cores = result.coresForLineRate[s] ?? null;
        const published = result.publishedCoresForLineRate?.[s];
        const headroom = result.headroomUs[s] ?? null;
        const paperHeadroom = result.publishedHeadroomUs?.[s] ?? null;
        return [
          `${s} B`,
          cores === null ? 'never' : String(cores),
          published === undefined ? '—' : published === null ? 'never' : String(published),
          fmt(headroom),
          fmt(paperHeadroom),
          errorPct(headroom, paperHeadroom),
        ];
      }),
    ),
  );
  const withPaper = result.forwarding.filter((r) => r.publishedGoodputGbps !== null);
  if (withPaper.length > 0) {
    const errors = withPaper.map((r) => Math.abs(r.goodputGbps / (r.publishedGoodputGbps as number) - 1));
    const within = errors.filter((e) => e <= 0.1).length;
    lines.push('');
    lines.push(
      `Figs 2/3 goodput: ${within} of ${errors.length} points within 10% of the digitized curves ` +
        `(worst ${(Math.max(...errors) * 100).toFixed(1)}%).`,
    );
  }
  const fig4 = result.addedLatency.filter((r) => r.publishedWireGbps !== null);
  if (fig4.length > 0) {
    lines.push('');
    lines.push(paint('bold', 'Fig 4, wire rate with added per-packet work (all cores):'));
    lines.push(
      table(
        ['packet', 'added µs', 'model Gbps', 'paper Gbps', 'error'],
        fig4.map((r) => [
          `${r.packetBytes} B`,
          r.addedUs,
          fmt(r.wireGbps),
          fmt(r.publishedWireGbps),
          errorPct(r.wireGbps, r.publishedWireGbps),
        ]),
      ),
    );
  }
  lines.push('');
  lines.push(paint('bold', 'Fig 5, echo latency at 95% of maximum throughput (NIC and link only):'));
  if (result.latencyAtMax.length === 0) {
    lines.push(`  not measured: it compares 6 and 12 cores; ${result.nicName} has ${mostCores(result)}.`);
  } else
    lines.push(
      table(
        ['packet', 'cores', 'avg µs', 'p99 µs', 'paper avg µs', 'paper p99 µs'],
        result.latencyAtMax.map((r) => [
          `${r.packetBytes} B`,
          r.cores,
          fmt(r.avgUs, 1),
          fmt(r.p99Us, 1),
          fmt(r.publishedAvgUs, 1),
          fmt(r.publishedP99Us, 1),
        ]),
      ),
    );
  lines.push(
    '  The paper measured client to client through its testbed; the model has the NIC and link only,',
    '  so absolute values are not comparable (docs/calibration.md, Fig 5).',
  );
  if (result.sixToTwelve) {
    const s = result.sixToTwelve;
    lines.push(
      `  6 → 12 cores: avg ${s.avgPercent >= 0 ? '+' : ''}${s.avgPercent.toFixed(1)}%, p99 ${s.p99Percent >= 0 ? '+' : ''}${s.p99Percent.toFixed(1)}% ` +
        `(paper text: +${s.textAvgPercent}%, +${s.textP99Percent}%; the model's traffic manager has no per-core cost).`,
    );
  }
  const hostWithPaper = result.hostPath.filter((r) => r.published !== null);
  if (hostWithPaper.length > 0) {
    const worst = Math.max(...hostWithPaper.map((r) => Math.abs(r.value / (r.published as number) - 1)));
    lines.push('');
    lines.push(
      `Figs 6–10 host path: ${hostWithPaper.length} published points, worst error ${(worst * 100).toFixed(1)}% (model interpolates them).`,
    );
  }
  return lines.join('\n');
}

/** The NIC's core count, as the forwarding sweep (1…all cores) reached it. */
function mostCores(result: CharacterizeResult): number {
  return Math.max(0, ...result.forwarding.map((row) => row.cores));
}
