/**
 * The RESP parser is streaming: any sequence of valid commands, encoded as clients encode them
 * (arrays of bulk strings) or typed inline, and cut into chunks at arbitrary byte boundaries,
 * parses to exactly the commands that were sent, in order.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_RESP_LIMITS,
  encodeCommand,
  type ProtocolViolation,
  RespParser,
} from '../../../../src/apps/rkv/resp/index.ts';

/** Feeds `bytes` cut at `cuts` (sorted offsets) and collects commands and the outcome. */
function parseInChunks(
  bytes: Buffer,
  cuts: readonly number[],
  limits = DEFAULT_RESP_LIMITS,
): { commands: string[][]; violation: ProtocolViolation | null } {
  const commands: string[][] = [];
  const parser = new RespParser(limits, (args) => {
    commands.push(args.map((arg) => arg.toString('latin1')));
  });
  let violation: ProtocolViolation | null = null;
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    violation = parser.push(bytes.subarray(from, cut)) ?? violation;
    from = cut;
  }
  return { commands, violation };
}

const byteString = (maxLength: number, size?: fc.SizeForArbitrary) =>
  fc
    .uint8Array(size === undefined ? { maxLength } : { maxLength, size })
    .map((bytes) => Buffer.from(bytes).toString('latin1'));

/**
 * A command as arrays of bulk strings: any bytes, empty strings included, sometimes long. The long
 * ones name size 'max': fast-check's default size stops at 10 bytes whatever maxLength says.
 */
const arrayCommand = fc.array(
  fc.oneof({ weight: 5, arbitrary: byteString(24) }, { weight: 1, arbitrary: byteString(3000, 'max') }),
  {
    minLength: 1,
    maxLength: 6,
  },
);

/** A plain inline command: tokens without blanks or quotes, not starting with '*'. */
const inlineToken = fc.stringMatching(/^[A-Za-z0-9_:.-]{1,12}$/);
const inlineCommand = fc.array(inlineToken, { minLength: 1, maxLength: 5 });

/** Quotes an arbitrary byte string the way redis-cli would let a person type it. */
function quoteInline(arg: string): string {
  let text = '"';
  for (const char of arg) {
    const code = char.charCodeAt(0);
    if (char === '"' || char === '\\') text += `\\${char}`;
    else if (code < 0x20 || code >= 0x7f) text += `\\x${code.toString(16).padStart(2, '0')}`;
    else text += char;
  }
  return `${text}"`;
}

type Sent =
  | { kind: 'array'; args: string[] }
  | { kind: 'inline'; args: string[]; crlf: boolean }
  | { kind: 'quoted'; args: string[] }
  | { kind: 'empty' };

const sentCommand: fc.Arbitrary<Sent> = fc.oneof(
  { weight: 6, arbitrary: arrayCommand.map((args): Sent => ({ kind: 'array', args })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(inlineCommand, fc.boolean())
      .map(([args, crlf]): Sent => ({ kind: 'inline', args, crlf })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(inlineToken, fc.array(byteString(16), { maxLength: 3 }))
      .map(([name, rest]): Sent => ({ kind: 'quoted', args: [name, ...rest] })),
  },
  // An empty inline line or `*0`: both are skipped, as Redis skips them.
  { weight: 1, arbitrary: fc.constant<Sent>({ kind: 'empty' }) },
);

function encodeSent(sent: Sent): Buffer {
  switch (sent.kind) {
    case 'array':
      return encodeCommand(sent.args.map((arg) => Buffer.from(arg, 'latin1')));
    case 'inline':
      return Buffer.from(`${sent.args.join(' ')}${sent.crlf ? '\r\n' : '\n'}`, 'latin1');
    case 'quoted':
      return Buffer.from(`${sent.args.map(quoteInline).join('  ')}\r\n`, 'latin1');
    case 'empty':
      return Buffer.from('\r\n*0\r\n', 'latin1');
  }
}

function expected(sent: readonly Sent[]): string[][] {
  return sent.flatMap((one) => (one.kind === 'empty' ? [] : [one.args]));
}

/** Cut points: sorted distinct offsets inside the buffer. */
function cutsFor(length: number, raw: readonly number[]): number[] {
  return [...new Set(raw.map((value) => (length === 0 ? 0 : value % (length + 1))))].sort((a, b) => a - b);
}

test('commands split at random byte boundaries parse to the commands sent', () => {
  let longArgumentRuns = 0;
  fc.assert(
    fc.property(
      fc.array(sentCommand, { maxLength: 20 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      (sent, raw) => {
        if (expected(sent).some((args) => args.some((arg) => arg.length > 1000))) longArgumentRuns++;
        const bytes = Buffer.concat(sent.map(encodeSent));
        const { commands, violation } = parseInChunks(bytes, cutsFor(bytes.length, raw));
        assert.equal(violation, null);
        assert.deepEqual(commands, expected(sent));
      },
    ),
    { numRuns: 400 },
  );
  assert.ok(longArgumentRuns >= 40, `only ${longArgumentRuns} of 400 runs sent an argument over 1000 bytes`);
});

test('a pipeline delivered one byte at a time parses like one delivered whole', () => {
  fc.assert(
    fc.property(fc.array(sentCommand, { minLength: 1, maxLength: 8 }), (sent) => {
      const bytes = Buffer.concat(sent.map(encodeSent));
      const everyByte = Array.from({ length: bytes.length }, (_, index) => index);
      assert.deepEqual(parseInChunks(bytes, everyByte).commands, expected(sent));
      assert.deepEqual(parseInChunks(bytes, []).commands, expected(sent));
    }),
    { numRuns: 100 },
  );
});

test('many pipelined commands in one chunk come out in order', () => {
  const sent: string[][] = [];
  for (let index = 0; index < 5000; index++) sent.push(['SET', `key:${index}`, `value-${index}`]);
  const bytes = Buffer.concat(sent.map((args) => encodeCommand(args)));
  assert.deepEqual(parseInChunks(bytes, []).commands, sent);
});

test('a bulk string wholly inside one chunk is a view of that chunk (zero-copy)', () => {
  const chunk = encodeCommand(['SET', 'k', 'v'.repeat(500)]);
  let value: Buffer | undefined;
  const parser = new RespParser(DEFAULT_RESP_LIMITS, (args) => {
    value = args[2];
  });
  assert.equal(parser.push(chunk), null);
  assert.ok(value !== undefined);
  assert.equal(value.length, 500);
  // Shared memory, not a copy: a write into the chunk shows through the argument.
  chunk[chunk.length - 3] = 0x21;
  assert.equal(value[value.length - 1], 0x21);
});

test('a bulk string split across chunks is joined once, byte for byte', () => {
  const payload = Buffer.from(Array.from({ length: 70_000 }, (_, index) => index % 251));
  const bytes = encodeCommand([Buffer.from('SET'), Buffer.from('big'), payload]);
  const { commands, violation } = parseInChunks(bytes, [10, 20, 30_000, 65_536, bytes.length - 1]);
  assert.equal(violation, null);
  assert.equal(commands.length, 1);
  assert.deepEqual(Buffer.from(commands[0]![2]!, 'latin1'), payload);
});

test('idle is true only between commands', () => {
  const parser = new RespParser(DEFAULT_RESP_LIMITS, () => {});
  assert.equal(parser.idle, true);
  parser.push(Buffer.from('*2\r\n$3\r\nGET'));
  assert.equal(parser.idle, false);
  parser.push(Buffer.from('\r\n$1\r\nk\r\n'));
  assert.equal(parser.idle, true);
});

test('halt() inside a command stops the rest of the chunk and later chunks', () => {
  const seen: string[] = [];
  const parser = new RespParser(DEFAULT_RESP_LIMITS, (args) => {
    seen.push(args[0]!.toString());
    if (args[0]!.toString() === 'QUIT') parser.halt();
  });
  assert.equal(parser.push(Buffer.from('PING\r\nQUIT\r\nPING\r\n')), null);
  assert.equal(parser.push(encodeCommand(['PING'])), null);
  assert.deepEqual(seen, ['PING', 'QUIT']);
});
