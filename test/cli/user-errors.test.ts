/**
 * Mistakes a user makes at the command line end in one line that says what to do and the right
 * exit code (2: usage or configuration, 3: the environment), never a stack trace or a process
 * that does not exit (issues found by a QA pass through the CLI).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freeUdpPort } from '../platform/live/free-port.ts';
import { runIpipe } from './run-ipipe.ts';

const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;
const ACTOR_API = new URL('../../src/actor/index.ts', import.meta.url).pathname;

function ipipe(...args: string[]) {
  return runIpipe(args);
}

function noStack(stderr: string): void {
  assert.doesNotMatch(stderr, /\n\s+at /, `a stack trace:\n${stderr}`);
}

test('a node whose --metrics-port is taken says so, stops its cores and exits 2', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const address = taken.address();
  const metricsPort = typeof address === 'object' && address ? address.port : 0;
  try {
    const port = await freeUdpPort();
    const run = ipipe('run', ECHO, '--port', String(port), '--metrics-port', String(metricsPort));
    assert.equal(run.code, 2, `exit ${run.code} (null: killed by the time-out, i.e. it hung)\n${run.stderr}`);
    assert.match(run.stderr, /pick another --metrics-port/);
    noStack(run.stderr);
  } finally {
    taken.close();
  }
});

test('migrate with an --admin that is not a URL is a usage error', () => {
  const run = ipipe('migrate', '--admin', 'notaurl', '--actor', 'echo', '--to', 'host');
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--admin must be the node's admin URL/);
  noStack(run.stderr);
});

test('an operating-system refusal (nothing listens on the channel) is one line, exit 3', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const address = closed.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const run = ipipe('node', ECHO, '--role', 'host', '--channel', `tcp://127.0.0.1:${port}`);
  assert.equal(run.code, 3, run.stderr);
  assert.match(run.stderr, /ECONNREFUSED.*nothing listens there/);
  noStack(run.stderr);
});

test('cluster status on an RTA or DT cluster directory says it covers RKV only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-status-'));
  try {
    writeFileSync(join(dir, 'actor-cluster-state.json'), '{}\n');
    const run = ipipe('cluster', 'status', '--data-dir', dir);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /holds an RTA or DT cluster; `cluster status` covers RKV clusters only/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a module whose actors come from another copy of the actor API gets the likely cause', () => {
  // Outside any "type": "module" package a .ts file is loaded as CommonJS, and its import of the
  // actor API is a second instance whose definitions this ipipe does not recognise.
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-cjs-'));
  try {
    const module = join(dir, 'actors.ts');
    writeFileSync(
      module,
      `import { defineActor, field, messages } from ${JSON.stringify(ACTOR_API)};\n` +
        'const m = messages({ ping: { n: field.u32() } });\n' +
        "export const zed = defineActor({ name: 'zed', messages: m, placement: 'nic', exec(ctx, msg) { ctx.reply(msg); } });\n",
    );
    const run = ipipe('run', module, '--port', '0');
    assert.equal(run.code, 2, run.stderr);
    // Depending on how the loader meets the file: a CommonJS load refused, or a second API copy.
    assert.match(run.stderr, /"type": "module"/);
    noStack(run.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cluster file with an actor id the node cannot use is a config error naming the field, exit 2', async () => {
  // 2^21: one past MAX_ACTOR_ID. It passed the file's schema and then failed as a bare RangeError
  // when the node built its catalog ("unexpected failure", a stack, exit 3).
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-cluster-id-'));
  try {
    const file = join(dir, 'cluster.json');
    writeFileSync(
      file,
      JSON.stringify({
        schemaVersion: 1,
        nodes: [{ id: 0, address: '127.0.0.1', port: await freeUdpPort() }],
        actors: [{ name: 'echo', module: ECHO, exportName: 'echo', node: 0, id: 2 ** 21 }],
      }),
    );
    const run = ipipe('run', '--cluster', file, '--node-id', '0');
    assert.equal(run.code, 2, `exit ${run.code}\n${run.stderr}`);
    assert.match(run.stderr, /cluster\.actors\.0\.id: an actor id is an integer in \[1, 2097151\]/);
    assert.match(run.stderr, /leave "id" out/);
    noStack(run.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
