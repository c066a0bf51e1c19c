/**
 * Options a command used to accept and then ignore in the mode chosen: each is now a usage error
 * (exit 2) naming the option and what to do, and nothing starts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';

const ECHO = new URL('../../examples/echo.ts', import.meta.url).pathname;

const ignored: [string, string[], RegExp][] = [
  [
    'run --node-id without --cluster',
    ['run', ECHO, '--node-id', '1', '--port', '0'],
    /--node-id does not apply to a node without --cluster: give --cluster <file> too/,
  ],
  [
    'run --cluster with --port (the file sets it)',
    ['run', '--cluster', 'no-such-cluster.json', '--node-id', '0', '--port', '9001'],
    /--port does not apply to a node of a --cluster file: the file sets each node's address and port/,
  ],
  [
    'cluster up rta --replicas (an rkv option)',
    ['cluster', 'up', 'rta', '--replicas', '5', '--data-dir', 'no-such-dir'],
    /--replicas does not apply to cluster up rta: it takes --nodes, --base-port/,
  ],
];

for (const [name, args, pattern] of ignored) {
  test(`usage error (exit 2): ${name}`, () => {
    const run = runIpipe(args);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, pattern);
    assert.equal(run.stdout, '');
  });
}
