import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES, IpipeError, isIpipeError, UsageError } from '../../src/errors.ts';

test('docs/errors.md lists exactly the codes in the registry', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `(IPIPE_ERR_[A-Z_]+)`/gm)].map((m) => m[1]);
  assert.deepEqual([...documented].sort(), [...ERROR_CODES].sort());
});

test('errors carry their code, their class name and a narrowing guard', () => {
  const error = new UsageError('bad');
  assert.ok(error instanceof IpipeError);
  assert.equal(error.name, 'UsageError');
  assert.equal(error.code, 'IPIPE_ERR_CLI_USAGE');
  assert.ok(isIpipeError(error, 'IPIPE_ERR_CLI_USAGE'));
  assert.ok(!isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID'));
  assert.ok(!isIpipeError(new Error('x')));
});
