/**
 * A `--role nic` process still waiting for its host domain stops on SIGTERM with exit 0 and on
 * SIGINT with 130, as a serving node does (README: "Ctrl-C … exits 130 (SIGTERM: 0)"). Before, no
 * handler was installed until the host connected: SIGTERM killed the process (exit code null,
 * signal SIGTERM — a shell sees 143) and said nothing.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { ECHO, freeTcpPort, spawnIpipe, untilNicWaits } from './split-node-helpers.ts';

for (const [signal, code] of [
  ['SIGTERM', 0],
  ['SIGINT', 130],
] as const)
  test(`${signal} while the NIC process waits for its host domain: exit ${code}, said on stderr`, {
    timeout: 60_000,
  }, async () => {
    const channel = `tcp://127.0.0.1:${await freeTcpPort()}`;
    const nic = spawnIpipe([
      'node',
      ECHO,
      '--role',
      'nic',
      '--channel',
      channel,
      '--port',
      '0',
      '--nic-cores',
      '1',
    ]);
    await untilNicWaits(nic);
    const exited = once(nic.child, 'exit');
    nic.child.kill(signal);
    const [exitCode, exitSignal] = (await exited) as [number | null, string | null];
    assert.deepEqual({ exitCode, exitSignal }, { exitCode: code, exitSignal: null }, nic.stderr());
    assert.match(nic.stderr(), new RegExp(`${signal} while waiting for the host domain`));
  });
