/**
 * Options the CLI used to take and then ignore, or take at values that run to nonsense or for
 * ever: each is now a usage error (exit 2) that names the option, what it accepts and why, and
 * nothing runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { distinct } from '../../src/cli/options.ts';
import { runIpipe } from './run-ipipe.ts';

const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

const usageErrors: [string, string[], RegExp][] = [
  [
    'characterize --point-duration below the smallest sound value',
    ['characterize', '--nic', 'liquidio-cn2350', '--point-duration', '150us'],
    /--point-duration must be at least 200us, got "150us": shorter points are too few packets/,
  ],
  [
    'characterize --point-duration above the sane maximum',
    ['characterize', '--nic', 'liquidio-cn2350', '--point-duration', '2s'],
    /--point-duration must be at most 100ms, got "2s": the run time grows/,
  ],
  [
    'a single-value option given twice',
    ['characterize', '--nic', 'liquidio-cn2350', '--seed', '1', '--seed', '2'],
    /--seed given twice \("1", then "2"\): give it once/,
  ],
  [
    'an --address that is not an IPv4 address (reported as an address, not a port)',
    ['run', ECHO, '--address', '999.1.1.1', '--port', '0'],
    /--address must be an IPv4 address of this machine .* got "999\.1\.1\.1"/,
  ],
];

for (const [name, args, pattern] of usageErrors) {
  test(`usage error (exit 2): ${name}`, () => {
    const run = runIpipe(args);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, pattern);
    assert.equal(run.stdout, '');
  });
}

test("an address that is not this machine's is reported as the address, once (exit 2)", () => {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a host.
  const run = runIpipe(['run', ECHO, '--address', '192.0.2.1', '--port', '0']);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /192\.0\.2\.1 is not an address of this machine; give one it has/);
  assert.doesNotMatch(run.stderr, /pick another port|UDP socket error/);
});

test('a list option naming a value twice warns and keeps it once', () => {
  const written: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  let values: number[];
  try {
    values = distinct('--loads', [0.5, 0.2, 0.5]);
  } finally {
    process.stderr.write = original;
  }
  assert.deepEqual(values, [0.5, 0.2]);
  assert.deepEqual(written, ['ipipe: warning: --loads lists 0.5 more than once; each runs once\n']);
});
