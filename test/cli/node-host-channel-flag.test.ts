/**
 * `ipipe node` takes the channel address as `--channel` (README) or `--host-channel` (the spelling
 * issue 4 gives: `ipipe node --role nic --host-channel tcp://…`). Before, `--host-channel` was
 * refused with "required option '--channel' not specified", which never said the flag given was
 * unknown; a user following the command line could not start a split node.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';
import { ECHO } from './split-node-helpers.ts';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('--host-channel is taken as the channel address (the host process dials it)', async () => {
  const port = await closedPort();
  const run = runIpipe(['node', ECHO, '--role', 'host', '--host-channel', `tcp://127.0.0.1:${port}`]);
  // Nothing listens there: the environment error (3) proves the address was used, not refused as usage.
  assert.equal(run.code, 3, run.stderr);
  assert.match(run.stderr, /ECONNREFUSED.*nothing listens there/);
});

test('--host-channel is validated like --channel', () => {
  const run = runIpipe(['node', ECHO, '--role', 'nic', '--host-channel', 'http://x']);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /--host-channel must look like tcp:\/\/127\.0\.0\.1:7000/);
});

test('both --channel and --host-channel, or neither, is a usage error that says what to give', () => {
  const both = runIpipe([
    'node',
    ECHO,
    '--role',
    'host',
    '--channel',
    'tcp://127.0.0.1:7000',
    '--host-channel',
    'tcp://127.0.0.1:7001',
  ]);
  assert.equal(both.code, 2, both.stderr);
  assert.match(both.stderr, /--channel and --host-channel name the same address: give one/);
  const neither = runIpipe(['node', ECHO, '--role', 'host']);
  assert.equal(neither.code, 2, neither.stderr);
  assert.match(neither.stderr, /give the NIC↔host channel address: --channel tcp:\/\/host:port/);
});
