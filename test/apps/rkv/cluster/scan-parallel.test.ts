/**
 * RkvActorClient.scan asks the shards at once (actor-cluster.ts `scan`), each following its own
 * leader, so a page waits for its slowest shard rather than the sum of them. No cluster: a fake
 * connection answers from per-shard key sets after a delay and records how many asks overlap.
 *
 *   parallel   every shard's ask is out before any answers; the merged page is the range's
 *   leaders    a shard whose asked replica refuses with a leader hint is followed there alone
 *   busy       the client is busy while a page is out (sessions are sequential), free after
 *   unavailable a shard that never answers fails the page with ClusterUnavailableError, within
 *              about giveUpMs (not shards × giveUpMs), and leaves the client free
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RkvMessage } from '../../../../src/apps/rkv/actors/messages.ts';
import { RkvActorClient, type RkvActorConnection } from '../../../../src/apps/rkv/cluster/actor-cluster.ts';
import { ClusterUnavailableError } from '../../../../src/apps/rkv/cluster/errors.ts';
import { ConfigError } from '../../../../src/errors.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const key = (text: string) => encoder.encode(text);

interface FakeOptions {
  /** Per shard, its keys (disjoint across shards). */
  readonly shardKeys: readonly (readonly string[])[];
  /** Per shard, the replica that leads it. */
  readonly leaders: readonly number[];
  /** Shards whose every replica is silent (the test may change it). */
  readonly silent?: Set<number>;
  readonly delayMs: number;
}

interface Fake {
  readonly connection: RkvActorConnection;
  readonly asks: { shard: number; replica: number }[];
  readonly maxInFlight: () => number;
}

function fakeConnection(options: FakeOptions): Fake {
  const asks: { shard: number; replica: number }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const connection = {
    shards: options.shardKeys.length,
    replicas: 3,
    shardOf: () => 0,
    ask: async (_role: string, replica: number, message: RkvMessage, shard: number) => {
      asks.push({ shard, replica });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await new Promise((wake) => setTimeout(wake, options.delayMs));
        if (options.silent?.has(shard)) return undefined;
        const leader = options.leaders[shard] ?? 0;
        if (replica !== leader) return { type: 'refused', reason: 'not the leader', leader } as RkvMessage;
        assert.equal(message.type, 'scan');
        if (message.type !== 'scan') return undefined;
        const start = decoder.decode(message.start);
        const inRange = [...(options.shardKeys[shard] ?? [])].filter((k) => k >= start).sort();
        const pairs = inRange.slice(0, message.limit).map((k) => ({ key: key(k), value: key(`v${k}`) }));
        const next = inRange[message.limit];
        return {
          type: 'scan-page',
          pairs,
          done: next === undefined,
          next: next === undefined ? new Uint8Array(0) : key(next),
        } as RkvMessage;
      } finally {
        inFlight--;
      }
    },
  };
  // The client uses only these members; the real connection needs a live cluster.
  return { connection: connection as unknown as RkvActorConnection, asks, maxInFlight: () => maxInFlight };
}

test('a page asks every shard at once, follows each shard to its leader, and merges the range', async () => {
  const fake = fakeConnection({
    shardKeys: [
      ['a', 'd', 'g'],
      ['b', 'e', 'h'],
      ['c', 'f', 'i'],
    ],
    leaders: [0, 2, 0],
    delayMs: 20,
  });
  const client = new RkvActorClient(fake.connection, 1);
  const seen: string[] = [];
  for await (const pair of client.scanAll(key(''), undefined, { limit: 4 })) {
    seen.push(decoder.decode(pair.key));
    assert.equal(decoder.decode(pair.value), `v${decoder.decode(pair.key)}`);
  }
  assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
  assert.equal(fake.maxInFlight(), 3, 'the three shards were asked at once');
  assert.equal(client.leaderOf(1), 2, "shard 1's refusal named replica 2, and the client went there");
  assert.equal(client.leaderOf(0), 0);
  const refusedAt = fake.asks.filter((ask) => ask.shard === 1 && ask.replica === 0).length;
  assert.equal(refusedAt, 1, 'shard 1 was asked at the wrong replica once, then followed its leader');
});

test('the client is busy while a page is out and free after; a silent shard fails the page within about giveUpMs', async () => {
  const silent = new Set([2]);
  const delayMs = 100;
  const fake = fakeConnection({ shardKeys: [['a'], ['b'], ['c']], leaders: [0, 0, 0], silent, delayMs });
  const client = new RkvActorClient(fake.connection, 1);
  const giveUpMs = 300;
  const started = performance.now();
  const page = client.scan(key(''), undefined, { giveUpMs });
  await assert.rejects(
    () => client.get(key('a')),
    (error: unknown) => error instanceof ConfigError && /one command at a time/.test(error.message),
  );
  await assert.rejects(page, (error: unknown) => error instanceof ClusterUnavailableError);
  const tookMs = performance.now() - started;
  process.stderr.write(
    `scan with a silent shard failed after ${tookMs.toFixed(0)} ms (giveUpMs ${giveUpMs})\n`,
  );
  // Asked one after another, the two answering shards would add 2 × 100 ms before the silent
  // one's 300 ms even began (at least 500 ms); at once, the page ends when shard 2's own budget
  // does, plus at most its last ask's 100 ms (80 ms left for timer lateness on a loaded machine).
  assert.ok(tookMs < giveUpMs + delayMs + 80, `the page failed after ${tookMs.toFixed(0)} ms`);
  silent.clear();
  const again = await client.scan(key(''), undefined, { giveUpMs });
  assert.deepEqual(
    again.pairs.map((pair) => decoder.decode(pair.key)),
    ['a', 'b', 'c'],
    'the same client serves the next page once shard 2 answers',
  );
});
