/**
 * `ipipe walkthrough scheduler`: the hybrid scheduler's scripted walkthrough (and, until the
 * simulated platform lands, the showcase `npm start` runs). Prints the decisions with their
 * reasons and a per-phase table of where each actor ran and what its requests saw.
 */

import {
  DEFAULT_WALKTHROUGH,
  runSchedulerWalkthrough,
  type WalkthroughResult,
} from '../../experiments/scheduler-walkthrough.ts';
import { paint, progressBar, table, writeJson, writeOut } from '../output.ts';

export interface WalkthroughOptions {
  readonly seed: number;
  readonly json: boolean;
}

export function walkthroughCommand(options: WalkthroughOptions): WalkthroughResult {
  const bar = progressBar('simulating');
  const result = runSchedulerWalkthrough(DEFAULT_WALKTHROUGH, options.seed, (f) => bar.update(f));
  bar.done();
  if (options.json) writeJson(result);
  else writeOut(renderWalkthrough(result));
  return result;
}

export function renderWalkthrough(result: WalkthroughResult): string {
  const s = result.settings;
  const lines: string[] = [];
  lines.push(paint('bold', `iPipe on a simulated SmartNIC — ${result.nic}`));
  lines.push(`host: ${result.host}`);
  lines.push(
    `seed ${result.seed} · ${result.simulatedMs} ms simulated · ${result.nicCores} NIC cores, ${result.hostCores} host cores · ` +
      `Mean_thresh ${(s.meanThreshNs / 1000).toFixed(1)} µs, Tail_thresh ${(s.tailThreshNs / 1000).toFixed(1)} µs, α ${s.alpha}, Q_thresh ${s.queueThresh}`,
  );
  lines.push('');
  lines.push(paint('bold', 'Actors (real handlers, state in DMOs; each declares its Table 3 work):'));
  for (const actor of result.actors) lines.push(`  ${actor.name.padEnd(16)} ${actor.taskKind}`);
  lines.push('');
  lines.push(paint('bold', 'What the scheduler decided, in simulated time:'));
  if (result.decisions.length === 0) lines.push('  (nothing)');
  for (const d of result.decisions) {
    const label = paint(
      d.kind === 'migrate' ? 'yellow' : d.kind === 'scale' ? 'cyan' : 'magenta',
      d.kind.padEnd(9),
    );
    lines.push(`  ${d.atMs.toFixed(2).padStart(7)} ms  ${label} ${d.why}`);
  }
  if (result.migrations.length > 0) {
    lines.push('');
    lines.push(
      paint(
        'bold',
        'Migrations, phase by phase (prepare → ready → gone: DMOs across PCIe → clean: buffered requests forwarded):',
      ),
    );
    lines.push(
      table(
        ['  actor', 'at ms', 'from → to', 'state KiB', 'buffered', 'ready µs', 'gone µs', 'clean µs'],
        result.migrations.map((m) => [
          `  ${m.actor}`,
          Number(m.atMs.toFixed(2)),
          `${m.from} → ${m.to}`,
          Number((m.stateBytes / 1024).toFixed(1)),
          m.bufferedRequests,
          Number(m.phasesUs.ready.toFixed(1)),
          Number(m.phasesUs.gone.toFixed(1)),
          Number(m.phasesUs.clean.toFixed(1)),
        ]),
      ),
    );
  }
  for (const phase of result.phases) {
    lines.push('');
    lines.push(paint('bold', `Phase "${phase.name}" (${phase.startMs}–${phase.endMs} ms): `) + phase.story);
    lines.push(
      `  NIC cores busy ${phase.nicCoresBusy.toFixed(2)} of ${result.nicCores} (at the end ${phase.fcfsCoresAtEnd} FCFS + ` +
        `${phase.drrCoresAtEnd} DRR) · host cores busy ${phase.hostCoresBusy.toFixed(2)}`,
    );
    lines.push(
      table(
        ['  actor', 'requests', 'p50 µs', 'p99 µs', 'where at end'],
        phase.actors.map((a) => [
          `  ${a.name}`,
          a.requests,
          a.p50Us,
          a.p99Us,
          a.modeAtEnd === 'host' ? 'host' : `NIC (${a.modeAtEnd})`,
        ]),
      ),
    );
  }
  lines.push('');
  const lost = result.requestsTotal - result.requestsAnswered - result.requestsRefused;
  lines.push(
    `${result.requestsAnswered.toLocaleString('en-US')} of ${result.requestsTotal.toLocaleString('en-US')} requests answered` +
      (result.requestsRefused > 0 ? `, ${result.requestsRefused} refused (queue full)` : '') +
      (lost === 0 ? ': none lost across mode changes and migrations.' : paint('red', `: ${lost} LOST.`)),
  );
  return lines.join('\n');
}
