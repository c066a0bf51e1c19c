/**
 * Malformed RESP: the parser never throws, reports a reason and Redis's error text, stays failed,
 * and reaches the same verdict however the bytes were cut into chunks.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_RESP_LIMITS,
  encodeCommand,
  PROTOCOL_VIOLATION_REASONS,
  type ProtocolViolation,
  RespParser,
} from '../../../../src/apps/rkv/resp/index.ts';

function run(chunks: readonly Buffer[]): { commands: string[][]; violation: ProtocolViolation | null } {
  const commands: string[][] = [];
  const parser = new RespParser(DEFAULT_RESP_LIMITS, (args) => {
    commands.push(args.map((arg) => arg.toString('latin1')));
  });
  let violation: ProtocolViolation | null = null;
  for (const chunk of chunks) violation = parser.push(chunk);
  return { commands, violation };
}

function cut(bytes: Buffer, raw: readonly number[]): Buffer[] {
  const cuts = [...new Set(raw.map((value) => value % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    chunks.push(bytes.subarray(from, at));
    from = at;
  }
  return chunks;
}

test('random bytes never throw, and the verdict does not depend on how they were cut', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(), { maxLength: 30 }), (garbage, raw) => {
      const bytes = Buffer.from(garbage);
      const whole = run([bytes]);
      const pieces = run(cut(bytes, raw));
      assert.deepEqual(pieces.commands, whole.commands);
      assert.deepEqual(pieces.violation, whole.violation);
      if (whole.violation !== null) {
        assert.ok(PROTOCOL_VIOLATION_REASONS.includes(whole.violation.reason));
        assert.match(whole.violation.message, /^Protocol error: /);
      }
    }),
    { numRuns: 1000 },
  );
});

test('garbage that starts like an array is always a protocol error, after the good commands before it', () => {
  const validPrefix = fc.array(fc.array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 4 }), {
    maxLength: 5,
  });
  // After '*': something that cannot continue a valid array header.
  const badHeader = fc.oneof(
    fc.constantFrom('*x\r\n', '*\r\n', '*01\r\n', '*-0\r\n', '*1\rX', '*99999999999999999\r\n'),
    fc.constantFrom(
      '*1\r\n:5\r\n',
      '*1\r\n$-1\r\n',
      '*1\r\n$x\r\n',
      '*1\r\n$3\r\nabcd\r\n',
      '*1\r\n$2\r\nab\n\n',
    ),
  );
  fc.assert(
    fc.property(
      validPrefix,
      badHeader,
      fc.uint8Array({ maxLength: 50 }),
      fc.array(fc.nat(), { maxLength: 10 }),
      (good, bad, tail, raw) => {
        const bytes = Buffer.concat([
          ...good.map((args) => encodeCommand(args)),
          Buffer.from(bad, 'latin1'),
          Buffer.from(tail),
        ]);
        const { commands, violation } = run(cut(bytes, raw));
        assert.deepEqual(
          commands,
          good.map((args) => args.map((arg) => Buffer.from(arg).toString('latin1'))),
        );
        assert.ok(violation !== null, `no violation for ${JSON.stringify(bad)}`);
      },
    ),
    { numRuns: 300 },
  );
});

const cases: [input: string, reason: string, message: string][] = [
  // Redis 7.0's texts, checked against redis-server 7.0.15.
  ['*x\r\n', 'invalid-array-length', 'Protocol error: invalid multibulk length'],
  ['*01\r\n', 'invalid-array-length', 'Protocol error: invalid multibulk length'],
  ['*3000000000000000000\r\n', 'invalid-array-length', 'Protocol error: invalid multibulk length'],
  ['*2\r\n$3\r\nGET\r\n:1\r\n', 'expected-bulk', "Protocol error: expected '$', got ':'"],
  ['*1\r\n\r\n', 'expected-bulk', "Protocol error: expected '$', got ' '"],
  ['*1\r\n$-1\r\n', 'invalid-bulk-length', 'Protocol error: invalid bulk length'],
  ['*1\r\n$04\r\nPING\r\n', 'invalid-bulk-length', 'Protocol error: invalid bulk length'],
  ['*1\r\n$99999999999999999\r\n', 'invalid-bulk-length', 'Protocol error: invalid bulk length'],
  ['SET k "a\r\n', 'unbalanced-quotes', 'Protocol error: unbalanced quotes in request'],
  ["SET k 'a'b\r\n", 'unbalanced-quotes', 'Protocol error: unbalanced quotes in request'],
  // Stricter than Redis, which skips these two bytes unread.
  ['*1\r\n$4\r\nPINGxx', 'missing-crlf', 'Protocol error: expected \\r\\n after the bulk string'],
  ['*1\rx', 'missing-crlf', 'Protocol error: expected \\r\\n after the array length'],
  ['*1\r\n$4\rx', 'missing-crlf', 'Protocol error: expected \\r\\n after the bulk length'],
];

for (const [input, reason, message] of cases) {
  test(`${JSON.stringify(input)} → ${reason}`, () => {
    const { violation } = run([Buffer.from(input, 'latin1')]);
    assert.deepEqual(violation, { reason, message });
  });
}

test('empty arrays and blank lines are skipped, as Redis skips them', () => {
  const { commands, violation } = run([Buffer.from('*0\r\n*-1\r\n\r\n   \r\n\nPING\r\n', 'latin1')]);
  assert.equal(violation, null);
  assert.deepEqual(commands, [['PING']]);
});

test('after a violation the parser stays failed and emits nothing more', () => {
  const commands: string[] = [];
  const parser = new RespParser(DEFAULT_RESP_LIMITS, (args) => commands.push(args[0]!.toString()));
  const first = parser.push(Buffer.from('PING\r\n*x\r\n'));
  assert.equal(first?.reason, 'invalid-array-length');
  assert.equal(parser.push(encodeCommand(['PING'])), first);
  assert.equal(parser.violation, first);
  assert.deepEqual(commands, ['PING']);
});
