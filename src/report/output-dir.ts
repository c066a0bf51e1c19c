/**
 * Writes one experiment's outputs into a directory with predictable names:
 *
 *     <dir>/<name>.json          the full result document
 *     <dir>/<name>.csv           the rows, for spreadsheets and plotting tools
 *     <dir>/<name>-<chart>.svg   one file per chart
 *
 * Names come from experiment ids and CLI flags, so they are checked, not trusted: a name is a
 * plain file-name stem (letters, digits, `.`, `_`, `-`; no separators, no `..`), and every path is
 * checked to resolve inside `dir` before anything is written. A bad name is a `ConfigError` and
 * nothing is written at all. {@link safeFileStem} turns a free-form title into an acceptable name.
 */

import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.ts';
import { toCsv } from './csv.ts';
import type { CsvCell, RowOf } from './rows.ts';

/** What to write; each part is optional, and only the parts given are written. */
export interface ExperimentOutputs<Row extends RowOf<Row, CsvCell> = Record<string, CsvCell>> {
  /** The result document, written as pretty JSON (bigints as decimal strings, exactly). */
  readonly json?: unknown;
  /** Rows for `<name>.csv`. */
  readonly csvRows?: readonly Row[];
  /** Column order for the CSV; default every key in order of first appearance. */
  readonly csvColumns?: readonly Extract<keyof Row, string>[];
  /** SVG documents by chart name (e.g. `{ throughput: svg }` → `<name>-throughput.svg`). */
  readonly charts?: Readonly<Record<string, string>>;
}

/** The absolute paths written, by part; `all` lists them in write order. */
export interface ExperimentOutputPaths {
  readonly dir: string;
  readonly json?: string;
  readonly csv?: string;
  readonly charts: Readonly<Record<string, string>>;
  readonly all: readonly string[];
}

/** Longest stem accepted: leaves room for `-<chart>.svg` under common 255-byte name limits. */
const MAX_STEM_LENGTH = 100;
const STEM = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Writes the given outputs into `dir` (created if missing) and returns their paths. Each file is
 * written to a temporary name and renamed, so a reader (the dashboard, a plotting script) never
 * sees half a file. Throws `ConfigError` for a name that is not a plain file-name stem.
 */
export async function writeExperimentOutputs<Row extends RowOf<Row, CsvCell>>(
  dir: string,
  name: string,
  outputs: ExperimentOutputs<Row>,
): Promise<ExperimentOutputPaths> {
  const root = path.resolve(dir);
  checkStem(name, 'name');
  const chartNames = Object.keys(outputs.charts ?? {});
  const lowerCaseNames = new Map<string, string>();
  for (const chart of chartNames) {
    checkStem(chart, `charts.${chart}`);
    // Case-insensitive file systems (macOS, Windows) would let `Latency` overwrite `latency`.
    const clash = lowerCaseNames.get(chart.toLowerCase());
    if (clash !== undefined) {
      throw new ConfigError(`charts.${chart}`, `differs from chart "${clash}" only in case; rename one`);
    }
    lowerCaseNames.set(chart.toLowerCase(), chart);
  }

  // Build every file's content and path first: a bad cell or name fails before anything is written.
  const files: Array<{ part: 'json' | 'csv' | 'chart'; chart?: string; file: string; content: string }> = [];
  if (outputs.json !== undefined) {
    files.push({ part: 'json', file: inside(root, `${name}.json`), content: jsonText(outputs.json) });
  }
  if (outputs.csvRows !== undefined) {
    files.push({
      part: 'csv',
      file: inside(root, `${name}.csv`),
      content: toCsv(outputs.csvRows, outputs.csvColumns),
    });
  }
  for (const chart of chartNames) {
    const svg = outputs.charts?.[chart] ?? '';
    files.push({ part: 'chart', chart, file: inside(root, `${name}-${chart}.svg`), content: svg });
  }

  await makeOutputDirectory(root);
  const charts: Record<string, string> = {};
  const all: string[] = [];
  let json: string | undefined;
  let csv: string | undefined;
  for (const { part, chart, file, content } of files) {
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, content, 'utf8');
    await rename(temporary, file);
    all.push(file);
    if (part === 'json') json = file;
    else if (part === 'csv') csv = file;
    else if (chart !== undefined) charts[chart] = file;
  }
  return { dir: root, ...(json !== undefined && { json }), ...(csv !== undefined && { csv }), charts, all };
}

/**
 * `mkdir -p root`, except that a file where a directory must be (`root` itself, or one of its
 * parents) is a `ConfigError` naming that file, not Node's bare `EEXIST`/`ENOTDIR` with a stack.
 */
async function makeOutputDirectory(root: string): Promise<void> {
  try {
    await mkdir(root, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw error;
    const file = await firstFileOnPath(root);
    throw new ConfigError(
      '',
      `cannot write outputs into ${root}: ${file ?? root} is a file, not a directory; choose another output directory or remove the file`,
      { cause: error },
    );
  }
}

/** The first existing non-directory among `target` and its ancestors, outermost first. */
async function firstFileOnPath(target: string): Promise<string | undefined> {
  const chain: string[] = [];
  for (let at = target; ; at = path.dirname(at)) {
    chain.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const at of chain) {
    const info = await stat(at).catch(() => undefined);
    if (info === undefined) return undefined;
    if (!info.isDirectory()) return at;
  }
  return undefined;
}

/**
 * A free-form title as an acceptable file-name stem: lower case, runs of anything but letters,
 * digits, `.`, `_`, `-` become one `-`, leading/trailing `.`/`-` trimmed, at most 100 characters;
 * `fallback` when nothing is left. `Latency vs load (p99, µs)` → `latency-vs-load-p99-s`.
 */
export function safeFileStem(title: string, fallback = 'output'): string {
  const stem = title
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, MAX_STEM_LENGTH)
    .replace(/[-._]+$/, '');
  return stem === '' ? fallback : stem;
}

function checkStem(stem: string, where: string): void {
  if (typeof stem !== 'string' || !STEM.test(stem) || stem.includes('..') || stem.length > MAX_STEM_LENGTH) {
    throw new ConfigError(
      where,
      `${JSON.stringify(stem)} is not a plain file name: use 1–${MAX_STEM_LENGTH} letters, digits, ` +
        "'.', '_' or '-', starting with a letter or digit, without '..' or path separators " +
        '(safeFileStem() makes one from a title)',
    );
  }
}

/** Joins and re-checks containment, so a future loosening of `STEM` cannot open a way out of `dir`. */
function inside(root: string, fileName: string): string {
  const file = path.resolve(root, fileName);
  if (path.dirname(file) !== root) {
    throw new ConfigError('name', `${JSON.stringify(fileName)} would be written outside ${root}`);
  }
  return file;
}

function jsonText(document: unknown): string {
  let text: string | undefined;
  try {
    // bigints (nanosecond counters) have no JSON form; a decimal string keeps every digit.
    text = JSON.stringify(
      document,
      (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
      2,
    );
  } catch (error) {
    throw new ConfigError(
      'json',
      `the result document cannot be written as JSON (${String(error)}): pass plain, acyclic data`,
      { cause: error },
    );
  }
  if (text === undefined) {
    throw new ConfigError('json', 'the result document is not JSON (a function or symbol?): pass plain data');
  }
  return `${text}\n`;
}
