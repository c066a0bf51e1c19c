/**
 * The RESP2 encoder: exact bytes for every reply type, a round trip through an independent
 * decoder for arbitrary reply trees, and the writer's two memory rules — large values go out
 * without a copy, and bytes handed to the socket are never overwritten by later replies.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { COPY_MAX_BYTES } from '../../../../src/apps/rkv/resp/encoder.ts';
import {
  encodeCommand,
  encodeValue,
  ReplyWriter,
  type RespValue,
  toByteString,
} from '../../../../src/apps/rkv/resp/index.ts';
import { decodeReplies, encodeArgs } from './helpers.ts';

const text = (value: RespValue): string => encodeValue(value).toString('latin1');

test('each reply type encodes to its RESP2 bytes', () => {
  assert.equal(text({ type: 'simple', value: 'OK' }), '+OK\r\n');
  assert.equal(text({ type: 'error', value: 'ERR bad' }), '-ERR bad\r\n');
  assert.equal(text({ type: 'integer', value: 42 }), ':42\r\n');
  assert.equal(text({ type: 'bulk', value: Buffer.from('abc') }), '$3\r\nabc\r\n');
  assert.equal(text({ type: 'bulk', value: Buffer.alloc(0) }), '$0\r\n\r\n');
  assert.equal(text({ type: 'bulk', value: null }), '$-1\r\n');
  assert.equal(text({ type: 'array', value: null }), '*-1\r\n');
  assert.equal(text({ type: 'array', value: [] }), '*0\r\n');
  assert.equal(
    text({
      type: 'array',
      value: [
        { type: 'bulk', value: Buffer.from('a') },
        { type: 'bulk', value: null },
        { type: 'array', value: [{ type: 'integer', value: -1 }] },
      ],
    }),
    '*3\r\n$1\r\na\r\n$-1\r\n*1\r\n:-1\r\n',
  );
});

test('integers at the edges', () => {
  for (const value of [
    0,
    9,
    10,
    99,
    100,
    -1,
    -10,
    123456789,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
  ]) {
    assert.equal(text({ type: 'integer', value }), `:${value}\r\n`);
  }
});

test('\\r and \\n in simple strings and errors become spaces; text is written byte for byte', () => {
  assert.equal(text({ type: 'error', value: 'ERR a\r\nb' }), '-ERR a  b\r\n');
  assert.equal(text({ type: 'simple', value: 'x\ny' }), '+x y\r\n');
  assert.equal(text({ type: 'error', value: 'ERR \xff' }), '-ERR \xff\r\n');
  assert.equal(toByteString('é'), '\xc3\xa9');
  assert.equal(toByteString('plain'), 'plain');
});

test('a large bulk value is queued as its own buffer, not copied', () => {
  const writer = new ReplyWriter();
  const big = Buffer.alloc(100_000, 7);
  writer.simple('OK');
  writer.bulk(big);
  writer.integer(1);
  const chunks: Buffer[] = [];
  assert.equal(
    writer.flushTo({
      write: (chunk) => {
        chunks.push(chunk);
        return true;
      },
    }),
    true,
  );
  assert.ok(chunks.includes(big), 'the value buffer itself is one of the chunks');
  assert.equal(
    Buffer.concat(chunks).toString('latin1'),
    `+OK\r\n$100000\r\n${big.toString('latin1')}\r\n:1\r\n`,
  );
  assert.equal(writer.pendingBytes, 0);
});

test('bytes already flushed are never overwritten by later replies (slab reuse is append-only)', () => {
  const writer = new ReplyWriter();
  const held: Buffer[] = [];
  const sink = {
    write: (chunk: Buffer) => {
      held.push(chunk);
      return true;
    },
  };
  const expected: string[] = [];
  for (let index = 0; index < 5000; index++) {
    const value = `value-${index}-${'x'.repeat(index % 50)}`;
    writer.bulk(Buffer.from(value));
    expected.push(`$${value.length}\r\n${value}\r\n`);
    if (index % 7 === 0) writer.flushTo(sink);
  }
  writer.flushTo(sink);
  // 5000 replies span many 16 KiB slabs; every chunk handed out still holds its own bytes.
  assert.equal(Buffer.concat(held).toString('latin1'), expected.join(''));
});

test('flushTo reports a sink that asks to slow down', () => {
  const writer = new ReplyWriter();
  writer.simple('OK');
  assert.equal(writer.flushTo({ write: () => false }), false);
});

const respValue: fc.Arbitrary<RespValue> = fc.letrec<{ value: RespValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc
      .string({ maxLength: 20 })
      .map((value): RespValue => ({ type: 'simple', value: value.replace(/[\r\n]/g, '') })),
    fc
      .string({ maxLength: 20 })
      .map((value): RespValue => ({ type: 'error', value: value.replace(/[\r\n]/g, '') })),
    fc.maxSafeInteger().map((value): RespValue => ({ type: 'integer', value })),
    // size 'max': fast-check's default size stops at 10 bytes, far below COPY_MAX_BYTES, so the
    // writer's by-reference path for large bulks was never part of a generated tree.
    fc
      .option(fc.uint8Array({ maxLength: 3000, size: 'max' }))
      .map((value): RespValue => ({ type: 'bulk', value: value === null ? null : Buffer.from(value) })),
    fc.option(fc.array(tie('value'), { maxLength: 5 })).map((value): RespValue => ({ type: 'array', value })),
  ),
})).value;

/** Whether the tree holds a bulk string the writer references instead of copying. */
function hasLargeBulk(value: RespValue): boolean {
  if (value.type === 'bulk') return value.value !== null && value.value.length > COPY_MAX_BYTES;
  if (value.type === 'array') return value.value?.some(hasLargeBulk) === true;
  return false;
}

test('any reply tree survives encode → independent decode', () => {
  let largeBulkRuns = 0;
  fc.assert(
    fc.property(fc.array(respValue, { maxLength: 10 }), (values) => {
      if (values.some(hasLargeBulk)) largeBulkRuns++;
      const writer = new ReplyWriter();
      for (const value of values) writer.value(value);
      const bytes = writer.takeBytes();
      const { values: decoded, used } = decodeReplies(bytes);
      assert.equal(used, bytes.length);
      // Simple strings and errors are byte strings: a char above 0xff keeps its low byte only.
      const asBytes = (value: RespValue): RespValue =>
        value.type === 'simple' || value.type === 'error'
          ? { type: value.type, value: Buffer.from(value.value, 'latin1').toString('latin1') }
          : value.type === 'array' && value.value !== null
            ? { type: 'array', value: value.value.map(asBytes) }
            : value;
      assert.deepEqual(decoded, values.map(asBytes));
    }),
    { numRuns: 300 },
  );
  assert.ok(
    largeBulkRuns >= 30,
    `only ${largeBulkRuns} of 300 runs held a bulk over ${COPY_MAX_BYTES} bytes`,
  );
});

test('encodeCommand writes what clients write', () => {
  assert.deepEqual(
    encodeCommand(['SET', 'k', Buffer.from([0, 255])]),
    encodeArgs(['SET', 'k', Buffer.from([0, 255])]),
  );
  assert.equal(encodeCommand(['é']).toString('latin1'), '*1\r\n$2\r\n\xc3\xa9\r\n');
});
