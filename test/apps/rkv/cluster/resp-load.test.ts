/**
 * `ipipe load --app rkv`'s engine (src/apps/rkv/cluster/resp-load.ts) against in-memory RESP
 * servers: the workload has the asked shape (16-byte keys under a per-run tag, Zipf-ranked, the
 * GET fraction), latencies are counted, and the history check at the end passes for a correct store
 * and FAILS for one that acknowledges writes it then loses. (The same engine against a live
 * 3-replica cluster, through the CLI: cli.test.ts.)
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runRkvRespLoad } from '../../../../src/apps/rkv/cluster/resp-load.ts';
import {
  type KvBackend,
  MemoryKvBackend,
  type RespServerHandle,
  type SetCondition,
  startRespServer,
} from '../../../../src/apps/rkv/resp/index.ts';
import { ConfigError } from '../../../../src/errors.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`resp-load seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

/** A correct in-memory store that records the keys and commands it served. */
class RecordingBackend extends MemoryKvBackend {
  readonly keys: string[] = [];
  gets = 0;
  sets = 0;
  override get(key: Buffer): Promise<Buffer | null> {
    this.gets++;
    this.keys.push(key.toString('latin1'));
    return super.get(key);
  }
  override set(key: Buffer, value: Buffer, condition: SetCondition): Promise<boolean> {
    this.sets++;
    this.keys.push(key.toString('latin1'));
    return super.set(key, value, condition);
  }
}

/** Counts DELs; otherwise the correct store. */
class DeleteCountingBackend extends RecordingBackend {
  dels = 0;
  override del(keys: readonly Buffer[]): Promise<number> {
    this.dels++;
    return super.del(keys);
  }
}

/** Answers every DEL as a delete of one existing key, and deletes nothing. */
class DeleteIgnoringBackend extends MemoryKvBackend {
  override del(keys: readonly Buffer[]): Promise<number> {
    return Promise.resolve(keys.length);
  }
}

/** Acknowledges every SET but keeps only every other one: acknowledged writes get lost. */
class LossyBackend extends MemoryKvBackend {
  #sets = 0;
  override set(key: Buffer, value: Buffer, condition: SetCondition): Promise<boolean> {
    if (this.#sets++ % 2 === 1) return Promise.resolve(true);
    return super.set(key, value, condition);
  }
}

/** One replica's front over a store the replicas share; counts what it served. */
class FrontOf implements KvBackend {
  served = 0;
  readonly #store: KvBackend;
  constructor(store: KvBackend) {
    this.#store = store;
  }
  get(key: Buffer) {
    this.served++;
    return this.#store.get(key);
  }
  set(key: Buffer, value: Buffer, condition: SetCondition) {
    this.served++;
    return this.#store.set(key, value, condition);
  }
  del(keys: readonly Buffer[]) {
    return this.#store.del(keys);
  }
  exists(keys: readonly Buffer[]) {
    return this.#store.exists(keys);
  }
  mget(keys: readonly Buffer[]) {
    return this.#store.mget(keys);
  }
  dbsize() {
    return this.#store.dbsize();
  }
  info() {
    return this.#store.info();
  }
}

async function withServers<T>(backends: KvBackend[], run: (ports: number[]) => Promise<T>): Promise<T> {
  const servers: RespServerHandle[] = [];
  try {
    for (const backend of backends) servers.push(await startRespServer({ port: 0, backend }));
    return await run(servers.map((server) => server.address.port));
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
}

test('the workload: 16-byte tagged Zipf keys, the GET fraction, every op answered and the history linearizable', async () => {
  const backend = new RecordingBackend();
  const result = await withServers([backend], (ports) =>
    runRkvRespLoad({
      ports,
      clients: 4,
      durationMs: 400,
      warmupMs: 100,
      keys: 1_000,
      getFraction: 0.7,
      valueBytes: 32,
      seed,
    }),
  );
  assert.match(result.keyTag, /^[a-z]{5}$/);
  const ranks = new Map<number, number>();
  for (const key of backend.keys) {
    assert.equal(key.length, 16);
    assert.ok(key.startsWith(result.keyTag), key);
    const rank = Number(key.slice(5));
    assert.ok(Number.isInteger(rank) && rank >= 0 && rank < 1_000, key);
    ranks.set(rank, (ranks.get(rank) ?? 0) + 1);
  }
  // Zipf: rank 0 is the most popular key.
  const top = [...ranks.entries()].sort((a, b) => b[1] - a[1])[0]!;
  assert.equal(top[0], 0, `most requested rank ${top[0]}`);
  const served = backend.gets + backend.sets;
  assert.ok(served > 200, `only ${served} commands served`);
  assert.ok(
    Math.abs(backend.gets / served - 0.7) < 0.08,
    `GET fraction ${(backend.gets / served).toFixed(3)}`,
  );
  assert.equal(result.issued, served);
  assert.equal(result.unknown, 0);
  assert.ok(result.get.count > 0 && result.set.count > 0);
  assert.ok(
    result.get.count + result.set.count <= result.answered,
    'the window counts no more than was answered',
  );
  assert.ok(result.opsPerSec > 0);
  assert.ok(
    result.get.p50Us > 0 && result.get.p99Us >= result.get.p50Us && result.get.maxUs >= result.get.p99Us,
  );
  assert.ok(result.getHits > 0, 'some GETs found a value written earlier in the run');
  assert.equal(result.timeline.binMs, 250);
  assert.equal(
    result.timeline.answered.reduce((a, b) => a + b, 0),
    result.answered,
    'the timeline counts every answer once',
  );
  assert.ok(
    result.timeline.answered.length >= 2 && result.timeline.answered.length <= 3,
    `${result.timeline.answered.length} bins for 0.5 s`,
  );
  assert.equal(result.check.verdict, 'linearizable', result.check.detail);
});

test('a store that loses acknowledged writes is caught by the history check', async () => {
  const result = await withServers([new LossyBackend()], (ports) =>
    runRkvRespLoad({
      ports,
      clients: 2,
      durationMs: 300,
      warmupMs: 0,
      keys: 8,
      getFraction: 0.5,
      valueBytes: 16,
      seed,
    }),
  );
  assert.ok(result.set.count > 10, `${result.set.count} SETs`);
  assert.equal(result.check.verdict, 'not-linearizable');
  assert.match(result.check.detail ?? '', /put|get/);
});

test('clients are dealt over the replicas, and one that dies mid-run leaves unknown outcomes, not a crash', async () => {
  const store = new MemoryKvBackend();
  const first = new FrontOf(store);
  const second = new FrontOf(store);
  let servers: RespServerHandle[] = [];
  try {
    servers = [
      await startRespServer({ port: 0, backend: first }),
      await startRespServer({ port: 0, backend: second }),
    ];
    const ports = servers.map((server) => server.address.port);
    const running = runRkvRespLoad({
      ports,
      clients: 4,
      durationMs: 600,
      warmupMs: 0,
      keys: 50,
      seed,
      timeoutMs: 300,
    });
    await new Promise((wake) => setTimeout(wake, 200));
    await servers[1]!.close({ timeoutMs: 0 });
    const servedBySecond = second.served;
    const result = await running;
    assert.ok(first.served > 0 && servedBySecond > 0, 'both replicas served');
    assert.equal(second.served, servedBySecond, 'nothing reached the closed replica');
    assert.ok(result.reconnects > 0, 'clients of the closed replica reconnected');
    assert.ok(first.served + servedBySecond >= result.answered);
    // The clients moved to the surviving replica; the history (with any unknowns) still checks out.
    assert.equal(result.check.verdict, 'linearizable', result.check.detail);
    assert.equal(result.issued, result.answered + result.unknown);
  } finally {
    await servers[0]?.close();
  }
});

test('deletes: the DEL fraction, their answers checked as whether the key held a value', async () => {
  const backend = new DeleteCountingBackend();
  const result = await withServers([backend], (ports) =>
    runRkvRespLoad({
      ports,
      clients: 4,
      durationMs: 400,
      warmupMs: 0,
      keys: 50,
      getFraction: 0.5,
      deleteFraction: 0.25,
      valueBytes: 16,
      seed,
    }),
  );
  const served = backend.gets + backend.sets + backend.dels;
  assert.ok(served > 200, `only ${served} commands served`);
  assert.ok(
    Math.abs(backend.dels / served - 0.25) < 0.08,
    `DEL fraction ${(backend.dels / served).toFixed(3)}`,
  );
  assert.equal(result.deleteFraction, 0.25);
  assert.ok(result.del.count > 0 && result.del.p50Us > 0);
  assert.ok(
    result.deleteHits > 0 && result.deleteHits < result.del.count,
    `${result.deleteHits} of ${result.del.count} DELs hit`,
  );
  assert.equal(result.unknown, 0);
  assert.equal(result.check.verdict, 'linearizable', result.check.detail);
});

test('a store that acknowledges deletes it does not do is caught by the history check', async () => {
  const result = await withServers([new DeleteIgnoringBackend()], (ports) =>
    runRkvRespLoad({
      ports,
      clients: 2,
      durationMs: 300,
      warmupMs: 0,
      keys: 8,
      getFraction: 0.5,
      deleteFraction: 0.25,
      valueBytes: 16,
      seed,
    }),
  );
  assert.ok(result.del.count > 10, `${result.del.count} DELs`);
  assert.equal(result.check.verdict, 'not-linearizable');
});

test('bad options are refused with the option named', async () => {
  const base = { ports: [1], clients: 1, durationMs: 10, seed: 1 };
  for (const [options, field] of [
    [{ ...base, ports: [] }, 'ports'],
    [{ ...base, clients: 0 }, 'clients'],
    [{ ...base, valueBytes: 8 }, 'valueBytes'],
    [{ ...base, getFraction: 1.5 }, 'getFraction'],
    [{ ...base, deleteFraction: -0.1 }, 'deleteFraction'],
    [{ ...base, getFraction: 0.9, deleteFraction: 0.2 }, 'deleteFraction'],
    [{ ...base, keys: 0 }, 'keys'],
    [{ ...base, zipfExponent: 0 }, 'zipfExponent'],
  ] as const) {
    await assert.rejects(runRkvRespLoad(options), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, new RegExp(field));
      return true;
    });
  }
});
