import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';

function ipipe(...args: string[]) {
  return runIpipe(args);
}

test('--json output is one parseable document with a schema version and the seed', () => {
  const run = ipipe('walkthrough', 'scheduler', '--seed', '7', '--json');
  assert.equal(run.code, 0, run.stderr);
  const document = JSON.parse(run.stdout) as { schemaVersion: number; seed: number; decisions: unknown[] };
  assert.equal(document.schemaVersion, 1);
  assert.equal(document.seed, 7);
  assert.ok(Array.isArray(document.decisions));
});

test('a bad option value is a usage error (exit 2) that says what to pass', () => {
  const run = ipipe('walkthrough', 'scheduler', '--seed', '-3');
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--seed must be a non-negative integer/);
  assert.equal(run.stdout, '');
});

test('an unknown command is a usage error (exit 2) pointing at --help', () => {
  const run = ipipe('frobnicate');
  assert.equal(run.code, 2);
  assert.match(run.stderr, /unknown command 'frobnicate'/);
  assert.match(run.stderr, /--help/);
});

test('--help succeeds and lists the commands', () => {
  const run = ipipe('--help');
  assert.equal(run.code, 0);
  assert.match(run.stdout, /showcase/);
  assert.match(run.stdout, /walkthrough/);
});
