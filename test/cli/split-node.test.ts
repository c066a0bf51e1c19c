/**
 * `ipipe node --role nic|host` end to end: the split node honours --json and --metrics-port as
 * `ipipe run` does (the NIC process serves /metrics and /stats), and refuses the options that
 * belong to the other role instead of ignoring them.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { runIpipe } from './run-ipipe.ts';
import {
  ECHO,
  echoOnce,
  freeTcpPort,
  type Spawned,
  spawnIpipe,
  untilNicWaits,
} from './split-node-helpers.ts';

test('a split node prints JSON banners and its NIC process serves /stats and /metrics', {
  timeout: 60_000,
}, async () => {
  const channel = `tcp://127.0.0.1:${await freeTcpPort()}`;
  const common = ['--channel', channel, '--json'];
  const nic = spawnIpipe([
    'node',
    ECHO,
    '--role',
    'nic',
    ...common,
    '--port',
    '0',
    '--metrics-port',
    '0',
    '--nic-cores',
    '1',
  ]);
  let host: Spawned | undefined;
  try {
    // The NIC process listens before it prints; wait for that line, then start the host.
    await untilNicWaits(nic);
    host = spawnIpipe(['node', ECHO, '--role', 'host', ...common, '--host-cores', '1']);
    const [nicBanner, hostBanner] = await Promise.all([nic.banner, host.banner]);
    assert.equal(nicBanner['role'], 'nic');
    assert.equal(hostBanner['role'], 'host');
    assert.equal(hostBanner['channel'], channel);
    const admin = nicBanner['admin'];
    assert.equal(typeof admin, 'string', `the NIC banner names its admin endpoint: ${nic.stdout()}`);
    const udp = nicBanner['udp'] as { port: number };
    const actors = nicBanner['actors'] as { id: number; name: string }[];
    const actor = actors.find((a) => a.name === 'echo');
    assert.ok(actor, 'the NIC banner lists the echo actor');
    assert.deepEqual([...(await echoOnce(udp.port, actor.id))], [4, 5, 6]);

    const stats = (await (await fetch(`${admin}/stats`)).json()) as { requests: number; replies: number };
    assert.ok(stats.requests >= 1 && stats.replies >= 1, JSON.stringify(stats));
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    assert.match(metrics, /ipipe_replies_total\{kind="reply"\} [1-9]/);
    // The host cores are the other process's: no series of theirs here (the TYPE line only).
    assert.doesNotMatch(metrics, /^ipipe_host_(ring_occupancy_bytes|core_requests)\{/m);
    // The NIC process's drop reasons from 0; the host's are the other process's, not exported here.
    assert.match(metrics, /ipipe_drops_total\{reason="bad-checksum"\} 0/);
    assert.match(metrics, /ipipe_drops_total\{reason="host-unreachable"\} 0/);
    assert.doesNotMatch(
      metrics,
      /ipipe_drops_total\{reason="host-(stray-image|corrupt-image|unanswerable-refusal)"\}/,
    );

    const nicExit = once(nic.child, 'exit');
    const hostExit = once(host.child, 'exit');
    nic.child.kill('SIGTERM');
    host.child.kill('SIGTERM');
    assert.equal(((await nicExit) as [number | null])[0], 0, nic.stderr());
    assert.equal(((await hostExit) as [number | null])[0], 0, host.stderr());
  } finally {
    if (nic.child.exitCode === null) nic.child.kill('SIGKILL');
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
  }
});

test('options of the other role are refused, not ignored (exit 2, naming them)', () => {
  const host = runIpipe([
    'node',
    ECHO,
    '--role',
    'host',
    '--channel',
    'tcp://127.0.0.1:1',
    '--metrics-port',
    '9464',
    '--port',
    '9001',
  ]);
  assert.equal(host.code, 2, host.stderr);
  assert.match(host.stderr, /--port, --metrics-port belong to the --role nic process/);
  const nic = runIpipe([
    'node',
    ECHO,
    '--role',
    'nic',
    '--channel',
    'tcp://127.0.0.1:1',
    '--host-cores',
    '4',
  ]);
  assert.equal(nic.code, 2, nic.stderr);
  assert.match(nic.stderr, /--host-cores belongs to the --role host process/);
});
