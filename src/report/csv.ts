/**
 * CSV for experiment data (RFC 4180): one header row, then one record per row, CRLF line ends, a
 * field quoted only when it must be (it holds a comma, a double quote, CR or LF; quotes doubled).
 * Numbers are written unformatted (`String(n)`: `0.1`, `1e+21`, `-3`) so a reader parses back
 * exactly the value measured; bigints (nanosecond counters) are written in full.
 */

import { ConfigError } from '../errors.ts';
import { type CsvCell, cellOf, columnsOf, type FieldOf, type RowOf } from './rows.ts';

/** RFC 4180's record separator; spreadsheets and `csv` parsers everywhere accept it. */
const CRLF = '\r\n';

/**
 * Serialises `rows` as CSV text ending in CRLF. Columns are `columns` when given (a row missing one
 * writes an empty field), else every key in order of first appearance (the first row's order for
 * homogeneous rows). `null`/`undefined` write an empty field. With no rows and no columns the
 * result is the empty string. Throws `ConfigError` for a value that is not a cell (object, array,
 * function, symbol): flatten it into columns first.
 */
export function toCsv<Row extends RowOf<Row, CsvCell>>(
  rows: readonly Row[],
  columns?: readonly FieldOf<Row>[],
): string {
  const header: readonly string[] = columns ?? columnsOf(rows);
  if (header.length === 0) return '';
  const lines = [recordOf(header, header.length)];
  rows.forEach((row, index) => {
    const fields = header.map((column) => fieldText(cellOf(row, column), `rows[${index}].${column}`));
    lines.push(recordOf(fields, header.length));
  });
  return lines.join(CRLF) + CRLF;
}

/** Quotes one field when RFC 4180 requires it. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function recordOf(fields: readonly string[], columnCount: number): string {
  // A one-column record whose field is empty would be an empty line, which readers skip: quote it.
  if (columnCount === 1 && fields[0] === '') return '""';
  return fields.map(csvField).join(',');
}

function fieldText(value: unknown, path: string): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      return '';
    default:
      if (value === null) return '';
      throw new ConfigError(
        path,
        `a CSV cell must be a string, number, bigint, boolean or null, got ${typeof value}: flatten it into columns`,
      );
  }
}
