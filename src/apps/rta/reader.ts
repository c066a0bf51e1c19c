/**
 * Reads a user's own tuples for RTA (iPipe §5, "The applications": RTA runs on a Twitter data
 * set; bring your own in one of two line formats):
 *
 * - newline-delimited JSON, one object per line:
 *     {"timestampMs": 1700000000123, "hashtag": "#ipipe", "text": "offloading #ipipe", "userId": 7}
 *   `timestampMs` may also be `timestamp` (ms) or `created_at` (any date Date.parse reads);
 *   `hashtags` (an array) gives one tuple per hashtag; `text` and `userId` (or `user`) may be absent.
 * - CSV with a header row naming the columns (any order; quoted fields with "" escapes):
 *     timestampMs,hashtag,text,userId
 *   (`timestamp` for `timestampMs`, `user` for `userId`; text and userId columns optional).
 *
 * A malformed line — bad JSON, a missing or invalid field, a hashtag over 48 bytes, a CSV row with
 * the wrong number of fields or an unterminated quote — is skipped and reported with its line
 * number; the summary says how many lines were read, kept and skipped, and how many tuples came
 * out of event-time order (RTA sorts a file before streaming it). A file with no valid tuple at
 * all is an RtaNoValidTuplesError listing the first problems.
 */

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { type MalformedLine, RtaInputError, RtaNoValidTuplesError } from './errors.ts';
import { type RtaTuple, tupleProblem } from './tuple.ts';

export type { MalformedLine };

/** The two line formats. */
export type TupleFormat = 'ndjson' | 'csv';

/** What a read produced. */
export interface TupleReadResult {
  readonly format: TupleFormat;
  /** Valid tuples, in file order. */
  readonly tuples: RtaTuple[];
  /** Skipped lines, in file order (line numbers are 1-based). */
  readonly malformed: MalformedLine[];
  readonly summary: {
    /** Lines seen, blank ones included. */
    readonly lines: number;
    readonly blankLines: number;
    /** Lines that produced at least one tuple. */
    readonly validLines: number;
    readonly malformedLines: number;
    readonly tuples: number;
    /** Tuples with an earlier timestamp than the tuple before them. */
    readonly outOfOrder: number;
  };
}

/** Options of the readers. */
export interface TupleReadOptions {
  /** The format; by default from the file extension (.csv → csv, else ndjson), else from the first line. */
  readonly format?: TupleFormat;
  /** Name used in errors (default the path, or "input"). */
  readonly source?: string;
  /** Keep at most this many malformed-line records (default 1000; the count is always exact). */
  readonly maxMalformedRecords?: number;
}

class LineProblem extends Error {}

function requireString(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new LineProblem(`"${name}" must be a string, got ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : String(value);
}

/** A timestamp field: a number of ms, a numeric string, or (created_at) a date string. */
function timestampOf(value: unknown, name: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw new LineProblem(`"${name}" must be a finite number of ms, got ${value}`);
  }
  if (typeof value === 'string' && value.trim() !== '') {
    const numeric = Number(value);
    if (Number.isFinite(numeric)) return numeric;
    const parsed = Date.parse(value);
    if (Number.isFinite(parsed)) return parsed;
    throw new LineProblem(`"${name}" is neither a number of ms nor a date: ${describe(value)}`);
  }
  throw new LineProblem(`"${name}" is missing or empty`);
}

function userIdOf(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  const id = typeof value === 'string' ? Number(value) : value;
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= 0xffff_ffff) return id;
  throw new LineProblem(`"userId" must be an integer in [0, 2^32), got ${describe(value)}`);
}

function checked(tuple: RtaTuple): RtaTuple {
  const problem = tupleProblem(tuple);
  if (problem !== undefined) throw new LineProblem(problem);
  return tuple;
}

function tuplesFromJson(line: string): RtaTuple[] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new LineProblem(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LineProblem(`expected a JSON object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const timeField = ['timestampMs', 'timestamp', 'created_at'].find((k) => record[k] !== undefined);
  if (timeField === undefined) throw new LineProblem('no "timestampMs" (or "timestamp", "created_at") field');
  const timestampMs = timestampOf(record[timeField], timeField);
  const text = record['text'] === undefined ? '' : requireString(record['text'], 'text');
  const userId = userIdOf(record['userId'] ?? record['user']);
  let hashtags: string[];
  if (record['hashtag'] !== undefined) hashtags = [requireString(record['hashtag'], 'hashtag')];
  else if (Array.isArray(record['hashtags'])) {
    hashtags = record['hashtags'].map((tag, i) => requireString(tag, `hashtags[${i}]`));
    if (hashtags.length === 0) throw new LineProblem('"hashtags" is empty');
  } else throw new LineProblem('no "hashtag" (or "hashtags" array) field');
  return hashtags.map((tag) => checked({ timestampMs, userId, hashtag: tag.trim(), text }));
}

/** Splits one CSV line (RFC 4180 quoting, no embedded newlines). */
export function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i <= line.length) {
    const char = line[i];
    if (quoted) {
      if (char === undefined) throw new LineProblem('unterminated quoted field');
      if (char === '"') {
        if (line[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        if (line[i] !== undefined && line[i] !== ',') {
          throw new LineProblem(
            `unexpected ${JSON.stringify(line[i])} after a closing quote at column ${i + 1}`,
          );
        }
        continue;
      }
      field += char;
      i++;
      continue;
    }
    if (char === undefined || char === ',') {
      fields.push(field);
      field = '';
      i++;
      continue;
    }
    if (char === '"' && field === '') {
      quoted = true;
      i++;
      continue;
    }
    field += char;
    i++;
  }
  return fields;
}

interface CsvColumns {
  readonly count: number;
  readonly timestamp: number;
  readonly hashtag: number;
  readonly text: number | undefined;
  readonly userId: number | undefined;
}

function csvColumns(header: string): CsvColumns {
  const names = splitCsvLine(header).map((name) => name.trim().replace(/^\uFEFF/, ''));
  const find = (...candidates: string[]) => {
    const index = names.findIndex((name) => candidates.includes(name));
    return index < 0 ? undefined : index;
  };
  const timestamp = find('timestampMs', 'timestamp');
  const hashtag = find('hashtag');
  if (timestamp === undefined || hashtag === undefined) {
    throw new LineProblem(
      `the header must name a "timestampMs" (or "timestamp") and a "hashtag" column, got ${names.join(',') || 'nothing'}`,
    );
  }
  return { count: names.length, timestamp, hashtag, text: find('text'), userId: find('userId', 'user') };
}

function tuplesFromCsv(line: string, columns: CsvColumns): RtaTuple[] {
  const fields = splitCsvLine(line);
  if (fields.length !== columns.count) {
    throw new LineProblem(`expected ${columns.count} fields as in the header, got ${fields.length}`);
  }
  const at = (index: number | undefined) => (index === undefined ? undefined : fields[index]);
  return [
    checked({
      timestampMs: timestampOf(at(columns.timestamp)?.trim(), 'timestampMs'),
      userId: userIdOf(at(columns.userId)?.trim()),
      hashtag: (at(columns.hashtag) ?? '').trim(),
      text: at(columns.text) ?? '',
    }),
  ];
}

/** Incremental parser: feed lines in order, then `finish`. */
export class TupleLineParser {
  readonly #source: string;
  readonly #maxRecords: number;
  #format: TupleFormat | undefined;
  #columns: CsvColumns | undefined;
  readonly #tuples: RtaTuple[] = [];
  readonly #malformed: MalformedLine[] = [];
  #lines = 0;
  #blank = 0;
  #valid = 0;
  #malformedCount = 0;
  #outOfOrder = 0;
  #lastMs = Number.NEGATIVE_INFINITY;

  constructor(options: TupleReadOptions = {}) {
    this.#source = options.source ?? 'input';
    this.#format = options.format;
    this.#maxRecords = options.maxMalformedRecords ?? 1000;
  }

  /** Parses the next line (without its newline). */
  push(rawLine: string): void {
    this.#lines++;
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') {
      this.#blank++;
      return;
    }
    // An unknown format is decided by the first non-blank line: JSON objects start with "{".
    if (this.#format === undefined) this.#format = line.trimStart().startsWith('{') ? 'ndjson' : 'csv';
    try {
      if (this.#format === 'csv' && this.#columns === undefined) {
        this.#columns = csvColumns(line);
        return;
      }
      const tuples =
        this.#format === 'csv' ? tuplesFromCsv(line, this.#columns as CsvColumns) : tuplesFromJson(line);
      for (const tuple of tuples) {
        if (tuple.timestampMs < this.#lastMs) this.#outOfOrder++;
        this.#lastMs = tuple.timestampMs;
        this.#tuples.push(tuple);
      }
      this.#valid++;
    } catch (error) {
      if (!(error instanceof LineProblem)) throw error;
      this.#malformedCount++;
      if (this.#malformed.length < this.#maxRecords)
        this.#malformed.push({ line: this.#lines, reason: error.message });
    }
  }

  /** The result; throws RtaNoValidTuplesError when no tuple was found. */
  finish(): TupleReadResult {
    if (this.#tuples.length === 0)
      throw new RtaNoValidTuplesError(this.#source, this.#lines, this.#malformed);
    return {
      format: this.#format ?? 'ndjson',
      tuples: this.#tuples,
      malformed: this.#malformed,
      summary: {
        lines: this.#lines,
        blankLines: this.#blank,
        validLines: this.#valid,
        malformedLines: this.#malformedCount,
        tuples: this.#tuples.length,
        outOfOrder: this.#outOfOrder,
      },
    };
  }
}

/** Parses tuples from text already in memory. */
export function parseTuples(text: string, options: TupleReadOptions = {}): TupleReadResult {
  const parser = new TupleLineParser(options);
  const lines = text.split('\n');
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) parser.push(line);
  return parser.finish();
}

/** Reads tuples from a file, streaming it line by line. Throws RtaInputError if it cannot be read. */
export async function readTupleFile(path: string, options: TupleReadOptions = {}): Promise<TupleReadResult> {
  const format = options.format ?? (path.toLowerCase().endsWith('.csv') ? 'csv' : undefined);
  const parser = new TupleLineParser({
    ...options,
    source: options.source ?? path,
    ...(format ? { format } : {}),
  });
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) parser.push(line);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RtaInputError(
      path,
      code === 'ENOENT'
        ? 'no such file'
        : `cannot be read (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  } finally {
    stream.destroy();
  }
  return parser.finish();
}

/** The summary as one line for stderr, e.g. "tuples.csv: 1000 lines, 990 tuples, 8 malformed (…)". */
export function describeReadResult(source: string, result: TupleReadResult): string {
  const s = result.summary;
  const first = result.malformed
    .slice(0, 3)
    .map((m) => `line ${m.line}: ${m.reason}`)
    .join('; ');
  return (
    `${source}: ${s.lines} lines (${result.format}), ${s.tuples} tuples from ${s.validLines} lines, ` +
    `${s.malformedLines} malformed skipped${first ? ` (${first}${s.malformedLines > 3 ? '; …' : ''})` : ''}` +
    (s.outOfOrder > 0 ? `, ${s.outOfOrder} out of event-time order` : '')
  );
}
