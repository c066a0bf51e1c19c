/**
 * `ipipe load --app rkv`: the paper's RKV workload (16-byte keys, 95% GET / 5% SET, Zipf 0.99 over
 * 1 M keys) against a cluster started by `ipipe cluster up rkv`, over its RESP ports, with the
 * client history checked for linearizability at the end (src/apps/rkv/cluster/resp-load.ts).
 * Exit 0 when the history is linearizable, 1 when it is not or the checker could not decide,
 * 3 when no replica answers.
 */

import { resolve } from 'node:path';
import { ClusterNotRunningError } from '../../apps/rkv/cluster/errors.ts';
import { type RkvLoadResult, runRkvRespLoad } from '../../apps/rkv/cluster/resp-load.ts';
import { readClusterState } from '../../apps/rkv/cluster/supervisor.ts';
import { RespClient } from '../../apps/rkv/resp/client.ts';
import { UsageError } from '../../errors.ts';
import { isDecimal } from '../options.ts';
import { paint, table, writeJson, writeOut } from '../output.ts';
import { parseDurationMs, parseLoadSeed, parseOutstanding } from './load.ts';

export interface RkvLoadCommandOptions {
  readonly dataDir: string;
  readonly clients: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly timeoutMs: number;
  readonly keys: number;
  readonly zipfExponent: number;
  readonly getFraction: number;
  readonly deleteFraction: number;
  readonly valueBytes: number;
  readonly seed: number;
  readonly json: boolean;
}

export const RKV_LOAD_DEFAULTS = Object.freeze({
  clients: 16,
  durationMs: 10_000,
  warmupMs: 1_000,
  timeoutMs: 6_000,
  keys: 1_000_000,
  zipfExponent: 0.99,
  getFraction: 0.95,
  deleteFraction: 0,
  valueBytes: 64,
});

/** The raw flags `ipipe load --app rkv` reads (strings as commander gives them). */
export interface RawRkvLoadOptions {
  readonly closed?: string;
  readonly duration?: string;
  readonly warmup?: string;
  readonly timeout?: string;
  readonly size?: string;
  readonly keys?: string;
  readonly zipf?: string;
  readonly gets?: string;
  readonly dels?: string;
  readonly seed?: string;
  readonly json?: boolean;
  readonly input?: string;
}

/** A plain decimal (not `0x10`, which Number() reads as 16) for which `ok` holds. */
function parseNumberIn(flag: string, value: string, ok: (n: number) => boolean, what: string): number {
  const n = Number(value);
  if (!isDecimal(value) || !ok(n)) throw new UsageError(`${flag} must be ${what}, got "${value}"`);
  return n;
}

/** Validates the flags; UsageError names the flag and what it takes. */
export function parseRkvLoadOptions(
  raw: RawRkvLoadOptions,
  dataDir: string,
  freshSeed: () => number,
): RkvLoadCommandOptions {
  if (raw.input !== undefined) {
    throw new UsageError('--input is for --app rta (a tuple file); RKV runs the GET/SET workload');
  }
  const d = RKV_LOAD_DEFAULTS;
  const parsed: RkvLoadCommandOptions = {
    dataDir,
    clients: raw.closed === undefined ? d.clients : parseOutstanding(raw.closed),
    durationMs: raw.duration === undefined ? d.durationMs : parseDurationMs('--duration')(raw.duration),
    warmupMs: raw.warmup === undefined ? d.warmupMs : parseDurationMs('--warmup', true)(raw.warmup),
    timeoutMs: raw.timeout === undefined ? d.timeoutMs : parseDurationMs('--timeout')(raw.timeout),
    valueBytes:
      raw.size === undefined
        ? d.valueBytes
        : parseNumberIn(
            '--size',
            raw.size,
            (n) => Number.isInteger(n) && n >= 16 && n <= 1 << 20,
            'value bytes, an integer in [16, 1048576]',
          ),
    keys:
      raw.keys === undefined
        ? d.keys
        : parseNumberIn(
            '--keys',
            raw.keys,
            (n) => Number.isSafeInteger(n) && n >= 1 && n <= 1e11,
            'an integer in [1, 10^11]',
          ),
    zipfExponent:
      raw.zipf === undefined
        ? d.zipfExponent
        : parseNumberIn('--zipf', raw.zipf, (n) => n > 0 && n < 10, 'a number in (0, 10)'),
    getFraction:
      raw.gets === undefined
        ? d.getFraction
        : parseNumberIn('--gets', raw.gets, (n) => n >= 0 && n <= 1, 'a fraction in [0, 1]'),
    deleteFraction:
      raw.dels === undefined
        ? d.deleteFraction
        : parseNumberIn('--dels', raw.dels, (n) => n >= 0 && n <= 1, 'a fraction in [0, 1]'),
    seed: raw.seed === undefined ? freshSeed() : parseLoadSeed(raw.seed),
    json: raw.json === true,
  };
  if (parsed.getFraction + parsed.deleteFraction > 1) {
    throw new UsageError(
      `--gets ${parsed.getFraction} and --dels ${parsed.deleteFraction} add up to more than 1 (the rest are SETs)`,
    );
  }
  return parsed;
}

/** Exit code when no replica of the cluster accepts a connection. */
const EXIT_NOT_RUNNING = 3;

export async function rkvLoadCommand(options: RkvLoadCommandOptions): Promise<number> {
  const dataDir = resolve(options.dataDir);
  const state = readClusterState(dataDir);
  const host = state.host;
  const reachable: number[] = [];
  for (const replica of state.replicas) {
    try {
      (await RespClient.connect(replica.respPort, { host })).close();
      reachable.push(replica.respPort);
    } catch {
      process.stderr.write(
        `ipipe: replica ${replica.replicaId} (RESP ${host}:${replica.respPort}) does not answer\n`,
      );
    }
  }
  if (reachable.length === 0) {
    process.stderr.write(
      `ipipe: ${new ClusterNotRunningError(dataDir, 'no replica accepts RESP connections').message}\n`,
    );
    return EXIT_NOT_RUNNING;
  }
  if (!options.json) {
    process.stderr.write(
      `ipipe: RKV workload on ${reachable.length} replica(s): ${options.clients} clients, ` +
        `${Math.round(options.getFraction * 100)}% GET${options.deleteFraction > 0 ? `, ${Math.round(options.deleteFraction * 100)}% DEL` : ''}, Zipf ${options.zipfExponent} over ${options.keys.toLocaleString('en-US')} keys, ` +
        `${options.valueBytes} B values, ${options.warmupMs} ms warm-up + ${options.durationMs} ms (seed ${options.seed})…\n`,
    );
  }
  const result = await runRkvRespLoad({
    ports: reachable,
    host,
    clients: options.clients,
    durationMs: options.durationMs,
    warmupMs: options.warmupMs,
    timeoutMs: options.timeoutMs,
    keys: options.keys,
    zipfExponent: options.zipfExponent,
    getFraction: options.getFraction,
    deleteFraction: options.deleteFraction,
    valueBytes: options.valueBytes,
    seed: options.seed,
  });
  if (options.json) writeJson({ schemaVersion: 1, app: 'rkv', ...result });
  else writeOut(renderRkvLoad(result));
  return result.check.verdict === 'linearizable' ? 0 : 1;
}

export function renderRkvLoad(result: RkvLoadResult): string {
  const lines: string[] = [];
  const us = (n: number) => Math.round(n).toLocaleString('en-US');
  lines.push(
    table(
      ['  op', 'answered', 'avg µs', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs'],
      (
        [
          ['GET', result.get],
          ['SET', result.set],
          ...(result.deleteFraction > 0 ? ([['DEL', result.del]] as const) : []),
        ] as const
      ).map(([name, s]) => [
        `  ${name}`,
        s.count,
        us(s.avgUs),
        us(s.p50Us),
        us(s.p99Us),
        us(s.p999Us),
        us(s.maxUs),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    `  ${Math.round(result.opsPerSec).toLocaleString('en-US')} ops/s over ${result.seconds.toFixed(2)} s ` +
      `(${result.clients} clients on ${result.replicas} replica(s)); GET hits ${result.getHits.toLocaleString('en-US')} of ${result.get.count.toLocaleString('en-US')}; ` +
      (result.deleteFraction > 0
        ? `DEL hits ${result.deleteHits.toLocaleString('en-US')} of ${result.del.count.toLocaleString('en-US')}; `
        : '') +
      `${result.keysTouched.toLocaleString('en-US')} keys touched (tag ${result.keyTag})`,
  );
  const reasons = Object.entries(result.unknownByReason)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  lines.push(
    `  whole run: ${result.issued.toLocaleString('en-US')} issued, ${result.answered.toLocaleString('en-US')} answered, ` +
      `${result.unknown} with unknown outcome${reasons === '' ? '' : ` (${reasons})`}, ${result.reconnects} reconnects`,
  );
  const verdict = result.check.verdict;
  lines.push(
    paint(
      verdict === 'linearizable' ? 'green' : 'red',
      `  linearizability: ${verdict} (${result.check.steps.toLocaleString('en-US')} search steps, ${Math.round(result.check.ms)} ms)`,
    ),
  );
  if (result.check.detail !== undefined) lines.push(result.check.detail);
  return lines.join('\n');
}
