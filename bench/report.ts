/**
 * The shape every benchmark returns and how it is printed: one row per measured figure, with the
 * baseline it was measured against in the same run and the ratio, so RESULTS.md can quote lines.
 */

export interface BenchRow {
  readonly section: string;
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** value ÷ baseline value (for times: lower is better; for rates: higher is better). */
  readonly ratio?: number;
  readonly baseline?: string;
  readonly target?: string;
  readonly pass?: boolean;
  readonly note?: string;
}

/** Runs `measure` n times and returns the median (robust to one noisy repetition). */
export function medianOf(n: number, measure: () => number): number {
  const values: number[] = [];
  for (let i = 0; i < n; i++) values.push(measure());
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)] as number;
}

function formatValue(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function printRows(rows: readonly BenchRow[]): void {
  const lines = rows.map((row) => {
    const ratio = row.ratio === undefined ? '' : `${row.ratio.toFixed(2)}× ${row.baseline ?? 'baseline'}`;
    const target = row.target === undefined ? '' : `${row.target} ${row.pass === false ? 'MISSED' : 'met'}`;
    return [row.section, row.name, `${formatValue(row.value)} ${row.unit}`, ratio, target, row.note ?? ''];
  });
  const widths = [0, 1, 2, 3, 4].map((c) => Math.max(...lines.map((l) => (l[c] as string).length)));
  for (const line of lines) {
    process.stdout.write(
      `${line
        .map((cell, c) => (c < 5 ? cell.padEnd(widths[c] as number) : cell))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}
