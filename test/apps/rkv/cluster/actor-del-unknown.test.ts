/**
 * The RESP front's answer to a DEL whose count is unknown (actor-backend.ts `del`): when a
 * delete took effect but its retry reached a replica that holds no answer for it
 * (`RkvActorClient.del` → null, the memtable's DEL_UNKNOWN), the front replies `-ERR` saying the
 * keys are deleted, rather than a count it does not know. No cluster: a fake connection hands
 * the backend clients whose `del` answers from a table.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACTOR_RESP_LIMITS, ActorKvBackend } from '../../../../src/apps/rkv/cluster/actor-backend.ts';
import type { RkvActorClient, RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { RespClient } from '../../../../src/apps/rkv/resp/client.ts';
import { startRespServer } from '../../../../src/apps/rkv/resp/server.ts';

/** What the fake clients' `del` answers per key: true existed, false absent, null unknown. */
const answers = new Map<string, boolean | null>([
  ['gone', true],
  ['never', false],
  ['lost-reply', null],
]);

function fakeConnection(): RkvActorConnection {
  const client = {
    leaderOf: () => 0,
    del: async (key: Uint8Array) => {
      const answer = answers.get(Buffer.from(key).toString('latin1'));
      assert.notEqual(answer, undefined, 'the test asks only about keys in its table');
      return answer as boolean | null;
    },
  };
  const connection = {
    shards: 1,
    shardOf: () => 0,
    client: () => client as unknown as RkvActorClient,
  };
  // The backend uses only these members; the real classes need a live cluster.
  return connection as unknown as RkvActorConnection;
}

test('DEL: a count when every delete is decided, -ERR (keys deleted, count unknown) when one is not', async () => {
  const server = await startRespServer({
    port: 0,
    backend: new ActorKvBackend(fakeConnection(), { clients: 2, firstClientId: 1 }),
    limits: ACTOR_RESP_LIMITS,
  });
  const resp = await RespClient.connect(server.address.port, { timeoutMs: 5_000 });
  try {
    assert.equal(await resp.command('DEL', 'gone', 'never'), 1, 'one existed, one did not');
    const unknown = (await resp.command('DEL', 'gone', 'lost-reply')) as { error?: string };
    assert.equal(typeof unknown, 'object', 'not a count');
    assert.match(unknown.error ?? '', /^ERR DEL took effect, but its reply was lost/);
    assert.match(unknown.error ?? '', /the keys are deleted/, 'says the deletes happened');
    assert.match(unknown.error ?? '', /EXISTS/, 'says what to do');
    assert.equal(await resp.command('DEL', 'never'), 0, 'the connection still serves after the error');
  } finally {
    resp.close();
    await server.close();
  }
});
