/**
 * `ipipe showcase` (what `npm start` runs): iPipe end to end. First simulated — the scheduler
 * walkthrough on a modelled LiquidIO CN2350, every decision explained; then the paper's three
 * applications (RKV, DT, RTA) deployed host-only and offloaded on the same model, with the host
 * cores each keeps busy; then live — the task actors on real worker threads behind UDP, with a
 * migration to the host and back under load, measured on this machine; then what the runtime
 * costs a request — the echo actor through a live node (both ingress paths) against a bare
 * node:dgram echo server, same client; last, RKV live — three replica processes under the paper's workload over RESP, the leader killed mid-run, the whole
 * client history checked for linearizability.
 */

import { type AppsShowcaseResult, runAppsShowcase } from '../../experiments/apps-showcase.ts';
import { type EchoCostResult, type EchoServerKind, runEchoCost } from '../../experiments/echo-cost.ts';
import { type LiveShowcaseResult, runLiveShowcase } from '../../experiments/live-showcase.ts';
import { type RkvLiveShowcaseResult, runRkvLiveShowcase } from '../../experiments/rkv-live-showcase.ts';
import { DEFAULT_WALKTHROUGH, runSchedulerWalkthrough } from '../../experiments/scheduler-walkthrough.ts';
import { NO_DATA, paint, progressBar, table, writeJson, writeOut } from '../output.ts';
import { renderWalkthrough } from './walkthrough.ts';

export interface ShowcaseOptions {
  readonly seed: number;
  readonly json: boolean;
  /** Skip the live half (no threads, no sockets), e.g. where UDP on loopback is not allowed. */
  readonly simulatedOnly?: boolean;
}

export async function showcaseCommand(options: ShowcaseOptions): Promise<boolean> {
  const bar = progressBar('simulating');
  const simulated = runSchedulerWalkthrough(DEFAULT_WALKTHROUGH, options.seed, (f) => bar.update(f));
  bar.done();
  if (!options.json) {
    writeOut(paint('bold', 'Part 1 — simulated: what would iPipe do on a LiquidIO CN2350?'));
    writeOut(renderWalkthrough(simulated));
  }
  const appsBar = progressBar('applications');
  const apps = runAppsShowcase({ seed: options.seed, onApp: (done, total) => appsBar.update(done / total) });
  appsBar.done();
  if (!options.json) writeOut(`\n${renderApps(apps)}`);
  const live = options.simulatedOnly
    ? null
    : await timedBar('live node', 2_500, () => runLiveShowcase({ seed: options.seed }));
  if (!options.json && live) writeOut(`\n${renderLive(live)}`);
  const echoCost = options.simulatedOnly
    ? null
    : await timedBar('echo: ipipe vs bare node:dgram', 6_000, () => runEchoCost({ seed: options.seed }));
  if (!options.json && echoCost) writeOut(`\n${renderEchoCost(echoCost)}`);
  const rkv = options.simulatedOnly
    ? null
    : await timedBar('live RKV actors', 20_000, () => runRkvLiveShowcase({ seed: options.seed }));
  if (options.json) writeJson({ schemaVersion: 1, seed: options.seed, simulated, apps, live, echoCost, rkv });
  else if (rkv) writeOut(`\n${renderRkvLive(rkv)}`);
  const liveWhole = live === null || (live.answered === live.sent && live.errorReplies === 0);
  return liveWhole && (rkv === null || (rkv.load.check.verdict === 'linearizable' && rkv.scan.inOrder));
}

/** Runs a live part under a progress bar that fills over its usual duration. */
async function timedBar<T>(label: string, usualMs: number, run: () => Promise<T>): Promise<T> {
  const bar = progressBar(label);
  const started = performance.now();
  const ticker = setInterval(() => bar.update(Math.min(1, (performance.now() - started) / usualMs)), 100);
  try {
    return await run();
  } finally {
    clearInterval(ticker);
    bar.done();
  }
}

/** A row of small bars, one per timeline bin, scaled to the busiest bin. */
function sparkline(values: readonly number[]): string {
  const bars = ' ▁▂▃▄▅▆▇█';
  const top = Math.max(1, ...values);
  return values.map((v) => bars[v === 0 ? 0 : Math.max(1, Math.round((v / top) * 8))]).join('');
}

export function renderRkvLive(result: RkvLiveShowcaseResult): string {
  const { load } = result;
  const lines: string[] = [];
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  lines.push(
    paint(
      'bold',
      "Part 5 — live RKV on ipipe actors: three node processes, Redis clients, the leader's node killed",
    ),
  );
  lines.push(
    `The simulator's RKV actors, unchanged, on live nodes (one replica each; Multi-Paxos between nodes as actor messages); ` +
      `${load.clients} RESP clients; the paper's workload: ${Math.round(load.getFraction * 100)}% GET` +
      (load.deleteFraction > 0
        ? `, ${Math.round((1 - load.getFraction - load.deleteFraction) * 100)}% SET, ${Math.round(load.deleteFraction * 100)}% DEL, `
        : ', ') +
      `Zipf ${load.zipfExponent} over ${n(load.keys)} 16-byte keys, ${load.valueBytes} B values; election timeout ` +
      `${result.electionTimeoutMs.min}–${result.electionTimeoutMs.max} ms; seed ${result.seed}`,
  );
  lines.push('');
  lines.push(
    table(
      ['  node', 'pid', 'on its NIC cores', 'on its host core'],
      result.replicas.map((replica) => [
        `  ${replica.replicaId}${replica.replicaId === result.firstLeader ? ' (leader)' : ''}`,
        replica.pid,
        replica.actors
          .filter((actor) => actor.domain === 'nic')
          .map((actor) => actor.name)
          .join(' '),
        replica.actors
          .filter((actor) => actor.domain === 'host')
          .map((actor) => actor.name)
          .join(' '),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    `  ${(result.killedAtMs / 1000).toFixed(1)} s  SIGKILL node ${result.firstLeader} (the leader); ` +
      `a put committed through replica ${result.newLeader} ${n(result.electedAfterMs)} ms later; ` +
      `node ${result.firstLeader} ran again, set up from its files (durable log, SSTables), ${n(result.rejoinedAfterMs)} ms after the kill`,
  );
  const perSecond = load.timeline.answered.map((count) => (count * 1000) / load.timeline.binMs);
  lines.push(
    `  answers per ${load.timeline.binMs} ms: ${sparkline(load.timeline.answered)}  ` +
      `(peak ${n(Math.max(0, ...perSecond))}/s; the gap is the election)`,
  );
  lines.push('');
  lines.push(
    table(
      ['  op', 'answered', 'p50 µs', 'p99 µs', 'max µs'],
      (
        [
          ['GET', load.get],
          ['SET', load.set],
          ...(load.deleteFraction > 0 ? ([['DEL', load.del]] as const) : []),
        ] as const
      ).map(([name, s]) => [`  ${name}`, s.count, n(s.p50Us), n(s.p99Us), n(s.maxUs)]),
    ),
  );
  lines.push('');
  const reasons = Object.entries(load.unknownByReason)
    .map(([reason, count]) => `${count} ${reason}`)
    .join(', ');
  lines.push(
    load.unknown === 0
      ? `  ${n(load.issued)} operations, every one answered: the front's clients found the new leader through refusals and retries`
      : `  ${n(load.issued)} operations, ${n(load.answered)} answered, ${load.unknown} cut off by the kill or the election` +
          `${reasons === '' ? '' : ` (${reasons})`} — their outcome is unknown, and the checker allows either`,
  );
  const ok = load.check.verdict === 'linearizable';
  lines.push(
    paint(
      ok ? 'green' : 'red',
      ok
        ? `History linearizable across the fail-over (${n(load.check.steps)} search steps over ${n(load.keysTouched)} keys): no acknowledged SET or DEL lost, no stale GET${load.del.count > 0 ? `, every DEL's answer right (${n(load.deleteHits)} of ${n(load.del.count)} found their key)` : ''}.`
        : `History ${load.check.verdict}: ${load.check.detail ?? ''}`,
    ),
  );
  const { scan } = result;
  const scanOk = scan.inOrder && scan.keys === scan.dbsize;
  lines.push(
    paint(
      scanOk ? 'green' : 'red',
      `Then SCAN through the wire client: ${n(scan.keys)} keys in ${n(scan.pages)} page${scan.pages === 1 ? '' : 's'} of up to ${scan.pageLimit}, ` +
        `${scan.inOrder ? 'each once, in byte order' : 'NOT in strict byte order'}; DBSIZE says ${n(scan.dbsize)}` +
        `${scan.keys === scan.dbsize ? '' : ' — they differ'}.`,
    ),
  );
  return lines.join('\n');
}

export function renderApps(result: AppsShowcaseResult): string {
  const lines: string[] = [];
  lines.push(
    paint(
      'bold',
      `Part 2 — the paper's applications on the simulated ${result.nic}: what does offloading save?`,
    ),
  );
  lines.push(
    `RKV (Multi-Paxos + LSM, 3 replicas), DT (OCC + 2PC, coordinator + 2 participants), RTA (filter → counter → ranker); ` +
      `${result.packetSize} B packets; both deployments offered the same load (90% of the smaller capacity); seed ${result.seed}`,
  );
  lines.push('');
  const cores = (n: number) => n.toFixed(2);
  lines.push(
    table(
      [
        '  app',
        'role',
        'offered Mops',
        'host cores: host-only',
        'offloaded',
        'saved',
        'p99 µs: host-only',
        'offloaded',
        'moved',
      ],
      result.rows.map((r) => [
        `  ${r.app}`,
        r.role,
        r.offeredMops.toFixed(3),
        cores(r.hostOnly.hostCores),
        cores(r.offloaded.hostCores),
        cores(r.hostOnly.hostCores - r.offloaded.hostCores),
        r.hostOnly.p99LatencyUs?.toFixed(0) ?? NO_DATA,
        r.offloaded.p99LatencyUs?.toFixed(0) ?? NO_DATA,
        r.offloaded.migrations,
      ]),
    ),
  );
  lines.push('');
  lines.push(
    '  host cores = busy host core-seconds per second of the node in that role; "moved" = migrations the hybrid',
  );
  lines.push(
    '  scheduler made while measuring. Every packet size and NIC: ipipe experiment rkv|dt|rta --nic <profile>.',
  );
  // Where a row's actors moved, say where they ended: "moved 4" with few host cores otherwise
  // reads as "the work stayed on the NIC", when it can mean every actor went to the host and the
  // NIC kept only the packet I/O (RTA at this load: docs/apps/experiments.md, "What the offloaded
  // row shows").
  for (const row of result.rows) {
    if (row.offloaded.migrations === 0) continue;
    const onHost = row.offloaded.actorsOnHost
      .split(' ')
      .filter((name) => name !== '')
      .map((name) => (name.startsWith(`${row.app}-`) ? name.slice(row.app.length + 1) : name));
    lines.push(
      `  ${row.app} ${row.role} offloaded — on the host at the end: ${onHost.length === 0 ? 'none' : onHost.join(', ')}`,
    );
  }
  return lines.join('\n');
}

const ECHO_SERVER_LABELS: Readonly<Record<EchoServerKind, string>> = {
  raw: 'bare node:dgram echo (no protocol)',
  node: 'ipipe node, default ingress',
  'node-core': 'ipipe node, --ingress core',
};

export function renderEchoCost(result: EchoCostResult): string {
  const lines: string[] = [];
  lines.push(
    paint(
      'bold',
      'Part 4 — what the runtime costs a request: echo through ipipe vs a bare node:dgram server',
    ),
  );
  lines.push(
    `The echo actor on a live node (1 NIC core, 1 host core): UDP in → wire checks, dedup → scheduler → NIC core → ` +
      `actor → reply sealed → UDP out. Same client process, ${result.outstanding} requests outstanding, ` +
      `${result.messageBytes} B messages, ${result.rounds} rounds of ${result.durationMs} ms per server, servers in turn.`,
  );
  lines.push('');
  lines.push(
    table(
      ['  server', 'req/s', 'p50 µs', 'p99 µs', '÷ bare'],
      result.servers.map((s) => [
        `  ${ECHO_SERVER_LABELS[s.kind]}`,
        Math.round(s.throughputPerSec),
        s.p50Us.toFixed(0),
        s.p99Us.toFixed(0),
        s.kind === 'raw' ? '1' : `${s.ratioToRaw.toFixed(2)}×`,
      ]),
    ),
  );
  lines.push('');
  lines.push(
    '  default ingress: the controller thread owns the socket and hands each request to a NIC core over a ring;',
  );
  lines.push(
    '  --ingress core: NIC core 0 owns the socket and runs NIC actors inline, as a SmartNIC core polls its port.',
  );
  lines.push(
    '  "÷ bare" is the median of per-round ratios. Longer, with CPU per datagram: npm run bench -- udp.',
  );
  const timeouts = result.servers.filter((s) => s.timeouts > 0);
  if (timeouts.length > 0) {
    lines.push(
      `  Requests that timed out (lost in the kernel's socket buffers under this load): ` +
        timeouts.map((s) => `${ECHO_SERVER_LABELS[s.kind]} ${s.timeouts}`).join(', '),
    );
  }
  return lines.join('\n');
}

export function renderLive(result: LiveShowcaseResult): string {
  const lines: string[] = [];
  lines.push(paint('bold', 'Part 3 — live: the task actors on this machine, real threads and sockets'));
  lines.push(
    `a live node: ${result.nicCores} NIC cores and ${result.hostCores} host core as worker threads, ` +
      'shared-memory rings between the domains, UDP clients; ' +
      `${result.durationMs} ms of closed-loop load; seed ${result.seed}`,
  );
  lines.push('');
  lines.push(
    table(
      ['  actor', 'requests', 'req/s', 'p50 µs', 'p99 µs', 'ran on NIC', 'ran on host'],
      result.actors.map((a) => [
        `  ${a.name}`,
        a.requests,
        Math.round(a.throughputPerSec),
        a.p50Us.toFixed(0),
        a.p99Us.toFixed(0),
        a.executedOnNic,
        a.executedOnHost,
      ]),
    ),
  );
  if (result.migrations.length > 0) {
    lines.push('');
    lines.push(paint('bold', 'Live migrations (prepare → ready → gone: the DMO region moves → clean):'));
    lines.push(
      table(
        [
          '  actor',
          'from → to',
          'trigger',
          'state KiB',
          'buffered',
          'prepare µs',
          'ready µs',
          'gone µs',
          'clean µs',
        ],
        result.migrations.map((m) => [
          `  ${m.name}`,
          `${m.from} → ${m.to}`,
          m.trigger,
          (m.stateBytes / 1024).toFixed(0),
          m.bufferedRequests,
          (m.phasesMs.prepare * 1000).toFixed(0),
          (m.phasesMs.ready * 1000).toFixed(0),
          (m.phasesMs.gone * 1000).toFixed(0),
          (m.phasesMs.clean * 1000).toFixed(0),
        ]),
      ),
    );
  }
  const scheduler = result.decisions.filter((d) => d.kind !== 'scale');
  if (scheduler.length > 0) {
    lines.push('');
    lines.push(paint('bold', "The live scheduler's own decisions:"));
    for (const d of scheduler.slice(0, 8)) lines.push(`  ${d.kind.padEnd(9)} ${d.why}`);
  }
  lines.push('');
  const whole = result.answered === result.sent && result.errorReplies === 0;
  lines.push(
    paint(
      whole ? 'green' : 'red',
      `${result.answered.toLocaleString('en-US')} of ${result.sent.toLocaleString('en-US')} requests answered` +
        (whole ? ', none lost or failed across the migrations.' : `; ${result.errorReplies} failed.`),
    ),
  );
  return lines.join('\n');
}
