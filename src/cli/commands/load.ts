/**
 * `ipipe load`: the load generator on the command line (see load.ts for what it measures and how).
 * Parsers for its options, each throwing a UsageError that names the option and the accepted form,
 * and `loadCommand`, which runs the load and prints a table, or one JSON document with `--json`.
 *
 * With `--module` and `--message` the requests are a real message of the target actor's schema,
 * encoded with its codec (otherwise random bytes, which only a raw UDP echo server serves: every
 * actor has a codec and refuses each as IPIPE_ERR_CODEC_DECODE, and the node counts it as a
 * `decode` drop, not as an execution).
 */

import { ConfigError, UsageError } from '../../errors.ts';
import { type LoadMode, type LoadResult, runLoad, splitHostPort } from '../../platform/live/net/load.ts';
import { DEFAULT_MAX_FRAME_BYTES, HEADER_BYTES } from '../../platform/live/net/wire.ts';
import { loadDefinitions } from '../../platform/live/node/actor-catalog.ts';
import { isDecimal } from '../options.ts';
import { formatNumber, paint, progressBar, table, writeJson, writeOut } from '../output.ts';
import { catalogOf } from './run.ts';

/** A request encoded with an actor's own codec (`--module` + `--message`). */
export interface LoadRequest {
  /** The encoded message every request carries. */
  readonly bytes: Uint8Array;
  /** For the report: the actor's name and the message as given. */
  readonly description: string;
}

/** Everything `loadCommand` needs, already validated. */
export interface LoadCommandOptions {
  readonly target: string;
  readonly actor: number;
  /** Set by `resolveLoadRequest` when `--module`/`--message` were given; else random bytes of `payloadBytes`. */
  readonly request?: LoadRequest;
  readonly mode: LoadMode;
  readonly payloadBytes: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly seed: number;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly json: boolean;
}

/** The options as a command-line parser hands them over: strings, or absent. */
export interface RawLoadOptions {
  readonly target?: string;
  readonly actor?: string;
  readonly rate?: string;
  readonly closed?: string;
  readonly size?: string;
  readonly duration?: string;
  readonly warmup?: string;
  readonly seed?: string;
  readonly timeout?: string;
  readonly retries?: string;
  readonly module?: string;
  readonly message?: string;
  readonly json?: boolean;
  readonly app?: string;
  readonly dataDir?: string;
  readonly input?: string;
  readonly keys?: string;
  readonly zipf?: string;
  readonly gets?: string;
  readonly dels?: string;
}

/** Defaults of the optional options. */
export const LOAD_DEFAULTS = Object.freeze({
  actor: 1,
  sizeBytes: 64,
  durationMs: 10_000,
  warmupMs: 1_000,
  timeoutMs: 1_000,
  retries: 0,
});

/**
 * The options in the form a CLI wires them (flags, help text); `parseLoadOptions` does the
 * parsing, so the CLI can pass every value through as a string.
 */
export const LOAD_OPTION_HELP: readonly { readonly flags: string; readonly description: string }[] = [
  { flags: '--target <host:port>', description: 'the node (or echo server) to load, e.g. 127.0.0.1:9000' },
  {
    flags: '--rate <req/s>',
    description: 'open loop: Poisson arrivals at this rate (exclusive with --closed)',
  },
  { flags: '--closed <n>', description: 'closed loop: keep n requests outstanding (exclusive with --rate)' },
  {
    flags: '--actor <id|name>',
    description: `actor the requests go to: its id, or its name with --module (default ${LOAD_DEFAULTS.actor})`,
  },
  {
    flags: '--size <bytes>',
    description: `random request payload bytes, 0..${DEFAULT_MAX_FRAME_BYTES - HEADER_BYTES} (default ${LOAD_DEFAULTS.sizeBytes}; not with --message)`,
  },
  {
    flags: '--module <path>',
    description:
      'the actor module the node runs (as given to ipipe run): requests are encoded with its codec',
  },
  {
    flags: '--message <json>',
    description:
      'with --module: the request as JSON, e.g. \'{"type":"add","key":1,"amount":2}\'; bytes fields as {"$bytes":64} or {"$hex":"0a0b"}',
  },
  { flags: '--duration <time>', description: 'measured time, e.g. 10s or 500ms (default 10s)' },
  { flags: '--warmup <time>', description: 'unmeasured lead-in, e.g. 1s, or 0 (default 1s)' },
  { flags: '--timeout <time>', description: 'reply timeout per copy (default 1s)' },
  { flags: '--retries <n>', description: 'retransmissions per request (default 0)' },
  {
    flags: '--seed <n>',
    description: 'seed of arrival times and payloads (printed; same seed, same schedule)',
  },
  {
    flags: '--app <rkv|rta|dt>',
    description:
      "drive an application cluster started by `ipipe cluster up rkv|rta|dt` (its workload; results checked): rkv runs the paper's GET/SET mix over RESP for --duration and checks the history for linearizability, rta streams --duration of tweet time (default 5s), dt runs bank transfers for --duration; --closed sets the requests in flight / clients",
  },
  { flags: '--keys <n>', description: 'with --app rkv: key space, Zipf-ranked (default 1000000)' },
  { flags: '--zipf <s>', description: 'with --app rkv: Zipf exponent of key popularity (default 0.99)' },
  {
    flags: '--gets <fraction>',
    description: 'with --app rkv: fraction of GETs, the rest SETs (default 0.95)',
  },
  {
    flags: '--dels <fraction>',
    description:
      'with --app rkv: fraction of DELs, taken from the SETs (default 0; each answer checked as whether the key held a value)',
  },
  { flags: '--data-dir <dir>', description: 'with --app: the data directory given to `cluster up`' },
  {
    flags: '--input <file>',
    description:
      'with --app rta: stream your own tuples (newline-delimited JSON or CSV) instead of the generator; bad lines are skipped and reported with their line numbers',
  },
  { flags: '--json', description: 'print one JSON document instead of a table' },
];

/** `--target host:port` (IPv6 as `[::1]:9000`). */
export function parseTarget(value: string): string {
  try {
    splitHostPort(value, '--target');
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  return value.trim();
}

/** The largest `--rate`, requests per second: beyond it one process cannot pace the sends. */
export const MAX_RATE_PER_SEC = 10_000_000;
/** The longest `--duration` (and `--warmup`, `--timeout`), milliseconds: 24 h. */
export const MAX_DURATION_MS = 24 * 3_600_000;
/** The shortest duration, milliseconds: 1 µs, the finest unit the options take. */
export const MIN_DURATION_MS = 1e-3;
/** The lowest `--rate` that offers one request in the longest `--duration` (24 h): 1/86 400 req/s. */
const MIN_RATE_PER_SEC = 1_000 / MAX_DURATION_MS;

/**
 * `--rate R`: requests per second, a plain decimal (`2500`, `0.5`, `1e3`; not `0x10`, which
 * Number() would read as 16) from 1/86 400 (one request in the longest run) to 10 000 000. That
 * the rate gives at least one request in the run's own `--duration` is checked with it
 * ({@link parseLoadOptions}).
 */
export function parseRate(value: string): number {
  const rate = Number(value);
  if (!isDecimal(value) || !(rate >= MIN_RATE_PER_SEC && rate <= MAX_RATE_PER_SEC)) {
    throw new UsageError(
      `--rate must be a decimal number of requests per second from ${MIN_RATE_PER_SEC.toPrecision(3)} ` +
        `(one request in 24h) to ${MAX_RATE_PER_SEC}, e.g. 2500 or 0.5, got "${value}"`,
    );
  }
  return rate;
}

/** `--closed N`: requests kept outstanding, an integer in [1, 65536]. */
export function parseOutstanding(value: string): number {
  return parseIntegerOption('--closed', value, 1, 65_536);
}

/** `--size B`: payload bytes, within [0, maxFrameBytes − 24]. */
export function parsePayloadSize(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): (value: string) => number {
  return (value) => parseIntegerOption('--size', value, 0, maxFrameBytes - HEADER_BYTES);
}

/** `--actor id`: a u32 actor id. */
export function parseActorId(value: string): number {
  return parseIntegerOption('--actor', value, 0, 0xffff_ffff);
}

/** `--retries N`: retransmissions per request, in [0, 100]. */
export function parseRetries(value: string): number {
  return parseIntegerOption('--retries', value, 0, 100);
}

/** `--seed N`: a non-negative integer below 2^53. */
export function parseLoadSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(seed)) {
    throw new UsageError(`--seed must be a non-negative integer below 2^53, got "${value}"`);
  }
  return seed;
}

const MS_PER_UNIT: Readonly<Record<string, number>> = { us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 60e3 };

/**
 * A duration like `10s`, `500ms`, `250us` or `2m`, as milliseconds, from 1 µs to 24 h (a shorter
 * one, `0.0000001us`, is no time a run or a timeout can be). `allowZero` admits `0` (with or
 * without a unit), for warm-ups.
 */
export function parseDurationMs(option: string, allowZero = false): (value: string) => number {
  return (value) => {
    const text = value.trim();
    if (allowZero && /^0+(?:\.0+)?(?:us|µs|ms|s|m)?$/.test(text)) return 0;
    const match = /^(\d+(?:\.\d+)?)(us|µs|ms|s|m)$/.exec(text);
    const unit = match?.[2];
    const ms = match && unit ? Number(match[1]) * (MS_PER_UNIT[unit] as number) : Number.NaN;
    // The 1e-9 forgives a decimal's rounding (`0.000001s` × 1000 may land a hair under 1 µs).
    if (!(ms >= MIN_DURATION_MS * (1 - 1e-9) && ms <= MAX_DURATION_MS)) {
      throw new UsageError(
        `${option} must be a duration from 1us to 24h like 10s, 500ms or 250us` +
          `${allowZero ? ', or 0' : ''}, got "${value}"`,
      );
    }
    return ms;
  };
}

function parseIntegerOption(option: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
    throw new UsageError(`${option} must be an integer in [${min}, ${max}], got "${value}"`);
  }
  return n;
}

/** A request count or rate for a message: three significant digits, no exponent for everyday values. */
function formatRequests(value: number): string {
  return Number(value.toPrecision(3)).toString();
}

/** The mode from `--rate` / `--closed`: exactly one of them. */
export function resolveLoadMode(rate: number | undefined, closed: number | undefined): LoadMode {
  if (rate !== undefined && closed !== undefined) {
    throw new UsageError(
      '--rate and --closed are mutually exclusive: --rate R offers R req/s open-loop, --closed N keeps N outstanding',
    );
  }
  if (rate !== undefined) return { kind: 'open', ratePerSec: rate };
  if (closed !== undefined) return { kind: 'closed', outstanding: closed };
  throw new UsageError('choose a load: --rate R (open loop, R req/s) or --closed N (N requests outstanding)');
}

/**
 * Parses and validates every option at once. `seed` defaults to `freshSeed()` from the caller
 * (the CLI prints it), so a run can always be repeated.
 */
export function parseLoadOptions(raw: RawLoadOptions, freshSeed: () => number): LoadCommandOptions {
  for (const [flag, value] of [
    ['--keys', raw.keys],
    ['--zipf', raw.zipf],
    ['--gets', raw.gets],
    ['--dels', raw.dels],
    ['--input', raw.input],
  ] as const) {
    if (value !== undefined)
      throw new UsageError(`${flag} belongs to --app (a cluster's workload); add --app or drop ${flag}`);
  }
  if (raw.target === undefined) throw new UsageError('--target host:port is required (the node to load)');
  const mode = resolveLoadMode(
    raw.rate === undefined ? undefined : parseRate(raw.rate),
    raw.closed === undefined ? undefined : parseOutstanding(raw.closed),
  );
  if ((raw.module === undefined) !== (raw.message === undefined)) {
    throw new UsageError(
      '--module and --message go together: --module names the actor module, --message the request in its schema',
    );
  }
  if (raw.message !== undefined && raw.size !== undefined) {
    throw new UsageError(
      '--size sets random payloads; with --message the request is the encoded message: drop --size',
    );
  }
  // With --module the actor may be named; resolveLoadRequest turns the name into its id.
  const named = raw.module !== undefined && raw.actor !== undefined && !/^\d+$/.test(raw.actor.trim());
  const durationMs =
    raw.duration === undefined ? LOAD_DEFAULTS.durationMs : parseDurationMs('--duration')(raw.duration);
  if (mode.kind === 'open' && (mode.ratePerSec * durationMs) / 1_000 < 1) {
    // Open loop sends at R req/s for the measured duration: below one request it measures nothing.
    throw new UsageError(
      `--rate ${raw.rate} over --duration ${raw.duration ?? '10s'} offers ${formatRequests((mode.ratePerSec * durationMs) / 1_000)} ` +
        `requests, less than one: give a --rate of at least ${formatRequests(1_000 / durationMs)} req/s for that duration, ` +
        'or a longer --duration',
    );
  }
  return {
    target: parseTarget(raw.target),
    actor: raw.actor === undefined || named ? LOAD_DEFAULTS.actor : parseActorId(raw.actor),
    mode,
    payloadBytes: raw.size === undefined ? LOAD_DEFAULTS.sizeBytes : parsePayloadSize()(raw.size),
    durationMs,
    warmupMs:
      raw.warmup === undefined ? LOAD_DEFAULTS.warmupMs : parseDurationMs('--warmup', true)(raw.warmup),
    seed: raw.seed === undefined ? freshSeed() : parseLoadSeed(raw.seed),
    timeoutMs:
      raw.timeout === undefined ? LOAD_DEFAULTS.timeoutMs : parseDurationMs('--timeout')(raw.timeout),
    retries: raw.retries === undefined ? LOAD_DEFAULTS.retries : parseRetries(raw.retries),
    json: raw.json === true,
  };
}

/**
 * `--module`/`--message`: loads the module the node runs, finds the actor (by the id or name
 * given to `--actor`, numbered as `ipipe run` numbers them), and encodes the message with the
 * actor's codec — so the node decodes every request instead of refusing random bytes.
 */
export async function resolveLoadRequest(
  options: LoadCommandOptions,
  raw: RawLoadOptions,
): Promise<LoadCommandOptions> {
  if (raw.module === undefined || raw.message === undefined) return options;
  const catalog = await catalogOf(raw.module);
  const wanted = raw.actor?.trim();
  const entry =
    wanted === undefined
      ? catalog.length === 1
        ? catalog[0]
        : undefined
      : catalog.find((e) => e.name === wanted || String(e.id) === wanted);
  if (!entry) {
    const known = catalog.map((e) => `${e.id} (${e.name})`).join(', ');
    throw new UsageError(
      wanted === undefined
        ? `${raw.module} has several actors: choose one with --actor <id|name> (${known})`
        : `--actor ${wanted}: ${raw.module} has no such actor; it has ${known}`,
    );
  }
  const [definition] = await loadDefinitions([entry]);
  if (!definition) throw new UsageError(`could not load actor ${entry.name} from ${raw.module}`);
  const codec = definition.messages;
  let message: unknown;
  try {
    message = JSON.parse(raw.message, bytesReviver(options.seed));
  } catch (error) {
    throw new UsageError(`--message is not valid JSON (${(error as Error).message}): ${raw.message}`);
  }
  let bytes: Uint8Array;
  try {
    bytes = codec.encode(message as never);
  } catch (error) {
    throw new UsageError(
      `--message does not fit actor ${entry.name}'s messages (${(error as Error).message}); its schema: ${codec.describe()}`,
    );
  }
  const maxPayload = DEFAULT_MAX_FRAME_BYTES - HEADER_BYTES;
  if (bytes.length > maxPayload) {
    throw new UsageError(
      `--message encodes to ${bytes.length} B, more than a frame carries (${maxPayload} B)`,
    );
  }
  return {
    ...options,
    actor: entry.id,
    payloadBytes: bytes.length,
    request: { bytes, description: `${entry.name} ${raw.message}` },
  };
}

/** `{"$bytes": n}` → n seeded pseudo-random bytes; `{"$hex": "0a0b"}` → those bytes. */
function bytesReviver(seed: number): (key: string, value: unknown) => unknown {
  let state = seed >>> 0 || 1;
  return (_key, value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length !== 1) return value;
    if (keys[0] === '$bytes') {
      const count = record['$bytes'];
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > 65_536) {
        throw new UsageError(`{"$bytes": n} needs an integer n in [0, 65536], got ${JSON.stringify(count)}`);
      }
      const out = new Uint8Array(count);
      for (let i = 0; i < count; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        out[i] = state & 0xff;
      }
      return out;
    }
    if (keys[0] === '$hex') {
      const hex = record['$hex'];
      if (typeof hex !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(hex)) {
        throw new UsageError(`{"$hex": "…"} needs an even number of hex digits, got ${JSON.stringify(hex)}`);
      }
      return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
    }
    return value;
  };
}

/**
 * What the requests carried: seeded random bytes (which every actor's codec refuses, each answered
 * IPIPE_ERR_CODEC_DECODE and counted by the node as a `decode` drop; only a raw UDP echo server
 * serves them), or an encoded message of the actor's codec.
 */
export type LoadPayload =
  | { readonly kind: 'random-bytes'; readonly bytes: number | null }
  | { readonly kind: 'message'; readonly message: string; readonly bytes: number };

function payloadOf(result: LoadResult, request: LoadRequest | undefined): LoadPayload {
  return request === undefined
    ? { kind: 'random-bytes', bytes: result.payloadBytes ?? null }
    : { kind: 'message', message: request.description, bytes: request.bytes.length };
}

/** The JSON document `--json` prints. */
export function loadDocument(
  result: LoadResult,
  request?: LoadRequest,
): { readonly schemaVersion: 1; readonly command: 'load'; readonly payload: LoadPayload } & LoadResult {
  return { schemaVersion: 1, command: 'load', payload: payloadOf(result, request), ...result };
}

/** The human-readable form: a summary line, then counts and latencies as tables. */
export function renderLoad(result: LoadResult, request?: LoadRequest): string {
  const mode =
    result.mode.kind === 'open'
      ? `open loop, Poisson ${formatNumber(result.mode.ratePerSec)} req/s`
      : `closed loop, ${result.mode.outstanding} outstanding`;
  const lines = [
    paint('bold', `load → ${result.target}, actor ${result.actorId}: ${mode}`),
    `${request === undefined ? `payload: ${result.payloadBytes ?? 'per request'} random bytes` : `request ${request.description} (${request.bytes.length} B)`}, warm-up ${result.warmupMs} ms, measured ${result.durationMs} ms, seed ${result.seed}`,
    ...(request === undefined
      ? [
          "  (not a message of the actor's codec: an ipipe actor refuses each as IPIPE_ERR_CODEC_DECODE; --module and --message send real ones)",
        ]
      : []),
    '',
    table(
      ['sent', 'answered', 'timeouts', 'errors', 'throughput req/s', 'offered req/s', 'achieved req/s'],
      [
        [
          result.sent,
          result.answered,
          result.timeouts,
          Object.values(result.errors).reduce((a, b) => a + b, 0),
          Math.round(result.throughputPerSec),
          result.offeredRatePerSec === null ? '—' : Math.round(result.offeredRatePerSec),
          Math.round(result.achievedRatePerSec),
        ],
      ],
    ),
    '',
  ];
  const latencyRows: (string | number)[][] = [];
  const row = (name: string, s: LoadResult['latency']) => {
    if (s !== null) latencyRows.push([name, s.p50Us, s.p90Us, s.p99Us, s.p999Us, s.maxUs, s.meanUs]);
  };
  row(result.mode.kind === 'open' ? 'latency (from intended send)' : 'latency', result.latency);
  row('send lag behind schedule', result.sendLag);
  if (latencyRows.length > 0) {
    lines.push(table(['µs', 'p50', 'p90', 'p99', 'p99.9', 'max', 'mean'], latencyRows));
  } else {
    lines.push('no request was answered: no latency to report');
  }
  const errorEntries = Object.entries(result.errors);
  if (errorEntries.length > 0) {
    lines.push(
      '',
      table(
        ['error code', 'count'],
        errorEntries.map(([code, count]) => [code, count]),
      ),
    );
  }
  const drops = Object.entries(result.client.drops).filter(([, count]) => count > 0);
  if (drops.length > 0 || result.client.retransmits > 0 || result.client.lateReplies > 0) {
    lines.push(
      '',
      `client: ${result.client.retransmits} retransmits, ${result.client.lateReplies} late replies` +
        (drops.length > 0 ? `, dropped ${drops.map(([r, c]) => `${c} ${r}`).join(', ')}` : ''),
    );
  }
  return lines.join('\n');
}

/** Where the command's result goes: stdout by default (tests pass their own). */
export interface LoadCommandOutput {
  text(text: string): void;
  json(document: unknown): void;
}

const STDOUT: LoadCommandOutput = { text: writeOut, json: writeJson };

/** Runs the load and prints the result (stdout); progress and the seed go to stderr. */
export async function loadCommand(
  options: LoadCommandOptions,
  output: LoadCommandOutput = STDOUT,
): Promise<LoadResult> {
  process.stderr.write(`ipipe load: seed ${options.seed}\n`);
  const bar = progressBar(`loading ${options.target}`);
  let result: LoadResult;
  try {
    result = await runLoad({
      target: options.target,
      actor: options.actor,
      mode: options.mode,
      ...(options.request === undefined
        ? { payloadBytes: options.payloadBytes }
        : { makePayload: () => (options.request as LoadRequest).bytes }),
      durationMs: options.durationMs,
      warmupMs: options.warmupMs,
      seed: options.seed,
      timeoutMs: options.timeoutMs,
      retries: options.retries,
      onProgress: (fraction) => bar.update(fraction),
    });
  } finally {
    bar.done();
  }
  if (options.json) output.json(loadDocument(result, options.request));
  else output.text(renderLoad(result, options.request));
  return result;
}
