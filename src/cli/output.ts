/**
 * How the CLI writes: results to stdout (text, or one JSON document with `--json`), everything
 * else (progress, logs, errors) to stderr, colour and progress bars only on a TTY. Kept in one
 * place so `npm run --silent ipipe -- … --json` always yields parseable stdout.
 */

import { styleText } from 'node:util';

type Style = Parameters<typeof styleText>[0];

/** Colour when stdout is a terminal and NO_COLOR is unset; plain text otherwise. */
export function paint(style: Style, text: string): string {
  if (!process.stdout.isTTY || process.env['NO_COLOR'] !== undefined) return text;
  return styleText(style, text);
}

export function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function writeJson(document: unknown): void {
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
}

/**
 * What a table shows for a figure of a point that measured nothing (a latency of no completed
 * request): a 0 there would read as a measurement.
 */
export const NO_DATA = 'no data';

/** Renders rows as an aligned table; numbers (and NO_DATA in their column) right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [header, ...rows.map((row) => row.map((c) => (typeof c === 'number' ? formatNumber(c) : c)))];
  const numeric = header.map((_, col) =>
    rows.every((row) => typeof row[col] === 'number' || row[col] === NO_DATA),
  );
  const widths = header.map((_, col) => Math.max(...cells.map((row) => String(row[col] ?? '').length)));
  return cells
    .map((row, index) => {
      const line = row
        .map((cell, col) => {
          const text = String(cell ?? '');
          const width = widths[col] as number;
          return numeric[col] ? text.padStart(width) : text.padEnd(width);
        })
        .join('  ')
        .trimEnd();
      return index === 0 ? paint('bold', line) : line;
    })
    .join('\n');
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/**
 * A one-line progress bar on stderr, drawn only when stderr is a TTY and the run has lasted more
 * than a second (short runs stay quiet).
 */
export function progressBar(label: string): { update(fraction: number): void; done(): void } {
  const startedMs = Date.now();
  const enabled = process.stderr.isTTY === true;
  let drawn = false;
  return {
    update(fraction: number) {
      if (!enabled || Date.now() - startedMs < 1_000) return;
      const width = 30;
      const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
      process.stderr.write(
        `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0)}%`,
      );
      drawn = true;
    },
    done() {
      if (drawn) process.stderr.write('\r\x1b[2K');
    },
  };
}
