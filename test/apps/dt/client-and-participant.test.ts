/**
 * The client library refuses malformed transactions before sending (typed errors that say what to
 * fix) and misuse of a transaction handle; a participant never holds a lock forever: when the
 * lease runs out it asks the coordinator and releases on a (presumed) abort.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DtClientSession } from '../../../src/apps/dt/client.ts';
import { DtInvalidTransactionError, DtTransactionStateError } from '../../../src/apps/dt/errors.ts';
import { MemoryParticipantStore, ParticipantLogic } from '../../../src/apps/dt/participant-logic.ts';
import { hashShardMap } from '../../../src/apps/dt/types.ts';
import { validateTransaction } from '../../../src/apps/dt/validation.ts';
import { isIpipeError } from '../../../src/errors.ts';

const shards = hashShardMap(3);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
function keyOn(shard: number): string {
  for (let i = 0; ; i++) if (shards.shardOf(`key-${i}`) === shard) return `key-${i}`;
}

test('the client refuses an empty write set and keeps the transaction open to fix', () => {
  const session = new DtClientSession({ client: 1, shards, retryNs: 1_000 });
  session.begin();
  assert.throws(
    () => session.commit(0),
    (error: unknown) =>
      error instanceof DtInvalidTransactionError &&
      isIpipeError(error, 'IPIPE_ERR_DT_INVALID_TRANSACTION') &&
      error.problem.reason === 'empty-write-set' &&
      /must write at least one key/.test(error.message),
  );
  session.write('k', bytes('v'));
  const out = session.commit(0);
  assert.equal(out.length, 1);
  assert.ok(out[0]?.kind === 'send' && out[0].message.type === 'commit-request');
});

test('validation names duplicate keys, unknown shards, bad keys and oversize values', () => {
  const limits = { shards, maxValueBytes: 16 };
  const shard = shards.shardOf('a');
  const problem = (txn: Parameters<typeof validateTransaction>[0]) => {
    try {
      validateTransaction(txn, limits);
      return undefined;
    } catch (error) {
      assert.ok(error instanceof DtInvalidTransactionError);
      return error.problem;
    }
  };
  assert.deepEqual(
    problem({
      reads: [],
      writes: [
        { shard, key: 'a', value: bytes('1') },
        { shard, key: 'a', value: bytes('2') },
      ],
    }),
    { reason: 'duplicate-key', set: 'writes', key: 'a' },
  );
  assert.deepEqual(problem({ reads: [], writes: [{ shard: 9, key: 'a', value: bytes('1') }] }), {
    reason: 'unknown-shard',
    key: 'a',
    shard: 9,
    shardCount: 3,
  });
  assert.equal(
    problem({ reads: [], writes: [{ shard, key: '', value: bytes('1') }] })?.reason,
    'invalid-key',
  );
  assert.equal(
    problem({ reads: [], writes: [{ shard: shards.shardOf('\uD800'), key: '\uD800', value: bytes('1') }] })
      ?.reason,
    'invalid-key',
  );
  assert.deepEqual(problem({ reads: [], writes: [{ shard, key: 'a', value: new Uint8Array(17) }] }), {
    reason: 'value-too-large',
    key: 'a',
    bytes: 17,
    maxBytes: 16,
  });
  assert.equal(
    problem({ reads: [{ shard, key: 'a', version: -1 }], writes: [{ shard, key: 'a', value: bytes('1') }] })
      ?.reason,
    'invalid-version',
  );
  assert.equal(
    problem({ reads: [{ shard, key: 'a', version: 0 }], writes: [{ shard, key: 'a', value: bytes('1') }] }),
    undefined,
  );
});

test('transaction handles are used in order', () => {
  const session = new DtClientSession({ client: 2, shards, retryNs: 1_000 });
  assert.throws(() => session.read('k', 0), DtTransactionStateError);
  session.begin();
  assert.throws(() => session.begin(), /already running transaction 1/);
  session.read('k', 0);
  session.write('w', bytes('1'));
  assert.throws(() => session.commit(0), /still waits for 1 read/);
  session.abandon();
  session.begin();
  session.write('w', bytes('1'));
  session.commit(0);
  assert.throws(() => session.write('w', bytes('2')), /already committing/);
  assert.throws(() => session.abandon(), /may commit: wait for its outcome/);
});

test('a lock whose coordinator never decides is queried after the lease, and released on abort', () => {
  const shard = 0;
  const key = keyOn(shard);
  const store = new MemoryParticipantStore();
  const logic = new ParticipantLogic(store, { shard, shards, leaseNs: 1_000 });
  const owner = { client: 1, seq: 1, epoch: 1 };
  const locked = logic.handle({ type: 'lock', ...owner, shard, keys: [key] }, 0);
  const tick = locked.find((output) => output.kind === 'timer');
  assert.ok(tick?.kind === 'timer', 'a lease timer is armed while a lock stands');
  // Another attempt is refused while the lock stands.
  const refused = logic.handle({ type: 'lock', client: 2, seq: 1, epoch: 1, shard, keys: [key] }, 10);
  assert.ok(
    refused[0]?.kind === 'send' && refused[0].message.type === 'lock-reply' && !refused[0].message.ok,
  );
  // Before the lease ends nothing is asked; after it, the coordinator is.
  const early = logic.handle({ type: 'participant-tick' }, 500);
  assert.equal(early.filter((output) => output.kind === 'send').length, 0);
  const late = logic.handle({ type: 'participant-tick' }, 1_500);
  const query = late.find((output) => output.kind === 'send');
  assert.ok(query?.kind === 'send' && query.message.type === 'status-query');
  // The participant never releases on its own (the coordinator may be at its commit point)...
  assert.deepEqual(store.lockedKeys(), [key]);
  // ...but the coordinator's answer (here: presumed abort of an attempt it does not know) does.
  logic.handle({ type: 'abort', ...owner, shard }, 1_600);
  assert.deepEqual(store.lockedKeys(), []);
  // A late duplicate lock of the ended attempt is refused, so it cannot leave a stale lock.
  const stale = logic.handle({ type: 'lock', ...owner, shard, keys: [key] }, 1_700);
  assert.ok(stale[0]?.kind === 'send' && stale[0].message.type === 'lock-reply' && !stale[0].message.ok);
  assert.deepEqual(store.lockedKeys(), []);
});

test('a commit is idempotent and never regresses a key', () => {
  const shard = 1;
  const key = keyOn(shard);
  const store = new MemoryParticipantStore();
  const logic = new ParticipantLogic(store, { shard, shards, leaseNs: 1_000 });
  const owner = { client: 1, seq: 1, epoch: 1 };
  logic.handle({ type: 'lock', ...owner, shard, keys: [key] }, 0);
  const commit = {
    type: 'commit',
    ...owner,
    shard,
    writes: [{ key, value: bytes('one'), version: 1 }],
  } as const;
  logic.handle(commit, 1);
  assert.equal(store.get(key)?.version, 1);
  const owner2 = { client: 2, seq: 1, epoch: 1 };
  logic.handle({ type: 'lock', ...owner2, shard, keys: [key] }, 2);
  logic.handle({ type: 'commit', ...owner2, shard, writes: [{ key, value: bytes('two'), version: 2 }] }, 3);
  // A duplicate of the first commit arrives late: acknowledged, nothing applied.
  const ack = logic.handle(commit, 4);
  assert.ok(ack[0]?.kind === 'send' && ack[0].message.type === 'commit-ack');
  assert.equal(store.get(key)?.version, 2);
  assert.deepEqual(store.get(key)?.value, bytes('two'));
});
