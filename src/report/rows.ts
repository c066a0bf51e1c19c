/**
 * The shape of experiment data as the report writers see it: flat rows of named cells (one row per
 * measured point, e.g. `{ packetSizeBytes: 64, cores: 4, gbps: 9.8 }`), and the one rule for
 * which columns a set of rows has and in what order — shared by CSV, HTML tables and charts so the
 * same data reads the same everywhere.
 */

import { ConfigError } from '../errors.ts';

/** A value a chart can plot or a table can show. `null` is a missing measurement. */
export type Cell = string | number | boolean | null;

/** A value a CSV file can hold: a {@link Cell}, or a bigint (nanosecond counters) written exactly. */
export type CsvCell = Cell | bigint;

/**
 * A row of `Cell`s, as a constraint on the caller's own row type: `Row extends RowOf<Row>` accepts
 * interfaces and object literals alike and lets the field names be checked against `keyof Row`.
 * Absent fields (`undefined`) read as missing, like `null`.
 */
export type RowOf<Row, Value = Cell> = { readonly [Field in keyof Row]: Value | undefined };

/** A row whose field names are not known statically. */
export type DataRow = { readonly [field: string]: Cell | undefined };

/** The string field names of a row type. */
export type FieldOf<Row> = Extract<keyof Row, string>;

/**
 * The columns of `rows`: the first row's keys in order, then any key a later row adds, in order of
 * first appearance — so homogeneous rows give exactly the first row's order and nothing is lost
 * when a later row carries an extra field.
 */
export function columnsOf(rows: readonly object[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

/** Reads `row[field]` with the index type widened; `undefined` when the row lacks it. */
export function cellOf(row: object, field: string): unknown {
  return Object.hasOwn(row, field) ? (row as Readonly<Record<string, unknown>>)[field] : undefined;
}

/**
 * The distinct values of `field` over `rows`, in order of first appearance, missing values left
 * out. Used for category domains so series and bars keep the order the experiment produced them
 * in (64 B, 256 B, 1 KB) rather than vega's alphabetical default (1 KB, 256 B, 64 B).
 */
export function distinctValues(rows: readonly object[], field: string): Array<string | number | boolean> {
  const values: Array<string | number | boolean> = [];
  for (const row of rows) {
    const value = cellOf(row, field);
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      if (!values.includes(value)) values.push(value);
    }
  }
  return values;
}

/** Throws `ConfigError` unless `field` is a non-empty string; `where` names the option for the message. */
export function requireFieldName(field: unknown, where: string): asserts field is string {
  if (typeof field !== 'string' || field.length === 0) {
    throw new ConfigError(where, 'must name a field of the rows (a non-empty string)');
  }
}
