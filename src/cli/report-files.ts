/**
 * What the experiment commands (`characterize`, `experiment scheduler|rkv|dt|rta`) do with a
 * result, in one order and by one rule, so that a short `--duration` or a bad `--out` loses nothing:
 *   - the report goes to stdout first (text or `--json`), then the files are written — a failing
 *     `--out` still leaves the numbers on the screen;
 *   - a chart gets only the rows it can draw: a point that measured nothing (no completed request,
 *     no busy host core) has a null, or 0 where a log axis cannot go; such rows are left out of
 *     that chart (said on stderr), kept in the JSON, CSV and text; a chart left with no row at all
 *     is not written.
 */

import { writeJson, writeOut } from './output.ts';

/** The rows whose `field` a chart with that axis can draw: a finite number, and above 0 on a log axis. */
export function chartRows<Row extends object>(
  rows: readonly Row[],
  field: string,
  scale: 'linear' | 'log' = 'linear',
): Row[] {
  return rows.filter((row) => {
    const value = (row as Readonly<Record<string, unknown>>)[field];
    return typeof value === 'number' && Number.isFinite(value) && (scale === 'linear' || value > 0);
  });
}

/** A chart to render once its rows are known, named as its file will be (`<stem>-<name>.svg`). */
export interface PlannedChart<Row extends object> {
  readonly name: string;
  /** Every row of the chart's data, before leaving out what it cannot draw. */
  readonly rows: readonly Row[];
  /** The value field and its axis scale. */
  readonly field: string;
  readonly scale?: 'linear' | 'log';
  /** Renders the chart from the drawable rows and a note to append to its subtitle ('' if none). */
  render(rows: Row[], note: string): Promise<string>;
}

/**
 * Renders `charts`, each from its drawable rows; returns the SVGs by name and one stderr line per
 * chart that left rows out or was skipped, with `why` (what the left-out rows lack) and `fix`.
 */
export async function renderCharts<Row extends object>(
  charts: readonly PlannedChart<Row>[],
  why: string,
  fix: string,
): Promise<{ readonly svgs: Record<string, string>; readonly notes: readonly string[] }> {
  const svgs: Record<string, string> = {};
  const notes: string[] = [];
  for (const chart of charts) {
    const drawable = chartRows(chart.rows, chart.field, chart.scale);
    const leftOut = chart.rows.length - drawable.length;
    if (drawable.length === 0) {
      if (chart.rows.length > 0) notes.push(`chart ${chart.name} not written: every point ${why}; ${fix}`);
      continue;
    }
    if (leftOut > 0) notes.push(`chart ${chart.name}: ${leftOut} point(s) left out (${why}); ${fix}`);
    svgs[chart.name] = await chart.render(
      drawable,
      leftOut > 0 ? `; ${leftOut} point(s) ${why} left out` : '',
    );
  }
  return { svgs, notes };
}

/**
 * Prints the report, then the notes on stderr, then writes the files (`write` returns their
 * paths) and says where they went. Returns the paths.
 */
export async function reportThenWrite(options: {
  readonly json: boolean;
  readonly document: unknown;
  readonly text: () => string;
  readonly notes?: readonly string[];
  readonly outDir: string;
  readonly write: () => Promise<readonly string[]>;
}): Promise<readonly string[]> {
  if (options.json) writeJson(options.document);
  else writeOut(options.text());
  for (const note of options.notes ?? []) process.stderr.write(`ipipe: ${note}\n`);
  const written = await options.write();
  if (!options.json) writeOut(`\nWrote ${written.join(', ')}`);
  process.stderr.write(`ipipe: wrote ${written.length} files to ${options.outDir}\n`);
  return written;
}
