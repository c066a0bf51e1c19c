/**
 * A split node whose NIC process dies: the host process cannot be reached without it (the NIC
 * side owns the UDP socket), so it says so once and exits with code 1 instead of sitting silent.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import {
  ECHO,
  echoOnce,
  freeTcpPort,
  type Spawned,
  spawnIpipe,
  untilNicWaits,
} from './split-node-helpers.ts';

test('the host process of a split node says its NIC process died and exits 1', {
  timeout: 60_000,
}, async () => {
  const channel = `tcp://127.0.0.1:${await freeTcpPort()}`;
  const common = ['--channel', channel, '--json', '--place', 'echo=host'];
  const nic = spawnIpipe(['node', ECHO, '--role', 'nic', ...common, '--port', '0', '--nic-cores', '1']);
  let host: Spawned | undefined;
  try {
    await untilNicWaits(nic);
    host = spawnIpipe(['node', ECHO, '--role', 'host', ...common, '--host-cores', '1']);
    const [nicBanner] = await Promise.all([nic.banner, host.banner]);
    const udp = nicBanner['udp'] as { port: number };
    const actor = (nicBanner['actors'] as { id: number; name: string }[]).find((a) => a.name === 'echo');
    assert.ok(actor);
    assert.deepEqual([...(await echoOnce(udp.port, actor.id))], [4, 5, 6], 'served through the host process');

    const hostExit = once(host.child, 'exit');
    nic.child.kill('SIGKILL');
    const [code] = (await hostExit) as [number | null];
    assert.equal(code, 1, host.stderr());
    assert.match(host.stderr(), /the NIC domain is gone \(the channel tcp:\/\/127\.0\.0\.1:\d+ closed/);
    assert.match(host.stderr(), /Restart the --role nic process, then this one/);
    assert.equal(host.stderr().match(/the NIC domain is gone/g)?.length, 1, 'said once');
  } finally {
    if (nic.child.exitCode === null) nic.child.kill('SIGKILL');
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
  }
});
