/**
 * The watchdog on a host core (issue 4: a runaway handler's actor deregistered, its worker
 * replaced): the operator hears of it on stderr as for a NIC core, and the client's error names
 * the actor. Before, a host core's kill printed nothing at all, and the error said "actor 2 was
 * deregistered" where the NIC's says "actor runaway was deregistered".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { runaway } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

test('a runaway handler on a host core is announced on stderr and named in the error reply', async () => {
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  const node = await LiveNode.start({
    catalog: [{ id: actorId(2), name: 'runaway', module: MODULE, exportName: 'runaway' }],
    nicCores: 1,
    hostCores: 1,
    watchdogMs: 200,
    placement: { runaway: 'host' },
    scheduler: { enableMigration: false, enableDowngrade: false },
  });
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: node.address.port, timeoutMs: 3_000 });
  const replies = runaway.replies;
  assert.ok(replies);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    const spin = await client.call(2, runaway.messages, replies, { type: 'spin' }).then(
      () => assert.fail('a spinning handler cannot answer'),
      (error: unknown) => error as { remoteCode?: string; remoteMessage?: string },
    );
    assert.equal(spin.remoteCode, 'IPIPE_ERR_ACTOR_DEREGISTERED', String(spin));
    assert.match(spin.remoteMessage ?? '', /^actor runaway was deregistered: its handler ran past/);
    assert.equal(node.stats().watchdogKills, 1);
    assert.ok(
      written.some((line) =>
        /^ipipe: actor runaway deregistered \(.*watchdog\); host core 0 replaced\n$/.test(line),
      ),
      `stderr: ${JSON.stringify(written)}`,
    );
  } finally {
    process.stderr.write = write;
    await client.close();
    await node.stop();
  }
});
