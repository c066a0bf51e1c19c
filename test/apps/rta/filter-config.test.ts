/**
 * Bad configuration is refused with a clear, typed error (src/apps/rta/config.ts, pattern.ts and
 * the filter actor): a regular expression that does not compile, stateful flags, an over-long
 * pattern, windows that do not divide — at start-up, before any node runs; and a filter sent a bad
 * pattern in `configure` refuses it and keeps the configuration it had.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compileFilterPattern,
  parseRtaConfig,
  RtaConfigError,
  RtaFilterPatternError,
  RtaNotConfiguredError,
  RtaTopologyError,
  rtaWorkload,
} from '../../../src/apps/rta/index.ts';
import { isIpipeError } from '../../../src/errors.ts';
import { LocalRta } from './harness.ts';

function patternError(fn: () => unknown, pattern: RegExp, problem: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof RtaFilterPatternError, String(error));
    assert.ok(isIpipeError(error, 'IPIPE_ERR_RTA_BAD_PATTERN'));
    assert.match(error.message, pattern, 'the message names the pattern');
    assert.match(error.problem, problem);
    assert.match(error.message, /Fix filter\.pattern/, 'and says what to do');
    return true;
  });
}

test('a pattern that does not compile is refused when the configuration is parsed', () => {
  patternError(
    () => parseRtaConfig({ filter: { pattern: '(unclosed' } }),
    /\/\(unclosed\//,
    /Unterminated group/,
  );
  patternError(() => parseRtaConfig({ filter: { pattern: '[z-a]' } }), /\/\[z-a\]\//, /out of order/);
  patternError(() => parseRtaConfig({ filter: { pattern: 'a', flags: 'q' } }), /\/a\/q/, /flags/i);
  patternError(
    () => parseRtaConfig({ filter: { pattern: 'a', flags: 'gi' } }),
    /\/a\/gi/,
    /"g" makes RegExp\.test stateful/,
  );
  patternError(() => parseRtaConfig({ filter: { pattern: 'a', flags: 'y' } }), /\/a\/y/, /"y"/);
  patternError(
    () => compileFilterPattern('x'.repeat(300), ''),
    /x{40}…/,
    /300 UTF-8 bytes, over the limit of 256/,
  );
  // The workload builder parses too, so an experiment fails before registering anything.
  patternError(() => rtaWorkload({ config: { filter: { pattern: '*' } } }), /\/\*\//, /Nothing to repeat/);
  // A good one compiles, with the flags it was given.
  assert.equal(compileFilterPattern('^rt @', 'i').test('RT @x'), true);
});

test('other bad configuration names the field and what is wrong', () => {
  const configError = (input: unknown, path: string, problem: RegExp) =>
    assert.throws(
      () => parseRtaConfig(input),
      (error: unknown) =>
        error instanceof RtaConfigError &&
        error.code === 'IPIPE_ERR_RTA_BAD_CONFIG' &&
        error.path === path &&
        problem.test(error.message),
    );
  configError(
    { window: { windowMs: 2_500, slideMs: 1_000 } },
    'window.windowMs',
    /whole multiple of slideMs \(1000\)/,
  );
  configError({ window: { windowMs: 2_000_000, slideMs: 1 } }, 'window.slideMs', /at most 1000/);
  configError({ topN: 21 }, 'topN', /20/);
  configError({ filter: { mode: 'sometimes' } }, 'filter.mode', /keep-matching|drop-matching/);
  configError({ counters: 0 }, 'counters', /1/);
  configError({ surprise: true }, '(config)', /surprise/);
  configError([], '(config)', /must be an object/);
  assert.throws(
    () => rtaWorkload({ packetBytes: 32 }),
    /packetBytes: must be an integer in \[64, 9000\], got 32/,
  );
});

test('a filter sent a bad pattern refuses it and keeps filtering with the pattern it had', () => {
  const workload = rtaWorkload({
    config: { counters: 1, rankers: 1, filter: { pattern: '^RT @', mode: 'drop-matching' } },
  });
  const rta = new LocalRta(workload);
  const filter = 'rta-filter-0';
  // Before configure: a typed error, not a crash deep in a DMO read.
  assert.throws(
    () => rta.callNow(filter, { type: 'ingest', tuples: [] }),
    (error: unknown) => error instanceof RtaNotConfiguredError && /before "configure"/.test(error.message),
  );
  for (const send of workload.setup) rta.callNow(send.instance, send.message);
  const configure = workload.setup.find((s) => s.instance === filter)!.message;
  patternError(
    () => rta.callNow(filter, { ...configure, pattern: '(?<name' }),
    /\/\(\?<name\//,
    /Invalid capture group name|Unterminated/,
  );
  patternError(() => rta.callNow(filter, { ...configure, flags: 'g' }), /\/\^RT @\/g/, /stateful/);
  const tuples = [
    { timestampMs: 1, userId: 1, hashtag: '#a', text: 'RT @x: #a' },
    { timestampMs: 2, userId: 1, hashtag: '#b', text: 'original #b' },
  ];
  assert.deepEqual(rta.callNow(filter, { type: 'ingest', tuples }), {
    type: 'ingested',
    received: 2,
    passed: 1,
  });
  // A configure naming a counter that is not registered is refused with the name.
  assert.throws(
    () => rta.callNow(filter, { ...configure, counters: ['rta-counter-7'] }),
    (error: unknown) => error instanceof RtaTopologyError && /"rta-counter-7"/.test(error.message),
  );
});
