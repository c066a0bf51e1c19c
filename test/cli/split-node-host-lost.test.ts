/**
 * A split node whose host process dies: the NIC process says so once, keeps serving its own
 * actors, and refuses requests for host actors with IPIPE_ERR_NODE_HOST_UNREACHABLE (counted as
 * `host-unreachable` drops) instead of letting them time out behind a dead channel.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { RemoteError } from '../../src/platform/live/net/errors.ts';
import {
  ECHO,
  echoOnce,
  freeTcpPort,
  type Spawned,
  spawnIpipe,
  untilNicWaits,
} from './split-node-helpers.ts';

test('the NIC process of a split node says once that its host process died, and refuses host actors with a code', {
  timeout: 60_000,
}, async () => {
  const channel = `tcp://127.0.0.1:${await freeTcpPort()}`;
  // echo pinned to the host domain, so its requests cross the channel.
  const common = ['--channel', channel, '--json', '--place', 'echo=host'];
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
    await untilNicWaits(nic);
    host = spawnIpipe(['node', ECHO, '--role', 'host', ...common, '--host-cores', '1']);
    const [nicBanner] = await Promise.all([nic.banner, host.banner]);
    const udp = nicBanner['udp'] as { port: number };
    const actor = (nicBanner['actors'] as { id: number; name: string; domain: string }[]).find(
      (a) => a.name === 'echo',
    );
    assert.ok(actor);
    assert.equal(actor.domain, 'host');
    assert.deepEqual([...(await echoOnce(udp.port, actor.id))], [4, 5, 6], 'served through the host process');

    const hostExit = once(host.child, 'exit');
    host.child.kill('SIGKILL');
    await hostExit;
    const deadline = Date.now() + 10_000;
    while (!/the host domain is gone/.test(nic.stderr()) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(
      nic.stderr(),
      /the host domain is gone .*Requests for actors on the host \(echo\) are refused/,
    );

    for (let i = 0; i < 2; i++) {
      await assert.rejects(echoOnce(udp.port, actor.id), (error: unknown) => {
        assert.ok(error instanceof RemoteError, String(error));
        assert.equal(error.remoteCode, 'IPIPE_ERR_NODE_HOST_UNREACHABLE');
        return true;
      });
    }
    const stats = (await (await fetch(`${nicBanner['admin']}/stats`)).json()) as {
      drops: Record<string, number>;
      hostLost: boolean;
    };
    assert.equal(stats.hostLost, true, '/stats says the host is gone');
    assert.equal(stats.drops['host-unreachable'], 2, JSON.stringify(stats.drops));
    assert.equal(nic.stderr().match(/the host domain is gone/g)?.length, 1, 'said once');
    assert.equal(nic.child.exitCode, null, 'the NIC process keeps serving');

    const nicExit = once(nic.child, 'exit');
    nic.child.kill('SIGTERM');
    assert.equal(((await nicExit) as [number | null])[0], 0, nic.stderr());
  } finally {
    if (nic.child.exitCode === null) nic.child.kill('SIGKILL');
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
  }
});
