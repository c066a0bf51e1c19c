/**
 * The simulated node's table of unanswered client requests (client-table.ts) against a `Map`
 * model: any interleaving of adds, lookups and removals — sequential ids as the node hands them
 * out, ids far apart that collide in the table, requests left unanswered while the ids move on
 * (which displaces later entries from their home slots), and growth — answers exactly as the Map
 * does. fast-check prints the seed and the shrunk case of any failure.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ClientTable } from '../../../src/platform/sim/client-table.ts';
import type { ReplySink } from '../../../src/platform/sim/sim-node.ts';

interface Entry {
  readonly sentAtNs: number;
  readonly sink: ReplySink;
  readonly passive: boolean;
}

type Operation =
  | { readonly op: 'add'; readonly gap: number; readonly passive: boolean }
  | { readonly op: 'remove'; readonly pick: number }
  | { readonly op: 'find'; readonly pick: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      // Mostly the next id; sometimes a jump of a multiple of a table size, so ids collide.
      gap: fc.oneof(fc.constant(1), fc.constant(1), fc.constantFrom(16, 64, 256, 1024), fc.nat(5000)),
      passive: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('find' as const), pick: fc.nat() }) },
);

function sinkFor(id: number): ReplySink {
  const sink: ReplySink = () => {};
  Object.defineProperty(sink, 'name', { value: `sink-${id}` });
  return sink;
}

function check(operations: readonly Operation[], initialCapacity: number, firstId: number): void {
  const table = new ClientTable(initialCapacity);
  const model = new Map<number, Entry>();
  let nextId = firstId;
  for (const step of operations) {
    if (step.op === 'add') {
      const id = nextId;
      nextId += Math.max(1, step.gap);
      const entry: Entry = { sentAtNs: id * 3 + 1, sink: sinkFor(id), passive: step.passive };
      table.add(id, entry.sentAtNs, entry.sink, entry.passive);
      model.set(id, entry);
    } else {
      const ids = [...model.keys()];
      // Half the picks look up an id that is not (or no longer) in the table.
      const id = ids.length > 0 && step.pick % 2 === 0 ? ids[step.pick % ids.length]! : nextId + step.pick;
      const slot = table.find(id);
      const expected = model.get(id);
      if (expected === undefined) {
        assert.equal(slot, -1, `id ${id} is not pending, yet the table found it`);
        continue;
      }
      assert.ok(slot >= 0, `id ${id} is pending, yet the table lost it`);
      assert.equal(table.sentAtNsOf(slot), expected.sentAtNs);
      assert.equal(table.sinkOf(slot), expected.sink);
      assert.equal(table.passiveOf(slot), expected.passive);
      if (step.op === 'remove') {
        table.remove(slot);
        model.delete(id);
      }
    }
    assert.equal(table.size, model.size);
  }
  // Everything still pending is still found, with its own fields.
  for (const [id, entry] of model) {
    const slot = table.find(id);
    assert.ok(slot >= 0, `id ${id} lost at the end`);
    assert.equal(table.sentAtNsOf(slot), entry.sentAtNs);
    assert.equal(table.sinkOf(slot), entry.sink);
  }
}

describe('ClientTable', () => {
  it('answers like a Map under random adds, finds and removes (collisions and growth included)', () => {
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 400, size: 'max' }),
        fc.constantFrom(16, 256),
        // Ids near 2^31 and 2^32 check the hash's wrap-around (it keeps the low 32 bits).
        fc.constantFrom(1, 2 ** 31 - 50, 2 ** 32 - 50, 2 ** 40 + 3),
        (operations, capacity, firstId) => check(operations, capacity, firstId),
      ),
      { numRuns: 300 },
    );
  });

  it('keeps an old unanswered request findable while tens of thousands pass it', () => {
    const table = new ClientTable(16);
    const stuck = sinkFor(1);
    table.add(1, 10, stuck, false);
    // A window of 8 in flight slides past id 1 many times over the table's size: each lap, the id
    // that shares its slot is displaced, and removing the ones before it must move it back.
    for (let id = 2; id < 40_000; id++) {
      table.add(id, id, sinkFor(id), true);
      if (id >= 9) table.remove(table.find(id - 7));
    }
    assert.equal(table.size, 1 + 7);
    const slot = table.find(1);
    assert.ok(slot >= 0);
    assert.equal(table.sinkOf(slot), stuck);
    assert.equal(table.sentAtNsOf(slot), 10);
    for (let id = 40_000 - 7; id < 40_000; id++) assert.ok(table.find(id) >= 0, `id ${id} lost`);
    assert.equal(table.find(40_000 - 8), -1);
  });
});
