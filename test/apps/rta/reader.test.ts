/**
 * Reading a user's own tuples (src/apps/rta/reader.ts): newline-delimited JSON and CSV; every
 * malformed line is counted and skipped with its 1-based line number and a reason, every valid
 * line's tuples are kept in order (nothing lost), and a file with no valid tuple, or one that
 * cannot be read, is a typed error that says what was expected.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  describeReadResult,
  parseTuples,
  RtaInputError,
  RtaNoValidTuplesError,
  readTupleFile,
  splitCsvLine,
} from '../../../src/apps/rta/index.ts';
import { isIpipeError } from '../../../src/errors.ts';

const NDJSON = [
  '{"timestampMs": 1000, "hashtag": "#a", "text": "hello #a", "userId": 7}',
  '',
  '{"timestampMs": 1001, "hashtag": "#b"',
  '{"timestamp": "1002", "hashtags": ["#c", "#d"], "user": "9"}',
  '[1, 2]',
  '{"created_at": "1970-01-01T00:00:01.500Z", "hashtag": "#e"}',
  '{"timestampMs": 900, "hashtag": ""}',
  '{"timestampMs": 900, "hashtag": "#f", "userId": -1}',
  `{"timestampMs": 900, "hashtag": "#${'x'.repeat(60)}"}`,
  '{"hashtag": "#g"}',
  '{"timestampMs": 999, "hashtag": "#h", "text": 5}',
  '{"timestampMs": 1003, "hashtags": []}',
  '{"timestampMs": 1004, "hashtag": "#i"}\r',
].join('\n');

test('NDJSON: malformed lines skipped with their line numbers and reasons; every valid tuple kept in order', () => {
  const result = parseTuples(NDJSON, { source: 'tweets.ndjson' });
  assert.equal(result.format, 'ndjson');
  assert.deepEqual(
    result.tuples.map((t) => [t.timestampMs, t.hashtag, t.userId]),
    [
      [1000, '#a', 7],
      [1002, '#c', 9],
      [1002, '#d', 9],
      [1500, '#e', 0],
      [1004, '#i', 0],
    ],
  );
  assert.equal(result.tuples[0]!.text, 'hello #a');
  assert.deepEqual(
    result.malformed.map((m) => m.line),
    [3, 5, 7, 8, 9, 10, 11, 12],
  );
  const reason = (line: number) => result.malformed.find((m) => m.line === line)?.reason ?? '';
  assert.match(reason(3), /not valid JSON/);
  assert.match(reason(5), /expected a JSON object, got an array/);
  assert.match(reason(7), /hashtag is empty/);
  assert.match(reason(8), /userId/);
  assert.match(reason(9), /over the limit of 48/);
  assert.match(reason(10), /no "timestampMs"/);
  assert.match(reason(11), /"text" must be a string/);
  assert.match(reason(12), /"hashtags" is empty/);
  assert.deepEqual(result.summary, {
    lines: 13,
    blankLines: 1,
    validLines: 4,
    malformedLines: 8,
    tuples: 5,
    outOfOrder: 1,
  });
  // Every line is accounted for: valid + malformed + blank.
  const s = result.summary;
  assert.equal(s.validLines + s.malformedLines + s.blankLines, s.lines);
  const line = describeReadResult('tweets.ndjson', result);
  assert.match(line, /13 lines \(ndjson\), 5 tuples from 4 lines, 8 malformed skipped \(line 3: /);
  assert.match(line, /1 out of event-time order/);
});

test('CSV: header in any order, quoted fields, wrong field counts and bad values reported by line', () => {
  const csv = [
    'hashtag,text,timestampMs,userId',
    '#a,"hello, ""world""",100,1',
    '#b,plain,101',
    '#c,"unterminated,102,3',
    '#d,ok,not-a-time,4',
    '#e,ok,"103",5',
    '#f,"x"y,104,6',
  ].join('\n');
  const result = parseTuples(csv, { source: 'tweets.csv' });
  assert.equal(result.format, 'csv');
  assert.deepEqual(
    result.tuples.map((t) => [t.hashtag, t.text, t.timestampMs, t.userId]),
    [
      ['#a', 'hello, "world"', 100, 1],
      ['#e', 'ok', 103, 5],
    ],
  );
  assert.deepEqual(
    result.malformed.map((m) => [m.line, m.reason.split(' ').slice(0, 3).join(' ')]),
    [
      [3, 'expected 4 fields'],
      [4, 'unterminated quoted field'],
      [5, '"timestampMs" is neither'],
      [7, 'unexpected "y" after'],
    ],
  );
  assert.deepEqual(splitCsvLine('a,"b,c",,"d""e"'), ['a', 'b,c', '', 'd"e']);
});

test('a file with no valid tuple is RtaNoValidTuplesError listing the first bad lines', () => {
  const text = ['{"nope": 1}', 'garbage', '{"timestampMs": 1}'].join('\n');
  assert.throws(
    () => parseTuples(text, { source: 'bad.ndjson', format: 'ndjson' }),
    (error: unknown) => {
      assert.ok(error instanceof RtaNoValidTuplesError);
      assert.ok(isIpipeError(error, 'IPIPE_ERR_RTA_NO_VALID_TUPLES'));
      assert.equal(error.lines, 3);
      assert.deepEqual(
        error.malformed.map((m) => m.line),
        [1, 2, 3],
      );
      assert.match(error.message, /^bad\.ndjson: no valid tuple in 3 line\(s\) \(line 1: /);
      assert.match(error.message, /Expected newline-delimited JSON objects/);
      return true;
    },
  );
  // A CSV header without the needed columns: the header line itself is reported.
  assert.throws(
    () => parseTuples('a,b\n1,2\n', { source: 'x.csv', format: 'csv' }),
    (error: unknown) =>
      error instanceof RtaNoValidTuplesError &&
      error.malformed[0]?.line === 1 &&
      /must name a "timestampMs"/.test(error.malformed[0].reason),
  );
});

test('readTupleFile streams a file (format from the extension); a missing file is RtaInputError', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-rta-reader-'));
  try {
    const path = join(dir, 'tweets.csv');
    const rows = ['timestampMs,hashtag'];
    for (let i = 0; i < 2_000; i++) rows.push(i % 500 === 7 ? `${i},` : `${i},#t${i % 13}`);
    writeFileSync(path, `${rows.join('\n')}\n`);
    const result = await readTupleFile(path);
    assert.equal(result.format, 'csv');
    assert.equal(result.summary.lines, 2_001);
    assert.equal(result.tuples.length, 1_996);
    assert.deepEqual(
      result.malformed.map((m) => m.line),
      [9, 509, 1009, 1509],
    );
    // Keep only a few records, but count them all.
    const capped = await readTupleFile(path, { maxMalformedRecords: 2 });
    assert.equal(capped.malformed.length, 2);
    assert.equal(capped.summary.malformedLines, 4);
    await assert.rejects(readTupleFile(join(dir, 'missing.ndjson')), (error: unknown) => {
      assert.ok(error instanceof RtaInputError);
      assert.equal(error.code, 'IPIPE_ERR_RTA_INPUT');
      assert.match(error.message, /missing\.ndjson: no such file/);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
