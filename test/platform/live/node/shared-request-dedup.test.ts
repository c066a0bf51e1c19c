/**
 * The socket core's shared dedup (src/platform/live/node/shared-request-dedup.ts): against a model
 * (a Map that forgets a key `capacity` adds after it was added), with re-attaches from a
 * second instance over the same memory at random points — what a replacement core does — which
 * must keep every entry whose request went somewhere and forget exactly those that never ran; the
 * reply arena's bound (a reply is either its very bytes or reported expired, never other bytes);
 * and threads terminated at random moments while writing, after which an attach finds nothing torn.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import {
  NOT_FOUND,
  PHASE_QUEUED,
  PHASE_STARTED,
  SharedRequestDedup,
} from '../../../../src/platform/live/node/shared-request-dedup.ts';
import { replyByte, replyLength } from './fixtures/dedup-pattern.ts';

type Op =
  | { readonly kind: 'arrive'; readonly client: number; readonly request: number }
  | { readonly kind: 'start'; readonly client: number; readonly request: number }
  | { readonly kind: 'forward'; readonly client: number; readonly request: number }
  | { readonly kind: 'answer'; readonly client: number; readonly request: number; readonly size: number }
  | { readonly kind: 'latency'; readonly client: number; readonly request: number }
  | { readonly kind: 'reattach'; readonly forwardsLost: number };

const id = (max: number) => fc.integer({ min: 0, max });
const opArb = (ids: number, clients = 3): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant('arrive' as const), client: id(clients), request: id(ids) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('start' as const), client: id(clients), request: id(ids) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('forward' as const), client: id(clients), request: id(ids) }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('answer' as const),
        client: id(clients),
        request: id(ids),
        size: fc.integer({ min: 0, max: 40 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('latency' as const), client: id(clients), request: id(ids) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('reattach' as const), forwardsLost: id(3) }) },
  );

interface ModelEntry {
  phase: number;
  reply: Uint8Array | null;
  /** Arena bytes claimed (ever) when its reply was cut; see the expiry bounds below. */
  replyClaimedAt: number;
  arrivalNs: number;
  /** Which add it was (an entry lives for `capacity` adds: its slot is then reused). */
  added: number;
}

/** A record's arena bytes, as the implementation lays it out (8-byte length word, 8-aligned). */
const recordBytes = (size: number) => (8 + size + 7) & ~7;

function run(capacity: number, replyBytes: number, seed: number, ops: readonly Op[]): void {
  const memory = SharedRequestDedup.createMemory(capacity, replyBytes);
  let dedup = SharedRequestDedup.attach(memory, 0, seed);
  const model = new Map<string, ModelEntry>();
  let clock = 1;
  let adds = 0;
  let forwards = 0;
  /** Arena bytes claimed so far, not counting the bytes skipped at a lap's end. */
  let claimed = 0;
  let fill = 0;
  for (const op of ops) {
    if (op.kind === 'reattach') {
      // The old core died with its last `forwardsLost` forwards unread by the controller.
      const forwardsRead = Math.max(0, forwards - op.forwardsLost);
      dedup = SharedRequestDedup.attach(memory, forwardsRead, seed ^ clock);
      for (const [key, entry] of model)
        if (entry.reply === null && (entry.phase === PHASE_QUEUED || entry.phase > forwardsRead))
          model.delete(key);
      forwards = forwardsRead;
      assert.equal(
        dedup.size,
        model.size,
        'an attach keeps exactly the entries whose request went somewhere',
      );
      continue;
    }
    const key = `${op.client}/${op.request}`;
    const entry = dedup.find(op.client, op.request);
    const expected = model.get(key);
    assert.equal(entry !== NOT_FOUND, expected !== undefined, `find ${key}`);
    if (op.kind === 'arrive') {
      if (expected !== undefined) continue;
      const arrivalNs = clock++;
      dedup.add(op.client, op.request, arrivalNs);
      model.set(key, { phase: PHASE_QUEUED, reply: null, replyClaimedAt: 0, arrivalNs, added: adds++ });
      // The slot of the entry added `capacity` adds ago is reused (still its entry, unless an
      // attach forgot it: a forgotten entry's slot counts as an add all the same).
      for (const [oldKey, old] of model) if (old.added <= adds - 1 - capacity) model.delete(oldKey);
    } else if (expected === undefined) continue;
    else if (op.kind === 'start') {
      dedup.setPhase(entry, op.client, op.request, PHASE_STARTED);
      expected.phase = PHASE_STARTED;
    } else if (op.kind === 'forward') {
      forwards++;
      dedup.setPhase(entry, op.client, op.request, forwards);
      expected.phase = forwards;
    } else if (op.kind === 'answer') {
      const frame = dedup.replyFrame(op.size);
      for (let i = 0; i < op.size; i++) frame[i] = fill++ & 0xff;
      dedup.setReply(entry, frame);
      claimed += recordBytes(op.size);
      expected.reply = frame.slice();
      expected.replyClaimedAt = claimed;
    } else {
      assert.equal(dedup.takeArrivalNs(entry), expected.arrivalNs, `latency of ${key}`);
      expected.arrivalNs = -1;
    }
    assert.equal(dedup.size, model.size);
    check(dedup, model, claimed, replyBytes);
  }
  check(dedup, model, claimed, replyBytes);
}

/** Every entry the model holds is remembered, with its phase and its reply's very bytes (or expired). */
function check(
  dedup: SharedRequestDedup,
  model: ReadonlyMap<string, ModelEntry>,
  claimed: number,
  replyBytes: number,
): void {
  for (const [key, expected] of model) {
    const [client, request] = key.split('/').map(Number) as [number, number];
    const entry = dedup.find(client, request);
    assert.notEqual(entry, NOT_FOUND, `${key} is remembered`);
    assert.equal(dedup.phaseOf(entry), expected.phase);
    const reply = dedup.reply(entry);
    if (expected.reply === null) {
      assert.equal(reply, null);
      continue;
    }
    // Bytes claimed after this reply was cut (lower bound: lap-end skips add to it).
    const after = claimed - expected.replyClaimedAt;
    if (reply === null) {
      assert.ok(dedup.replyExpired(entry), `${key}: no reply, so it expired`);
      assert.ok(
        after + recordBytes(40) > replyBytes - 2 * recordBytes(40),
        `${key} expired early (${after} after)`,
      );
    } else {
      assert.deepEqual(reply, expected.reply, `${key}: its very bytes`);
      assert.ok(after < replyBytes, `${key} still readable ${after} bytes later`);
    }
  }
}

test('the shared dedup remembers what a FIFO-bounded map would; an attach forgets only requests that never ran', () => {
  const seed = 0x5eed_0b0e;
  process.stdout.write(`# fast-check seed ${seed}\n`);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.nat(),
      fc.array(opArb(20), { maxLength: 300, size: 'max' }),
      // 300 answers of ≤ 48 bytes never lap 16 KiB: here every answered entry keeps its bytes.
      (capacity, hashSeed, ops) => run(capacity, 16 * 1024, hashSeed, ops),
    ),
    { numRuns: 300, seed },
  );
});

test('a small reply arena: a reply is its very bytes or expired, never another reply’s bytes', () => {
  const seed = 0x5eed_a4e4;
  process.stdout.write(`# fast-check seed ${seed}\n`);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.nat(),
      // Few keys, so most answers land on a remembered entry and the arena laps often.
      fc.array(opArb(3, 1), { maxLength: 400, size: 'max' }),
      (capacity, hashSeed, ops) => run(capacity, 256, hashSeed, ops),
    ),
    { numRuns: 300, seed },
  );
});

test('a long run through a small table: eviction wraps the ring and the index; a re-attach sees the same', () => {
  const memory = SharedRequestDedup.createMemory(64, 1 << 16);
  const dedup = SharedRequestDedup.attach(memory, 0, 1);
  for (let request = 0; request < 5_000; request++) {
    const entry = dedup.add(request % 3, request, request);
    dedup.setPhase(entry, request % 3, request, PHASE_STARTED);
    const frame = dedup.replyFrame(4);
    frame.set([request & 0xff, request >> 8, 1, 2]);
    dedup.setReply(entry, frame);
  }
  const again = SharedRequestDedup.attach(memory, 0, 2);
  for (const view of [dedup, again]) {
    assert.equal(view.size, 64);
    for (let request = 0; request < 5_000; request++) {
      const entry = view.find(request % 3, request);
      if (request < 5_000 - 64) {
        assert.equal(entry, NOT_FOUND, `request ${request} was evicted`);
        continue;
      }
      assert.notEqual(entry, NOT_FOUND, `request ${request} is remembered`);
      assert.deepEqual([...(view.reply(entry) ?? [])], [request & 0xff, request >> 8, 1, 2]);
    }
  }
});

test('a reply not cut by replyFrame is refused; sizes are checked', () => {
  const memory = SharedRequestDedup.createMemory(4, 1024);
  const dedup = SharedRequestDedup.attach(memory);
  const entry = dedup.add(1, 1, 0);
  assert.throws(() => dedup.setReply(entry, new Uint8Array(8)), RangeError);
  assert.throws(() => dedup.replyFrame(300), RangeError, 'more than a quarter of the arena');
  assert.throws(() => SharedRequestDedup.createMemory(0, 1024), RangeError);
  assert.throws(() => SharedRequestDedup.createMemory(4, 100), RangeError);
});

test('a writer thread terminated at random moments never leaves an entry an attach misreads', {
  timeout: 60_000,
}, async () => {
  const capacity = 512;
  // Small enough that the arena laps many times a round (≈ 60 bytes a record, 2 records a third).
  const memory = SharedRequestDedup.createMemory(capacity, 16 * 1024);
  const rounds = 12;
  let killedWhileRunning = 0;
  for (let round = 1; round <= rounds; round++) {
    const progress = new SharedArrayBuffer(8);
    const base = round * 10_000_000;
    const worker = new Worker(new URL('../fixtures/worker-bootstrap.mjs', import.meta.url), {
      workerData: {
        entry: new URL('./fixtures/dedup-writer-worker.ts', import.meta.url).href,
        job: { memory, progress, base },
      },
    });
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    await new Promise((resolve) => worker.once('online', resolve));
    // Let it start (tsx, imports) and write for a while, then kill it wherever it is.
    const last = new Float64Array(progress);
    const deadline = performance.now() + 20_000;
    while (last[0] === 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 40)));
    await worker.terminate();
    await exited;
    const published = last[0] as number;
    assert.ok(published > base, `round ${round}: the writer wrote`);
    killedWhileRunning++;
    const dedup = SharedRequestDedup.attach(memory, 0);
    let found = 0;
    for (let request = base; request <= published + 1; request++) {
      const client = (request - base) % 5;
      const entry = dedup.find(client, request);
      if (entry === NOT_FOUND) {
        // Only requests out of the window (the last `capacity` added) are forgotten, and the one
        // the writer may have been adding when it died.
        assert.ok(
          request <= published - capacity + 1 || request === published + 1,
          `round ${round}: request ${request} (last published ${published}) was forgotten`,
        );
        continue;
      }
      found++;
      assert.equal(dedup.phaseOf(entry), PHASE_STARTED);
      const reply = dedup.reply(entry);
      if (reply === null) {
        // Published replies may only have expired; the one past `published` may be unanswered.
        assert.ok(
          request > published || dedup.replyExpired(entry),
          `round ${round}: request ${request} lost its reply`,
        );
        continue;
      }
      const version =
        reply.length === replyLength(client, request, 1) && reply[0] === replyByte(client, request, 1, 0)
          ? 1
          : 2;
      assert.equal(
        reply.length,
        replyLength(client, request, version),
        `round ${round}: length of ${request}`,
      );
      for (let i = 0; i < reply.length; i++)
        assert.equal(
          reply[i],
          replyByte(client, request, version, i),
          `round ${round}: byte ${i} of ${request}`,
        );
    }
    assert.ok(found > 0, `round ${round}: something remembered`);
    assert.ok(dedup.size <= capacity);
    const recentlyPublished = dedup.find((published - base) % 5, published);
    assert.notEqual(recentlyPublished, NOT_FOUND, `round ${round}: the last published request is remembered`);
  }
  assert.equal(killedWhileRunning, rounds);
});
