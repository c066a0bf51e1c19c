/**
 * The NIC's request dedup table (src/platform/live/node/request-dedup.ts) against a model: a Map in
 * insertion order that forgets its oldest key beyond capacity — what the node used before the
 * table. Small id ranges and tiny tables force repeats, full clusters and evictions that shift
 * entries back over the hole; a fixed hash seed makes collisions reproducible.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { NOT_FOUND, RequestDedup } from '../../../../src/platform/live/node/request-dedup.ts';

type Op =
  | { readonly kind: 'arrive'; readonly client: number; readonly request: number }
  | { readonly kind: 'answer'; readonly client: number; readonly request: number; readonly byte: number }
  | { readonly kind: 'latency'; readonly client: number; readonly request: number };

const id = (max: number) => fc.integer({ min: 0, max });
const opArb = (ids: number): fc.Arbitrary<Op> =>
  fc.oneof(
    fc.record({ kind: fc.constant('arrive' as const), client: id(3), request: id(ids) }),
    fc.record({ kind: fc.constant('answer' as const), client: id(3), request: id(ids), byte: id(255) }),
    fc.record({ kind: fc.constant('latency' as const), client: id(3), request: id(ids) }),
  );

interface ModelEntry {
  reply: Uint8Array | null;
  arrivalNs: number;
}

function run(capacity: number, seed: number, ops: readonly Op[]): void {
  const dedup = new RequestDedup(capacity, seed);
  const model = new Map<string, ModelEntry>();
  // Replies are cut from one slab, as the node does: the table must keep (buffer, offset, length).
  const slab = new Uint8Array(4096);
  let slabUsed = 0;
  let clock = 1;
  for (const op of ops) {
    const key = `${op.client}/${op.request}`;
    const entry = dedup.find(op.client, op.request);
    const expected = model.get(key);
    assert.equal(entry !== NOT_FOUND, expected !== undefined, `find ${key}`);
    if (op.kind === 'arrive') {
      if (expected !== undefined) {
        assert.deepEqual(dedup.reply(entry), expected.reply, `cached reply of ${key}`);
        continue;
      }
      const arrivalNs = clock++;
      dedup.add(op.client, op.request, arrivalNs);
      model.set(key, { reply: null, arrivalNs });
      if (model.size > capacity) model.delete(model.keys().next().value as string);
    } else if (op.kind === 'answer') {
      if (expected === undefined) continue;
      if (slabUsed + 3 > slab.length) slabUsed = 0;
      const frame = slab.subarray(slabUsed, slabUsed + 3);
      frame.fill(op.byte);
      slabUsed += 3;
      dedup.setReply(entry, frame);
      expected.reply = frame.slice();
    } else {
      if (expected === undefined) continue;
      assert.equal(dedup.takeArrivalNs(entry), expected.arrivalNs, `latency of ${key}`);
      expected.arrivalNs = -1;
    }
    assert.equal(dedup.size, model.size);
  }
  for (const [key, expected] of model) {
    const [client, request] = key.split('/').map(Number) as [number, number];
    const entry = dedup.find(client, request);
    assert.notEqual(entry, NOT_FOUND, `${key} is remembered`);
    assert.deepEqual(dedup.reply(entry), expected.reply);
  }
}

test('the dedup table remembers exactly what a FIFO-bounded map would, with the same replies', () => {
  const seed = 0x5eed_d00d;
  process.stdout.write(`# fast-check seed ${seed}\n`);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.nat(),
      fc.array(opArb(20), { maxLength: 300, size: 'max' }),
      (capacity, hashSeed, ops) => run(capacity, hashSeed, ops),
    ),
    { numRuns: 300, seed },
  );
});

test('a long run through a small table: retransmissions inside and past the window', () => {
  // 5 000 requests through a 64-entry table (128 cells): clusters wrap the table's end and every
  // arrival evicts, shifting later cluster members back over the hole.
  const ops: Op[] = [];
  for (let request = 0; request < 5_000; request++) {
    ops.push({ kind: 'arrive', client: request % 3, request });
    if (request >= 3)
      ops.push({ kind: 'answer', client: (request - 3) % 3, request: request - 3, byte: request & 0xff });
    if (request >= 40) ops.push({ kind: 'arrive', client: (request - 40) % 3, request: request - 40 });
    if (request >= 70) ops.push({ kind: 'arrive', client: (request - 70) % 3, request: request - 70 });
  }
  run(64, 1, ops);
});

test('capacity must be a positive integer', () => {
  assert.throws(() => new RequestDedup(0), RangeError);
  assert.throws(() => new RequestDedup(1.5), RangeError);
});
