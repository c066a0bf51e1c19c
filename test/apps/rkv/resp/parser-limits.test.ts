/**
 * Protocol limits: each is enforced with its own reason, at the earliest byte that proves it is
 * broken (a bulk header announcing too much is refused before its data arrives), and limits that
 * make no sense are refused when the server is configured.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_RESP_LIMITS,
  encodeCommand,
  type ProtocolViolation,
  RespLimitsError,
  RespParser,
  resolveRespLimits,
} from '../../../../src/apps/rkv/resp/index.ts';

const small = resolveRespLimits({
  maxBulkBytes: 100,
  maxArrayLength: 4,
  maxInlineBytes: 32,
  maxPendingBytes: 300,
  maxKeyBytes: 50,
  maxValueBytes: 100,
});

function feed(parser: RespParser, ...chunks: (string | Buffer)[]): ProtocolViolation | null {
  let violation: ProtocolViolation | null = null;
  for (const chunk of chunks)
    violation = parser.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
  return violation;
}

function parser(): { parser: RespParser; commands: string[][] } {
  const commands: string[][] = [];
  return { parser: new RespParser(small, (args) => commands.push(args.map(String))), commands };
}

test('maxArrayLength: an array of exactly the limit passes, one more is refused', () => {
  const ok = parser();
  assert.equal(feed(ok.parser, encodeCommand(['MGET', 'a', 'b', 'c'])), null);
  assert.equal(ok.commands.length, 1);
  const over = parser();
  const violation = feed(over.parser, '*5\r\n');
  assert.equal(violation?.reason, 'array-too-long');
  assert.match(violation?.message ?? '', /multibulk length 5 exceeds the limit of 4 \(maxArrayLength\)/);
});

test('maxBulkBytes: refused at the header, before any data is sent', () => {
  const ok = parser();
  assert.equal(feed(ok.parser, encodeCommand(['SET', 'k', 'v'.repeat(100)])), null);
  const over = parser();
  const violation = feed(over.parser, '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$101\r\n');
  assert.equal(violation?.reason, 'bulk-too-long');
  assert.match(violation?.message ?? '', /bulk length 101 exceeds the limit of 100 bytes \(maxBulkBytes\)/);
});

test('maxInlineBytes: a long line is refused without waiting for its newline', () => {
  const ok = parser();
  // The limit counts the line up to its \n: "ECHO " + 26 bytes + "\r" is exactly 32.
  assert.equal(feed(ok.parser, `ECHO ${'x'.repeat(26)}\r\n`), null);
  assert.deepEqual(ok.commands, [['ECHO', 'x'.repeat(26)]]);
  const over = parser();
  assert.equal(feed(over.parser, 'ECHO ', 'x'.repeat(20)), null, 'still within the limit');
  const violation = feed(over.parser, 'x'.repeat(10));
  assert.deepEqual(violation, {
    reason: 'inline-too-long',
    message: 'Protocol error: too big inline request',
  });
});

test('maxPendingBytes: counts the whole command on the wire, across chunks', () => {
  // Four bulks of 90 bytes (97 on the wire): each within maxBulkBytes; the fourth takes the
  // command to 4 + 4 × 97 = 392 bytes, over the 300-byte budget, and is refused at its header.
  const bulk = (char: string) => `$90\r\n${char.repeat(90)}\r\n`;
  const { parser: p, commands } = parser();
  assert.equal(feed(p, '*4\r\n', bulk('a'), bulk('b'), bulk('c')), null);
  const violation = feed(p, '$90\r\n');
  assert.equal(commands.length, 0);
  assert.equal(violation?.reason, 'pending-too-large');
  assert.match(violation?.message ?? '', /exceeds the limit of 300 bytes \(maxPendingBytes\)/);
});

test('maxPendingBytes applies to one command at a time, not to a connection’s lifetime', () => {
  const { parser: p, commands } = parser();
  for (let index = 0; index < 50; index++) {
    assert.equal(feed(p, encodeCommand(['SET', 'k', 'v'.repeat(90)])), null);
  }
  assert.equal(commands.length, 50);
});

test('the defaults are Redis-like where Redis is safe, and documented values', () => {
  assert.deepEqual(
    { ...DEFAULT_RESP_LIMITS },
    {
      maxBulkBytes: 16 * 1024 * 1024,
      maxArrayLength: 65_536,
      maxInlineBytes: 64 * 1024,
      maxPendingBytes: 32 * 1024 * 1024,
      maxKeyBytes: 4096,
      maxValueBytes: 1024 * 1024,
      maxConnections: 10_000,
      maxInflightCommands: 1024,
    },
  );
});

test('limits that make no sense are refused with the limit named', () => {
  assert.throws(
    () => resolveRespLimits({ maxBulkBytes: 0 }),
    (error: unknown) => {
      assert.ok(error instanceof RespLimitsError);
      assert.equal(error.limit, 'maxBulkBytes');
      assert.equal(error.respCode, 'IPIPE_ERR_RESP_INVALID_LIMITS');
      return true;
    },
  );
  assert.throws(
    () => resolveRespLimits({ maxArrayLength: 1.5 }),
    /maxArrayLength: must be a positive integer/,
  );
  assert.throws(
    () => resolveRespLimits({ maxValueBytes: 2048, maxKeyBytes: 16, maxBulkBytes: 1024 }),
    /maxValueBytes: 2048 exceeds maxBulkBytes/,
  );
  assert.throws(
    () => resolveRespLimits({ maxBulkBytes: 64 * 1024 * 1024 }),
    /maxBulkBytes: .* exceeds maxPendingBytes/,
  );
  assert.throws(() => resolveRespLimits({ maxBulk: 1 } as never), /unknown limit/);
});
