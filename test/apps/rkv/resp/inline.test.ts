/**
 * Inline commands split as Redis's sdssplitargs splits them: blanks, double quotes with escapes,
 * single quotes, the closing-quote rule, and NUL ending the line.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitInlineArguments } from '../../../../src/apps/rkv/resp/index.ts';

function split(line: string): string[] | null {
  const args = splitInlineArguments(Buffer.from(line, 'latin1'));
  return args === null ? null : args.map((arg) => arg.toString('latin1'));
}

const cases: [line: string, args: string[] | null][] = [
  ['', []],
  ['   \t ', []],
  ['PING', ['PING']],
  ['  SET   key\tvalue  ', ['SET', 'key', 'value']],
  ['SET k "two words"', ['SET', 'k', 'two words']],
  ['SET k "a\\nb\\r\\t\\b\\a\\\\\\"c"', ['SET', 'k', 'a\nb\r\t\b\x07\\"c']],
  ['SET k "\\x41\\x4a\\x4G"', ['SET', 'k', 'AJx4G']],
  ["SET k 'it\\'s' 'a\\nb'", ['SET', 'k', "it's", 'a\\nb']],
  ['SET k ""', ['SET', 'k', '']],
  ['SET k ab"cd ef"', ['SET', 'k', 'abcd ef']],
  ['SET k "a"b', null],
  ["SET k 'a'b", null],
  ['SET k "abc', null],
  ["SET k 'abc", null],
  ['GET a\x00 b', ['GET', 'a']],
  ['GET "a\x00b"', null],
  ['GET \x0bx\x0c', ['GET', 'x\x0c']],
];

for (const [line, expected] of cases) {
  test(`inline ${JSON.stringify(line)}`, () => {
    assert.deepEqual(split(line), expected);
  });
}

test('plain arguments are views of the line, not copies', () => {
  const line = Buffer.from('SET key value', 'latin1');
  const args = splitInlineArguments(line)!;
  line[4] = 0x4b; // 'k' → 'K'
  assert.equal(args[1]!.toString(), 'Key');
});
