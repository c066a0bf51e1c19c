/**
 * The paper's RKV workload, live, over RESP (issue 5 §4: "runnable … live with `ipipe load`"):
 * 16-byte keys, 95% GET / 5% SET, Zipf 0.99 over 1 million keys, a fixed value size, from N
 * closed-loop connections dealt over the cluster's replicas (followers forward to the leader, as
 * they do for redis-benchmark). Every operation goes into a history, and the run ends with the
 * linearizability checker (src/apps/rkv/check) over it: the numbers come with a verdict.
 *
 *   keys     `<tag><index>`, 16 bytes: a 5-letter tag drawn per run (not from the seed: a run
 *            repeated with the same seed must not find its keys written), the Zipf rank as 11
 *            digits. The tag keeps one run's keys apart from anything earlier runs left in the
 *            data directory, so every key starts absent and the checker's model starts from null.
 *   values   `<client>.<n>.` padded with '-' to the value size: unique per SET, so a GET's answer
 *            names the SET it saw.
 *   deletes  optional (`deleteFraction`, default 0: the paper's workload has none): DEL of one key,
 *            its answer (:1 / :0) checked as whether the key held a value at that point.
 *   outcomes a reply is `ok`; an error reply (-TRYAGAIN after the front gave up, -ERR …), a timeout
 *            or a dead connection is `unknown` (the command may have applied or not) and the
 *            client reconnects, moving to the next replica when its own is gone.
 * Latency is counted for `ok` replies after the warm-up; the checker sees the whole history.
 */

import { randomInt } from 'node:crypto';
import * as hdr from 'hdr-histogram-js';
import { ConfigError } from '../../../errors.ts';
import { ZipfSampler } from '../../../platform/sim/distributions.ts';
import { Random } from '../../../random.ts';
import {
  type KvHistoryOp,
  type KvInput,
  type KvKeyInput,
  type KvOutput,
  kvModel,
} from '../check/kv-model.ts';
import { type CheckResult, checkLinearizability, describeCheckResult } from '../check/linearizability.ts';
import { RespClient } from '../resp/client.ts';

export interface RkvLoadOptions {
  /** RESP ports of the replicas (all on `host`). */
  readonly ports: readonly number[];
  readonly host?: string;
  /** Closed-loop connections, one command outstanding each, dealt round-robin over `ports`. */
  readonly clients: number;
  readonly durationMs: number;
  /** Unmeasured lead-in (its operations are still checked). Default 1000 ms. */
  readonly warmupMs?: number;
  /** Key space (Zipf ranks). Default 1 000 000. */
  readonly keys?: number;
  /** Zipf exponent. Default 0.99. */
  readonly zipfExponent?: number;
  /** Fraction of GETs. Default 0.95. */
  readonly getFraction?: number;
  /** Fraction of DELs (taken from the writes: SETs are 1 − gets − deletes). Default 0. */
  readonly deleteFraction?: number;
  /** Bytes per value (≥ 16). Default 64. */
  readonly valueBytes?: number;
  readonly seed: number;
  /** Per-command timeout. Default 6000 ms (the front answers -TRYAGAIN after 5 s). */
  readonly timeoutMs?: number;
  /** Search budget for the checker. Default 60 000 ms. */
  readonly checkTimeLimitMs?: number;
  /** Width of the timeline's bins (answers counted by when they came). Default 250 ms. */
  readonly timelineBinMs?: number;
}

export interface LatencySummary {
  readonly count: number;
  readonly avgUs: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly p999Us: number;
  readonly maxUs: number;
}

export interface RkvLoadResult {
  readonly seed: number;
  readonly keyTag: string;
  readonly clients: number;
  readonly replicas: number;
  readonly keys: number;
  readonly zipfExponent: number;
  readonly getFraction: number;
  readonly deleteFraction: number;
  readonly valueBytes: number;
  /** Measured window, seconds. */
  readonly seconds: number;
  /** `ok` operations answered in the measured window, per second. */
  readonly opsPerSec: number;
  readonly get: LatencySummary;
  readonly set: LatencySummary;
  readonly del: LatencySummary;
  /** GETs in the window that found a value. */
  readonly getHits: number;
  /** DELs in the window that found the key (answered :1). */
  readonly deleteHits: number;
  /** Whole run (warm-up included): operations issued, answered, and left with an unknown outcome. */
  readonly issued: number;
  readonly answered: number;
  readonly unknown: number;
  /** Why outcomes were unknown, by reason (`TRYAGAIN`, `timeout`, `closed`, …). */
  readonly unknownByReason: Readonly<Record<string, number>>;
  readonly reconnects: number;
  /** Answers by the time they came, from the start of the warm-up: a stall shows as empty bins. */
  readonly timeline: { readonly binMs: number; readonly answered: readonly number[] };
  /** Distinct keys the run touched. */
  readonly keysTouched: number;
  readonly check: {
    readonly verdict: CheckResult<KvInput, KvOutput>['verdict'];
    readonly steps: number;
    readonly ms: number;
    /** The checker's explanation when not linearizable (or why it could not decide). */
    readonly detail?: string;
  };
}

const KEY_BYTES = 16;
const TAG_CHARS = 5;
const TAG_ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

function validate(options: RkvLoadOptions): Required<Omit<RkvLoadOptions, 'host'>> & { host: string } {
  const resolved = {
    ports: options.ports,
    host: options.host ?? '127.0.0.1',
    clients: options.clients,
    durationMs: options.durationMs,
    warmupMs: options.warmupMs ?? 1_000,
    keys: options.keys ?? 1_000_000,
    zipfExponent: options.zipfExponent ?? 0.99,
    getFraction: options.getFraction ?? 0.95,
    deleteFraction: options.deleteFraction ?? 0,
    valueBytes: options.valueBytes ?? 64,
    seed: options.seed,
    timeoutMs: options.timeoutMs ?? 6_000,
    checkTimeLimitMs: options.checkTimeLimitMs ?? 60_000,
    timelineBinMs: options.timelineBinMs ?? 250,
  };
  if (resolved.ports.length === 0) throw new ConfigError('ports', 'no replica RESP port to send to');
  if (!(Number.isInteger(resolved.clients) && resolved.clients >= 1 && resolved.clients <= 4096)) {
    throw new ConfigError('clients', `must be an integer in [1, 4096], got ${resolved.clients}`);
  }
  if (!(resolved.durationMs > 0))
    throw new ConfigError('durationMs', `must be > 0, got ${resolved.durationMs}`);
  if (!(resolved.timelineBinMs >= 1)) {
    throw new ConfigError('timelineBinMs', `must be ≥ 1 ms, got ${resolved.timelineBinMs}`);
  }
  if (!(resolved.warmupMs >= 0)) throw new ConfigError('warmupMs', `must be ≥ 0, got ${resolved.warmupMs}`);
  if (!(Number.isSafeInteger(resolved.keys) && resolved.keys >= 1 && resolved.keys <= 1e11)) {
    throw new ConfigError('keys', `must be an integer in [1, 10^11], got ${resolved.keys}`);
  }
  if (!(resolved.zipfExponent > 0 && resolved.zipfExponent < 10)) {
    throw new ConfigError('zipfExponent', `must be in (0, 10), got ${resolved.zipfExponent}`);
  }
  if (!(resolved.getFraction >= 0 && resolved.getFraction <= 1)) {
    throw new ConfigError('getFraction', `must be in [0, 1], got ${resolved.getFraction}`);
  }
  if (!(resolved.deleteFraction >= 0 && resolved.getFraction + resolved.deleteFraction <= 1)) {
    throw new ConfigError(
      'deleteFraction',
      `must be ≥ 0 with gets + deletes ≤ 1, got ${resolved.deleteFraction} beside ${resolved.getFraction} gets`,
    );
  }
  if (
    !(Number.isInteger(resolved.valueBytes) && resolved.valueBytes >= 16 && resolved.valueBytes <= 1 << 20)
  ) {
    throw new ConfigError(
      'valueBytes',
      `must be an integer in [16, 1 MiB] (values name their client and sequence), got ${resolved.valueBytes}`,
    );
  }
  return resolved;
}

/** Runs the workload and checks its history. Throws ConfigError for bad options. */
export async function runRkvRespLoad(options: RkvLoadOptions): Promise<RkvLoadResult> {
  const o = validate(options);
  const random = new Random(o.seed, 'rkv-resp-load');
  let keyTag = '';
  for (let i = 0; i < TAG_CHARS; i++) keyTag += TAG_ALPHABET[randomInt(TAG_ALPHABET.length)];
  const keyOf = (rank: number) => keyTag + String(rank).padStart(KEY_BYTES - TAG_CHARS, '0');
  const zipf = new ZipfSampler(o.keys, o.zipfExponent);
  const histogram = () =>
    hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 60_000_000,
      numberOfSignificantValueDigits: 3,
    });
  const getLatency = histogram();
  const setLatency = histogram();
  const delLatency = histogram();
  const history: KvHistoryOp[] = [];
  const unknownByReason: Record<string, number> = {};
  let issued = 0;
  let answered = 0;
  let windowOps = 0;
  let getHits = 0;
  let deleteHits = 0;
  let reconnects = 0;
  const timeline: number[] = [];

  const started = performance.now();
  const measureFrom = started + o.warmupMs;
  const endAt = measureFrom + o.durationMs;

  const runClient = async (clientId: number): Promise<void> => {
    const stream = random.fork(`client-${clientId}`);
    let replica = clientId % o.ports.length;
    let connection: RespClient | null = null;
    let sequence = 0;
    while (performance.now() < endAt) {
      if (connection === null || connection.closed) {
        if (connection !== null) {
          reconnects++;
          await new Promise((wake) => setTimeout(wake, 100));
        }
        try {
          connection = await RespClient.connect(o.ports[replica] as number, {
            host: o.host,
            timeoutMs: o.timeoutMs,
          });
        } catch {
          // Gone (killed, restarting): try the next replica after a pause.
          replica = (replica + 1) % o.ports.length;
          connection = null;
          reconnects++;
          await new Promise((wake) => setTimeout(wake, 100));
          continue;
        }
      }
      const key = keyOf(zipf.sample(stream));
      const draw = stream.nextDouble();
      const input: KvKeyInput =
        draw < o.getFraction
          ? { op: 'get', key }
          : draw < o.getFraction + o.deleteFraction
            ? { op: 'del', key }
            : { op: 'put', key, value: `${clientId}.${sequence++}.`.padEnd(o.valueBytes, '-') };
      const isGet = input.op === 'get';
      issued++;
      const callAt = performance.now();
      let reason: string;
      try {
        const reply =
          input.op === 'put'
            ? await connection.command('SET', key, input.value)
            : await connection.command(input.op === 'get' ? 'GET' : 'DEL', key);
        const returnAt = performance.now();
        const output = outputOf(input, reply);
        if (output !== undefined) {
          history.push({ clientId, input, callAt, status: 'ok', output, returnAt });
          answered++;
          const bin = Math.floor((returnAt - started) / o.timelineBinMs);
          while (timeline.length <= bin) timeline.push(0);
          timeline[bin] = (timeline[bin] as number) + 1;
          if (callAt >= measureFrom && returnAt <= endAt) {
            windowOps++;
            const us = Math.max(1, Math.round((returnAt - callAt) * 1_000));
            (isGet ? getLatency : input.op === 'del' ? delLatency : setLatency).recordValue(us);
            if (isGet && reply !== null) getHits++;
            if (output.op === 'del' && output.existed) deleteHits++;
          }
          continue;
        }
        reason =
          typeof reply === 'object' && reply !== null && 'error' in reply
            ? (reply.error.split(' ')[0] ?? 'ERR')
            : 'unexpected-reply';
      } catch (error) {
        reason = error instanceof Error && 'failure' in error ? String(error.failure) : 'error';
        connection?.close();
        if (reason === 'closed') replica = (replica + 1) % o.ports.length;
      }
      history.push({ clientId, input, callAt, status: 'unknown' });
      unknownByReason[reason] = (unknownByReason[reason] ?? 0) + 1;
    }
    connection?.close();
  };

  await Promise.all(Array.from({ length: o.clients }, (_, clientId) => runClient(clientId)));
  const seconds = Math.min(o.durationMs, performance.now() - measureFrom) / 1_000;

  const checkStarted = performance.now();
  const checked = checkLinearizability(kvModel, history, { timeLimitMs: o.checkTimeLimitMs });
  const check = {
    verdict: checked.verdict,
    steps: checked.steps,
    ms: performance.now() - checkStarted,
    ...(checked.verdict === 'linearizable' ? {} : { detail: describeCheckResult(kvModel, checked) }),
  };
  const summary = (h: hdr.Histogram): LatencySummary => ({
    count: h.totalCount,
    avgUs: h.totalCount === 0 ? 0 : h.mean,
    // hdr reports a bucket's highest equivalent value, which can exceed the largest recorded one.
    p50Us: Math.min(h.maxValue, h.getValueAtPercentile(50)),
    p99Us: Math.min(h.maxValue, h.getValueAtPercentile(99)),
    p999Us: Math.min(h.maxValue, h.getValueAtPercentile(99.9)),
    maxUs: h.maxValue,
  });
  return {
    seed: o.seed,
    keyTag,
    clients: o.clients,
    replicas: o.ports.length,
    keys: o.keys,
    zipfExponent: o.zipfExponent,
    getFraction: o.getFraction,
    deleteFraction: o.deleteFraction,
    valueBytes: o.valueBytes,
    seconds,
    opsPerSec: seconds > 0 ? windowOps / seconds : 0,
    get: summary(getLatency),
    set: summary(setLatency),
    del: summary(delLatency),
    getHits,
    deleteHits,
    issued,
    answered,
    unknown: issued - answered,
    unknownByReason,
    reconnects,
    timeline: { binMs: o.timelineBinMs, answered: timeline },
    keysTouched: new Set(history.flatMap((op) => (op.input.op === 'scan' ? [] : [op.input.key]))).size,
    check,
  };
}

/** The checker's view of a reply, or undefined when it is not a well-formed answer to `input`. */
function outputOf(input: KvKeyInput, reply: unknown): KvOutput | undefined {
  switch (input.op) {
    case 'get':
      return reply === null || typeof reply === 'string' ? { op: 'get', value: reply } : undefined;
    case 'put':
      return reply === 'OK' ? { op: 'put' } : undefined;
    case 'del':
      return reply === 0 || reply === 1 ? { op: 'del', existed: reply === 1 } : undefined;
    case 'cput':
      return reply === 'OK' || reply === null ? { op: 'cput', written: reply === 'OK' } : undefined;
  }
}
