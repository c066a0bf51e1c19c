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
  lines.push(
    paint('bold', `iPipe hybrid scheduler walkthrough — ${result.nic}, ${result.hostCores} host cores`),
  );
  lines.push(
    `seed ${result.seed} · ${result.simulatedMs} ms simulated · Mean_thresh ${s.meanThreshNs / 1000} µs, ` +
      `Tail_thresh ${s.tailThreshNs / 1000} µs, α ${s.alpha}, Q_thresh ${s.queueThresh}`,
  );
  lines.push('');
  lines.push(paint('bold', "Actors (costs from the paper's Table 3 task kinds, drawn per request):"));
  for (const actor of DEFAULT_WALKTHROUGH.actors) lines.push(`  ${actor.name.padEnd(16)} ${actor.taskKind}`);
  lines.push('');
  lines.push(paint('bold', 'Decisions, in simulated time:'));
  if (result.decisions.length === 0) lines.push('  (none)');
  for (const d of result.decisions) {
    const label = paint(
      d.kind === 'migrate' ? 'yellow' : d.kind === 'scale' ? 'cyan' : 'magenta',
      d.kind.padEnd(9),
    );
    lines.push(`  ${d.atMs.toFixed(2).padStart(7)} ms  ${label} ${d.why}`);
  }
  for (const phase of result.phases) {
    lines.push('');
    lines.push(paint('bold', `Phase "${phase.name}" (${phase.startMs}–${phase.endMs} ms): `) + phase.story);
    lines.push(
      `  at its end: ${phase.fcfsCoresAtEnd} FCFS + ${phase.drrCoresAtEnd} DRR cores, FCFS latency ` +
        `µ ${phase.fcfsMeanUsAtEnd.toFixed(1)} µs, µ+3σ ${phase.fcfsTailUsAtEnd.toFixed(1)} µs`,
    );
    lines.push(
      table(
        ['  actor', 'requests', 'on NIC', 'on host', 'p50 µs', 'p99 µs', 'mode at end'],
        phase.actors.map((a) => [
          `  ${a.name}`,
          a.requests,
          a.ranOnNic,
          a.ranOnHost,
          a.p50Us,
          a.p99Us,
          a.modeAtEnd,
        ]),
      ),
    );
  }
  lines.push('');
  const lost = result.requestsTotal - result.requestsAnswered;
  lines.push(
    `${result.requestsAnswered.toLocaleString('en-US')} of ${result.requestsTotal.toLocaleString('en-US')} ` +
      (lost === 0
        ? 'requests answered: none lost across mode changes and migrations.'
        : paint('red', `requests answered: ${lost} LOST.`)),
  );
  return lines.join('\n');
}
