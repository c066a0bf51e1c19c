/**
 * Options the CLI used to take and then ignore, or take at values that run to nonsense or for
 * ever: each is now a usage error (exit 2) that names the option, what it accepts and why, and
 * nothing runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';

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
];

for (const [name, args, pattern] of usageErrors) {
  test(`usage error (exit 2): ${name}`, () => {
    const run = runIpipe(args);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, pattern);
    assert.equal(run.stdout, '');
  });
}
