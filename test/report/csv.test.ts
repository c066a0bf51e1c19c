/**
 * CSV output follows RFC 4180: a header row, CRLF records, quoting only where needed with quotes
 * doubled, numbers unformatted, a stable column order — and whatever the strings and numbers, a
 * strict RFC 4180 parser (written here, independent of the writer) reads back exactly what was
 * written.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isIpipeError } from '../../src/errors.ts';
import { csvField, toCsv } from '../../src/report/index.ts';

/**
 * A strict RFC 4180 reader: records end in CRLF (the last one may omit it), a quoted field may hold
 * commas, CR, LF and doubled quotes; anything else malformed throws, so a writer bug cannot hide.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let index = 0;
  let atFieldStart = true;
  while (index < text.length) {
    const character = text[index];
    if (atFieldStart && character === '"') {
      index++;
      for (;;) {
        if (index >= text.length) throw new Error('unterminated quoted field');
        if (text[index] === '"') {
          if (text[index + 1] === '"') {
            field += '"';
            index += 2;
            continue;
          }
          index++;
          break;
        }
        field += text[index];
        index++;
      }
      atFieldStart = false;
      const next = text[index];
      if (next !== undefined && next !== ',' && next !== '\r')
        throw new Error(`junk after quote at ${index}`);
      continue;
    }
    if (character === ',') {
      record.push(field);
      field = '';
      atFieldStart = true;
      index++;
    } else if (character === '\r') {
      if (text[index + 1] !== '\n') throw new Error(`bare CR at ${index}`);
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      atFieldStart = true;
      index += 2;
    } else if (character === '\n' || character === '"') {
      throw new Error(`unquoted ${JSON.stringify(character)} at ${index}`);
    } else {
      field += character;
      atFieldStart = false;
      index++;
    }
  }
  if (!atFieldStart || field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

describe('toCsv', () => {
  it('writes a header and one CRLF-terminated record per row, in first-row key order', () => {
    const csv = toCsv([
      { cores: 1, gbps: 2.5, size: '64B' },
      { cores: 2, gbps: 5, size: '64B' },
    ]);
    assert.equal(csv, 'cores,gbps,size\r\n1,2.5,64B\r\n2,5,64B\r\n');
  });

  it('quotes only fields with a comma, quote, CR or LF, doubling quotes', () => {
    assert.equal(csvField('plain text'), 'plain text');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('line\nbreak'), '"line\nbreak"');
    assert.equal(csvField('cr\rhere'), '"cr\rhere"');
    assert.equal(toCsv([{ 'a,b': 'x"y' }]), '"a,b"\r\n"x""y"\r\n');
  });

  it('writes numbers unformatted, bigints in full, booleans as words and missing values empty', () => {
    const csv = toCsv([
      { a: 0.1, b: 1e21, c: -3, d: 123456789012345678901234567890n, e: true, f: null, g: undefined },
    ]);
    assert.equal(csv, 'a,b,c,d,e,f,g\r\n0.1,1e+21,-3,123456789012345678901234567890,true,,\r\n');
  });

  it('uses explicit columns in the given order, leaving a missing field empty', () => {
    const rows = [
      { x: 1, y: 2, z: 3 },
      { x: 4, y: 5, z: 6 },
    ];
    assert.equal(toCsv(rows, ['z', 'x']), 'z,x\r\n3,1\r\n6,4\r\n');
  });

  it('appends keys that only later rows have, in order of first appearance', () => {
    const rows: Array<Record<string, number>> = [
      { b: 1, a: 2 },
      { a: 3, c: 4 },
      { d: 5, b: 6 },
    ];
    assert.equal(toCsv(rows), 'b,a,c,d\r\n1,2,,\r\n,3,4,\r\n6,,,5\r\n');
  });

  it('keeps an empty single-column record as a quoted empty field, not a blank line', () => {
    const csv = toCsv([{ note: '' }, { note: 'x' }, { note: null }]);
    assert.equal(csv, 'note\r\n""\r\nx\r\n""\r\n');
    assert.deepEqual(parseCsv(csv), [['note'], [''], ['x'], ['']]);
  });

  it('returns the empty string for no rows and no columns, and a header alone for columns only', () => {
    assert.equal(toCsv([]), '');
    assert.equal(toCsv([] as Array<{ a: number; b: number }>, ['a', 'b']), 'a,b\r\n');
  });

  it('refuses a value that is not a cell, naming the row and column', () => {
    const rows = [{ ok: 1 }, { ok: { nested: true } }] as unknown as Array<Record<string, number>>;
    assert.throws(
      () => toCsv(rows),
      (error: unknown) =>
        isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID') && /rows\[1\]\.ok/.test(error.message),
    );
  });

  it('round-trips arbitrary strings and numbers through an RFC 4180 parser', () => {
    const cell = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.constantFrom(',', '"', '\r', '\n', '\r\n', '""', ' , ', '"a"'),
      fc.double({ noNaN: false }),
      fc.integer(),
      fc.constant(null),
    );
    const columnName = fc.string({ unit: 'binary', minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(
        fc.uniqueArray(columnName, { minLength: 1, maxLength: 5 }),
        fc.array(fc.array(cell, { minLength: 5, maxLength: 5 }), { maxLength: 8 }),
        (columns, table) => {
          const rows = table.map((cells) =>
            Object.fromEntries(columns.map((column, index) => [column, cells[index] ?? null])),
          );
          const parsed = parseCsv(toCsv(rows, columns));
          assert.deepEqual(parsed[0], columns);
          assert.equal(parsed.length, rows.length + 1);
          rows.forEach((row, rowIndex) => {
            const record = parsed[rowIndex + 1];
            assert.ok(record !== undefined);
            assert.equal(record.length, columns.length);
            columns.forEach((column, columnIndex) => {
              const value = row[column];
              const text = record[columnIndex];
              if (value === null || value === undefined) assert.equal(text, '');
              else if (typeof value === 'number') {
                // Unformatted: the text parses back to the very same number (−0 reads as 0).
                assert.equal(text, String(value));
                if (!Number.isNaN(value)) assert.equal(Number(text), value === 0 ? 0 : value);
              } else assert.equal(text, value);
            });
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
