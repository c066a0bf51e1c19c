import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
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

test('each error class is defined once in src (one class per failure, caught by one instanceof)', () => {
  const seen = new Map<string, string>();
  const root = fileURLToPath(new URL('../../src/', import.meta.url));
  for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const source = readFileSync(join(root, file), 'utf8');
    for (const match of source.matchAll(/^export class (\w+Error) extends/gm)) {
      const name = match[1] as string;
      assert.equal(seen.get(name), undefined, `${name} is defined in ${seen.get(name)} and in ${file}`);
      seen.set(name, file);
    }
  }
  assert.ok(seen.size > 20, `found only ${seen.size} error classes: the scan is broken`);
});
