/**
 * Smoke test: Debian's `redis-benchmark` (redis-tools) drives the RESP front unchanged — its
 * start-up CONFIG GETs, 10 parallel clients, random keys, with and without pipelining — and every
 * request is answered. Throughput is bench/resp.bench.ts's business, not this test's: here only
 * "it ran, it counted, nothing failed". Skipped, with the reason, where redis-benchmark is absent.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  MemoryKvBackend,
  type RespServerHandle,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { findExecutable, runProcess } from './helpers.ts';

const REDIS_BENCHMARK = findExecutable('redis-benchmark');
const skip =
  REDIS_BENCHMARK === null
    ? 'redis-benchmark not found on PATH (Debian: apt-get install redis-tools); bench/resp.bench.ts skips too'
    : false;

let server: RespServerHandle;
let backend: MemoryKvBackend;

before(async () => {
  backend = new MemoryKvBackend();
  server = await startRespServer({ port: 0, backend });
});

after(() => server.close());

/** Parses redis-benchmark's --csv output into test name → requests per second. */
function parseCsv(output: string): Map<string, number> {
  const rates = new Map<string, number>();
  for (const line of output.split('\n')) {
    const cells = line.split(',').map((cell) => cell.replace(/^"|"$/g, ''));
    const rate = Number(cells[1]);
    if (cells.length >= 2 && cells[0] !== 'test' && Number.isFinite(rate)) rates.set(cells[0]!, rate);
  }
  return rates;
}

function benchmark(extra: readonly string[]) {
  return runProcess(
    REDIS_BENCHMARK!,
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(server.address.port),
      '-t',
      'set,get',
      '-c',
      '10',
      '-r',
      '100',
      '--csv',
      ...extra,
    ],
    { timeoutMs: 60_000 },
  );
}

for (const pipeline of [1, 16]) {
  test(`-t set,get -n 2000 -c 10 -r 100 -P ${pipeline}: every request answered`, { skip }, async () => {
    const processed = server.stats().commandsProcessed;
    const errors = server.stats().errorReplies;
    const result = await benchmark(['-n', '2000', '-P', String(pipeline)]);
    assert.equal(result.code, 0, `redis-benchmark exited ${result.code}: ${result.stderr}`);
    const rates = parseCsv(result.stdout);
    assert.ok((rates.get('SET') ?? 0) > 0, `a SET rate in ${JSON.stringify(result.stdout)}`);
    assert.ok((rates.get('GET') ?? 0) > 0, `a GET rate in ${JSON.stringify(result.stdout)}`);
    const stats = server.stats();
    // 2000 SETs + 2000 GETs, plus the CONFIG GETs each run sends first.
    assert.ok(stats.commandsProcessed - processed >= 4000, `${stats.commandsProcessed - processed} commands`);
    assert.equal(stats.errorReplies, errors, 'no error replies');
    // -r 100: keys are key:000000000000 … key:000000000099.
    assert.ok(backend.size > 0 && backend.size <= 100, `${backend.size} keys`);
  });
}

test('a command the front lacks (INCR) fails redis-benchmark with the unknown-command error', {
  skip,
}, async () => {
  const unknown = server.stats().unknownCommands;
  const result = await runProcess(
    REDIS_BENCHMARK!,
    ['-h', '127.0.0.1', '-p', String(server.address.port), '-t', 'incr', '-n', '100', '-c', '1', '-q'],
    { timeoutMs: 30_000 },
  );
  assert.notEqual(result.code, 0);
  assert.match(result.stdout + result.stderr, /ERR unknown command 'INCR'/);
  assert.ok(server.stats().unknownCommands > unknown);
});
