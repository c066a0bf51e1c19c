import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { RecentLog } from '../../../../src/platform/live/node/recent-log.ts';

test('a RecentLog holds the last `limit` entries in order and counts every one', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 200 }), (limit, pushes) => {
      const log = new RecentLog<number>(limit);
      for (let i = 0; i < pushes; i++) log.push(i);
      const expected = Array.from(
        { length: Math.min(limit, pushes) },
        (_, k) => pushes - Math.min(limit, pushes) + k,
      );
      assert.deepEqual(log.recent(), expected);
      assert.equal(log.total, pushes);
    }),
    { seed: 20261122 },
  );
});

test('since(seen) gives what was pushed after the first `seen` that is still held', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 16 }),
      fc.integer({ min: 0, max: 100 }),
      fc.integer({ min: 0, max: 120 }),
      (limit, pushes, seen) => {
        const log = new RecentLog<number>(limit);
        for (let i = 0; i < pushes; i++) log.push(i);
        const held = log.since(0);
        const firstHeld = pushes - held.length;
        // Everything pushed from index max(seen, firstHeld) on; never an entry already seen.
        const from = Math.max(seen, firstHeld);
        assert.deepEqual(
          log.since(seen),
          Array.from({ length: Math.max(0, pushes - from) }, (_, k) => from + k),
        );
        assert.ok(held.length >= Math.min(limit, pushes) && held.length < 2 * limit);
      },
    ),
    { seed: 20261123 },
  );
});

test('a long-running stream keeps memory bounded', () => {
  const log = new RecentLog<{ readonly n: number }>(256);
  for (let i = 0; i < 1_000_000; i++) log.push({ n: i });
  assert.equal(log.total, 1_000_000);
  assert.ok(log.since(0).length < 512, `held ${log.since(0).length} entries`);
  assert.deepEqual(log.recent()[255], { n: 999_999 });
});

test('a RecentLog refuses a limit below one', () => {
  assert.throws(() => new RecentLog(0), RangeError);
});
