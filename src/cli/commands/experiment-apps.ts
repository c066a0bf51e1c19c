/**
 * `ipipe experiment rkv|dt|rta --platform sim --nic <profile>`: the applications' offload
 * experiment (iPipe §5: host cores used, host-only vs offloaded, at 64/256/512/1024-byte packets;
 * per-core throughput; average and p99 latency). The method is in src/experiments/app-offload.ts
 * and docs/apps/experiments.md; this file parses, runs, prints and writes JSON, CSV and SVG.
 */

import { readFileSync } from 'node:fs';
import { type Command, Option } from '@commander-js/extra-typings';
import { IpipeError, UsageError } from '../../errors.ts';
import {
  type AppOffloadResult,
  type AppOffloadRow,
  OFFLOAD_PLACEMENTS,
  type OffloadApp,
  type OffloadAppName,
  type OffloadPlacement,
  PAPER_PACKET_SIZES,
  runAppOffload,
} from '../../experiments/app-offload.ts';
import { appFor } from '../../experiments/app-offload-apps.ts';
import { runLiveAppOffload } from '../../experiments/app-offload-live.ts';
import { timingFor } from '../../platform/sim/hardware-timing.ts';
import { freshSeed } from '../../random.ts';
import { barChart, writeExperimentOutputs } from '../../report/index.ts';
import {
  distinct,
  givenFlags,
  parseChoices,
  parseDuration,
  parseFraction,
  parseIntegerIn,
  parseSeed,
  type ResolvedNic,
  refuseFlags,
  resolveNic,
} from '../options.ts';
import { NO_DATA, paint, progressBar, table } from '../output.ts';
import { type PlannedChart, renderCharts, reportThenWrite } from '../report-files.ts';

/** The parsed options of `ipipe experiment rkv|dt|rta`. */
export interface AppExperimentOptions {
  readonly app: OffloadAppName;
  /** The simulated NIC (`--platform sim`); absent for `--platform live`. */
  readonly target: ResolvedNic | undefined;
  readonly platform?: 'sim' | 'live';
  readonly packetSizes: readonly number[];
  readonly placements: readonly OffloadPlacement[];
  readonly seed: number;
  readonly durationNs: number;
  readonly warmupNs: number;
  readonly probeNs: number;
  readonly loadFraction: number;
  /** Undefined: the app's own default. */
  readonly outstanding: number | undefined;
  readonly hostPacketIo: boolean;
  /** The app's own configuration (parsed JSON), or undefined for the experiment's defaults. */
  readonly appConfig?: unknown;
  readonly outDir: string;
  readonly json: boolean;
}

/** Runs one app's experiment, prints the table or the JSON document, then writes its files. */
export async function appExperimentCommand(options: AppExperimentOptions): Promise<AppOffloadResult> {
  const result = await simulateAppExperiment(options);
  const charts = await appCharts(result, options);
  await reportThenWrite({
    json: options.json,
    document: result,
    text: () => renderAppExperiment(result),
    notes: charts.notes,
    outDir: options.outDir,
    write: () => writeAppOutputs(result, charts.svgs, options),
  });
  return result;
}

/**
 * The command without printing: runs the experiment and writes `<app>-<nic>.json`, `.csv` and
 * the SVG charts into `outDir`; returns the document and the paths written.
 */
export async function runAppExperiment(
  options: AppExperimentOptions,
): Promise<{ readonly result: AppOffloadResult; readonly written: readonly string[] }> {
  const result = await simulateAppExperiment(options);
  const charts = await appCharts(result, options);
  return { result, written: await writeAppOutputs(result, charts.svgs, options) };
}

async function simulateAppExperiment(options: AppExperimentOptions): Promise<AppOffloadResult> {
  let app: OffloadApp;
  try {
    app = appFor(options.app, options.appConfig);
  } catch (error) {
    // A bad app configuration is the user's input: a usage error (exit 2), naming the field.
    if (
      error instanceof IpipeError &&
      options.appConfig !== undefined &&
      error.code !== 'IPIPE_ERR_CONFIG_INVALID'
    ) {
      throw new UsageError(`--app-config: ${error.message}`);
    }
    throw error;
  }
  let result: AppOffloadResult;
  if (options.platform === 'live') {
    if (options.app === 'rkv') {
      throw new UsageError(
        'experiment rkv runs on the simulator; live, start `ipipe cluster up rkv` and run the same workload with ' +
          '`ipipe load --app rkv` (linearizability-checked), or drive it with redis-benchmark',
      );
    }
    const bar = progressBar(`live ${options.app}`);
    process.stderr.write(`ipipe: experiment ${options.app} on live node processes, seed ${options.seed}\n`);
    result = await runLiveAppOffload({
      app: options.app,
      packetSizes: options.packetSizes,
      placements: options.placements,
      seed: options.seed,
      durationMs: options.durationNs / 1e6,
      ...(options.outstanding === undefined ? {} : { outstanding: options.outstanding }),
      onPoint: (done, total) => bar.update(done / total),
    });
    bar.done();
  } else {
    const target = options.target;
    if (target === undefined) throw new UsageError('--nic is required on the simulator: which NIC to model');
    const bar = progressBar(`simulating ${options.app}`);
    process.stderr.write(`ipipe: experiment ${options.app} on ${target.nic.name}, seed ${options.seed}\n`);
    result = runAppOffload({
      app,
      timing: timingFor(target.nic, target.host),
      nic: target.nic.name,
      host: target.host.name,
      packetSizes: options.packetSizes,
      placements: options.placements,
      seed: options.seed,
      durationNs: options.durationNs,
      warmupNs: options.warmupNs,
      probeNs: options.probeNs,
      loadFraction: options.loadFraction,
      ...(options.outstanding === undefined ? {} : { outstanding: options.outstanding }),
      hostPacketIo: options.hostPacketIo,
      onPoint: (done, total) => bar.update(done / total),
    });
    bar.done();
  }
  return result;
}

/** The SVG charts of a result (rows that measured nothing left out, see report-files.ts). */
async function appCharts(
  result: AppOffloadResult,
  options: AppExperimentOptions,
): Promise<{ readonly svgs: Record<string, string>; readonly notes: readonly string[] }> {
  const rows = result.results.map((row) => ({ ...row }));
  const subtitle = `${result.nic}, ${Math.round(result.method.loadFraction * 100)}% of the smaller capacity, seed ${result.seed}`;
  const charts: PlannedChart<(typeof rows)[number]>[] = [];
  const roles = [...new Set(rows.map((r) => r.role))];
  const bars = (
    name: string,
    mine: typeof rows,
    title: string,
    y: { field: 'hostCores' | 'perCoreMops' | 'p99LatencyUs'; title: string; unit: string },
  ) =>
    charts.push({
      name,
      rows: mine,
      field: y.field,
      render: (drawable, note) =>
        barChart({
          title,
          subtitle: `${subtitle}${note}`,
          x: { field: 'packetSize', title: 'Packet size', unit: 'B' },
          y,
          group: 'placement',
          groupTitle: 'Placement',
          rows: drawable,
        }),
    });
  for (const role of roles) {
    const mine = rows.filter((r) => r.role === role);
    const suffix = roles.length > 1 ? `-${role}` : '';
    const of = roles.length > 1 ? ` (${role})` : '';
    bars(`host-cores${suffix}`, mine, `${options.app.toUpperCase()}: host cores used${of}`, {
      field: 'hostCores',
      title: 'Host cores busy',
      unit: 'cores',
    });
    // No per-core figure where no host core was busy (an offloaded follower, or a point too short).
    bars(
      `per-core${suffix}`,
      mine.filter((r) => r.perCoreMops !== null),
      `${options.app.toUpperCase()}: throughput per host core${of}`,
      {
        field: 'perCoreMops',
        title: 'Per-core throughput',
        unit: 'Mops',
      },
    );
  }
  bars(
    'p99-latency',
    rows.filter((r) => r.role === roles[0]),
    `${options.app.toUpperCase()}: p99 latency at the offered load`,
    { field: 'p99LatencyUs', title: 'p99 latency', unit: 'µs' },
  );
  const rendered = await renderCharts(charts, 'measured nothing', 'use a longer --duration');
  const silent = rows.filter((r) => r.answered === 0).length;
  if (silent === 0) return rendered;
  return {
    svgs: rendered.svgs,
    notes: [
      ...rendered.notes,
      `${silent} of ${rows.length} point(s) answered no request in the measured ${options.durationNs / 1e6} ms: ` +
        `their latencies read "${NO_DATA}" (in the JSON null, in the CSV empty), their throughput and cores are 0 ` +
        'and they have no per-core throughput (no chart where none has); use a longer --duration',
    ],
  };
}

async function writeAppOutputs(
  result: AppOffloadResult,
  svgs: Record<string, string>,
  options: AppExperimentOptions,
): Promise<readonly string[]> {
  const written = await writeExperimentOutputs(
    options.outDir,
    `${options.app}-${options.target?.nic.name ?? 'live'}`,
    { json: result, csvRows: result.results.map((row) => ({ ...row })), charts: svgs },
  );
  return written.all;
}

/** The result as a text table (one line per role, packet size and placement). */
export function renderAppExperiment(result: AppOffloadResult): string {
  const m = result.method;
  const lines = [
    paint('bold', `${result.app.toUpperCase()} offload experiment (simulated) — ${result.nic}`),
    `offered load ${Math.round(m.loadFraction * 100)}% of the smaller closed-loop capacity · ` +
      `${m.durationNs / 1e6} ms measured after ${m.warmupNs / 1e6} ms warm-up · ` +
      `${m.nicCores} NIC cores, ${m.hostCoresAvailable} host cores · ` +
      `host-only pays DPDK packet I/O: ${m.hostPacketIo ? 'yes' : 'no'} · seed ${result.seed}`,
    '',
    table(
      [
        'role',
        'packet B',
        'placement',
        'host cores',
        'NIC cores',
        'offered kops/s',
        'kops/s',
        'kops/s per host core',
        'avg µs',
        'p99 µs',
        'migrations',
      ],
      result.results.map((r: AppOffloadRow) => [
        r.role,
        r.packetSize,
        r.placement,
        r.hostCores,
        r.nicCores,
        kilo(r.offeredMops),
        kilo(r.throughputMops),
        r.perCoreMops === null ? '—' : kilo(r.perCoreMops),
        // No request answered: no latency to show.
        r.avgLatencyUs ?? NO_DATA,
        r.p99LatencyUs ?? NO_DATA,
        r.migrations,
      ]),
    ),
  ];
  return lines.join('\n');
}

/** Mops as thousands of operations per second, rounded to what the table shows. */
function kilo(mops: number): number {
  return Math.round(mops * 10_000) / 10;
}

function parsePacketSizes(value: string): number[] {
  const one = parseIntegerIn('--packet-sizes', 64, 9000);
  return distinct(
    '--packet-sizes',
    value.split(',').map((part) => one(part.trim())),
  );
}

function readAppConfig(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--app-config ${path}: cannot read it (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `--app-config ${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/**
 * Adds `rkv`, `dt` and `rta` under `ipipe experiment` (the same options and output conventions
 * as `experiment scheduler`).
 */
export function addAppExperimentCommands(experiment: Command): void {
  const descriptions: Record<OffloadAppName, string> = {
    rkv: 'replicated key-value store (Multi-Paxos + LSM): host cores used, host-only vs offloaded',
    dt: 'distributed transactions (OCC + 2PC): host cores used, host-only vs offloaded',
    rta: 'real-time analytics (filter → counter → ranker): host cores used, host-only vs offloaded',
  };
  for (const app of ['rkv', 'dt', 'rta'] as const) {
    experiment
      .command(app)
      .description(descriptions[app])
      .option(
        '--nic <profile>',
        'sim: a built-in NIC profile (see `ipipe profiles`) or a path to a JSON profile',
      )
      .option(
        '--host <profile>',
        'sim: the server the NIC sits in, a built-in host profile or a path to a JSON one (default: the one the NIC profile names)',
      )
      .addOption(
        new Option(
          '--platform <platform>',
          'sim: the modelled NIC; live (rta, dt): node processes on this machine, --duration of wall time per point',
        )
          .choices(['sim', 'live'] as const)
          .default('sim' as const),
      )
      .addOption(
        new Option('--packet-sizes <list>', 'request frame sizes in bytes')
          .argParser(parsePacketSizes)
          .default([...PAPER_PACKET_SIZES], PAPER_PACKET_SIZES.join(',')),
      )
      .addOption(
        new Option('--placements <list>', 'which deployments to run')
          .argParser(parseChoices('--placements', OFFLOAD_PLACEMENTS))
          .default([...OFFLOAD_PLACEMENTS] as OffloadPlacement[], OFFLOAD_PLACEMENTS.join(',')),
      )
      .option(
        '--duration <time>',
        'time measured per point: simulated, after the warm-up (default 20ms); live, wall time (default 3s)',
        parseDuration('--duration'),
      )
      .addOption(
        new Option('--warmup <time>', 'simulated warm-up per run (not measured)')
          .argParser(parseDuration('--warmup'))
          .default(5_000_000, '5ms'),
      )
      .addOption(
        new Option(
          '--probe-duration <time>',
          'simulated time of each closed-loop capacity probe, after the warm-up',
        )
          .argParser(parseDuration('--probe-duration'))
          .default(10_000_000, '10ms'),
      )
      .option(
        '--load <fraction>',
        'offered load as a fraction of the smaller of the two capacities',
        (v) => parseFraction('--load', v),
        0.9,
      )
      .option(
        '--outstanding <n>',
        "operations in flight during the capacity probe (default: the app's, 256 for RTA, 32 for DT, 128 for RKV)",
        parseIntegerIn('--outstanding', 1, 4096),
      )
      .option('--no-host-packet-io', 'do not charge host cores DPDK packet I/O in the host-only baseline')
      .option('--app-config <file>', "JSON file with the app's configuration (merged onto the experiment's)")
      .option('--seed <n>', 'seed of every random choice (printed; same seed, same run)', parseSeed)
      .option('--out <dir>', 'where to write JSON, CSV and SVG charts', 'out')
      .option('--json', 'print one JSON document instead of text')
      .action(async (options, command) => {
        if (options.platform === 'live') {
          // These shape the simulated run only; live, they would be silently dropped.
          refuseFlags(
            givenFlags(command),
            [
              '--nic',
              '--host',
              '--warmup',
              '--probe-duration',
              '--load',
              '--no-host-packet-io',
              '--app-config',
            ],
            '--platform live',
            'they set up the simulated run; live points measure the apps on this machine (--packet-sizes, --placements, --duration, --outstanding, --seed)',
          );
        }
        if (options.load <= 0)
          throw new UsageError('--load must be above 0 (a fraction of capacity, e.g. 0.9)');
        await appExperimentCommand({
          app,
          target: options.nic === undefined ? undefined : resolveNic(options.nic, options.host),
          platform: options.platform,
          packetSizes: options.packetSizes,
          placements: options.placements,
          seed: options.seed ?? freshSeed(),
          durationNs: options.duration ?? (options.platform === 'live' ? 3_000_000_000 : 20_000_000),
          warmupNs: options.warmup,
          probeNs: options.probeDuration,
          loadFraction: options.load,
          outstanding: options.outstanding,
          hostPacketIo: options.hostPacketIo,
          ...(options.appConfig === undefined ? {} : { appConfig: readAppConfig(options.appConfig) }),
          outDir: options.out,
          json: options.json === true,
        });
      });
  }
}
