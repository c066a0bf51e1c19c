/**
 * `ipipe load` (src/cli/commands/load.ts): every option parser refuses bad input with
 * a UsageError that names the option; --rate and --closed are exclusive; --size is bounded by the
 * frame limit; the command prints one JSON document with schemaVersion and unit-suffixed keys, or
 * a table.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  loadCommand,
  parseActorId,
  parseDurationMs,
  parseLoadOptions,
  parseLoadSeed,
  parseOutstanding,
  parsePayloadSize,
  parseRate,
  parseTarget,
  resolveLoadMode,
  resolveLoadRequest,
} from '../../src/cli/commands/load.ts';
import { parseRkvLoadOptions, RKV_LOAD_DEFAULTS } from '../../src/cli/commands/load-rkv.ts';
import { isIpipeError } from '../../src/errors.ts';
import { type EchoServer, startEchoServer } from '../../src/platform/live/net/echo-server.ts';

function usage(pattern: RegExp) {
  return (error: unknown) =>
    isIpipeError(error, 'IPIPE_ERR_CLI_USAGE') && pattern.test((error as Error).message);
}

describe('load option parsers', () => {
  it('parse good values', () => {
    assert.equal(parseTarget(' 10.0.0.2:9000 '), '10.0.0.2:9000');
    assert.equal(parseTarget('[::1]:80'), '[::1]:80');
    assert.equal(parseRate('2500'), 2500);
    assert.equal(parseRate('0.5'), 0.5);
    assert.equal(parseOutstanding('64'), 64);
    assert.equal(parsePayloadSize()('0'), 0);
    assert.equal(parsePayloadSize()('1448'), 1448);
    assert.equal(parsePayloadSize(9000)('8976'), 8976);
    assert.equal(parseActorId('4294967295'), 0xffff_ffff);
    assert.equal(parseLoadSeed('9007199254740991'), Number.MAX_SAFE_INTEGER);
    assert.equal(parseDurationMs('--duration')('10s'), 10_000);
    assert.equal(parseDurationMs('--duration')('500ms'), 500);
    assert.equal(parseDurationMs('--duration')('250us'), 0.25);
    assert.equal(parseDurationMs('--duration')('1.5s'), 1500);
    assert.equal(parseDurationMs('--duration')('2m'), 120_000);
    assert.equal(parseDurationMs('--warmup', true)('0'), 0);
    assert.equal(parseDurationMs('--warmup', true)('0s'), 0);
  });

  it('refuse bad values, naming the option and the accepted form', () => {
    assert.throws(() => parseTarget('localhost'), usage(/--target.*host:port/));
    assert.throws(() => parseTarget('h:99999'), usage(/--target/));
    assert.throws(() => parseRate('0'), usage(/--rate/));
    assert.throws(() => parseRate('fast'), usage(/--rate/));
    assert.throws(() => parseRate(''), usage(/--rate/));
    assert.throws(() => parseOutstanding('0'), usage(/--closed must be an integer in \[1, 65536\]/));
    assert.throws(() => parseOutstanding('1.5'), usage(/--closed/));
    assert.throws(() => parsePayloadSize()('1449'), usage(/--size must be an integer in \[0, 1448\]/));
    assert.throws(() => parsePayloadSize()('-1'), usage(/--size/));
    assert.throws(() => parseActorId('4294967296'), usage(/--actor/));
    assert.throws(() => parseLoadSeed('-1'), usage(/--seed/));
    assert.throws(() => parseLoadSeed('9007199254740992'), usage(/--seed/));
    assert.throws(() => parseDurationMs('--duration')('10'), usage(/--duration .*like 10s/));
    assert.throws(() => parseDurationMs('--duration')('0s'), usage(/--duration/));
    assert.throws(() => parseDurationMs('--duration')('25h'), usage(/--duration/));
    assert.throws(() => parseDurationMs('--duration')('0'), usage(/--duration/));
  });

  it('refuse numbers Number() reads but a user did not mean, and rates and durations too small to run', () => {
    // `0x10` was a rate of 16 req/s, `0b11` of 3; `1e-300` (one request in 10^292 years) was taken.
    for (const value of ['0x10', '0b11', '0o7', '1e-300', '0.00001', 'Infinity', '-5', '10000001'])
      assert.throws(
        () => parseRate(value),
        usage(
          /--rate must be a decimal number of requests per second from 0\.0000116 \(one request in 24h\) to 10000000/,
        ),
        value,
      );
    assert.equal(parseRate('1e3'), 1000);
    assert.equal(parseRate('.5'), 0.5);
    assert.equal(parseRate('0.0000116'), 0.0000116, 'one request in 24h');
    // Under 1 µs is no duration a run or a time-out can have (`0.0000001us` was 10^-10 ms).
    for (const value of ['0.0000001us', '0.5us', '0.0009ms', '0.0000001s'])
      assert.throws(
        () => parseDurationMs('--duration')(value),
        usage(/--duration must be a duration from 1us to 24h/),
        value,
      );
    assert.equal(parseDurationMs('--timeout')('1us'), 0.001);
    assert.equal(parseDurationMs('--timeout')('0.001ms'), 0.001);
    assert.equal(parseDurationMs('--timeout')('0.000001s'), 0.001);
    assert.throws(
      () => parseDurationMs('--warmup', true)('0.1us'),
      usage(/--warmup .*from 1us to 24h.*, or 0/),
    );
    // A rate valid alone but giving less than one request in this run's duration.
    assert.throws(
      () => parseLoadOptions({ target: 'a:1', rate: '0.05', duration: '10s' }, () => 1),
      usage(
        /--rate 0\.05 over --duration 10s offers 0\.5 requests, less than one: give a --rate of at least 0\.1 req\/s for that duration, or a longer --duration/,
      ),
    );
    assert.throws(
      () => parseLoadOptions({ target: 'a:1', rate: '0.05' }, () => 1),
      usage(/over --duration 10s/),
    );
    assert.equal(
      parseLoadOptions({ target: 'a:1', rate: '0.1', duration: '10s' }, () => 1).mode.kind,
      'open',
      'exactly one request',
    );
    assert.throws(
      () => parseRkvLoadOptions({ keys: '0x10' }, '/d', () => 1),
      usage(/--keys must be an integer/),
    );
    assert.throws(() => parseRkvLoadOptions({ zipf: '0b1' }, '/d', () => 1), usage(/--zipf/));
  });

  it('make --rate and --closed mutually exclusive, and require one', () => {
    assert.deepEqual(resolveLoadMode(100, undefined), { kind: 'open', ratePerSec: 100 });
    assert.deepEqual(resolveLoadMode(undefined, 8), { kind: 'closed', outstanding: 8 });
    assert.throws(() => resolveLoadMode(100, 8), usage(/mutually exclusive/));
    assert.throws(() => resolveLoadMode(undefined, undefined), usage(/--rate R.*--closed N/));
  });

  it('assemble every option with defaults, drawing a fresh seed only when none is given', () => {
    const options = parseLoadOptions({ target: '127.0.0.1:9', closed: '4' }, () => 1234);
    assert.deepEqual(options, {
      target: '127.0.0.1:9',
      actor: 1,
      mode: { kind: 'closed', outstanding: 4 },
      payloadBytes: 64,
      durationMs: 10_000,
      warmupMs: 1_000,
      seed: 1234,
      timeoutMs: 1_000,
      retries: 0,
      json: false,
    });
    const explicit = parseLoadOptions(
      {
        target: '127.0.0.1:9',
        rate: '300',
        size: '100',
        duration: '2s',
        warmup: '0',
        seed: '5',
        actor: '7',
        timeout: '50ms',
        retries: '2',
        json: true,
      },
      () => assert.fail('a seed was given'),
    );
    assert.deepEqual(explicit.mode, { kind: 'open', ratePerSec: 300 });
    assert.equal(explicit.seed, 5);
    assert.equal(explicit.warmupMs, 0);
    assert.equal(explicit.timeoutMs, 50);
    assert.throws(() => parseLoadOptions({ closed: '1' }, () => 1), usage(/--target/));
    assert.throws(
      () => parseLoadOptions({ target: 'a:1', rate: '5', closed: '1' }, () => 1),
      usage(/mutually exclusive/),
    );
    for (const flag of ['keys', 'zipf', 'gets', 'dels', 'input'] as const) {
      assert.throws(
        () => parseLoadOptions({ target: 'a:1', closed: '1', [flag]: '1' }, () => 1),
        usage(new RegExp(`--${flag} belongs to --app`)),
      );
    }
  });
});

describe('load --app rkv option parser', () => {
  it("takes the defaults of the paper's workload and refuses what makes no sense", () => {
    const defaults = parseRkvLoadOptions({}, '/d', () => 42);
    assert.deepEqual({ ...defaults }, { ...RKV_LOAD_DEFAULTS, dataDir: '/d', seed: 42, json: false });
    const explicit = parseRkvLoadOptions(
      {
        closed: '3',
        duration: '2s',
        warmup: '0',
        timeout: '500ms',
        size: '100',
        keys: '10',
        zipf: '1.2',
        gets: '0',
        dels: '0.1',
        seed: '9',
        json: true,
      },
      '/d',
      () => 1,
    );
    assert.deepEqual(
      [explicit.clients, explicit.durationMs, explicit.warmupMs, explicit.timeoutMs, explicit.valueBytes],
      [3, 2_000, 0, 500, 100],
    );
    assert.deepEqual(
      [explicit.keys, explicit.zipfExponent, explicit.getFraction, explicit.deleteFraction, explicit.seed],
      [10, 1.2, 0, 0.1, 9],
    );
    assert.throws(() => parseRkvLoadOptions({ dels: '-1' }, '/d', () => 1), usage(/--dels/));
    assert.throws(
      () => parseRkvLoadOptions({ gets: '0.95', dels: '0.1' }, '/d', () => 1),
      usage(/--gets 0.95 and --dels 0.1 add up to more than 1/),
    );
    assert.throws(
      () => parseRkvLoadOptions({ size: '8' }, '/d', () => 1),
      usage(/--size must be value bytes/),
    );
    assert.throws(() => parseRkvLoadOptions({ keys: '0' }, '/d', () => 1), usage(/--keys/));
    assert.throws(() => parseRkvLoadOptions({ zipf: 'x' }, '/d', () => 1), usage(/--zipf/));
    assert.throws(() => parseRkvLoadOptions({ gets: '1.5' }, '/d', () => 1), usage(/--gets/));
    assert.throws(() => parseRkvLoadOptions({ gets: '' }, '/d', () => 1), usage(/--gets/));
    assert.throws(
      () => parseRkvLoadOptions({ input: 'x.csv' }, '/d', () => 1),
      usage(/--input is for --app rta/),
    );
  });
});

describe('loadCommand', () => {
  let server: EchoServer;
  before(async () => {
    server = await startEchoServer();
  });
  after(() => server.close());

  // node:test reports on stdout, so the command writes to a sink here rather than to stdout.
  async function capture(json: boolean): Promise<string> {
    let out = '';
    await loadCommand(options(json), {
      text: (text) => {
        out += `${text}\n`;
      },
      json: (document) => {
        out += JSON.stringify(document);
      },
    });
    return out;
  }

  const options = (json: boolean) =>
    parseLoadOptions(
      {
        target: `127.0.0.1:${server.address.port}`,
        closed: '4',
        duration: '300ms',
        warmup: '50ms',
        seed: '3',
        json,
      },
      () => 0,
    );

  it('--json prints one document with schemaVersion and units in its keys', async () => {
    const out = await capture(true);
    const document = JSON.parse(out) as Record<string, unknown>;
    assert.equal(document['schemaVersion'], 1);
    assert.equal(document['command'], 'load');
    for (const key of [
      'durationMs',
      'warmupMs',
      'throughputPerSec',
      'achievedRatePerSec',
      'sent',
      'answered',
    ]) {
      assert.ok(key in document, `missing ${key}`);
    }
    const latency = document['latency'] as Record<string, number>;
    assert.deepEqual(Object.keys(latency).sort(), ['maxUs', 'meanUs', 'p50Us', 'p90Us', 'p999Us', 'p99Us']);
    assert.ok((document['answered'] as number) > 0);
  });

  it('prints a table by default', async () => {
    const out = await capture(false);
    assert.match(out, /closed loop, 4 outstanding/);
    assert.match(out, /throughput req\/s/);
    assert.match(out, /p99\.9/);
    assert.match(out, /seed 3/);
  });
});

describe("--module / --message: requests in the actor's own schema", () => {
  const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;
  const COUNTER = new URL('../../examples/counter.ts', import.meta.url).pathname;
  const base = (raw: Record<string, string>) =>
    parseLoadOptions({ target: '127.0.0.1:9', closed: '1', seed: '5', ...raw }, () => 1);

  it("encodes the message with the named actor's codec and takes its id", async () => {
    const raw = { module: COUNTER, actor: 'counter', message: '{"type":"get","key":7}' };
    const options = await resolveLoadRequest(base(raw), raw);
    assert.equal(options.actor, 1);
    assert.ok(options.request);
    const { counter } = await import('../../examples/counter.ts');
    assert.deepEqual(counter.messages.decode(options.request.bytes), { type: 'get', key: 7 });
    assert.equal(options.payloadBytes, options.request.bytes.length);
  });

  it('bytes fields from {"$bytes": n} (seeded) and {"$hex": "…"}', async () => {
    const sized = { module: ECHO, message: '{"type":"echo","data":{"$bytes":40}}' };
    const first = await resolveLoadRequest(base(sized), sized);
    const again = await resolveLoadRequest(base(sized), sized);
    const { echo } = await import('../../examples/echo.ts');
    const decoded = echo.messages.decode(first.request?.bytes ?? new Uint8Array()) as { data: Uint8Array };
    assert.equal(decoded.data.length, 40);
    assert.ok(
      decoded.data.some((b) => b !== 0),
      'pseudo-random, not zeros',
    );
    assert.deepEqual(first.request?.bytes, again.request?.bytes, 'same seed, same bytes');
    const hex = { module: ECHO, message: '{"type":"echo","data":{"$hex":"0a0bff"}}' };
    const fromHex = await resolveLoadRequest(base(hex), hex);
    const data = (echo.messages.decode(fromHex.request?.bytes ?? new Uint8Array()) as { data: Uint8Array })
      .data;
    assert.deepEqual([...data], [10, 11, 255]);
  });

  it('refuses what cannot be sent, saying what to do', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ module: COUNTER, actor: 'nope', message: '{}' }, /no such actor; it has 1 \(counter\)/],
      [{ module: COUNTER, message: '{"type":"get"' }, /not valid JSON/],
      [
        { module: COUNTER, message: '{"type":"get","key":"x"}' },
        /does not fit actor counter.*its schema: add/,
      ],
      [{ module: ECHO, message: '{"type":"echo","data":{"$hex":"abc"}}' }, /even number of hex digits/],
      [{ module: '/no/such/file.ts', message: '{}' }, /no such module/],
    ];
    for (const [raw, pattern] of cases) {
      await assert.rejects(resolveLoadRequest(base(raw), raw), usage(pattern), JSON.stringify(raw));
    }
    assert.throws(() => base({ module: ECHO }), usage(/--module and --message go together/));
    assert.throws(
      () => base({ module: ECHO, message: '{}', size: '8' }),
      usage(/with --message the request is the encoded message/),
    );
  });
});
