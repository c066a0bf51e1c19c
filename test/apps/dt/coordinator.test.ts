/**
 * The coordinator's state machine driven message by message (src/apps/dt/coordinator-logic.ts):
 * the happy path in the paper's four steps, the response cache (a retried request is never
 * executed twice, also across a restart), malformed requests answered `invalid` without touching a
 * participant, and the log object's limit turning into a checkpoint for the logging actor.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoordinatorLogic, MemoryCoordinatorStore } from '../../../src/apps/dt/coordinator-logic.ts';
import type { CoordinatorInput, DtMessage, DtMsg } from '../../../src/apps/dt/messages.ts';
import { type DtOutput, hashShardMap, type ShardMap } from '../../../src/apps/dt/types.ts';

const shards: ShardMap = hashShardMap(2);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Keys that land on shard 0 and shard 1 of the 2-shard map. */
function keysOn(shard: number, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) if (shards.shardOf(`key-${i}`) === shard) out.push(`key-${i}`);
  return out;
}
const [a0, b0] = keysOn(0, 2) as [string, string];
const [a1] = keysOn(1, 1) as [string];

function sends(outputs: readonly DtOutput[]): DtMessage[] {
  return outputs.flatMap((output) => (output.kind === 'send' ? [output.message] : []));
}
function ofType<T extends DtMessage['type']>(outputs: readonly DtOutput[], type: T): DtMsg<T>[] {
  return sends(outputs).filter((message): message is DtMsg<T> => message.type === type);
}

class Harness {
  readonly store = new MemoryCoordinatorStore();
  readonly logic: CoordinatorLogic;
  nowNs = 0;
  constructor(logLimitRecords = 100) {
    this.logic = new CoordinatorLogic(this.store, {
      shards,
      retryNs: 1_000_000,
      txnTimeoutNs: 10_000_000,
      logLimitRecords,
      maxValueBytes: 1024,
    });
  }
  /** Starts and finishes recovery with what the log holds. */
  boot(
    epoch = 1,
    clients: { client: number; seq: number }[] = [],
    pending: DtMsg<'log-recovered'>['pending'] = [],
  ): DtOutput[] {
    const start = this.logic.start(77, this.nowNs);
    assert.deepEqual(ofType(start, 'log-recover'), [{ type: 'log-recover', nonce: 77 }]);
    return this.logic.handle({ type: 'log-recovered', nonce: 77, epoch, clients, pending }, this.nowNs);
  }
  handle(message: CoordinatorInput): DtOutput[] {
    return this.logic.handle(message, this.nowNs);
  }
  request(client: number, seq: number, writes: string[], reads: { key: string; version: number }[] = []) {
    return this.handle({
      type: 'commit-request',
      client,
      seq,
      reads: reads.map((read) => ({ ...read, shard: shards.shardOf(read.key) })),
      writes: writes.map((key) => ({ shard: shards.shardOf(key), key, value: bytes(`${client}:${seq}`) })),
    });
  }
  /** Drives one transaction to the end: every participant agrees, the log is durable. */
  commitAll(client: number, seq: number, writes: string[]): DtOutput[] {
    const epoch = this.logic.meta.epoch;
    const locks = ofType(this.request(client, seq, writes), 'lock');
    let out: DtOutput[] = [];
    for (const lock of locks) {
      out = this.handle({
        ...lock,
        type: 'lock-reply',
        ok: true,
        reason: '',
        versions: lock.keys.map(() => 0),
      });
    }
    assert.equal(ofType(out, 'log-append').length, 1, 'after the last lock: the commit point');
    const committed = this.handle({ type: 'log-durable', client, seq, epoch });
    const commits = ofType(committed, 'commit');
    let last: DtOutput[] = [];
    for (const commit of commits)
      last = this.handle({ type: 'commit-ack', client, seq, epoch, shard: commit.shard });
    return last;
  }
}

test('the four steps: lock, validate, log (commit point), commit, then the client is answered', () => {
  const h = new Harness();
  h.boot();
  const locks = ofType(h.request(1, 1, [a0, a1], [{ key: b0, version: 4 }]), 'lock');
  assert.deepEqual(
    locks.map((lock) => [lock.shard, lock.keys]),
    [
      [0, [a0]],
      [1, [a1]],
    ],
  );
  assert.deepEqual(
    sends(h.handle({ ...locks[0]!, type: 'lock-reply', ok: true, reason: '', versions: [3] })),
    [],
  );
  const validate = ofType(
    h.handle({ ...locks[1]!, type: 'lock-reply', ok: true, reason: '', versions: [0] }),
    'validate',
  );
  assert.deepEqual(
    validate.map((v) => [v.shard, v.keys, v.versions]),
    [[0, [b0], [4]]],
  );
  const append = ofType(
    h.handle({ ...validate[0]!, type: 'validate-reply', ok: true, reason: '' }),
    'log-append',
  );
  // The log record carries the versions the writes install: lock-time version + 1.
  assert.deepEqual(
    append[0]?.writes.map((w) => [w.key, w.version]),
    [
      [a0, 4],
      [a1, 1],
    ],
  );
  // Nothing reaches a participant as `commit` before the log is durable.
  const commits = ofType(h.handle({ type: 'log-durable', client: 1, seq: 1, epoch: 1 }), 'commit');
  assert.equal(commits.length, 2);
  assert.deepEqual(
    ofType(h.handle({ type: 'commit-ack', client: 1, seq: 1, epoch: 1, shard: 0 }), 'txn-outcome'),
    [],
  );
  const outcome = ofType(
    h.handle({ type: 'commit-ack', client: 1, seq: 1, epoch: 1, shard: 1 }),
    'txn-outcome',
  );
  assert.deepEqual(outcome, [{ type: 'txn-outcome', client: 1, seq: 1, outcome: 'committed', reason: '' }]);
  assert.equal(h.store.txnCount, 0);
});

test('a refused lock or a changed version aborts and releases every write shard', () => {
  const h = new Harness();
  h.boot();
  const locks = ofType(h.request(1, 1, [a0, a1]), 'lock');
  const out = h.handle({ ...locks[0]!, type: 'lock-reply', ok: false, reason: 'locked', versions: [] });
  assert.deepEqual(ofType(out, 'txn-outcome')[0]?.outcome, 'aborted');
  assert.deepEqual(
    ofType(out, 'abort').map((m) => m.shard),
    [0, 1],
  );

  const again = ofType(h.request(2, 1, [a0], [{ key: a0, version: 5 }]), 'lock');
  const changed = h.handle({ ...again[0]!, type: 'lock-reply', ok: true, reason: '', versions: [6] });
  assert.deepEqual(ofType(changed, 'txn-outcome')[0], {
    type: 'txn-outcome',
    client: 2,
    seq: 1,
    outcome: 'aborted',
    reason: 'version-changed',
  });
});

test('response cache: a retried request is answered, never executed twice', () => {
  const h = new Harness();
  h.boot();
  const first = h.request(1, 1, [a0]);
  assert.equal(ofType(first, 'lock').length, 1);
  // A retry while the attempt runs: ignored (the answer will come), no second lock.
  assert.deepEqual(sends(h.request(1, 1, [a0])), []);
  const lock = ofType(first, 'lock')[0]!;
  h.handle({ ...lock, type: 'lock-reply', ok: true, reason: '', versions: [0] });
  h.handle({ type: 'log-durable', client: 1, seq: 1, epoch: 1 });
  h.handle({ type: 'commit-ack', client: 1, seq: 1, epoch: 1, shard: 0 });
  // A retry after the commit: the cached answer, and nothing sent to a participant or the log.
  const retry = sends(h.request(1, 1, [a0]));
  assert.deepEqual(retry, [{ type: 'txn-outcome', client: 1, seq: 1, outcome: 'committed', reason: '' }]);
  // An older request of the same client (a stale duplicate) is ignored.
  assert.deepEqual(sends(h.request(1, 0, [a0])), []);
  // Aborted answers are cached too.
  const locks = ofType(h.request(1, 2, [a0]), 'lock');
  h.handle({ ...locks[0]!, type: 'lock-reply', ok: false, reason: 'locked', versions: [] });
  assert.deepEqual(ofType(h.request(1, 2, [a0]), 'txn-outcome')[0]?.outcome, 'aborted');
  assert.deepEqual(ofType(h.request(1, 2, [a0]), 'lock'), []);
});

test('response cache across a restart: the log remembers committed requests', () => {
  const h = new Harness();
  // The log says client 1's seq 5 committed (a checkpoint or its record).
  h.boot(3, [{ client: 1, seq: 5 }]);
  assert.deepEqual(sends(h.request(1, 5, [a0])), [
    { type: 'txn-outcome', client: 1, seq: 5, outcome: 'committed', reason: '' },
  ]);
  assert.deepEqual(sends(h.request(1, 4, [a0])), [], 'older than the last commit: stale');
  assert.equal(ofType(h.request(1, 6, [a0]), 'lock').length, 1, 'a new request runs');
});

test('recovery redoes every logged commit and answers status queries from it', () => {
  const h = new Harness();
  const out = h.boot(
    2,
    [{ client: 4, seq: 9 }],
    [{ client: 4, seq: 9, epoch: 1, writes: [{ shard: 1, key: a1, value: bytes('v'), version: 3 }] }],
  );
  const commits = ofType(out, 'commit');
  assert.deepEqual(
    commits.map((c) => [c.shard, c.epoch, c.writes.map((w) => w.version)]),
    [[1, 1, [3]]],
  );
  // A participant whose lease expired on the old attempt gets the decision again.
  const answer = sends(h.handle({ type: 'status-query', client: 4, seq: 9, epoch: 1, shard: 1 }));
  assert.equal(answer[0]?.type, 'commit');
  // An attempt the log does not know: presumed abort.
  const unknown = sends(h.handle({ type: 'status-query', client: 4, seq: 10, epoch: 1, shard: 0 }));
  assert.deepEqual(unknown, [{ type: 'abort', client: 4, seq: 10, epoch: 1, shard: 0 }]);
  // A retry of the recovered transaction waits for the redo instead of running again.
  assert.deepEqual(sends(h.request(4, 9, [a1])), []);
  const done = sends(h.handle({ type: 'commit-ack', client: 4, seq: 9, epoch: 1, shard: 1 }));
  assert.deepEqual(done, [{ type: 'txn-outcome', client: 4, seq: 9, outcome: 'committed', reason: '' }]);
});

test('malformed transactions are answered invalid without touching a participant', () => {
  const h = new Harness();
  h.boot();
  const cases: [string, DtMsg<'commit-request'>, RegExp][] = [
    [
      'empty write set',
      { type: 'commit-request', client: 1, seq: 1, reads: [], writes: [] },
      /write set is empty/,
    ],
    [
      'duplicate write',
      {
        type: 'commit-request',
        client: 1,
        seq: 2,
        reads: [],
        writes: [
          { shard: 0, key: a0, value: bytes('1') },
          { shard: 0, key: a0, value: bytes('2') },
        ],
      },
      /appears twice in the writes/,
    ],
    [
      'duplicate read',
      {
        type: 'commit-request',
        client: 1,
        seq: 3,
        reads: [
          { shard: 1, key: a1, version: 0 },
          { shard: 1, key: a1, version: 0 },
        ],
        writes: [{ shard: 0, key: a0, value: bytes('1') }],
      },
      /appears twice in the reads/,
    ],
    [
      'unknown shard',
      {
        type: 'commit-request',
        client: 1,
        seq: 4,
        reads: [],
        writes: [{ shard: 7, key: a0, value: bytes('1') }],
      },
      /names shard 7, but the cluster has 2 shard\(s\)/,
    ],
    [
      'wrong shard',
      {
        type: 'commit-request',
        client: 1,
        seq: 5,
        reads: [],
        writes: [{ shard: 1, key: a0, value: bytes('1') }],
      },
      /belongs to shard 0/,
    ],
    [
      'value too large',
      {
        type: 'commit-request',
        client: 1,
        seq: 6,
        reads: [],
        writes: [{ shard: 0, key: a0, value: new Uint8Array(2000) }],
      },
      /2000 bytes; the limit is 1024/,
    ],
  ];
  for (const [name, request, reason] of cases) {
    const out = sends(h.handle(request));
    assert.equal(out.length, 1, name);
    const outcome = out[0];
    assert.ok(outcome?.type === 'txn-outcome', name);
    assert.equal(outcome.outcome, 'invalid', name);
    assert.match(outcome.reason, reason, name);
  }
  assert.equal(h.store.txnCount, 0);
});

test('the log object reaching its limit sends a checkpoint to the logging actor, keeping unfinished records', () => {
  const h = new Harness(3);
  h.boot();
  // Client 9's transaction reaches its commit point but not every ack: unfinished.
  const locks = ofType(h.request(9, 1, [a0, a1]), 'lock');
  for (const lock of locks) h.handle({ ...lock, type: 'lock-reply', ok: true, reason: '', versions: [0] });
  h.handle({ type: 'log-durable', client: 9, seq: 1, epoch: 1 });
  h.handle({ type: 'commit-ack', client: 9, seq: 1, epoch: 1, shard: 0 });
  assert.equal(h.store.tailLength, 1);

  assert.deepEqual(ofType(h.commitAll(1, 1, [b0]), 'log-checkpoint'), [], 'below the limit');
  const out = h.commitAll(2, 1, [b0]);
  const checkpoints = ofType(out, 'log-checkpoint');
  assert.equal(checkpoints.length, 1, 'three new records: the limit');
  assert.deepEqual(checkpoints[0]?.finished, [
    { client: 1, seq: 1, epoch: 1 },
    { client: 2, seq: 1, epoch: 1 },
  ]);
  assert.deepEqual(checkpoints[0]?.clients.map((c) => [c.client, c.seq]).sort(), [
    [1, 1],
    [2, 1],
  ]);
  const event = out.find((output) => output.kind === 'event' && output.event.kind === 'checkpoint');
  assert.ok(event?.kind === 'event' && event.event.kind === 'checkpoint' && event.event.keptInTail === 1);
  assert.deepEqual(
    h.store.tailRecords().map((record) => `${record.client}:${record.seq}`),
    ['9:1'],
    'the unfinished record stays in the NIC-side log object',
  );
  // The limit counts records beyond the kept ones: two more commits do not checkpoint yet.
  assert.deepEqual(ofType(h.commitAll(3, 1, [b0]), 'log-checkpoint'), []);
  assert.deepEqual(ofType(h.commitAll(4, 1, [b0]), 'log-checkpoint'), []);
  assert.equal(ofType(h.commitAll(5, 1, [b0]), 'log-checkpoint').length, 1);
});
